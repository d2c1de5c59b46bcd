"""torch.monitor 2.x's names in livemon, without torch: the keywords torch 2.x code passes, the
assignable Event fields, _WaitCounter, and TensorboardEventHandler writing through a SummaryWriter.
test_parity.py runs the same calls against torch.monitor itself; this file pins livemon's side,
failure paths included, on any interpreter."""

import datetime
import gc
import types

import pytest

import livemon as monitor  # as torch 2.x code would: `import torch.monitor as monitor`
from conftest import DEADLINE

A = monitor.Aggregation
HOUR = datetime.timedelta(hours=1)
NOW = datetime.datetime(2025, 3, 4, 5, 6, 7, 891011)


# --- Stat.add(v=...) -------------------------------------------------------------------------

def test_add_takes_v_by_keyword_as_well_as_by_position(collect):
    events = collect(monitor.STAT_EVENT)
    stat = monitor.Stat("t2.add", [A.SUM, A.COUNT], HOUR)
    stat.add(1.0)
    stat.add(v=2.0)
    stat.add(v=3)  # any number, as by position
    add = stat.add  # a bound method keeps both forms
    add(v=4.0)
    add(5.0)
    assert stat.count == 5
    stat.flush()
    assert events.named(monitor.STAT_EVENT)[0].data == {"t2.add.sum": 15.0, "t2.add.count": 5.0}


def test_add_signature_names_v():
    import inspect
    (self_parameter, v) = inspect.signature(monitor.Stat.add).parameters.values()
    assert v.name == "v" and v.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("call, message", [
    (lambda add: add(), r"takes exactly one argument \(v\), 0 given"),
    (lambda add: add(1.0, 2.0), r"takes exactly one argument \(v\), 2 given"),
    (lambda add: add(1.0, v=2.0), r"takes exactly one argument \(v\), 2 given"),
    (lambda add: add(value=1.0), r"unexpected keyword argument 'value' \(its argument is v\)"),
    (lambda add: add(v="1"), r"v must be a number \(anything with __float__\), got str"),
    (lambda add: add(None), r"v must be a number \(anything with __float__\), got NoneType"),
])
def test_bad_add_calls_raise_type_error_and_add_nothing(call, message):
    stat = monitor.Stat("t2.add.bad", [A.COUNT], HOUR)
    with pytest.raises(TypeError, match=message):
        call(stat.add)
    assert stat.count == 0


@pytest.mark.parametrize("error", [ZeroDivisionError, TypeError])
def test_add_raises_what_the_values_float_raises(error):
    class Broken:
        def __float__(self):
            raise error("no float here")

    stat = monitor.Stat("t2.add.raise", [A.COUNT], HOUR)
    with pytest.raises(error, match="no float here"):
        stat.add(v=Broken())
    with pytest.raises(error, match="no float here"):
        stat.add(Broken())
    assert stat.count == 0


def test_stat_takes_torch_monitors_keywords_and_a_tuple_of_aggregations():
    stat = monitor.Stat(name="t2.kw", aggregations=(A.SUM, A.COUNT), window_size=HOUR, max_samples=3)
    assert (stat.name, stat.aggregations, stat.window_size, stat.max_samples) == (
        "t2.kw", [A.SUM, A.COUNT], HOUR, 3)
    for v in range(3):
        stat.add(v=v)
    assert stat.count == 0  # the cap logged the window
    assert stat.get() == {A.SUM: 3.0, A.COUNT: 3.0}


# --- register_event_handler / unregister_event_handler keywords ------------------------------

@pytest.mark.parametrize("register", [
    lambda f: monitor.register_event_handler(f),
    lambda f: monitor.register_event_handler(callback=f),  # torch.monitor's keyword, 1.13 and 2.x
    lambda f: monitor.register_event_handler(handler=f),   # livemon's earlier keyword
], ids=["positional", "callback", "handler"])
@pytest.mark.parametrize("unregister", [
    lambda h: monitor.unregister_event_handler(h),
    lambda h: monitor.unregister_event_handler(handler=h),  # torch.monitor's keyword
    lambda h: monitor.unregister_event_handler(handle=h),   # livemon's earlier keyword
], ids=["positional", "handler", "handle"])
def test_every_keyword_form_registers_and_unregisters(register, unregister):
    calls = []
    handle = register(calls.append)
    assert isinstance(handle, monitor.EventHandlerHandle)
    monitor.log_event(monitor.Event("t2.kw.handler", NOW, {}))
    assert unregister(handle) is True
    assert unregister(handle) is False  # a second time is harmless
    monitor.log_event(monitor.Event("t2.kw.handler", NOW, {}))
    assert [e.name for e in calls] == ["t2.kw.handler"]


