// SPDX-License-Identifier: Apache-2.0
// Scale selection of each block recipe, in the float32 operation order of docs/numerics.md §4.
#include "emulator/scaling/block_recipes.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/formats/e8m0_float32.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/scaling/hadamard16.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

constexpr std::uint8_t kE8m0Nan = 0xFF;

// 2^k for k in [-127, 127], from its bits (ldexp's value, without a library call per block):
// 2^-127 is float32's subnormal 0x00400000.
float power_of_two(int k) {
    return k >= -126 ? std::bit_cast<float>(std::uint32_t(k + 127) << 23)
                     : std::bit_cast<float>(0x00800000u >> (-126 - k));
}

BlockScale e8m0_scale(int code) {
    // X = 2^(code - 127); elements are multiplied by 1/X = 2^(127 - code), exact in float.
    return {power_of_two(127 - code), power_of_two(code - 127), static_cast<std::uint8_t>(code)};
}

// floor(log2 a) of a finite a > 0, from the exponent field (ilogb's value; float32
// subnormals, which have no field to read it from, through ilogb).
int floor_log2(float a) {
    const int field = int(std::bit_cast<std::uint32_t>(a) >> 23);
    return field > 0 ? field - 127 : std::ilogb(a);
}

BlockScale nan_scale() { return {1.0f, std::numeric_limits<float>::quiet_NaN(), kE8m0Nan}; }

}  // namespace

std::string_view mx_scale_rule_name(MxScaleRule rule) { return enum_name(rule); }

QuantizedTensor quantize_per_tensor(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& format,
                                    bool power_of_two_scale, const ConvertOptions& options) {
    return quantize_blocks(x, rows, cols, {std::max<std::size_t>(rows, 1), std::max<std::size_t>(cols, 1)}, format,
                           options, [&](float a) {
                               const ScalePair s = current_scale(a, format, power_of_two_scale);
                               return BlockScale{s.scale, s.scale_inv};
                           });
}

QuantizedTensor quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& element,
                            MxScaleRule rule, std::size_t block_size, const ConvertOptions& options) {
    return quantize_mx(x, rows, cols, element, rule, BlockShape{1, block_size}, options);
}

QuantizedTensor quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols, const Format& element,
                            MxScaleRule rule, BlockShape block, const ConvertOptions& options,
                            std::span<float> values) {
    if (block.rows != 1 && block.cols != 1)
        throw std::invalid_argument("MX blocks are one row or one column, not " + std::to_string(block.rows) + " x " +
                                    std::to_string(block.cols));
    if (element.total_bits > 8 || element.encoding == Encoding::ScaleE8M0)
        throw std::invalid_argument("MX elements are FP8, FP6 or FP4, not " + std::string(element.name));
    const int emax = element.max_exponent;
    const float inv_max = 1.0f / static_cast<float>(element.max_finite);
    const auto scale_of = [&](float a) {
        if (std::isinf(a)) return nan_scale();
        if (rule == MxScaleRule::OcpFloor) {
            // floor(log2(amax)) from the bits (ilogb), never from log2f.
            const int unbiased = a == 0.0f ? -127 : floor_log2(a) - emax;
            return e8m0_scale(std::clamp(unbiased + 127, 0, 254));
        }
        // amax / max rounded up to a power of two, from the float's bits (encode()'s value).
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(a * inv_max);
        return e8m0_scale(detail::e8m0_code_of_float32(bits, RoundingMode::Up, Saturation::Finite));
    };
    QuantizedTensor q = quantize_blocks(x, rows, cols, block, element, options, scale_each(scale_of), values);
    q.scale_format = &e8m0();
    return q;
}

QuantizedTensor quantize_blockwise(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                   const ConvertOptions& options) {
    return quantize_blocks(x, rows, cols, block, e4m3(), options, scale_each([](float a) {
                               const ScalePair s = current_scale(a, e4m3(), true);
                               return BlockScale{s.scale, s.scale_inv};
                           }));
}

