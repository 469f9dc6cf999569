#!/usr/bin/env bash
# One call on a GPU server: builds the GPU targets (gpu-server preset, sm_90 only), then
# runs what the arguments name, logs under $OUT (default out/gpu-session):
#   tests   ctest -L gpu          bench   fp8lab bench gpu (all presets, 200 steps)
#   torch   scripts/pytorch_mlp_reference.py                  keep   copy the binary to $OUT
# A binary at $BASE_EXE (an earlier build) is benched in the same run, alternating with
# this one, so that two versions are compared side by side on one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-out/gpu-session}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
cmake --preset gpu-server -DCMAKE_CUDA_ARCHITECTURES=90-real >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset gpu-server --target fp8lab gpu_tests >"$out/build.log" 2>&1 || { grep -E "error|Error" -A3 "$out/build.log" | head -60; exit 1; }
exe=build-gpu/app/fp8lab
bench() {  # $1: label, $2: binary, then bench options
  local label="$1" bin="$2"; shift 2
  "$bin" bench gpu --steps 200 --warmup 20 "$@" 2>/dev/null | tee -a "$out/bench-$label.txt"
}
for what in "$@"; do
  case "$what" in
    tests) ctest --test-dir build-gpu -L gpu --output-on-failure 2>&1 | tee "$out/tests.log" | tail -40 ;;
    bench)
      for round in 1 2; do
        bench new "$exe"
        [ -n "${BASE_EXE:-}" ] && bench base "$BASE_EXE"
      done ;;
    blockwise) bench blockwise "$exe" --recipe blockwise ;;
    torch) PYTHONUNBUFFERED=1 python3 scripts/pytorch_mlp_reference.py --steps 200 --warmup 20 2>&1 | tee "$out/torch.txt" ;;
    keep) cp "$exe" "$out/fp8lab" ;;
    *) echo "unknown: $what" >&2; exit 2 ;;
  esac
done
