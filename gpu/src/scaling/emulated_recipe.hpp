// SPDX-License-Identifier: Apache-2.0
// How the GPU's emulated path casts each GEMM operand of an experiment: the scale rule,
// element format, rounding, vector and block of every cast, as the CPU trainer's
// OperandQuantizer quantises the same operand. Host code only, built with or without CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "gpu/src/kernels/vector_quantize.hpp"

namespace fp8lab::gpu::detail {

struct OperandCast {
    vq::Params params;
    const emu::Format* element = nullptr;  // null for BF16 operands
    int vector = 32;                       // elements one thread takes along the contraction dimension
    int block_rows = 1, block_cols = 32;   // the block in the tensor the emulator quantises
    bool block_amax_pass = false;          // blocks larger than a vector: block_amax() first
    bool nvfp4 = false;                    // tensor_amax() first, for S_enc
    // Per-tensor scaling: one cast serves both GEMMs of the tensor, as on the CPU.
    bool per_tensor = false;
    bool square_blocks() const { return block_rows == block_cols; }
};

// The cast of one operand. `bf16`: the operand is BF16 (BF16 precision, or an edge layer
// in BF16); `wgrad_operand`: it feeds the weight gradient (NVFP4's Hadamard transform);
// `seed_key`: the tensor's key for emu::training_cast_seed (its name's length).
OperandCast plan_operand_cast(const emu::Numerics& numerics, emu::TensorRole role, bool bf16, bool wgrad_operand,
                              std::uint64_t seed_key);

// value(code) for every 8-bit code of a format (0 past the format's codes): the tables the
// kernels decode with.
std::vector<float> value_table(const emu::Format& format);

// Whether the native FP8 path (cuBLASLt FP8 GEMMs with per-tensor or blockwise scales) can
// run these numerics: E4M3 inputs and weights, E5M2 or E4M3 gradients, nearest-even
// casts that saturate, scaling on, no BF16 edge layers and no loss scaling. Anything
// else takes the emulated path (BF16 GEMMs of exactly quantised operands).
bool native_path_can_run(const emu::Numerics& numerics);

}  // namespace fp8lab::gpu::detail
