"""The wheel as a user installs it (scripts/test-python.sh): livemon and livemonctl come from the
virtualenv, carry the one version CMakeLists.txt gives, need no library of livemon's Debian build
packages, meet the manylinux policy the README states, and work together."""

import datetime
import json
import os
import re
import subprocess
import sys
import sysconfig
import time
import zipfile

import pytest

import livemon
from conftest import DEADLINE, SOURCE_DIR, WHEEL, livemonctl_program

pytestmark = pytest.mark.skipif(not WHEEL, reason="runs against an installed wheel (scripts/test-python.sh)")

PACKAGE_DIR = os.path.dirname(os.path.abspath(livemon.__file__))
# What a manylinux wheel may take from the system (the policy's library list); all else ships inside.
SYSTEM_LIBRARIES = {"linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1",
                    "libpthread.so.0", "libresolv.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1"}


def cmake_project_version():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as cmake:
        return re.search(r"project\(livemon VERSION ([0-9.]+)", cmake.read()).group(1)


def ldd(path):
    """{library name: resolved path or 'not found'} of an ELF file, as the dynamic loader resolves it."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    libraries = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+)(?: => (.*?))?(?: \(0x[0-9a-f]+\))?$", line)
        if match:
            libraries[os.path.basename(match.group(1))] = (match.group(2) or match.group(1)).strip()
    return libraries


def test_livemon_is_the_installed_package_not_a_source_or_build_tree():
    site_packages = sysconfig.get_paths()["platlib"]
    assert PACKAGE_DIR == os.path.join(site_packages, "livemon")
    assert sys.prefix != sys.base_prefix  # a virtualenv


def test_one_version_from_cmake_for_the_module_the_wheel_and_livemonctl():
    version = cmake_project_version()
    assert livemon.__version__ == version
    assert os.path.basename(WHEEL).startswith(f"livemon-{version}-")
    done = subprocess.run([livemonctl_program(), "--version"], capture_output=True, text=True, timeout=DEADLINE)
    assert (done.returncode, done.stdout.strip()) == (0, f"livemonctl {version}")


def test_livemonctl_is_the_console_script_of_the_virtualenv():
    assert os.path.dirname(livemonctl_program()) == os.path.dirname(sys.executable)
    done = subprocess.run([livemonctl_program(), "tail", "--no-such-option"], capture_output=True, text=True,
                          timeout=DEADLINE)
    assert done.returncode == 2  # a usage error keeps livemonctl's exit status through the script
    assert "--no-such-option" in done.stderr


@pytest.mark.parametrize("binary", ["extension", "livemonctl"])
def test_needs_no_library_beyond_the_manylinux_system_set(binary):
    if binary == "extension":
        path = livemon._livemon.__file__
    else:
        path = os.path.join(PACKAGE_DIR, "_bin", "livemonctl")
    libraries = ldd(path)
    bundled = os.path.realpath(os.path.join(PACKAGE_DIR, os.pardir, "livemon.libs"))
    outside = {name: where for name, where in libraries.items()
               if name not in SYSTEM_LIBRARIES and not os.path.realpath(where).startswith(bundled + os.sep)}
    assert outside == {}, f"{path} loads libraries from outside the wheel: {outside}"
    if binary == "extension":
        assert not any(name.startswith("libzstd") for name in libraries), f"{path} loads zstd, which it never uses"
    # libzmq (with CURVE: libsodium) and zstd are the wheel's own copies. The module publishes,
    # subscribes and writes TensorBoard files: it links no recording library, so no zstd.
    needed = ("libzmq", "libsodium") if binary == "extension" else ("libzmq", "libsodium", "libzstd")
    for library in needed:
        assert any(name.startswith(library + "-") and os.path.realpath(where).startswith(bundled)
                   for name, where in libraries.items()), f"{path} does not load the wheel's own {library}"


def test_the_wheel_meets_the_manylinux_policy_the_readme_states():
    tag = re.search(r"-(manylinux_\d+_\d+)_x86_64\.whl$", os.path.basename(WHEEL))
    assert tag, f"{WHEEL} is not a manylinux wheel"
    with open(os.path.join(SOURCE_DIR, "README.md"), encoding="utf-8") as readme:
        assert tag.group(1) in readme.read(), f"the README does not state the wheel's policy {tag.group(1)}"
    with zipfile.ZipFile(WHEEL) as wheel:
        names = wheel.namelist()
    assert "livemon/_bin/livemonctl" in names
    assert any(name.startswith("livemon.libs/libzmq") for name in names)


def test_a_python_publisher_reaches_livemonctl_tail():
    with livemon.Publisher("tcp://127.0.0.1:*", run="wheel-tail",
                           heartbeat_interval=datetime.timedelta(milliseconds=50)) as publisher:
        tail = subprocess.Popen([livemonctl_program(), "tail", publisher.endpoints[0], "--json", "--count", "1",
                                 "--filter=wheel."], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + DEADLINE
            # tail connects in its own time (ZeroMQ's slow joiner): publish until it has printed one.
            while tail.poll() is None and time.monotonic() < deadline:
                livemon.log_event(livemon.Event("wheel.hello", datetime.datetime.now(), {"x": 1.5}))
                try:
                    tail.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass
            out, err = tail.communicate(timeout=DEADLINE)
        finally:
            if tail.poll() is None:
                tail.kill()
                tail.wait()
    assert tail.returncode == 0, err
    events = [line for line in map(json.loads, out.splitlines()) if "name" in line]  # beside the "joined" notice
    assert len(events) == 1, out
    printed = events[0]
    assert printed["name"] == "wheel.hello"
    assert printed["data"] == {"x": 1.5}
    assert printed["source"]["run"] == "wheel-tail"
