# SPDX-License-Identifier: Apache-2.0
"""fp8lab's conversions against ml_dtypes, an independent implementation, where both define
the same thing: float32 inputs, round to nearest even, no saturation, for every format the
two share (the FNUZ ones included, which no CUDA function converts to). Inputs: every BF16
bit pattern widened to float32 and a million random float32 values over the formats'
ranges. Prints one line per format and exits 1 on any difference.
Usage: python3 scripts/compare_ml_dtypes.py build/app/fp8lab   (needs numpy and ml_dtypes)"""
import subprocess
import sys

import ml_dtypes
import numpy as np

FORMATS = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
           "e5m2fnuz": "float8_e5m2fnuz", "e3m2": "float6_e3m2fn", "e2m3": "float6_e2m3fn", "e2m1": "float4_e2m1fn"}


def inputs():
    bf16 = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
    rng = np.random.default_rng(2026)
    wide = (rng.standard_normal(1 << 20) * np.exp2(rng.integers(-40, 20, 1 << 20))).astype(np.float32)
    return np.concatenate([bf16, wide])


def main():
    exe = sys.argv[1]
    x = inputs()
    text = "\n".join(float(v).hex() for v in x.astype(np.float64)) + "\n"
    failed = False
    for ours, theirs in FORMATS.items():
        dtype = getattr(ml_dtypes, theirs, None)
        if dtype is None:
            print(f"{ours}: this ml_dtypes has no {theirs}; skipped")
            continue
        out = subprocess.run([exe, "convert", "--to", ours, "--saturate", "none", "--from", "f32"], input=text,
                             capture_output=True, text=True, check=True).stdout
        codes = np.array([int(line.split("\t")[1], 16) for line in out.splitlines() if line and not line.startswith("#")])
        reference = x.astype(dtype).view(np.uint8).astype(np.int64)
        # ml_dtypes keeps FP6/FP4 codes in a byte; NaN codes may differ in payload only where the
        # format has several, so compare NaN as NaN.
        ours_nan = np.isnan(np.array(codes, dtype=np.uint8).view(dtype).astype(np.float32))
        theirs_nan = np.isnan(x.astype(dtype).astype(np.float32))
        same = (codes == reference) | (ours_nan & theirs_nan)
        bad = np.flatnonzero(~same)
        print(f"{ours} vs ml_dtypes.{theirs}: {len(x) - len(bad)} of {len(x)} float32 inputs give the same code"
              + ("" if not len(bad) else f"; first differences: " +
                 ", ".join(f"{x[i]!r} -> ours {codes[i]:#04x}, theirs {reference[i]:#04x}" for i in bad[:5])))
        failed |= bool(len(bad))
    print(f"ml_dtypes {ml_dtypes.__version__}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
