"""The run's config from Python: set_run_config flattens nested dicts to dotted keys and refuses
what it cannot carry, naming the key; a Publisher sends it to a subscriber, and a late reader
finds it in the history, also after the history's bound dropped it."""

import datetime
import json
import subprocess
import time

import pytest

import livemon
from conftest import DEADLINE, livemonctl_program

CONFIG = {"optimizer": {"name": "adam", "lr": 3e-4, "betas": {"b1": 0.9}}, "batch": 64, "amp": True}
FLAT = {"optimizer.name": "adam", "optimizer.lr": 3e-4, "optimizer.betas.b1": 0.9, "batch": 64, "amp": True}


@pytest.fixture(autouse=True)
def no_config():
    livemon.clear_run_config()
    yield
    livemon.clear_run_config()


def test_nested_dicts_become_dotted_keys_and_run_config_returns_them():
    assert livemon.run_config() is None
    livemon.set_run_config(CONFIG)
    assert livemon.run_config() == FLAT
    assert isinstance(livemon.run_config()["batch"], int) and livemon.run_config()["amp"] is True
    livemon.set_run_config({"seed": 1})
    assert livemon.run_config() == {"seed": 1}, "a second call replaces the config"


def test_set_run_config_logs_one_event_with_the_keys():
    events = []
    handle = livemon.register_event_handler(events.append)
    try:
        livemon.set_run_config(CONFIG)
    finally:
        livemon.unregister_event_handler(handle)
    configs = [event for event in events if event.name == "livemon.run_config"]
    assert len(configs) == 1 and configs[0].data == FLAT


@pytest.mark.parametrize("config, error, words", [
    ({"optimizer": {"betas": [0.9, 0.99]}}, TypeError, "'optimizer.betas'.*list"),
    ({"seed": None}, TypeError, "'seed'.*NoneType"),
    ({"model": {1: "x"}}, TypeError, "key 1 under 'model'"),
    ({"step": 3}, ValueError, "step"),
    ({"a.b": 1, "a": {"b": 2}}, ValueError, "'a.b' is given twice"),
    ({"big": 2**70}, ValueError, "'big' does not fit"),
    ({"": 1}, ValueError, "empty key"),
])
def test_what_a_config_cannot_hold_is_refused_naming_the_key(config, error, words):
    livemon.set_run_config({"kept": 1})
    with pytest.raises(error, match=words):
        livemon.set_run_config(config)
    assert livemon.run_config() == {"kept": 1}, "nothing is set then"


def test_a_config_must_be_a_dict_and_a_dict_holding_itself_is_refused():
    with pytest.raises(TypeError, match="must be a dict"):
        livemon.set_run_config([("lr", 1.0)])
    looped = {}
    looped["again"] = looped
    with pytest.raises(ValueError, match="nested deeper"):
        livemon.set_run_config(looped)


def wait_for(condition):
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def read_history(zmq, msgpack, endpoint):
    """The event messages a history answer holds, decoded, in order."""
    context = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.setsockopt(zmq.RCVTIMEO, int(DEADLINE * 1000))
    dealer.connect(endpoint)
    dealer.send_multipart([b"livemon.history", msgpack.packb({"v": 1, "kind": "history-request", "filters": []})])
    messages = []
    while True:
        topic, payload = dealer.recv_multipart()
        if topic == b"livemon.history":
            break
        messages.append(msgpack.unpackb(payload, raw=False))
    dealer.close()
    context.term()
    return messages


def configs_in(messages):
    return [data for message in messages if message["name"] == "livemon.run_config" for _, data in message["events"]]


