"""Every Python example of README.md and docs/*.md runs, and prints what its comments say
(tests/docs/docs_markdown.py says how examples are marked)."""

import importlib.util
import os
import sys

import pytest

from conftest import SOURCE_DIR, run_python

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "docs"))
from docs_markdown import examples, expected_prints  # noqa: E402

EXAMPLES = examples(SOURCE_DIR, language="python")


def test_the_docs_have_python_examples():
    assert any(example.path == "README.md" and example.mode == "run" for example in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.path}:{e.line}" for e in EXAMPLES])
def test_the_example_runs(example, tmp_path, monkeypatch, request):
    if example.mode == "compile":
        compile(example.code, f"{example.path}:{example.line}", "exec")  # it needs a running peer
        return
    if example.requires and importlib.util.find_spec(example.requires) is None:
        pytest.skip(f"{example.requires} is not installed")
    if "ops=True" in example.code:
        request.getfixturevalue("operator_observer")  # built (once) here, or the test skips saying why
    # In a directory of its own (examples write traces/ and runs/); a Publisher the example opens
    # connects to a socket nobody serves instead of binding tcp://127.0.0.1:5555, which tests
    # running beside it may hold. LIVEMON_CONNECT is how a job joins a relay, so the example's
    # code runs unchanged.
    monkeypatch.chdir(tmp_path)
    result = run_python(example.code, timeout=300, env={"LIVEMON_CONNECT": f"ipc://{tmp_path}/no-relay"}, check=False)
    assert result.returncode == 0, f"{example.path}:{example.line} failed:\n{result.stdout}\n{result.stderr}"
    expected = expected_prints(example.code)
    if expected:
        assert result.stdout.splitlines() == expected
