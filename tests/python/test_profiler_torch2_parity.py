"""livemon.profiler against torch 2.x's torch.profiler (2.13 in the virtualenv): the same scripts
run against both and agree where livemon records the same thing: schedules step by step
(skip_first_wait included), the steps that call on_trace_ready, events() and key_averages() names,
counts and nesting, the table's layout and order, total_average(), the device fields and sort
keys, gzip output, metadata and trace ids in the trace JSON, tensorboard_trace_handler's files and
the execution trace observer's calls. Every name and keyword torch 2.x's torch.profiler has is
accepted, and the failure paths raise torch's errors.

Each test skips on torch 1.x, which has none of these names; test_profiler_torch2_api.py checks
livemon's side of them without torch."""

import gzip
import importlib
import inspect
import json
import os
import re
import subprocess
import warnings

import pytest

from livemon import profiler


@pytest.fixture
def torch_profiler():
    torch = pytest.importorskip("torch")
    if int(torch.__version__.split(".")[0]) < 2:
        pytest.skip(f"torch {torch.__version__}: the torch.profiler 2.x names compared here are not in torch 1.x")
    return importlib.import_module("torch.profiler")


@pytest.fixture(autouse=True)
def quiet_torch():
    # torch warns about warmup=0, acc_events, deprecated cuda_* names: not what is compared here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def both(torch_profiler):
    return [("torch", torch_profiler), ("livemon", profiler)]


# --- schedule -------------------------------------------------------------------------------------

@pytest.mark.parametrize("wait,warmup,active,repeat,skip_first,skip_first_wait", [
    (20, 1, 2, 0, 10, 1), (20, 1, 2, 0, 10, 0), (3, 1, 2, 2, 0, 1), (3, 1, 2, 2, 5, 1), (0, 0, 1, 3, 0, 1),
    (2, 0, 3, 1, 1, 1), (1, 2, 1, 0, 0, 7), (4, 2, 3, 3, 11, True), (5, 1, 1, 1, 2, -1),
])
def test_schedule_with_skip_first_wait_matches_torch_step_by_step(torch_profiler, wait, warmup, active, repeat,
                                                                   skip_first, skip_first_wait):
    arguments = dict(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first,
                     skip_first_wait=skip_first_wait)
    theirs = torch_profiler.schedule(**arguments)
    ours = profiler.schedule(**arguments)
    assert [ours(step).name for step in range(150)] == [theirs(step).name for step in range(150)]


def test_skip_first_wait_starts_the_first_cycle_right_after_skip_first():
    # torch's docstring example: skip_first=10, wait=20: warmup at step 10 instead of 30, and
    # every later cycle waits its 20 steps.
    plan = profiler.schedule(wait=20, warmup=1, active=2, skip_first=10, skip_first_wait=1)
    actions = [plan(step).name for step in range(60)]
    assert actions[:10] == ["NONE"] * 10
    assert actions[10:13] == ["WARMUP", "RECORD", "RECORD_AND_SAVE"]
    assert actions[13:33] == ["NONE"] * 20
    assert actions[33:36] == ["WARMUP", "RECORD", "RECORD_AND_SAVE"]
    assert plan.skip_first_wait == 1 and "skip_first_wait=1" in repr(plan)


@pytest.mark.parametrize("arguments,named", [
    (dict(wait=-1, warmup=0, active=1), "wait"), (dict(wait=0, warmup=-1, active=1), "warmup"),
    (dict(wait=0, warmup=0, active=0), "active"), (dict(wait=0, warmup=0, active=1, repeat=-1), "repeat"),
    (dict(wait=0, warmup=0, active=1, skip_first=-1), "skip_first"),
])
def test_bad_schedule_values_raise_torchs_assertion_error(torch_profiler, arguments, named):
    with pytest.raises(AssertionError):
        torch_profiler.schedule(**arguments)
    with pytest.raises(AssertionError, match=named) as raised:
        profiler.schedule(**arguments)
    assert isinstance(raised.value, ValueError)  # livemon's error for bad arguments, too


def test_a_negative_step_raises_as_in_torch(torch_profiler):
    for name, module in both(torch_profiler):
        with pytest.raises(AssertionError):
            module.schedule(wait=1, warmup=1, active=1)(-1)


def test_a_schedule_returning_device_stopped_is_refused_as_in_torch(torch_profiler):
    for name, module in both(torch_profiler):
        with pytest.raises(ValueError, match="DEVICE_STOPPED"):
            module.profile(schedule=lambda step: module.ProfilerAction.DEVICE_STOPPED)
    assert [a.name for a in profiler.ProfilerAction.__members__.values()] == [
        a.name for a in torch_profiler.ProfilerAction]


