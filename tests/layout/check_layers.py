#!/usr/bin/env python3
"""Checks that livemon's sources include only downwards, along the data flow
core -> transport -> ui (data -> ingest -> replay -> model -> dashboard -> widgets) -> app,
and that no include climbs out of its folder with "..".

usage: check_layers.py SOURCE_ROOT | --self-test
Prints each offending include as FILE:LINE: reason and exits 1 if there is any. --self-test checks
the checker on a made-up tree holding one offence of each kind.
"""
import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc"}
SCANNED = ["core", "transport", "ui", "app", "python", "bench", "tests", "examples"]

UI_LAYERS = ["data", "ingest", "replay", "model", "dashboard", "widgets"]

# (folder, include prefixes it must not use, why). A layer must not include a later layer, nor a
# library its target does not link: core has no ZeroMQ, MessagePack or Qt; transport has no Qt.
RULES = [
    ("core", ["livemon/transport/", "livemon/ui/", "livemonctl/", "zmq", "msgpack", "Q"],
     "core links no transport, ui, ZeroMQ, MessagePack or Qt"),
    ("transport", ["livemon/ui/", "livemonctl/", "Q"], "transport is below the ui and the commands"),
    ("python", ["livemon/ui/", "livemonctl/"], "the Python module wraps core and transport only"),
    ("ui", ["livemonctl/"], "the dashboard does not use the livemonctl commands"),
]
for index, layer in enumerate(UI_LAYERS):
    later = [f"livemon/ui/{name}/" for name in UI_LAYERS[index + 1:]]
    if later:
        RULES.append((f"ui/{layer}", later, f"ui/{layer} is below " + ", ".join(UI_LAYERS[index + 1:])))


def offences(rel: str, target: str):
    if target.startswith("../") or "/../" in target or target.startswith("./"):
        yield f"includes {target} by a relative path; use the layer's include root"
    for folder, banned, why in RULES:
        if rel.startswith(folder + "/") and any(target.startswith(prefix) for prefix in banned):
            yield f"includes {target}: {why}"


def scan(root: pathlib.Path):
    """Returns (files scanned, offences)."""
    problems = []
    scanned = 0
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            scanned += 1
            rel = path.relative_to(root).as_posix()
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if match:
                    problems += [f"{rel}:{number}: {why}" for why in offences(rel, match.group(1))]
    return scanned, problems


def self_test() -> int:
    tree = {
        "core/src/a.cpp": ["<livemon/stat.h>", "<livemon/transport/publisher.h>", "<QString>"],
        "transport/src/b.cpp": ["<livemon/event.h>", "\"../../core/src/spin_lock.h\""],
        "ui/model/c.cpp": ["<livemon/ui/data/ingest_batch.h>", "<livemon/ui/widgets/main_window.h>"],
        "ui/widgets/d.cpp": ["<livemon/ui/dashboard/dashboard.h>"],
        "app/livemon/e.cpp": ["<livemon/ui/widgets/main_window.h>"],
    }
    expected = {
        "core/src/a.cpp:2", "core/src/a.cpp:3", "transport/src/b.cpp:2", "ui/model/c.cpp:2",
    }
    with tempfile.TemporaryDirectory() as directory:
        root = pathlib.Path(directory)
        for name, includes in tree.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"#include {target}\n" for target in includes))
        _, problems = scan(root)
    return self_test_result({":".join(problem.split(":")[:2]) for problem in problems}, expected)


def self_test_result(found, expected) -> int:
    """Says whether a self-test flagged exactly the offences it planted."""
    if found != expected:
        print(f"self-test: flagged {sorted(found)}, expected {sorted(expected)}", file=sys.stderr)
        return 1
    print(f"self-test: the {len(expected)} planted offences were found, nothing else")
    return 0


def run(doc, scan_tree, self_test_tree, offences_are) -> int:
    """The command line of a tree checker (this one, check_threading_comments.py): SOURCE_ROOT or
    --self-test. `scan_tree(root)` returns (files scanned, offences)."""
    if len(sys.argv) != 2:
        print(doc, file=sys.stderr)
        return 2
    if sys.argv[1] == "--self-test":
        return self_test_tree()
    scanned, problems = scan_tree(pathlib.Path(sys.argv[1]))
    for problem in problems:
        print(problem)
    if scanned == 0:
        print(f"no sources found under {sys.argv[1]}", file=sys.stderr)
        return 1
    print(f"{scanned} files scanned, {len(problems)} {offences_are}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(run(__doc__, scan, self_test, "includes against the layering"))
