"""livemon next to the torch.monitor installed (Debian's 1.13 under /usr/bin/python3, 2.13 in the
virtualenv) on the same inputs: the same names, keys and values wherever the semantics agree, the
same script run against both modules, the same errors for the same bad calls, and each deliberate
difference shown side by side. What only torch 2.x has is skipped on 1.13, saying so."""

import datetime
import gc
import random
import threading
import time

import pytest

import livemon

monitor = pytest.importorskip("torch.monitor")
torch = pytest.importorskip("torch")

TORCH2 = hasattr(monitor, "_WaitCounter")
torch2_only = pytest.mark.skipif(not TORCH2, reason=f"torch {torch.__version__}'s torch.monitor has no "
                                 "_WaitCounter/_WaitCounterTracker (torch 2.x names)")

# Windows this long never end during a test: windows are aligned to multiples of their size on
# the monotonic clock (both libraries), so a boundary within the test is practically impossible.
YEAR = datetime.timedelta(days=365)
COMMON = ["MEAN", "COUNT", "SUM", "MAX", "MIN"]  # what both compute
PREFIX = "parity."  # every Stat made here; other tests' Stats may still close windows meanwhile


def made_here(event):
    """Whether an event comes from this file: its name, or every key of a Stat window, starts
    with PREFIX (another test's Stat may close a window while these run)."""
    return event.name.startswith(PREFIX) or (event.data and all(k.startswith(PREFIX) for k in event.data))


class Both:
    """A handler registered with both libraries, keeping each side's events (made here) apart."""

    def __init__(self):
        self.torch = []
        self.livemon = []
        self._condition = threading.Condition()
        self.handles = (monitor.register_event_handler(self._on_torch),
                        livemon.register_event_handler(self._on_livemon))

    def _on_torch(self, event):
        if made_here(event):
            self.torch.append(event)

    def _on_livemon(self, event):
        if not made_here(event):
            return
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


# --- the same script against both modules ---------------------------------------------------

def test_every_public_name_of_torch_monitor_is_in_livemon():
    """dir(torch.monitor) of the torch installed (2.x adds _WaitCounter and _WaitCounterTracker),
    and every public attribute of its classes."""
    names = {n for n in dir(monitor) if not n.startswith("__")} - {"TYPE_CHECKING"}  # typing's flag
    assert names - set(dir(livemon)) == set()
    for name in sorted(names):
        theirs = getattr(monitor, name)
        if isinstance(theirs, type):
            ours = getattr(livemon, name)
            wanted = {a for a in dir(theirs) if not a.startswith("_")} | ({"__enter__", "__exit__"} & set(dir(theirs)))
            assert wanted - set(dir(ours)) == set(), name


def monitor_script(m, handlers_keyword="callback"):
    """torch.monitor code as torch 2.x documents it, run against module `m`; returns what it saw,
    with the Stat event's name (which differs on purpose) replaced by "STAT"."""
    seen = []  # what each handler call saw, at the time of the call

    def handler(e):
        if made_here(e):
            seen.append(("STAT" if e.name == m.STAT_EVENT else e.name,
                         None if e.name == m.STAT_EVENT else e.timestamp, e.data))

    handle = m.register_event_handler(**{handlers_keyword: handler})
    try:
        stat = m.Stat(name="parity.script", aggregations=(m.Aggregation.SUM, m.Aggregation.MEAN, m.Aggregation.COUNT),
                      window_size=YEAR, max_samples=4)
        for v in [1.0, 2, 3.5]:
            stat.add(v=v)
        counts = [stat.count]
        stat.add(4.0)  # the fourth sample reaches max_samples: the window is logged now
        counts.append(stat.count)
        stat.add(v=100.0)  # dropped: the window is full
        counts.append(stat.count)
        got = {a.name: value for a, value in stat.get().items()}

        event = m.Event(name="parity.script.before", timestamp=datetime.datetime(2025, 1, 2, 3, 4, 5, 678901),
                        data={"epoch": 1})
        m.log_event(event)
        event.name = "parity.script.after"
        event.timestamp = datetime.datetime(2025, 1, 2, 3, 4, 6)
        event.data = {"epoch": 2, "loss": 0.125, "phase": "eval"}
        m.log_event(event=event)
        fields = (event.name, event.timestamp, event.data)
    finally:
        m.unregister_event_handler(handler=handle)
    m.log_event(m.Event("parity.script.unheard", datetime.datetime.now(), {}))
    del stat
    gc.collect()
    return {"counts": counts, "get": got, "fields": fields, "received": seen}


