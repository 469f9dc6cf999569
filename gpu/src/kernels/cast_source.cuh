// SPDX-License-Identifier: Apache-2.0
// What a cast kernel reads at (row, col) (BF16, float32, GELU or SwiGLU and their backward),
// the FP8 conversion and the block-wide amax: shared by the per-tensor and blockwise casts.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <type_traits>

#include "gpu/src/kernels/bf16_quad.cuh"
#include "gpu/src/kernels/swiglu.cuh"
#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {

// GELU, tanh approximation (the CPU trainer's function), and its derivative, written with
// 0.5 (1 + tanh u) = sigmoid(2u): one ex2 and one approximate reciprocal instead of tanhf
// and the arithmetic around it. GELU + cast was bound by instructions (38 an element),
// not by memory; this rounds differently from tanhf by a few float32 ulps, far below the
// BF16 and FP8 steps that follow.
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;
__device__ inline float gelu_sigmoid(float x) {  // sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
    const float u = kGeluC * x * fmaf(kGeluA * x, x, 1.0f);
    return __fdividef(1.0f, 1.0f + __expf(-2.0f * u));  // exp overflows to Inf: 1 / Inf = 0
}
__device__ inline float gelu(float x) { return x * gelu_sigmoid(x); }
__device__ inline float gelu_grad(float x) {  // s + x s (1 - s) 2 du/dx
    const float s = gelu_sigmoid(x);
    return fmaf(2.0f * x * s * (1.0f - s), kGeluC * fmaf(3.0f * kGeluA * x, x, 1.0f), s);
}

// SwiGLU's four values at (r, c .. c + 3), or their gradient (a quad lies in the gate
// half or the up half: f is a multiple of 16).
template <Source K>
__device__ inline float4 load_swiglu_quad(const CastSource& s, int r, int c) {
    const std::size_t f = std::size_t(s.ld), pair = std::size_t(r) * 2 * f;
    if constexpr (K == Source::SwigluOfBf16) {
        const float4 g = load_bf16x4(s.x, pair + c), u = load_bf16x4(s.x, pair + f + c);
        return make_float4(swiglu::value(g.x, u.x), swiglu::value(g.y, u.y), swiglu::value(g.z, u.z),
                           swiglu::value(g.w, u.w));
    } else {
        const bool up = std::size_t(c) >= f;
        const std::size_t j = up ? c - f : c;
        const float4 d = load_bf16x4(s.x, std::size_t(r) * f + j), g = load_bf16x4(s.h, pair + j);
        if (up)
            return make_float4(swiglu::up_grad(d.x, g.x), swiglu::up_grad(d.y, g.y), swiglu::up_grad(d.z, g.z),
                               swiglu::up_grad(d.w, g.w));
        const float4 u = load_bf16x4(s.h, pair + f + j);
        return make_float4(swiglu::gate_grad(d.x, g.x, u.x), swiglu::gate_grad(d.y, g.y, u.y),
                           swiglu::gate_grad(d.z, g.z, u.z), swiglu::gate_grad(d.w, g.w, u.w));
    }
}

