// SPDX-License-Identifier: Apache-2.0
// DeepSeek-style blockwise E4M3 casts on the device (docs/numerics.md §4): 1 x 128 blocks
// along the rows and, for the transpose, 1 x 128 blocks along the columns (what a GEMM
// contracting over the rows needs), or 128 x 128 tiles (weights). Each block is scaled as
// current scaling with a power-of-two scale, as emu::quantize_blockwise does.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {

struct BlockwiseTarget {
    bool tiles = false;             // 128 x 128 tiles, else 1 x 128 blocks
    std::uint8_t* out = nullptr;    // rows x cols codes (may be null)
    float* scale_inv = nullptr;     // their block scales in BlockScaleLayout{tiles, rows, cols}
    std::size_t scale_line = 0;     // that layout's line()
    std::uint8_t* out_t = nullptr;  // the transpose, cols x rows, leading dimension ld_t (may be null)
    int ld_t = 0;
    float* scale_inv_t = nullptr;  // in BlockScaleLayout{tiles, cols, rows}
    std::size_t scale_line_t = 0;
    unsigned* amax_bits = nullptr;  // max |x| of the whole tensor, for the amax trace (may be null)
    // Numerics recording: the counts of the cast of `out` (row blocks or tiles: the one the
    // CPU records), kStatsLanes copies; null: not counted.
    CastStats* stats = nullptr;
};

// rows and cols must be multiples of 16 (as every GEMM dimension).
void blockwise_cast(const CastSource& source, int rows, int cols, const BlockwiseTarget& target, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
