// SPDX-License-Identifier: Apache-2.0
// The emulated path's step end on the device: overflow check, GradScaler's update, AdamW
// that skips an overflowed step (step_guard.hpp), in the CPU trainer's arithmetic.
#include <algorithm>

#include "gpu/src/kernels/step_guard.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t n) { return int(std::clamp<std::size_t>((n + kThreads * 4 - 1) / (kThreads * 4), 1, 4096)); }

__global__ void finite_check_kernel(const float* values, std::size_t n, StepGuard* guard) {
    bool bad = false;
    for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * kThreads)
        bad = bad || !isfinite(values[i]);
    if (__syncthreads_or(bad) && threadIdx.x == 0) guard->found_inf = 1;
}

__global__ void guard_update_kernel(StepGuard* g, LossScalingRules rules, const int* step, float* scale_per_step,
                                    int* skipped_per_step, int capacity) {
    const int t = *step;
    const bool overflow = g->found_inf != 0;
    g->used = g->scale;
    if (t < capacity) {
        if (scale_per_step) scale_per_step[t] = g->scale;
        if (skipped_per_step) skipped_per_step[t] = overflow ? 1 : 0;
    }
    if (rules.enabled) {  // emu::DynamicLossScaler::update
        if (overflow) {
            g->scale = __fmul_rn(g->scale, rules.backoff_factor);
            g->clean_steps = 0;
        } else if (++g->clean_steps == rules.growth_interval) {
            g->scale = __fmul_rn(g->scale, rules.growth_factor);
            g->clean_steps = 0;
        }
    }
    g->apply = overflow ? 0 : 1;
    if (!overflow) ++g->adam_steps;
    g->found_inf = 0;
}

__global__ void guarded_adamw_kernel(float4* w, float4* m, float4* v, const float4* grad, std::size_t quads,
                                     AdamParams p, const StepGuard* guard, const int* step) {
    if (!guard->apply) return;
    p.learning_rate = adamw_rate(p, *step);  // the step's rate, whether or not earlier steps applied
    const float used = guard->used;
    const float2 c = adamw_corrections(p, guard->adam_steps);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < quads;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float4 g = grad[i];
        if (used != 1.0f) {  // the CPU divides (a scale need not be a power of two)
            g.x = __fdiv_rn(g.x, used), g.y = __fdiv_rn(g.y, used);
            g.z = __fdiv_rn(g.z, used), g.w = __fdiv_rn(g.w, used);
        }
        adamw_quad(w, m, v, i, g, p, c);
    }
}

}  // namespace

void finite_check(const float* values, std::size_t n, StepGuard* guard, cudaStream_t stream) {
    finite_check_kernel<<<grid_for(n), kThreads, 0, stream>>>(values, n, guard);
}

void guard_update(StepGuard* guard, LossScalingRules rules, const int* step, float* scale_per_step,
                  int* skipped_per_step, int capacity, cudaStream_t stream) {
    guard_update_kernel<<<1, 1, 0, stream>>>(guard, rules, step, scale_per_step, skipped_per_step, capacity);
}

void guarded_adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const StepGuard* guard,
                   const int* step, cudaStream_t stream) {
    guarded_adamw_kernel<<<grid_for(n), kThreads, 0, stream>>>(
        reinterpret_cast<float4*>(w), reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v),
        reinterpret_cast<const float4*>(grad), n / 4, p, guard, step);
}

}  // namespace fp8lab::gpu::train
