"""Threads and interpreter exit, each in a child process with a timeout: a deadlock or a hung exit
fails the test instead of hanging the suite. torch.monitor 1.13 deadlocks in the first case."""

import subprocess
import sys
import textwrap

import pytest

from conftest import run_python

TIMEOUT = 60  # seconds; each case takes well under one when it works


def test_two_threads_logging_through_a_slow_python_handler_do_not_deadlock():
    result = run_python("""
        import datetime, threading, time, livemon
        calls = []
        def slow(event):
            time.sleep(0.002)  # releases the GIL in the middle of the handler
            calls.append(event.name)
        livemon.register_event_handler(slow)
        def worker(n):
            stat = livemon.Stat(f"t{n}", [livemon.SUM], datetime.timedelta(hours=1), max_samples=5)
            for i in range(100):
                livemon.log_event(livemon.Event(f"w{n}", datetime.datetime.now(), {"i": i}))
                stat.add(i)  # every fifth add reaches max_samples: a window through the handler too
                if i % 5 == 4:
                    stat.flush()  # a new window (the capped one is already logged)
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(calls))
    """, timeout=TIMEOUT)
    assert result.stdout.split() == [str(2 * (100 + 20))]


def test_the_window_thread_and_python_threads_share_a_slow_handler():
    # Windows close on livemon's own thread, which must take the GIL to call the handler while
    # Python threads hold it, add to the same Stats and unregister handlers.
    result = run_python("""
        import datetime, threading, time, livemon
        seen = []
        def slow(event):
            time.sleep(0.001)
            seen.append(event.name)
        handle = livemon.register_event_handler(slow)
        stats = [livemon.Stat(f"s{n}", [livemon.MEAN, livemon.P99], datetime.timedelta(milliseconds=5)) for n in range(4)]
        stop = time.monotonic() + 1.0
        def adder(stat):
            while time.monotonic() < stop:
                stat.add(1.0)
        threads = [threading.Thread(target=adder, args=(s,)) for s in stats]
        for t in threads: t.start()
        for t in threads: t.join()
        livemon.unregister_event_handler(handle)  # waits for a call in flight on the window thread
        after = len(seen)
        time.sleep(0.05)
        print(after > 0, len(seen) == after)
    """, timeout=TIMEOUT)
    assert result.stdout.split() == ["True", "True"]


EXIT_CASES = {
    "handler registered, Stat with an open window": """
        import datetime, livemon
        livemon.register_event_handler(lambda e: None)
        stat = livemon.Stat("x", [livemon.MEAN], datetime.timedelta(milliseconds=10))
        stat.add(1.0)
    """,
    "a slow handler running on the window thread at exit": """
        import datetime, threading, time, livemon
        started = threading.Event()
        def slow(event):
            started.set()
            time.sleep(0.3)
        livemon.register_event_handler(slow)
        stat = livemon.Stat("x", [livemon.MEAN], datetime.timedelta(milliseconds=5))
        stat.add(1.0)
        started.wait(30)
    """,
    "a daemon thread logging through a Python handler": """
        import datetime, threading, time, livemon
        count = [0]
        def handler(event):
            count[0] += 1
        livemon.register_event_handler(handler)
        def spam():
            stat = livemon.Stat("d", [livemon.SUM], datetime.timedelta(milliseconds=1))
            while True:
                livemon.log_event(livemon.Event("d", datetime.datetime.now(), {}))
                stat.add(1.0)
        threading.Thread(target=spam, daemon=True).start()
        while count[0] < 1000:
            time.sleep(0.001)
    """,
    "a handler that logs and registers from inside": """
        import datetime, livemon
        def nested(event):
            if event.name == "outer":
                livemon.log_event(livemon.Event("inner", datetime.datetime.now(), {}))
                livemon.register_event_handler(lambda e: None)
        livemon.register_event_handler(nested)
        livemon.log_event(livemon.Event("outer", datetime.datetime.now(), {}))
    """,
    "a publisher and a TensorBoard handler still open": """
        import datetime, tempfile, livemon
        publisher = livemon.Publisher("tcp://127.0.0.1:*")
        livemon.register_event_handler(livemon.TensorboardEventHandler(tempfile.mkdtemp()))
        livemon.register_event_handler(print)
        stat = livemon.Stat("p", [livemon.SUM], datetime.timedelta(milliseconds=10))
        stat.add(1.0)
    """,
    "the torch.monitor bridge with a torch Stat open": """
        import datetime, livemon, livemon.torch_bridge, torch.monitor
        livemon.torch_bridge.install()
        livemon.register_event_handler(lambda e: None)
        stat = torch.monitor.Stat("b", [torch.monitor.Aggregation.MEAN], datetime.timedelta(milliseconds=10))
        stat.add(1.0)
    """,
}


@pytest.mark.parametrize("case", list(EXIT_CASES))
def test_the_interpreter_exits_promptly(case):
    result = run_python(textwrap.dedent(EXIT_CASES[case]) + "\nprint('end of script', flush=True)\n", timeout=TIMEOUT)
    assert "end of script" in result.stdout
    assert result.returncode == 0
    assert "Fatal" not in result.stderr and "terminate" not in result.stderr, result.stderr


