"""livemon.torch_bridge.install(ops=True): PyTorch's own operators as livemon ranges, steps from the
optimizer, torch's own wait counters as livemon WaitCounters (issues 18 and 26). The training
loops here contain no livemon call: everything livemon sees comes from the observer in
livemon._torch_ops, compiled for the torch under test (livemon.torch_ops), and from the
optimizer's step hooks. Wire tests read the Publisher with an independent subscriber (pyzmq +
msgpack); where livemon and torch.profiler see the same calls, the same loop runs under both."""

import importlib
import importlib.util
import os
import types
import uuid

import pytest

import livemon
from conftest import DEADLINE, HIDE_CMAKE_BUILD, receive_until, run_python, subscribed_publisher

torch = pytest.importorskip("torch")
pytest.importorskip("zmq")  # the subscriber reads the wire with pyzmq
msgpack = pytest.importorskip("msgpack")
from livemon import torch_bridge  # noqa: E402

HAS_STEP_HOOKS = hasattr(importlib.import_module("torch.optim.optimizer"), "register_optimizer_step_post_hook")
HAS_WAIT_COUNTERS = hasattr(importlib.import_module("torch.monitor"), "_WaitCounter")  # torch 2.x's c10::monitor wait counters
needs_step_hooks = pytest.mark.skipif(not HAS_STEP_HOOKS, reason="torch 1.13 has no optimizer step hooks")
needs_wait_counters = pytest.mark.skipif(not HAS_WAIT_COUNTERS, reason="torch 1.13 has no c10::monitor wait counters")


def train(steps, optimizer_class=torch.optim.SGD, model=None):
    """A small training loop, with no livemon call in it."""
    torch.manual_seed(0)
    model = model or torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = optimizer_class(model.parameters(), lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(torch.randn(8, 16)), torch.zeros(8, 1))
        loss.backward()
        optimizer.step()
    return model