def test_a_config_set_before_the_publisher_reaches_a_subscriber_and_a_late_reader():
    zmq = pytest.importorskip("zmq")
    msgpack = pytest.importorskip("msgpack")
    livemon.set_run_config(CONFIG)
    with livemon.Publisher("tcp://127.0.0.1:*", run="py-config", history_mb=1) as publisher:
        # A subscriber that was there: the config set again reaches it live.
        context = zmq.Context()
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.RCVTIMEO, int(DEADLINE * 1000))
        sub.subscribe(b"")
        sub.connect(publisher.endpoints[0])
        while sub.recv_multipart()[0] != b"livemon.heartbeat":
            pass  # subscribed once a heartbeat comes through
        livemon.set_run_config({"lr": 0.1})
        while True:
            topic, payload = sub.recv_multipart()
            if topic == b"livemon.run_config":
                break
        sub.close()
        context.term()
        live = msgpack.unpackb(payload, raw=False)
        assert live["src"]["run"] == "py-config" and live["events"][0][1] == {"lr": 0.1}
        wait_for(lambda: publisher.published_count >= 2)
        assert configs_in(read_history(zmq, msgpack, publisher.history_endpoint)) == [FLAT, {"lr": 0.1}]


def test_a_late_reader_gets_the_config_after_the_history_dropped_it():
    zmq = pytest.importorskip("zmq")
    msgpack = pytest.importorskip("msgpack")
    with livemon.Publisher("tcp://127.0.0.1:*", run="py-config", history_mb=0.02) as publisher:
        livemon.set_run_config(CONFIG)
        logged = 0
        while publisher.stats()["history_dropped"] < 50:
            livemon.log_event(livemon.Event("step", datetime.datetime.now(), {"i": logged}))
            logged += 1
            if logged % 100 == 0:
                wait_for(lambda: publisher.published_count >= logged)
            assert logged < 1_000_000
        assert publisher.stats()["history_configs"] == 1
        messages = read_history(zmq, msgpack, publisher.history_endpoint)
    assert messages[0]["name"] == "livemon.run_config", "the config first"
    assert configs_in(messages) == [FLAT]


def test_a_publishers_default_run_is_the_scripts_name_and_a_time_or_livemon_run(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LIVEMON_RUN", raising=False)
    monkeypatch.setattr("sys.argv", ["/home/me/train.py"])
    with livemon.Publisher("tcp://127.0.0.1:*") as publisher:
        run = publisher.identity["run"]
    assert run.startswith("train-") and len(run) == len("train-20261127-224501"), run
    monkeypatch.setenv("LIVEMON_RUN", "resnet-lr3e-4")
    with livemon.Publisher("tcp://127.0.0.1:*") as publisher:
        assert publisher.identity["run"] == "resnet-lr3e-4"
    with livemon.Publisher("tcp://127.0.0.1:*", run="given") as publisher:
        assert publisher.identity["run"] == "given"


def test_a_config_set_in_python_reaches_a_recording_and_livemonctl_runs(tmp_path):
    """The acceptance path from Python: a recorder that joins after the config was set takes it
    from the history, and `livemonctl runs --json` reads it back from the file."""
    livemon.set_run_config(CONFIG)
    path = tmp_path / "runs" / "py.mcap"
    path.parent.mkdir()
    with livemon.Publisher("tcp://127.0.0.1:*", run="py-recorded", history_mb=1) as publisher:
        for step in range(5):
            livemon.set_step(step)
            livemon.log_event(livemon.Event("eval", datetime.datetime.now(), {"accuracy": 0.5 + step / 10}))
        wait_for(lambda: publisher.published_count >= 6)
        recorder = subprocess.run([livemonctl_program(), "record", publisher.endpoints[0], "-o", str(path),
                                   "--duration", "2", "--history"], capture_output=True, text=True, timeout=DEADLINE)
        assert recorder.returncode == 0, recorder.stderr
    listed = subprocess.run([livemonctl_program(), "runs", "--json", "--key", "eval.accuracy", "--best", "max",
                             str(path.parent)], capture_output=True, text=True, timeout=DEADLINE)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)["runs"]
    assert [run["name"] for run in runs] == ["py-recorded"]
    assert runs[0]["config"] == FLAT
    assert runs[0]["summary"], "eval.accuracy summarised"
