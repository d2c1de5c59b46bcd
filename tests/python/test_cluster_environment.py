"""A job started by torchrun joins a relay with no change to its code: LIVEMON_CONNECT makes
livemon.Publisher() connect there instead of binding, and RANK, WORLD_SIZE and LOCAL_RANK name its
rank, the number of ranks and its rank on the node."""

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
            print(p.endpoints, p.identity["rank"], p.identity["world_size"], p.identity["local_rank"], flush=True)
            sys.stdin.read()  # until the test has seen a heartbeat
    """)
    env = dict(os.environ, LIVEMON_CONNECT=endpoint, RANK="3", WORLD_SIZE="16", LOCAL_RANK="3")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == f"['{endpoint}'] 3 16 3"
        assert relay.poll(int(DEADLINE * 1000)), "no heartbeat reached the bound socket"
        topic, payload = relay.recv_multipart()
        assert topic == b"livemon.heartbeat"
        source = msgpack.unpackb(payload, raw=False)["src"]
        assert source["run"] == "torchrun-job" and source["rank"] == 3
        assert source["world"] == 16 and source["local_rank"] == 3
    finally:
        child.stdin.close()
        assert child.wait(timeout=DEADLINE) == 0, child.stderr.read()
        relay.close()
        context.term()


def test_rank_world_size_and_local_rank_as_arguments_win_over_the_environment():
    result = run_python("""
        import livemon
        with livemon.Publisher("tcp://127.0.0.1:*", rank=1, world_size=2, local_rank=0) as p:
            print(p.identity["rank"], p.identity["world_size"], p.identity["local_rank"])
        with livemon.Publisher("tcp://127.0.0.1:*") as p:
            print(p.identity["rank"], p.identity["world_size"], p.identity["local_rank"])
        try:
            livemon.Publisher("tcp://127.0.0.1:*", rank=2, world_size=2)
        except ValueError as error:
            print("refused:", error)
    """, env={"RANK": "", "WORLD_SIZE": "4", "LOCAL_RANK": "nope"})
    lines = result.stdout.splitlines()
    assert lines[0] == "1 2 0"
    assert lines[1] == "None 4 None", "an empty RANK or a non-integer LOCAL_RANK is not a rank"
    assert lines[2].startswith("refused: rank 2, worldSize 2") and "rank is not in 0..world-1" in lines[2]
