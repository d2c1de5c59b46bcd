"""examples/pytorch_train.py trains for real for a few seconds and publishes what docs/pytorch.md says,
in both modes; a subscriber (pyzmq + msgpack) and the TensorBoard reader check what comes out."""

import os
import subprocess
import sys
import time

import pytest

from conftest import SOURCE_DIR
from tfevents_reader import scalars

zmq = pytest.importorskip("zmq")
msgpack = pytest.importorskip("msgpack")
pytest.importorskip("torch")

EXAMPLE = os.path.join(SOURCE_DIR, "examples", "pytorch_train.py")


def run_example(tmp_path, *extra):
    """Runs the example on an ipc endpoint for a few seconds; returns {topic: [data, ...]} of
    everything a subscriber received, the example's output, and {topic: [(data, step), ...]}."""
    endpoint = f"ipc://{tmp_path}/train.sock"
    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    socket.subscribe(b"")
    socket.connect(endpoint)  # ZeroMQ connects once the example binds
    received = {}
    steps = {}
    try:
        process = subprocess.Popen(
            [sys.executable, EXAMPLE, "--endpoint", endpoint, "--duration", "4", "--window", "0.25",
             "--steps-per-epoch", "40", "--batch-size", "32", "--run", "example-test", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if socket.poll(50):
                topic, payload = socket.recv_multipart()
                message = msgpack.unpackb(payload)
                events = message.get("events", [])
                for _, data in events:
                    received.setdefault(topic.decode(), []).append(data)
                for (_, data), step in zip(events, message.get("steps", [None] * len(events))):
                    steps.setdefault(topic.decode(), []).append((data, step))
                if topic == b"livemon.heartbeat" and message.get("kind") == "goodbye":
                    break
            elif process.poll() is not None:
                break
        output = process.communicate(timeout=60)[0]
        assert process.returncode == 0, output
    finally:
        socket.close(linger=0)
        context.term()
    return received, output, steps


def keys_of(received, topic):
    return {key for data in received.get(topic, []) for key in data}


def test_livemon_mode_publishes_every_instrument(tmp_path):
    received, output, steps = run_example(tmp_path, "--tensorboard", str(tmp_path / "tb"))
    assert "epoch   1" in output
    keys = keys_of(received, "livemon.Stat")
    for key in ["train.loss.mean", "train.loss.min", "train.loss.max", "train.samples_per_s.mean",
                "train.step_time_ms.mean", "train.step_time_ms.p50", "train.step_time_ms.p90",
                "train.step_time_ms.p99", "train.grad_norm.mean", "train.grad_norm.max", "train.lr.value",
                "train.data_loading.count", "train.data_loading.p99",
                # Publisher(system_stats=True): the process's own, sampled every second
                "system.cpu_percent.value", "system.rss_bytes.value", "system.host_memory_used_bytes.value"]:
        assert key in keys, f"{key} not among {sorted(keys)}"
    epochs = [e["epoch"] for e in received["epoch"]]  # the first may be missed while connecting
    assert epochs == list(range(epochs[0], epochs[0] + len(epochs)))
    epochs = received["epoch"]
    assert 0.0 <= epochs[-1]["val_accuracy"] <= 1.0
    loss_means = [d["train.loss.mean"] for d in received["livemon.Stat"] if "train.loss.mean" in d]
    assert all(0 < v < 10 for v in loss_means)
    (tb_file,) = (tmp_path / "tb").iterdir()
    assert "train.step_time_ms.p99" in scalars(tb_file)
    # The example sets the step every training step: loss windows carry it, in order. (Epoch
    # events state their own step in their "step" field, which travels as that field.)
    loss_steps = [step for data, step in steps["livemon.Stat"] if "train.loss.mean" in data]
    assert loss_steps and all(step is not None for step in loss_steps), loss_steps
    assert loss_steps == sorted(loss_steps)


def test_torch_monitor_mode_reaches_the_subscriber_through_the_bridge(tmp_path):
    received, output, _ = run_example(tmp_path, "--api", "torch-monitor")
    assert "torch.monitor through livemon.torch_bridge" in output
    keys = keys_of(received, "torch.monitor.Stat")
    for key in ["train.loss.mean", "train.step_time_ms.max", "train.samples_per_s.mean", "train.grad_norm.max"]:
        assert key in keys, f"{key} not among {sorted(keys)}"
    assert "system.rss_bytes.value" in keys_of(received, "livemon.Stat"), "livemon's own sampler, beside the bridge"
    assert received["epoch"][-1]["epoch"] >= 1


def test_ops_mode_times_pytorchs_operators_with_the_training_code_unchanged(tmp_path, operator_observer):
    # operator_observer: the observer for this torch is built (once) before the example starts.
    received, _, _ = run_example(tmp_path, "--ops", "--api", "torch-monitor")
    keys = keys_of(received, "livemon.Stat")
    # The torch.monitor mode has no livemon range of its own: these come from the observer.
    for key in ["range/aten::conv2d.count", "range/aten::convolution.p99",
                "range/autograd::engine::evaluate_function: ConvolutionBackward0.mean",
                "range/aten::cross_entropy_loss.count", "range/Optimizer.step#SGD.step.count"]:
        assert key in keys, f"{key} not among {sorted(keys)}"
