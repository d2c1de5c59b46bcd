"""livemon.torch_bridge: torch.monitor events, Stat windows included, reach livemon and leave the
process through a Publisher, read here by an independent subscriber (pyzmq + msgpack, following
docs/wire-format.md)."""

import datetime
import gc
import time

import pytest

import livemon
import livemon.torch_bridge as bridge
from conftest import receive_until, subscribed_publisher

monitor = pytest.importorskip("torch.monitor")
pytest.importorskip("zmq")  # the subscriber reads the wire with pyzmq
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



def test_end_to_end_torch_stat_to_subscriber(installed):
    with subscribed_publisher("bridge-e2e") as (_, socket):
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


# torch.monitor.Event (1.13) has only name, timestamp and data: no step. A forwarded event's step is
# then its int data field "step" when it has one, else the livemon step current when torch.monitor
# logged it (livemon.set_step).

@pytest.fixture
def no_step():
    livemon.clear_step()
    yield
    livemon.clear_step()


def test_torch_monitor_event_has_no_step_of_its_own():
    event = monitor.Event("bridge.plain", datetime.datetime.now(), {})
    assert not hasattr(event, "step")


def test_a_forwarded_event_carries_the_current_step_or_its_own_int_step_field(installed, collect, no_step):
    events = collect("bridge.step")
    now = datetime.datetime.now()
    monitor.log_event(monitor.Event("bridge.step.before", now, {"loss": 0.5}))
    livemon.set_step(12)
    monitor.log_event(monitor.Event("bridge.step.current", now, {"loss": 0.5}))
    monitor.log_event(monitor.Event("bridge.step.field", now, {"loss": 0.5, "step": 7}))
    monitor.log_event(monitor.Event("bridge.step.float_field", now, {"step": 7.5}))

    (before,) = events.named("bridge.step.before")
    assert before.step is None and before.stated_step is None
    (current,) = events.named("bridge.step.current")
    assert current.step == 12 and current.stated_step == 12
    (field,) = events.named("bridge.step.field")
    assert type(field.data["step"]) is int  # torch.monitor keeps an int an int
    assert field.stated_step == 7  # its own step wins over the current one
    assert field.step is None  # and stays in its data, as livemon's own events do
    (float_field,) = events.named("bridge.step.float_field")
    assert float_field.stated_step == 12  # only an int field states a step


def test_a_forwarded_torch_stat_window_carries_the_step_current_when_it_closed(installed, collect, no_step):
    events = collect(livemon.TORCH_STAT_EVENT)
    stat = monitor.Stat("bridge.step_loss", [monitor.Aggregation.MEAN], YEAR, max_samples=2)
    livemon.set_step(40)
    stat.add(1.0)
    livemon.set_step(41)
    stat.add(3.0)  # the second add logs the window in torch.monitor
    (window,) = [e for e in events.events if "bridge.step_loss.mean" in e.data]
    assert window.step == 41
    del stat


def test_end_to_end_forwarded_steps_reach_a_subscriber(installed, no_step):
    with subscribed_publisher("bridge-steps", topics=(b"bridge.wire", b"livemon.heartbeat")) as (_, socket):
        livemon.set_step(1200)
        monitor.log_event(monitor.Event("bridge.wire.current", datetime.datetime.now(), {"loss": 0.25}))
        monitor.log_event(monitor.Event("bridge.wire.field", datetime.datetime.now(), {"step": 33}))
        current = receive_until(socket, lambda topic, message: topic == "bridge.wire.current")
        field = receive_until(socket, lambda topic, message: topic == "bridge.wire.field")
    # docs/wire-format.md: an event's step is its "steps" element, else its int data field "step".
    assert current["steps"] == [1200]
    ((_, current_data),) = current["events"]
    assert current_data == {"loss": 0.25}
    assert field.get("steps", [None]) == [None]
    ((_, field_data),) = field["events"]
    assert field_data == {"step": 33}
