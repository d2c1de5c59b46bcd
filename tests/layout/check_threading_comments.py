#!/usr/bin/env python3
"""Checks that the comment above every class and struct of livemon's libraries, the dashboard (ui/)
and app/ starts with its threading contract, in one of the wordings ui/README.md lists (a
qualification may follow it, after a full stop, a comma, a colon, a semicolon or in brackets):

  Thread-safe: <which members, from which threads>
  GUI thread only
  Not thread-safe: one owner at a time
  Immutable after construction: any thread
  Thread-safety: a plain value type

Checked: the classes and structs at namespace scope of every header under the folders of CHECKED,
and those nested in a public section (a private helper type falls under its class's contract).

usage: check_threading_comments.py SOURCE_ROOT | --self-test
Prints each offending type as FILE:LINE: NAME: reason and exits 1 if there is any.
"""
import pathlib
import re
import sys
import tempfile

from check_layers import run, self_test_result

WORDINGS = [
    "Thread-safe: ",
    "GUI thread only",
    "Not thread-safe: one owner at a time",
    "Immutable after construction: any thread",
    "Thread-safety: a plain value type",
]
QUALIFIER = re.compile(r"$|[.,:;]|\s\(")
CHECKED = ["core", "wire", "transport", "recording", "exporters", "analysis", "ui", "app"]

TYPE = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(class|struct)\s+(\w+)\b[^;]*$")
ACCESS = re.compile(r"^\s*(public|protected|private)\s*:")


def comment_above(lines, index):
    """The comment lines right above lines[index], first to last, without their slashes."""
    if index > 0 and lines[index - 1].strip().startswith("template"):
        index -= 1  # the comment stands above the template's head
    start = index
    while start > 0 and lines[start - 1].strip().startswith("//"):
        start -= 1
    return [line.strip()[2:].strip() for line in lines[start:index]]


def types(text):
    """Yields (line number, name) for each checked class or struct definition in a header."""
    lines = text.splitlines()
    # A stack of the enclosing braces: (kind, access) for a class or struct, None for another block.
    stack = []
    for number, line in enumerate(lines):
        code = line.split("//", 1)[0]
        access = ACCESS.match(code)
        if access and stack and stack[-1] is not None:
            stack[-1] = (stack[-1][0], access.group(1))
        match = TYPE.match(code)
        opens_type = match is not None and "{" in code + (lines[number + 1] if number + 1 < len(lines) else "")
        if opens_type:
            outer = [entry for entry in stack if entry is not None]
            visible = all(entry[1] == "public" for entry in outer)
            if visible:
                yield number + 1, match.group(2), comment_above(lines, number)
        for char in code:
            if char == "{":
                if opens_type:
                    kind = match.group(1)
                    stack.append((kind, "public" if kind == "struct" else "private"))
                    opens_type = False
                else:
                    stack.append(None)
            elif char == "}" and stack:
                stack.pop()


def follows(line, wording):
    """Whether `line` starts with `wording`, ended there or by a qualification."""
    if not line.startswith(wording):
        return False
    return wording.endswith(" ") or QUALIFIER.match(line[len(wording):]) is not None


def offences(text):
    for number, name, comment in types(text):
        if not comment:
            yield number, name, "no comment: start one with its threading contract"
        elif not any(follows(comment[0], wording) for wording in WORDINGS):
            yield number, name, f'starts "{comment[0][:60]}", not a wording of ui/README.md'


def scan(root):
    problems = []
    scanned = 0
    for folder in CHECKED:
        for path in sorted((root / folder).rglob("*.h")):
            scanned += 1
            rel = path.relative_to(root).as_posix()
            problems += [f"{rel}:{number}: {name}: {why}" for number, name, why in offences(path.read_text())]
    return scanned, problems


def self_test():
    header = "\n".join([
        "// Thread-safety: a plain value type.",
        "struct Good {",
        "  int a = 0;",
        "};",
        "// Thread-compatible: old wording.",
        "class OldWording {",
        " public:",
        "  struct Options {",  # nested public, no comment
        "    int b = 0;",
        "  };",
        " private:",
        "  struct Hidden {",  # nested private: not checked
        "  };",
        "};",
        "// GUI thread onlyish.",
        "struct RunOn {",
        "};",
        "class Forward;",
        "class Bare {",
        "};",
        "// GUI thread only. Its worker answers through queued signals.",
        "class Fine : public Base {",
        "  struct PrivateByDefault {",
        "  };",
        "};",
    ])
    expected = {(6, "OldWording"), (8, "Options"), (16, "RunOn"), (19, "Bare")}
    with tempfile.TemporaryDirectory() as directory:
        root = pathlib.Path(directory)
        (root / "ui" / "model").mkdir(parents=True)
        (root / "ui" / "model" / "a.h").write_text(header)
        _, problems = scan(root)
    return self_test_result({(int(problem.split(":")[1]), problem.split(":")[2].strip()) for problem in problems},
                            expected)


if __name__ == "__main__":
    sys.exit(run(__doc__, scan, self_test, "types without a threading contract in the set"))