QuantizedTensor quantize_nvfp4(std::span<const float> input, std::size_t rows, std::size_t cols, const Nvfp4Options& o,
                               std::span<float> values) {
    std::vector<float> transformed;
    std::span<const float> x = input;
    if (o.hadamard) {
        transformed.assign(input.begin(), input.end());
        random_hadamard_transform_16(transformed, rows, cols, o.hadamard_seed);
        x = transformed;
    }
    const bool known = o.tensor_amax && !o.hadamard;
    const float tensor_amax = known ? *o.tensor_amax : amax(x);
    // Transformer Engine clamps: an amax below 2688 / FLT_MAX would give an infinite S_enc
    // and a tensor that dequantises to zero.
    float s_enc =
        tensor_amax == 0.0f || !std::isfinite(tensor_amax) ? 1.0f : std::min(448.0f * 6.0f / tensor_amax, FLT_MAX);
    if (s_enc == 0.0f) s_enc = 1.0f;
    const float s_enc_inv = 1.0f / s_enc;
    const float sixth = 1.0f / 6.0f;
    const BlockShape block = o.weight_tiles ? BlockShape{16, 16} : BlockShape{1, 16};
    ConvertOptions element_options;
    if (o.stochastic) {
        element_options.rounding = RoundingMode::Stochastic;
        element_options.seed = o.seed;
        element_options.random_bits = o.random_bits;
    }
    // The block scales' cast in the shared float32 kernel (encode()'s codes, its inputs
    // checked against it for all 2^32 floats) and their values from a table: per block
    // these were the scalar encoder's and decoder's calls.
    const detail::Float32KernelConstants e4m3_finite =
        detail::make_float32_kernel_constants(e4m3(), Saturation::Finite);
    const std::vector<float>& e4m3_values = detail::value_table(e4m3());
    const auto scale_of = [&](float a) {
        // d = cvt_e4m3(amax_block * (S_enc * (1/6))); multiplier = min(1/(d * (1/S_enc)), FLT_MAX)
        const std::uint32_t d_code = detail::encode_float32_bits<RoundingMode::NearestEven>(
            std::bit_cast<std::uint32_t>(a * (s_enc * sixth)), e4m3_finite, 0, 0);
        const float d = e4m3_values[d_code];
        const float scale_inv = d * s_enc_inv;
        const float multiplier = std::fmin(1.0f / scale_inv, FLT_MAX);
        return BlockScale{multiplier, scale_inv, static_cast<std::uint8_t>(d_code)};
    };
    QuantizedTensor q = quantize_blocks(x, rows, cols, block, e2m1(), element_options, scale_each(scale_of), values);
    if (known && std::bit_cast<std::uint32_t>(q.tensor_amax()) != std::bit_cast<std::uint32_t>(tensor_amax))
        throw std::logic_error("quantize_nvfp4: the amax was given as " + std::to_string(tensor_amax) +
                               ", the cast found " + std::to_string(q.tensor_amax()));
    q.scale_format = &e4m3();
    q.tensor_scale_inv = s_enc_inv;
    return q;
}

void random_hadamard_transform_16(std::span<float> x, std::size_t rows, std::size_t cols, std::uint64_t seed) {
    if (rows * cols != x.size() || cols % 16 != 0)
        throw std::invalid_argument("the Hadamard transform needs columns in groups of 16");
    float sign[16];
    hadamard16_signs(seed, sign);
    for (std::size_t start = 0; start < x.size(); start += 16) {
        float group[16];
        std::copy(x.begin() + std::ptrdiff_t(start), x.begin() + std::ptrdiff_t(start + 16), group);
        hadamard16(group, sign);
        std::copy(group, group + 16, x.begin() + std::ptrdiff_t(start));
    }
}

}  // namespace fp8lab::emu

namespace fp8lab {

template <>
std::span<const EnumName<emu::MxScaleRule>> enum_names<emu::MxScaleRule>() {
    static constexpr EnumName<emu::MxScaleRule> table[] = {{emu::MxScaleRule::OcpFloor, "ocp-floor"},
                                                           {emu::MxScaleRule::Rceil, "rceil"}};
    return table;
}

}  // namespace fp8lab
