#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The transformer of `fp8lab train --model transformer` in PyTorch, BF16 only: the reference
our GPU step is compared with. Same shapes (byte vocabulary, RMSNorm, grouped-query causal
attention with rotary positions through scaled_dot_product_attention, fused or separate QKV,
SwiGLU, untied output projection), AdamW on float32 master weights (fused), BF16 autocast,
eager and torch.compile; random bytes (the speed does not depend on them); median ms/step
over CUDA events.
Usage: python3 pytorch_transformer_reference.py [--steps 30] [--warmup 10] [--no-compile]"""
import argparse
import statistics

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


def run(preset, fused, steps, warmup, compile_model):
    _, d, blocks, heads, kv_heads, ffn, sequence, sequences = preset
    torch.manual_seed(1)
    model = Model(d, blocks, heads, kv_heads, ffn, sequence, fused).cuda()
    tokens = torch.randint(0, 256, (sequences, sequence + 1), device="cuda")
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0, fused=True)
    forward = torch.compile(model) if compile_model else model

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), sequences * sequence


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--no-compile", action="store_true")
    a = p.parse_args()
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("preset\tvariant\tms/step\ttokens/s")
    for preset in PRESETS:
        for fused in (True, False):
            for compiled in ([False] if a.no_compile else [False, True]):
                ms, tokens = run(preset, fused, a.steps, a.warmup, compiled)
                variant = f"bf16 {'fused' if fused else 'separate'} QKV, {'compiled' if compiled else 'eager'}"
                print(f"{preset[0]}\t{variant}\t{ms:.3f}\t{tokens / ms * 1e3:.0f}", flush=True)


if __name__ == "__main__":
    main()
