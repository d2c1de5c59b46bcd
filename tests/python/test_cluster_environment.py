"""A job started by torchrun joins a relay with no change to its code: LIVEMON_CONNECT makes
livemon.Publisher() connect there instead of binding, and RANK names its rank."""

import os
import subprocess
import sys
import textwrap

import pytest

import livemon
from conftest import DEADLINE, run_python


def test_without_livemon_connect_a_publisher_binds_the_default_endpoint():
    result = run_python("""
        import livemon
        with livemon.Publisher("tcp://127.0.0.1:*") as p:
            print(p.endpoints)
    """, env={"LIVEMON_CONNECT": ""})
    assert "tcp://127.0.0.1:" in result.stdout


def test_livemon_connect_and_rank_make_a_default_publisher_join_the_relay():
    zmq = pytest.importorskip("zmq")
    msgpack = pytest.importorskip("msgpack")
    context = zmq.Context()
    relay = context.socket(zmq.SUB)  # stands in for a relay's --listen: it binds, publishers connect
    relay.setsockopt(zmq.LINGER, 0)
    relay.setsockopt(zmq.SUBSCRIBE, b"livemon.heartbeat")
    relay.bind("tcp://127.0.0.1:*")
    endpoint = relay.getsockopt_string(zmq.LAST_ENDPOINT)
    code = textwrap.dedent("""
        import datetime, sys, livemon
        with livemon.Publisher(run="torchrun-job", heartbeat_interval=datetime.timedelta(milliseconds=50)) as p:
            print(p.endpoints, p.identity["rank"], flush=True)
            sys.stdin.read()  # until the test has seen a heartbeat
    """)
    env = dict(os.environ, LIVEMON_CONNECT=endpoint, RANK="3")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == f"['{endpoint}'] 3"
        assert relay.poll(int(DEADLINE * 1000)), "no heartbeat reached the bound socket"
        topic, payload = relay.recv_multipart()
        assert topic == b"livemon.heartbeat"
        source = msgpack.unpackb(payload, raw=False)["src"]
        assert source["run"] == "torchrun-job" and source["rank"] == 3
    finally:
        child.stdin.close()
        assert child.wait(timeout=DEADLINE) == 0, child.stderr.read()
        relay.close()
        context.term()