def test_the_same_script_gives_the_same_results():
    theirs = monitor_script(monitor)
    ours = monitor_script(livemon)
    assert ours == theirs
    assert theirs["counts"] == [3, 0, 0]
    assert [name for name, _, _ in theirs["received"]] == ["STAT", "parity.script.before", "parity.script.after"]
    assert theirs["received"][0][2] == {"parity.script.sum": 10.5, "parity.script.mean": 2.625,
                                        "parity.script.count": 4.0}


def test_the_keywords_name_the_same_arguments():
    """Every keyword torch.monitor's functions take (1.13 and 2.x alike) is taken by livemon's."""
    assert monitor_script(livemon, "callback") == monitor_script(monitor, "callback")
    event = dict(name="parity.kw", timestamp=datetime.datetime(2025, 1, 1), data={"x": 1.0})
    t, ours = monitor.Event(**event), livemon.Event(**event)
    assert (t.name, t.timestamp, t.data) == (ours.name, ours.timestamp, ours.data)
    for m in (monitor, livemon):
        m.log_event(event=m.Event(**event))
        m.Stat(name="parity.kw", aggregations=[m.Aggregation.SUM], window_size=YEAR, max_samples=2).add(v=1.0)


def bad_calls(m):
    """Calls torch.monitor rejects, as (description, call); each takes the module's objects."""
    stat = m.Stat("parity.bad", [m.Aggregation.SUM], YEAR)
    event = m.Event("parity.bad", datetime.datetime(2025, 1, 1), {"x": 1.0})
    calls = [
        ("add()", lambda: stat.add()),
        ("add(value=1)", lambda: stat.add(value=1.0)),
        ("add(1, 2)", lambda: stat.add(1.0, 2.0)),
        ("add('1')", lambda: stat.add("1")),
        ("add(None)", lambda: stat.add(None)),
        ("add(v=[1])", lambda: stat.add(v=[1.0])),
        ("Stat(window_size='1s')", lambda: m.Stat("parity.bad", [m.Aggregation.SUM], "1s")),
        ("Stat(aggregations=['mean'])", lambda: m.Stat("parity.bad", ["mean"], YEAR)),
        ("Stat(name=3)", lambda: m.Stat(3, [m.Aggregation.SUM], YEAR)),
        ("Stat(bogus=1)", lambda: m.Stat("parity.bad", [m.Aggregation.SUM], YEAR, bogus=1)),
        ("Event(name=3)", lambda: m.Event(3, datetime.datetime(2025, 1, 1), {})),
        ("Event(timestamp=1.5)", lambda: m.Event("e", 1.5, {})),
        ("Event(data=[])", lambda: m.Event("e", datetime.datetime(2025, 1, 1), [])),
        ("event.name = 3", lambda: setattr(event, "name", 3)),
        ("event.name = None", lambda: setattr(event, "name", None)),
        ("event.timestamp = 1.5", lambda: setattr(event, "timestamp", 1.5)),
        ("event.timestamp = 'now'", lambda: setattr(event, "timestamp", "now")),
        ("event.data = [1]", lambda: setattr(event, "data", [1])),
        ("event.data = {'k': object()}", lambda: setattr(event, "data", {"k": object()})),
        ("event.data = {1: 2.0}", lambda: setattr(event, "data", {1: 2.0})),
        ("del event.name", lambda: delattr(event, "name")),
        ("del event.data", lambda: delattr(event, "data")),
        ("log_event('e')", lambda: m.log_event("parity.bad")),
        ("register_event_handler()", lambda: m.register_event_handler()),
        ("register_event_handler(fn=print)", lambda: m.register_event_handler(fn=print)),
        ("register_event_handler(3)", lambda: m.register_event_handler(3)),
        ("unregister_event_handler()", lambda: m.unregister_event_handler()),
        ("unregister_event_handler(3)", lambda: m.unregister_event_handler(3)),
        ("unregister_event_handler(h=...)", lambda: m.unregister_event_handler(h=None)),
        ("EventHandlerHandle()", lambda: m.EventHandlerHandle()),
    ]
    if TORCH2:
        calls += [
            ("_WaitCounter()", lambda: m._WaitCounter()),
            ("_WaitCounter(3)", lambda: m._WaitCounter(3)),
            ("_WaitCounter(name='k')", lambda: m._WaitCounter(name="k")),
            ("_WaitCounterTracker()", lambda: m._WaitCounterTracker()),
        ]
    return stat, event, calls


