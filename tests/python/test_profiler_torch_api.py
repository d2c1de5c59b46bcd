"""livemon.profiler as a drop-in for torch.profiler 1.13: the same script runs against both, the
arguments livemon does not implement are accepted, and key_averages() agrees with the trace."""

import gzip
import importlib
import json
import os
import re
import time

import pytest

from livemon import profiler
from livemon._key_averages import KeyAverages

TABLE_HEADERS = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]


def training_script(profiler, out_dir):
    """A short job in torch.profiler's terms, as users write it; returns what it printed."""
    printed = []

    # All rows: torch 2.x with with_stack=True also times Python frames, which can crowd the labels
    # out of the first rows.
    def trace_handler(prof):
        printed.append(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1))

    activities = [profiler.ProfilerActivity.CPU]
    if profiler.ProfilerActivity.CUDA in profiler.supported_activities():
        activities.append(profiler.ProfilerActivity.CUDA)
    assert profiler.kineto_available() in (True, False)
    assert profiler.DeviceType.CPU != profiler.DeviceType.CUDA
    with profiler.profile(activities=activities,
                          schedule=profiler.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1),
                          on_trace_ready=trace_handler, record_shapes=True, profile_memory=True, with_stack=True,
                          with_flops=True, with_modules=True) as prof:
        for _ in range(8):
            with profiler.record_function("forward"):
                with profiler.record_function("matmul"):
                    sum(i * i for i in range(2000))
            prof.step()
    printed.append(prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1))
    prof.export_chrome_trace(os.path.join(out_dir, "trace.json"))

    with profiler.profile(on_trace_ready=profiler.tensorboard_trace_handler(os.path.join(out_dir, "tb"),
                                                                            worker_name="rank0", use_gzip=True)):
        with profiler.record_function("forward"):
            pass
    return printed


@pytest.mark.parametrize("module", ["torch.profiler", "livemon.profiler"])
def test_the_same_script_runs_against_torch_and_livemon(module, tmp_path):
    if module.startswith("torch"):
        pytest.importorskip("torch")
    printed = training_script(importlib.import_module(module), str(tmp_path))
    assert len(printed) == 2  # one cycle handed over, then the table after the run
    for table in printed:
        for header in TABLE_HEADERS:
            assert re.search(rf"(^|  ){re.escape(header)}(  |$)", table, re.M), (header, table)
        assert re.search(r"^ *forward .* 2 *$", table, re.M), table  # two active steps
        assert re.search(r"^ *matmul .* 2 *$", table, re.M), table
        assert "Self CPU time total: " in table
    with open(tmp_path / "trace.json") as f:
        assert any(e.get("name") == "matmul" for e in trace_events(json.load(f)))
    written = os.listdir(tmp_path / "tb")
    assert len(written) == 1 and written[0].startswith("rank0.") and written[0].endswith(".pt.trace.json.gz")
    with gzip.open(tmp_path / "tb" / written[0]) as f:
        assert any(e.get("name") == "forward" for e in trace_events(json.load(f)))


def trace_events(chrome_json):
    """Chrome's trace format allows a bare array (torch without kineto writes one) or an object."""
    return chrome_json if isinstance(chrome_json, list) else chrome_json["traceEvents"]


def test_torch_names():
    # torch 2.13's members and values (torch 1.13 had CPU=0, CUDA=1; code compares them by name).
    assert [(a.name, a.value) for a in profiler.ProfilerActivity] == [
        ("CPU", 0), ("XPU", 1), ("MTIA", 4), ("CUDA", 2), ("HPU", 3), ("PrivateUse1", 5)]
    assert profiler.supported_activities() == {profiler.ProfilerActivity.CPU}
    assert profiler.kineto_available() is False
    assert int(profiler.DeviceType.CUDA) == 1
    assert profiler.DeviceType.ORT is profiler.DeviceType.MAIA  # torch 1.13's name for 8
    torch_autograd = pytest.importorskip("torch.autograd")
    # Every name the installed torch (1.13 or 2.x) has, with its value.
    assert {name: int(value) for name, value in torch_autograd.DeviceType.__members__.items()} == {
        name: profiler.DeviceType[name].value for name in torch_autograd.DeviceType.__members__}


def test_torch_activity_members_are_taken_by_name_and_garbage_is_refused():
    torch_profiler = pytest.importorskip("torch.profiler")
    prof = profiler.profile(activities=[torch_profiler.ProfilerActivity.CPU, torch_profiler.ProfilerActivity.CUDA])
    assert prof.activities == {profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA}
    with pytest.raises(ValueError, match="'GPU'"):
        profiler.profile(activities=["GPU"])


def ranges_of(prof):
    return [r for r in prof.trace().ranges if not r[0].startswith("ProfilerStep#")]


@pytest.mark.parametrize("arguments", [
    dict(activities=[profiler.ProfilerActivity.CUDA]), dict(activities=[]), dict(record_shapes=True),
    dict(profile_memory=True), dict(with_stack=True), dict(with_flops=True), dict(with_modules=True),
    dict(experimental_config=object()), dict(use_cuda=True), dict(use_cuda=False),
], ids=lambda arguments: ",".join(arguments))
def test_each_argument_livemon_ignores_is_accepted_and_ranges_still_recorded(arguments):
    with profiler.profile(**arguments) as prof:
        with profiler.record_function("kept"):
            pass
    assert [r[0] for r in ranges_of(prof)] == ["kept"]
    for name, value in arguments.items():
        if name not in ("activities", "use_cuda"):
            assert getattr(prof, name) == (value if name == "experimental_config" else bool(value))
    if arguments.get("use_cuda"):
        assert profiler.ProfilerActivity.CUDA in prof.activities


