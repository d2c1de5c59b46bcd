#!/usr/bin/python3
"""Checks Chrome trace-event JSON files written by livemon.

    check_chrome_trace.py [--expect-names a,b,...] [--min-threads N] [--min-files N] FILE_OR_DIR...

Each file must parse as JSON with a "traceEvents" list; every "X" event needs name, pid, tid and
numeric ts and dur (dur >= 0); every thread with an "X" event has a "thread_name" metadata event;
on each thread the ranges nest properly (two ranges either are disjoint or one contains the
other), and a range's "depth" argument is at least the number of recorded ranges around it.
A directory stands for its *.pt.trace.json files. Prints one summary line per file and exits 1
with the reason at the first failure.
"""

import argparse
import collections
import json
import os
import sys


def fail(path, message):
    print(f"{path}: {message}", file=sys.stderr)
    sys.exit(1)


def check_file(path, expect_names, min_threads):
    with open(path, encoding="utf-8") as f:
        try:
            document = json.load(f)
        except json.JSONDecodeError as error:
            fail(path, f"not JSON: {error}")
    events = document.get("traceEvents") if isinstance(document, dict) else None
    if not isinstance(events, list):
        fail(path, "no traceEvents list")
    named_threads = {}
    ranges = collections.defaultdict(list)
    for event in events:
        phase = event.get("ph")
        if phase == "M" and event.get("name") == "thread_name":
            named_threads[(event["pid"], event["tid"])] = event["args"]["name"]
        elif phase == "X":
            for key in ("name", "pid", "tid", "ts", "dur"):
                if key not in event:
                    fail(path, f"X event without {key}: {event}")
            if not isinstance(event["ts"], (int, float)) or not isinstance(event["dur"], (int, float)):
                fail(path, f"ts and dur must be numbers: {event}")
            if event["dur"] < 0:
                fail(path, f"negative dur: {event}")
            ranges[(event["pid"], event["tid"])].append(event)
    names = set()
    deepest = 0
    for thread, thread_ranges in ranges.items():
        if thread not in named_threads:
            fail(path, f"thread {thread} has ranges but no thread_name metadata")
        # Enclosing ranges first; a range must end within every range still open around it.
        thread_ranges.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_ends = []
        for event in thread_ranges:
            start, end = event["ts"], event["ts"] + event["dur"]
            while open_ends and open_ends[-1][0] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1][0]:
                fail(path, f"range {event['name']} [{start}, {end}] overlaps {open_ends[-1][1]} "
                           f"ending at {open_ends[-1][0]} on thread {thread} without nesting")
            depth = event.get("args", {}).get("depth")
            if depth is not None and depth < len(open_ends):
                fail(path, f"range {event['name']} has depth {depth} inside {len(open_ends)} ranges")
            open_ends.append((end, event["name"]))
            deepest = max(deepest, len(open_ends))
            names.add(event["name"])
    missing = [n for n in expect_names if n not in names]
    if missing:
        fail(path, f"no range named {', '.join(missing)} (found {', '.join(sorted(names))})")
    if len(ranges) < min_threads:
        fail(path, f"ranges on {len(ranges)} threads, expected at least {min_threads}")
    print(f"{path}: {sum(len(r) for r in ranges.values())} ranges on {len(ranges)} threads, "
          f"nesting depth {deepest}, names {', '.join(sorted(names))}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--expect-names", default="")
    parser.add_argument("--min-threads", type=int, default=1)
    parser.add_argument("--min-files", type=int, default=1)
    args = parser.parse_args()
    expect_names = [n for n in args.expect_names.split(",") if n]
    files = []
    for path in args.paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".pt.trace.json"))
        else:
            files.append(path)
    if len(files) < args.min_files:
        fail(" ".join(args.paths), f"{len(files)} trace files, expected at least {args.min_files}")
    for path in files:
        check_file(path, expect_names, args.min_threads)


if __name__ == "__main__":
    main()
