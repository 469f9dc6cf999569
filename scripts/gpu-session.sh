#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on a GPU server: builds the GPU targets (gpu-server preset, sm_90 only, or with
# CUDA_ARCHITECTURES=project the project's own list, as ./run.sh builds it), then
# runs what the arguments name, logs under $OUT (default out/gpu-session):
#   tests   ctest -L gpu          bench   fp8lab bench gpu (all presets, 200 steps), SM clock and power
#   torch   scripts/pytorch_mlp_reference.py                  keep   copy the binary to $OUT
#   clocks  SM clock and power while the large preset trains and while its GEMM runs alone
#   same    the FP8 amax traces and losses of tiny and small equal those of $BASE_EXE, for each
#           recipe of $SAME_RECIPES (default: delayed)
#   same-transformer  the same for the transformer at its CPU default size (60 steps)
#   profile each kernel's time (Nsight Compute) in 3 large steps of each $PROFILE_RECIPES
#   transformer  the transformer's median step and last loss at the GPT-2-small and wide
#           presets ($TRANSFORMER_PRESETS: one of them), BF16 and FP8 delayed, 40 steps, two
#           rounds (alternating with $BASE_EXE)
#   tprofile each kernel's time, summed over its launches, in 3 steps of the wide preset
#           (BF16 and FP8 delayed), largest first
#   timeline when each kernel of the $TIMELINE_PRESET step (default tiny) runs, graph replays
#           included (a CUPTI injection library, gpu/tools/kernel_timeline.cpp), BF16 and FP8
#           delayed, the median of the last 100 of $TIMELINE_STEPS steps (300), a pause of
#           $TIMELINE_GAP_MS ms (2) between step ends a new run ($BASE_EXE too)
#   record  lab 11's speed table: fp8lab bench transformer into $OUT/transformer-speed.csv
#           (36 runs, about 300 s on an H200), for assets/ under the card's name
#   torch-transformer  scripts/pytorch_transformer_reference.py at the presets of
#           $TRANSFORMER_PRESETS (default wide), fused QKV, each kernel's time per step first
# A binary at $BASE_EXE (an earlier build), or the tree at $BASE_SRC (built here too), is
# benched in the same run, alternating with this one: two versions side by side on one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-out/gpu-session}"         # results: bench tables, test log
scratch="${TMPDIR:-/tmp}/gpu-session"  # build logs, traces
mkdir -p "$out" "$scratch"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$scratch/gpu.txt"
# The transformer's tests and benches train on Debian's fortunes (the default corpus); a
# server without the package gets the copy scripts/copy-header-deps.sh made.
fortunes=/usr/share/games/fortunes
if [ ! -d "$fortunes" ]; then
  [ -d deps/fortunes ] || { echo "missing $fortunes and deps/fortunes: run scripts/copy-header-deps.sh on the Debian machine" >&2; exit 1; }
  mkdir -p "$(dirname "$fortunes")" && cp -r deps/fortunes "$fortunes" || { echo "cannot copy deps/fortunes to $fortunes" >&2; exit 1; }
  echo "installed deps/fortunes as $fortunes"
fi
archs=(-DCMAKE_CUDA_ARCHITECTURES=90-real)
[ "${CUDA_ARCHITECTURES:-}" = project ] && archs=()
cmake --preset gpu-server "${archs[@]}" >"$scratch/configure.log" 2>&1 || { tail -30 "$scratch/configure.log"; exit 1; }
grep "CUDA backend" "$scratch/configure.log"
cmake --build --preset gpu-server --target fp8lab gpu_tests >"$scratch/build.log" 2>&1 || { grep -E "error|Error" -A3 "$scratch/build.log" | head -60; exit 1; }
exe=build-gpu/app/fp8lab
if [ -n "${BASE_SRC:-}" ]; then
  (cd "$BASE_SRC" && cmake --preset gpu-server -DCMAKE_CUDA_ARCHITECTURES=90-real >/dev/null &&
   cmake --build --preset gpu-server --target fp8lab >"$scratch/build-base.log" 2>&1) || { tail -30 "$scratch/build-base.log"; exit 1; }
  BASE_EXE="$BASE_SRC/build-gpu/app/fp8lab"