def test_ctrl_c_in_a_handler_still_interrupts_the_program():
    result = run_python("""
        import datetime, livemon, signal
        # As at a terminal: a child started in the background of a non-interactive shell (a CI
        # job's `cmd &`) inherits SIGINT ignored, and Python then drops a raised interrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        def handler(event):
            raise KeyboardInterrupt
        livemon.register_event_handler(handler)
        try:
            livemon.log_event(livemon.Event("x", datetime.datetime.now(), {}))  # livemon catches it...
            for _ in range(10_000_000):
                pass
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")  # ...and raises it again where Python checks for signals
    """, timeout=TIMEOUT)
    assert result.stdout.split() == ["interrupted"]


def test_a_forked_child_with_handlers_exits_normally():
    result = run_python("""
        import datetime, os, livemon
        seen = []
        livemon.register_event_handler(seen.append)
        stat = livemon.Stat("f", [livemon.SUM], datetime.timedelta(milliseconds=5))
        stat.add(1.0)
        pid = os.fork()
        if pid == 0:
            stat.add(2.0)
            livemon.log_event(livemon.Event("child", datetime.datetime.now(), {}))
            os._exit(0 if any(e.name == "child" for e in seen) else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """, timeout=TIMEOUT)
    assert result.stdout.split() == ["0"]


def test_forked_children_whose_windows_wake_their_window_thread_never_hang():
    # At fork the parent's window thread waits on the scheduler's condition variable; the
    # child's copy of it must not count that waiter (a notify would wait for it forever). Each
    # child starts its own window thread, then adds to a Stat whose window ends sooner, which
    # wakes that thread. The hang came about once in 100 forks: 200 are tried.
    result = run_python("""
        import datetime, os, time, livemon
        slow = livemon.Stat("parent", [livemon.MEAN], datetime.timedelta(seconds=30))
        slow.add(1.0)  # the parent's window thread now waits for this window's end
        hung = 0
        for _ in range(200):
            pid = os.fork()
            if pid == 0:
                later = livemon.Stat("child.later", [livemon.MEAN], datetime.timedelta(seconds=30))
                later.add(1.0)  # starts the child's window thread
                time.sleep(0.005)  # not synchronisation: lets that thread reach its wait, where the hang was
                sooner = livemon.Stat("child.sooner", [livemon.MEAN], datetime.timedelta(milliseconds=5))
                sooner.add(1.0)  # wakes it
                os._exit(0)
            deadline = time.monotonic() + 10
            while os.waitpid(pid, os.WNOHANG)[0] == 0:
                if time.monotonic() > deadline:
                    hung += 1
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.002)
        print("hung", hung)
    """, timeout=TIMEOUT * 4)
    assert result.stdout.split() == ["hung", "0"]


def test_range_stats_last_window_reaches_the_handlers_at_exit():
    # The job never flushes; an hour's window is open when the script ends. The module's exit hook
    # logs it while the Python handler is still registered; nothing calls into Python afterwards
    # (the C++ exit hook finds the window empty, and the handler removed).
    result = run_python("""
        import datetime, livemon
        from livemon import profiler
        def show(event):
            for key in sorted(event.data):
                if key.startswith("range/"):
                    print(key, event.data[key] if key.endswith(".count") else "")
        livemon.register_event_handler(show)
        profiler.set_range_stats_enabled(True, datetime.timedelta(hours=1))
        for _ in range(3):
            with profiler.record_function("exit_range"):
                pass
        print("returning")
    """, timeout=TIMEOUT)
    lines = result.stdout.splitlines()
    assert lines[0] == "returning", result.stdout
    assert "range/exit_range.count 3.0" in lines, result.stdout
    assert result.stderr == "", result.stderr


def test_range_stats_last_window_reaches_a_subscriber_through_a_module_level_publisher():
    # A script's Publisher lives until the interpreter is finalized; the range Stats' last window
    # is logged at exit before that, so it goes out with the publisher's linger.
    zmq = pytest.importorskip("zmq")
    context = zmq.Context()
    subscriber = context.socket(zmq.SUB)
    subscriber.setsockopt(zmq.LINGER, 0)
    subscriber.setsockopt(zmq.SUBSCRIBE, b"")
    subscriber.setsockopt(zmq.RCVTIMEO, TIMEOUT * 1000)
    subscriber.bind("tcp://127.0.0.1:*")
    endpoint = subscriber.getsockopt_string(zmq.LAST_ENDPOINT)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import datetime, sys, livemon
        from livemon import profiler
        publisher = livemon.Publisher(endpoint=[], connect="{endpoint}",
                                      heartbeat_interval=datetime.timedelta(milliseconds=20))
        profiler.set_range_stats_enabled(True, datetime.timedelta(hours=1))
        with profiler.record_function("child_range"):
            pass
        sys.stdin.readline()  # the parent has seen this publisher: nothing sent from now on is lost
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        topic, _ = subscriber.recv_multipart()  # a heartbeat: the connection and subscription are up
        assert topic.startswith(b"livemon"), topic
        child.stdin.write("go\n")
        child.stdin.close()
        assert child.wait(timeout=TIMEOUT) == 0, child.stderr.read()
        payloads = []
        while not any(b"range/child_range.count" in p for p in payloads):
            topic, payload = subscriber.recv_multipart()  # raises zmq.Again when nothing comes
            payloads.append(payload)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        subscriber.close()
        context.term()
