#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What PyTorch's eager casts and ml_dtypes make of values past the FP8 formats' maximum
(lab 1 states it), and whether they convert float64 in one rounding or through float32
(lab 3): prints each library's version and, per format, each input's result."""
import math

INPUTS = [448.0, 464.0, 480.0, 500.0, 57344.0, 61440.0, 65536.0, 1e6, math.inf, -math.inf, math.nan]


def show(library, fmt, results):
    print(f"{library:10} {fmt:16} " + "  ".join(f"{x:g}->{y}" for x, y in zip(INPUTS, results)))


# Just above the tie between 1 and 1.125 in E4M3: one rounding gives 1.125; through
# float32 the value lands on the tie 1.0625, which goes to the even 1.
JUST_ABOVE_TIE = 1.0625 + 2.0**-30


def main():
    try:
        import torch
        print("torch", torch.__version__)
        for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
            dtype = getattr(torch, name, None)
            if dtype is None:
                continue
            y = torch.tensor(INPUTS, dtype=torch.float32).to(dtype).to(torch.float32).tolist()
            show("torch", name, [f"{v:g}" for v in y])
        y = torch.tensor([JUST_ABOVE_TIE], dtype=torch.float64).to(torch.float8_e4m3fn).to(torch.float64).item()
        print(f"torch      float64 1.0625+2^-30 -> float8_e4m3fn: {y:g} (1.125: one rounding; 1: through float32)")
    except ImportError:
        print("torch: not installed")
    try:
        import ml_dtypes
        import numpy as np
        print("ml_dtypes", ml_dtypes.__version__)
        for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
            y = np.array(INPUTS, dtype=np.float32).astype(getattr(ml_dtypes, name)).astype(np.float32)
            show("ml_dtypes", name, [f"{v:g}" for v in y.tolist()])
        y = np.array([JUST_ABOVE_TIE], dtype=np.float64).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)[0]
        print(f"ml_dtypes  float64 1.0625+2^-30 -> float8_e4m3fn: {y:g} (1.125: one rounding; 1: through float32)")
    except ImportError:
        print("ml_dtypes: not installed")


if __name__ == "__main__":
    main()
