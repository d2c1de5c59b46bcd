#!/usr/bin/env bash
# Installs what is missing, builds livemon, and runs the whole test suite:
#   1. a Release build of everything, warnings as errors, and its tests (the Python tests there
#      under /usr/bin/python3, with Debian's torch 1.13);
#   1b. the Python wheel (pip wheel ., auditwheel) installed into a fresh virtualenv of the python3
#      first on PATH with torch 2.13, and tests/python run against it (scripts/test-python.sh);
#   2. the non-GUI tests again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the non-GUI tests again under ThreadSanitizer;
#   4. the fuzz targets (clang, libFuzzer): each over its seeds and regression inputs, then a few
#      seconds of new inputs (scripts/fuzz.sh runs them longer);
#   5. a consumer project built against the installed CMake package: a publish-only job
#      (COMPONENTS transport) and a tool using recordings, the exporters and the analyses (ctest's
#      installed_package also reads what each links);
#   6. the Debian packages: cpack -G DEB in the Release build, lintian, installed (for real on CI,
#      into a scratch root elsewhere) and checked, then removed (scripts/test-packages.sh).
# It also installs the npm packages of tests/interop (the official MCAP reader) into .cache/npm.
# Environment: LIVEMON_JOBS (default: number of cores), LIVEMON_SKIP_SANITIZERS=1 to skip 2 and 3,
# LIVEMON_SKIP_FUZZ=1 to skip 4.
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)

source scripts/install-deps.sh
livemon_install_packages "${LIVEMON_BUILD_PACKAGES[@]}" "${LIVEMON_TEST_PACKAGES[@]}"
if [ "${LIVEMON_SKIP_FUZZ:-0}" != "1" ]; then
  livemon_install_packages "${LIVEMON_FUZZ_PACKAGES[@]}"
fi

# The MCAP interoperability test reads recordings with the official reader, @mcap/core, run by
# node. Debian's nodejs and npm only when the machine has no node of its own.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  livemon_install_packages nodejs npm
fi
mkdir -p .cache/npm
cp tests/interop/package.json .cache/npm/package.json
(cd .cache/npm && npm install --no-audit --no-fund --no-package-lock --loglevel=error)

jobs=${LIVEMON_JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the clone, so another clone of the same tree (a CI checkout) hits the cache.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi

step() { printf '\n==== %s (at %d min %02d s)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

passed=0
configure_build_test() {
  local dir=$1
  shift
  cmake -S "$root" -B "$dir" -G Ninja "${launcher[@]}" -DLIVEMON_WERROR=ON "$@"
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 300)
  # ctest failed the script above if any test failed; count what ran.
  local count
  count=$(cd "$dir" && ctest -N | sed -n 's/^Total Tests: \([0-9]*\)$/\1/p')
  passed=$((passed + ${count:-0}))
}

step "Release build and tests"
configure_build_test build -DCMAKE_BUILD_TYPE=Release

step "Python wheel in a fresh virtualenv, with torch 2.13"
scripts/test-python.sh | tee build/test-python.log
python_passed=$(sed -n 's/^tests\/python under the wheel: \([0-9]*\) tests passed.*/\1/p' build/test-python.log)
passed=$((passed + ${python_passed:-0}))

if [ "${LIVEMON_SKIP_SANITIZERS:-0}" != "1" ]; then
  step "AddressSanitizer + UndefinedBehaviorSanitizer (without the GUI)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    configure_build_test build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVEMON_SANITIZER=address,undefined \
    -DLIVEMON_BUILD_UI=OFF -DLIVEMON_BUILD_BENCH=OFF

  step "ThreadSanitizer (without the GUI)"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
    configure_build_test build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVEMON_SANITIZER=thread \
    -DLIVEMON_BUILD_UI=OFF -DLIVEMON_BUILD_BENCH=OFF
fi

if [ "${LIVEMON_SKIP_FUZZ:-0}" != "1" ]; then
  step "Fuzz targets: seeds and regression inputs, then 5 s of new inputs each"
  configure_build_test build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVEMON_FUZZ=ON \
    -DLIVEMON_FUZZ_EXPLORE_SECONDS=5
fi

step "Install, then build a consumer project against the installed package"
prefix="$root/build/install-test"
rm -rf "$prefix" build/consumer
cmake --install build --prefix "$prefix"
cmake -S tests/install/consumer -B build/consumer -G Ninja "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix"
cmake --build build/consumer
./build/consumer/livemon_publish_only
./build/consumer/livemon_consumer

step "Debian packages: build, lint, install, check, remove"
scripts/test-packages.sh build | tee build/test-packages.log
package_checks=$(sed -n 's/^Debian packages: \([0-9]*\) checks passed$/\1/p' build/test-packages.log)
passed=$((passed + ${package_checks:-0}))

step "All tests passed"
echo "livemon: ${passed} passed, 0 failed"
