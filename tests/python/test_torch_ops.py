"""livemon.torch_bridge.install(ops=True): PyTorch's own operators as livemon ranges, steps from the
optimizer (issue 18, items 2 and 3). The training loops here contain no livemon call: everything
livemon sees comes from the RecordFunction observers in livemon._torch_ops. A wire test reads the
Publisher with an independent subscriber (pyzmq + msgpack)."""

import importlib.util

import pytest

import livemon
from conftest import receive_until, run_python, subscribed_publisher

torch = pytest.importorskip("torch")
pytest.importorskip("zmq")  # the subscriber reads the wire with pyzmq
msgpack = pytest.importorskip("msgpack")
from livemon import torch_bridge  # noqa: E402

needs_extension = pytest.mark.skipif(importlib.util.find_spec("livemon._torch_ops") is None,
                                     reason="livemon._torch_ops not built (no libtorch-dev)")


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


@pytest.fixture
def clean():
    torch_bridge.uninstall()
    livemon.clear_step()
    yield
    torch_bridge.uninstall()
    livemon.clear_step()



@needs_extension
def test_operator_stats_reach_a_subscriber_with_no_livemon_call_in_the_loop(clean):
    with subscribed_publisher("torch-ops") as (_, socket):
        torch_bridge.install(ops=True)
        train(5)
        livemon.profiler.flush_range_stats()  # instead of waiting for the 1 s windows to end

        # Each range Stat logs its own events, and a 1 s window may close during the loop:
        # counts are summed over every window received.
        counts = {}
        means = {}
        wanted = {"range/aten::addmm": 10.0, "range/autograd::engine::evaluate_function: AddmmBackward0": 10.0,
                  "range/Optimizer.step#SGD.step": 5.0}

        def all_counted(topic, message):
            if topic == livemon.STAT_EVENT:
                for _, data in message["events"]:
                    for key, value in data.items():
                        if key.endswith(".count"):
                            counts[key[:-6]] = counts.get(key[:-6], 0.0) + value
                        elif key.endswith(".mean"):
                            means[key[:-5]] = value
            return all(counts.get(name, 0.0) >= count for name, count in wanted.items())

        receive_until(socket, all_counted)
    # Forward and backward: 2 Linear layers x 5 steps through aten::addmm, and autograd's nodes.
    for name, count in wanted.items():
        assert counts[name] == count, name
    assert means["range/aten::addmm"] > 0.0


@needs_extension
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


@needs_extension
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


@needs_extension
def test_install_without_steps_leaves_the_step_alone(clean):
    torch_bridge.install(ops=True, steps=False)
    train(2)
    assert livemon.current_step() is None


@needs_extension
def test_sampling_times_about_one_call_in_n(clean):
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


@needs_extension
def test_uninstall_stops_timing_and_restores_range_stats(clean):
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


@needs_extension
def test_operators_are_part_of_livemons_traces(clean):
    torch_bridge.install(ops=True)
    with livemon.profiler.profile() as prof:
        train(2)
    names = {row.key for row in prof.key_averages()}
    assert "aten::addmm" in names
    assert "Optimizer.step#SGD.step" in names


@needs_extension
def test_backward_work_is_timed_under_the_autograd_engines_labels(clean):
    # The observer watches operators and labels, not libtorch's BACKWARD_FUNCTION scope: each
    # autograd node still shows, once, as the engine's "evaluate_function: <node>" label.
    torch_bridge.install(ops=True)
    with livemon.profiler.profile() as prof:
        train(2)
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts.get("autograd::engine::evaluate_function: AddmmBackward0") == 4
    assert "AddmmBackward0" not in counts


@needs_extension
def test_labels_reusing_one_buffer_and_more_names_than_the_cache_holds_keep_their_own_names(clean):
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


@needs_extension
def test_dataloader_worker_processes_run_with_the_observer_installed():
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


@needs_extension
def test_exit_with_the_observer_installed_after_ops_on_several_threads():
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


def test_import_livemon_works_without_the_extension():
    result = run_python("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "livemon._torch_ops":
                    raise ImportError("blocked for the test")
                return None
        sys.meta_path.insert(0, Block())
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
            print("ops", "libtorch-dev" in str(error))
    """)
    assert result.stdout.split() == ["follows", "True", "2", "ops", "True"]


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
