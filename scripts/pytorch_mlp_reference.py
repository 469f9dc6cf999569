#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The MLP of `fp8lab bench gpu` in PyTorch, BF16 only: the reference our BF16 step is
compared with. Same shapes, no biases, tanh-GELU, MSE, AdamW on float32 master
weights (fused), BF16 autocast, torch.compile; median ms/step over CUDA events.
Usage: python3 pytorch_mlp_reference.py [--steps 200] [--warmup 20] [--no-compile]"""
import argparse
import statistics

import torch

PRESETS = [("tiny", 768, 3072, 32), ("small", 768, 3072, 8192), ("medium", 1024, 4096, 16384),
           ("large", 4096, 16384, 16384)]


def run(d, h, m, steps, warmup, compile_model):
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(d, h, bias=False), torch.nn.GELU(approximate="tanh"),
                                torch.nn.Linear(h, d, bias=False)).cuda()
    teacher = torch.randn(d, d, device="cuda") / d ** 0.5
    x = torch.randn(m, d, device="cuda", dtype=torch.bfloat16)
    y = torch.tanh(x.float() @ teacher.t()).to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0, fused=True)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    if compile_model:
        step = torch.compile(step)
    times = []
    for i in range(steps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        stop.record()
        if i >= warmup:
            times.append((start, stop))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times), float(loss)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    print(f"PyTorch {torch.__version__}, {torch.cuda.get_device_name()}, BF16 autocast, "
          f"{'eager' if args.no_compile else 'torch.compile'}")
    for name, d, h, m in PRESETS:
        ms, loss = run(d, h, m, args.steps, args.warmup, not args.no_compile)
        print(f"{name:7s} d={d:5d} h={h:6d} M={m:6d}  BF16 {ms:.4f} ms/step  loss {loss:.5f}")


if __name__ == "__main__":
    main()
