"""TensorboardEventHandler: the files are read back by tfevents_reader (an independent CRC-32C and
the protobuf library), from Python, through torch.monitor, and after the interpreter exits."""

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
    found = scalars(handler.path)
    assert sorted(found) == ["tb.loss.max", "tb.loss.mean"]
    assert [(step, value) for step, _, value in found["tb.loss.mean"]] == [(0, 2.0), (1, 3.0), (2, 4.0)]
    assert [(step, value) for step, _, value in found["tb.loss.max"]] == [(0, 3.0), (1, 4.0), (2, 5.0)]
    # wall_time is the window's timestamp (the datetime keeps microseconds, the file nanoseconds).
    stamps = [e.timestamp.timestamp() for e in stats_seen.named(livemon.STAT_EVENT)]
    assert [wall for _, wall, _ in found["tb.loss.mean"]] == pytest.approx(stamps, abs=2e-6)
    assert handler.stats()["scalars"] == 6
    assert handler.stats()["records"] == 7


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
    assert {tag: [v for _, _, v in p] for tag, p in scalars(path).items()} == {"tb.inline.sum": [2.0]}


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


def test_it_accepts_a_summary_writer_like_torch_monitors(tmp_path):
    class SummaryWriterLike:  # torch.utils.tensorboard.SummaryWriter needs the tensorboard package
        def get_logdir(self):
            return str(tmp_path / "from-writer")

    with livemon.TensorboardEventHandler(SummaryWriterLike()) as handler:
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
