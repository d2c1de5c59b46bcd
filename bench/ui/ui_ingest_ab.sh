#!/usr/bin/env bash
# Runs two builds' ui_ingest (the livemon side only) alternately, ROUNDS times each, and prints
# each run's GUI tick p50, p99, p99 after the first 2 s and max, with the load average when the
# run started; then each build's medians over its runs. The runs alternate so that both builds
# see the same changes in the machine's load.
# usage: bench/ui/ui_ingest_ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS=5] [SECONDS=21]
set -euo pipefail
before=$1 after=$2 rounds=${3:-5} seconds=${4:-21}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    binary=$before
    [ "$side" = after ] && binary=$after
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$binary" --seconds "$seconds" --sides livemon > "$out/run" 2>/dev/null
    figures=$(awk '/GUI tick p50 /{a=$NF} /GUI tick p99 \(/{b=$NF} /GUI tick p99 after/{c=$NF} /GUI tick max/{d=$NF} END {print a, b, c, d}' "$out/run")
    echo "$figures" >> "$out/$side"
    read -r p50 p99 p99w max <<< "$figures"
    printf '%-6s run %d  load %5s  p50 %6s  p99 %6s  p99 after 2 s %6s  max %6s ms\n' "$side" "$round" "$load" "$p50" "$p99" "$p99w" "$max"
  done
done
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
for side in before after; do
  printf '%-6s median  p50 %s  p99 %s  p99 after 2 s %s  max %s ms\n' "$side" \
    "$(cut -d' ' -f1 "$out/$side" | median)" "$(cut -d' ' -f2 "$out/$side" | median)" \
    "$(cut -d' ' -f3 "$out/$side" | median)" "$(cut -d' ' -f4 "$out/$side" | median)"
done