def error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return type(error)
    return None


def test_the_same_bad_calls_raise_the_same_errors_and_change_nothing():
    t_stat, t_event, theirs = bad_calls(monitor)
    l_stat, l_event, ours = bad_calls(livemon)
    got = {name: (error_of(t_call), error_of(l_call)) for (name, t_call), (_, l_call) in zip(theirs, ours)}
    assert {name: errors for name, errors in got.items() if errors[0] is not errors[1] or errors[0] is None} == {}
    assert t_stat.count == l_stat.count == 0
    assert (t_event.name, t_event.timestamp, t_event.data) == (l_event.name, l_event.timestamp, l_event.data) == (
        "parity.bad", datetime.datetime(2025, 1, 1), {"x": 1.0})


def test_aggregations_have_the_same_names_and_enum_interface():
    for name in ["VALUE", "MEAN", "COUNT", "SUM", "MAX", "MIN"]:
        t, ours = getattr(monitor.Aggregation, name), getattr(livemon.Aggregation, name)
        assert t.name == ours.name == name
        assert isinstance(t.value, int) and isinstance(ours.value, int)
        assert type(t)(t.value) == t and type(ours)(ours.value) == ours
        assert getattr(monitor, name) == t and getattr(livemon, name) == ours


def waits_logged(events, key, calls):
    """Waits until livemon's window thread has logged `calls` waits of `key` (1 s windows), so they
    close in this test rather than in a later test's handlers."""
    return events.wait_for(lambda evs: sum(e.data.get(f"{key}.count", 0) for e in evs) == calls)


@torch2_only
def test_wait_counters_behave_alike(collect):
    """torch 2.x's _WaitCounter(key).guard(): a tracker may be used for several blocks, never
    swallows an exception, and is what guard() returns, in both."""
    def run(m):
        tracker = m._WaitCounter("wait.in_parity").guard()
        observed = [isinstance(tracker, m._WaitCounterTracker)]
        for _ in range(2):
            with tracker:
                pass
            tracker.__enter__()
            observed.append(bool(tracker.__exit__(KeyError, KeyError("x"), None)))  # falsy: not swallowed
        try:
            with m._WaitCounter(key="wait.in_parity").guard():
                raise KeyError("through")
        except KeyError:
            observed.append("raised through")
        return observed

    windows = collect(livemon.STAT_EVENT)
    calls_before = livemon.WaitCounter("wait.in_parity").totals()["calls"]
    assert run(monitor) == run(livemon) == [True, False, False, "raised through"]
    assert livemon.WaitCounter("wait.in_parity").totals()["calls"] == calls_before + 5  # livemon counted each
    assert waits_logged(windows, "wait.in_parity", 5)


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


def test_difference_an_int_beyond_64_bits_is_an_overflow_error():
    huge = {"parity.huge": 2**70}
    with pytest.raises((RuntimeError, ValueError)):  # 1.13: RuntimeError, 2.x: ValueError
        monitor.Event("parity.huge", datetime.datetime.now(), huge)
    with pytest.raises(OverflowError, match=r"data\['parity.huge'\]: 1180591620717411303424 does not fit"):
        livemon.Event("parity.huge", datetime.datetime.now(), huge)


@torch2_only
def test_difference_a_tracker_entered_with_as_gives_itself(collect):
    windows = collect(livemon.STAT_EVENT)
    with monitor._WaitCounter("wait.in_parity").guard() as theirs:
        pass
    with livemon._WaitCounter("wait.in_parity").guard() as ours:
        pass
    assert theirs is None
    assert isinstance(ours, livemon._WaitCounterTracker)
    assert waits_logged(windows, "wait.in_parity", 1)


@torch2_only
def test_difference_an_empty_wait_counter_key_is_refused():
    with monitor._WaitCounter("").guard():  # torch.monitor takes it
        pass
    with pytest.raises(ValueError, match="key must not be empty"):  # livemon names a Stat after the key
        livemon._WaitCounter("")