# --- what a profiling run reports -------------------------------------------------------------------

def labelled_work(module, step):
    """Pure-Python work in labelled ranges: torch records nothing more than the labels."""
    with module.record_function("outer"):
        with module.record_function("inner", "an argument"):
            sum(range(200))
    if step % 3 == 0:
        with module.record_function("every_third"):
            pass


def profiling_run(module, steps, acc_events=False, **schedule):
    """A training loop under a schedule; what it saw at each step and in each on_trace_ready."""
    log = []

    def ready(prof):
        events = prof.events()
        log.append(("ready", prof.step_num,
                    sorted((a.key, a.count) for a in prof.key_averages()),
                    sorted(e.trace_name for e in events),
                    sorted((e.name, e.cpu_parent.name if e.cpu_parent else None) for e in events)))

    with module.profile(activities=[module.ProfilerActivity.CPU], schedule=module.schedule(**schedule),
                        on_trace_ready=ready, acc_events=acc_events) as prof:
        for step in range(steps):
            log.append(("step", prof.step_num, prof.current_action.name))
            labelled_work(module, step)
            prof.step()
    log.append(("end", prof.step_num))
    return log


@pytest.mark.parametrize("steps,acc_events,schedule", [
    (12, False, dict(wait=2, warmup=1, active=2, repeat=2, skip_first=1, skip_first_wait=1)),
    (12, True, dict(wait=1, warmup=1, active=1, repeat=3)),
    (10, False, dict(wait=0, warmup=0, active=2, repeat=0)),
    (4, False, dict(wait=1, warmup=1, active=4, repeat=1)),  # stop() ends the recording early
    (9, True, dict(wait=30, warmup=1, active=2, skip_first=2, skip_first_wait=1)),
], ids=["skip_first_wait", "acc_events", "no_wait_no_warmup", "stopped_while_recording", "long_wait_skipped"])
def test_schedule_actions_trace_ready_steps_and_recorded_names_agree_with_torch(torch_profiler, steps, acc_events,
                                                                               schedule):
    theirs = profiling_run(torch_profiler, steps, acc_events, **schedule)
    ours = profiling_run(profiler, steps, acc_events, **schedule)
    assert ours == theirs
    assert any(entry[0] == "ready" for entry in ours)


def unscheduled_run(module):
    with module.profile(activities=[module.ProfilerActivity.CPU]) as prof:
        for step in range(3):
            labelled_work(module, step)
        with module.record_function("a_name_longer_than_the_name_column_" + "x" * 40):
            pass
    return prof


def table_lines_without_numbers(table):
    """The lines that hold no measurement: rules, titles and the header."""
    return [line for line in table.splitlines() if not re.search(r"\d", line)]


def table_rows(table):
    """(name, # of calls) per row."""
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("Name"))
    rows = []
    for line in lines[header + 2:]:
        if line.startswith("-"):
            break
        cells = re.split(r" {2,}", line.strip())
        rows.append((cells[0], int(cells[-1])))
    return rows


TABLE_CALLS = [
    dict(), dict(sort_by="count"), dict(sort_by="count", row_limit=2), dict(row_limit=-1, header="title"),
    dict(sort_by="count", top_level_events_only=True), dict(max_name_column_width=20),
    dict(max_name_column_width=None), dict(sort_by="count", time_unit="ms"),
] + [dict(sort_by=key) for key in (
    "device_time_total", "self_device_time_total", "device_time", "cuda_time_total", "self_cuda_time_total",
    "cuda_time", "xpu_time_total", "self_xpu_time_total", "privateuse1_time_total", "cpu_memory_usage",
    "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage", "cuda_memory_usage",
    "self_cuda_memory_usage", "flops")]


def test_table_layout_rows_and_sort_order_agree_with_torch(torch_profiler):
    theirs, ours = unscheduled_run(torch_profiler), unscheduled_run(profiler)
    for kind in ("key_averages", "events"):
        their_list, our_list = getattr(theirs, kind)(), getattr(ours, kind)()
        for call in TABLE_CALLS:
            their_table, our_table = their_list.table(**call), our_list.table(**call)
            assert table_lines_without_numbers(our_table) == table_lines_without_numbers(their_table), (kind, call)
            assert table_rows(our_table) == table_rows(their_table), (kind, call)
            assert our_table.count("\n") == their_table.count("\n") and our_table.endswith("\n"), (kind, call)


