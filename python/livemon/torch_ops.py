"""Builds and loads livemon._torch_ops, the operator observer, for the torch that is running.

``livemon.torch_bridge.install(ops=True)`` times PyTorch's operators with a libtorch
RecordFunction observer, a C++ extension. PyTorch has no stable C++ ABI: an extension compiled
against one torch aborts the process or silently times nothing under another one, and pip's
wheels switched ``_GLIBCXX_USE_CXX11_ABI`` at torch 2.7. So livemon does not ship the observer
compiled; it ships its source (``livemon/_torch_ops_src/``) and compiles it against the torch it
finds, once, the first time ``install(ops=True)`` needs it::

    livemon: building the operator observer for torch 2.13.0+cpu (once; cached in ~/.cache/livemon/torch_ops/...)

This takes 10-30 s and needs a C++ compiler (``$CXX``, else ``c++``), Python's C headers and
torch's own headers and libraries (pip's torch wheels ship them). Compiling at first use, rather
than shipping compiled observers in livemon's wheel, works for every torch a user may have
(release, nightly, CPU or CUDA, either C++ ABI) without a livemon wheel per torch version, and
``import livemon`` never needs torch. The compile command follows ``torch.utils.cpp_extension``
(torch's include and library directories, the C++ ABI flag torch reports, C++20 as torch 2.13's
headers ask, an rpath to torch/lib) but is one compiler call, run directly: ninja, which
``cpp_extension.load`` needs, is not.

Cache: ``$LIVEMON_CACHE_DIR/torch_ops/<key>/`` (default ``~/.cache/livemon``, or
``$XDG_CACHE_HOME/livemon``). The key names the torch (version, git commit, C++ ABI, the library
files it loads), the Python ABI, livemon's version and a hash of the observer's source: a different
torch, Python or livemon gets its own build, and a build is loaded only when its recorded key and
its file's checksum match, so a stale, foreign or damaged build is never loaded (it is rebuilt
when a compiler is there). Processes starting at once on one machine (ranks of a job) build once:
a file lock serialises them, the build happens in a scratch directory and is renamed into place.

Ahead of time, for images and clusters without a compiler where jobs run::

    python -m livemon.torch_ops build     # compile for the torch of this python (--force: again)
    python -m livemon.torch_ops info      # the key, the cache directory and what would be loaded

A CMake build of livemon next to libtorch-dev (Debian's torch 1.13) also compiles the observer
into the package, with ``_torch_ops_build_info.py`` naming the libtorch files it was linked
against; that build is loaded only when the running torch loads those same files.
"""

import argparse
import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

MODULE = "livemon._torch_ops"
_RECIPE = 1  # bumped when the compile command changes, so that older builds are made again
_SOURCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_ops_src")
_SOURCES = ("torch_ops.cpp", "range_api.h")
_MANIFEST = "build.json"
_load_lock = threading.Lock()


def _torch_dirs(torch):
    """torch's include and library directories, as torch.utils.cpp_extension finds them (without
    importing it: under torch 1.13 that import prints a CUDA notice on machines without CUDA)."""
    root = os.path.dirname(os.path.abspath(torch.__file__))
    return os.path.join(root, "include"), os.path.join(root, "lib")


