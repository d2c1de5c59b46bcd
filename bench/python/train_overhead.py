#!/usr/bin/python3
"""What livemon costs a real PyTorch training job: examples/pytorch_train.py's loop with no
instrumentation, with livemon's instrumentation (Stats, a WaitCounter, epoch events), and with
that plus a Publisher, in one process. The variants take turns run by run, in alternating order
(ABC CBA ...), so drift and machine noise hit them alike.

    build/python-dist/venv/bin/python bench/python/train_overhead.py [--rounds 10]   # torch 2.13
    PYTHONPATH=build/python /usr/bin/python3 bench/python/train_overhead.py                     # Debian's 1.13

Reported per variant, as medians over its runs: the time per step of whole runs (everything
included: data, forward, backward, optimizer, instrumentation, epoch evaluation), the CPU time
of the training thread per step (less sensitive to other processes on a shared machine), and
the CPU time of the whole process per step (which adds livemon's window thread and the
publisher's I/O thread). Then, measured apart and far more precisely, what the instrumentation
calls of one step cost (5 Stat.add and one WaitCounter guard) against the step time, and the CPU
time livemon's own threads take while the job sleeps.
Results: docs/benchmarks.md, section "Python".
"""

import argparse
import datetime
import statistics
import sys
import tempfile
import time

from example_loader import load_example


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="runs of each variant (default %(default)s)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs per run (default %(default)s)")
    parser.add_argument("--steps-per-epoch", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default %(default)s)")
    args = parser.parse_args()

    example = load_example()
    endpoint = f"ipc://{tempfile.mkdtemp()}/bench.sock"
    train_args = example.parse_args(["--epochs", str(args.epochs), "--duration", "0", "--steps-per-epoch",
                                     str(args.steps_per_epoch), "--threads", str(args.threads),
                                     "--endpoint", endpoint, "--quiet"])
    variants = {
        "without livemon": lambda: example.NoMonitor(train_args),
        "livemon instrumentation": lambda: example.LivemonMonitor(train_args, publish=False),
        "livemon instrumentation + Publisher": lambda: example.LivemonMonitor(train_args),
    }
    measures = ("run ms/step", "thread CPU ms/step", "process CPU ms/step")
    results = {name: {m: [] for m in measures} for name in variants}
    example.train(train_args, example.NoMonitor(train_args), log=None)  # warm up
    for round_index in range(args.rounds):
        order = list(variants.items())
        if round_index % 2:
            order.reverse()
        for name, make in order:
            monitor = make()
            try:
                wall, thread, process = time.perf_counter_ns(), time.thread_time_ns(), time.process_time_ns()
                steps = len(example.train(train_args, monitor, log=None))
                wall, thread, process = (time.perf_counter_ns() - wall, time.thread_time_ns() - thread,
                                         time.process_time_ns() - process)
            finally:
                monitor.close()
            for measure, ns in zip(measures, (wall, thread, process)):
                results[name][measure].append(ns / 1e6 / steps)

    import torch
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); {args.rounds} runs of "
          f"{args.epochs} x {args.steps_per_epoch} steps per variant, in alternating order; medians")
    base = {m: statistics.median(results["without livemon"][m]) for m in measures}
    print(f"{'variant':38s}" + "".join(f"{m:>24s}" for m in measures))
    for name in variants:
        cells = []
        for m in measures:
            value = statistics.median(results[name][m])
            cells.append(f"{value:.3f}" + ("" if name == "without livemon" else f" ({100 * (value - base[m]) / base[m]:+.1f} %)"))
        print(f"{name:38s}" + "".join(f"{c:>24s}" for c in cells))

    # The instrumentation of one step on its own, many times over.
    monitor = example.LivemonMonitor(train_args, publish=False)
    calls = 200_000
    start = time.perf_counter_ns()
    for _ in range(calls):
        with monitor.loading():
            pass
        monitor.step(1.25, 64, 8.0, 3.5, 0.01)
    per_step_us = (time.perf_counter_ns() - start) / calls / 1000
    monitor.close()
    step_ms = base["run ms/step"]
    print(f"instrumentation calls per step: {per_step_us:.2f} us = {100 * per_step_us / 1000 / step_ms:.3f} % "
          f"of a {step_ms:.2f} ms step (goal: overhead under 1 %)")

    # The threads livemon adds, while the job does nothing: CPU time per second of wall time.
    import livemon
    for name, make in (("no livemon object", lambda: None),
                       ("an idle Publisher", lambda: livemon.Publisher(endpoint)),
                       ("a Publisher and 6 Stats with 1 s windows, 1 sample every 8 ms",
                        lambda: livemon.Publisher(endpoint))):
        holder = make()
        stats = [livemon.Stat(f"bench.idle{i}", [livemon.MEAN, livemon.P99], datetime.timedelta(seconds=1))
                 for i in range(6)] if "Stats" in name else []
        cpu, wall = time.process_time_ns(), time.perf_counter_ns()
        while time.perf_counter_ns() - wall < 3e9:
            for stat in stats:
                stat.add(1.0)
            time.sleep(0.008)
        cpu, wall = time.process_time_ns() - cpu, time.perf_counter_ns() - wall
        print(f"process CPU with {name}: {1000 * cpu / wall:.2f} ms per s")
        del stats
        if holder is not None:
            holder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