@pytest.mark.parametrize("unit,suffix", [("s", "s"), ("ms", "ms"), ("us", "us")])
def test_time_unit_writes_every_time_in_that_unit_as_torch(torch_profiler, unit, suffix):
    for name, module in both(torch_profiler):
        table = unscheduled_run(module).key_averages().table(time_unit=unit)
        times = re.findall(r"(?<![\d.])\d+\.\d{3}([mu]?s)\b", table)
        assert times and set(times) == {suffix}, (name, table)
        assert re.search(rf"^Self CPU time total: \d+\.\d{{3}}{suffix}$", table, re.M), (name, table)


def test_an_unknown_sort_key_raises_attribute_error_as_in_torch(torch_profiler):
    for name, module in both(torch_profiler):
        with pytest.raises(AttributeError):
            unscheduled_run(module).key_averages().table(sort_by="cpu_total")


def test_a_bad_time_unit_raises_where_torch_falls_back_silently(torch_profiler):
    assert unscheduled_run(torch_profiler).key_averages().table(time_unit="ns")  # torch: its own units
    with pytest.raises(ValueError, match=r"'ns'.*s, ms, us"):
        unscheduled_run(profiler).key_averages().table(time_unit="ns")


DEVICE_FIELDS = ["device_time", "device_time_total", "self_device_time_total", "cpu_memory_usage",
                 "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage", "flops",
                 "cuda_time", "cuda_time_total", "self_cuda_time_total"]


def test_rows_have_torchs_fields_device_ones_zero_on_a_cpu_run(torch_profiler):
    theirs, ours = unscheduled_run(torch_profiler), unscheduled_run(profiler)
    for their_rows, our_rows in ((theirs.key_averages(), ours.key_averages()), (theirs.events(), ours.events())):
        assert [row.key for row in our_rows] == [row.key for row in their_rows]
        for their_row, our_row in zip(their_rows, our_rows):
            for field in DEVICE_FIELDS:  # torch 1.13's cuda_* names are on events only, in torch 2.x
                assert getattr(our_row, field) == 0, field
                if field.startswith(("device", "self_device")) or hasattr(their_row, field):
                    assert getattr(their_row, field) == 0, field
            assert our_row.count == their_row.count
            assert our_row.cpu_time == pytest.approx(our_row.cpu_time_total / our_row.count)
            for field in ("cpu_time_str", "cpu_time_total_str", "self_cpu_time_total_str", "device_time_str",
                          "self_device_time_total_str"):
                assert re.fullmatch(r"\d+\.\d{3}(s|ms|us)", getattr(our_row, field)), field
            assert our_row.device_time_str == their_row.device_time_str == "0.000us"


def test_total_average_and_self_cpu_time_total_as_torch(torch_profiler):
    for name, module in both(torch_profiler):
        prof = unscheduled_run(module)
        averages = prof.key_averages()
        total = averages.total_average()
        assert total.key == "Total", name
        assert total.count == sum(a.count for a in averages) == len(prof.events()) == 8, name
        assert total.cpu_time_total == pytest.approx(sum(a.cpu_time_total for a in averages)), name
        assert total.self_cpu_time_total == pytest.approx(averages.self_cpu_time_total), name
        assert averages.self_cpu_time_total == pytest.approx(prof.events().self_cpu_time_total), name
        assert averages.self_cpu_time_total == pytest.approx(sum(a.self_cpu_time_total for a in averages)), name
        assert prof.events().total_average().count == 8, name


# --- files -----------------------------------------------------------------------------------------

def test_export_chrome_trace_gz_is_gzip_as_torch_writes_it(torch_profiler, tmp_path):
    for name, module in both(torch_profiler):
        path = tmp_path / f"{name}.json.gz"
        unscheduled_run(module).export_chrome_trace(str(path))
        assert path.read_bytes()[:2] == b"\x1f\x8b", name
        with gzip.open(path) as f:
            by_gzip_module = json.load(f)
        unpacked = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True).stdout
        assert json.loads(unpacked) == by_gzip_module, name
        names = {e.get("name") for e in by_gzip_module["traceEvents"]}
        assert {"outer", "inner", "every_third"} <= names, name
        assert not [f for f in os.listdir(tmp_path) if "partial" in f]