def _sources_hash():
    digest = hashlib.sha256()
    for name in _SOURCES:
        path = os.path.join(_SOURCE_DIR, name)
        try:
            with open(path, "rb") as source:
                content = source.read()
        except OSError as error:
            raise ImportError(f"livemon's operator observer source is missing ({path}): reinstall livemon") from error
        digest.update(name.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def torch_identity():
    """What an observer build must match: the running torch, Python and livemon (a dict)."""
    import torch

    _, library_dir = _torch_dirs(torch)
    livemon = sys.modules.get("livemon")
    return {
        "torch_version": torch.__version__,
        "torch_git_version": getattr(getattr(torch, "version", None), "git_version", None),
        "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
        "torch_cpu_library": os.path.realpath(os.path.join(library_dir, "libtorch_cpu.so")),
        "c10_library": os.path.realpath(os.path.join(library_dir, "libc10.so")),
        "python": sys.implementation.cache_tag,
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "machine": platform.machine(),
        "livemon_version": getattr(livemon, "__version__", None),
        "sources_sha256": _sources_hash(),
        "recipe": _RECIPE,
    }


def cache_root():
    """The directory that holds the observer builds, one subdirectory per key."""
    base = os.environ.get("LIVEMON_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "livemon")
    return os.path.join(base, "torch_ops")


def build_key(identity):
    """The cache subdirectory's name: readable, and unique per identity."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    readable = f"torch-{identity['torch_version']}-{'cxx11' if identity['cxx11_abi'] else 'cxx98'}-{identity['python']}"
    return "".join(c if c.isalnum() or c in ".+-_" else "_" for c in readable) + "-" + digest


def build_dir(identity=None):
    """Where the observer for `identity` (default: the running torch) is, or would be, cached."""
    identity = identity or torch_identity()
    return os.path.join(cache_root(), build_key(identity))


def _file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cached_build(directory, identity):
    """(path of the loadable library, None), or (None, why there is none)."""
    try:
        with open(os.path.join(directory, _MANIFEST)) as file:
            manifest = json.load(file)
    except FileNotFoundError:
        return None, "not built yet"
    except (OSError, ValueError) as error:
        return None, f"its record {_MANIFEST} is unreadable ({error})"
    if not isinstance(manifest, dict) or manifest.get("identity") != identity:
        return None, "it was built for another torch, Python or livemon"
    library = os.path.join(directory, str(manifest.get("library")))
    try:
        if _file_sha256(library) != manifest.get("sha256"):
            return None, "the cached library is damaged (its checksum differs)"
    except OSError:
        return None, "the cached library is missing"
    return library, None


def _cmake_build_matches(identity):
    """Whether the package holds a CMake-built _torch_ops linked against the running torch's
    library files (a build without _torch_ops_build_info.py is never trusted)."""
    try:
        if importlib.util.find_spec(MODULE) is None:
            return False
        info_spec = importlib.util.find_spec("livemon._torch_ops_build_info")
    except (ImportError, ValueError):
        return False
    if info_spec is None:
        return False
    return _build_info_matches(importlib.import_module("livemon._torch_ops_build_info"), identity)


def _build_info_matches(info, identity):
    """Whether a CMake build's record names the library files the running torch loads."""
    return (getattr(info, "TORCH_CPU_LIBRARY", None) == identity["torch_cpu_library"]
            and getattr(info, "C10_LIBRARY", None) == identity["c10_library"])


def _compiler():
    command = os.environ.get("CXX") or "c++"
    argv = shlex.split(command)
    if not argv or shutil.which(argv[0]) is None:
        raise ImportError(
            f"livemon: no C++ compiler to build the operator observer with ({command!r} "
            f"{'from $CXX ' if os.environ.get('CXX') else ''}not found): install one (Debian: apt install g++) "
            "or set CXX, or build it ahead of time where there is one: python -m livemon.torch_ops build")
    return argv


def _pybind11_include(torch_include, python_include):
    candidates = [torch_include]  # pip's torch wheels bundle pybind11's headers
    with contextlib.suppress(ImportError):
        import pybind11
        candidates.append(pybind11.get_include())
    candidates += [os.path.dirname(python_include), "/usr/local/include", "/usr/include"]
    for directory in candidates:
        if os.path.isfile(os.path.join(directory, "pybind11", "pybind11.h")):
            return directory
    raise ImportError("livemon: pybind11's headers are missing, needed to build the operator observer "
                      "(this torch does not bundle them): pip install pybind11")


def compile_command(output, identity=None):
    """The compiler command that builds the observer into `output` (a list), after checking that
    everything it needs is there; raises ImportError naming what is missing."""
    import torch

    identity = identity or torch_identity()
    compiler = _compiler()
    python_include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(python_include, "Python.h")):
        raise ImportError(f"livemon: Python's C headers are missing (no Python.h in {python_include}), needed to "
                          "build the operator observer: install this Python's development files "
                          f"(Debian: apt install python{sys.version_info[0]}.{sys.version_info[1]}-dev)")
    torch_include, torch_lib = _torch_dirs(torch)
    if not os.path.isfile(os.path.join(torch_include, "ATen", "record_function.h")):
        raise ImportError(f"livemon: torch's C++ headers are missing (no ATen/record_function.h in {torch_include}), "
                          f"needed to build the operator observer: this torch {torch.__version__} was installed "
                          "without them")
    for library in ("libc10.so", "libtorch_cpu.so"):
        if not os.path.exists(os.path.join(torch_lib, library)):
            raise ImportError(f"livemon: torch's library {library} is missing from {torch_lib}, needed to build "
                              "the operator observer")
    includes = ["-isystem", torch_include]
    pybind11_include = _pybind11_include(torch_include, python_include)
    # The compiler's own directories stay out: naming /usr/include again breaks #include_next.
    if pybind11_include not in (torch_include, "/usr/include", "/usr/local/include"):
        includes += ["-isystem", pybind11_include]
    includes += ["-isystem", python_include]
    return [*compiler, "-std=c++20", "-O2", "-DNDEBUG", "-fPIC", "-shared", "-fvisibility=hidden",
            f"-D_GLIBCXX_USE_CXX11_ABI={int(identity['cxx11_abi'])}", *includes,
            os.path.join(_SOURCE_DIR, "torch_ops.cpp"), "-o", output,
            "-L", torch_lib, "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{torch_lib}"]


@contextlib.contextmanager
def _locked(path):
    try:
        lock = open(path, "a")
    except OSError as error:
        raise ImportError(f"livemon: cannot write to the operator observer's cache ({error}); set "
                          "LIVEMON_CACHE_DIR to a writable directory") from error
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        except OSError:
            pass  # a file system without locks (some NFS mounts): builds may overlap, renames keep each whole
        yield


def build(force=False, identity=None):
    """Compiles the observer for the running torch into the cache unless a good build is there
    (`force`: compile anyway). Returns the library's path; raises ImportError when something it
    needs is missing or the compiler fails. Safe to run from several processes at once."""
    identity = identity or torch_identity()
    parent = cache_root()
    key = build_key(identity)
    final = os.path.join(parent, key)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        raise ImportError(f"livemon: cannot create the operator observer's cache {parent} ({error}); "
                          "set LIVEMON_CACHE_DIR to a writable directory") from error
    with _locked(os.path.join(parent, key + ".lock")):
        library, reason = _cached_build(final, identity)
        if library is not None and not force:
            return library  # there already, or another process has just built it
        for leftover in os.listdir(parent):  # scratch of a build that was killed: only the lock holder makes it
            if leftover.startswith(f".{key}."):
                shutil.rmtree(os.path.join(parent, leftover), ignore_errors=True)
        name = "_torch_ops" + identity["ext_suffix"]
        staging = tempfile.mkdtemp(prefix=f".{key}.", dir=parent)
        try:
            # Checks the compiler, Python's headers and torch's headers and libraries first.
            try:
                command = compile_command(os.path.join(staging, name), identity)
            except ImportError as error:
                if reason == "not built yet":
                    raise
                raise ImportError(f"livemon: the cached operator observer in {final} cannot be used ({reason}) "
                                  f"and cannot be rebuilt: {error}") from error
            verb = "building" if force or reason == "not built yet" else f"rebuilding ({reason})"
            print(f"livemon: {verb} the operator observer for torch {identity['torch_version']} "
                  f"(once; cached in {final})", file=sys.stderr, flush=True)
            started = time.monotonic()
            result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            log = os.path.join(parent, key + ".failed.log")
            if result.returncode != 0:
                with open(log, "w") as file:
                    file.write(shlex.join(command) + "\n\n" + result.stdout + result.stderr)
                tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-15:])
                raise ImportError(f"livemon: compiling the operator observer for torch {identity['torch_version']} "
                                  f"failed ({command[0]} exited with {result.returncode}; command and output in "
                                  f"{log}):\n{tail}")
            manifest = {"identity": identity, "library": name, "sha256": _file_sha256(os.path.join(staging, name)),
                        "command": command, "seconds": round(time.monotonic() - started, 1),
                        "built": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            with open(os.path.join(staging, _MANIFEST), "w") as file:
                json.dump(manifest, file, indent=1)
            os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide a shared cache from other users
            if os.path.lexists(final):  # a stale or damaged build: out of the way first
                trash = tempfile.mkdtemp(prefix=f".{key}.old.", dir=parent)
                os.rename(final, os.path.join(trash, "build"))
                shutil.rmtree(trash, ignore_errors=True)
            os.rename(staging, final)  # readers see the whole build or none
            with contextlib.suppress(FileNotFoundError):
                os.remove(log)  # an earlier failure's
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return os.path.join(final, name)


def _import_library(path):
    spec = importlib.util.spec_from_file_location(MODULE, path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as error:
        raise ImportError(f"livemon: the operator observer {path} does not load ({error}); remove "
                          f"{os.path.dirname(path)} to build it again") from error
    sys.modules[MODULE] = module
    setattr(sys.modules["livemon"], "_torch_ops", module)
    return module


def load(build_if_needed=True):
    """livemon._torch_ops for the running torch: the one already loaded, the CMake-built one when
    it was linked against this torch, else the cached build, compiled first when there is none
    and `build_if_needed`. Raises ImportError saying what is missing."""
    with _load_lock:
        module = sys.modules.get(MODULE)
        if module is not None:
            return module
        identity = torch_identity()
        if _cmake_build_matches(identity):
            return importlib.import_module(MODULE)
        library, reason = _cached_build(build_dir(identity), identity)
        if library is None:
            if not build_if_needed:
                raise ImportError(f"livemon._torch_ops is not built for torch {identity['torch_version']} "
                                  f"({reason}): install(ops=True) builds it, or python -m livemon.torch_ops build")
            library = build(identity=identity)
        return _import_library(library)


def loaded():
    """livemon._torch_ops if it is loaded, else None (never loads or builds it)."""
    return sys.modules.get(MODULE)


def _info():
    identity = torch_identity()
    directory = build_dir(identity)
    library, reason = _cached_build(directory, identity)
    if _cmake_build_matches(identity):
        status = f"the CMake-built {MODULE} in the package matches this torch and is used"
    elif library is not None:
        status = f"built: {library}"
    else:
        status = f"not built ({reason}); install(ops=True) or `python -m livemon.torch_ops build` builds it"
    print(f"torch {identity['torch_version']} ({'CXX11' if identity['cxx11_abi'] else 'pre-CXX11'} ABI, "
          f"{identity['torch_cpu_library']}), Python {identity['python']}, livemon {identity['livemon_version']}")
    print(f"cache: {directory}")
    print(f"observer: {status}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m livemon.torch_ops",
                                     description="Build livemon's operator observer for the torch of this Python.")
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="compile the observer into the cache (once)")
    build_parser.add_argument("--force", action="store_true", help="compile again even when a good build is there")
    commands.add_parser("info", help="the cache key and directory, and which build would be loaded")
    args = parser.parse_args(argv)
    if args.command == "info":
        return _info()
    try:
        path = build(force=args.force)
    except ImportError as error:
        print(error, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
