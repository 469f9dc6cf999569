// SPDX-License-Identifier: Apache-2.0
// A cast's numerics counted where the cast happens: each thread tallies its elements, each
// block sums its threads' tallies and adds them to one of the tensor's kStatsLanes copies
// of its CastStats (the native casts and the emulated ones, with recording on).
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cfloat>

#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {

struct CastTally {
    unsigned zeros = 0, flushed = 0, saturated = 0, subnormal = 0;
    float error_squares = 0.0f, value_squares = 0.0f;

    // Four values and their four codes (element i in byte i), as to_fp8x4 cast them with
    // `scale`; the dequantised value is the decoded code times scale_inv, as the GEMM reads it.
    __device__ void add(float4 v, std::uint32_t codes, float scale, float scale_inv, __nv_fp8_interpretation_t format) {
        const __half2 low = __half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(codes & 0xffffu), format));
        const __half2 high = __half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(codes >> 16), format));
        const float2 d01 = __half22float2(low), d23 = __half22float2(high);
        const float x[4] = {v.x, v.y, v.z, v.w}, decoded[4] = {d01.x, d01.y, d23.x, d23.y};
#pragma unroll
        for (int i = 0; i < 4; ++i) count(x[i], (codes >> (8 * i)) & 0xffu, decoded[i], scale, scale_inv, format);
    }
    // One value and its code (a cast that writes one element a thread).
    __device__ void add_one(float x, std::uint32_t code, float scale, float scale_inv,
                            __nv_fp8_interpretation_t format) {
        const float decoded = __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(code), format)));
        count(x, code, decoded, scale, scale_inv, format);
    }

    // One element whose fate the caller decided (the emulated casts, any element format):
    // x before the cast, and its dequantised value.
    __device__ void add_flags(float x, bool flushed_to_zero, bool past_largest, bool subnormal_code,
                              float dequantised) {
        zeros += x == 0.0f;
        flushed += flushed_to_zero;
        saturated += past_largest;
        subnormal += subnormal_code;
        const float d = dequantised - x;
        error_squares = fmaf(d, d, error_squares);
        value_squares = fmaf(x, x, value_squares);
    }

  private:
    __device__ void count(float x, std::uint32_t code, float decoded, float scale, float scale_inv,
                          __nv_fp8_interpretation_t format) {
        const bool e4m3 = format == __NV_E4M3;
        // Round past the largest value: E4M3's midpoint 464 goes to 448 (the even code), and
        // E5M2's 61440 to Inf (even), so the first is strict and the second not.
        const float past = e4m3 ? 464.0f : 61440.0f;
        const unsigned first_normal = e4m3 ? 0x08u : 0x04u;  // the lowest exponent's first code
        const unsigned magnitude = code & 0x7fu;
        const float scaled = fabsf(__fmul_rn(x, scale));
        const bool finite = scaled <= FLT_MAX;  // false for Inf and NaN
        add_flags(x, finite && scaled != 0.0f && magnitude == 0, finite && (e4m3 ? scaled > past : scaled >= past),
                  finite && magnitude != 0 && magnitude < first_normal, __fmul_rn(decoded, scale_inv));
    }
};

// A tensor's kStatsLanes copies summed into one record, and cleared for the next step.
__device__ inline CastStats take_lanes(CastStats* lanes) {
    CastStats sum;
    for (int lane = 0; lane < kStatsLanes; ++lane) {
        CastStats& l = lanes[lane];
        sum.zeros += l.zeros, sum.flushed += l.flushed, sum.saturated += l.saturated;
        sum.subnormal += l.subnormal, sum.error_squares += l.error_squares;
        sum.value_squares += l.value_squares;
        l = CastStats{};
    }
    return sum;
}

// Sums the block's tallies (every thread calls it, at most 32 warps) and adds the sum to
// lanes[block index mod kStatsLanes]. Two calls in one kernel need a __syncthreads()
// between them: thread 0 may still be reading the first call's shared sums.
__device__ inline void publish_stats(CastTally t, CastStats* lanes) {
    __shared__ unsigned counts[4][32];
    __shared__ float sums[2][32];
    for (int offset = 16; offset > 0; offset /= 2) {
        t.zeros += __shfl_xor_sync(0xffffffffu, t.zeros, offset);
        t.flushed += __shfl_xor_sync(0xffffffffu, t.flushed, offset);
        t.saturated += __shfl_xor_sync(0xffffffffu, t.saturated, offset);
        t.subnormal += __shfl_xor_sync(0xffffffffu, t.subnormal, offset);
        t.error_squares += __shfl_xor_sync(0xffffffffu, t.error_squares, offset);
        t.value_squares += __shfl_xor_sync(0xffffffffu, t.value_squares, offset);
    }
    const int id = threadIdx.x + threadIdx.y * blockDim.x, warp = id / 32;
    if (id % 32 == 0) {
        counts[0][warp] = t.zeros, counts[1][warp] = t.flushed, counts[2][warp] = t.saturated;
        counts[3][warp] = t.subnormal, sums[0][warp] = t.error_squares, sums[1][warp] = t.value_squares;
    }
    __syncthreads();
    if (id == 0) {  // the others go on to the kernel's next reduction
        const int warps = int(blockDim.x * blockDim.y + 31) / 32;
        unsigned long long c[4] = {0, 0, 0, 0};
        double s[2] = {0, 0};
        for (int w = 0; w < warps; ++w) {
            for (int k = 0; k < 4; ++k) c[k] += counts[k][w];
            for (int k = 0; k < 2; ++k) s[k] += sums[k][w];
        }
        CastStats* lane = lanes + (blockIdx.x + blockIdx.y * gridDim.x) % kStatsLanes;
        if (c[0]) atomicAdd(&lane->zeros, c[0]);
        if (c[1]) atomicAdd(&lane->flushed, c[1]);
        if (c[2]) atomicAdd(&lane->saturated, c[2]);
        if (c[3]) atomicAdd(&lane->subnormal, c[3]);
        atomicAdd(&lane->error_squares, s[0]);
        atomicAdd(&lane->value_squares, s[1]);
    }
}

}  // namespace fp8lab::gpu::train
