#!/usr/bin/env python3
"""Checks that livemon's sources include only what their targets link, along the layers of
docs/architecture.md:

    core -> wire -> transport -> exporters, analysis;  wire -> recording
    -> ui (data -> ingest -> replay -> model -> dashboard -> widgets) -> app

Each library is one folder with one target; its public headers are its include/ and its
internal ones its internal/ (both under livemon/, so several folders share include paths such as
livemon/transport/). Which folder owns a header is read from the tree, so an include is checked
against the folder that owns it: a folder may include the headers of the libraries its target
links, and internal headers only from library folders (and the Python module, tests and
benchmarks), never from ui/ or app/. A library includes no third-party header its target does not
link (core: none; transport: libzmq; recording: zstd and zlib; exporters: prometheus-cpp; no Qt
below ui). No include climbs out of its folder with "..", and no two folders own one include path.

usage: check_layers.py SOURCE_ROOT | --self-test
Prints each offence as FILE:LINE: reason (or FILE: reason) and exits 1 if there is any.
--self-test checks the checker on a made-up tree holding one offence of each kind.
"""
import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc"}
SCANNED = ["core", "wire", "transport", "recording", "exporters", "analysis", "ui", "app", "python", "bench",
           "tests", "examples"]

# The libraries, each with the libraries it links (directly or through another) and the
# third-party include prefixes it must not use.
LIBRARIES = {
    "core": ([], ["zmq", "zstd", "zlib", "prometheus/", "msgpack", "Q"]),
    "wire": (["core"], ["zmq", "zstd", "zlib", "prometheus/", "msgpack", "Q"]),
    "transport": (["wire", "core"], ["zstd", "zlib", "prometheus/", "msgpack", "Q"]),
    "recording": (["wire", "core"], ["zmq", "prometheus/", "msgpack", "Q"]),
    "exporters": (["transport", "wire", "core"], ["zmq", "zstd", "zlib", "msgpack", "Q"]),
    "analysis": (["transport", "wire", "core"], ["zmq", "zstd", "zlib", "prometheus/", "msgpack", "Q"]),
}
# Other folders: the libraries whose public headers they may include, and whether they may
# include internal ones. None: any library.
USERS = {
    "python": (["core", "wire", "transport", "exporters"], True),
    "ui": (["core", "wire", "transport", "recording", "analysis"], False),
    "app": (None, False),
    "examples": (None, False),
    "bench": (None, True),
    "tests": (None, True),
}

# Internal headers that a folder outside the libraries may use, and which: livemonctl's commands
# write every --json output with core's JSON writer.
SHARED_INTERNALS = {"livemon/detail/json_writer.h": ["app/livemonctl/"]}

UI_LAYERS = ["data", "ingest", "replay", "model", "dashboard", "widgets"]

# (folder, include prefixes it must not use, why): what no ownership tells.
RULES = [
    ("python", ["livemon/ui/", "livemonctl/"], "the Python module wraps the libraries only"),
    ("ui", ["livemonctl/"], "the dashboard does not use the livemonctl commands"),
]
for _library in LIBRARIES:
    RULES.append((_library, ["livemon/ui/", "livemonctl/"], f"{_library} is below the ui and the commands"))
for index, layer in enumerate(UI_LAYERS):
    later = [f"livemon/ui/{name}/" for name in UI_LAYERS[index + 1:]]
    if later:
        RULES.append((f"ui/{layer}", later, f"ui/{layer} is below " + ", ".join(UI_LAYERS[index + 1:])))


def owners(root: pathlib.Path):
    """Returns ({include path: (library, internal)}, offences for paths owned twice)."""
    owned = {}
    problems = []
    for library in LIBRARIES:
        for part, internal in (("include", False), ("internal", True)):
            base = root / library / part
            for path in sorted(base.rglob("*")):
                if not path.is_file():
                    continue
                name = path.relative_to(base).as_posix()
                if name in owned:
                    problems.append(f"{library}/{part}/{name}: {name} is also {owned[name][0]}'s")
                else:
                    owned[name] = (library, internal)
    return owned, problems


