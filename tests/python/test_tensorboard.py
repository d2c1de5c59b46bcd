"""TensorboardEventHandler: the files are read back by tfevents_reader (an independent CRC-32C and
the protobuf library), from Python, through torch.monitor, and after the interpreter exits; and by
the real `tensorboard` package (PyPI; not in Debian, so those tests skip there), which also reads
what livemon writes through a torch.utils.tensorboard.SummaryWriter, beside torch.monitor's own
handler."""

import datetime
import gc
import os
import socket

import pytest

import livemon
from conftest import run_python
from tfevents_reader import crc32c, read_events, read_records, scalars

A = livemon.Aggregation
HOUR = datetime.timedelta(hours=1)


def only(found, prefix):
    """The tags of a test's own Stats: a handler registered for the whole process also gets the
    windows other tests' Stats (a WaitCounter's 1 s windows) close meanwhile."""
    return {tag: points for tag, points in found.items() if tag.startswith(prefix)}


def test_the_independent_crc_matches_the_standard_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_a_new_file_is_named_for_tensorboard_and_starts_with_the_file_version(tmp_path):
    with livemon.TensorboardEventHandler(tmp_path / "run") as handler:
        name = os.path.basename(handler.path)
        assert name.startswith("events.out.tfevents.")
        seconds, host = name[len("events.out.tfevents."):].split(".", 1)
        assert len(seconds) == 10 and abs(int(seconds) - datetime.datetime.now().timestamp()) < 600
        assert host == socket.gethostname()
        assert handler.log_dir == str(tmp_path / "run")
        (first,) = read_events(handler.path)
        assert first.file_version == "brain.Event:2"
        assert not first.summary.value


def test_stat_windows_become_scalars_with_a_step_per_window(tmp_path, collect):
    stats_seen = collect(livemon.STAT_EVENT)
    handler = livemon.TensorboardEventHandler(tmp_path)
    handle = livemon.register_event_handler(handler)
    try:
        stat = livemon.Stat("tb.loss", [A.MEAN, A.MAX], HOUR)
        for window in range(3):
            stat.add(window + 1.0)
            stat.add(window + 3.0)
            stat.flush()
    finally:
        livemon.unregister_event_handler(handle)
    handler.close()
    everything = scalars(handler.path)
    found = only(everything, "tb.loss.")
    assert sorted(found) == ["tb.loss.max", "tb.loss.mean"]
    assert [(step, value) for step, _, value in found["tb.loss.mean"]] == [(0, 2.0), (1, 3.0), (2, 4.0)]
    assert [(step, value) for step, _, value in found["tb.loss.max"]] == [(0, 3.0), (1, 4.0), (2, 5.0)]
    # wall_time is the window's timestamp (the datetime keeps microseconds, the file nanoseconds).
    stamps = [e.timestamp.timestamp() for e in stats_seen.named(livemon.STAT_EVENT)]
    assert [wall for _, wall, _ in found["tb.loss.mean"]] == pytest.approx(stamps, abs=2e-6)
    assert handler.stats()["scalars"] == sum(len(points) for points in everything.values())
    assert handler.stats()["records"] == handler.stats()["scalars"] + 1  # and the file_version record


def test_other_events_only_when_asked(tmp_path):
    now = datetime.datetime.now()
    eval_event = livemon.Event("eval", now, {"accuracy": 0.9, "epoch": 2, "best": True, "note": "x"})
    with livemon.TensorboardEventHandler(tmp_path / "stats") as stats_only, \
            livemon.TensorboardEventHandler(tmp_path / "all", all_events=True) as everything:
        stats_only(eval_event)
        everything(eval_event)
    assert scalars(stats_only.path) == {}
    found = scalars(everything.path)
    assert {tag: [v for _, _, v in points] for tag, points in found.items()} == {
        "eval/accuracy": [pytest.approx(0.9)], "eval/epoch": [2.0], "eval/best": [1.0]}


def test_registered_inline_it_keeps_writing_like_torch_monitors(tmp_path):
    # The torch.monitor idiom: the handler object itself is not kept.
    handle = livemon.register_event_handler(livemon.TensorboardEventHandler(tmp_path))
    gc.collect()
    try:
        stat = livemon.Stat("tb.inline", [A.SUM], HOUR)
        stat.add(2.0)
        stat.flush()
    finally:
        livemon.unregister_event_handler(handle)  # the last reference: the file is closed
    (path,) = tmp_path.iterdir()
    assert {tag: [v for _, _, v in p] for tag, p in only(scalars(path), "tb.").items()} == {"tb.inline.sum": [2.0]}


