"""Publisher(metrics_port=...) serves the job's Stats for Prometheus, as the C++ Publisher does."""

import datetime
import socket
import time
import urllib.request

import livemon

from conftest import DEADLINE


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def test_publisher_serves_its_stats_for_prometheus():
    port = free_port()
    with livemon.Publisher("tcp://127.0.0.1:*", run="py-metrics", rank=2, metrics_port=port) as publisher:
        assert publisher.metrics_port == port
        livemon.log_event(livemon.Event("livemon.Stat", datetime.datetime.now(), {"train.loss.mean": 0.25}))
        wanted = ('livemon_stat{aggregation="mean",host="%s",rank="2",run="py-metrics",stat="train.loss"} 0.25'
                  % publisher.identity["host"])
        end = time.monotonic() + DEADLINE
        text = scrape(port)
        while wanted not in text.splitlines() and time.monotonic() < end:
            time.sleep(0.01)
            text = scrape(port)
        assert wanted in text.splitlines(), text
    assert publisher.metrics_port == 0


def test_publisher_without_a_metrics_port_serves_nothing():
    with livemon.Publisher("tcp://127.0.0.1:*") as publisher:
        assert publisher.metrics_port == 0


def test_a_taken_metrics_port_does_not_stop_the_job():
    # Another process on the node holds the port: the job comes up without metrics and says so.
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with livemon.Publisher("tcp://127.0.0.1:*", metrics_port=port) as publisher:
            assert publisher.metrics_port == 0
            assert publisher.stats()["metrics_unavailable"] is True
    with livemon.Publisher("tcp://127.0.0.1:*") as publisher:
        assert publisher.stats()["metrics_unavailable"] is False
