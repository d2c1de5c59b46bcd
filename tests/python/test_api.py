"""The livemon module's API: torch.monitor's names and signatures, and where livemon does better."""

import datetime
import gc
import math
import sys

import pytest

import livemon
from conftest import DEADLINE

A = livemon.Aggregation
HOUR = datetime.timedelta(hours=1)


# --- Aggregation -----------------------------------------------------------------------------

def test_aggregations_have_torch_monitors_names_and_livemons_extras():
    names = ["VALUE", "MEAN", "COUNT", "SUM", "MAX", "MIN", "STDDEV", "P50", "P90", "P99"]
    assert list(A.__members__) == names
    for name in names:
        assert getattr(livemon, name) is getattr(A, name)  # also module constants, as in torch.monitor
    assert len({int(a) for a in A.__members__.values()}) == len(names)


def test_stat_event_constants():
    assert livemon.STAT_EVENT == "livemon.Stat"
    assert livemon.TORCH_STAT_EVENT == "torch.monitor.Stat"
    assert livemon.data_value_t  # torch.monitor's alias of the data value types


# --- Stat ------------------------------------------------------------------------------------

def test_stat_flush_logs_one_event_with_a_float_per_key(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.flush", [A.VALUE, A.MEAN, A.COUNT, A.SUM, A.MAX, A.MIN, A.STDDEV], HOUR)
    assert stat.name == "api.flush"
    assert stat.count == 0
    for v in [2.0, 4, 9.0]:  # an int is a number too
        stat.add(v)
    assert stat.count == 3
    stat.flush()
    assert stat.count == 0
    (event,) = events.named(livemon.STAT_EVENT)
    assert event.data == {
        "api.flush.value": 9.0, "api.flush.mean": 5.0, "api.flush.count": 3.0, "api.flush.sum": 15.0,
        "api.flush.max": 9.0, "api.flush.min": 2.0, "api.flush.stddev": pytest.approx(math.sqrt(26 / 3)),
    }
    assert all(type(v) is float for v in event.data.values())
    assert isinstance(event.timestamp, datetime.datetime)
    assert abs(event.timestamp - datetime.datetime.now()) < datetime.timedelta(seconds=60)


def test_value_is_the_last_sample(collect):
    # torch.monitor 1.13 accepts VALUE and reports nothing for it.
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.value", [A.VALUE], HOUR)
    for v in [3.0, 1.0, 7.5]:
        stat.add(v)
    stat.flush()
    assert events.named(livemon.STAT_EVENT)[0].data == {"api.value.value": 7.5}
    assert stat.get() == {A.VALUE: 7.5}


def test_get_is_zero_before_the_first_window_then_the_last_closed_one():
    stat = livemon.Stat("api.get", [A.MEAN, A.MAX], HOUR)
    assert stat.get() == {A.MEAN: 0.0, A.MAX: 0.0}
    stat.add(1.0)
    stat.add(3.0)
    assert stat.get() == {A.MEAN: 0.0, A.MAX: 0.0}  # the window is still open
    stat.flush()
    assert stat.get() == {A.MEAN: 2.0, A.MAX: 3.0}
    stat.add(10.0)
    assert stat.get() == {A.MEAN: 2.0, A.MAX: 3.0}


def test_quantiles_are_within_the_stated_error(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.q", [A.P50, A.P90, A.P99], HOUR)
    for i in range(1, 1001):
        stat.add(float(i))
    stat.flush()
    data = events.named(livemon.STAT_EVENT)[0].data
    assert data["api.q.p50"] == pytest.approx(500, rel=0.004)
    assert data["api.q.p90"] == pytest.approx(900, rel=0.004)
    assert data["api.q.p99"] == pytest.approx(990, rel=0.004)


def test_max_samples_logs_at_the_cap_and_drops_the_rest_of_the_window(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.cap", [A.COUNT, A.SUM], HOUR, max_samples=3)
    assert stat.max_samples == 3
    for v in [1.0, 2.0]:
        stat.add(v)
    assert events.named(livemon.STAT_EVENT) == []
    stat.add(3.0)  # reaches the cap: logged at once
    assert [e.data for e in events.named(livemon.STAT_EVENT)] == [{"api.cap.count": 3.0, "api.cap.sum": 6.0}]
    stat.add(100.0)
    assert stat.count == 0
    assert stat.dropped_count == 1
    del stat
    gc.collect()
    assert len(events.named(livemon.STAT_EVENT)) == 1  # nothing left to log


def test_default_max_samples_is_torch_monitors():
    assert livemon.Stat("api.default", [A.MEAN], HOUR).max_samples == sys.maxsize


def test_a_window_is_logged_when_it_ends_without_another_add(collect):
    # torch.monitor logs a window only at the next add after it ended.
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.ontime", [A.MEAN], datetime.timedelta(milliseconds=20))
    stat.add(4.0)
    assert events.wait_for(lambda evs: any("api.ontime.mean" in e.data for e in evs))
    assert [e.data for e in events.named(livemon.STAT_EVENT)] == [{"api.ontime.mean": 4.0}]
    assert stat.get() == {A.MEAN: 4.0}
    del stat


def test_deleting_a_stat_logs_its_open_window(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.del", [A.SUM], HOUR)
    stat.add(5.0)
    del stat
    gc.collect()
    assert [e.data for e in events.named(livemon.STAT_EVENT)] == [{"api.del.sum": 5.0}]


def test_stat_properties_and_repr():
    stat = livemon.Stat("api.props", [A.MEAN, A.P99], datetime.timedelta(seconds=2), max_samples=10)
    assert stat.aggregations == [A.MEAN, A.P99]
    assert stat.window_size == datetime.timedelta(seconds=2)
    assert repr(stat) == ("livemon.Stat(name='api.props', aggregations=[Aggregation.MEAN, Aggregation.P99], "
                          "window_size=datetime.timedelta(seconds=2), max_samples=10)")


def test_add_takes_anything_with_float_and_rejects_the_rest(collect):
    torch = pytest.importorskip("torch")
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.types", [A.SUM], HOUR)
    stat.add(1)
    stat.add(True)
    stat.add(torch.tensor(2.5))  # loss.detach() works without .item()
    with pytest.raises(TypeError):
        stat.add("3")
    with pytest.raises(TypeError):
        stat.add(None)
    with pytest.raises(TypeError):
        stat.add()  # noqa - wrong arity
    stat.flush()
    assert events.named(livemon.STAT_EVENT)[0].data == {"api.types.sum": 4.5}


def test_nan_makes_mean_nan_but_min_max_skip_it(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("api.nan", [A.MEAN, A.MAX], HOUR)
    stat.add(1.0)
    stat.add(float("nan"))
    stat.flush()
    data = events.named(livemon.STAT_EVENT)[0].data
    assert math.isnan(data["api.nan.mean"])
    assert data["api.nan.max"] == 1.0


@pytest.mark.parametrize("window", [datetime.timedelta(0), datetime.timedelta(microseconds=999),
                                    datetime.timedelta(seconds=-1)])
def test_a_window_under_one_millisecond_raises_value_error(window):
    # torch.monitor dies of SIGFPE on a zero window.
    with pytest.raises(ValueError, match=r"window_size must be at least 1 ms, got datetime\.timedelta"):
        livemon.Stat("api.window", [A.MEAN], window)


def test_bad_stat_arguments_name_the_argument():
    with pytest.raises(ValueError, match="name must not be empty"):
        livemon.Stat("", [A.MEAN], HOUR)
    with pytest.raises(ValueError, match="aggregations must name at least one"):
        livemon.Stat("api.bad", [], HOUR)
    with pytest.raises(ValueError, match="max_samples must be at least 1, got 0"):
        livemon.Stat("api.bad", [A.MEAN], HOUR, max_samples=0)
    with pytest.raises(TypeError, match="window_size must be a datetime.timedelta, got str"):
        livemon.Stat("api.bad", [A.MEAN], "1s")
    with pytest.raises(TypeError):
        livemon.Stat("api.bad", ["mean"], HOUR)


def test_keyword_arguments_are_torch_monitors():
    stat = livemon.Stat(name="api.kw", aggregations=[A.MEAN], window_size=HOUR, max_samples=5)
    assert stat.name == "api.kw"
    event = livemon.Event(name="n", timestamp=datetime.datetime.now(), data={})
    assert event.name == "n"


# --- Event -----------------------------------------------------------------------------------

NOW = datetime.datetime(2025, 3, 4, 5, 6, 7, 891011)


def test_event_keeps_every_value_type():
    data = {"s": "text", "f": 1.5, "i": -3, "big": 2**62, "t": True, "f0": False}
    event = livemon.Event("types", NOW, data)
    assert event.name == "types"
    assert event.timestamp == NOW
    assert event.data == data
    assert {k: type(v) for k, v in event.data.items()} == {k: type(v) for k, v in data.items()}  # a bool stays a bool


def test_event_equality_compares_contents_and_types():
    a = livemon.Event("e", NOW, {"x": 1.0})
    assert a == livemon.Event("e", NOW, {"x": 1.0})
    assert a != livemon.Event("e", NOW, {"x": 1})        # an int is not a float
    assert livemon.Event("e", NOW, {"x": True}) != livemon.Event("e", NOW, {"x": 1})
    assert a != livemon.Event("f", NOW, {"x": 1.0})
    assert a != livemon.Event("e", NOW + datetime.timedelta(microseconds=1), {"x": 1.0})
    assert a != "e"
    with pytest.raises(TypeError):
        hash(a)


def test_event_repr_shows_everything_in_key_order():
    event = livemon.Event("e", NOW, {"b": True, "a": 1.5, "c": "x"})
    assert repr(event) == ("livemon.Event(name='e', timestamp=datetime.datetime(2025, 3, 4, 5, 6, 7, 891011), "
                           "data={'a': 1.5, 'b': True, 'c': 'x'})")


def test_aware_timestamps_are_converted_to_local_time():
    aware = datetime.datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=datetime.timezone.utc)
    event = livemon.Event("e", aware, {})
    assert event.timestamp.tzinfo is None
    assert event.timestamp == aware.astimezone().replace(tzinfo=None)
    plus2 = datetime.datetime(2025, 3, 4, 7, 6, 7, 891011, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert livemon.Event("e", plus2, {}) == event


def test_bad_event_data_names_the_key():
    with pytest.raises(TypeError, match=r"data\['obj'\]: a value must be str, float, int or bool, got object"):
        livemon.Event("e", NOW, {"obj": object()})
    with pytest.raises(TypeError, match="data keys must be str, got 1"):
        livemon.Event("e", NOW, {1: 1.0})
    with pytest.raises(OverflowError, match=r"data\['huge'\]"):
        livemon.Event("e", NOW, {"huge": 2**70})
    with pytest.raises(TypeError, match="timestamp must be a datetime.datetime, got float"):
        livemon.Event("e", 1.5, {})
    with pytest.raises(TypeError, match="data must be a dict"):
        livemon.Event("e", NOW, [("a", 1)])


def test_numpy_like_scalars_become_numbers():
    torch = pytest.importorskip("torch")
    event = livemon.Event("e", NOW, {"f": torch.tensor(0.5), "i": torch.tensor(3)})
    assert event.data == {"f": 0.5, "i": 3}
    assert type(event.data["i"]) is int


# --- handlers --------------------------------------------------------------------------------

def test_handlers_get_logged_events_in_registration_order():
    calls = []
    h1 = livemon.register_event_handler(lambda e: calls.append(("first", e)))
    h2 = livemon.register_event_handler(lambda e: calls.append(("second", e)))
    try:
        event = livemon.Event("api.order", NOW, {"k": "v", "flag": False})
        livemon.log_event(event)
        assert [name for name, _ in calls] == ["first", "second"]
        assert calls[0][1] == event and calls[1][1] == event
        assert calls[0][1].data["flag"] is False
    finally:
        livemon.unregister_event_handler(h1)
        livemon.unregister_event_handler(h2)


def test_unregistering_stops_calls_and_twice_is_harmless():
    calls = []
    handle = livemon.register_event_handler(calls.append)
    assert isinstance(handle, livemon.EventHandlerHandle)
    assert handle == handle and len({handle, handle}) == 1
    livemon.log_event(livemon.Event("api.unreg", NOW, {}))
    assert livemon.unregister_event_handler(handle) is True
    assert livemon.unregister_event_handler(handle) is False  # torch.monitor crashes here
    livemon.log_event(livemon.Event("api.unreg", NOW, {}))
    assert len(calls) == 1


def test_a_raising_handler_is_isolated_and_counted(collect, capfd):
    later = collect("api.raise")

    def bad(event):
        raise ValueError("handler failure " + event.name)

    errors_before = livemon.handler_error_count()
    handle = livemon.register_event_handler(bad)
    after = collect("api.raise")  # registered after the bad one: still called
    try:
        livemon.log_event(livemon.Event("api.raise", NOW, {}))  # does not raise (torch.monitor's does)
        livemon.log_event(livemon.Event("api.raise", NOW, {}))
        assert livemon.handler_error_count() == errors_before + 2
        assert "ValueError: handler failure api.raise" in livemon.last_handler_error()
        assert len(later.events) == 2 and len(after.events) == 2
    finally:
        livemon.unregister_event_handler(handle)
    err = capfd.readouterr().err
    assert err.count("Traceback") == 1  # printed once, then only counted
    assert "handler failure api.raise" in err


def test_a_raising_handler_does_not_break_the_stat(collect):
    def bad(event):
        raise RuntimeError("no")

    handle = livemon.register_event_handler(bad)
    events = collect(livemon.STAT_EVENT)
    try:
        stat = livemon.Stat("api.survives", [A.SUM], HOUR)
        for window in range(3):
            stat.add(1.0)
            stat.add(2.0)
            stat.flush()
        assert [e.data for e in events.named(livemon.STAT_EVENT)] == [{"api.survives.sum": 3.0}] * 3
        assert stat.get() == {A.SUM: 3.0}
    finally:
        livemon.unregister_event_handler(handle)


def test_register_rejects_what_is_not_callable():
    with pytest.raises(TypeError, match="handler must be callable, got int"):
        livemon.register_event_handler(3)


def test_handlers_may_call_livemon_from_inside():
    seen = []
    handles = []

    def reentrant(event):
        seen.append(event.name)
        if event.name == "api.outer":
            livemon.log_event(livemon.Event("api.inner", NOW, {}))  # torch.monitor deadlocks here
            stat = livemon.Stat("api.inside", [A.SUM], HOUR)
            stat.add(1.0)
            stat.flush()
            livemon.unregister_event_handler(handles[0])  # removes itself

    handles.append(livemon.register_event_handler(reentrant))
    livemon.log_event(livemon.Event("api.outer", NOW, {}))
    livemon.log_event(livemon.Event("api.outer", NOW, {}))
    assert seen == ["api.outer", "api.inner", livemon.STAT_EVENT]


def test_log_event_takes_a_torch_monitor_event(collect):
    monitor = pytest.importorskip("torch.monitor")
    events = collect("api.torch")
    livemon.log_event(monitor.Event("api.torch", NOW, {"x": 2.0, "s": "y"}))
    assert events.events == [livemon.Event("api.torch", NOW, {"x": 2.0, "s": "y"})]


# --- WaitCounter -----------------------------------------------------------------------------

def test_wait_counter_guard_measures_each_with_block(collect):
    events = collect(livemon.STAT_EVENT)
    counter = livemon.WaitCounter("api.wait")
    assert counter.key == "api.wait" and counter.enabled
    guard = counter.guard()
    for _ in range(3):
        with guard:
            assert counter.totals()["active"] == 1
    with counter.guard() as entered:
        assert isinstance(entered, livemon.WaitCounterGuard)
    totals = counter.totals()
    assert totals["calls"] == 4 and totals["active"] == 0
    assert datetime.timedelta(0) <= totals["max_time"] <= totals["total_time"]
    # Every wait also feeds the Stat named after the key (1 s windows; the waits may straddle two).
    assert events.wait_for(lambda evs: sum(e.data.get("api.wait.count", 0) for e in evs) == 4.0, DEADLINE)


def test_wait_counter_guard_records_when_the_block_raises(collect):
    events = collect(livemon.STAT_EVENT)
    counter = livemon.WaitCounter("api.wait.raise")
    with pytest.raises(KeyError):
        with counter.guard():
            raise KeyError("x")
    assert counter.totals()["calls"] == 1
    # The wait reaches its Stat too; waiting for the window also keeps it out of later tests' handlers.
    assert events.wait_for(lambda evs: sum(e.data.get("api.wait.raise.count", 0) for e in evs) == 1.0, DEADLINE)


# --- Publisher -------------------------------------------------------------------------------

def test_publisher_binds_a_free_port_and_closes_once():
    with livemon.Publisher("tcp://127.0.0.1:*", run="api-test", rank=3,
                           heartbeat_interval=datetime.timedelta(milliseconds=100)) as publisher:
        (endpoint,) = publisher.endpoints
        assert endpoint.startswith("tcp://127.0.0.1:") and not endpoint.endswith("*")
        assert publisher.identity["run"] == "api-test" and publisher.identity["rank"] == 3
        assert not publisher.closed
        livemon.log_event(livemon.Event("api.publish", NOW, {}))
    assert publisher.closed
    publisher.close()  # a second close does nothing
    assert publisher.stats()["published"] >= 0
    assert "closed" in repr(publisher)


def test_publisher_errors_name_the_endpoint():
    with pytest.raises(livemon.TransportError, match="nonsense://x"):
        livemon.Publisher("nonsense://x")
    assert issubclass(livemon.TransportError, OSError)
    with livemon.Publisher("tcp://127.0.0.1:*") as first:
        with pytest.raises(livemon.TransportError, match="Address already in use"):
            livemon.Publisher(first.endpoints[0])


def test_publisher_stats_count_subscribers_it_disconnected():
    """A peer that floods a publisher with subscriptions is disconnected, and the stats say so."""
    zmq = pytest.importorskip("zmq")
    import time

    with livemon.Publisher("tcp://127.0.0.1:*") as publisher:
        assert publisher.stats()["subscribers_disconnected"] == 0
        context = zmq.Context()
        peer = context.socket(zmq.XSUB)
        peer.setsockopt(zmq.LINGER, 0)
        peer.connect(publisher.endpoints[0])
        try:
            deadline = time.monotonic() + DEADLINE
            n = 0
            while publisher.stats()["subscribers_disconnected"] == 0 and time.monotonic() < deadline:
                # 1000-byte prefixes, each new: well beyond what one subscriber may send in all.
                for _ in range(100):
                    try:
                        peer.send(b"\x01" + b"%08d" % n + b"x" * 992, zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    n += 1
                time.sleep(0.01)
            assert publisher.stats()["subscribers_disconnected"] >= 1
        finally:
            peer.close()
            context.term()
