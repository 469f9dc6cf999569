// Launchers of the training step's kernels (plain C++17 types, like kernels.hpp): fills,
// fused cast + transpose + amax with GELU forward/backward, loss, AdamW, scaling updates.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/src/kernels.hpp"

namespace fp8lab::gpu::train {

using kernels::DeviceScaling;

// N(0, stddev^2) from a counter-based hash of (seed, stream, index): the same values on
// any GPU and in any launch configuration.
void fill_normal_f32(float* out, std::size_t n, std::uint64_t seed, std::uint64_t stream_id, float stddev,
                     cudaStream_t stream);
void fill_normal_bf16(void* out, std::size_t n, std::uint64_t seed, std::uint64_t stream_id, float stddev,
                      cudaStream_t stream);
void f32_to_bf16(const float* in, void* out, std::size_t n, cudaStream_t stream);
void tanh_bf16_inplace(void* x, std::size_t n, cudaStream_t stream);

// What a cast reads at (row, col): x[row * ld + col] as BF16 or float32, GELU of a BF16
// pre-activation, or GELU's backward (x = the gradient of GELU's output, h = its input).
enum class Source { Bf16, F32, GeluOfBf16, GeluGradBf16 };
struct CastSource {
    Source kind = Source::Bf16;
    const void* x = nullptr;
    const void* h = nullptr;
    int ld = 0;
};
// Where the FP8 codes go: out (rows x cols, leading dimension cols) and out_t (the
// transpose, leading dimension ld_t), either may be null; amax_bits gets max |value|.
struct CastTarget {
    const DeviceScaling* scaling = nullptr;
    bool e4m3 = true;
    std::uint8_t* out = nullptr;
    std::uint8_t* out_t = nullptr;
    int ld_t = 0;
    unsigned* amax_bits = nullptr;
};
void cast_transpose(const CastSource& source, int rows, int cols, const CastTarget& target, cudaStream_t stream);
// Current scaling's first pass and its scale (emu::current_scale on the device).
void amax_only(const CastSource& source, int rows, int cols, unsigned* amax_bits, cudaStream_t stream);
void current_scale(const unsigned* amax_bits, float max_finite, DeviceScaling* scaling, cudaStream_t stream);

// The BF16 path's GELU: a = gelu(h); and grad <- grad * gelu'(h) in place.
void gelu_forward_bf16(const void* h, void* a, std::size_t n, cudaStream_t stream);
void gelu_backward_bf16(void* grad, const void* h, std::size_t n, cudaStream_t stream);

// Mean squared error: grad = 2 (y - t) / n as BF16, and partial sums of (y - t)^2 that
// reduce_loss adds in a fixed order into losses[*step] (bit-for-bit repeatable).
inline constexpr int kLossPartials = 256;
void mse_loss(const void* y, const void* target, std::size_t n, void* grad, float* partials, cudaStream_t stream);
void reduce_loss(const float* partials, std::size_t n, const int* step, int capacity, float* losses,
                 cudaStream_t stream);

struct AdamParams {
    float learning_rate, beta1, beta2, epsilon, weight_decay;
};
// AdamW on float32 master weights with the bias correction of step *step + 1;
// w_bf16 (may be null) receives the updated weights for the BF16 GEMMs.
void adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const int* step,
           void* w_bf16, cudaStream_t stream);

// Per scaled tensor j: records amax_bits[j] and the scale used into the trace (row
// *step, when below capacity), then for delayed scaling pushes the amax into history j
// and updates scaling[j] (emulator's rule, numerators[j] = max >> margin); clears amax_bits.
struct ScalingStateArrays {
    DeviceScaling* scaling;
    unsigned* amax_bits;
    float* history;          // tensors x history_length
    const float* numerators;
    float* trace_amax;       // capacity x tensors (may be null)
    float* trace_scale;
};
void end_step(const ScalingStateArrays& s, int tensors, int history_length, bool algorithm_max, bool delayed,
              const int* step, int capacity, cudaStream_t stream);
void advance_step(int* step, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
