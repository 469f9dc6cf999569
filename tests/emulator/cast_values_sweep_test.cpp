// SPDX-License-Identifier: Apache-2.0
// A cast's values (rounded in float32's bits) against its codes decoded, every float32 input
// from below half the least subnormal to past the largest value, every format with a decode;
// per tensor and in NVFP4's and MX's block widths.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/quantized_tensor.hpp"

using namespace fp8lab::emu;

namespace {

// The sanitizer tree checks the loop's memory and arithmetic, not its results again: every
// fourth exponent there (each path and both ends are still reached), every one elsewhere.
#ifdef FP8LAB_SANITIZER_TREE
constexpr int kFieldStep = 4;
#else
constexpr int kFieldStep = 1;
#endif

int exponent_field(float x) { return int(std::bit_cast<std::uint32_t>(x) >> 23); }

// Every input with exponent field `field` and sign `sign`: the values path and the codes
// path (decoded by the format's table) give the same bits (NaN: any NaN) and the same counts.
int mismatches_at(const Format& f, const std::vector<float>& table, Saturation saturation, std::uint32_t field,
                  std::uint32_t sign, std::vector<float>& x, std::vector<float>& values,
                  std::vector<float>& in_blocks) {
    const std::size_t n = std::size_t(1) << 23;
    for (std::size_t m = 0; m < n; ++m) x[m] = std::bit_cast<float>(sign << 31 | field << 23 | std::uint32_t(m));
    ConvertOptions o;
    o.saturation = saturation;
    const QuantizedTensor by_codes = quantize_with_scale(x, 1024, n / 1024, f, o, {1.0f, 1.0f});
    const QuantizedTensor by_values = quantize_with_scale(x, 1024, n / 1024, f, o, {1.0f, 1.0f}, values);
    int wrong = by_codes.counts == by_values.counts ? 0 : 1;
    const auto same_value = [](float got, float want) {
        return std::isnan(want) ? std::isnan(got)
                                : std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want);
    };
    for (std::size_t i = 0; i < n; ++i) wrong += same_value(values[i], table[by_codes.codes[i]]) ? 0 : 1;
    // The same inputs in NVFP4's and MX's block widths, every block scaled by 1: the loop
    // that casts whole blocks in vectors gives the per-tensor loop's values and counts.
    for (const std::size_t width : {16, 32}) {
        const QuantizedTensor by_blocks = quantize_blocks(
            x, 1024, n / 1024, BlockShape{1, width}, f, o,
            [](float) {
                return BlockScale{1.0f, 1.0f};
            },
            in_blocks);
        wrong += by_blocks.counts == by_values.counts ? 0 : 1;
        for (std::size_t i = 0; i < n; ++i) wrong += same_value(in_blocks[i], values[i]) ? 0 : 1;
    }
    return wrong;
}

}  // namespace

TEST_CASE("a cast's values equal its codes decoded, for every input near each format's range, both saturations") {
    // Allocated once: a 32 MB vector allocated per call was mapped afresh each time, and
    // the kernel's page faults were a third of this sweep's CPU time.
    std::vector<float> x(std::size_t(1) << 23), values(x.size()), in_blocks(x.size());
    int formats = 0;
    for (const Format& f : all_formats()) {
        if (f.total_bits > 8 || f.encoding == Encoding::FiniteNanUnsignedZero || f.encoding == Encoding::ScaleE8M0)
            continue;
        CAPTURE(f.name);
        ++formats;
        std::vector<float> table(256, 0.0f);
        for (std::uint32_t c = 0; c < f.code_count(); ++c) table[c] = float(decode(f, c));
        // From half the least subnormal (all below flush alike) to twice the largest value
        // (all above overflow alike), then Inf and every NaN.
        const int low = std::max(1, exponent_field(float(f.min_subnormal > 0 ? f.min_subnormal : f.min_normal)) - 2);
        const int high = std::min(254, exponent_field(float(f.max_finite)) + 2);
        std::vector<std::uint32_t> fields;
        for (int e = low; e <= high; e += kFieldStep) fields.push_back(std::uint32_t(e));
        if (fields.back() != std::uint32_t(high)) fields.push_back(std::uint32_t(high));
        fields.push_back(0);    // float32's subnormals
        fields.push_back(255);  // Inf and NaN
        for (const std::uint32_t field : fields) {
            CAPTURE(field);
            CHECK(mismatches_at(f, table, Saturation::Finite, field, 0, x, values, in_blocks) == 0);
        }
        // The sign is put back by one OR: negative inputs at both ends, the middle and the specials.
        for (const std::uint32_t field :
             {std::uint32_t(low), std::uint32_t((low + high) / 2), std::uint32_t(high), 0u, 255u}) {
            CAPTURE(field);
            CHECK(mismatches_at(f, table, Saturation::Finite, field, 1, x, values, in_blocks) == 0);
        }
        // Without saturation only overflow differs: the top fields, one sign.
        for (const std::uint32_t field :
             {std::uint32_t(high - 3), std::uint32_t(high - 2), std::uint32_t(high - 1), std::uint32_t(high), 255u}) {
            CAPTURE(field);
            CHECK(mismatches_at(f, table, Saturation::None, field, 0, x, values, in_blocks) == 0);
        }
    }
    CHECK(formats >= 6);  // E4M3, E4M3 IEEE-style, E5M2, E3M2, E2M3, E2M1
}
