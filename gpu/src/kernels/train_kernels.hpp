// SPDX-License-Identifier: Apache-2.0
// Launchers of the training step's kernels (plain C++17 types, like kernels.hpp): fills,
// fused cast + transpose + amax with GELU forward/backward, loss, AdamW, scaling updates.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/src/kernels/kernels.hpp"

namespace fp8lab::gpu::train {

using kernels::DeviceScaling;

void f32_to_bf16(const float* in, void* out, std::size_t n, cudaStream_t stream);

// What a cast reads at (row, col): x[row * ld + col] as BF16 or float32, GELU of a BF16
// pre-activation, GELU's backward (x = the gradient of GELU's output, h = its input), or
// the mean squared error's gradient grad_scale (y - t) rounded to BF16 (x = y, h = t), the
// values mse_loss writes; its cast also writes the loss partial sums (CastTarget).
// MseGradF32 is the CPU trainer's gradient: (y - t) grad_scale times the loss scale, in
// float32 without a BF16 rounding (the emulated recipes' casts).
// SwiGLU (the transformer's feed-forward block; f = ld): SwigluOfBf16 reads silu(gate) x up
// from x, rows of gate (f columns) then up (f), so the cast of the down projection's input
// needs no pass of its own; SwigluGradBf16 reads the gradient of that pair, rows of 2f
// (x = the gradient of SwiGLU's output, rows of f; h = the gate|up pair), for the cast of
// the gate/up projection's output gradient. Both rounded to BF16, as the SwiGLU kernels
// store them.
enum class Source { Bf16, F32, GeluOfBf16, GeluGradBf16, MseGradBf16, MseGradF32, SwigluOfBf16, SwigluGradBf16 };
struct CastSource {
    Source kind = Source::Bf16;
    const void* x = nullptr;
    const void* h = nullptr;
    int ld = 0;
    float grad_scale = 0.0f;            // MseGrad*: 2 / (scored rows x columns)
    const float* loss_scale = nullptr;  // MseGradF32: the dynamic loss scale on the device (null: 1)
    // MseGrad*: per row 1 where the loss counts it, 0 where not (the outlier task's massive
    // rows: their gradient is exactly zero); null: every row counts.
    const float* row_mask = nullptr;
};
// One cast's numerics as the per-tensor cast kernel counts them (emu::TensorNumerics'
// definitions: zeros before the cast, finite non-zero scaled values that become code 0,
// that round past the format's largest value, that land on a subnormal code; the squared
// error of the dequantised value and the squared value, for the relative error).
struct CastStats {
    unsigned long long zeros = 0, flushed = 0, saturated = 0, subnormal = 0;
    double error_squares = 0, value_squares = 0;
};
// A tensor's counts while its casts run, in this many copies: each block of a cast adds its
// sums to copy (block index mod kStatsLanes), so that thousands of blocks do not queue on one
// address (every warp adding to one copy made a 4096-16384-4096 step 48% slower on an H100);
// they are summed when the step ends.
constexpr int kStatsLanes = 32;

// Where the FP8 codes go: out (rows x cols, leading dimension cols) and out_t (the
// transpose, leading dimension ld_t), either may be null; amax_bits gets max |value|.
// With `stats` (kStatsLanes copies) the kernel adds the cast's counts to them (numerics
// recording on; off, it does none of that work).
struct CastTarget {
    const DeviceScaling* scaling = nullptr;
    bool e4m3 = true;
    std::uint8_t* out = nullptr;
    std::uint8_t* out_t = nullptr;
    int ld_t = 0;
    unsigned* amax_bits = nullptr;
    // MseGradBf16: the sum of (y - t)^2 over each 64 x 64 tile, at loss_partials[tile]
    // (cast_tiles(rows, cols) of them), for finish_step.
    float* loss_partials = nullptr;
    CastStats* stats = nullptr;
};
int cast_tiles(int rows, int cols);
void cast_transpose(const CastSource& source, int rows, int cols, const CastTarget& target, cudaStream_t stream);
// Current scaling's first pass and its scale (emu::current_scale on the device).
void amax_only(const CastSource& source, int rows, int cols, unsigned* amax_bits, cudaStream_t stream);
void current_scale(const unsigned* amax_bits, float max_finite, DeviceScaling* scaling, cudaStream_t stream);

// The BF16 path's GELU: a = gelu(h); and grad <- grad * gelu'(h) in place.
void gelu_forward_bf16(const void* h, void* a, std::size_t n, cudaStream_t stream);
void gelu_backward_bf16(void* grad, const void* h, std::size_t n, cudaStream_t stream);

// Mean squared error: grad = 2 (y - t) / n as BF16, and loss_partials(n) partial sums of
// (y - t)^2, one per thread block, that finish_step adds in a fixed order (bit-for-bit
// repeatable). n must be even. (FP8 with per-tensor scaling folds this into the gradient's
// cast instead: Source::MseGradBf16.)
inline constexpr int kMaxLossPartials = 1024;
int loss_partials(std::size_t n);
// `row_mask` (rows floats, may be null) as CastSource's; n = rows x cols, grad_scale = 2 /
// (scored rows x cols).
void mse_loss(const void* y, const void* target, std::size_t n, int cols, const float* row_mask, float grad_scale,
              void* grad, float* partials, cudaStream_t stream);

struct AdamParams {
    float learning_rate, beta1, beta2, epsilon, weight_decay;
    // The learning rate of each training step (emu::learning_rates), on the device; null:
    // learning_rate at every step.
    const float* rate_per_step = nullptr;
    // Adam's bias corrections (1 - beta1^t, 1 - beta2^t) for t = 0 .. steps, made on the
    // host as the CPU trainer makes them; null: powf on the device. A table, because
    // nvcc's inlined powf took another path when the code around it changed (the same
    // AdamW arithmetic, other last bits of c1 and c2, other weights after a few steps).
    const float2* corrections = nullptr;
    // A factor on the device every gradient is multiplied by as it is read (the gradient
    // clip's, the CPU's g *= factor before its update); null: none.
    const float* grad_scale = nullptr;
};

#ifdef __CUDACC__
// One weight's AdamW update with the bias corrections c1, c2: every AdamW kernel runs this.
// Each operation rounded on its own (the _rn intrinsics are never contracted into FMAs), in
// the CPU trainer's order: nvcc chose other contractions in other kernels around the same
// code, so two kernels updating the same weights drifted apart by an ulp a step.
__device__ inline void adamw_one(float& w, float& m, float& v, float g, const AdamParams& p, float c1, float c2) {
    m = __fadd_rn(__fmul_rn(p.beta1, m), __fmul_rn(1.0f - p.beta1, g));
    v = __fadd_rn(__fmul_rn(p.beta2, v), __fmul_rn(__fmul_rn(1.0f - p.beta2, g), g));
    const float step = __fdiv_rn(__fdiv_rn(m, c1), __fadd_rn(__fsqrt_rn(__fdiv_rn(v, c2)), p.epsilon));
    w = __fsub_rn(w, __fmul_rn(p.learning_rate, __fadd_rn(step, __fmul_rn(p.weight_decay, w))));
}

// Adam's bias corrections of step t (from 1): c1 = 1 - beta1^t, c2 = 1 - beta2^t.
__device__ inline float2 adamw_corrections(const AdamParams& p, int t) {
    if (p.corrections) return p.corrections[t];
    return {1.0f - powf(p.beta1, float(t)), 1.0f - powf(p.beta2, float(t))};
}

// The learning rate of training step `step` (from 0).
__device__ inline float adamw_rate(const AdamParams& p, int step) {
    return p.rate_per_step ? p.rate_per_step[step] : p.learning_rate;
}

// Four weights' update, both AdamW kernels' loop body: w, m and v at quad i read, updated
// with the gradient g, written back; returns the new weights.
__device__ inline float4 adamw_quad(float4* w, float4* m, float4* v, std::size_t i, float4 g, const AdamParams& p,
                                    float2 c) {
    float4 wi = w[i], mi = m[i], vi = v[i];
    adamw_one(wi.x, mi.x, vi.x, g.x, p, c.x, c.y);
    adamw_one(wi.y, mi.y, vi.y, g.y, p, c.x, c.y);
    adamw_one(wi.z, mi.z, vi.z, g.z, p, c.x, c.y);
    adamw_one(wi.w, mi.w, vi.w, g.w, p, c.x, c.y);
    m[i] = mi;
    v[i] = vi;
    w[i] = wi;
    return wi;
}
#endif
// AdamW on float32 master weights with the bias correction of step *step + 1 + step_offset
// (-1 for an update that runs after the step counter moved on); w_bf16 (may be null)
// receives the updated weights for the BF16 GEMMs. n must be a multiple of 4.
void adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const int* step,
           int step_offset, void* w_bf16, cudaStream_t stream);