def labelled_train(steps):
    """A training loop with an explicit matmul and a torch.profiler.record_function label."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    projection = torch.randn(16, 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.profiler.record_function("train.forward"):
            features = torch.mm(torch.randn(8, 16), projection)
            loss = torch.nn.functional.mse_loss(model(features), torch.zeros(8, 1))
        loss.backward()
        optimizer.step()


@pytest.fixture
def clean():
    torch_bridge.uninstall()
    livemon.clear_step()
    yield
    torch_bridge.uninstall()
    livemon.clear_step()


OBSERVED = ["aten::mm", "aten::linear", "aten::addmm", "Optimizer.step#SGD.step", "train.forward",
            "autograd::engine::evaluate_function: AddmmBackward0"]


def test_operators_labels_and_optimizer_steps_reach_a_subscriber_as_torch_profiler_counts_them(
        operator_observer, clean):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as reference:
        labelled_train(5)
    torch_counts = {row.key: row.count for row in reference.key_averages()}
    assert all(torch_counts.get(name, 0) > 0 for name in OBSERVED), torch_counts

    with subscribed_publisher("torch-ops") as (_, socket):
        torch_bridge.install(ops=True)
        labelled_train(5)
        livemon.profiler.flush_range_stats()  # instead of waiting for the 1 s windows to end

        # Each range Stat logs its own events, and a 1 s window may close during the loop:
        # counts are summed over every window received.
        counts = {}
        means = {}

        def all_counted(topic, message):
            if topic == livemon.STAT_EVENT:
                for _, data in message["events"]:
                    for key, value in data.items():
                        if key.endswith(".count"):
                            counts[key[:-6]] = counts.get(key[:-6], 0.0) + value
                        elif key.endswith(".mean"):
                            means[key[:-5]] = value
            return all(counts.get(f"range/{name}", 0.0) >= torch_counts[name] for name in OBSERVED)

        receive_until(socket, all_counted)
    # The same calls torch.profiler saw in the same loop, each one as a range/<name> Stat.
    assert {name: counts[f"range/{name}"] for name in OBSERVED} == {name: float(torch_counts[name]) for name in OBSERVED}
    assert all(means[f"range/{name}"] > 0.0 for name in OBSERVED)


def test_steps_advance_with_every_optimizer_step(clean):
    adam_before_install = train(0, torch.optim.Adam)
    torch_bridge.install()
    assert torch_bridge.follows_optimizer()
    assert livemon.current_step() is None
    train(3)
    assert livemon.current_step() == 3
    livemon.set_step(40)  # a step set by the job is where the optimizer goes on from
    train(2, torch.optim.Adam, adam_before_install)
    assert livemon.current_step() == 42
    torch_bridge.uninstall()
    assert not torch_bridge.follows_optimizer()
    train(2)
    assert livemon.current_step() == 42


class NestedSGD(torch.optim.SGD):
    """An optimizer whose step() calls its base class's, both wrapped by torch's profiling hook."""

    def step(self, closure=None):
        return super().step(closure)


def test_a_step_calling_its_base_classs_step_counts_once_and_later_classes_are_followed(clean):
    train(1, torch.optim.SGD)  # torch wraps SGD.step once an SGD exists
    torch_bridge.install()

    class DefinedAfterInstall(torch.optim.Adam):
        pass

    train(3, NestedSGD)
    assert livemon.current_step() == 3
    train(2, DefinedAfterInstall)
    assert livemon.current_step() == 5


def test_a_profile_without_step_calls_follows_the_optimizer(clean):
    torch_bridge.install()
    traces = []
    schedule = livemon.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    with livemon.profiler.profile(schedule=schedule, on_trace_ready=lambda p: traces.append(p.trace())) as prof:
        train(6)
        assert prof.step_num == 6
    assert len(traces) == 1
    steps = sorted(name for name, *_ in traces[0].ranges if name.startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"]


def test_explicit_profile_steps_after_optimizer_steps_count_each_step_once(clean):
    torch_bridge.install()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with livemon.profiler.profile() as prof:
        for _ in range(5):  # torch.profiler code, unchanged
            model(torch.randn(2, 4)).sum().backward()
            optimizer.step()
            prof.step()
        assert prof.step_num == 5


def test_without_the_bridge_a_profile_ignores_the_optimizer(clean):
    with livemon.profiler.profile() as prof:
        train(3)
        assert prof.step_num == 0


def test_install_without_steps_leaves_the_step_alone(operator_observer, clean):
    torch_bridge.install(ops=True, steps=False)
    train(2)
    assert livemon.current_step() is None


def test_sampling_times_about_one_call_in_n(operator_observer, clean):
    torch_bridge.install(ops=True)
    before = torch_bridge.timed_op_count()
    train(40)
    every = torch_bridge.timed_op_count() - before

    torch_bridge.install(ops=True, ops_sample=10)
    before = torch_bridge.timed_op_count()
    train(40)
    sampled = torch_bridge.timed_op_count() - before
    # About every/10 (libtorch draws the sample): the bounds are far outside what chance gives.
    assert every > 1000
    assert 0 < sampled < every / 4


def test_uninstall_stops_timing_and_restores_range_stats(operator_observer, clean):
    assert not livemon.profiler.range_stats_enabled()
    torch_bridge.install(ops=True)
    assert torch_bridge.ops_installed()
    assert livemon.profiler.range_stats_enabled()
    assert torch_bridge.uninstall()
    assert not torch_bridge.ops_installed()
    assert not livemon.profiler.range_stats_enabled()
    before = torch_bridge.timed_op_count()
    train(3)
    assert torch_bridge.timed_op_count() == before


def test_operators_are_part_of_livemons_traces(operator_observer, clean):
    torch_bridge.install(ops=True)
    with livemon.profiler.profile() as prof:
        train(2)
    names = {row.key for row in prof.key_averages()}
    assert "aten::addmm" in names
    assert "Optimizer.step#SGD.step" in names


def test_backward_work_is_timed_under_the_autograd_engines_labels(operator_observer, clean):
    # The observer watches operators and labels, not libtorch's BACKWARD_FUNCTION scope: each
    # autograd node still shows, once, as the engine's "evaluate_function: <node>" label.
    torch_bridge.install(ops=True)
    with livemon.profiler.profile() as prof:
        train(2)
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts.get("autograd::engine::evaluate_function: AddmmBackward0") == 4
    assert "AddmmBackward0" not in counts


def test_labels_reusing_one_buffer_and_more_names_than_the_cache_holds_keep_their_own_names(operator_observer, clean):
    # record_function labels live in a string that is freed when the label ends, so consecutive
    # labels often share an address; and 3000 names overflow the per-thread name cache.
    torch_bridge.install(ops=True)
    names = [f"label-{i}" for i in range(3000)] + [f"a-much-longer-label-{i}-" + "x" * 60 for i in range(20)]
    with livemon.profiler.profile() as prof:
        for _ in range(2):
            for name in names:
                with torch.profiler.record_function(name):
                    pass
    counts = {row.key: row.count for row in prof.key_averages()}
    assert {name: counts.get(name) for name in names} == {name: 2 for name in names}


def test_dataloader_worker_processes_run_with_the_observer_installed(operator_observer):
    # DataLoader workers are fork()ed from a job whose observer is installed: they run
    # operators (collation) through it in the child and must neither hang nor crash.
    result = run_python("""
        import torch, livemon, livemon.torch_bridge
        livemon.torch_bridge.install(ops=True)
        data = torch.utils.data.TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
        loader = torch.utils.data.DataLoader(data, batch_size=16, num_workers=2)
        model = torch.nn.Linear(8, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
        print("done", livemon.current_step())
    """)
    assert result.stdout.strip() == "done 64"


def test_bad_ops_sample_is_refused(clean):
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="ops_sample"):
            torch_bridge.install(ops=True, ops_sample=bad)


def test_exit_with_the_observer_installed_after_ops_on_several_threads(operator_observer):
    # Operators ran on a thread of the job's and on libtorch's intra-op threads; the atexit hook
    # removes the observers before livemon flushes its range Stats. (A daemon thread still running
    # operators at exit aborts plain torch 1.13 too, without livemon: not tested here.)
    result = run_python("""
        import threading, torch, livemon, livemon.torch_bridge
        livemon.torch_bridge.install(ops=True)
        def work():
            x = torch.randn(64, 64)
            for _ in range(50):
                x = torch.tanh(x @ x)
        worker = threading.Thread(target=work)
        worker.start()
        x = torch.randn(512, 512)
        for _ in range(20):
            x = torch.tanh(x @ x)
        worker.join()
        print("done", livemon.torch_bridge.timed_op_count() >= 140)
    """)
    assert result.stdout.strip() == "done True"


class FailsOnceSGD(torch.optim.SGD):
    """An optimizer whose step() calls its base class's and raises once when asked to."""

    fail_next = False

    def step(self, closure=None):
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("a bad batch")
        return super().step(closure)


def test_a_step_that_raised_does_not_stop_the_steps_that_follow(clean):
    torch_bridge.install()
    model = torch.nn.Linear(4, 1)
    optimizer = FailsOnceSGD(model.parameters(), lr=0.1)

    def steps(count):
        for _ in range(count):
            model(torch.randn(2, 4)).sum().backward()
            optimizer.step()

    steps(2)
    assert livemon.current_step() == 2
    optimizer.fail_next = True
    with pytest.raises(RuntimeError, match="a bad batch"):
        steps(1)
    after_failure = livemon.current_step()
    assert after_failure in (2, 3)  # torch 1.13's observer counts the range that ended by the exception
    steps(3)
    assert livemon.current_step() == after_failure + 3


@needs_step_hooks
def test_on_torch_2_steps_follow_the_optimizer_with_no_native_code(tmp_path):
    result = run_python(HIDE_CMAKE_BUILD + """
import livemon, livemon.torch_bridge as bridge, torch
bridge.install()
class NestedSGD(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)
model = torch.nn.Linear(4, 1)
torch.optim.SGD(model.parameters(), lr=0.1)  # torch wraps SGD.step once an SGD exists
optimizer = NestedSGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
print(livemon.current_step(), "livemon._torch_ops" in sys.modules)
bridge.uninstall()
optimizer.step()
print(livemon.current_step())
""", env={"CXX": "/nonexistent", "LIVEMON_CACHE_DIR": str(tmp_path)})
    assert result.stdout.split() == ["3", "False", "3"]
    assert "building" not in result.stderr


def test_without_a_compiler_install_ops_says_what_is_missing_and_the_rest_works(tmp_path):
    result = run_python(HIDE_CMAKE_BUILD + """
import livemon, livemon.torch_bridge as bridge, torch
bridge.install()  # torch.monitor forwarding still works, and steps follow the optimizer
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
print("follows", bridge.follows_optimizer(), livemon.current_step())
try:
    bridge.install(ops=True)
except ImportError as error:
    print(repr(str(error)))
print("ops", bridge.ops_installed())
""", env={"CXX": "/nonexistent", "LIVEMON_CACHE_DIR": str(tmp_path / "cache")})
    follows, message, ops = result.stdout.splitlines()
    assert follows.split() == ["follows", "True", "2"]
    assert "no C++ compiler" in message and "/nonexistent" in message
    assert "python -m livemon.torch_ops build" in message  # how to build it elsewhere, ahead of time
    assert ops.split() == ["ops", "False"]
    assert not (tmp_path / "cache" / "torch_ops").exists() or not [
        p for p in (tmp_path / "cache" / "torch_ops").iterdir() if not p.name.endswith(".lock")]


def test_a_cmake_build_is_loaded_only_for_the_libtorch_it_was_linked_against(operator_observer):
    from livemon import torch_ops
    identity = torch_ops.torch_identity()
    this_torch = types.SimpleNamespace(TORCH_CPU_LIBRARY=identity["torch_cpu_library"],
                                       C10_LIBRARY=identity["c10_library"])
    other_torch = types.SimpleNamespace(TORCH_CPU_LIBRARY="/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.12.0",
                                        C10_LIBRARY="/usr/lib/x86_64-linux-gnu/libc10.so.1.12.0")
    assert torch_ops._build_info_matches(this_torch, identity)
    assert not torch_ops._build_info_matches(other_torch, identity)
    assert not torch_ops._build_info_matches(types.SimpleNamespace(), identity)  # a record naming nothing
    # What this run loaded: the package's CMake build only when its record names this torch's
    # libraries (Debian's torch 1.13 with libtorch-dev), else the build made for this torch.
    spec = importlib.util.find_spec("livemon._torch_ops_build_info")
    cmake_build = spec is not None and torch_ops._build_info_matches(importlib.import_module(spec.name), identity)
    loaded_from = os.path.dirname(operator_observer.__file__)
    if cmake_build:
        assert loaded_from == os.path.dirname(livemon.__file__)
    else:
        assert loaded_from == torch_ops.build_dir(identity)


@needs_wait_counters
def test_torchs_own_wait_counters_become_livemon_wait_counters(operator_observer, clean, collect):
    key = f"livemon.test.torch_wait.{uuid.uuid4().hex}"  # first used after install, as torch requires
    windows = collect(livemon.STAT_EVENT)
    torch_bridge.install(ops=True)
    assert torch_bridge.wait_counters_installed()
    counter = torch.monitor._WaitCounter(key)
    for _ in range(3):
        with counter.guard():
            pass
    totals = livemon.WaitCounter(key).totals()
    assert (totals["calls"], totals["active"]) == (3, 0)

    def counted(events):
        return sum(e.data.get(f"{key}.count", 0.0) for e in events)

    # A livemon WaitCounter's waits also go to a Stat named after its key (1 s windows).
    assert windows.wait_for(lambda events: counted(events) >= 3)
    assert counted(windows.events) == 3.0

    torch_bridge.uninstall()
    assert not torch_bridge.wait_counters_installed()
    with counter.guard():
        pass
    assert livemon.WaitCounter(key).totals()["calls"] == 3
    torch_bridge.install(ops=True)  # torch keeps livemon's backend for the key: it records again
    with counter.guard():
        pass
    assert livemon.WaitCounter(key).totals()["calls"] == 4


@needs_wait_counters
def test_install_with_wait_counters_off_leaves_torchs_counters_alone(operator_observer, clean):
    key = f"livemon.test.torch_wait.{uuid.uuid4().hex}"
    torch_bridge.install(ops=True, wait_counters=False)
    assert torch_bridge.ops_installed() and not torch_bridge.wait_counters_installed()
    with torch.monitor._WaitCounter(key).guard():
        pass
    assert livemon.WaitCounter(key).totals()["calls"] == 0


@needs_wait_counters
def test_a_wait_counter_torch_itself_hits_reaches_livemon(operator_observer):
    # TCPStore, the key-value store of torch.distributed's rendezvous, counts its calls' waits
    # with c10::monitor wait counters in C++ (pytorch.wait_counter.TCPStore__get, ...).
    result = run_python("""
        import threading, livemon, livemon.torch_bridge, torch.distributed
        key = "pytorch.wait_counter.TCPStore__get"
        window = threading.Event()
        livemon.register_event_handler(lambda event: key + ".count" in event.data and window.set())
        livemon.torch_bridge.install(ops=True)
        store = torch.distributed.TCPStore("127.0.0.1", 0, 1, True)
        store.set("rank0", "ready")
        for _ in range(4):
            assert store.get("rank0") == b"ready"
        totals = livemon.WaitCounter(key).totals()
        print(totals["calls"], totals["active"], totals["total_time"].total_seconds() > 0)
        print("stat", window.wait(%r))
    """ % DEADLINE)
    assert result.stdout.split() == ["4", "0", "True", "stat", "True"]


@pytest.mark.skipif(HAS_WAIT_COUNTERS, reason="torch 2.x has c10::monitor wait counters")
def test_torch_1_13_has_no_wait_counters_to_receive(operator_observer, clean):
    torch_bridge.install(ops=True)
    assert torch_bridge.ops_installed()
    assert not operator_observer.wait_counters_supported
    assert not torch_bridge.wait_counters_installed()


def test_import_livemon_works_without_torch():
    result = run_python("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch.") or name == "livemon._torch_ops":
                    raise ImportError("blocked for the test")
                return None
        sys.meta_path.insert(0, Block())
        import livemon, livemon.profiler, livemon.torch_bridge
        print("ok")
    """)
    assert result.stdout.strip() == "ok"