// Four neighbours along a row in one 8- or 16-byte load (cols are multiples of 16);
// MseGradBf16 adds the four (y - t)^2 to `squares`.
template <Source K>
__device__ inline float4 load_quad(const CastSource& s, int r, int c, float& squares) {
    if constexpr (K == Source::SwigluOfBf16 || K == Source::SwigluGradBf16) return load_swiglu_quad<K>(s, r, c);
    const std::size_t i = std::size_t(r) * s.ld + c;
    if constexpr (K == Source::F32) return *reinterpret_cast<const float4*>(static_cast<const float*>(s.x) + i);
    const float4 x = load_bf16x4(s.x, i);
    if constexpr (K == Source::Bf16) return x;
    if constexpr (K == Source::GeluOfBf16) return make_float4(gelu(x.x), gelu(x.y), gelu(x.z), gelu(x.w));
    const float4 h = load_bf16x4(s.h, i);
    if constexpr (K == Source::GeluGradBf16)
        return make_float4(x.x * gelu_grad(h.x), x.y * gelu_grad(h.y), x.z * gelu_grad(h.z), x.w * gelu_grad(h.w));
    float4 d = make_float4(x.x - h.x, x.y - h.y, x.z - h.z, x.w - h.w);
    if (s.row_mask && s.row_mask[r] == 0.0f) d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // a row the loss leaves out
    squares += d.x * d.x + d.y * d.y + d.z * d.z + d.w * d.w;
    if constexpr (K == Source::MseGradF32) {
        const float ls = s.loss_scale ? *s.loss_scale : 1.0f;
        return make_float4(__fmul_rn(__fmul_rn(d.x, s.grad_scale), ls), __fmul_rn(__fmul_rn(d.y, s.grad_scale), ls),
                           __fmul_rn(__fmul_rn(d.z, s.grad_scale), ls), __fmul_rn(__fmul_rn(d.w, s.grad_scale), ls));
    }
    return make_float4(bf16_rounded(d.x * s.grad_scale), bf16_rounded(d.y * s.grad_scale),
                       bf16_rounded(d.z * s.grad_scale), bf16_rounded(d.w * s.grad_scale));
}
template <Source K>
__device__ inline float4 load_quad(const CastSource& s, int r, int c) {
    float unused = 0.0f;
    return load_quad<K>(s, r, c, unused);
}

// One element at (r, c), as load_quad reads it (for the casts that walk down a column).
template <Source K>
__device__ inline float load_one(const CastSource& s, int r, int c) {
    if constexpr (K == Source::SwigluOfBf16 || K == Source::SwigluGradBf16) {
        const std::size_t f = std::size_t(s.ld), pair = std::size_t(r) * 2 * f;
        const auto at = [](const void* p, std::size_t i) {
            return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        };
        if constexpr (K == Source::SwigluOfBf16) return swiglu::value(at(s.x, pair + c), at(s.x, pair + f + c));
        if (std::size_t(c) >= f) return swiglu::up_grad(at(s.x, r * f + c - f), at(s.h, pair + c - f));
        return swiglu::gate_grad(at(s.x, r * f + c), at(s.h, pair + c), at(s.h, pair + f + c));
    }
    const std::size_t i = std::size_t(r) * s.ld + c;
    if constexpr (K == Source::F32) return static_cast<const float*>(s.x)[i];
    const float x = __bfloat162float(static_cast<const __nv_bfloat16*>(s.x)[i]);
    if constexpr (K == Source::Bf16) return x;
    if constexpr (K == Source::GeluOfBf16) return gelu(x);
    const float h = __bfloat162float(static_cast<const __nv_bfloat16*>(s.h)[i]);
    if constexpr (K == Source::GeluGradBf16) return x * gelu_grad(h);
    const float d = s.row_mask && s.row_mask[r] == 0.0f ? 0.0f : x - h;
    if constexpr (K == Source::MseGradF32)
        return __fmul_rn(__fmul_rn(d, s.grad_scale), s.loss_scale ? *s.loss_scale : 1.0f);
    return bf16_rounded(d * s.grad_scale);
}

__device__ inline float abs_max4(float4 v) {
    return fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
}

// The thread's index in its block, x fastest (the order warps are formed in), for 1D
// and 2D blocks alike.
__device__ inline int thread_in_block() { return int(threadIdx.x + threadIdx.y * blockDim.x); }