@pytest.mark.parametrize("call", [
    lambda: monitor.register_event_handler(),
    lambda: monitor.register_event_handler(fn=print),
    lambda: monitor.register_event_handler(print, callback=print),
    lambda: monitor.register_event_handler(callback=print, handler=print),
    lambda: monitor.register_event_handler(3),
    lambda: monitor.register_event_handler(callback=None),
    lambda: monitor.unregister_event_handler(),
    lambda: monitor.unregister_event_handler(h=None),
    lambda: monitor.unregister_event_handler(3),
    lambda: monitor.unregister_event_handler(handler=print),
])
def test_bad_registration_calls_raise_type_error(call):
    before = monitor.registered_event_handler_count()
    with pytest.raises(TypeError):
        call()
    assert monitor.registered_event_handler_count() == before


def test_a_handle_cannot_be_made_by_hand():
    with pytest.raises(TypeError):
        monitor.EventHandlerHandle()


# --- Event fields are assignable -------------------------------------------------------------

def test_event_fields_can_be_assigned():
    event = monitor.Event("before", NOW, {"x": 1.0})
    event.name = "after"
    event.timestamp = NOW + datetime.timedelta(seconds=1)
    event.data = {"ok": True, "n": 3, "s": "t", "f": 0.5}
    event.step = 12
    assert event == monitor.Event("after", NOW + datetime.timedelta(seconds=1),
                                  {"ok": True, "n": 3, "s": "t", "f": 0.5}, step=12)
    assert type(event.data["ok"]) is bool and type(event.data["n"]) is int
    event.step = None
    assert event.step is None


def test_an_assigned_event_reaches_handlers_as_assigned(collect):
    events = collect("t2.assigned")
    event = monitor.Event("t2.unused", NOW, {})
    event.name = "t2.assigned"
    event.data = {"loss": 0.25}
    monitor.log_event(event)
    assert events.events == [monitor.Event("t2.assigned", NOW, {"loss": 0.25})]


def test_data_takes_any_mapping_and_reading_it_gives_a_copy():
    event = monitor.Event("e", NOW, types.MappingProxyType({"a": 1.0}))
    assert event.data == {"a": 1.0}
    event.data = types.MappingProxyType({"b": 2})
    assert event.data == {"b": 2}
    event.data["b"] = 3  # a copy, as in torch.monitor: the event keeps its data
    assert event.data == {"b": 2}


