#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every fuzz target for SECONDS each (default 10) from a copy of its seed corpus, as
# many at once as there are cores (each target is one process for a fixed time, so running
# them side by side gives each the same time and halves the stage on two cores); fails on
# a crash, a sanitizer report, a leak, a hang (-timeout) or runaway memory.
# Usage: tests/fuzz/run-fuzzers.sh BUILD_DIR [SECONDS]
set -euo pipefail
build="${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}"
seconds="${2:-10}"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# One target: new inputs go to the scratch copy, crash reproducers to the scratch folder;
# its report goes to $scratch/NAME.report, and its status is the target's.
fuzz_one() {
  local name="$1" corpus="$2" report="$scratch/$1.report"
  mkdir -p "$scratch/$name"
  cp "$corpus"* "$scratch/$name/"
  if ! "$build/tests/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$scratch/$name-" "$scratch/$name" >"$scratch/$name.log" 2>&1; then
    {
      tail -n 60 "$scratch/$name.log"
      for artifact in "$scratch/$name-"*; do
        [ -f "$artifact" ] && { echo "reproducer $artifact (base64):"; base64 "$artifact" | head -c 4000; echo; }
      done
      echo "fuzz: $name FAILED"
    } >"$report"
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$scratch/$name.log" | sed "s/^/  /" >"$report"
}

jobs_at_once="$(nproc)"
names=()
for corpus in "$here"/corpus/*/; do
  name="$(basename "$corpus")"
  names+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  echo "fuzz: $name for ${seconds} s"
  fuzz_one "$name" "$corpus" &
done
wait || true

failed=0
for name in "${names[@]}"; do
  echo "fuzz: $name"
  if [ ! -f "$scratch/$name.report" ]; then
    echo "fuzz: $name did not finish (no report)"
    failed=1
    continue
  fi
  cat "$scratch/$name.report"
  if grep -q "FAILED" "$scratch/$name.report"; then failed=1; fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target failed (its report is above)" >&2
  exit 1
fi
echo "fuzz: every target ran clean"
