#!/usr/bin/python3
"""What timing PyTorch's own operators costs a real training job: examples/pytorch_train.py's step
time with nothing, with torch.profiler recording (CPU activity, every step), with livemon's
operator observer timing every operator call (livemon.torch_bridge.install(ops=True)) and with it
sampling one call in 10, in one process. The variants take turns run by run, in alternating order
(ABCD DCBA ...), so drift and machine noise hit them alike.

    build/python-dist/venv/bin/python bench/python/torch_ops_overhead.py [--rounds 6]   # torch 2.13
    PYTHONPATH=build/python /usr/bin/python3 bench/python/torch_ops_overhead.py                     # Debian's 1.13

Reported per variant: the median step time (measured by the example around each step: data,
forward, backward, optimizer) over all its runs' steps; its overhead over "nothing" as the median
over rounds of the difference between the two runs' medians in that round (paired, so that a
round slowed down by other work on a shared machine shifts both), and the median over rounds of
its overhead divided by torch.profiler's in the same round.
torch.profiler's post-processing at stop() is outside the steps: it is reported on its own, per
run and spread over the run's steps. Then the same
variants on an operator-bound loop (forward and backward of 20 tiny Linear layers, ~200 operator
calls of a few microseconds each), where per-call costs show, plus the observer registered with
range Stats off: what libtorch's RecordFunction dispatch costs before livemon does anything, in
wall time and in the thread's CPU time (which leaves out what other processes take). The
observer is loaded (compiled first, if this torch has none cached: livemon.torch_ops) before
anything is timed. The load averages at start and end are printed: the machine may be shared.
Goal (issue 18): livemon's every-operator overhead at most half of torch.profiler's.
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


REFERENCE = "torch.profiler (CPU, every step)"


def report(per_round, unit, digits):
    """Per variant: the median over all its times, the paired per-round overhead over "nothing"
    (median over rounds) and that overhead over torch.profiler's in the same round (median)."""
    round_medians = {name: [statistics.median(times) for times in rounds] for name, rounds in per_round.items()}
    base = round_medians["nothing"]
    overheads = {name: [m - b for m, b in zip(medians, base)] for name, medians in round_medians.items()}
    for name, rounds in per_round.items():
        pooled = statistics.median(time for times in rounds for time in times)
        line = f"  {name:38s} {pooled:9.{digits}f} {unit}"
        if name != "nothing":
            overhead = statistics.median(overheads[name])
            line += f"  overhead {overhead:+.{digits}f} {unit} ({100 * overhead / statistics.median(base):+.1f} %)"
            if name != REFERENCE:
                ratios = [o / r for o, r in zip(overheads[name], overheads[REFERENCE]) if r > 0]
                if ratios:
                    line += f" = {statistics.median(ratios):.2f}x torch.profiler's"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="runs of each variant (default %(default)s)")
    parser.add_argument("--steps", type=int, default=150, help="steps per run (default %(default)s)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default %(default)s)")
    parser.add_argument("--loop-rounds", type=int, default=30,
                        help="runs of each variant on the operator-bound loop (default %(default)s)")
    args = parser.parse_args()

    import livemon.torch_ops
    observer = livemon.torch_ops.load()  # a first-use build must not land in a timed run
    load_at_start = os.getloadavg()

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
    step_ms = {name: [] for name in variants}  # per variant, one list of step times per round
    stop_ms = {name: [] for name in variants}  # leaving the variant: torch.profiler's stop() processes its events
    with torch_profiler():  # warm up, torch.profiler's first start included
        example.train(train_args, example.NoMonitor(train_args), log=None)
    for round_index in range(args.rounds):
        order = list(variants.items())
        if round_index % 2:
            order.reverse()
        for name, make in order:
            with make():
                step_ms[name].append(example.train(train_args, example.NoMonitor(train_args), log=None))
                stopping = time.perf_counter_ns()
            stop_ms[name].append((time.perf_counter_ns() - stopping) / 1e6)

    import torch
    tiny = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(20)])
    batch = torch.randn(2, 8)

    def tiny_steps(count=300):
        """Wall and thread CPU time of each iteration, in us. The CPU time leaves out the time
        other processes on a shared machine take this thread's core (one torch thread: the
        operators run on this thread)."""
        wall, cpu = [], []
        for _ in range(count):
            started, started_cpu = time.perf_counter_ns(), time.thread_time_ns()
            tiny(batch).sum().backward()
            cpu.append((time.thread_time_ns() - started_cpu) / 1000)
            wall.append((time.perf_counter_ns() - started) / 1000)
        return wall, cpu

    tiny_variants = dict(variants)
    tiny_variants["observer registered, range Stats off"] = lambda: livemon_ops(1, stats=False)
    tiny_us = {name: [] for name in tiny_variants}
    tiny_cpu_us = {name: [] for name in tiny_variants}
    for round_index in range(args.loop_rounds):
        order = list(tiny_variants.items())
        if round_index % 2:
            order.reverse()
        for name, make in order:
            with make():
                wall, cpu = tiny_steps()
            tiny_us[name].append(wall)
            tiny_cpu_us[name].append(cpu)

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {cpu}, {os.cpu_count()} cores; "
          f"{args.rounds} runs of {args.steps} steps per variant, in alternating order; median step time")
    print(f"load average (1, 5, 15 min) at start {' '.join(f'{v:.2f}' for v in load_at_start)}, "
          f"at end {' '.join(f'{v:.2f}' for v in os.getloadavg())}; observer {observer.__file__}")
    print("CNN step (examples/pytorch_train.py)")
    report(step_ms, "ms", 3)
    for name in variants:
        stop = statistics.median(stop_ms[name])
        print(f"  {name:38s} stop(): {stop:.1f} ms a run, {stop / args.steps:.3f} ms a step")
    print(f"operator-bound loop (20 Linear(8, 8), forward + backward), {args.loop_rounds} x 300 iterations: wall time")
    report(tiny_us, "us", 1)
    print("the same loop: CPU time of the thread")
    report(tiny_cpu_us, "us", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
