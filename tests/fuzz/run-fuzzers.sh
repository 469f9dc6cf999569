#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every fuzz target for SECONDS each (default 10) from a copy of its seed corpus;
# fails on a crash, a sanitizer report, a leak, a hang (-timeout) or runaway memory.
# Usage: tests/fuzz/run-fuzzers.sh BUILD_DIR [SECONDS]
set -euo pipefail
build="${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}"
seconds="${2:-10}"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for corpus in "$here"/corpus/*/; do
  name="$(basename "$corpus")"
  mkdir -p "$scratch/$name"
  cp "$corpus"* "$scratch/$name/"
  echo "fuzz: $name for ${seconds} s"
  # New inputs go to the scratch copy; crash reproducers to the scratch folder, printed on failure.
  if ! "$build/tests/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$scratch/$name-" "$scratch/$name" >"$scratch/$name.log" 2>&1; then
    tail -n 60 "$scratch/$name.log"
    for artifact in "$scratch/$name-"*; do
      [ -f "$artifact" ] && { echo "reproducer $artifact (base64):"; base64 "$artifact" | head -c 4000; echo; }
    done
    echo "fuzz: $name FAILED" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$scratch/$name.log" | sed "s/^/  /"
done
echo "fuzz: every target ran clean"
