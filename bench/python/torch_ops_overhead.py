#!/usr/bin/python3
"""What timing PyTorch's own operators costs a real training job: examples/pytorch_train.py's step
time with nothing, with torch.profiler recording (CPU activity, every step), with livemon's
operator observer timing every operator call (livemon.torch_bridge.install(ops=True)) and with it
sampling one call in 10, in one process. The variants take turns run by run, in alternating order
(ABCD DCBA ...), so drift and machine noise hit them alike.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/torch_ops_overhead.py [--rounds 6]

Reported per variant: the median step time (measured by the example around each step: data,
forward, backward, optimizer) over all its runs' steps, and its overhead over "nothing".
torch.profiler's post-processing at stop() is outside the steps: it is reported on its own, per
run and spread over the run's steps. Then the same
variants on an operator-bound loop (forward and backward of 20 tiny Linear layers, ~200 operator
calls of a few microseconds each), where per-call costs show, plus the observer registered with
range Stats off: what libtorch's RecordFunction dispatch costs before livemon does anything. Goal (issue 18):
livemon's every-operator overhead at most half of torch.profiler's.
Results: docs/benchmarks.md, section "PyTorch's operators".
"""

import argparse
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time

from example_loader import load_example


@contextlib.contextmanager
def livemon_ops(sample, stats=True):
    import livemon.torch_bridge
    livemon.torch_bridge.install(ops=True, ops_sample=sample, steps=False)
    if not stats:
        livemon.profiler.set_range_stats_enabled(False)  # the observer returns at once
    try:
        yield
    finally:
        livemon.torch_bridge.uninstall()


def torch_profiler():
    import torch.profiler
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="runs of each variant (default %(default)s)")
    parser.add_argument("--steps", type=int, default=150, help="steps per run (default %(default)s)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default %(default)s)")
    args = parser.parse_args()

    example = load_example()
    endpoint = f"ipc://{tempfile.mkdtemp()}/bench.sock"
    train_args = example.parse_args(["--epochs", "1", "--duration", "0", "--steps-per-epoch", str(args.steps),
                                     "--threads", str(args.threads), "--endpoint", endpoint, "--quiet"])
    variants = {
        "nothing": contextlib.nullcontext,
        "torch.profiler (CPU, every step)": torch_profiler,
        "livemon observer, every op": lambda: livemon_ops(1),
        "livemon observer, 1 op in 10": lambda: livemon_ops(10),
    }
    step_ms = {name: [] for name in variants}
    stop_ms = {name: [] for name in variants}  # leaving the variant: torch.profiler's stop() processes its events
    with torch_profiler():  # warm up, torch.profiler's first start included
        example.train(train_args, example.NoMonitor(train_args), log=None)
    for round_index in range(args.rounds):
        order = list(variants.items())
        if round_index % 2:
            order.reverse()
        for name, make in order:
            with make():
                step_ms[name].extend(example.train(train_args, example.NoMonitor(train_args), log=None))
                stopping = time.perf_counter_ns()
            stop_ms[name].append((time.perf_counter_ns() - stopping) / 1e6)

    import torch
    tiny = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(20)])
    batch = torch.randn(2, 8)

    def tiny_steps(count=300):
        times = []
        for _ in range(count):
            started = time.perf_counter_ns()
            tiny(batch).sum().backward()
            times.append((time.perf_counter_ns() - started) / 1000)
        return times

    tiny_variants = dict(variants)
    tiny_variants["observer registered, range Stats off"] = lambda: livemon_ops(1, stats=False)
    tiny_us = {name: [] for name in tiny_variants}
    for round_index in range(args.rounds):
        order = list(tiny_variants.items())
        if round_index % 2:
            order.reverse()
        for name, make in order:
            with make():
                tiny_us[name].extend(tiny_steps())

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {cpu}, {os.cpu_count()} cores; "
          f"{args.rounds} runs of {args.steps} steps per variant, in alternating order; median step time")
    base = statistics.median(step_ms["nothing"])
    for name in variants:
        value = statistics.median(step_ms[name])
        overhead = "" if name == "nothing" else f"  overhead {value - base:+.3f} ms ({100 * (value - base) / base:+.1f} %)"
        stop = statistics.median(stop_ms[name])
        print(f"  {name:38s} {value:8.3f} ms{overhead}; stop {stop:.1f} ms a run, {stop / args.steps:.3f} ms a step")
    print(f"operator-bound loop (20 Linear(8, 8), forward + backward), {args.rounds} x 300 iterations; median")
    base = statistics.median(tiny_us["nothing"])
    for name in tiny_variants:
        value = statistics.median(tiny_us[name])
        overhead = "" if name == "nothing" else f"  overhead {value - base:+.1f} us ({100 * (value - base) / base:+.1f} %)"
        print(f"  {name:38s} {value:8.1f} us{overhead}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
