"""livemon.profiler's side of torch 2.x's torch.profiler names, without torch (these run under
torch 1.13's interpreter too): what each name records, what it writes and how it fails.
test_profiler_torch2_parity.py compares the same names with torch 2.x itself."""

import gzip
import importlib
import json
import os
import re
import socket
import subprocess
import threading

import pytest

from livemon import profiler


def ranges_of(prof):
    return [r for r in prof.trace().ranges if not r[0].startswith("ProfilerStep#")]


def test_every_torch_2_argument_is_accepted_and_ranges_still_recorded(tmp_path):
    activity = profiler.ProfilerActivity
    observer = profiler.ExecutionTraceObserver().register_callback(str(tmp_path / "et.json"))
    config = profiler._ExperimentalConfig(verbose=True, profile_all_threads=True)
    with profiler.profile(activities=[activity.CPU, activity.XPU, activity.MTIA, activity.HPU, activity.PrivateUse1,
                                      {activity.CUDA: ["GPU_MEMCPY"]}],
                          execution_trace_observer=observer, acc_events=True, custom_trace_id_callback=lambda: "x",
                          experimental_config=config, post_processing_timeout_s=0.5, use_cuda=True) as prof:
        with profiler.record_function("kept", "args"):
            pass
    assert [r[0] for r in ranges_of(prof)] == ["kept"]
    assert prof.activities == set(activity) and prof.use_device == "cuda"
    assert prof.acc_events and prof.experimental_config is config and prof.post_processing_timeout_s == 0.5
    assert prof.execution_trace_observer is observer and not os.path.exists(tmp_path / "et.json")


@pytest.mark.parametrize("activities,use_cuda,chosen,device", [
    (None, None, {"CPU"}, None), (["CPU", "XPU"], None, {"CPU", "XPU"}, "xpu"),
    ([{profiler.ProfilerActivity.CUDA: []}], False, set(), None), (["MTIA", "HPU"], None, {"MTIA", "HPU"}, "mtia"),
    (["CPU"], True, {"CPU", "CUDA"}, "cuda"), (["PrivateUse1"], None, {"PrivateUse1"}, "privateuseone"),
])
def test_activities_and_use_device_as_torch_reads_them(activities, use_cuda, chosen, device):
    prof = profiler.profile(activities=activities, use_cuda=use_cuda)
    assert {a.name for a in prof.activities} == chosen
    assert prof.use_device == device


@pytest.mark.parametrize("arguments,message", [
    (dict(activities=["GPU"]), r"'GPU'.*CPU,XPU,MTIA,CUDA,HPU,PrivateUse1"),
    (dict(activities=[{"TPU": []}]), "'TPU'"),
    (dict(post_processing_timeout_s=-1.0), "post_processing_timeout_s"),
])
def test_bad_profile_arguments_raise_value_error_naming_them(arguments, message):
    with pytest.raises(ValueError, match=message):
        profiler.profile(**arguments)


def test_schedule_errors_are_value_and_assertion_errors():
    with pytest.raises(profiler.ScheduleError, match="active"):
        profiler.schedule(wait=0, warmup=0, active=0)
    assert issubclass(profiler.ScheduleError, ValueError) and issubclass(profiler.ScheduleError, AssertionError)
    with pytest.raises(profiler.ScheduleError, match="step"):
        profiler.schedule(wait=0, warmup=0, active=1)(-3)


def test_a_schedule_must_answer_with_a_profiler_action():
    with pytest.raises(ValueError, match="must return a ProfilerAction, got 'RECORD'"):
        profiler.profile(schedule=lambda step: "RECORD")
    prof = profiler.profile(schedule=lambda step: profiler.ProfilerAction.DEVICE_STOPPED if step == 2
                            else profiler.ProfilerAction.RECORD)
    with prof:
        prof.step()
        with pytest.raises(ValueError, match="DEVICE_STOPPED"):
            prof.step()
        assert prof.step_num == 1  # a refused answer changes nothing


def scheduled_run(steps=10, **arguments):
    ready = []
    arguments.setdefault("schedule", profiler.schedule(wait=1, warmup=1, active=2, repeat=2))
    with profiler.profile(on_trace_ready=lambda prof: ready.append(prof.step_num), **arguments) as prof:
        for step in range(steps):
            with profiler.record_function(f"work{step}"):
                pass
            prof.step()
    return prof, ready


