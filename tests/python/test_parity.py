"""livemon next to torch.monitor 1.13 on the same inputs: the same names, keys and values wherever
the semantics agree, and each deliberate difference shown side by side."""

import datetime
import gc
import random
import threading
import time

import pytest

import livemon

monitor = pytest.importorskip("torch.monitor")

# Windows this long never end during a test: windows are aligned to multiples of their size on
# the monotonic clock (both libraries), so a boundary within the test is practically impossible.
YEAR = datetime.timedelta(days=365)
COMMON = ["MEAN", "COUNT", "SUM", "MAX", "MIN"]  # what both compute


class Both:
    """A handler registered with both libraries, keeping each side's events apart."""

    def __init__(self):
        self.torch = []
        self.livemon = []
        self._condition = threading.Condition()
        self.handles = (monitor.register_event_handler(self.torch.append),
                        livemon.register_event_handler(self._on_livemon))

    def _on_livemon(self, event):
        with self._condition:
            self.livemon.append(event)
            self._condition.notify_all()

    def wait_livemon_stat(self, timeout=30):
        """Waits for a livemon Stat event; returns those received."""
        def stats():
            return [e for e in self.livemon if e.name == livemon.STAT_EVENT]
        with self._condition:
            self._condition.wait_for(stats, timeout)
            return stats()

    def close(self):
        monitor.unregister_event_handler(self.handles[0])
        livemon.unregister_event_handler(self.handles[1])

    def stat_windows(self):
        """Each side's Stat events as data dicts, in order."""
        return ([e.data for e in self.torch if e.name == monitor.STAT_EVENT],
                [e.data for e in self.livemon if e.name == livemon.STAT_EVENT])


@pytest.fixture
def both():
    handlers = Both()
    yield handlers
    handlers.close()


def make_pair(name, aggregations, window=YEAR, **kwargs):
    t = monitor.Stat(name, [getattr(monitor.Aggregation, a) for a in aggregations], window, **kwargs)
    ours = livemon.Stat(name, [getattr(livemon.Aggregation, a) for a in aggregations], window, **kwargs)
    return t, ours


def by_name(values):
    return {aggregation.name: value for aggregation, value in values.items()}


def test_the_common_names_exist_in_both():
    for name in ["VALUE", "MEAN", "COUNT", "SUM", "MAX", "MIN"]:
        assert getattr(monitor.Aggregation, name).name == getattr(livemon.Aggregation, name).name
        assert hasattr(monitor, name) and hasattr(livemon, name)
    for name in ["Stat", "Event", "EventHandlerHandle", "log_event", "register_event_handler",
                 "unregister_event_handler", "STAT_EVENT", "TensorboardEventHandler", "data_value_t"]:
        assert hasattr(monitor, name) and hasattr(livemon, name), name


@pytest.mark.parametrize("seed", range(5))
def test_same_samples_give_the_same_windows(both, seed):
    """Random samples into pairs of Stats, some capped by max_samples (the window is logged at the
    cap, later samples are dropped), each logging its open window when deleted."""
    rng = random.Random(seed)
    expected_windows = 0
    for pair in range(8):
        kwargs = {"max_samples": rng.randint(1, 60)} if rng.random() < 0.6 else {}
        t, ours = make_pair(f"parity.s{seed}.{pair}", COMMON, **kwargs)
        samples = [rng.choice([rng.gauss(0, 1e3), rng.randint(-5, 5), rng.expovariate(0.1)])
                   for _ in range(rng.randint(1, 100))]
        for i, value in enumerate(samples):
            t.add(value)
            ours.add(value)
            assert t.count == ours.count, f"pair {pair}, after sample {i}"
            assert by_name(t.get()) == by_name(ours.get()), f"pair {pair}, after sample {i}"
        del t, ours  # both log the open window on destruction
        gc.collect()
        expected_windows += 1
    torch_windows, livemon_windows = both.stat_windows()
    assert len(torch_windows) == expected_windows
    assert livemon_windows == torch_windows  # same keys, same values, bit for bit


def test_counts_and_get_agree_before_any_window(both):
    t, ours = make_pair("parity.empty", COMMON)
    assert t.count == ours.count == 0
    assert by_name(t.get()) == by_name(ours.get()) == {a: 0.0 for a in COMMON}
    assert t.name == ours.name == "parity.empty"
    del t, ours
    gc.collect()
    assert both.stat_windows() == ([], [])  # empty windows are never logged


def test_events_pass_through_handlers_alike_for_str_float_int(both):
    now = datetime.datetime.now().replace(microsecond=123456)
    data = {"s": "x", "f": 0.25, "i": -7, "big": 2**40}
    monitor.log_event(monitor.Event("parity.event", now, data))
    livemon.log_event(livemon.Event("parity.event", now, data))
    (t,) = both.torch
    (ours,) = both.livemon
    assert (t.name, t.timestamp, t.data) == (ours.name, ours.timestamp, ours.data)
    assert {k: type(v) for k, v in t.data.items()} == {k: type(v) for k, v in ours.data.items()}


# --- deliberate differences ------------------------------------------------------------------

