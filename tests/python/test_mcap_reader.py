"""A run recorded with `livemonctl record` from a Python Publisher, read by the official MCAP reader
for Python (the `mcap` package on PyPI): channels, statistics, chunk indexes and time range agree
with `livemonctl info --json`, every CRC checks out, and every message is the wire payload of the
events that were published, as they arrived (a batch of one or more: docs/recording-format.md),
decodable with msgpack. tests/interop does the same with @mcap/core."""

import datetime
import json
import signal
import subprocess
import threading
import time

import pytest

import livemon
from conftest import DEADLINE, livemonctl_program

try:
    import mcap.reader as mcap_reader
    import msgpack
    import zstandard  # noqa: F401  (the mcap reader decompresses livemon's zstd chunks with it)
except ImportError as missing:
    # Per test, not for the module: a file whose every test is skipped still counts as run.
    pytestmark = pytest.mark.skip(reason=f"needs PyPI's mcap, zstandard and msgpack ({missing})")

EVENT = "mcap.step"


def publish_until(stop, published):
    """Logs EVENT with a running count in bursts of ten (and livemon Stat windows) until `stop` is set."""
    loss = livemon.Stat("mcap.loss", [livemon.MEAN, livemon.MAX], datetime.timedelta(milliseconds=20))
    i = 0
    while not stop.is_set():
        # Bursts, which the publisher sends as batches: the recording keeps each as it arrived.
        for _ in range(10):
            livemon.log_event(livemon.Event(EVENT, datetime.datetime.now(), {"i": i, "phase": "train",
                                                                             "ok": i % 2 == 0, "x": i / 4}))
            loss.add(1.0 / (i + 1))
            published.append(i)
            i += 1
        stop.wait(0.002)
    loss.flush()


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A recording of a live Python publisher, and what `livemonctl info --json` says of it."""
    path = tmp_path_factory.mktemp("mcap") / "run.mcap"
    stop = threading.Event()
    published = []
    with livemon.Publisher("tcp://127.0.0.1:*", run="mcap-reader",
                           heartbeat_interval=datetime.timedelta(milliseconds=50)) as publisher:
        recorder = subprocess.Popen([livemonctl_program(), "record", publisher.endpoints[0], "-o", str(path)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        thread = threading.Thread(target=publish_until, args=(stop, published))
        thread.start()
        try:
            # The recorder says when the first event of the publisher reached it; from then on,
            # a thousand more.
            joined = recorder.stderr.readline()
            assert joined.startswith("source joined:"), joined
            enough = len(published) + 1000
            deadline = time.monotonic() + DEADLINE
            while len(published) < enough and time.monotonic() < deadline:
                stop.wait(0.01)
        finally:
            stop.set()
            thread.join()
            recorder.send_signal(signal.SIGINT)
            out, err = recorder.communicate(timeout=DEADLINE)
    assert recorder.returncode == 0, err
    info = subprocess.run([livemonctl_program(), "info", "--json", str(path)], capture_output=True, text=True,
                          timeout=DEADLINE, check=True).stdout
    return path, json.loads(info)


def test_the_summary_agrees_with_livemonctl_info(recording):
    path, info = recording
    assert info["events"] > 0
    with open(path, "rb") as stream:
        reader = mcap_reader.make_reader(stream, validate_crcs=True)
        header = reader.get_header()
        summary = reader.get_summary()
    assert header.library.startswith("livemon")
    assert summary is not None, "no summary section: the reader would have to scan the whole file"
    channels = {channel.id: channel for channel in summary.channels.values()}
    assert sorted(channels) == sorted(c["id"] for c in info["channels"])
    for expected in info["channels"]:
        channel = channels[expected["id"]]
        assert channel.topic == expected["topic"]
        assert channel.message_encoding == "msgpack"
        assert channel.schema_id == 0
        assert channel.metadata == {"livemon.format": "2"}
        assert summary.statistics.channel_message_counts[expected["id"]] == expected["messages"]
    assert summary.statistics.message_count == info["messages"] <= info["events"]
    assert info["format"] == 2
    # Python's json reads integers exactly, nanosecond times included.
    assert (summary.statistics.message_start_time, summary.statistics.message_end_time) == (info["start_ns"],
                                                                                            info["end_ns"])
    assert len(summary.chunk_indexes) == info["chunks"]
    assert all(index.compression == "zstd" for index in summary.chunk_indexes)


def test_every_message_is_the_wire_payload_of_published_events(recording):
    path, info = recording
    counts = {}
    messages = {}
    steps = []
    with open(path, "rb") as stream:
        reader = mcap_reader.make_reader(stream, validate_crcs=True)
        for _, channel, message in reader.iter_messages():
            payload = msgpack.unpackb(message.data)
            messages[channel.topic] = messages.get(channel.topic, 0) + 1
            counts[channel.topic] = counts.get(channel.topic, 0) + len(payload["events"])
            assert payload["v"] == 1 and payload["kind"] == "events"
            assert payload["name"] == channel.topic
            assert payload["src"]["run"] == "mcap-reader"
            assert payload["events"][0][0] == message.publish_time
            for event in payload["events"]:
                if channel.topic == EVENT:
                    steps.append(event[1])  # [timestamp, data]
    assert counts == {c["topic"]: c["events"] for c in info["channels"]}
    assert messages == {c["topic"]: c["messages"] for c in info["channels"]}
    assert messages[EVENT] < counts[EVENT], "the bursts arrived as batches and were recorded so"
    assert livemon.STAT_EVENT in counts  # the Stat windows were recorded too
    # The recorded steps are consecutive published ones, each with the data it was logged with.
    numbers = [fields["i"] for fields in steps]
    assert len(numbers) > 100 and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert all(fields == {"i": i, "phase": "train", "ok": i % 2 == 0, "x": i / 4} for fields, i in zip(steps, numbers))