def test_acc_events_keeps_every_recording_for_events_and_key_averages(tmp_path):
    kept, ready = scheduled_run(acc_events=True)
    last_only, _ = scheduled_run(acc_events=False)
    assert ready == [4, 8]
    assert sorted(e.name for e in kept.events() if e.name.startswith("work")) == ["work2", "work3", "work6", "work7"]
    assert sorted(e.name for e in last_only.events() if e.name.startswith("work")) == ["work6", "work7"]
    assert {a.key: a.count for a in kept.key_averages()}["ProfilerStep*"] == 4
    kept.export_chrome_trace(str(tmp_path / "t.json"))  # the last recording, as torch's
    with open(tmp_path / "t.json") as f:
        assert sorted(e["name"] for e in json.load(f)["traceEvents"] if e["name"].startswith("work")) == [
            "work6", "work7"]


def test_events_are_torchs_function_events_with_parents_children_and_self_time():
    with profiler.profile() as prof:
        with profiler.record_function("outer"):
            with profiler.record_function("inner"):
                sum(range(1000))
            with profiler.record_function("aten::mm"):
                pass
    events = prof.events()
    assert isinstance(events, profiler.EventList)
    assert [e.name for e in events] == ["outer", "inner", "aten::mm"]
    outer, inner, mm = events
    assert [e.id for e in events] == [1, 2, 3]
    assert inner.cpu_parent is outer and mm.cpu_parent is outer and outer.cpu_parent is None
    assert outer.cpu_children == [inner, mm]
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total -
                                                      mm.cpu_time_total)
    assert inner.self_cpu_time_total == inner.cpu_time_total == pytest.approx(inner.time_range.elapsed_us())
    trace_range = next(r for r in prof.trace().ranges if r[0] == "inner")
    assert inner.time_range.start == pytest.approx(trace_range[2] / 1000) and inner.thread == trace_range[1]
    assert outer.is_user_annotation and not mm.is_user_annotation
    assert (outer.count, outer.device_type, outer.node_id, outer.flops) == (1, profiler.DeviceType.CPU, -1, 0)
    assert events.self_cpu_time_total == pytest.approx(outer.cpu_time_total)
    assert [a.key for a in events.key_averages()] == [a.key for a in prof.key_averages()]


def test_step_ranges_are_profiler_step_star_in_events_and_averages_and_numbered_in_the_trace(tmp_path):
    prof, _ = scheduled_run()
    steps = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert sorted(e.trace_name for e in steps) == ["ProfilerStep#6", "ProfilerStep#7"]
    assert {a.key: a.count for a in prof.key_averages()}["ProfilerStep*"] == 2
    assert next(e for e in prof.events() if e.name == "work6").cpu_parent.trace_name == "ProfilerStep#6"
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    with open(tmp_path / "t.json") as f:
        assert {"ProfilerStep#6", "ProfilerStep#7"} <= {e["name"] for e in json.load(f)["traceEvents"]}


def test_events_before_any_recording_raise():
    with pytest.raises(RuntimeError, match="no trace"):
        profiler.profile().events()


def test_total_average_sums_every_row():
    prof, _ = scheduled_run()
    averages = prof.key_averages()
    total = averages.total_average()
    assert total.key == "Total" and total.count == sum(a.count for a in averages) == 4
    assert total.cpu_time_total == pytest.approx(sum(a.cpu_time_total for a in averages))
    assert total.cpu_time == pytest.approx(total.cpu_time_total / 4)


def test_table_of_nothing_is_empty_and_bad_arguments_raise_even_then():
    assert profiler.KeyAverages().table() == ""
    with pytest.raises(profiler.UnknownSortKey):
        profiler.KeyAverages().table(sort_by="nope")
    with pytest.raises(ValueError, match="time_unit"):
        profiler.KeyAverages().table(time_unit="minutes")


def export_json(prof, path):
    prof.export_chrome_trace(str(path))
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_metadata_any_text_survives_and_lands_in_every_export(tmp_path):
    text = 'quote " backslash \\ newline \n unicode é ✓'
    with profiler.profile(schedule=profiler.schedule(wait=0, warmup=0, active=1, repeat=2),
                          on_trace_ready=lambda p: exported.append(export_json(p, tmp_path / f"{p.step_num}.json"))
                          ) as prof:
        exported = []
        prof.add_metadata("text", text)  # before any recording: kept (torch's kineto drops it)
        prof.add_metadata("number", 12)
        prof.preset_metadata_json("preset", "[1, 2]")
        prof.step()
        prof.add_metadata_json("late", ' {"a": null} ')
        prof.step()
    assert len(exported) == 2
    first, second = exported
    assert first["text"] == text and first["number"] == "12" and first["preset"] == [1, 2] and "late" not in first
    assert second["late"] == {"a": None} and second["text"] == text
    assert first["trace_id"] != second["trace_id"]
    assert re.fullmatch(r"[0-9A-F]{32}", first["trace_id"])
    assert first["traceEvents"] and first["otherData"]["producer"] == "livemon"


