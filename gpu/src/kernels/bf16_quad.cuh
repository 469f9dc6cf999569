// SPDX-License-Identifier: Apache-2.0
// Four BF16 values read or written as one 8-byte access, and float32 rounded to BF16: the
// element-wise, norm and cast kernels all use these, so that they round alike.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>

namespace fp8lab::gpu {

// Elements i .. i + 3 of a BF16 array (i a multiple of 4), as floats.
__device__ inline float4 load_bf16x4(const void* base, std::size_t i) {
    const uint2 raw = *reinterpret_cast<const uint2*>(static_cast<const __nv_bfloat16*>(base) + i);
    const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
    const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
    return make_float4(lo.x, lo.y, hi.x, hi.y);
}

// v rounded to BF16, nearest even, into elements i .. i + 3.
__device__ inline void store_bf16x4(void* base, std::size_t i, float4 v) {
    const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
    uint2 raw;
    raw.x = *reinterpret_cast<const unsigned*>(&lo);
    raw.y = *reinterpret_cast<const unsigned*>(&hi);
    *reinterpret_cast<uint2*>(static_cast<__nv_bfloat16*>(base) + i) = raw;
}

// v as the step stores it in BF16 (nearest even), back in float32.
__device__ inline float bf16_rounded(float v) { return __bfloat162float(__float2bfloat16(v)); }

}  // namespace fp8lab::gpu