def test_an_aware_timestamp_is_stored_as_local_time():
    event = monitor.Event("e", NOW, {})
    aware = datetime.datetime(2025, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    event.timestamp = aware
    assert event.timestamp.tzinfo is None
    assert event.timestamp == aware.astimezone().replace(tzinfo=None)


@pytest.mark.parametrize("field, value, error, message", [
    ("name", 3, TypeError, "Event.name must be a str, got int"),
    ("name", None, TypeError, "Event.name must be a str, got NoneType"),
    ("name", b"bytes", TypeError, "Event.name must be a str, got bytes"),
    ("timestamp", 1.5, TypeError, r"Event.timestamp must be a datetime.datetime, got float"),
    ("timestamp", datetime.date(2025, 1, 1), TypeError, "Event.timestamp must be a datetime.datetime, got date"),
    ("data", [("a", 1)], TypeError, r"data must be a dict \(or another mapping\), got list"),
    ("data", {"k": object()}, TypeError, r"data\['k'\]: a value must be str, float, int or bool, got object"),
    ("data", {1: 2.0}, TypeError, "data keys must be str, got 1"),
    ("data", {"huge": 2**70}, OverflowError, r"data\['huge'\]"),
    ("step", "3", TypeError, "Event.step must be an int or None, got str"),
    ("step", 1.5, TypeError, "Event.step must be an int or None, got float"),
])
def test_a_bad_assignment_raises_and_leaves_the_event_as_it_was(field, value, error, message):
    event = monitor.Event("kept", NOW, {"x": 1.0}, step=4)
    with pytest.raises(error, match=message):
        setattr(event, field, value)
    assert event == monitor.Event("kept", NOW, {"x": 1.0}, step=4)


def test_event_fields_cannot_be_deleted():
    event = monitor.Event("e", NOW, {})
    for field in ["name", "timestamp", "data"]:
        with pytest.raises(AttributeError):
            delattr(event, field)


# --- _WaitCounter ----------------------------------------------------------------------------

def test_wait_counter_under_torch_2_names_is_livemons(collect):
    events = collect(monitor.STAT_EVENT)
    counter = monitor._WaitCounter("t2.wait")
    assert monitor._WaitCounter is monitor.WaitCounter
    tracker = counter.guard()
    assert isinstance(tracker, monitor._WaitCounterTracker)
    assert monitor._WaitCounterTracker is monitor.WaitCounterGuard
    with tracker:
        assert counter.totals()["active"] == 1
    with tracker:  # a tracker may be used again, one block at a time
        pass
    with pytest.raises(KeyError):  # the block's exception goes through, and the wait counts
        with monitor._WaitCounter(key="t2.wait").guard():
            raise KeyError("x")
    totals = counter.totals()  # totals are per key: both counters feed them
    assert totals["calls"] == 3 and totals["active"] == 0
    assert events.wait_for(lambda evs: sum(e.data.get("t2.wait.count", 0) for e in evs) == 3.0, DEADLINE)


def test_wait_counter_failure_paths():
    with pytest.raises(TypeError):
        monitor._WaitCounter(3)
    with pytest.raises(TypeError):
        monitor._WaitCounter()
    with pytest.raises(ValueError, match="key must not be empty"):
        monitor._WaitCounter("")
    with pytest.raises(TypeError):
        monitor._WaitCounterTracker()  # only guard() makes one, as in torch.monitor


def test_torch_2_names_are_importable_as_pytorchs_tests_import_them():
    from livemon import _WaitCounter, _WaitCounterTracker  # noqa: F401  (test/test_monitor.py's import)
    assert "_WaitCounter" not in monitor.__all__  # private in torch.monitor too: not in `import *`


# --- TensorboardEventHandler(writer) ---------------------------------------------------------

class RecordingWriter:
    """What TensorboardEventHandler needs of a SummaryWriter: add_scalar (and flush)."""

    def __init__(self, log_dir="runs/fake"):
        self.scalars = []
        self.flushes = 0
        self.closed = False
        self.log_dir = log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None):
        assert not self.closed
        self.scalars.append((tag, scalar_value, global_step, walltime))

    def flush(self):
        self.flushes += 1

    def tagged(self, prefix):
        """The scalars of a test's own Stats (a registered handler also gets the windows that other
        tests' Stats, a WaitCounter's 1 s windows, close meanwhile)."""
        return [scalar for scalar in self.scalars if scalar[0].startswith(prefix)]

    def close(self):
        self.closed = True

    def get_logdir(self):
        return self.log_dir


def test_a_summary_writer_gets_one_add_scalar_per_stat_key():
    writer = RecordingWriter()
    handler = monitor.TensorboardEventHandler(writer)
    assert handler.writer is writer and handler.path is None and handler.log_dir == "runs/fake"
    seen = []
    handles = [monitor.register_event_handler(seen.append), monitor.register_event_handler(handler)]
    try:
        stat = monitor.Stat("t2.tb", [A.MEAN, A.MAX], HOUR)
        for window in range(3):
            stat.add(window + 1.0)
            stat.add(window + 3.0)
            stat.flush()
    finally:
        for handle in handles:
            monitor.unregister_event_handler(handle)
    windows = [e for e in seen if e.name == monitor.STAT_EVENT and "t2.tb.mean" in e.data]
    expected = []
    for step, event in enumerate(windows):
        for tag in ["t2.tb.max", "t2.tb.mean"]:  # keys in sorted order
            expected.append((tag, event.data[tag], step, pytest.approx(event.timestamp.timestamp(), abs=2e-6)))
    assert writer.tagged("t2.tb.") == expected
    assert [v for tag, v, _, _ in writer.scalars if tag == "t2.tb.mean"] == [2.0, 3.0, 4.0]
    assert all(type(v) is float and type(step) is int and type(wall) is float for _, v, step, wall in writer.scalars)
    assert handler.stats()["scalars"] == len(writer.scalars)


