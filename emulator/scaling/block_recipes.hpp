// SPDX-License-Identifier: Apache-2.0
// The block-scaled recipes: per-tensor, MX (OCP floor / RCEIL), DeepSeek blockwise, NVFP4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/base/enum_names.hpp"
#include "emulator/formats/quantized_tensor.hpp"

namespace fp8lab::emu {

// Current scaling of the whole tensor as one block (docs/numerics.md §4).
QuantizedTensor quantize_per_tensor(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& format,
                                    bool power_of_two_scale = false, const ConvertOptions& options = {});

enum class MxScaleRule { OcpFloor, Rceil };
std::string_view mx_scale_rule_name(MxScaleRule rule);

// MX: blocks of `block_size` along the columns, one E8M0 scale each.
// OCP floor: X = 2^(floor(log2 amax) - emax_elem), elements cvt(x / X).
// RCEIL: e = E8M0(amax * (1/max)) rounded up, elements cvt(x * 2^(127 - e)).
// A block whose amax is Inf gets the NaN scale 0xFF (OCP MX: the block is NaN).
QuantizedTensor quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& element_format,
                            MxScaleRule rule, std::size_t block_size = 32, const ConvertOptions& options = {});
// The same with blocks of `block`: 1 x n along the rows, or n x 1 (a transposed operand's
// blocks laid over it).
QuantizedTensor quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& element_format,
                            MxScaleRule rule, BlockShape block, const ConvertOptions& options,
                            std::span<float> values = {});  // as quantize_blocks' values

// DeepSeek-V3: E4M3, 1x128 blocks (activations, gradients) or 128x128 tiles (weights),
// each with current scaling and a power-of-two scale.
QuantizedTensor quantize_blockwise(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                   const ConvertOptions& options = {});

struct Nvfp4Options {
    bool weight_tiles = false;  // 16x16 blocks (weights) instead of 1x16
    bool stochastic = false;    // stochastic rounding of the elements (gradients)
    std::uint64_t seed = 0;
    int random_bits = 32;
    // Apply random_hadamard_transform_16 (with hadamard_seed) before quantising: the
    // tensor then holds transformed values, for GEMMs whose both operands get the same
    // transform along the contraction dimension (NVFP4's wgrad). Columns in groups of 16.
    bool hadamard = false;
    std::uint64_t hadamard_seed = 0;
    // x's amax where whatever wrote x found it (AdamW, for a weight): S_enc without a pass of
    // its own over x. Checked against the blocks' amaxes, which the cast finds anyway (a
    // mismatch throws std::logic_error); ignored under the Hadamard transform.
    std::optional<float> tensor_amax = std::nullopt;
};
// NVFP4: E2M1 elements, one E4M3 scale per block, a float32 tensor scale S_enc.
QuantizedTensor quantize_nvfp4(std::span<const float> x, std::size_t rows, std::size_t cols,
                               const Nvfp4Options& options = {},
                               std::span<float> values = {});  // as quantize_blocks' values

// The random Hadamard transform NVFP4 applies to the wgrad inputs: each row's groups of
// 16 columns become H16 * diag(signs) / 4, an orthogonal map, so a product of two
// transformed operands is unchanged while outliers are spread across the group.
void random_hadamard_transform_16(std::span<float> x, std::size_t rows, std::size_t cols, std::uint64_t seed);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::MxScaleRule>> enum_names<emu::MxScaleRule>();  // "ocp-floor", "rceil"
}
