// SPDX-License-Identifier: Apache-2.0
// A cast's numerics counted where the cast happens: each thread tallies its elements, each
// warp adds its tallies to the tensor's CastStats (the per-tensor cast kernel, stats on).
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "gpu/src/train_kernels.hpp"

namespace fp8lab::gpu::train {

struct CastTally {
    unsigned zeros = 0, flushed = 0, saturated = 0, subnormal = 0;
    float error_squares = 0.0f, value_squares = 0.0f;

    // Four values and their four codes (element i in byte i), as to_fp8x4 cast them with
    // `scale`; the dequantised value is the decoded code times scale_inv, as the GEMM reads it.
    __device__ void add(float4 v, std::uint32_t codes, float scale, float scale_inv, __nv_fp8_interpretation_t format) {
        const float x[4] = {v.x, v.y, v.z, v.w};
        const unsigned first_normal = format == __NV_E4M3 ? 0x08u : 0x04u;  // the lowest exponent's first code
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const unsigned code = (codes >> (8 * i)) & 0xffu, magnitude = code & 0x7fu;
            const float scaled = __fmul_rn(x[i], scale);
            const bool finite = isfinite(scaled);
            zeros += x[i] == 0.0f;
            flushed += finite && scaled != 0.0f && magnitude == 0;
            // Past the largest value after rounding: the non-saturating conversion gives NaN
            // (E4M3) or Inf (E5M2) exactly there.
            const unsigned rounded = __nv_cvt_float_to_fp8(scaled, __NV_NOSAT, format) & 0x7fu;
            saturated += finite && (format == __NV_E4M3 ? rounded == 0x7fu : rounded >= 0x7cu);
            subnormal += finite && magnitude != 0 && magnitude < first_normal;
            const float decoded = __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(code), format)));
            const float d = __fmul_rn(decoded, scale_inv) - x[i];
            error_squares = fmaf(d, d, error_squares);
            value_squares = fmaf(x[i], x[i], value_squares);
        }
    }
};

// Sums the block's tallies warp by warp and adds each warp's to *stats (every thread calls it).
__device__ inline void publish_stats(CastTally t, CastStats* stats) {
    for (int offset = 16; offset > 0; offset /= 2) {
        t.zeros += __shfl_xor_sync(0xffffffffu, t.zeros, offset);
        t.flushed += __shfl_xor_sync(0xffffffffu, t.flushed, offset);
        t.saturated += __shfl_xor_sync(0xffffffffu, t.saturated, offset);
        t.subnormal += __shfl_xor_sync(0xffffffffu, t.subnormal, offset);
        t.error_squares += __shfl_xor_sync(0xffffffffu, t.error_squares, offset);
        t.value_squares += __shfl_xor_sync(0xffffffffu, t.value_squares, offset);
    }
    if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0) {
        if (t.zeros) atomicAdd(&stats->zeros, (unsigned long long)t.zeros);
        if (t.flushed) atomicAdd(&stats->flushed, (unsigned long long)t.flushed);
        if (t.saturated) atomicAdd(&stats->saturated, (unsigned long long)t.saturated);
        if (t.subnormal) atomicAdd(&stats->subnormal, (unsigned long long)t.subnormal);
        atomicAdd(&stats->error_squares, double(t.error_squares));
        atomicAdd(&stats->value_squares, double(t.value_squares));
    }
}

}  // namespace fp8lab::gpu::train