def offences(rel: str, target: str, owned):
    if target.startswith("../") or "/../" in target or target.startswith("./"):
        yield f"includes {target} by a relative path; use the layer's include root"
    for folder, banned, why in RULES:
        if rel.startswith(folder + "/") and any(target.startswith(prefix) for prefix in banned):
            yield f"includes {target}: {why}"
    folder = rel.split("/", 1)[0]
    if folder in LIBRARIES:
        links, banned = LIBRARIES[folder]
        allowed, internals = [folder] + links, True
        if any(target.startswith(prefix) for prefix in banned):
            yield f"includes {target}: {folder} does not link that library"
    elif folder in USERS:
        allowed, internals = USERS[folder]
    else:
        return
    owner = owned.get(target)
    if owner is None:
        return
    library, internal = owner
    if allowed is not None and library not in allowed:
        yield f"includes {target}, {library}'s: {folder} does not link livemon::{library}"
    shared = any(rel.startswith(prefix) for prefix in SHARED_INTERNALS.get(target, []))
    if internal and not internals and not shared:
        yield f"includes {target}, internal to {library}: only the libraries, tests and benchmarks use internals"


def scan(root: pathlib.Path):
    """Returns (files scanned, offences)."""
    owned, problems = owners(root)
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
                    problems += [f"{rel}:{number}: {why}" for why in offences(rel, match.group(1), owned)]
    return scanned, problems


def self_test() -> int:
    headers = [
        "core/include/livemon/stat.h", "core/include/livemon/event.h", "core/internal/livemon/detail/spin_lock.h",
        "core/internal/livemon/detail/json_writer.h",
        "wire/include/livemon/transport/wire_format.h", "transport/include/livemon/transport/publisher.h",
        "recording/include/livemon/transport/recording.h",
        "exporters/include/livemon/transport/tensorboard_writer.h", "analysis/include/livemon/alert_rules.h",
        "analysis/include/livemon/stat.h",
    ]
    tree = {
        "core/src/a.cpp": ["<livemon/stat.h>", "<livemon/transport/publisher.h>", "<QString>"],
        "wire/src/w.cpp": ["<livemon/event.h>", "<livemon/transport/publisher.h>", "<livemon/detail/spin_lock.h>"],
        "transport/src/b.cpp": ["<livemon/transport/wire_format.h>", "\"../../core/src/spin_lock.h\"",
                                "<livemon/transport/recording.h>", "<zstd.h>", "<zmq.h>"],
        "recording/src/r.cpp": ["<livemon/transport/wire_format.h>", "<zmq.h>", "<zstd.h>"],
        "analysis/src/s.cpp": ["<livemon/transport/publisher.h>", "<livemon/transport/tensorboard_writer.h>"],
        "python/src/p.cpp": ["<livemon/transport/tensorboard_writer.h>", "<livemon/transport/recording.h>"],
        "ui/model/c.cpp": ["<livemon/ui/data/ingest_batch.h>", "<livemon/ui/widgets/main_window.h>"],
        "ui/ingest/i.cpp": ["<livemon/alert_rules.h>", "<livemon/detail/spin_lock.h>",
                            "<livemon/transport/tensorboard_writer.h>"],
        "ui/widgets/d.cpp": ["<livemon/ui/dashboard/dashboard.h>"],
        "app/livemon/e.cpp": ["<livemon/ui/widgets/main_window.h>", "<livemon/transport/recording.h>",
                              "<livemon/detail/json_writer.h>"],
        "app/livemonctl/f.cpp": ["<livemon/detail/json_writer.h>", "<livemon/detail/spin_lock.h>"],
        "tests/t.cpp": ["<livemon/detail/spin_lock.h>"],
    }
    expected = {
        "analysis/include/livemon/stat.h", "core/src/a.cpp:2", "core/src/a.cpp:3", "transport/src/b.cpp:2",
        "transport/src/b.cpp:3", "transport/src/b.cpp:4", "recording/src/r.cpp:2", "wire/src/w.cpp:2",
        "analysis/src/s.cpp:2", "python/src/p.cpp:2", "ui/model/c.cpp:2", "ui/ingest/i.cpp:2", "ui/ingest/i.cpp:3",
        "app/livemon/e.cpp:3", "app/livemonctl/f.cpp:2",
    }
    with tempfile.TemporaryDirectory() as directory:
        root = pathlib.Path(directory)
        for name in headers:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("#pragma once\n")
        for name, includes in tree.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"#include {target}\n" for target in includes))
        _, problems = scan(root)
    found = {":".join(problem.split(":")[:2]) if problem.split(":")[1].isdigit() else problem.split(":")[0]
             for problem in problems}
    return self_test_result(found, expected)


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
