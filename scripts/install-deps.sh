#!/usr/bin/env bash
# Installs the Debian packages livemon needs that are not installed yet.
# Sourced by run.sh and test.sh; also runnable on its own: scripts/install-deps.sh [--test]
# (--test adds what the tests and the fuzz targets need)
set -euo pipefail

# By library: transport libzmq3-dev; recording libzstd-dev and zlib1g-dev; exporters
# prometheus-cpp-dev; livemonctl libcli11-dev.
LIVEMON_BUILD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libzmq3-dev libzstd-dev zlib1g-dev prometheus-cpp-dev libcli11-dev
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  python3-dev pybind11-dev
)
LIVEMON_RUN_PACKAGES=(xvfb xauth)
# The fuzz targets (tests/fuzz): clang and its libFuzzer and sanitizer runtimes.
LIVEMON_FUZZ_PACKAGES=(clang libclang-rt-14-dev)
LIVEMON_TEST_PACKAGES=(
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # msgpack-cxx: the wire tests' and the wire decoder fuzz target's independent decoder
  libmsgpack-cxx-dev
  python3 python3-zmq python3-msgpack
  # The tests parse JSON output with a real parser.
  nlohmann-json3-dev
  # scripts/test-python.sh: virtualenvs of the python3 first on PATH (Debian's needs python3-venv),
  # ldd for the wheel's libraries
  python3-venv libc-bin
  python3-pytest python3-torch python3-protobuf
  # The CMake build also compiles livemon._torch_ops (PyTorch's operators as ranges) for Debian's
  # torch when libtorch's headers are there: libtorch-dev is the same libtorch1.13 that
  # python3-torch loads. Under any other torch the observer is compiled at first use instead.
  libtorch-dev
  prometheus
  # scripts/test-packages.sh: the Debian packages' checks (dpkg-shlibdeps comes with build-essential)
  lintian desktop-file-utils
)

livemon_missing_packages() {
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      printf '%s\n' "$pkg"
    fi
  done
}

# livemon_install_packages PKG... : installs those of PKG that are missing.
livemon_install_packages() {
  local missing
  mapfile -t missing < <(livemon_missing_packages "$@")
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  echo "livemon: installing missing packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "livemon: these packages are missing and I am not root: ${missing[*]}" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists yet; an old list may name versions that are gone.
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  packages=("${LIVEMON_BUILD_PACKAGES[@]}" "${LIVEMON_RUN_PACKAGES[@]}")
  if [ "${1:-}" = "--test" ]; then
    packages+=("${LIVEMON_TEST_PACKAGES[@]}" "${LIVEMON_FUZZ_PACKAGES[@]}")
  fi
  livemon_install_packages "${packages[@]}"
fi
