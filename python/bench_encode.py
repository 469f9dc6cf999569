# SPDX-License-Identifier: Apache-2.0
"""Benchmark (reported, never asserted): float32 -> E4M3 encode of 64 Mi elements from
NumPy against `fp8lab bench emulator`'s rate for the same work, in one run.
Usage: PYTHONPATH=build/python /usr/bin/python3 python/bench_encode.py build/app/fp8lab"""
import re
import subprocess
import sys
import time

import numpy as np

import fp8lab

N = 64 << 20
exe = sys.argv[1] if len(sys.argv) > 1 else "build/app/fp8lab"
x = np.random.default_rng(2026).standard_normal(N).astype(np.float32) * np.float32(448 / 5.5)
fp8lab.encode(x[:1 << 20], "e4m3")  # warm: thread pool, pages
def rate(**kwargs):
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fp8lab.encode(x, "e4m3", **kwargs)
        times.append(time.perf_counter() - start)
    return N / sorted(times)[2] / 1e9


fresh = rate()
ours = rate(out=np.empty(N, np.uint8))
bench = subprocess.run([exe, "bench", "emulator", "--elements", str(N), "--repeat", "5"], capture_output=True, text=True,
                       check=True).stdout
rates = re.findall(r"fp8lab bulk quantize\s+(\d+) thread\(s\):.*?([\d.]+) G elements/s", bench)
program = max(float(rate) for _, rate in rates)
print(f"fp8lab.encode from NumPy, a new array per call: {fresh:.3f} G elements/s (median of 5, all threads)")
print(f"fp8lab.encode from NumPy, into out=:          {ours:.3f} G elements/s")
print(f"fp8lab bench emulator (its buffer reused):    {program:.3f} G elements/s (all threads)")
print(f"ratio, out= / bench: {ours / program:.2f}; new array / bench: {fresh / program:.2f}")