def test_torch_monitor_can_use_it_too(tmp_path):
    monitor = pytest.importorskip("torch.monitor")
    handler = livemon.TensorboardEventHandler(tmp_path)
    handle = monitor.register_event_handler(handler)
    try:
        stat = monitor.Stat("tb.torch", [monitor.Aggregation.MEAN], HOUR, max_samples=2)
        stat.add(1.0)
        stat.add(2.0)
    finally:
        monitor.unregister_event_handler(handle)
    handler.close()
    assert {tag: [v for _, _, v in p] for tag, p in scalars(handler.path).items()} == {"tb.torch.mean": [1.5]}


def test_an_object_with_only_get_logdir_gives_the_directory(tmp_path):
    class LogDirOnly:  # no add_scalar: livemon's own writer writes into its directory
        def get_logdir(self):
            return str(tmp_path / "from-writer")

    with livemon.TensorboardEventHandler(LogDirOnly()) as handler:
        assert handler.log_dir == str(tmp_path / "from-writer")


def test_the_file_is_complete_after_the_interpreter_exits(tmp_path):
    # Registered inline and never closed: the last windows still reach the file at exit.
    run_python(f"""
        import datetime, livemon
        livemon.register_event_handler(livemon.TensorboardEventHandler({str(tmp_path)!r},
                                       flush_interval=datetime.timedelta(hours=1)))
        stat = livemon.Stat("tb.exit", [livemon.SUM], datetime.timedelta(hours=1))
        stat.add(1.0)
        stat.flush()
        stat.add(5.0)  # logged when the Stat is destroyed at exit
    """)
    (path,) = tmp_path.iterdir()
    records = read_records(path)  # every CRC checks out, no record is cut
    assert len(records) == 3
    assert {tag: [v for _, _, v in p] for tag, p in scalars(path).items()} == {"tb.exit.sum": [1.0, 5.0]}


def test_errors_are_os_errors_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match=str(blocker)):
        livemon.TensorboardEventHandler(blocker / "run")
    with pytest.raises(ValueError, match="flush_interval"):
        livemon.TensorboardEventHandler(tmp_path, flush_interval=datetime.timedelta(0))


# --- the real TensorBoard --------------------------------------------------------------------

def tensorboard_reader():
    """TensorBoard's EventAccumulator, or a skip where the tensorboard package is missing."""
    pytest.importorskip("tensorboard", reason="the tensorboard package (PyPI) is not installed; "
                        "Debian has none, the virtualenv has it")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    return EventAccumulator


def summary_writer_class():
    pytest.importorskip("torch")
    tensorboard_reader()
    from torch.utils.tensorboard import SummaryWriter
    return SummaryWriter


def read_with_tensorboard(log_dir):
    """{tag: [(step, wall_time, value), ...]} as TensorBoard loads it from log_dir."""
    accumulator = tensorboard_reader()(str(log_dir))
    accumulator.Reload()
    return {tag: [(e.step, e.wall_time, e.value) for e in accumulator.Scalars(tag)]
            for tag in accumulator.Tags()["scalars"]}


def three_windows(name):
    stat = livemon.Stat(name, [A.MEAN, A.MAX], HOUR)
    for window in range(3):
        stat.add(window + 1.0)
        stat.add(window + 3.0)
        stat.flush()


def test_tensorboard_reads_livemons_own_files(tmp_path, collect):
    tensorboard_reader()  # skips without TensorBoard
    seen = collect(livemon.STAT_EVENT)
    with livemon.TensorboardEventHandler(tmp_path) as handler:
        handle = livemon.register_event_handler(handler)
        try:
            three_windows("tbreal.own")
        finally:
            livemon.unregister_event_handler(handle)
    loaded = only(read_with_tensorboard(tmp_path), "tbreal.")
    assert sorted(loaded) == ["tbreal.own.max", "tbreal.own.mean"]
    assert [(step, value) for step, _, value in loaded["tbreal.own.mean"]] == [(0, 2.0), (1, 3.0), (2, 4.0)]
    assert [(step, value) for step, _, value in loaded["tbreal.own.max"]] == [(0, 3.0), (1, 4.0), (2, 5.0)]
    stamps = [e.timestamp.timestamp() for e in seen.named(livemon.STAT_EVENT) if "tbreal.own.mean" in e.data]
    assert [wall for _, wall, _ in loaded["tbreal.own.mean"]] == pytest.approx(stamps, abs=2e-6)