def test_difference_stat_event_name(both):
    t, ours = make_pair("parity.name", ["SUM"])
    t.add(1.0)
    ours.add(1.0)
    del t, ours
    gc.collect()
    assert [e.name for e in both.torch] == ["torch.monitor.Stat"] == [monitor.STAT_EVENT]
    assert [e.name for e in both.livemon] == ["livemon.Stat"] == [livemon.STAT_EVENT]


def test_difference_value_is_reported(both):
    t, ours = make_pair("parity.value", ["VALUE", "SUM"])
    for v in [1.0, 5.0, 3.0]:
        t.add(v)
        ours.add(v)
    del t, ours
    gc.collect()
    torch_windows, livemon_windows = both.stat_windows()
    assert torch_windows == [{"parity.value.sum": 9.0}]  # torch.monitor drops VALUE
    assert livemon_windows == [{"parity.value.sum": 9.0, "parity.value.value": 3.0}]


def test_difference_bool_stays_bool(both):
    now = datetime.datetime.now()
    monitor.log_event(monitor.Event("parity.bool", now, {"ok": True}))
    livemon.log_event(livemon.Event("parity.bool", now, {"ok": True}))
    assert both.torch[0].data == {"ok": 1.0} and type(both.torch[0].data["ok"]) is float
    assert both.livemon[0].data == {"ok": True} and type(both.livemon[0].data["ok"]) is bool


def test_difference_events_compare_by_content():
    now = datetime.datetime.now()
    t = monitor.Event("e", now, {"x": 1.0})
    assert t != monitor.Event("e", now, {"x": 1.0})  # torch.monitor compares identity
    assert livemon.Event("e", now, {"x": 1.0}) == livemon.Event("e", now, {"x": 1.0})
    assert repr(livemon.Event("e", now, {})).startswith("livemon.Event(name='e'")


def test_difference_handler_exceptions_do_not_escape():
    def bad(event):
        raise RuntimeError("boom")

    now = datetime.datetime.now()
    handle = monitor.register_event_handler(bad)
    try:
        with pytest.raises(RuntimeError, match="boom"):  # torch.monitor lets it through
            monitor.log_event(monitor.Event("parity.raise", now, {}))
    finally:
        monitor.unregister_event_handler(handle)
    handle = livemon.register_event_handler(bad)
    try:
        livemon.log_event(livemon.Event("parity.raise", now, {}))
    finally:
        livemon.unregister_event_handler(handle)


def test_difference_windows_close_on_time_not_at_the_next_add(both):
    """Both align windows the same way; livemon logs a window when it ends, torch.monitor only
    when the next sample comes. The windows' contents are the same."""
    window = datetime.timedelta(milliseconds=200)
    window_ms = 200
    for attempt in range(5):
        both.torch.clear()
        both.livemon.clear()
        t, ours = make_pair("parity.time", ["SUM", "COUNT"], window)
        # Both adds must land in one window for the comparison to hold: check the monotonic clock
        # (the clock both libraries align to) around each pair, and retry if a boundary fell between.
        before = int(time.monotonic() * 1000) // window_ms
        t.add(1.0)
        ours.add(1.0)
        first_ok = int(time.monotonic() * 1000) // window_ms == before
        ended = both.wait_livemon_stat()
        assert ended, "livemon did not log the window after it ended"
        torch_before_next_add = [e for e in both.torch if e.name == monitor.STAT_EVENT]
        second_add = datetime.datetime.now()
        before = int(time.monotonic() * 1000) // window_ms
        t.add(2.0)
        ours.add(2.0)
        second_ok = int(time.monotonic() * 1000) // window_ms == before
        del t, ours
        gc.collect()
        if not (first_ok and second_ok):
            continue
        assert torch_before_next_add == []  # torch.monitor had not logged the ended window
        torch_windows, livemon_windows = both.stat_windows()
        assert livemon_windows == torch_windows == [{"parity.time.sum": 1.0, "parity.time.count": 1.0},
                                                    {"parity.time.sum": 2.0, "parity.time.count": 1.0}]
        torch_first = [e for e in both.torch if e.name == monitor.STAT_EVENT][0]
        assert torch_first.timestamp >= second_add - datetime.timedelta(milliseconds=1)  # logged late
        assert ended[0].timestamp < second_add  # logged on time
        return
    pytest.fail("five attempts in a row straddled a window boundary")


def test_difference_unregistering_twice(tmp_path):
    from conftest import run_python
    ours = run_python("""
        import livemon
        h = livemon.register_event_handler(print)
        print(livemon.unregister_event_handler(h), livemon.unregister_event_handler(h))
    """)
    assert ours.stdout.split() == ["True", "False"]
    theirs = run_python("""
        import torch.monitor as m
        h = m.register_event_handler(print)
        m.unregister_event_handler(h)
        m.unregister_event_handler(h)
    """, check=False)
    assert theirs.returncode != 0  # torch.monitor 1.13 crashes (SIGSEGV)


def test_difference_zero_window():
    from conftest import run_python
    theirs = run_python("""
        import datetime, torch.monitor as m
        s = m.Stat("z", [m.Aggregation.MEAN], datetime.timedelta(0))
        s.add(1.0)
    """, check=False)
    assert theirs.returncode != 0  # torch.monitor 1.13 dies of SIGFPE
    with pytest.raises(ValueError):
        livemon.Stat("z", [livemon.MEAN], datetime.timedelta(0))
