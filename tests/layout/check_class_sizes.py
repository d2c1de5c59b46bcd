#!/usr/bin/env python3
"""Checks the two size limits of docs/architecture.md on livemon's own code (not tests):

  - no source file over 500 lines;
  - no class or struct with more than 25 data members (a class that needs more holds parts).

Data members are counted from the source text: each declaration statement directly in a class's
body that declares no function (`int a, b;` counts two; static members, types, aliases, friends
and functions do not count; nested classes count on their own). That is what a reader of the
class counts, and it agrees with the compiler's count on this tree (checked against clang's AST).

usage: check_class_sizes.py SOURCE_ROOT | --self-test
Prints each offence as FILE:LINE: reason (or FILE: reason) and exits 1 if there is any.
"""
import pathlib
import re
import sys
import tempfile

from check_layers import run, self_test_result

MAX_LINES = 500
MAX_MEMBERS = 25
CHECKED = ["core", "wire", "transport", "recording", "exporters", "analysis", "ui", "app", "python", "bench",
           "examples"]
SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".py"}

CLASS_HEAD = re.compile(r"\b(class|struct)\s+(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_][\w:]*)\s*(?:final\s*)?(?::[^;{()]*)?\{")
# What comes before a member function's body: `f(...) const noexcept override {`, `-> T {`, or a
# constructor's `X(...) : a(1), b{2} {`.
FUNCTION_HEAD = re.compile(r"\)\s*(?:const|noexcept|override|final|mutable|volatile|&|&&|\s)*(?:->[^{;]*)?$")
CONSTRUCTOR_INIT = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({][^;]*$")
NOT_MEMBERS = re.compile(r"^\s*(using|typedef|friend|static|enum|template|class|struct|union|public|private|"
                         r"protected|Q_OBJECT|Q_PROPERTY|Q_ENUM|signals|slots|return)\b")


def strip_comments_and_strings(text: str) -> str:
    """The text with comments, string and character literals blanked (lines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: "".join("\n" if c == "\n" else " " for c in m.group(0)), text)


def strip_angles(statement: str) -> str:
    """The statement with template arguments removed (`std::function<void(int)>` has no call)."""
    out, depth = [], 0
    for index, char in enumerate(statement):
        if char == "<" and statement[index + 1:index + 2] not in ("<", "=") and statement[index - 1:index] != "<":
            depth += 1
        elif char == ">" and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def members_of(statement: str) -> int:
    """Data members a statement directly in a class body declares (0 for anything else)."""
    statement = " ".join(statement.split())
    if not statement or NOT_MEMBERS.match(statement) or statement.startswith(("operator", "~", "explicit ")):
        return 0
    plain = strip_angles(statement)
    plain = re.split(r"=|\{", plain, maxsplit=1)[0]  # an initializer may call things
    pointer = re.search(r"\(\s*\*", plain)  # a function pointer is a member
    if not pointer and ("(" in plain or "operator" in plain):  # a function
        return 0
    depth, declarators = 0, 1
    for char in strip_angles(statement):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "," and depth == 0:
            declarators += 1
    return declarators


def classes(text: str):
    """Yields (line, name, data members) for every class and struct defined in `text`."""
    code = strip_comments_and_strings(text)
    for match in CLASS_HEAD.finditer(code):
        start = match.end()
        depth, statement, count, index, function_body = 0, [], 0, start, False
        while index < len(code):
            char = code[index]
            if char == "{":
                if depth == 0 and re.search(r"\b(class|struct|union|enum)\b[^;]*$", "".join(statement)):
                    # A nested type: skip its body; what follows up to ';' declares members of it
                    # (`struct {...} a;` counts a).
                    inner, index = 1, index + 1
                    while index < len(code) and inner:
                        inner += {"{": 1, "}": -1}.get(code[index], 0)
                        index += 1
                    statement = ["struct _ "]
                    continue
                if depth == 0:
                    head = strip_angles("".join(statement))
                    function_body = bool(FUNCTION_HEAD.search(head) or CONSTRUCTOR_INIT.search(head))
                depth += 1
                statement.append(char)
            elif char == "}":
                if depth == 0:
                    break
                depth -= 1
                statement.append(char)
                if depth == 0 and function_body:
                    statement, function_body = [], False  # a member function's body ended
            elif char == ";" and depth == 0:
                text_of = "".join(statement)
                if text_of.lstrip().startswith("struct _ "):
                    count += members_of(text_of.replace("struct _ ", "int ", 1)) if text_of.strip() != "struct _" else 0
                else:
                    count += members_of(re.sub(r"^\s*(?:public|private|protected|signals|Q_SIGNALS|public slots|"
                                               r"private slots|protected slots)\s*:", "", text_of))
                statement = []
            elif char == ":" and depth == 0 and re.fullmatch(r"\s*(public|private|protected|signals|Q_SIGNALS|"
                                                             r"(public|private|protected)\s+slots)\s*",
                                                             "".join(statement)):
                statement = []
            else:
                statement.append(char)
            index += 1
        yield code.count("\n", 0, match.start()) + 1, match.group(2), count


def scan(root: pathlib.Path):
    """Returns (files scanned, offences)."""
    scanned, problems = 0, []
    for folder in CHECKED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            scanned += 1
            text = path.read_text(errors="replace")
            lines = text.count("\n")
            if lines > MAX_LINES:
                problems.append(f"{rel}: {lines} lines, over {MAX_LINES}: split it by what its parts do")
            if path.suffix == ".py":
                continue
            for line, name, count in classes(text):
                if count > MAX_MEMBERS:
                    problems.append(f"{rel}:{line}: {name} has {count} data members, over {MAX_MEMBERS}")
    return scanned, problems


def self_test() -> int:
    small = "struct Small {\n" + "".join(f"  int m{i} = {i};\n" for i in range(25)) + "  void f(int x);\n};\n"
    big = ("class Big : public Base {\n public:\n  Big() : a(1) {}\n  int f() const { return a; }\n"
           "  static int s;\n  using T = int;\n  std::function<void(int)> callback;\n  int (*pointer)(int);\n"
           "  struct Inner { int x; int y; } inner;\n  enum class E { A, B };\n"
           + "".join(f"  std::vector<int> v{i}{{1, 2}};\n" for i in range(10))
           + "  int a, b, c;\n  std::map<int, int> map;\n  QString s = QString(\"x;y\");  // c; d;\n"
           + "".join(f"  double d{i};\n" for i in range(8)) + "};\n")
    # Big: callback, pointer, inner, v0..v9, a, b, c, map, s, d0..d7 = 26; Inner: 2.
    tree = {
        "core/src/small.h": small,
        "ui/model/big.h": big,
        "app/long.cpp": "int x;\n" * (MAX_LINES + 1),
        "python/livemon/long.py": "x = 1\n" * (MAX_LINES + 1),
        "tests/long_test.cpp": "int x;\n" * (MAX_LINES + 1),
    }
    expected = {"ui/model/big.h:1", "app/long.cpp", "python/livemon/long.py"}
    with tempfile.TemporaryDirectory() as directory:
        root = pathlib.Path(directory)
        for name, text in tree.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        _, problems = scan(root)
    found = {problem.split(": ")[0] for problem in problems}
    counts = {name: count for _, name, count in classes(big)}
    if counts.get("Big") != 26 or counts.get("Inner") != 2:
        print(f"self-test: counted {counts}, expected Big 26 and Inner 2", file=sys.stderr)
        return 1
    return self_test_result(found, expected)


if __name__ == "__main__":
    sys.exit(run(__doc__, scan, self_test, "offences against the size limits"))
