"""A Python publisher keeps its history for late subscribers, and the protocol is simple enough
for pyzmq and msgpack: ask on the advertised socket, receive the events as published, then an end."""

import datetime
import time

import pytest

import livemon
from conftest import DEADLINE


def test_a_late_reader_gets_the_events_from_the_start_over_the_history_socket():
    zmq = pytest.importorskip("zmq")
    msgpack = pytest.importorskip("msgpack")
    with livemon.Publisher("tcp://127.0.0.1:*", run="py-history", history_mb=1) as publisher:
        assert publisher.history_endpoint.startswith("tcp://127.0.0.1:")
        for i in range(20):
            livemon.log_event(livemon.Event("step", datetime.datetime.now(), {"i": i}))
        deadline = time.monotonic() + DEADLINE
        while publisher.published_count < 20:
            assert time.monotonic() < deadline, "the publisher did not send the events"
            time.sleep(0.01)
        assert publisher.stats()["history_messages"] >= 1

        context = zmq.Context()
        dealer = context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.setsockopt(zmq.RCVTIMEO, int(DEADLINE * 1000))
        dealer.connect(publisher.history_endpoint)
        request = msgpack.packb({"v": 1, "kind": "history-request", "filters": []})
        dealer.send_multipart([b"livemon.history", request])
        steps = []
        while True:
            topic, payload = dealer.recv_multipart()
            message = msgpack.unpackb(payload, raw=False)
            if topic == b"livemon.history":
                end = message
                break
            assert message["kind"] == "events" and message["src"]["run"] == "py-history"
            if message["name"] == "step":
                steps += [data["i"] for _, data in message["events"]]
        dealer.close()
        context.term()
    assert end["kind"] == "history-end" and end["truncated"] is False and end["oldest"] > 0
    assert steps == list(range(20))


def test_history_mb_zero_turns_it_off_and_a_bad_size_is_refused():
    with livemon.Publisher("tcp://127.0.0.1:*", history_mb=0) as publisher:
        assert publisher.history_endpoint == ""
    with pytest.raises(ValueError, match="history_mb"):
        livemon.Publisher("tcp://127.0.0.1:*", history_mb=-1)