fi
sampled() {  # $1: CSV, $2: ms between samples, then a command run while nvidia-smi samples
  local csv="$1" ms="$2"; shift 2
  nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms "$ms" >"$csv" &
  local smi=$!
  "$@"
  local status=$?
  kill "$smi"; wait "$smi" 2>/dev/null
  return $status
}
bench() {  # $1: label, $2: binary, then bench options
  local label="$1" bin="$2"; shift 2
  # The SM clock and board power beside the times, every 100 ms through the run: the means
  # of the samples over 250 W (the GPU's work, not the set-up between runs).
  sampled "$scratch/smi-$label.csv" 100 "$bin" bench gpu --steps 200 --warmup 20 "$@" 2>/dev/null |
    tee -a "$out/bench-$label.txt"
  awk -F, '$2 > 250 {c += $1; p += $2; n++} END {if (n) printf "SM clock %.0f MHz, power %.0f W (means of %d samples over 250 W)\n", c / n, p / n, n}' \
    "$scratch/smi-$label.csv" | tee -a "$out/bench-$label.txt"
}
# The transformer presets of gpu/src/models/trainer_config.cpp as `train` options.
gpt2_small="--width 768 --blocks 12 --heads 12 --kv-heads 12 --ffn 3072 --sequence 1024 --tokens 8192"
wide="--width 4096 --blocks 2 --heads 32 --kv-heads 8 --ffn 11008 --sequence 2048 --tokens 8192"
transformer_step() {  # $1: label, $2: binary, $3: preset options, $4: precision options
  local log; log=$("$2" train --backend gpu --model transformer $3 --steps 40 $4 2>&1)
  echo "$1 | $(echo "$log" | grep "median step" | head -1) | last loss: $(echo "$log" | tail -1)" | tee -a "$out/transformer.txt"
}
for what in "$@"; do
  case "$what" in
    tests) ctest --test-dir build-gpu -L gpu --output-on-failure 2>&1 | tee "$out/tests.log" | tail -40 ;;
    bench)
      for round in 1 2; do
        bench new "$exe"
        if [ -n "${BASE_EXE:-}" ]; then bench base "$BASE_EXE"; fi
      done ;;
    blockwise) bench blockwise "$exe" --recipe blockwise ;;
    torch) PYTHONUNBUFFERED=1 python3 scripts/pytorch_mlp_reference.py --steps 200 --warmup 20 2>&1 | tee "$out/torch.txt" ;;
    keep) cp "$exe" "$out/fp8lab" ;;
    clocks)
      sampled "$out/clocks-large-step.csv" 50 "$exe" bench gpu --preset large --steps 600 --warmup 20 \
        >"$scratch/run-large-step.txt" 2>/dev/null
      sampled "$out/clocks-gemm-alone.csv" 50 "$exe" bench gemm --repeat 2000 >"$scratch/run-gemm-alone.txt" 2>/dev/null
      grep -E "^(large|medium)" "$scratch/run-gemm-alone.txt" "$scratch/run-large-step.txt" ;;
    same)
      for r in ${SAME_RECIPES:-delayed}; do
        for p in tiny small; do
          for v in new base; do
            bin="$exe"; [ "$v" = base ] && bin="$BASE_EXE"
            "$bin" bench gpu --preset $p --recipe "$r" --steps 120 --warmup 10 --json --trace-out "$scratch/trace-$r-$p-$v.csv" >"$scratch/losses-$r-$p-$v.json" 2>/dev/null
          done
          # Each run's final loss (every key of a preset's entry that has one), new then base.
          python3 -c "import json,sys; [print(sys.argv[i][-24:], [(k, v['final_loss']) for r in json.load(open(sys.argv[i]))['presets'] for k, v in r.items() if isinstance(v, dict) and 'final_loss' in v]) for i in (1,2)]" "$scratch/losses-$r-$p-new.json" "$scratch/losses-$r-$p-base.json" || true
          if cmp -s "$scratch/trace-$r-$p-new.csv" "$scratch/trace-$r-$p-base.csv" && [ -s "$scratch/trace-$r-$p-new.csv" ]; then
            echo "$r $p: FP8 amax traces equal"; else echo "$r $p: FP8 amax traces DIFFER (or missing)"; fi
        done
      done ;;
    same-transformer)
      # The transformer at its CPU default size on the GPU, recipe by recipe: the losses and
      # the FP8 amax traces of this build against $BASE_EXE's, 60 steps at the rate and
      # schedule given (the same flags for both builds).
      for r in ${SAME_RECIPES:-delayed}; do
        for v in new base; do
          bin="$exe"; [ "$v" = base ] && bin="$BASE_EXE"
          "$bin" train --model transformer --backend gpu --recipe "$r" --steps 60 --lr 0.003 --lr-schedule warmup-cosine \
            --warmup 20 --trace "$scratch/ttrace-$r-$v.csv" >"$scratch/tloss-$r-$v.txt" 2>"$scratch/tlog-$r-$v.txt"
        done
        if cmp -s "$scratch/tloss-$r-new.txt" "$scratch/tloss-$r-base.txt" && [ -s "$scratch/tloss-$r-new.txt" ]; then
          echo "transformer $r: losses equal ($(tail -1 "$scratch/tloss-$r-new.txt"))"; else
          echo "transformer $r: losses DIFFER (or missing)"; tail -3 "$scratch/tlog-$r-new.txt"; fi
        if cmp -s "$scratch/ttrace-$r-new.csv" "$scratch/ttrace-$r-base.csv"; then echo "transformer $r: amax traces equal"; else
          echo "transformer $r: amax traces DIFFER (or missing)"; fi
      done ;;
    profile)
      for r in ${PROFILE_RECIPES:-nvfp4}; do
        ncu --clock-control none --print-summary per-kernel --metrics gpu__time_duration.sum \
          "$exe" bench gpu --preset large --recipe "$r" --steps 4 --warmup 1 --no-graph >"$scratch/profile-$r.txt" 2>&1
        # One line per kernel: its name, launches and mean time (the summary's own numbers).
        awk '/^  [A-Za-z_]/ {name=$0} /gpu__time_duration.sum/ {print $NF, $(NF-1), $(NF-2), $(NF-3), "|", name}' \
          "$scratch/profile-$r.txt" >"$out/profile-$r.txt"
        cp "$scratch/profile-$r.txt" "$out/profile-$r-full.txt"
      done ;;
    transformer)
      for round in 1 2; do
        for preset in ${TRANSFORMER_PRESETS:-gpt2_small wide}; do
          for precision in "--precision bf16" "--precision fp8 --recipe delayed"; do
            transformer_step "new $preset $precision" "$exe" "${!preset}" "$precision"
            if [ -n "${BASE_EXE:-}" ]; then transformer_step "base $preset $precision" "$BASE_EXE" "${!preset}" "$precision"; fi
          done
        done
      done ;;
    tprofile)
      for precision in bf16 fp8; do
        ncu --clock-control none --launch-count 300 --print-summary per-kernel --metrics gpu__time_duration.sum \
          "$exe" train --backend gpu --model transformer $wide --steps 3 --precision $precision >"$scratch/tprofile-$precision.txt" 2>&1
        # name | launches | mean | total, in ms (the summary's unit converted), largest total first
        awk '/^  [A-Za-z_]/ {name=substr($0, 3, 70); n=0; if (match($0, /Invocations [0-9]+/)) n=substr($0, RSTART+12, RLENGTH-12)}
             /gpu__time_duration.sum/ {f=($2=="ns")?1e-6:($2=="us")?1e-3:($2=="ms")?1:1e3; printf "%s | %d | %.4f | %.3f\n", name, n, $NF*f, n*$NF*f}' \
          "$scratch/tprofile-$precision.txt" | sort -t'|' -k4 -gr >"$out/tprofile-$precision.txt"
        head -25 "$out/tprofile-$precision.txt"
      done ;;
    timeline)
      cmake --build --preset gpu-server --target fp8lab_kernel_timeline >"$scratch/build-timeline.log" 2>&1 || { tail -20 "$scratch/build-timeline.log"; exit 1; }
      for v in new base; do
        bin="$exe"; [ "$v" = base ] && bin="${BASE_EXE:-}"
        [ -n "$bin" ] || continue
        FP8LAB_TIMELINE="$scratch/timeline-$v.csv" CUDA_INJECTION64_PATH="$PWD/build-gpu/gpu/libfp8lab_kernel_timeline.so" \
          "$bin" bench gpu --preset "${TIMELINE_PRESET:-tiny}" --steps "${TIMELINE_STEPS:-300}" --warmup 20 \
          >"$out/timeline-bench-$v.txt" 2>"$scratch/timeline-$v.log"
        tail -2 "$scratch/timeline-$v.log"
        python3 scripts/kernel_timeline.py "$scratch/timeline-$v.csv" --steps 100 --run-gap-ms "${TIMELINE_GAP_MS:-2}" |
          tee "$out/timeline-$v.txt"
      done ;;
    record) "$exe" bench transformer --out "$out/transformer-speed.csv" 2>"$scratch/record.log"; tail -c 300 "$scratch/record.log" ;;
    torch-transformer)
      # The script's preset names are spelled with a hyphen (gpt2-small), this script's with _.
      PYTHONUNBUFFERED=1 python3 scripts/pytorch_transformer_reference.py --fused-only --kernels 5 \
        --presets $(echo "${TRANSFORMER_PRESETS:-wide}" | tr _ -) 2>&1 | grep -v Warn | tee "$out/torch-transformer.txt" ;;
    *) echo "unknown: $what" >&2; exit 2 ;;
  esac
done
