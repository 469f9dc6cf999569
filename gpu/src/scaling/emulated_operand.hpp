// SPDX-License-Identifier: Apache-2.0
// One emulated GEMM operand's cast, as both models' emulated steps enqueue it: the device
// tables and scratch the casts share, NVFP4's tensor amaxes, and the cast's description
// with the block-amax pass it needs first.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "gpu/src/kernels/emulated_cast.hpp"
#include "gpu/src/scaling/emulated_recipe.hpp"

namespace fp8lab::gpu::detail {

struct EmulatedCastShared {
    const int* step = nullptr;           // the step counter: stochastic bits, Hadamard signs
    const float* role_values[3] = {};    // input, weight, gradient: the element format's values by code
    const float* e4m3_values = nullptr;  // NVFP4's block scales
    unsigned* block_amax = nullptr;      // scratch for blocks larger than one vector
};

// The cast of `source` (rows x cols) by `plan` into `out` (BF16) and `factor` (the tensor's
// part of the dequantisation), its blocks along the rows or, with `columns`, down the
// columns. `nvfp4_amax`: the tensor's two NVFP4 amax slots (plain, Hadamard-transformed),
// filled by enqueue_nvfp4_amaxes this step. A block-amax pass is enqueued first where the
// blocks are larger than a vector; the per-tensor scale of per-tensor rules is the caller's.
train::EmulatedCast describe_emulated_cast(const OperandCast& plan, int role, const EmulatedCastShared& shared,
                                           const train::CastSource& source, int rows, int cols, bool columns,
                                           __nv_bfloat16* out, float* factor, unsigned* nvfp4_amax,
                                           cudaStream_t stream);

// NVFP4's tensor amaxes of a tensor before its first cast of the step: the plain one into
// slots[0] and, when its wgrad cast (`wgrad`, may be null) is Hadamard-transformed, the
// transformed one into slots[1], from one read. Nothing for other recipes.
void enqueue_nvfp4_amaxes(const OperandCast& plan, const OperandCast* wgrad, const train::CastSource& source, int rows,
                          int cols, const int* step, unsigned* slots, cudaStream_t stream);

}  // namespace fp8lab::gpu::detail