def test_through_a_summary_writer_its_flush_covers_livemons_scalars(tmp_path, collect):
    SummaryWriter = summary_writer_class()  # noqa: N806
    seen = collect(livemon.STAT_EVENT)
    writer = SummaryWriter(str(tmp_path), flush_secs=3600)  # only flush() writes the file out
    try:
        handle = livemon.register_event_handler(livemon.TensorboardEventHandler(writer))
        try:
            writer.add_scalar("own/metric", 7.0, global_step=0)  # the writer's own scalars go alongside
            livemon.set_step(100)
            three_windows("tbreal.writer")
        finally:
            livemon.clear_step()
            livemon.unregister_event_handler(handle)
        writer.flush()
        loaded = only(read_with_tensorboard(tmp_path), ("tbreal.", "own/"))  # the writer is still open
    finally:
        writer.close()
    assert sorted(loaded) == ["own/metric", "tbreal.writer.max", "tbreal.writer.mean"]
    # set_step's step, as the events carry it; values and times as livemon logged them.
    assert [(step, value) for step, _, value in loaded["tbreal.writer.mean"]] == [(100, 2.0), (100, 3.0), (100, 4.0)]
    stamps = [e.timestamp.timestamp() for e in seen.named(livemon.STAT_EVENT) if "tbreal.writer.mean" in e.data]
    assert [wall for _, wall, _ in loaded["tbreal.writer.mean"]] == pytest.approx(stamps, abs=2e-6)
    assert len(list(tmp_path.iterdir())) == 1  # one file: the writer's


def test_torch_monitors_tensorboard_scenario_gives_the_same_scalars(tmp_path):
    """PyTorch's test of its handler (a SummaryWriter, a capped Stat, TensorBoard's multiplexer reading
    the tensors back) run with torch.monitor and with livemon: the same tags and values."""
    SummaryWriter = summary_writer_class()  # noqa: N806
    monitor = pytest.importorskip("torch.monitor")
    from tensorboard.backend.event_processing import plugin_event_multiplexer

    def run(m, log_dir):
        with SummaryWriter(str(log_dir)) as writer:
            handle = m.register_event_handler(m.TensorboardEventHandler(writer))
            stat = m.Stat("tbreal.scenario", (m.Aggregation.SUM, m.Aggregation.COUNT), HOUR, 5)
            for i in range(10):
                stat.add(i)  # the fifth add logs the window; the rest of the window is dropped
            assert stat.count == 0
            m.unregister_event_handler(handle)
        multiplexer = plugin_event_multiplexer.EventMultiplexer()
        multiplexer.AddRunsFromDirectory(str(log_dir))
        multiplexer.Reload()
        return {tag: [(e.step, e.tensor_proto.float_val[0]) for e in multiplexer.Tensors(run, tag)]
                for run, tags in multiplexer.PluginRunToTagToContent("scalars").items() for tag in tags
                if tag.startswith("tbreal.")}

    theirs = run(monitor, tmp_path / "torch")
    ours = run(livemon, tmp_path / "livemon")
    assert ours == theirs == {"tbreal.scenario.sum": [(0, 10.0)], "tbreal.scenario.count": [(0, 5.0)]}


def test_difference_each_window_is_a_step_where_torch_monitor_writes_step_0(tmp_path):
    SummaryWriter = summary_writer_class()  # noqa: N806
    monitor = pytest.importorskip("torch.monitor")
    loaded = {}
    for m in (monitor, livemon):
        log_dir = tmp_path / m.__name__
        with SummaryWriter(str(log_dir)) as writer:
            handle = m.register_event_handler(m.TensorboardEventHandler(writer))
            try:
                for v in [1.0, 2.0, 3.0]:  # three windows of one tag: each Stat's one sample reaches max_samples
                    m.Stat("tbreal.steps", [m.Aggregation.SUM], HOUR, max_samples=1).add(v)
            finally:
                m.unregister_event_handler(handle)
        loaded[m.__name__] = only(read_with_tensorboard(log_dir), "tbreal.")
    assert {tag: [(s, v) for s, _, v in points] for tag, points in loaded["torch.monitor"].items()} == {
        "tbreal.steps.sum": [(0, 1.0), (0, 2.0), (0, 3.0)]}
    assert {tag: [(s, v) for s, _, v in points] for tag, points in loaded["livemon"].items()} == {
        "tbreal.steps.sum": [(0, 1.0), (1, 2.0), (2, 3.0)]}
