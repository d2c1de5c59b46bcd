#!/usr/bin/env bash
# Installs what is missing, builds livemon in Release, starts the demo training job and opens the
# dashboard connected to it. Closing the dashboard stops the demo.
# Until a build has the dashboard, it runs the example training loop, which prints each Stat
# window as it closes (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")"

source scripts/install-deps.sh
livemon_install_packages "${LIVEMON_BUILD_PACKAGES[@]}" "${LIVEMON_RUN_PACKAGES[@]}"

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DLIVEMON_BUILD_TESTS=OFF -DLIVEMON_BUILD_BENCH=OFF
cmake --build build-release -j "${LIVEMON_JOBS:-$(nproc)}"

endpoint=${LIVEMON_ENDPOINT:-tcp://127.0.0.1:5555}
if [ -x build-release/app/livemon/livemon ] && [ -x build-release/app/livemonctl/livemonctl ]; then
  if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "run.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the dashboard cannot open." >&2
    echo "        On a headless machine: xvfb-run -a ./run.sh   or watch from a terminal:" >&2
    echo "        build-release/app/livemonctl/livemonctl demo & build-release/app/livemonctl/livemonctl tail $endpoint" >&2
    exit 1
  fi
  build-release/app/livemonctl/livemonctl demo --endpoint "$endpoint" &
  demo=$!
  trap 'kill "$demo" 2>/dev/null; wait "$demo" 2>/dev/null || true' EXIT
  build-release/app/livemon/livemon "$endpoint"
else
  exec build-release/examples/print_stats "$@"
fi