@pytest.mark.parametrize("call,message", [
    (lambda p: p.add_metadata_json("bad", "{not json"), "'bad'.*not JSON"),
    (lambda p: p.add_metadata_json("bad", None), "'bad'.*not JSON"),
    (lambda p: p.add_metadata("traceEvents", "x"), "traceEvents"),
    (lambda p: p.add_metadata_json("otherData", "{}"), "otherData"),
])
def test_metadata_that_would_break_the_trace_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call(profiler.profile())


def test_gzip_export_is_atomic_readable_by_gzip_and_names_the_json_inside(tmp_path):
    with profiler.profile() as prof:
        with profiler.record_function("x"):
            pass
    path = tmp_path / "t.json.gz"
    for _ in range(2):  # livemon exports as often as asked
        trace = export_json(prof, path)
    assert any(e.get("name") == "x" for e in trace["traceEvents"])
    listed = subprocess.run(["gzip", "-lN", str(path)], capture_output=True, text=True, check=True).stdout
    assert "t.json" in listed.splitlines()[-1]
    assert os.listdir(tmp_path) == ["t.json.gz"]
    with open(tmp_path / "plain.json", "w"):
        pass
    prof.export_chrome_trace(str(tmp_path / "plain.json"))
    assert (tmp_path / "plain.json").read_bytes().startswith(b"{")


def test_a_failed_export_leaves_nothing_behind(tmp_path):
    with profiler.profile() as prof:
        pass
    with pytest.raises(OSError):
        prof.export_chrome_trace(str(tmp_path / "missing" / "t.json.gz"))
    assert os.listdir(tmp_path) == []


def test_get_trace_id_follows_the_cycles_and_the_callback_set_later():
    ids = []
    prof = profiler.profile(schedule=profiler.schedule(wait=1, warmup=0, active=1, repeat=3),
                            on_trace_ready=lambda p: ids.append(p.get_trace_id()))
    assert prof.get_trace_id() is None
    with prof:
        prof.step()
        prof.set_custom_trace_id_callback(lambda: "second")
        for _ in range(5):
            prof.step()
    assert len(ids) == 3 and ids[1:] == ["second", "second"] and ids[0] != "second"


def test_trace_handlers_write_torchs_names_and_livemons_with_the_step(tmp_path):
    with profiler.profile(on_trace_ready=profiler.tensorboard_trace_handler(str(tmp_path / "tb"))) as prof:
        prof.add_metadata("run", "r1")
    with profiler.profile(on_trace_ready=profiler.chrome_trace_handler(str(tmp_path / "ct"), "w", use_gzip=True)):
        pass
    (tb_file,) = os.listdir(tmp_path / "tb")
    host_pid = f"{socket.gethostname()}_{os.getpid()}"
    assert re.fullmatch(rf"{re.escape(host_pid)}\.\d{{19}}\.pt\.trace\.json", tb_file)
    with open(tmp_path / "tb" / tb_file) as f:
        assert json.load(f)["run"] == "r1"
    (ct_file,) = os.listdir(tmp_path / "ct")
    assert re.fullmatch(r"w\.0\.\d{13}\.pt\.trace\.json\.gz", ct_file)


