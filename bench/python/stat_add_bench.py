#!/usr/bin/env python3
"""Stat.add called from Python: livemon next to torch.monitor, in the same process and run.

    build/python-dist/venv/bin/python bench/python/stat_add_bench.py [--repetitions 15]

(torch 2.13 from the virtualenv; /usr/bin/python3 measures against Debian's torch 1.13.)
Each measurement is a plain loop over 200 000 step-time-like samples (gamma distributed,
milliseconds), in three forms: `add(v)` with the bound method looked up once, `stat.add(v)` looking
the method up at every call, and `stat.add(v=v)`, the keyword torch.monitor names.
The configurations run interleaved, repetition by repetition, so machine noise hits all of them
alike. Each is timed in CPU time of the calling thread: the machine is shared, and wall time would
count the time other processes had the core (--wall times wall time all the same). The table
shows the median and the spread (min..max) of the per-call times, then the ratio livemon /
torch.monitor of the medians for each form. Windows are 1 s, so windows really close during the
run. The loop alone (calling `callable(v)`, a builtin that does nothing and allocates nothing) is
shown as the floor any Python call pays. The load average before and after is printed too.
Results: docs/benchmarks.md, section "Python".
"""

import argparse
import datetime
import os
import platform
import random
import statistics
import sys
import time

import livemon
import torch
import torch.monitor as monitor

BASIC = ["MEAN", "COUNT", "SUM", "MAX", "MIN"]
# The calling thread's CPU time: on a shared machine, time spent descheduled for other processes
# would otherwise double some repetitions and not others. (--wall measures wall time instead.)
CLOCK = time.thread_time_ns


def per_call_ns(add, values):
    start = CLOCK()
    for v in values:
        add(v)
    return (CLOCK() - start) / len(values)


def per_call_ns_lookup(stat, values):
    """The same, looking the method up at every call: `stat.add(v)` as written in a training loop."""
    start = CLOCK()
    for v in values:
        stat.add(v)
    return (CLOCK() - start) / len(values)


def per_call_ns_keyword(stat, values):
    """`stat.add(v=v)`: the keyword form torch.monitor's signature names."""
    start = CLOCK()
    for v in values:
        stat.add(v=v)
    return (CLOCK() - start) / len(values)


def load_average():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=15)
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--wall", action="store_true", help="time with the wall clock, not thread CPU time")
    args = parser.parse_args()
    if args.wall:
        global CLOCK
        CLOCK = time.perf_counter_ns

    rng = random.Random(1)
    values = [rng.gammavariate(4.0, 2.5) for _ in range(args.samples)]
    window = datetime.timedelta(seconds=1)
    torch_stat = monitor.Stat("bench.torch", [getattr(monitor.Aggregation, a) for a in BASIC], window)
    livemon_stat = livemon.Stat("bench.livemon", [getattr(livemon.Aggregation, a) for a in BASIC], window)
    livemon_quantiles = livemon.Stat("bench.livemon_q", [getattr(livemon.Aggregation, a) for a in BASIC] +
                                     [livemon.P50, livemon.P90, livemon.P99], window)
    configurations = {
        "loop floor (callable(v), a do-nothing builtin)": lambda vs: per_call_ns(callable, vs),
        "torch.monitor add(v), 5 aggregations": lambda vs: per_call_ns(torch_stat.add, vs),
        "livemon add(v), 5 aggregations": lambda vs: per_call_ns(livemon_stat.add, vs),
        "livemon add(v), 5 aggregations + p50/p90/p99": lambda vs: per_call_ns(livemon_quantiles.add, vs),
        "torch.monitor stat.add(v), looked up each call": lambda vs: per_call_ns_lookup(torch_stat, vs),
        "livemon stat.add(v), looked up each call": lambda vs: per_call_ns_lookup(livemon_stat, vs),
        "torch.monitor stat.add(v=v)": lambda vs: per_call_ns_keyword(torch_stat, vs),
        "livemon stat.add(v=v)": lambda vs: per_call_ns_keyword(livemon_stat, vs),
    }
    try:
        livemon.Stat("bench.probe", [livemon.SUM], window).add(v=1.0)
    except TypeError:  # a livemon from before Stat.add took v= (for before/after comparisons)
        del configurations["livemon stat.add(v=v)"]
    load_before = load_average()
    results = {name: [] for name in configurations}
    for name, measure in configurations.items():  # warm up
        measure(values[:20_000])
    for _ in range(args.repetitions):
        for name, measure in configurations.items():
            results[name].append(measure(values))

    print(f"python {platform.python_version()} ({sys.executable}), torch {torch.__version__}, "
          f"livemon {livemon.__version__}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"{args.repetitions} repetitions of {args.samples} calls, "
          f"{'wall time' if args.wall else 'CPU time of the calling thread'}")
    print(f"load average (1/5/15 min) before {load_before}, after {load_average()}")
    print(f"{'configuration':52s} {'median ns/call':>15s} {'min..max':>17s}")
    for name, times in results.items():
        print(f"{name:52s} {statistics.median(times):15.1f} {min(times):8.1f}..{max(times):<8.1f}")
    for form, torch_name, livemon_name in [
            ("add(v), bound once", "torch.monitor add(v), 5 aggregations", "livemon add(v), 5 aggregations"),
            ("stat.add(v)", "torch.monitor stat.add(v), looked up each call",
             "livemon stat.add(v), looked up each call"),
            ("stat.add(v=v)", "torch.monitor stat.add(v=v)", "livemon stat.add(v=v)")]:
        if livemon_name not in results:
            continue
        theirs = statistics.median(results[torch_name])
        ours = statistics.median(results[livemon_name])
        print(f"{form:20s} livemon / torch.monitor: {ours / theirs:.3f} ({theirs / ours:.1f}x faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