// The same update of a rows x cols weight (multiples of 16), whose new values are cast and
// transposed into `target` (as cast_transpose, with the scale target.scaling holds when the
// kernel runs) in the same pass: delayed scaling's next FP8 weight without a pass of its own.
void adamw_cast_transpose(float* w, float* m, float* v, const float* grad, int rows, int cols, AdamParams p,
                          const int* step, int step_offset, const CastTarget& target, cudaStream_t stream);

// The FP8 per-tensor scaling state: per scaled tensor j, the trace row of the step gets
// amax_bits[j] and the scale used; delayed scaling pushes the amax into history j and
// updates scaling[j] (the emulator's rule, numerators[j] = max >> margin); amax_bits[j] is
// cleared for the next step.
struct ScalingStateArrays {
    DeviceScaling* scaling;
    unsigned* amax_bits;
    float* history;  // tensors x history_length
    const float* numerators;
    float* trace_amax;  // capacity x tensors (may be null)
    float* trace_scale;
    // Numerics recording: the casts' counts this step (tensors x kStatsLanes, summed and
    // cleared after each step) and the record of every step (capacity x tensors); both
    // null when off.
    CastStats* stats = nullptr;
    CastStats* trace_stats = nullptr;
};
struct StepEnd {
    const float* loss_partials = nullptr;
    int loss_partial_count = 0;
    float inv_outputs = 0;    // 1 / n of the MSE
    float* losses = nullptr;  // losses[*step] when *step < capacity
    int capacity = 0;
    ScalingStateArrays scaling{};  // scaling.scaling null: BF16, nothing to record
    int tensors = 0, history_length = 0;
    bool algorithm_max = true, delayed = true;
};
// One small kernel ends a step: the loss, the scaling state, then ++*step (after every
// reader of the step in it).
void finish_step(const StepEnd& end, int* step, cudaStream_t stream);

// Numerics recording where the step's end is not finish_step's (the transformer): per
// tensor j, its lanes (kStatsLanes each, cleared) summed into records[*step * tensors + j],
// with *amax_bits[j] and scaling[j]->scale (1 where scaling[j] is null) beside them; steps
// past `capacity` are counted and dropped. Every pointer array holds `tensors` entries.
struct NumericsCollect {
    CastStats* lanes = nullptr;
    CastStats* records = nullptr;
    float* amax = nullptr;
    float* scale = nullptr;
    const unsigned* const* amax_bits = nullptr;
    const DeviceScaling* const* scaling = nullptr;
    int tensors = 0, capacity = 0;
};
void collect_numerics(const NumericsCollect& c, const int* step, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
