"""livemon.profiler: torch.profiler's schedule semantics, profile and record_function, traces that
parse and nest, and live range Stats."""

import datetime
import json
import os
import subprocess
import sys
import threading
import time
import warnings

import pytest

import livemon
from livemon import profiler

from conftest import SOURCE_DIR

CHECKER = os.path.join(SOURCE_DIR, "tests", "core", "check_chrome_trace.py")


@pytest.mark.parametrize("wait,warmup,active,repeat,skip_first", [
    (1, 1, 2, 0, 0), (0, 0, 1, 0, 0), (0, 0, 1, 2, 0), (2, 1, 3, 2, 1), (0, 2, 1, 1, 3), (3, 0, 1, 0, 0),
    (0, 1, 4, 1, 0), (5, 2, 7, 3, 11),
])
def test_schedule_matches_torch_step_by_step(wait, warmup, active, repeat, skip_first):
    torch_profiler = pytest.importorskip("torch.profiler")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about warmup == 0
        theirs = torch_profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                         skip_first=skip_first)
    ours = profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)
    for step in range(120):
        assert ours(step).name == theirs(step).name, f"step {step}"


@pytest.mark.parametrize("arguments,named", [
    (dict(wait=-1, warmup=0, active=1), "wait"), (dict(wait=0, warmup=-1, active=1), "warmup"),
    (dict(wait=0, warmup=0, active=0), "active"), (dict(wait=0, warmup=0, active=1, repeat=-1), "repeat"),
    (dict(wait=0, warmup=0, active=1, skip_first=-1), "skip_first"),
])
def test_bad_schedule_arguments_raise_value_error_naming_them(arguments, named):
    with pytest.raises(ValueError, match=named):
        profiler.schedule(**arguments)


def user_ranges(trace):
    return sorted({r[0] for r in trace.ranges if not r[0].startswith("ProfilerStep#")})


def test_on_trace_ready_once_per_cycle_with_the_active_steps():
    ready = []
    with profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                          on_trace_ready=lambda prof: ready.append((prof.step_num, prof.trace()))) as prof:
        for _ in range(12):
            with profiler.record_function(f"s{prof.step_num}"):
                pass
            prof.step()
    assert [step for step, _ in ready] == [4, 8]
    assert [trace.step for _, trace in ready] == [3, 7]
    assert user_ranges(ready[0][1]) == ["s2", "s3"]
    assert user_ranges(ready[1][1]) == ["s6", "s7"]


def test_any_callable_schedule_works_as_in_torch():
    calls = []

    def every_other(step):
        calls.append(step)
        return profiler.ProfilerAction.RECORD_AND_SAVE if step % 2 else profiler.ProfilerAction.NONE

    ready = []
    with profiler.profile(schedule=every_other, on_trace_ready=lambda p: ready.append(p.trace().step)) as prof:
        for _ in range(6):
            prof.step()
    assert ready == [1, 3, 5]
    assert calls[:3] == [0, 1, 2]


