#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The transformer of `fp8lab train --model transformer` in PyTorch, BF16 only: the reference
our GPU step is compared with. Same shapes (byte vocabulary, RMSNorm, grouped-query causal
attention with rotary positions through scaled_dot_product_attention, fused or separate QKV,
SwiGLU, untied output projection), AdamW on float32 master weights (fused), BF16 autocast.

Speed (the default): eager and torch.compile at each preset; random bytes (the speed does not
depend on them); median ms/step over CUDA events.

Curve (--curve FP8LAB): the CPU default experiment trained from the same initial weights on
the same bytes as fp8lab's (its counter-based draws written again below, the corpus read and
split as fp8lab reads it), with the same learning-rate schedule, clip and AdamW, over seeds
1-4; beside it `FP8LAB train --model transformer --precision bf16` (the CPU emulator) at the
same seeds. Prints both curves' means and spreads and whether PyTorch's final loss lies
within the spread of fp8lab's seeds.
Kernels (--kernels STEPS): each kernel's time per step under torch.profiler, before the timing.
Usage: python3 pytorch_transformer_reference.py [--steps 30] [--warmup 10] [--no-compile | --compiled-only]
       [--repeat N]
       python3 pytorch_transformer_reference.py --curve build/app/fp8lab [--corpus DIR]"""
import argparse
import math
import os
import re
import statistics
import subprocess

import numpy as np

import torch
import torch.nn.functional as F

# name, width, blocks, heads, kv_heads, ffn, sequence, sequences: as tests/gpu/gpu_transformer_test.cpp
PRESETS = [("cpu-default", 128, 2, 4, 2, 384, 128, 8), ("gpt2-small", 768, 12, 12, 12, 3072, 1024, 8),
           ("wide", 4096, 2, 32, 8, 11008, 2048, 4)]


class Block(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ffn, fused):
        super().__init__()
        self.heads, self.kv_heads, self.hs, self.fused = heads, kv_heads, d // heads, fused
        q, kv = heads * self.hs, kv_heads * self.hs
        if fused:
            self.qkv = torch.nn.Linear(d, q + 2 * kv, bias=False)
        else:
            self.q, self.k, self.v = (torch.nn.Linear(d, n, bias=False) for n in (q, kv, kv))
        self.proj = torch.nn.Linear(q, d, bias=False)
        self.gate_up = torch.nn.Linear(d, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d, bias=False)
        self.norm1, self.norm2 = torch.nn.RMSNorm(d, eps=1e-5), torch.nn.RMSNorm(d, eps=1e-5)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.norm1(x)
        if self.fused:
            q, k, v = self.qkv(h).split([self.heads * self.hs, self.kv_heads * self.hs, self.kv_heads * self.hs], -1)
        else:
            q, k, v = self.q(h), self.k(h), self.v(h)
        q = rotate(q.view(b, t, self.heads, self.hs).transpose(1, 2), cos, sin)
        k = rotate(k.view(b, t, self.kv_heads, self.hs).transpose(1, 2), cos, sin)
        v = v.view(b, t, self.kv_heads, self.hs).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.heads != self.kv_heads)
        x = x + self.proj(o.transpose(1, 2).reshape(b, t, -1))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, -1)
        return x + self.down(F.silu(gate) * up)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


class Model(torch.nn.Module):
    def __init__(self, d, blocks, heads, kv_heads, ffn, sequence, fused):
        super().__init__()
        self.embed = torch.nn.Embedding(256, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads, kv_heads, ffn, fused) for _ in range(blocks))
        self.norm = torch.nn.RMSNorm(d, eps=1e-5)
        self.out = torch.nn.Linear(d, 256, bias=False)
        hs = d // heads
        freq = 10000.0 ** (-2.0 * torch.arange(hs // 2, dtype=torch.float64) / hs)
        angle = torch.arange(sequence, dtype=torch.float64)[:, None] * freq[None, :]
        self.register_buffer("cos", angle.cos().float(), persistent=False)
        self.register_buffer("sin", angle.sin().float(), persistent=False)

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        logits = self.out(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, 256), targets.view(-1))


def training_step(forward, model, opt, x, y):
    """One BF16-autocast step: the loss, its gradients, the clip at 1 (as fp8lab's) and AdamW."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = forward(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def kernel_table(step, steps, top=30):
    """Runs `steps` steps under torch.profiler; prints each CUDA kernel's time per step, the
    largest first, and the step's kernel time by kind (attention, GEMM, the rest)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    per_kernel = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total, count = per_kernel.get(e.name, (0.0, 0))
            per_kernel[e.name] = (total + e.device_time_total / 1e3, count + 1)
    kinds = {"attention": 0.0, "GEMM": 0.0, "the rest": 0.0}
    rows = sorted(per_kernel.items(), key=lambda kv: -kv[1][0])
    for name, (ms, count) in rows:
        lower = name.lower()
        kind = ("attention" if re.search(r"flash|fmha|attention|sdpa|cudnn", lower) else
                "GEMM" if re.search(r"gemm|xmma|nvjet|cutlass|sm90_", lower) else "the rest")
        kinds[kind] += ms / steps
    print("kernel ms/step\tlaunches/step\tkernel")
    for name, (ms, count) in rows[:top]:
        print(f"{ms / steps:.4f}\t{count / steps:g}\t{name[:110]}")
    print("by kind, ms/step: " + ", ".join(f"{k} {v:.3f}" for k, v in kinds.items()) +
          f"; all kernels {sum(kinds.values()):.3f}")


def run(preset, fused, steps, warmup, compile_model, profile_steps=0, repeat=1):
    """Median ms/step of each of `repeat` rounds of `steps` timed steps (one compile), and tokens a step."""
    _, d, blocks, heads, kv_heads, ffn, sequence, sequences = preset
    torch.manual_seed(1)
    model = Model(d, blocks, heads, kv_heads, ffn, sequence, fused).cuda()
    tokens = torch.randint(0, 256, (sequences, sequence + 1), device="cuda")
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0, fused=True)
    forward = torch.compile(model) if compile_model else model

    def step():
        training_step(forward, model, opt, x, y)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    if profile_steps:
        kernel_table(step, profile_steps)
    medians = []
    for _ in range(repeat):
        times = []
        for _ in range(steps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        medians.append(statistics.median(times))
    return medians, sequences * sequence


# fp8lab's counter-based draws (emulator/base/stochastic_bits.hpp), on numpy uint64 arrays.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def stochastic_bits32(seed, index):
    return mix64(mix64(np.array([seed], dtype=np.uint64)) + index * GOLDEN) >> np.uint64(32)


def normal_matrix(init_seed, index, rows, cols, stddev):
    """fp8lab's normal_matrix (transformer_trainer.cpp): Box-Muller over the draws, float32."""
    seed = init_seed * 1000 + 500 + index
    i = np.arange(rows * cols, dtype=np.uint64)
    u1 = (stochastic_bits32(seed, np.uint64(2) * i).astype(np.float64) + 1.0) * 2.0**-32
    u2 = stochastic_bits32(seed, np.uint64(2) * i + np.uint64(1)).astype(np.float64) * 2.0**-32
    normal = (np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)).astype(np.float32)
    return torch.from_numpy((np.float32(stddev) * normal).reshape(rows, cols))


