#!/usr/bin/env bash
# The Python distribution as a user gets it, tested the way a user runs it:
#   1. builds the wheel with pip from pyproject.toml (scikit-build-core driving the CMake build),
#      warnings as errors, with pinned build tools (python/requirements-build.txt);
#   2. makes it self-contained with auditwheel (libzmq, libsodium, zstd... copied into the wheel)
#      and prints the manylinux policy it meets;
#   3. installs it into a fresh virtualenv of the python3 first on PATH, beside torch 2.13 and the
#      pinned test requirements (tests/python/requirements.txt);
#   4. runs tests/python there, against the installed package and its livemonctl.
# Called by test.sh; runnable on its own from the repository root once the Debian packages are in
# (scripts/install-deps.sh --test). Environment: LIVEMON_PYTHON (default python3), LIVEMON_JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${LIVEMON_PYTHON:-python3}
jobs=${LIVEMON_JOBS:-$(nproc)}
out="$root/build/python-dist"
# This machine's pip configuration names local indexes that may be missing; pip says so for every
# package. Only that line is dropped from pip's output.
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

# A virtualenv at $1 holding the requirements file $2, remade when the file or the Python changes.
requirements_venv() {
  local dir=$1 requirements=$2 stamp
  stamp="$("$python" -c 'import sys; print(sys.version)') $(sha256sum "$requirements" | cut -d' ' -f1)"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.livemon-stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  rm -rf "$dir"
  "$python" -m venv "$dir"
  quiet_pip "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  printf '%s' "$stamp" >"$dir/.livemon-stamp"
}

echo "-- build tools: $root/.cache/venv-build"
requirements_venv "$root/.cache/venv-build" python/requirements-build.txt
tools="$root/.cache/venv-build/bin"

echo "-- pip wheel . (scikit-build-core, CMake)"
rm -rf "$out"
mkdir -p "$out/dist"
cmake_defines=(-C cmake.define.LIVEMON_WERROR=ON -C "build.tool-args=-j$jobs")
if command -v ccache >/dev/null 2>&1; then
  cmake_defines+=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
PATH="$tools:$PATH" quiet_pip "$tools/pip" wheel . --no-build-isolation --no-deps --disable-pip-version-check \
  --wheel-dir "$out/dist" "${cmake_defines[@]}"

echo "-- auditwheel repair"
PATH="$tools:$PATH" "$tools/auditwheel" repair --wheel-dir "$out/wheelhouse" "$out"/dist/livemon-*.whl
wheel=$(ls "$out"/wheelhouse/livemon-*.whl)
PATH="$tools:$PATH" "$tools/auditwheel" show "$wheel" | sed -n '1,3p'
echo "-- wheel: $(basename "$wheel")"

echo "-- a fresh virtualenv: the wheel, then torch 2.13 and the test requirements"
venv="$out/venv"
"$python" -m venv "$venv"
quiet_pip "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
quiet_pip "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
"$venv/bin/livemonctl" --version

echo "-- tests/python against the installed wheel (torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'))"
# From a directory of its own, so nothing of the source tree shadows the installed package; one
# pytest per file, $jobs at a time, as ctest runs them for the build tree.
work="$out/tests"
mkdir -p "$work"
# The operator observer is compiled at first use (livemon.torch_ops) into a cache of this run's own.
export LIVEMON_SOURCE_DIR="$root" LIVEMON_WHEEL="$wheel" PYTHONDONTWRITEBYTECODE=1 LIVEMON_CACHE_DIR="$out/cache"
unset LIVEMON_BUILD_DIR PYTHONPATH
status=0
(cd "$work" && ls "$root"/tests/python/test_*.py |
  xargs -P "$jobs" -I{} sh -c '"$0" -m pytest -q -p no:cacheprovider --rootdir "$1" "$2" >"$1/$(basename "$2" .py).log" 2>&1 \
    && echo "passed: $(basename "$2")" || { echo "FAILED: $(basename "$2")"; cat "$1/$(basename "$2" .py).log"; exit 1; }' \
    "$venv/bin/python" "$work" {}) || status=$?
files=$(ls "$root"/tests/python/test_*.py | wc -l)
if [ "$status" -ne 0 ]; then
  echo "tests/python under the wheel: failures (logs in $work)" >&2
  exit 1
fi
tests=$(cat "$work"/test_*.log | sed -n 's/^\([0-9]*\) passed.*/\1/p; s/.* \([0-9]*\) passed.*/\1/p' | awk '{n += $1} END {print n + 0}')
echo "tests/python under the wheel: $tests tests passed ($files files)"