def test_record_function_nests_as_context_manager_and_decorator_on_threads(tmp_path):
    @profiler.record_function("load")
    def load(depth):
        if depth:
            load(depth - 1)  # recursive: a range per call

    def worker():
        profiler.set_thread_name("loader")
        for _ in range(50):
            load(2)

    with profiler.profile(on_trace_ready=profiler.chrome_trace_handler(str(tmp_path), "worker")) as prof:
        thread = threading.Thread(target=worker)
        thread.start()
        with profiler.record_function("step"):
            with profiler.record_function("forward"):
                time.sleep(0.01)  # measured, not a synchronisation
            with profiler.record_function("backward"):
                pass
        thread.join()
    trace = prof.trace()
    names = [r[0] for r in trace.ranges]
    assert names.count("load") == 150
    assert "loader" in trace.threads.values()
    forward = next(r for r in trace.ranges if r[0] == "forward")
    assert forward[3] - forward[2] >= 10_000_000
    assert forward[4] == 1
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("worker.") and files[0].endswith(".pt.trace.json")
    check = subprocess.run([sys.executable, CHECKER, "--min-threads", "2", "--expect-names", "step,forward,backward,load",
                            str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    with open(tmp_path / files[0]) as f:
        events = json.load(f)["traceEvents"]
    assert any(e["ph"] == "M" and e["args"]["name"] == "loader" for e in events)
    assert any(e["ph"] == "X" and e["name"] == "forward" and e["dur"] >= 10_000 for e in events)


def test_export_chrome_trace_and_one_profile_at_a_time(tmp_path):
    prof = profiler.profile()
    with pytest.raises(RuntimeError):
        prof.export_chrome_trace(str(tmp_path / "none.json"))
    with prof:
        with pytest.raises(ValueError):
            profiler.profile().start()
        with profiler.record_function("x"):
            pass
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    with open(tmp_path / "t.json") as f:
        assert any(e.get("name") == "x" for e in json.load(f)["traceEvents"])


def _one_trace():
    prof = profiler.profile()
    with prof:
        with profiler.record_function("x"):
            pass
    return prof


@pytest.mark.parametrize("name", ["t.json", "t.json.gz"])
def test_export_chrome_trace_never_writes_through_a_name_placed_beside_the_trace(tmp_path, name):
    # Another local user who can write the directory could place a link at a temporary name it
    # can guess (the trace's name and the pid); the trace's temporary file is one of its own.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / name
    for guess in (f"{path}.partial{os.getpid()}", f"{path}.tmp{os.getpid()}", f"{path}.tmp"):
        os.symlink(victim, guess)
    old = os.umask(0o022)
    try:
        _one_trace().export_chrome_trace(str(path))
    finally:
        os.umask(old)
    assert victim.read_text() == "precious"
    assert not os.path.islink(path)
    assert os.stat(path).st_mode & 0o777 == 0o644, "the mode a file created under the umask has"
    assert sorted(os.listdir(tmp_path)) == sorted([name, "victim.txt"] + [
        os.path.basename(g) for g in (f"{path}.partial{os.getpid()}", f"{path}.tmp{os.getpid()}", f"{path}.tmp")])


def test_export_chrome_trace_replaces_a_file_without_writing_into_it(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("an earlier trace")
    os.link(path, tmp_path / "other-name")
    _one_trace().export_chrome_trace(str(path))
    assert (tmp_path / "other-name").read_text() == "an earlier trace"
    with open(path) as f:
        assert any(e.get("name") == "x" for e in json.load(f)["traceEvents"])
    assert sorted(os.listdir(tmp_path)) == ["other-name", "t.json"], "no temporary file left behind"


def test_export_chrome_trace_into_a_missing_directory_leaves_nothing(tmp_path):
    with pytest.raises(OSError):
        _one_trace().export_chrome_trace(str(tmp_path / "missing" / "t.json"))
    assert os.listdir(tmp_path) == []


def test_range_stats_reach_the_event_handlers(collect):
    events = collect(livemon.STAT_EVENT)
    profiler.set_range_stats_enabled(True)
    try:
        assert profiler.range_stats_enabled()
        for _ in range(5):
            with profiler.record_function("py_forward"):
                pass
        with profiler.record_function("py_sleep"):
            time.sleep(0.01)  # measured
    finally:
        profiler.set_range_stats_enabled(False)
    profiler.flush_range_stats()
    values = {}
    for event in events.named(livemon.STAT_EVENT):
        for key, value in event.data.items():
            if key.startswith("range/"):
                values.setdefault(key, []).append(value)
    assert sum(values["range/py_forward.count"]) == 5
    for aggregation in ("mean", "p50", "p99", "max"):
        assert f"range/py_forward.{aggregation}" in values
    assert max(values["range/py_sleep.max"]) >= 10.0


def test_a_profile_turns_range_stats_on_while_it_runs():
    assert not profiler.range_stats_enabled()
    with profiler.profile():
        assert profiler.range_stats_enabled()
    assert not profiler.range_stats_enabled()
    with profiler.profile(range_stats=False):
        assert not profiler.range_stats_enabled()


def test_a_new_range_stats_window_applies_to_ranges_already_seen(collect):
    events = collect(livemon.STAT_EVENT)

    def counts():
        return [e.data["range/py_resized.count"] for e in events.named(livemon.STAT_EVENT)
                if "range/py_resized.count" in e.data]

    profiler.set_range_stats_enabled(True, datetime.timedelta(hours=1))
    try:
        with profiler.record_function("py_resized"):
            pass
        assert counts() == []  # an hour's window is open
        profiler.set_range_stats_enabled(True, datetime.timedelta(milliseconds=20))
        assert counts() == [1.0]  # logged when the window changed
        with profiler.record_function("py_resized"):
            pass
        deadline = time.monotonic() + 30  # catches a window that never closes, nothing faster
        while len(counts()) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert counts() == [1.0, 1.0]  # closed on time, 20 ms windows
    finally:
        profiler.set_range_stats_enabled(True)  # the default window again
        profiler.set_range_stats_enabled(False)
