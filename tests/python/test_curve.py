"""CURVE seen from outside, with raw pyzmq clients and certificates made by `livemonctl keygen`
(loaded with zmq.auth.load_certificate): a secured publisher or relay gives nothing to a client
without keys or with keys not in its allow list, counts the refusal, and gives everything to an
allowed one; a forged publisher cannot reach a secured relay's subscribers."""

import datetime
import os
import re
import stat
import subprocess
import time

import pytest

import livemon
from conftest import DEADLINE, livemonctl_program

zmq = pytest.importorskip("zmq")
import zmq.auth  # noqa: E402
from zmq.utils.monitor import recv_monitor_message  # noqa: E402



def keygen(name, directory):
    done = subprocess.run([livemonctl_program(), "keygen", name, "--dir", str(directory)], capture_output=True, text=True,
                          timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    return str(directory / (name + ".key")), str(directory / (name + ".key_secret"))


@pytest.fixture
def keys(tmp_path):
    allow = tmp_path / "allow"
    own = tmp_path / "own"
    allow.mkdir()
    own.mkdir()
    result = {"allow": str(allow)}
    result["server"] = keygen("server", own)
    result["client"] = keygen("client", allow)
    result["stranger"] = keygen("stranger", own)
    return result


class Client:
    """A raw pyzmq SUB socket (CURVE client with `secret_file`, or plain) that watches its own
    handshakes through a monitor socket."""

    def __init__(self, context, endpoint, server_file=None, secret_file=None):
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        if secret_file:
            public, secret = zmq.auth.load_certificate(secret_file)
            self.socket.curve_publickey = public
            self.socket.curve_secretkey = secret
            self.socket.curve_serverkey = zmq.auth.load_certificate(server_file)[0]
        self.socket.setsockopt(zmq.SUBSCRIBE, b"")
        self.monitor = self.socket.get_monitor_socket()
        self.socket.connect(endpoint)
        self.events = set()
        self.messages = []

    def drain(self):
        while self.socket.poll(0):
            self.messages.append(self.socket.recv_multipart())
        while self.monitor.poll(0):
            self.events.add(recv_monitor_message(self.monitor)["event"])

    def handshake_failed(self):
        return bool(self.events & {zmq.EVENT_HANDSHAKE_FAILED_AUTH, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
                                   zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL})

    def topics(self):
        return [frames[0] for frames in self.messages]

    def close(self):
        self.socket.disable_monitor()
        self.monitor.close()
        self.socket.close()


def wait(condition, what):
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_keygen_writes_zeromq_certificates_and_keeps_the_secret_to_its_owner(tmp_path):
    public_file, secret_file = keygen("node", tmp_path)
    assert stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    public, secret = zmq.auth.load_certificate(secret_file)
    assert zmq.auth.load_certificate(public_file) == (public, None)
    assert len(public) == 40 and len(secret) == 40
    assert zmq.curve_public(secret) == public
    again = subprocess.run([livemonctl_program(), "keygen", "node", "--dir", str(tmp_path)], capture_output=True, text=True,
                           timeout=DEADLINE)
    assert again.returncode == 1 and "--force" in again.stderr
    assert zmq.auth.load_certificate(secret_file) == (public, secret), "refused, yet the key changed"
    forced = subprocess.run([livemonctl_program(), "keygen", "node", "--dir", str(tmp_path), "--force"], capture_output=True,
                            text=True, timeout=DEADLINE)
    assert forced.returncode == 0 and zmq.auth.load_certificate(secret_file)[0] != public


def test_a_secured_python_publisher_serves_only_allowed_raw_clients(keys):
    context = zmq.Context()
    with livemon.Publisher("tcp://127.0.0.1:*", run="curve-py", curve_secret=keys["server"][1],
                           curve_allow=keys["allow"], history_mb=0) as publisher:
        endpoint = publisher.endpoints[0]
        plain = Client(context, endpoint)
        stranger = Client(context, endpoint, keys["server"][0], keys["stranger"][1])
        allowed = Client(context, endpoint, keys["server"][0], keys["client"][1])
        clients = (plain, stranger, allowed)
        try:
            def settled():
                for client in clients:
                    client.drain()
                return (plain.handshake_failed() and stranger.handshake_failed()
                        and zmq.EVENT_HANDSHAKE_SUCCEEDED in allowed.events)
            wait(settled, "the handshakes did not come to their ends")
            assert zmq.EVENT_HANDSHAKE_FAILED_AUTH in stranger.events
            wait(lambda: publisher.stats()["curve_refused"] >= 1, "the stranger's refusal was not counted")

            def received_steps():
                livemon.log_event(livemon.Event("curve.step", datetime.datetime.now(), {"i": 1}))
                for client in clients:
                    client.drain()
                return allowed.topics().count(b"curve.step") >= 10
            wait(received_steps, "the allowed client did not receive the events")
            assert plain.messages == [] and stranger.messages == []
        finally:
            for client in clients:
                client.close()
    context.term()


def start_relay(keys):
    relay = subprocess.Popen([livemonctl_program(), "relay", "--listen", "tcp://127.0.0.1:*", "--serve", "tcp://127.0.0.1:*",
                              "--history-mb", "0", "--curve-secret", keys["server"][1], "--curve-allow", keys["allow"]],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = relay.stdout.readline()
    found = re.search(r"publishers connect to (\S+), subscribers to (\S+)", line)
    assert found, line + relay.stderr.read()
    return relay, found.group(1), found.group(2)


def test_a_secured_relay_refuses_forged_publishers_and_unknown_subscribers(keys, tmp_path):
    rank_public, rank_secret = keygen("rank0", tmp_path / "allow")
    relay, listen, serve = start_relay(keys)
    context = zmq.Context()
    forged = context.socket(zmq.PUB)
    forged.setsockopt(zmq.LINGER, 0)
    forged.curve_publickey, forged.curve_secretkey = zmq.auth.load_certificate(keys["stranger"][1])
    forged.curve_serverkey = zmq.auth.load_certificate(keys["server"][0])[0]
    forged.connect(listen)
    plain_publisher = context.socket(zmq.PUB)
    plain_publisher.setsockopt(zmq.LINGER, 0)
    plain_publisher.connect(listen)
    plain = Client(context, serve)
    stranger = Client(context, serve, keys["server"][0], keys["stranger"][1])
    allowed = Client(context, serve, keys["server"][0], keys["client"][1])
    clients = (plain, stranger, allowed)
    try:
        with livemon.Publisher([], connect=listen, run="curve-rank", curve_secret=rank_secret,
                               curve_server=keys["server"][0], history_mb=0) as publisher:
            def flowing():
                livemon.log_event(livemon.Event("curve.step", datetime.datetime.now(), {"i": 1}))
                # Not even a well-formed topic gets through without an allowed key.
                forged.send_multipart([b"curve.forged", b"\x80"])
                plain_publisher.send_multipart([b"curve.forged", b"\x80"])
                for client in clients:
                    client.drain()
                return (allowed.topics().count(b"curve.step") >= 10 and plain.handshake_failed()
                        and stranger.handshake_failed())
            wait(flowing, "the allowed subscriber did not receive the rank's events")
            assert publisher.stats()["dropped_queue_full"] == 0
        assert b"curve.forged" not in allowed.topics()
        assert plain.messages == [] and stranger.messages == []
    finally:
        for client in clients:
            client.close()
        forged.close()
        plain_publisher.close()
        context.term()
        relay.terminate()
        out, err = relay.communicate(timeout=DEADLINE)
    assert relay.returncode == 0, err
    refused = re.search(r"refused (\d+) CURVE peers", out)
    assert refused and int(refused.group(1)) >= 2, out