def metadata_run(module, path):
    with module.profile(activities=[module.ProfilerActivity.CPU], custom_trace_id_callback=lambda: "run-7") as prof:
        prof.add_metadata("run", "resnet 50")
        prof.add_metadata_json("config", '{"lr": 0.1, "layers": [1, 2]}')
        prof.add_metadata_json("epochs", "3")
        labelled_work(module, 0)
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return prof, json.load(f)


def test_metadata_and_trace_id_land_at_the_top_of_the_trace_as_in_torch(torch_profiler, tmp_path):
    for name, module in both(torch_profiler):
        prof, trace = metadata_run(module, tmp_path / f"{name}.json")
        assert trace["run"] == "resnet 50", name
        assert trace["config"] == {"lr": 0.1, "layers": [1, 2]}, name
        assert trace["epochs"] == 3, name
        assert trace["trace_id"] == prof.get_trace_id() == "run-7", name


def trace_ids_run(module, tmp_path):
    issued, seen = [], []

    def next_id():
        issued.append(f"cycle-{len(issued)}")
        return issued[-1]

    def ready(prof):
        path = tmp_path / f"{len(seen)}.json"
        prof.export_chrome_trace(str(path))
        with open(path) as f:
            seen.append((prof.step_num, prof.get_trace_id(), json.load(f)["trace_id"]))

    with module.profile(activities=[module.ProfilerActivity.CPU], on_trace_ready=ready,
                        schedule=module.schedule(wait=1, warmup=1, active=2, repeat=3),
                        custom_trace_id_callback=next_id) as prof:
        for step in range(10):
            labelled_work(module, step)
            prof.step()
    return issued, seen


def test_custom_trace_id_callback_names_each_cycle_as_in_torch(torch_profiler, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "livemon").mkdir()
    theirs = trace_ids_run(torch_profiler, tmp_path / "torch")
    ours = trace_ids_run(profiler, tmp_path / "livemon")
    assert ours == theirs
    assert ours[1] == [(4, "cycle-0", "cycle-0"), (8, "cycle-1", "cycle-1"), (10, "cycle-2", "cycle-2")]


def test_tensorboard_trace_handler_writes_torchs_file_names(torch_profiler, tmp_path):
    for name, module in both(torch_profiler):
        out = tmp_path / name
        with module.profile(activities=[module.ProfilerActivity.CPU],
                            schedule=module.schedule(wait=0, warmup=1, active=1, repeat=2),
                            on_trace_ready=module.tensorboard_trace_handler(str(out), worker_name="rank0",
                                                                            use_gzip=True)) as prof:
            for step in range(5):
                labelled_work(module, step)
                prof.step()
        written = sorted(os.listdir(out))
        assert len(written) == 2, (name, written)
        for file_name in written:
            assert re.fullmatch(r"rank0\.\d{19}\.pt\.trace\.json\.gz", file_name), (name, file_name)
            with gzip.open(out / file_name) as f:
                assert "outer" in {e.get("name") for e in json.load(f)["traceEvents"]}, name


# --- the execution trace observer -------------------------------------------------------------------

class CallLog:
    """Any object with start(), stop() and cleanup() is an execution trace observer to torch."""

    def __init__(self):
        self.calls = []
        self.prof = None

    def _note(self, what):
        self.calls.append((what, self.prof.step_num if self.prof else None))

    def start(self):
        self._note("start")

    def stop(self):
        self._note("stop")

    def cleanup(self):
        self._note("cleanup")


def observed_run(module):
    observer = CallLog()
    with module.profile(activities=[module.ProfilerActivity.CPU], execution_trace_observer=observer,
                        schedule=module.schedule(wait=1, warmup=1, active=2, repeat=2),
                        on_trace_ready=lambda prof: observer._note("ready")) as prof:
        observer.prof = prof
        for step in range(10):
            labelled_work(module, step)
            prof.step()
    return observer.calls


def test_the_execution_trace_observer_runs_with_each_recording_as_in_torch(torch_profiler):
    assert observed_run(profiler) == observed_run(torch_profiler)


def test_execution_trace_observer_methods_run_as_torchs(torch_profiler, tmp_path):
    for name, module in both(torch_profiler):
        path = str(tmp_path / f"{name}.et.json")
        observer = module.ExecutionTraceObserver()
        assert observer.register_callback(path) is observer and observer.is_registered, name
        assert observer.get_output_file_path() == path, name
        with module.profile(activities=[module.ProfilerActivity.CPU], execution_trace_observer=observer):
            assert observer.is_running(), name
            labelled_work(module, 0)
        assert not observer.is_running() and not observer.is_registered, name  # cleaned up by the with block
        observer.unregister_callback()  # a second time: nothing happens


