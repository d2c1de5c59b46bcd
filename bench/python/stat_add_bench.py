#!/usr/bin/python3
"""Stat.add called from Python: livemon next to torch.monitor, in the same process and run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/stat_add_bench.py [--repetitions 15]

Each measurement is a plain loop `for v in values: add(v)` over 200 000 step-time-like samples
(gamma distributed, milliseconds), with the bound method looked up once, and again as
`stat.add(v)`, looking the method up at every call.
The configurations run interleaved, repetition by repetition, so machine noise hits all of them
alike; the table shows the median and the spread (min..max) of the per-call times. Windows are
1 s, so windows really close during the run. The loop alone (calling a do-nothing builtin) is
shown as the floor any Python call pays. Results: docs/benchmarks.md, section "Python".
"""

import argparse
import datetime
import platform
import random
import statistics
import sys
import time

import livemon
import torch
import torch.monitor as monitor

BASIC = ["MEAN", "COUNT", "SUM", "MAX", "MIN"]


def per_call_ns(add, values):
    start = time.perf_counter_ns()
    for v in values:
        add(v)
    return (time.perf_counter_ns() - start) / len(values)


def per_call_ns_lookup(stat, values):
    """The same, looking the method up at every call: `stat.add(v)` as written in a training loop."""
    start = time.perf_counter_ns()
    for v in values:
        stat.add(v)
    return (time.perf_counter_ns() - start) / len(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=15)
    parser.add_argument("--samples", type=int, default=200_000)
    args = parser.parse_args()

    rng = random.Random(1)
    values = [rng.gammavariate(4.0, 2.5) for _ in range(args.samples)]
    window = datetime.timedelta(seconds=1)
    torch_stat = monitor.Stat("bench.torch", [getattr(monitor.Aggregation, a) for a in BASIC], window)
    livemon_stat = livemon.Stat("bench.livemon", [getattr(livemon.Aggregation, a) for a in BASIC], window)
    livemon_quantiles = livemon.Stat("bench.livemon_q", [getattr(livemon.Aggregation, a) for a in BASIC] +
                                     [livemon.P50, livemon.P90, livemon.P99], window)
    configurations = {
        "loop floor (a do-nothing builtin)": lambda vs: per_call_ns(id, vs),
        "torch.monitor Stat.add, 5 aggregations": lambda vs: per_call_ns(torch_stat.add, vs),
        "livemon Stat.add, 5 aggregations": lambda vs: per_call_ns(livemon_stat.add, vs),
        "livemon Stat.add, 5 aggregations + p50/p90/p99": lambda vs: per_call_ns(livemon_quantiles.add, vs),
        "torch.monitor stat.add(v), looked up each call": lambda vs: per_call_ns_lookup(torch_stat, vs),
        "livemon stat.add(v), looked up each call": lambda vs: per_call_ns_lookup(livemon_stat, vs),
    }
    results = {name: [] for name in configurations}
    for name, measure in configurations.items():  # warm up
        measure(values[:20_000])
    for _ in range(args.repetitions):
        for name, measure in configurations.items():
            results[name].append(measure(values))

    print(f"python {platform.python_version()}, torch {torch.__version__}, livemon {livemon.__version__}, "
          f"{platform.machine()}, {args.repetitions} repetitions of {args.samples} calls")
    print(f"{'configuration':52s} {'median ns/call':>15s} {'min..max':>17s}")
    for name, times in results.items():
        print(f"{name:52s} {statistics.median(times):15.1f} {min(times):8.1f}..{max(times):<8.1f}")
    torch_median = statistics.median(results["torch.monitor Stat.add, 5 aggregations"])
    livemon_median = statistics.median(results["livemon Stat.add, 5 aggregations"])
    print(f"livemon / torch.monitor: {livemon_median / torch_median:.3f} "
          f"({torch_median / livemon_median:.1f}x faster; goal: at most 0.5)")
    torch_lookup = statistics.median(results["torch.monitor stat.add(v), looked up each call"])
    livemon_lookup = statistics.median(results["livemon stat.add(v), looked up each call"])
    print(f"looked up each call: livemon / torch.monitor: {livemon_lookup / torch_lookup:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
