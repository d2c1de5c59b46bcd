"""Shared helpers of the Python tests. They run two ways:
- ctest runs them with /usr/bin/python3 (Debian's torch 1.13) and PYTHONPATH set to the built
  package (<build>/python); LIVEMON_SOURCE_DIR and LIVEMON_BUILD_DIR name the trees;
- scripts/test-python.sh runs them in a fresh virtualenv holding the livemon wheel and torch 2.13,
  with LIVEMON_WHEEL naming the wheel and no LIVEMON_BUILD_DIR: livemon and livemonctl are the
  installed ones."""

import contextlib
import datetime
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import livemon

# Generous: a loaded 2-core machine is slow, and a condition that holds returns at once anyway.
DEADLINE = 30.0

SOURCE_DIR = os.environ.get("LIVEMON_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("LIVEMON_BUILD_DIR", "")
WHEEL = os.environ.get("LIVEMON_WHEEL", "")


def livemonctl_program():
    """The livemonctl the tests drive: the build tree's, or the installed wheel's console script."""
    if BUILD_DIR:
        return os.path.join(BUILD_DIR, "app", "livemonctl", "livemonctl")
    installed = shutil.which("livemonctl", path=os.path.dirname(sys.executable))
    if installed is None:
        pytest.skip("no livemonctl: neither LIVEMON_BUILD_DIR nor an installed wheel")
    return installed


class Collector:
    """A livemon event handler that keeps what it gets and lets a test wait for it."""

    def __init__(self, name_prefix=""):
        self.prefix = name_prefix
        self.events = []
        self._condition = threading.Condition()

    def __call__(self, event):
        if not event.name.startswith(self.prefix):
            return
        with self._condition:
            self.events.append(event)
            self._condition.notify_all()

    def wait_for(self, predicate, timeout=DEADLINE):
        """Waits until predicate(events) holds; returns whether it does."""
        with self._condition:
            return self._condition.wait_for(lambda: predicate(self.events), timeout)

    def wait_count(self, count, timeout=DEADLINE):
        return self.wait_for(lambda events: len(events) >= count, timeout)

    def named(self, name):
        with self._condition:
            return [e for e in self.events if e.name == name]


def receive_until(socket, predicate, timeout=DEADLINE):
    """Receives wire messages on a pyzmq SUB socket until predicate(topic, payload) holds; returns
    that payload (decoded with msgpack)."""
    import msgpack
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if socket.poll(100):
            topic, payload = socket.recv_multipart()
            message = msgpack.unpackb(payload)
            if predicate(topic.decode(), message):
                return message
    pytest.fail("the expected message did not arrive")


@contextlib.contextmanager
def subscribed_publisher(run, topics=(b"",)):
    """A livemon Publisher on a free loopback port and a raw pyzmq SUB socket subscribed to `topics`
    (which must let heartbeats through), yielded as (publisher, socket) once the first heartbeat
    has proved the subscription is in place (ZeroMQ's slow joiner)."""
    import zmq
    with livemon.Publisher("tcp://127.0.0.1:*", run=run,
                           heartbeat_interval=datetime.timedelta(milliseconds=50)) as publisher:
        context = zmq.Context()
        socket = context.socket(zmq.SUB)
        try:
            socket.connect(publisher.endpoints[0])
            for topic in topics:
                socket.subscribe(topic)
            receive_until(socket, lambda topic, message: topic == "livemon.heartbeat")
            yield publisher, socket
        finally:
            socket.close(linger=0)
            context.term()


@pytest.fixture
def collect():
    """collect(prefix="") registers a Collector for the test's duration."""
    registered = []

    def make(prefix=""):
        collector = Collector(prefix)
        registered.append(livemon.register_event_handler(collector))
        return collector

    yield make
    for handle in registered:
        livemon.unregister_event_handler(handle)


def run_python(code, timeout=60, env=None, check=True):
    """Runs `code` in a fresh /usr/bin/python3 (this interpreter) with the same PYTHONPATH; fails
    the test if it does not finish within `timeout` seconds (a deadlock or a hung exit)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                                timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the child did not finish within {timeout} s (deadlock or hung exit)\n"
                    f"stdout: {expired.stdout}\nstderr: {expired.stderr}")
    result.elapsed = time.monotonic() - started
    if check and result.returncode != 0:
        pytest.fail(f"the child exited with {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    return result


@pytest.fixture(scope="session")
def operator_observer():
    """livemon._torch_ops for the torch under test, compiled first if this torch has none yet
    (livemon.torch_ops). Skips the test, saying what is missing, where there is no compiler or no
    headers to build it with; a build that fails with everything there fails the test."""
    pytest.importorskip("torch")
    from livemon import torch_ops
    try:
        return torch_ops.load()
    except ImportError:
        try:
            torch_ops.compile_command(os.devnull)
        except ImportError as missing:
            pytest.skip(f"the operator observer cannot be built here: {missing}")
        raise


# Code for a child process (run_python) that hides a CMake-built livemon._torch_ops in the package
# (there is one under torch 1.13 with libtorch-dev), so that the child depends on the observer's
# first-use build alone.
HIDE_CMAKE_BUILD = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "livemon._torch_ops":
            raise ImportError("blocked for the test")
        return None
sys.meta_path.insert(0, Block())
"""
