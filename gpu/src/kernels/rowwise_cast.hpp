// SPDX-License-Identifier: Apache-2.0
// Per-row E4M3 casts on the device (torchao's rowwise recipe, docs/numerics.md §4): the
// codes with one power-of-two scale per row, and the transpose with one per column of the
// source (per row of the transpose), each scaled as emu::quantize casts a Row-blocked operand.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {

struct RowwiseTarget {
    std::uint8_t* out = nullptr;    // rows x cols codes (may be null)
    float* scale_inv = nullptr;     // rows floats: each row's scale_inv (cuBLASLt's OUTER_VEC_32F)
    std::uint8_t* out_t = nullptr;  // the transpose, cols x rows, leading dimension ld_t (may be null)
    int ld_t = 0;
    float* scale_inv_t = nullptr;   // cols floats
    float* scratch = nullptr;       // rows + cols floats: the amaxes, then the scales
    unsigned* amax_bits = nullptr;  // max |x| of the whole tensor, for the amax trace (may be null)
    float min_amax = 0.0f;          // each amax is at least this (torchao's 1e-12)
    // Numerics recording: the counts of the cast of `out` (one scale per row: the one the
    // CPU records), kStatsLanes copies; null: not counted.
    CastStats* stats = nullptr;
};

// rows and cols must be multiples of 16 (as every GEMM dimension).
void rowwise_cast(const CastSource& source, int rows, int cols, const RowwiseTarget& target, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
