// SPDX-License-Identifier: Apache-2.0
// Launchers of the emulated recipes' kernels (plain C++17 types, like train_kernels.hpp):
// the block-scaled cast that writes a GEMM's BF16 operand (MX, NVFP4, blockwise, per-tensor
// scales with any element format, stochastic rounding), the amaxes it needs first, and
// the factor each GEMM multiplies by.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/src/kernels/train_kernels.hpp"
#include "gpu/src/kernels/vector_quantize.hpp"

namespace fp8lab::gpu::train {

// One cast of a rows x cols tensor (both multiples of 16) for one GEMM. Its blocks run
// along the GEMM's contraction dimension: along the rows of the stored tensor
// (`columns` false: the emulator quantises the tensor itself) or down its columns
// (`columns` true: the emulator quantises the transpose). Each thread takes one vector of
// `vector` elements (16 or 32) along that dimension; when a block is that vector
// (block_rows == 1 and block_cols == vector, in the emulator's tensor) the thread finds
// its amax itself, else block_amax() has put every block's amax in block_amax_bits first.
struct EmulatedCast {
    vq::Params params;
    bool columns = false;
    int vector = 32;
    int block_rows = 1, block_cols = 32;            // in the emulator's (possibly transposed) tensor
    const unsigned* block_amax_bits = nullptr;      // per block of the stored tensor, row-major over its grid
    const DeviceScaling* tensor_scaling = nullptr;  // PerTensor: the scale to cast with
    const unsigned* tensor_amax_bits = nullptr;     // Nvfp4: the amax S_enc comes from
    // Set in training: the step counter on the device, so that a captured graph draws new
    // bits each step: seed = emu::training_cast_seed(*step, params.seed) and
    // hadamard_seed = *step, as the CPU trainer forms them. Null: params as given.
    const int* step = nullptr;
    const float* element_values = nullptr;  // 256 floats: the element format's values by code
    const float* e4m3_values = nullptr;     // 256 floats: E4M3's (NVFP4's block scales)
    void* out = nullptr;                    // BF16 rows x cols: value(code) * the block's part
    float* tensor_factor = nullptr;         // the tensor's part of the dequantisation (GEMM alpha), may be null
    unsigned* amax_bits = nullptr;          // max |x| of the tensor (delayed scaling's record), may be null
    // Numerics recording: kStatsLanes copies of the tensor's counts to add this cast's to
    // (not with the Hadamard transform: its elements are not the tensor's), may be null.
    CastStats* stats = nullptr;
    // For the tests: codes in the emulator's tensor order and every block's scale_inv in the
    // emulator's block order (either may be null).
    std::uint8_t* codes = nullptr;
    float* scale_inv = nullptr;
};
void emulated_cast(const CastSource& source, int rows, int cols, const EmulatedCast& cast, cudaStream_t stream);

// Both casts of one tensor at once, for its two GEMMs: `along_rows` (columns false) and
// `down_columns` (columns true), each as emulated_cast would do it, from one read of the
// source. Only where can_cast_pair(): 16-element vectors, no block_amax pass, rows a
// multiple of 16 and cols of 128.
bool can_cast_pair(int rows, int cols, const EmulatedCast& along_rows, const EmulatedCast& down_columns);
void emulated_cast_pair(const CastSource& source, int rows, int cols, const EmulatedCast& along_rows,
                        const EmulatedCast& down_columns, cudaStream_t stream);

// Every block's amax (max |x|, NaN skipped) for blocks of block_rows x block_cols of the
// stored tensor, into block_amax_bits (zeroed first), row-major over the block grid.
void block_amax(const CastSource& source, int rows, int cols, int block_rows, int block_cols, unsigned* block_amax_bits,
                cudaStream_t stream);
// The tensor's amax into *amax_bits (zeroed first); with `hadamard_columns`, of the tensor
// after NVFP4's Hadamard transform of each column's groups of 16 rows (the wgrad operands).
// The seed is *step when `step` is set (as EmulatedCast), else hadamard_seed.
void tensor_amax(const CastSource& source, int rows, int cols, bool hadamard_columns, std::uint64_t hadamard_seed,
                 const int* step, unsigned* amax_bits, cudaStream_t stream);
// Both NVFP4 amaxes of a tensor whose rows cast and Hadamard-transformed columns cast
// (its two GEMMs) each need one, from one read: the plain amax into *plain_bits and the
// transformed one into *hadamard_bits, the seed *step as above.
void tensor_amax_pair(const CastSource& source, int rows, int cols, const int* step, unsigned* plain_bits,
                      unsigned* hadamard_bits, cudaStream_t stream);
// *alpha = *a * *b: the factor a GEMM of two emulated operands multiplies its sum by.
void gemm_alpha(const float* a, const float* b, float* alpha, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
