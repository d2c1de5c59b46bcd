#!/usr/bin/python3
"""Runs `livemonctl demo --trace-dir` for a moment and checks the traces it writes with
tests/core/check_chrome_trace.py: valid trace-event JSON, ranges nested per thread, the demo's
range names present.

    check_demo_trace.py LIVEMONCTL
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "..", "core", "check_chrome_trace.py")


def main():
    livemonctl = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="livemon-demo-trace-") as tmp:
        traces = os.path.join(tmp, "traces")
        demo = subprocess.run([livemonctl, "demo", "--endpoint", f"ipc://{tmp}/demo.sock", "--duration", "2",
                               "--steps-per-second", "50", "--trace-dir", traces, "--trace-schedule", "2", "1", "3", "2",
                               "--seed", "3"], capture_output=True, text=True, timeout=120)
        if demo.returncode != 0:
            print(demo.stdout, demo.stderr, file=sys.stderr)
            sys.exit(f"livemonctl demo exited with {demo.returncode}")
        print(demo.stdout, end="")
        sys.exit(subprocess.run([sys.executable, CHECKER, "--min-files", "2",
                                 "--expect-names", "train_step,data,forward,backward,allreduce,optimizer",
                                 traces]).returncode)


if __name__ == "__main__":
    main()
