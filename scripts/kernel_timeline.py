#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The mean timeline of a training step from gpu/tools/kernel_timeline.cpp's CSV.

A step ends with the kernel whose name contains --marker; a pause of more than --run-gap-ms
between two step ends starts a new run (a program that trains BF16 and then FP8 makes two).
For the last --steps steps of each run, each kernel (the k-th launch of a name in a step)
gets its median start from the end of the step before, its median duration and the median
idle time on its stream before it: the idle time of the stream the chain runs on is what
the launches between its kernels cost.
"""
import argparse
import csv
import shutil
import statistics
import subprocess
import sys


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


def short(name, width):
    name = name.replace("fp8lab::gpu::", "").replace("(anonymous namespace)::", "")
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--marker", default="finish_step", help="a substring of the name of a step's last kernel")
    parser.add_argument("--steps", type=int, default=50, help="how many of the last steps to average")
    parser.add_argument("--width", type=int, default=70, help="characters of each kernel's name")
    parser.add_argument("--run-gap-ms", type=float, default=2.0, help="a pause that separates two runs")
    args = parser.parse_args()

    with open(args.csv, newline="") as f:
        rows = [(int(r["start_ns"]), int(r["end_ns"]), int(r["stream"]), r["name"]) for r in csv.DictReader(f)]
    rows.sort()
    names = demangle(sorted({r[3] for r in rows}))
    ends = [r[1] for r in rows if args.marker in names[r[3]]]
    if len(ends) < 2:
        sys.exit(f"fewer than two kernels named like {args.marker!r} in {args.csv}")
    runs = [[ends[0]]]
    for previous, end in zip(ends[:-1], ends[1:]):
        if end - previous > args.run_gap_ms * 1e6:
            runs.append([])
        runs[-1].append(end)
    for number, run in enumerate(runs, 1):
        spans = list(zip(run[:-1], run[1:]))[-args.steps:]
        if spans:
            print(f"run {number}:")
            summarise(rows, names, spans, args.width)


def summarise(rows, names, spans, width):
    # (kernel, its launch in the step) -> its stream, starts, durations, idle times before it
    table = {}
    steps = []
    for begin, end in spans:
        inside = [r for r in rows if r[0] >= begin and r[1] <= end]
        steps.append(end - begin)
        last_end = {}
        seen = {}
        for start, stop, stream, name in inside:
            # The k-th launch of a kernel in a step: the same key whichever branch ran first.
            k = seen.get(name, 0)
            seen[name] = k + 1
            entry = table.setdefault((name, k), {"name": names[name], "stream": stream, "start": [], "time": [], "idle": []})
            entry["start"].append(start - begin)
            entry["time"].append(stop - start)
            entry["idle"].append(start - last_end.get(stream, begin))
            last_end[stream] = stop
    us = lambda values: statistics.median(values) / 1000.0
    print(f"{len(spans)} steps, median step {us(steps):.2f} us (min {min(steps) / 1000:.2f}, max {max(steps) / 1000:.2f})")
    print(f"{'stream':>6} {'#':>3} {'start':>8} {'time':>7} {'idle':>7}  kernel (median us over the steps)")
    for (_, k), e in sorted(table.items(), key=lambda kv: statistics.median(kv[1]["start"])):
        print(f"{e['stream']:>6} {k:>3} {us(e['start']):8.2f} {us(e['time']):7.2f} {us(e['idle']):7.2f}  {short(e['name'], width)}")
    for stream in sorted({e["stream"] for e in table.values()}):
        busy = sum(us(e["time"]) for e in table.values() if e["stream"] == stream)
        idle = sum(us(e["idle"]) for e in table.values() if e["stream"] == stream)
        print(f"stream {stream}: busy {busy:.2f} us, idle before its kernels {idle:.2f} us")


if __name__ == "__main__":
    main()