# --- names and signatures ---------------------------------------------------------------------------

def test_every_name_torch_profiler_exports_is_there(torch_profiler):
    assert set(torch_profiler.__all__) <= set(dir(profiler))
    assert set(torch_profiler.__all__) <= set(profiler.__all__)
    assert torch_profiler.itt.__all__ == profiler.itt.__all__
    assert [(a.name, int(a.value)) for a in torch_profiler.ProfilerActivity.__members__.values()] == [
        (a.name, a.value) for a in profiler.ProfilerActivity]
    assert [(name, int(value)) for name, value in torch_profiler.DeviceType.__members__.items()] == [
        (d.name, d.value) for d in profiler.DeviceType]


def signatures(torch_profiler):
    torch_events = importlib.import_module("torch.autograd.profiler_util")
    pairs = [(torch_profiler.profile.__init__, profiler.profile.__init__),
             (torch_profiler.schedule, profiler.schedule),
             (torch_profiler.tensorboard_trace_handler, profiler.tensorboard_trace_handler),
             (torch_profiler.record_function.__init__, profiler.record_function.__init__),
             (torch_events.EventList.table, profiler.EventList.table),
             (torch_events.EventList.key_averages, profiler.EventList.key_averages),
             (torch_events.EventList.export_stacks, profiler.EventList.export_stacks)]
    for method in ("start", "stop", "step", "events", "key_averages", "export_chrome_trace", "export_stacks",
                   "add_metadata", "add_metadata_json", "preset_metadata_json", "get_trace_id",
                   "set_custom_trace_id_callback", "toggle_collection_dynamic"):
        pairs.append((getattr(torch_profiler.profile, method), getattr(profiler.profile, method)))
    for method in ("register_callback", "unregister_callback", "start", "stop", "cleanup", "is_running",
                   "get_output_file_path", "set_extra_resource_collection", "get_resources_dir",
                   "build_execution_trace_obs_from_env", "get_resources_dir_for_et_path"):
        pairs.append((getattr(torch_profiler.ExecutionTraceObserver, method),
                      getattr(profiler.ExecutionTraceObserver, method)))
    for function in torch_profiler.itt.__all__:
        pairs.append((getattr(torch_profiler.itt, function), getattr(profiler.itt, function)))
    return pairs


def test_every_parameter_torch_takes_is_taken_alike(torch_profiler):
    for theirs, ours in signatures(torch_profiler):
        their_parameters = list(inspect.signature(theirs).parameters.values())
        our_parameters = inspect.signature(ours).parameters
        our_order = list(our_parameters)
        for position, parameter in enumerate(their_parameters):
            where = f"{theirs.__qualname__}({parameter.name})"
            assert parameter.name in our_parameters, where
            ours_parameter = our_parameters[parameter.name]
            assert ours_parameter.kind == parameter.kind, where
            if parameter.kind == parameter.POSITIONAL_OR_KEYWORD:
                assert our_order.index(parameter.name) == position, where
            if parameter.default is not parameter.empty and isinstance(parameter.default, (bool, int, float, str)):
                assert ours_parameter.default == parameter.default, where
            elif parameter.default is None:
                assert ours_parameter.default is None, where


def test_torchs_own_arguments_are_accepted(torch_profiler):
    torch_config = importlib.import_module("torch._C._profiler")._ExperimentalConfig(verbose=True)
    activity = torch_profiler.ProfilerActivity
    with profiler.profile(activities=[activity.CPU, activity.XPU, activity.MTIA, activity.HPU, activity.PrivateUse1,
                                      {activity.CUDA: ["GPU_MEMCPY", "CUDA_RUNTIME"]}],
                          experimental_config=torch_config, acc_events=True, post_processing_timeout_s=30.0,
                          execution_trace_observer=torch_profiler.ExecutionTraceObserver()) as prof:
        labelled_work(profiler, 0)
    assert prof.activities == set(profiler.ProfilerActivity)
    assert prof.use_device == "cuda"
    assert prof.experimental_config is torch_config
    assert sorted(e.name for e in prof.events()) == ["every_third", "inner", "outer"]


def test_a_schedule_from_torch_drives_a_livemon_profile(torch_profiler):
    ready = []
    with profiler.profile(schedule=torch_profiler.schedule(wait=1, warmup=1, active=1, repeat=2),
                          on_trace_ready=lambda prof: ready.append(prof.step_num)) as prof:
        for step in range(8):
            prof.step()
    assert ready == [3, 6]
