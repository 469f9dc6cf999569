#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GEMM's per-level objects (compiled with -mavx2 or -mavx512f) define no weak code
# symbol (nm's W, or u for a unique global): the linker keeps one copy of such a function
# for every caller, and a copy compiled for AVX-512 would then run on machines without it.
# Weak data (V: the sanitizers' typeinfo) holds no instructions. Arguments: object files.
set -euo pipefail
command -v nm >/dev/null || { echo "nm not found: skipped"; exit 77; }
checked=0
for object in "$@"; do
  case "$(basename "$object")" in
    ordered_gemm_avx2.cpp.o|ordered_gemm_avx512.cpp.o) ;;
    *) continue ;;
  esac
  checked=$((checked + 1))
  shared=$(nm -C "$object" | grep -E '^[0-9a-f]* +[Wu] ' || true)
  if [ -n "$shared" ]; then
    echo "$object defines functions the linker may share with other objects:" >&2
    echo "$shared" >&2
    exit 1
  fi
done
[ "$checked" -gt 0 ] || { echo "no per-level GEMM object among the arguments" >&2; exit 1; }
echo "per-level GEMM objects: $checked checked, no shared symbols"