def load_corpus(path):
    """fp8lab's load_corpus: the folder's regular text files in name order, 4 KiB blocks,
    every 10th one validation."""
    names = sorted(n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n))
                   and not os.path.islink(os.path.join(path, n)))
    text = b""
    for n in names:
        data = open(os.path.join(path, n), "rb").read()
        if b"\0" not in data:
            text += data
    blocks = [text[i:i + 4096] for i in range(0, len(text), 4096)]
    train = b"".join(b for k, b in enumerate(blocks) if k % 10 != 9)
    valid = b"".join(b for k, b in enumerate(blocks) if k % 10 == 9)
    return np.frombuffer(train, dtype=np.uint8), np.frombuffer(valid, dtype=np.uint8)


def windows(text, starts, sequence):
    rows = np.stack([text[s:s + sequence + 1] for s in starts]).astype(np.int64)
    return torch.from_numpy(rows[:, :-1]).cuda(), torch.from_numpy(rows[:, 1:]).cuda()


def training_windows(train, seed, step, sequences, sequence):
    j = np.arange(sequences, dtype=np.uint64)
    z = mix64(mix64(np.array([seed ^ 0x7E47], dtype=np.uint64)) + np.array([step], dtype=np.uint64) * GOLDEN + j)
    return windows(train, (z % np.uint64(len(train) - sequence)).astype(np.int64), sequence)


