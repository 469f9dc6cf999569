// SPDX-License-Identifier: Apache-2.0
// The block quantiser's one-pass vector path against a scalar reference: every block's
// amax and scale, every code, and the range counts, for every recipe, on hard cases and
// on large random tensors.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/formats/quantized_tensor.hpp"

using namespace fp8lab::emu;

namespace {

// One element at a time with the scalar encoder: what quantize_blocks must equal.
struct Reference {
    std::vector<std::uint8_t> codes;
    std::vector<float> block_amax;
    RangeCounts counts;
};

Reference reference_blocks(const std::vector<float>& x, std::size_t rows, std::size_t cols, BlockShape block,
                           const Format& f, const ConvertOptions& options,
                           const std::function<BlockScale(float)>& scale_of) {
    Reference r;
    r.codes.resize(x.size());
    const std::size_t grid_rows = (rows + block.rows - 1) / block.rows,
                      grid_cols = (cols + block.cols - 1) / block.cols;
    ConvertOptions finite = options;
    finite.saturation = Saturation::Finite;
    for (std::size_t br = 0; br < grid_rows; ++br)
        for (std::size_t bc = 0; bc < grid_cols; ++bc) {
            const std::size_t r1 = std::min(rows, (br + 1) * block.rows), c1 = std::min(cols, (bc + 1) * block.cols);
            float a = 0.0f;
            for (std::size_t i = br * block.rows; i < r1; ++i)
                for (std::size_t j = bc * block.cols; j < c1; ++j)
                    if (!std::isnan(x[i * cols + j])) a = std::max(a, std::fabs(x[i * cols + j]));
            r.block_amax.push_back(a);
            const BlockScale s = scale_of(a);
            for (std::size_t i = br * block.rows; i < r1; ++i)
                for (std::size_t j = bc * block.cols; j < c1; ++j) {
                    const std::size_t index = i * cols + j;
                    const float y = x[index] * s.multiplier;
                    r.codes[index] = static_cast<std::uint8_t>(encode(f, y, options, index));
                    ++r.counts.elements;
                    if (std::isnan(y)) {
                        ++r.counts.nan_inputs;
                        continue;
                    }
                    if (std::isinf(y)) {
                        ++r.counts.inf_inputs;
                        continue;
                    }
                    // Overflow: rounding is the same at half the value in the normal
                    // range, where half of any overflowing value still rounds past max / 2.
                    const double max = f.max_finite;
                    const bool over = std::fabs(y) >= std::ldexp(1.0f, f.min_exponent + 1) &&
                                      std::fabs(decode(f, encode(f, y * 0.5f, finite, index))) * 2 > max;
                    const std::uint32_t magnitude = r.codes[index] & ~f.sign_mask();
                    r.counts.overflowed += over;
                    r.counts.flushed_to_zero += !over && y != 0.0f && magnitude == 0;
                    r.counts.subnormal += !over && magnitude != 0 && magnitude < (1u << f.mantissa_bits);
                }
        }
    return r;
}

void check_equal(const QuantizedTensor& q, const Reference& r) {
    REQUIRE(q.codes.size() == r.codes.size());
    std::size_t differing = 0, first = 0;
    for (std::size_t i = 0; i < r.codes.size(); ++i)
        if (q.codes[i] != r.codes[i] && differing++ == 0) first = i;
    INFO("first differing code at ", first);
    CHECK(differing == 0);
    CHECK(q.block_amax == r.block_amax);
    CHECK(q.counts.elements == r.counts.elements);
    CHECK(q.counts.nan_inputs == r.counts.nan_inputs);
    CHECK(q.counts.inf_inputs == r.counts.inf_inputs);
    CHECK(q.counts.overflowed == r.counts.overflowed);
    CHECK(q.counts.flushed_to_zero == r.counts.flushed_to_zero);
    CHECK(q.counts.subnormal == r.counts.subnormal);
}

// Blocks that each hold one hard case, then random values of every magnitude.
std::vector<float> hard_tensor(std::size_t rows, std::size_t cols, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<float> x(rows * cols);
    for (float& v : x) v = std::ldexp(std::uniform_real_distribution<float>(-2, 2)(rng), int(rng() % 40) - 20);
    const float specials[] = {0.0f,
                              -0.0f,
                              std::numeric_limits<float>::quiet_NaN(),
                              INFINITY,
                              -INFINITY,
                              957.0f,
                              448.0f,
                              464.0f,
                              std::nextafter(464.0f, 0.0f),
                              std::nextafter(464.0f, 1e9f),
                              8.0f,
                              std::nextafter(8.0f, 0.0f),
                              std::nextafter(8.0f, 16.0f),
                              1e-40f,
                              -3e-39f,
                              FLT_MAX,
                              FLT_TRUE_MIN,
                              61440.0f,
                              57344.0f,
                              6.0f,
                              5.0f,
                              0.25f};
    for (std::size_t k = 0; k < std::size(specials) && k * 37 < x.size(); ++k) x[k * 37] = specials[k];
    // An all-zero stretch, a subnormal-range stretch and a tiny-amax stretch.
    for (std::size_t i = 0; i < std::min<std::size_t>(cols, 64); ++i) {
        if (rows > 1) x[cols + i] = 0.0f;
        if (rows > 2) x[2 * cols + i] = std::ldexp(float(i), -140);
        if (rows > 3) x[3 * cols + i] = std::ldexp(float(i % 7) - 3.0f, -130);
    }
    return x;
}

}  // namespace

