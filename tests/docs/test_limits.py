"""The limits livemon states are backed by tests that exist: every test docs/limits.md and the
README's "Limits and safety" section name (`Suite.Name`, or `Suite.*` for a whole suite) is a
test in tests/, and every bound the README states names at least one."""

import os
import re

from docs_markdown import SOURCE_DIR, read_document

GTEST = re.compile(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)")
# A backticked `Suite.Name` or `Suite.*`: a test's name as ctest and gtest show it.
NAMED_TEST = re.compile(r"`([A-Z]\w*)\.(\*|[A-Z]\w*)`")
README_SECTION = "## Limits and safety"


def defined_tests():
    """(suite, name) of every GoogleTest test under tests/, and the suites."""
    tests = set()
    for directory, _, files in os.walk(os.path.join(SOURCE_DIR, "tests")):
        for file in files:
            if file.endswith((".cpp", ".h")):
                with open(os.path.join(directory, file), encoding="utf-8") as source:
                    tests.update(GTEST.findall(source.read()))
    return tests, {suite for suite, _ in tests}


def prose_of(path):
    return [(number, text) for number, text in read_document(path, SOURCE_DIR).prose]


def readme_section():
    """The prose lines of the README's "Limits and safety" section."""
    lines, inside = [], False
    for number, text in prose_of("README.md"):
        if text.startswith("## "):
            inside = text.strip() == README_SECTION
        elif inside:
            lines.append((number, text))
    return lines


def named_tests(path, lines):
    # A name may be split over two lines only at a space, never inside the backticks, so one line is enough.
    return [(f"{path}:{number}", suite, name) for number, text in lines for suite, name in NAMED_TEST.findall(text)]


def test_the_readme_has_a_limits_section_that_names_its_tests():
    section = readme_section()
    assert section, f"README.md has no '{README_SECTION}' section"
    rows = [(number, text) for number, text in section if text.startswith("| ") and not text.startswith("|---")]
    assert len(rows) > 1, "the README's limits section states its bounds in a table"
    unbacked = [f"README.md:{number}: {text[:80]}" for number, text in rows[1:] if not NAMED_TEST.search(text)]
    assert unbacked == [], "bounds without a named test:\n" + "\n".join(unbacked)


def test_every_test_the_limits_name_exists():
    tests, suites = defined_tests()
    cited = named_tests("README.md", readme_section()) + named_tests("docs/limits.md", prose_of("docs/limits.md"))
    assert len(cited) > 20
    missing = [f"{where}: {suite}.{name}" for where, suite, name in cited
               if (name == "*" and suite not in suites) or (name != "*" and (suite, name) not in tests)]
    assert missing == [], "named tests that tests/ does not have:\n" + "\n".join(missing)
