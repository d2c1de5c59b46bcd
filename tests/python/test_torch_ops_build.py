"""livemon.torch_ops: the operator observer compiled at first use for the running torch, cached per
torch build (issue 26). Child processes start with an empty cache of their own
(LIVEMON_CACHE_DIR) and with the package's CMake build hidden, so they depend on the first-use
build alone; they compile for real, with the compiler users have."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import HIDE_CMAKE_BUILD, run_python

torch = pytest.importorskip("torch")
from livemon import torch_ops  # noqa: E402

BUILDING = "building the operator observer for torch"

# With a CMake-built observer hidden, times a few operators through install(ops=True).
TIME_OPERATORS = HIDE_CMAKE_BUILD + """
import torch, livemon, livemon.torch_bridge as bridge
try:
    bridge.install(ops=True)
except ImportError as error:
    print("ImportError", repr(str(error)))
    sys.exit(0)
x = torch.randn(8, 8)
for _ in range(5):
    x = torch.mm(x, x).tanh()
print("timed", bridge.timed_op_count() >= 10, livemon._torch_ops.__file__)
"""


def have_compiler():
    try:
        torch_ops.compile_command(os.devnull)
    except ImportError:
        return False
    return True


needs_compiler = pytest.mark.skipif(not have_compiler(), reason="no C++ compiler or headers to build the observer")


def child_env(cache, **extra):
    env = {"LIVEMON_CACHE_DIR": str(cache)}
    env.update(extra)
    return env


def start(code, env):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))


def cached_library(cache):
    """The one cached build's library, checked against its record."""
    (build,) = [p for p in (cache / "torch_ops").iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = json.loads((build / "build.json").read_text())
    return build / manifest["library"], manifest


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """This process builds into the test's own cache too."""
    monkeypatch.setenv("LIVEMON_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache holding a good build for the running torch, built once for the tests that only
    need one to be there (each copies it: compiling takes 10-30 s)."""
    if not have_compiler():
        pytest.skip("no C++ compiler or headers to build the observer")
    cache = tmp_path_factory.mktemp("built") / "cache"
    saved = os.environ.get("LIVEMON_CACHE_DIR")
    os.environ["LIVEMON_CACHE_DIR"] = str(cache)
    try:
        torch_ops.build()
    finally:
        if saved is None:
            del os.environ["LIVEMON_CACHE_DIR"]
        else:
            os.environ["LIVEMON_CACHE_DIR"] = saved
    return cache


def copy_cache(source, tmp_path):
    shutil.copytree(source, tmp_path / "cache", symlinks=True)
    return tmp_path / "cache"


@needs_compiler
def test_ranks_starting_at_once_build_once_and_later_runs_need_no_compiler(tmp_path):
    cache = tmp_path / "cache"
    ranks = [start(TIME_OPERATORS, child_env(cache)) for _ in range(2)]
    outputs = [rank.communicate(timeout=600) for rank in ranks]
    for rank, (stdout, stderr) in zip(ranks, outputs):
        assert rank.returncode == 0, stderr
        assert stdout.split()[:2] == ["timed", "True"], (stdout, stderr)
    # One of them compiled, with one line saying so; the other waited for it and loaded its build.
    assert sum(stderr.count(BUILDING) for _, stderr in outputs) == 1, outputs
    (building_line,) = [line for _, stderr in outputs for line in stderr.splitlines() if BUILDING in line]
    library, manifest = cached_library(cache)
    assert building_line.startswith("livemon: building the operator observer for torch " + torch.__version__)
    assert f"(once; cached in {library.parent})" in building_line
    assert {stdout.split()[2] for stdout, _ in outputs} == {str(library)}
    assert manifest["identity"] == torch_ops.torch_identity()
    assert not [p for p in (cache / "torch_ops").iterdir() if p.name.startswith(".")]  # no scratch left

    # A second use loads the cached build: no compiler needed, nothing rebuilt.
    built = library.stat().st_mtime_ns
    result = run_python(TIME_OPERATORS, env=child_env(cache, CXX="/nonexistent"))
    assert result.stdout.split() == ["timed", "True", str(library)]
    assert BUILDING not in result.stderr
    assert library.stat().st_mtime_ns == built


def test_a_damaged_cached_build_is_never_loaded_and_is_rebuilt(built_cache, tmp_path):
    cache = copy_cache(built_cache, tmp_path)
    library, _ = cached_library(cache)
    with open(library, "r+b") as file:  # a build cut short, or a disk that lost a block
        file.truncate(os.path.getsize(library) // 2)

    result = run_python(TIME_OPERATORS, env=child_env(cache, CXX="/nonexistent"))
    (message,) = [line for line in result.stdout.splitlines() if line.startswith("ImportError")]
    assert "damaged" in message and "no C++ compiler" in message, message

    result = run_python(TIME_OPERATORS, env=child_env(cache))
    assert result.stdout.split() == ["timed", "True", str(library)]
    assert "livemon: rebuilding (the cached library is damaged" in result.stderr
    assert cached_library(cache)[1]["sha256"] == torch_ops._file_sha256(library)


def test_another_torch_python_or_livemon_gets_its_own_build(built_cache, tmp_path, capfd, monkeypatch):
    identity = torch_ops.torch_identity()
    for field, other in [("torch_version", "2.99.0"), ("torch_git_version", "0" * 40),
                         ("cxx11_abi", not identity["cxx11_abi"]), ("torch_cpu_library", "/elsewhere/libtorch_cpu.so"),
                         ("python", "cpython-399"), ("livemon_version", "0.0.1"), ("sources_sha256", "0" * 64)]:
        assert torch_ops.build_key(dict(identity, **{field: other})) != torch_ops.build_key(identity), field

    copy_cache(built_cache, tmp_path)
    library, _ = cached_library(tmp_path / "cache")
    capfd.readouterr()
    assert torch_ops.build(identity=identity) == str(library)  # a second use: nothing compiled
    assert BUILDING not in capfd.readouterr().err

    # A build recorded for another livemon, found where this one's belongs (a copied cache,
    # say), is never taken for it: it is rebuilt, here without a compiler, so refused.
    other = dict(identity, livemon_version="0.0.1")
    shutil.copytree(library.parent, torch_ops.build_dir(other))
    monkeypatch.setenv("CXX", "/nonexistent")
    with pytest.raises(ImportError, match=r"cannot be used \(it was built for another torch, Python or livemon\) "
                                          r"and cannot be rebuilt: .*no C\+\+ compiler"):
        torch_ops.build(identity=other)
    assert torch_ops.build(identity=identity) == str(library)  # this torch's build is still there


def test_a_missing_compiler_is_named(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    with pytest.raises(ImportError, match=r"no C\+\+ compiler .*'/nonexistent/g\+\+' from \$CXX"):
        torch_ops.build()
    assert not os.path.exists(torch_ops.build_dir())


def test_the_scratch_of_a_build_that_was_killed_is_cleared(monkeypatch):
    key_dir = torch_ops.build_dir()
    scratch = os.path.join(os.path.dirname(key_dir), "." + os.path.basename(key_dir) + ".x1y2z3")
    os.makedirs(os.path.join(scratch, "half"))
    unrelated = os.path.join(os.path.dirname(key_dir), ".another-key.x1y2z3")
    os.makedirs(unrelated)
    monkeypatch.setenv("CXX", "/nonexistent")
    with pytest.raises(ImportError, match="no C"):
        torch_ops.build()
    assert not os.path.exists(scratch)
    assert os.path.isdir(unrelated)  # another key's build may be running


def test_missing_python_headers_are_named(monkeypatch, tmp_path):
    monkeypatch.setattr(torch_ops.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    with pytest.raises(ImportError, match=r"Python's C headers are missing \(no Python.h in .*-dev"):
        torch_ops.compile_command(os.devnull)


def test_missing_torch_headers_are_named(monkeypatch, tmp_path):
    _, library_dir = torch_ops._torch_dirs(torch)
    monkeypatch.setattr(torch_ops, "_torch_dirs", lambda torch: (str(tmp_path), library_dir))
    with pytest.raises(ImportError, match=r"torch's C\+\+ headers are missing \(no ATen/record_function.h in "):
        torch_ops.compile_command(os.devnull)


def test_a_failing_compiler_reports_its_output_and_leaves_nothing_half_built(monkeypatch, tmp_path):
    compiler = tmp_path / "broken-c++"
    compiler.write_text("#!/bin/sh\necho 'error: this compiler is broken' >&2\nexit 3\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("CXX", str(compiler))
    with pytest.raises(ImportError, match=r"(?s)failed \(.*broken-c\+\+ exited with 3.*this compiler is broken"):
        torch_ops.build()
    root = tmp_path / "cache" / "torch_ops"
    assert sorted(p.suffix for p in root.iterdir()) == [".lock", ".log"]  # the log of the failure, no build


def test_the_command_line_builds_ahead_of_time_and_reports(tmp_path):
    info = subprocess.run([sys.executable, "-m", "livemon.torch_ops", "info"], capture_output=True, text=True,
                          check=True, timeout=120)
    lines = info.stdout.splitlines()
    assert lines[0].startswith(f"torch {torch.__version__} (")
    assert lines[1] == f"cache: {torch_ops.build_dir()}"
    assert lines[2].startswith("observer: ")

    failed = subprocess.run([sys.executable, "-m", "livemon.torch_ops", "build"], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, CXX="/nonexistent"))
    assert failed.returncode == 1 and "no C++ compiler" in failed.stderr

    usage = subprocess.run([sys.executable, "-m", "livemon.torch_ops", "bogus"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 2 and "usage:" in usage.stderr