// fmaxf skips NaN and keeps Inf (as the emulator's amax); non-negative floats order like
// their bits. One atomicMax per block: per warp, it serialised millions of atomics on
// one address and made the casts ten times slower than memory allows.
template <int kWarps>
__device__ inline void publish_amax(float local, unsigned* amax_bits) {
    __shared__ float warp_max[kWarps];
    for (int offset = 16; offset > 0; offset /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
    const int id = thread_in_block(), lane = id & 31, warp = id >> 5;
    if (lane == 0) warp_max[warp] = local;
    __syncthreads();
    if (warp == 0) {
        local = lane < kWarps ? warp_max[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2)
            local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
        if (lane == 0) atomicMax(amax_bits, __float_as_uint(local));
    }
}

// The block's sum, by a fixed tree (the same bits on every run), written by one thread.
template <int kWarps>
__device__ inline void publish_sum(float local, float* sum) {
    __shared__ float warp_sum[kWarps];
    for (int offset = 16; offset > 0; offset /= 2) local += __shfl_xor_sync(0xffffffffu, local, offset);
    const int id = thread_in_block(), lane = id & 31, warp = id >> 5;
    if (lane == 0) warp_sum[warp] = local;
    __syncthreads();
    if (warp == 0 && lane == 0) {
        float total = 0.0f;
        for (int w = 0; w < kWarps; ++w) total += warp_sum[w];
        *sum = total;
    }
}

__device__ inline std::uint8_t to_fp8(float v, float scale, __nv_fp8_interpretation_t format) {
    return __nv_cvt_float_to_fp8(__fmul_rn(v, scale), __NV_SATFINITE, format);
}

// Four codes in one word, the first column in the lowest byte (the lowest address).
__device__ inline std::uint32_t to_fp8x4(float4 v, float scale, __nv_fp8_interpretation_t format) {
    const __nv_fp8x2_storage_t lo =
        __nv_cvt_float2_to_fp8x2(make_float2(__fmul_rn(v.x, scale), __fmul_rn(v.y, scale)), __NV_SATFINITE, format);
    const __nv_fp8x2_storage_t hi =
        __nv_cvt_float2_to_fp8x2(make_float2(__fmul_rn(v.z, scale), __fmul_rn(v.w, scale)), __NV_SATFINITE, format);
    return std::uint32_t(lo) | (std::uint32_t(hi) << 16);
}

// Calls launch(std::integral_constant<Source, K>{}) with K = kind for the stored kinds, and
// returns whether it did (false: SwiGLU's computed kinds). One switch from the runtime kind
// to the template instantiated for it, on the host (with_source_kind) or in a kernel (the
// emulated casts' load_vector).
#pragma nv_exec_check_disable
template <class Launch>
__host__ __device__ inline bool with_stored_kind(Source kind, Launch&& launch) {
    switch (kind) {
    case Source::Bf16:
        launch(std::integral_constant<Source, Source::Bf16>{});
        return true;
    case Source::F32:
        launch(std::integral_constant<Source, Source::F32>{});
        return true;
    case Source::GeluOfBf16:
        launch(std::integral_constant<Source, Source::GeluOfBf16>{});
        return true;
    case Source::GeluGradBf16:
        launch(std::integral_constant<Source, Source::GeluGradBf16>{});
        return true;
    case Source::MseGradBf16:
        launch(std::integral_constant<Source, Source::MseGradBf16>{});
        return true;
    case Source::MseGradF32:
        launch(std::integral_constant<Source, Source::MseGradF32>{});
        return true;
    case Source::SwigluOfBf16:
    case Source::SwigluGradBf16:
        break;
    }
    return false;
}

// with_stored_kind for every kind on the host. Computed = false: a cast of stored operands
// only (the emulated casts, whose many kernels took a minute each to compile for every
// kind: SwiGLU's sources throw there, and the layers that use those casts have their
// SwiGLU operands written out first).
template <bool Computed = true, class Launch>
void with_source_kind(Source kind, Launch&& launch) {
    if (with_stored_kind(kind, launch)) return;
    if constexpr (Computed) {
        if (kind == Source::SwigluOfBf16) return launch(std::integral_constant<Source, Source::SwigluOfBf16>{});
        return launch(std::integral_constant<Source, Source::SwigluGradBf16>{});
    } else {
        throw std::invalid_argument("this cast reads stored operands, not SwiGLU computed on the way");
    }
}

}  // namespace fp8lab::gpu::train