TEST_CASE("block quantiser: per-tensor scaling in every rounding mode equals the scalar encoder") {
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{7, 33}, {64, 515}, {300, 129}}) {
        const std::vector<float> x = hard_tensor(rows, cols, std::uint32_t(rows * cols));
        for (const Format* f : {&e4m3(), &e5m2(), &e3m2(), &e2m3(), &e2m1()})
            for (RoundingMode mode : all_rounding_modes())
                for (Saturation sat : {Saturation::Finite, Saturation::None}) {
                    const ConvertOptions o{mode, sat, 77, 9};
                    const auto rule = [](float) { return BlockScale{3.0f, 1.0f / 3.0f}; };
                    CAPTURE(f->name);
                    CAPTURE(rounding_mode_name(mode));
                    check_equal(quantize_blocks(x, rows, cols, {rows, cols}, *f, o, rule),
                                reference_blocks(x, rows, cols, {rows, cols}, *f, o, rule));
                }
    }
}

TEST_CASE("block quantiser: MX, blockwise and NVFP4 block shapes equal the scalar reference") {
    set_max_threads(2);
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{5, 100}, {128, 256}, {259, 70}}) {
        const std::vector<float> x = hard_tensor(rows, cols, 7);
        const float inv_max = 1.0f / 448.0f;
        // Scale rules of the recipes' kinds, reproduced here as functions of the amax.
        const auto rceil = [&](float a) {
            if (std::isinf(a)) return BlockScale{1.0f, NAN, 0xFF};
            const auto code = encode(e8m0(), a * inv_max, ConvertOptions{RoundingMode::Up, Saturation::Finite});
            return BlockScale{std::ldexp(1.0f, 127 - int(code)), std::ldexp(1.0f, int(code) - 127), std::uint8_t(code)};
        };
        // {32, 1}: blocks one column wide, cast band by band where the tensor has 4 bands or more.
        for (BlockShape block : {BlockShape{1, 16}, BlockShape{1, 32}, BlockShape{1, 128}, BlockShape{16, 16},
                                 BlockShape{128, 128}, BlockShape{3, 7}, BlockShape{32, 1}})
            for (RoundingMode mode : {RoundingMode::NearestEven, RoundingMode::Stochastic}) {
                const ConvertOptions o{mode, Saturation::Finite, 5, 32};
                CAPTURE(block.rows);
                CAPTURE(block.cols);
                for (const Format* f : {&e4m3(), &e2m1()})
                    check_equal(quantize_blocks(x, rows, cols, block, *f, o, rceil),
                                reference_blocks(x, rows, cols, block, *f, o, rceil));
            }
        // quantize_mx's RCEIL scales (from the float's bits) are encode()'s.
        for (BlockShape block : {BlockShape{1, 32}, BlockShape{32, 1}}) {
            const QuantizedTensor mx = quantize_mx(x, rows, cols, e4m3(), MxScaleRule::Rceil, block, ConvertOptions{});
            const QuantizedTensor by_encode = quantize_blocks(x, rows, cols, block, e4m3(), ConvertOptions{}, rceil);
            CHECK(mx.scale_codes == by_encode.scale_codes);
            REQUIRE(mx.block_scale_inv.size() == by_encode.block_scale_inv.size());
            for (std::size_t k = 0; k < mx.block_scale_inv.size(); ++k)  // by bits: an Inf's block has a NaN scale
                if (std::bit_cast<std::uint32_t>(mx.block_scale_inv[k]) !=
                    std::bit_cast<std::uint32_t>(by_encode.block_scale_inv[k]))
                    FAIL_CHECK("block " << k << "'s scale differs");
            CHECK(mx.codes == by_encode.codes);
        }
    }
}