def test_a_trace_directory_that_cannot_be_made_raises_naming_it(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(RuntimeError, match="cannot create trace directory .*file"):
        with profiler.profile(on_trace_ready=profiler.tensorboard_trace_handler(str(tmp_path / "file"))):
            pass


def test_export_stacks_writes_the_ranges_around_each_as_its_stack(tmp_path):
    with profiler.profile() as prof:
        with profiler.record_function("step one"):
            with profiler.record_function("forward;pass"):
                sum(range(20000))
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    stacks = dict(line.rsplit(" ", 1) for line in lines)
    assert set(stacks) <= {"step_one", "step_one;forward_pass"} and "step_one;forward_pass" in stacks
    assert all(int(value) > 0 for value in stacks.values())
    prof.export_stacks(str(tmp_path / "device.txt"), "self_cuda_time_total")
    assert (tmp_path / "device.txt").read_text() == ""  # no device time here
    with pytest.raises(ValueError, match="metric should be one of"):
        prof.export_stacks(str(tmp_path / "bad.txt"), "cpu_time_total")


def test_record_function_keeps_args_and_works_as_decorator_with_them():
    @profiler.record_function("decorated", "some args")
    def work():
        pass

    with profiler.profile() as prof:
        work()
        work()
        with profiler.record_function("block", args="more") as block:
            assert block.args == "more"
    assert [r[0] for r in ranges_of(prof)] == ["decorated", "decorated", "block"]


def test_itt_ranges_are_livemon_ranges():
    itt = importlib.import_module("livemon.profiler.itt")
    assert itt is profiler.itt and itt.is_available()
    with profiler.profile() as prof:
        assert itt.range_push("outer") == 0
        assert itt.range_push("inner") == 1
        assert itt.mark("instant") is None
        assert itt.range_pop() == 1
        assert itt.range_pop() == 0
        assert itt.range_pop() == -1  # nothing open

        with itt.range("epoch {} of {total}", 3, total=5):
            pass

        @itt.range("decorated")
        def work():
            pass

        work()
    ranges = ranges_of(prof)
    assert [r[0] for r in ranges] == ["outer", "inner", "epoch 3 of 5", "decorated"]
    assert [r[4] for r in ranges] == [0, 1, 0, 0]


def test_itt_ranges_nest_per_thread():
    depths = {}
    ready = threading.Barrier(2)

    def worker(name):
        depths[name] = [profiler.itt.range_push(name)]
        ready.wait()
        depths[name].append(profiler.itt.range_pop())

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert depths == {"a": [0, 0], "b": [0, 0]}


def test_execution_trace_observer_state_and_no_file(tmp_path):
    observer = profiler.ExecutionTraceObserver()
    assert not observer.is_registered and observer.get_output_file_path() is None
    observer.start()
    assert not observer.is_running()  # as torch: only a registered observer runs
    path = str(tmp_path / "et.json.gz")
    assert observer.register_callback(path) is observer
    assert observer.register_callback("other") is observer and observer.get_output_file_path() == path
    observer.set_extra_resource_collection(True)
    assert observer.get_resources_dir(can_create=True) is None
    observer.start()
    assert observer.is_running()
    observer.stop()
    assert not observer.is_running()
    observer.start()
    observer.cleanup()
    assert not observer.is_registered and not observer.is_running()
    assert os.listdir(tmp_path) == []
    assert profiler.ExecutionTraceObserver.build_execution_trace_obs_from_env() is None
    assert profiler.ExecutionGraphObserver is profiler.ExecutionTraceObserver  # torch 1.13's name


def test_an_observer_runs_only_while_recording_and_is_cleaned_up_by_the_with_block():
    calls = []

    class Observer:
        def start(self):
            calls.append(("start", prof.step_num, prof.current_action.name))

        def stop(self):
            calls.append(("stop", prof.step_num, prof.current_action.name))

        def cleanup(self):
            calls.append(("cleanup", prof.step_num))

    prof = profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
                            execution_trace_observer=Observer())
    with prof:
        for _ in range(5):
            prof.step()
        assert calls == [("start", 2, "RECORD"), ("stop", 4, "NONE")]
    prof.start()
    prof.stop()  # stop() alone does not clean up (torch: only __exit__ does)
    assert calls[-1] == ("cleanup", 5)


def test_toggle_collection_dynamic_is_accepted():
    with profiler.profile() as prof:
        prof.toggle_collection_dynamic(False, [profiler.ProfilerActivity.CUDA])
        with profiler.record_function("still"):
            pass
    assert [r[0] for r in ranges_of(prof)] == ["still"]



def test_a_ranges_elapsed_time_is_its_duration_exactly_after_days_of_uptime():
    """Microsecond times counted from boot lose their last bits in a subtraction: the Interval
    of a range says the range's own duration, as cpu_time_total does."""
    from livemon._key_averages import FunctionEvent
    start_ns = 259_200_000_000_000 + 123  # three days after boot
    event = FunctionEvent(1, "step", 7, start_ns, start_ns + 7_921, 0)
    assert event.cpu_time_total == 7.921
    assert event.time_range.elapsed_us() == event.cpu_time_total
    assert (event.time_range.end - event.time_range.start) != 7.921  # what the subtraction gives
