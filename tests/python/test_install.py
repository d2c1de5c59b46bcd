"""`cmake --install` puts a working package where /usr/bin/python3 looks for one."""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import BUILD_DIR, SOURCE_DIR


@pytest.mark.skipif(not BUILD_DIR or shutil.which("cmake") is None, reason="needs the build tree and cmake")
@pytest.mark.skipif(not sysconfig.get_path("platlib").endswith("dist-packages"),
                    reason="the CMake install is for Debian's python3 (dist-packages); other Pythons install the wheel")
def test_the_installed_package_imports_and_works(tmp_path):
    prefix = tmp_path / "prefix"
    # The module and, in a component of its own (the Debian package leaves it out), the operator
    # observer built ahead of time.
    for component in ("python", "python-torch-ops"):
        subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", str(prefix), "--component", component],
                       check=True, capture_output=True, text=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = prefix / "lib" / version / "dist-packages"
    torch_ops = _built_torch_ops()  # built only where libtorch-dev is installed
    # The package directory as it is in the source tree (the operator observer's source for the
    # build at first use included), plus what was built, and the record of what _torch_ops was
    # linked against.
    sources = os.path.join(SOURCE_DIR, "python", "livemon")
    assert _files_under(site / "livemon") == sorted(
        _files_under(sources) + [os.path.basename(_built_extension())]
        + ([os.path.basename(torch_ops), "_torch_ops_build_info.py"] if torch_ops else []))
    assert {"torch_ops.py", "_torch_ops_src/torch_ops.cpp", "_torch_ops_src/range_api.h"} <= set(_files_under(sources))
    # For the prefixes /usr/local and /usr this directory is on Debian's sys.path already:
    assert sysconfig.get_path("platlib", vars={"platbase": "/usr/local", "base": "/usr/local"}).endswith(
        f"{version}/dist-packages")
    env = dict(os.environ, PYTHONPATH=str(site))
    result = subprocess.run(
        [sys.executable, "-c",
         "import datetime, livemon, livemon.torch_bridge\n"
         "seen = []\n"
         "livemon.register_event_handler(seen.append)\n"
         "s = livemon.Stat('i', [livemon.SUM], datetime.timedelta(hours=1)); s.add(2.0); s.flush()\n"
         "print(livemon.__file__); print(seen[0].data)"],
        check=True, capture_output=True, text=True, env=env, timeout=60)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(str(site))
    assert lines[1] == "{'i.sum': 2.0}"
    if torch_ops:
        result = subprocess.run(
            [sys.executable, "-c", "import livemon._torch_ops as t; print(t.__file__, t.ops_installed())"],
            check=True, capture_output=True, text=True, env=env, timeout=60)
        assert result.stdout.split() == [str(site / "livemon" / os.path.basename(torch_ops)), "False"]


def _built_torch_ops():
    import importlib.util
    spec = importlib.util.find_spec("livemon._torch_ops")
    return spec.origin if spec else None


def _built_extension():
    import livemon._livemon
    return livemon._livemon.__file__


def _files_under(directory):
    """The files under `directory`, as sorted relative paths, without Python's caches."""
    found = []
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        found += [os.path.relpath(os.path.join(folder, name), directory) for name in files if not name.endswith(".pyc")]
    return sorted(found)