TEST_CASE("block quantiser: the recipes' results do not depend on the thread count, on large random tensors") {
    std::mt19937 rng(3);
    const std::size_t rows = 768, cols = 3072;
    std::vector<float> x(rows * cols);
    for (float& v : x) v = std::normal_distribution<float>(0.0f, 1.0f)(rng) * (rng() % 97 == 0 ? 300.0f : 1.0f);
    auto all = [&] {
        std::vector<QuantizedTensor> q;
        q.push_back(quantize_mx(x, rows, cols, e4m3(), MxScaleRule::OcpFloor));
        q.push_back(quantize_mx(x, rows, cols, e3m2(), MxScaleRule::Rceil));
        q.push_back(quantize_mx(x, rows, cols, e4m3(), MxScaleRule::OcpFloor, BlockShape{32, 1}, {}));
        q.push_back(quantize_blockwise(x, rows, cols, {128, 128}));
        q.push_back(quantize_nvfp4(x, rows, cols, {true, true, 11, 32, true, 4}));
        q.push_back(quantize_per_tensor(x, rows, cols, e5m2()));
        return q;
    };
    set_max_threads(1);
    const std::vector<QuantizedTensor> one = all();
    set_max_threads(2);
    const std::vector<QuantizedTensor> two = all();
    for (std::size_t k = 0; k < one.size(); ++k) {
        CHECK(one[k].codes == two[k].codes);
        CHECK(one[k].scale_codes == two[k].scale_codes);
        CHECK(one[k].block_scale_inv == two[k].block_scale_inv);
        CHECK(one[k].counts.overflowed == two[k].counts.overflowed);
        CHECK(one[k].counts.flushed_to_zero == two[k].counts.flushed_to_zero);
    }
    // And the MX codes of the big tensor equal the scalar reference.
    const auto floor_rule = [](float a) {
        if (std::isinf(a)) return BlockScale{1.0f, NAN, 0xFF};
        const int e = std::clamp(a == 0.0f ? -127 : std::ilogb(a) - e4m3().max_exponent, -127, 127) + 127;
        return BlockScale{std::ldexp(1.0f, 127 - e), std::ldexp(1.0f, e - 127), std::uint8_t(e)};
    };
    check_equal(one[0], reference_blocks(x, rows, cols, {1, 32}, e4m3(), {}, floor_rule));
    check_equal(one[2], reference_blocks(x, rows, cols, {32, 1}, e4m3(), {}, floor_rule));
}

TEST_CASE("MX floor's scale for a block amax of every power of two float32 holds, subnormals included") {
    // The scale from the amax's exponent field (ilogb below float32's normals) and 2^k from
    // its bits: the E8M0 code floor(log2 amax) - emax + 127, clamped, and the scale's value
    // that ldexp gives, at every exponent from float32's least subnormal to its largest.
    const int emax = e4m3().max_exponent;
    int checked = 0;
    for (int k = -149; k <= 127; ++k) {
        CAPTURE(k);
        std::vector<float> x(32, 0.0f);
        x[5] = -std::ldexp(1.0f, k) * 1.5f;  // not a power of two: floor matters
        const QuantizedTensor q = quantize_mx(x, 1, 32, e4m3(), MxScaleRule::OcpFloor);
        const int code = std::clamp(k - emax + 127, 0, 254);
        CHECK(int(q.scale_codes[0]) == code);
        CHECK(std::bit_cast<std::uint32_t>(q.block_scale_inv[0]) ==
              std::bit_cast<std::uint32_t>(std::ldexp(1.0f, code - 127)));
        ++checked;
    }
    CHECK(checked == 277);
}