def learning_rate(step, steps, peak=3e-3, warmup=20, floor=0.1):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, steps - warmup - 1))
    return peak * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def train_curve(train, valid, seed, steps, eval_every=50, eval_sequences=16):
    """fp8lab's default transformer experiment, seed k = 1, 2, ...: (losses, [(step, bits)])."""
    _, d, blocks, heads, kv_heads, ffn, sequence, sequences = PRESETS[0]
    model = Model(d, blocks, heads, kv_heads, ffn, sequence, True)
    hs, residual = d // heads, np.float32(0.02) / np.sqrt(np.float32(2 * blocks), dtype=np.float32)
    with torch.no_grad():
        model.embed.weight.copy_(normal_matrix(seed, 0, 256, d, 0.02))
        for b, block in enumerate(model.blocks):
            base = 1 + 8 * b
            block.qkv.weight.copy_(normal_matrix(seed, base + 1, (heads + 2 * kv_heads) * hs, d, 0.02))
            block.proj.weight.copy_(normal_matrix(seed, base + 2, d, heads * hs, residual))
            block.gate_up.weight.copy_(normal_matrix(seed, base + 3, 2 * ffn, d, 0.02))
            block.down.weight.copy_(normal_matrix(seed, base + 4, d, ffn, residual))
        model.out.weight.copy_(normal_matrix(seed, 1 + 8 * blocks, 256, d, 0.02))
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    last_start = len(valid) - sequence - 1
    vx, vy = windows(valid, [last_start * k // (eval_sequences - 1) for k in range(eval_sequences)], sequence)
    losses, validation = [], []
    for step in range(steps):
        x, y = training_windows(train, seed, step, sequences, sequence)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, steps)
        losses.append(training_step(model, model, opt, x, y).item())
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                validation.append((step, model(vx, vy).item() / math.log(2.0)))
    return losses, validation


def fp8lab_curve(program, seed, steps, corpus):
    run = subprocess.run([program, "train", "--model", "transformer", "--precision", "bf16", "--steps",
                          str(steps), "--seed", str(seed), "--corpus", corpus],
                         capture_output=True, text=True, check=True)
    losses = [float(line.split("\t")[1]) for line in run.stdout.splitlines()[1:]]
    validation = [(int(s) - 1, float(b)) for s, b in re.findall(r"step (\d+) ([0-9.]+);", run.stderr)]
    return losses, validation


def final(losses):
    return statistics.fmean(losses[-10:])  # fp8lab's final loss: the mean of the last 10 steps


def compare_curves(program, corpus, steps, seeds):
    train, valid = load_corpus(corpus)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; corpus {corpus}: "
          f"{len(train)} training and {len(valid)} validation bytes")
    runs = {"fp8lab CPU": [fp8lab_curve(program, k, steps, corpus) for k in seeds],
            "PyTorch": [train_curve(train, valid, k, steps) for k in seeds]}
    print("step\t" + "\t".join(f"{name} mean\t{name} least\t{name} largest" for name in runs))
    for s in list(range(0, steps, 10)) + [steps - 1]:
        cells = []
        for curves in runs.values():
            at = [c[0][s] for c in curves]
            cells += [f"{statistics.fmean(at):.4f}", f"{min(at):.4f}", f"{max(at):.4f}"]
        print(f"{s}\t" + "\t".join(cells))
    ours = [final(c[0]) for c in runs["fp8lab CPU"]]
    theirs = [final(c[0]) for c in runs["PyTorch"]]
    ours_bits = [c[1][-1][1] for c in runs["fp8lab CPU"]]
    theirs_bits = [c[1][-1][1] for c in runs["PyTorch"]]
    gap = max(abs(a - b) / b for p, q in zip(runs["PyTorch"], runs["fp8lab CPU"]) for a, b in zip(p[0], q[0]))
    print(f"final loss over seeds {seeds[0]}-{seeds[-1]}: fp8lab {statistics.fmean(ours):.4f} "
          f"({min(ours):.4f}-{max(ours):.4f}), PyTorch {statistics.fmean(theirs):.4f} "
          f"({min(theirs):.4f}-{max(theirs):.4f})")
    print(f"validation bits per byte: fp8lab {statistics.fmean(ours_bits):.4f} "
          f"({min(ours_bits):.4f}-{max(ours_bits):.4f}), PyTorch {statistics.fmean(theirs_bits):.4f} "
          f"({min(theirs_bits):.4f}-{max(theirs_bits):.4f})")
    print(f"largest per-step gap, seed by seed: {100 * gap:.2f}%")
    within = min(ours) <= statistics.fmean(theirs) <= max(ours)
    print("PyTorch's mean final loss is " + ("within" if within else "OUTSIDE") +
          f" the spread of fp8lab's {len(seeds)} seeds")
    return within


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=None, help="timed steps (30), or the curve's steps (200)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--compiled-only", action="store_true", help="time torch.compile alone, not eager")
    p.add_argument("--repeat", type=int, default=1, help="rounds of timed steps after one compile, each printed")
    p.add_argument("--curve", metavar="FP8LAB", help="compare loss curves with this fp8lab program")
    p.add_argument("--corpus", default="/usr/share/games/fortunes")
    p.add_argument("--presets", nargs="+", choices=[q[0] for q in PRESETS], default=[q[0] for q in PRESETS],
                   help="the presets to time (all three)")
    p.add_argument("--fused-only", action="store_true", help="time the fused QKV layout only")
    p.add_argument("--kernels", type=int, default=0, metavar="STEPS",
                   help="before timing, list each kernel's time per step over STEPS profiled steps")
    a = p.parse_args()
    if a.curve:
        raise SystemExit(0 if compare_curves(a.curve, a.corpus, a.steps or 200, [1, 2, 3, 4]) else 1)
    a.steps = a.steps or 30
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("preset\tvariant\tms/step\ttokens/s")
    for preset in (q for q in PRESETS if q[0] in a.presets):
        for fused in (True,) if a.fused_only else (True, False):
            for compiled in [False] * (not a.compiled_only) + [True] * (not a.no_compile):
                medians, tokens = run(preset, fused, a.steps, a.warmup, compiled, a.kernels, a.repeat)
                variant = f"bf16 {'fused' if fused else 'separate'} QKV, {'compiled' if compiled else 'eager'}"
                for ms in medians:
                    print(f"{preset[0]}\t{variant}\t{ms:.3f}\t{tokens / ms * 1e3:.0f}", flush=True)


if __name__ == "__main__":
    main()