def test_the_step_is_the_events_own_when_it_has_one():
    writer = RecordingWriter()
    handler = monitor.TensorboardEventHandler(writer)
    handler(monitor.Event(monitor.STAT_EVENT, NOW, {"a.sum": 1.0}))                 # no step: 0
    handler(monitor.Event(monitor.STAT_EVENT, NOW, {"a.sum": 2.0}, step=40))        # Event.step
    handler(monitor.Event(monitor.STAT_EVENT, NOW, {"a.sum": 3.0, "step": 41}))     # an int "step" field
    handler(monitor.Event(monitor.STAT_EVENT, NOW, {"a.sum": 4.0}))                 # no step: its 4th point
    assert [(tag, value, step) for tag, value, step, _ in writer.scalars] == [
        ("a.sum", 1.0, 0), ("a.sum", 2.0, 40), ("a.sum", 3.0, 41), ("step", 41.0, 41), ("a.sum", 4.0, 3)]


def test_set_step_reaches_the_writer(collect):
    writer = RecordingWriter()
    handle = monitor.register_event_handler(monitor.TensorboardEventHandler(writer))
    try:
        monitor.set_step(250)
        stat = monitor.Stat("t2.tb.step", [A.SUM], HOUR)
        stat.add(1.0)
        stat.flush()
    finally:
        monitor.clear_step()
        monitor.unregister_event_handler(handle)
    assert [(tag, step) for tag, _, step, _ in writer.tagged("t2.")] == [("t2.tb.step.sum", 250)]


def test_other_events_go_through_only_when_asked():
    event = monitor.Event("eval", NOW, {"accuracy": 0.5, "epoch": 2, "best": True, "note": "x"})
    stats_only, everything = RecordingWriter(), RecordingWriter()
    monitor.TensorboardEventHandler(stats_only)(event)
    monitor.TensorboardEventHandler(everything, all_events=True)(event)
    assert stats_only.scalars == []
    assert [(tag, value) for tag, value, _, _ in everything.scalars] == [
        ("eval/accuracy", 0.5), ("eval/best", 1.0), ("eval/epoch", 2.0)]


def test_flush_and_close_go_to_the_writer_but_leave_it_open():
    writer = RecordingWriter()
    with monitor.TensorboardEventHandler(writer) as handler:
        handler.flush()
        assert writer.flushes == 1
        handler(monitor.Event(monitor.TORCH_STAT_EVENT, NOW, {"t.mean": 1.0}))  # torch.monitor's Stat name too
    assert writer.flushes == 2  # close() flushed
    assert not writer.closed    # the writer is the caller's
    handler(monitor.Event(monitor.STAT_EVENT, NOW, {"late.mean": 1.0}))
    assert [tag for tag, _, _, _ in writer.scalars] == ["t.mean"]
    assert handler.stats()["dropped_events"] == 1
    handler.close()  # a second close does nothing
    assert writer.flushes == 2


def test_a_writer_that_raises_is_isolated_when_registered():
    class FailingWriter(RecordingWriter):
        def add_scalar(self, *args, **kwargs):
            raise OSError("disk full")

    errors_before = monitor.handler_error_count()
    handler = monitor.TensorboardEventHandler(FailingWriter())
    with pytest.raises(OSError, match="disk full"):  # called directly, the caller sees it
        handler(monitor.Event(monitor.STAT_EVENT, NOW, {"x.sum": 1.0}))
    handle = monitor.register_event_handler(handler)
    try:
        monitor.log_event(monitor.Event(monitor.STAT_EVENT, NOW, {"x.sum": 1.0}))  # registered: caught, counted
    finally:
        monitor.unregister_event_handler(handle)
    assert monitor.handler_error_count() == errors_before + 1
    assert "disk full" in monitor.last_handler_error()


def test_registered_inline_the_writer_is_kept_alive():
    writer = RecordingWriter()
    handle = monitor.register_event_handler(monitor.TensorboardEventHandler(writer))
    gc.collect()
    try:
        monitor.log_event(monitor.Event(monitor.STAT_EVENT, NOW, {"inline.sum": 2.0}))
    finally:
        monitor.unregister_event_handler(handle)
    assert [(tag, value) for tag, value, _, _ in writer.tagged("inline.")] == [("inline.sum", 2.0)]


def test_an_object_with_only_get_logdir_is_taken_for_its_directory(tmp_path):
    class LogDirOnly:
        def get_logdir(self):
            return str(tmp_path / "from-writer")

    with monitor.TensorboardEventHandler(LogDirOnly()) as handler:
        assert handler.writer is None
        assert handler.log_dir == str(tmp_path / "from-writer")
        assert handler.path.startswith(str(tmp_path / "from-writer"))


def test_flush_interval_is_checked_with_a_writer_too():
    with pytest.raises(ValueError, match="flush_interval"):
        monitor.TensorboardEventHandler(RecordingWriter(), flush_interval=datetime.timedelta(0))
