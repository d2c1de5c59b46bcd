"""livemon.torch_bridge: torch.monitor events, Stat windows included, reach livemon and leave the
process through a Publisher, read here by an independent subscriber (pyzmq + msgpack, following
docs/wire-format.md)."""

import datetime
import gc
import time

import pytest

import livemon
import livemon.torch_bridge as bridge

monitor = pytest.importorskip("torch.monitor")
zmq = pytest.importorskip("zmq")
msgpack = pytest.importorskip("msgpack")

YEAR = datetime.timedelta(days=365)


@pytest.fixture
def installed():
    bridge.install()
    yield
    bridge.uninstall()


def test_install_and_uninstall_are_idempotent():
    assert not bridge.installed()
    handle = bridge.install()
    assert bridge.install() is handle  # a second install does nothing
    assert bridge.installed()
    assert bridge.uninstall() is True
    assert bridge.uninstall() is False  # never unregisters twice (torch.monitor would crash)
    assert not bridge.installed()


def test_torch_monitor_events_arrive_unchanged(installed, collect):
    events = collect("bridge.")
    now = datetime.datetime.now().replace(microsecond=654321)
    before = bridge.forwarded_count()
    monitor.log_event(monitor.Event("bridge.epoch", now, {"epoch": 3, "accuracy": 0.5, "phase": "val"}))
    assert events.events == [livemon.Event("bridge.epoch", now, {"epoch": 3, "accuracy": 0.5, "phase": "val"})]
    assert type(events.events[0].data["epoch"]) is int
    assert bridge.forwarded_count() == before + 1


def test_torch_monitor_stat_windows_arrive_as_torch_stat_events(installed, collect):
    events = collect(livemon.TORCH_STAT_EVENT)
    stat = monitor.Stat("bridge.loss", [monitor.Aggregation.MEAN, monitor.Aggregation.MAX], YEAR, max_samples=4)
    for v in [1.0, 2.0, 3.0, 6.0]:
        stat.add(v)
    assert [e.data for e in events.events] == [{"bridge.loss.mean": 3.0, "bridge.loss.max": 6.0}]
    assert events.events[0].name == "torch.monitor.Stat"
    del stat


def test_uninstall_stops_forwarding(collect):
    events = collect("bridge.")
    bridge.install()
    bridge.uninstall()
    monitor.log_event(monitor.Event("bridge.after", datetime.datetime.now(), {}))
    assert events.events == []


def test_a_failed_forward_is_counted_not_raised(installed, recwarn):
    errors = bridge.error_count()

    class Odd:  # a torch.monitor-like event livemon cannot read
        name = "bridge.odd"
        timestamp = "not a datetime"
        data = {}

    bridge._forward(Odd())
    bridge._forward(Odd())
    assert bridge.error_count() == errors + 2
    assert len([w for w in recwarn if issubclass(w.category, RuntimeWarning)]) <= 1


def receive_until(socket, predicate, timeout=30.0):
    """Receives wire messages until predicate(topic, payload) holds; returns that payload."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if socket.poll(100):
            topic, payload = socket.recv_multipart()
            message = msgpack.unpackb(payload)
            if predicate(topic.decode(), message):
                return message
    pytest.fail("the expected message did not arrive")


def test_end_to_end_torch_stat_to_subscriber(installed):
    with livemon.Publisher("tcp://127.0.0.1:*", run="bridge-e2e",
                           heartbeat_interval=datetime.timedelta(milliseconds=50)) as publisher:
        context = zmq.Context()
        socket = context.socket(zmq.SUB)
        try:
            socket.connect(publisher.endpoints[0])
            socket.subscribe(b"")
            # The first heartbeat proves the subscription is in place (ZeroMQ's slow joiner).
            receive_until(socket, lambda topic, message: topic == "livemon.heartbeat")

            stat = monitor.Stat("bridge.e2e", [monitor.Aggregation.SUM, monitor.Aggregation.COUNT], YEAR,
                                max_samples=3)
            for v in [0.5, 1.5, 2.0]:
                stat.add(v)  # the third add logs the window in torch.monitor
            message = receive_until(socket, lambda topic, message: topic == "torch.monitor.Stat")
            assert message["name"] == "torch.monitor.Stat"
            assert message["src"]["run"] == "bridge-e2e"
            ((timestamp_ns, data),) = message["events"]
            assert data == {"bridge.e2e.sum": 4.0, "bridge.e2e.count": 3.0}
            assert abs(timestamp_ns / 1e9 - time.time()) < 60
            del stat
            gc.collect()
        finally:
            socket.close(linger=0)
            context.term()
