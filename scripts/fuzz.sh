#!/usr/bin/env bash
# Runs livemon's fuzz targets for as long as asked, one after the other:
#   scripts/fuzz.sh TARGET|all [SECONDS] [-- LIBFUZZER_OPTION...]
# TARGET: wire_decoder, subscriber, recording, time_bound, alert_rule, history_protocol, history_exchange,
# curve_certificate, relay_capture or view_decoder; SECONDS per target (default 60).
# Builds the fuzz build (build-fuzz, clang) when needed and writes fresh seeds. What the fuzzer
# learns is kept in .cache/fuzz/TARGET (so the next run starts from there), crashing inputs in
# .cache/fuzz/artifacts/TARGET/. At the end it prints each target's executions and coverage.
# docs/fuzzing.md says how to turn a crash into a regression input.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

targets_all=(wire_decoder subscriber recording time_bound alert_rule history_protocol history_exchange curve_certificate relay_capture view_decoder)
usage() {
  echo "usage: scripts/fuzz.sh TARGET|all [SECONDS] [-- LIBFUZZER_OPTION...]" >&2
  echo "targets: ${targets_all[*]}" >&2
  exit 2
}
[ $# -ge 1 ] || usage
if [ "$1" = all ]; then
  targets=("${targets_all[@]}")
else
  case " ${targets_all[*]} " in
    *" $1 "*) targets=("$1") ;;
    *) usage ;;
  esac
fi
shift
seconds=60
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
  [[ "$1" =~ ^[1-9][0-9]*$ ]] || usage
  seconds=$1
  shift
fi
extra=()
if [ $# -ge 1 ]; then
  [ "$1" = "--" ] || usage
  shift
  extra=("$@")
fi

build=${LIVEMON_FUZZ_BUILD_DIR:-$root/build-fuzz}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVEMON_FUZZ=ON
fi
cmake --build "$build" --target livemon_fuzzers -j "${LIVEMON_JOBS:-$(nproc)}"
seeds="$build/tests/fuzz/seeds"
"$build/tests/fuzz/livemon_fuzz_seeds" "$seeds"

summary=()
failed=0
for target in "${targets[@]}"; do
  corpus="$root/.cache/fuzz/$target"
  artifacts="$root/.cache/fuzz/artifacts/$target/"
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "$seeds/$target")
  [ -d "tests/fuzz/regressions/$target" ] && inputs+=("tests/fuzz/regressions/$target")
  read -r -a options < <(cmake -DTARGET="$target" -P tests/fuzz/fuzz_options.cmake 2>&1)
  log="$root/.cache/fuzz/$target.log"
  printf '\n==== fuzz_%s for %s s (corpus %s)\n' "$target" "$seconds" "$corpus"
  status=0
  "$build/tests/fuzz/fuzz_$target" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts" "${extra[@]}" "${inputs[@]}" 2>&1 | tee "$log" || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  size=$(find "$corpus" -type f | wc -l)
  line="$target: ${runs:-?} executions, coverage ${cov:-?} edges (${ft:-?} features), $size inputs in $corpus"
  if [ "$status" -ne 0 ]; then
    line+=" -- FAILED (exit $status), input in $artifacts"
    failed=1
  fi
  summary+=("$line")
done

printf '\n==== summary\n'
printf '%s\n' "${summary[@]}"
exit "$failed"