def test_key_averages_and_table_arguments_torch_accepts_do_not_raise():
    with profiler.profile() as prof:
        with profiler.record_function("x" * 80):
            pass
    averages = prof.key_averages(group_by_input_shape=True, group_by_stack_n=5)
    table = averages.table(sort_by="count", row_limit=-1, max_src_column_width=10, max_name_column_width=20,
                           max_shapes_column_width=10, header="my header", top_level_events_only=True)
    assert "my header" in table
    # Long names cut to the name column, as torch cuts them: 3 characters under the width, then "...".
    assert re.search(r"^x{17}\.\.\. .* 1 *$", table, re.M), table
    for key in ["cuda_time_total", "self_cuda_time_total", "cuda_time", "cpu_memory_usage", "flops",
                "device_time_total", "self_device_time_total", "device_time", "self_xpu_time_total"]:
        assert "x" * 17 in averages.table(sort_by=key, max_name_column_width=20)  # what livemon does not record: 0


def test_unknown_sort_key_names_it_and_the_valid_ones():
    with profiler.profile() as prof:
        with profiler.record_function("x"):
            pass
    with pytest.raises(ValueError, match=r"unknown sort_by 'cpu_total'.*cpu_time_total.*self_cpu_time_total"):
        prof.key_averages().table(sort_by="cpu_total")
    # torch.profiler raises AttributeError there: code that catches it still does.
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="cpu_total")


def test_key_averages_before_any_trace_raises():
    with pytest.raises(RuntimeError, match="no trace"):
        profiler.profile().key_averages()


def test_key_averages_agree_with_the_trace():
    with profiler.profile() as prof:
        for _ in range(3):
            with profiler.record_function("outer"):
                with profiler.record_function("inner"):
                    time.sleep(0.002)  # measured, not a synchronisation
                with profiler.record_function("inner"):
                    pass
            with profiler.record_function("alone"):
                pass
    ranges = ranges_of(prof)
    averages = {a.key: a for a in prof.key_averages()}
    assert [a.key for a in prof.key_averages()] == ["outer", "inner", "alone"]  # first occurrence first
    for name in ["outer", "inner", "alone"]:
        durations_us = [(end - start) / 1000 for (n, _, start, end, _) in ranges if n == name]
        assert averages[name].count == len(durations_us)
        assert averages[name].cpu_time_total == pytest.approx(sum(durations_us))
        assert averages[name].cpu_time == pytest.approx(sum(durations_us) / len(durations_us))
    assert averages["outer"].count == 3 and averages["inner"].count == 6
    # Leaves' self time is all of their time; outer's excludes its inner ranges.
    assert averages["inner"].self_cpu_time_total == pytest.approx(averages["inner"].cpu_time_total)
    assert averages["outer"].self_cpu_time_total == pytest.approx(
        averages["outer"].cpu_time_total - averages["inner"].cpu_time_total)
    assert averages["outer"].self_cpu_time_total < averages["inner"].self_cpu_time_total

    rows = parse_table(prof.key_averages().table(sort_by="cpu_time_total"))
    assert [row["Name"] for row in rows] == ["outer", "inner", "alone"]
    assert [int(row["# of Calls"]) for row in rows] == [3, 6, 3]
    assert sum(float(row["Self CPU %"].rstrip("%")) for row in rows) == pytest.approx(100, abs=0.02)
    assert parse_time_us(rows[0]["CPU total"]) == pytest.approx(averages["outer"].cpu_time_total, rel=1e-3)
    assert [row["Name"] for row in parse_table(prof.key_averages().table(sort_by="count", row_limit=1))] == ["inner"]


def test_self_time_subtracts_direct_children_only_per_thread():
    # (name, thread, start_ns, end_ns, depth): a -> b -> c on thread 1; d on thread 2 inside a's span.
    ranges = [("c", 1, 3000, 4000, 2), ("b", 1, 2000, 6000, 1), ("a", 1, 1000, 10000, 0), ("d", 2, 2000, 9000, 0),
              ("b", 1, 7000, 8000, 1), ("orphan", 3, 100, 200, 1)]  # its parent opened before recording
    averages = {a.key: a for a in KeyAverages.from_ranges(ranges)}
    assert averages["a"].cpu_time_total == 9.0 and averages["a"].self_cpu_time_total == 9.0 - 4.0 - 1.0
    assert averages["b"].count == 2 and averages["b"].cpu_time_total == 5.0
    assert averages["b"].self_cpu_time_total == 5.0 - 1.0
    assert averages["c"].self_cpu_time_total == 1.0 and averages["d"].self_cpu_time_total == 7.0
    assert averages["orphan"].self_cpu_time_total == 0.1 and not averages["orphan"].top_level
    table = KeyAverages.from_ranges(ranges).table()
    assert "Self CPU time total: 16.100us" in table


def parse_table(table):
    lines = table.splitlines()
    header = next(line for line in lines if line.strip().startswith("Name"))
    rows = []
    for line in lines[lines.index(header) + 2:]:
        if line.startswith("-"):
            break
        rows.append(dict(zip(TABLE_HEADERS, re.split(r" {2,}", line.strip()))))
    return rows


def parse_time_us(text):
    for suffix, scale in (("ms", 1e3), ("us", 1.0), ("s", 1e6)):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    raise ValueError(text)
