// SPDX-License-Identifier: Apache-2.0
// The recipe table and the one quantize(): every recipe casts every role on the CPU, and
// rowwise equals a reference written from torchao's rules (float8_utils.amax_to_scale).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "emulator/formats/convert.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/scaling/quantize.hpp"
#include "tests/gpu/hard_tensor.hpp"

using namespace fp8lab;
using namespace fp8lab::emu;

namespace {

const TensorRole kRoles[] = {TensorRole::Input, TensorRole::Weight, TensorRole::GradOutput};

// torchao's rowwise cast of one row, as its source reads: amax = max |x| in float64,
// clamped to EPS = 1e-12; scale = float32(448 / amax); rounded down to a power of two
// (exp2(floor(log2 scale)), here from the exponent bits, which is exact); elements
// float32(x * scale), clamped to +-448, cast to E4M3 to nearest. scale_inv = 1 / scale.
struct TorchaoRow {
    std::vector<std::uint8_t> codes;
    float scale_inv;
};
TorchaoRow torchao_rowwise(const float* x, std::size_t n) {
    double amax = 0;
    for (std::size_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(double(x[i])));
    amax = std::fmax(amax, 1e-12);
    const float scale = std::exp2(std::floor(std::log2(float(448.0 / amax))));
    TorchaoRow row{{}, 1.0f / scale};
    for (std::size_t i = 0; i < n; ++i) {
        const float y = std::fmin(std::fmax(x[i] * scale, -448.0f), 448.0f);
        row.codes.push_back(std::uint8_t(encode(e4m3(), y, ConvertOptions{})));
    }
    return row;
}

bool finite_row(const float* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i])) return false;
    return true;
}

}  // namespace

TEST_CASE("every recipe of the table casts every role on the CPU, with its element format and blocks") {
    const std::size_t rows = 32, cols = 128;
    const std::vector<float> x = hard_tensor(rows * cols, 5);
    for (const Recipe& r : recipes()) {
        CAPTURE(fp8_recipe_name(r.id));
        CHECK(parse_enum<Fp8Recipe>(fp8_recipe_name(r.id)) == r.id);  // a name for the CLI, JSON and Python
        CHECK(&recipe(r.id) == &r);
        CHECK_FALSE(r.label.empty());
        CHECK_FALSE(r.library.empty());
        CHECK_FALSE(r.scale_from.empty());
        CHECK_FALSE(r.accumulation.empty());
        Experiment e;
        set_recipe(e, r.id);
        validate(e);  // its default experiment is a valid one
        const Recipe cast = recipe_of(e.numerics);
        RecipeState state;
        for (TensorRole role : kRoles) {
            const QuantizedTensor q = quantize(x, rows, cols, cast, {"t", role, 1, 7, false}, state);
            CHECK(q.format == r.formats.of(role));
            const BlockShape b = r.blocks.of(role).shape(rows, cols);
            CHECK(q.block.rows == b.rows);
            CHECK(q.block.cols == b.cols);
            CHECK(q.codes.size() == x.size());
        }
    }
}

TEST_CASE("choosing a recipe gives its library's default formats: hybrid per tensor, E4M3 everywhere for MX") {
    const PerRole<const Format*> all_e4m3{&e4m3(), &e4m3(), &e4m3()}, hybrid{&e4m3(), &e4m3(), &e5m2()};
    Experiment e;
    for (Fp8Recipe mx : {Fp8Recipe::MxFloor, Fp8Recipe::MxRceil}) {
        set_recipe(e, mx);
        CHECK(e.numerics.formats == all_e4m3);  // Transformer Engine's MXFP8BlockScaling
    }
    set_recipe(e, Fp8Recipe::Current);
    CHECK(e.numerics.formats == hybrid);  // Float8CurrentScaling's Format.HYBRID
    set_recipe(e, Fp8Recipe::Delayed);
    CHECK(e.numerics.formats == hybrid);
    // Hybrid MX stays an option: formats set after the recipe are kept.
    set_recipe(e, Fp8Recipe::MxRceil);
    e.numerics.formats.gradient = &e5m2();
    validate(e);
    CHECK(recipe_of(e.numerics).formats == hybrid);
}

TEST_CASE("rowwise equals torchao's rules on the hard tensors: codes and scales, row by row") {
    const std::size_t rows = 64, cols = 256;
    std::vector<float> x = hard_tensor(rows * cols, 11);
    for (std::size_t c = 0; c < cols; ++c) {
        x[1 * cols + c] = 0.0f;                                           // amax 0: torchao's scale 448 / 1e-12
        x[2 * cols + c] = 1e-20f * float(c % 7);                          // amax below the clamp
        x[3 * cols + c] = std::ldexp(1.0f, -38) * (c + 1.0f);             // amax just above it
        x[4 * cols + c] = c == 9 ? 448.0f : 0.5f;                         // amax at the format's max: scale 1
        x[5 * cols + c] = c == 3 ? std::nextafter(448.0f, 0.0f) : -1.0f;  // one ulp below: scale 2
    }
    Experiment e;
    set_recipe(e, Fp8Recipe::Rowwise);
    CHECK(e.numerics.formats == PerRole<const Format*>{&e4m3(), &e4m3(), &e4m3()});
    RecipeState state;
    const QuantizedTensor q =
        quantize(x, rows, cols, recipe_of(e.numerics), {"x", TensorRole::Input, 0, 0, false}, state);
    REQUIRE(q.block_count() == rows);
    std::size_t checked = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        // Rows with NaN or Inf differ by design: torchao's amax is NaN or Inf, its scale NaN
        // or 0, the whole row NaN or 0; fp8lab skips NaN and keeps the finite elements
        // (Transformer Engine's rule), and training skips such a step anyway.
        if (!finite_row(&x[r * cols], cols)) continue;
        const TorchaoRow ref = torchao_rowwise(&x[r * cols], cols);
        CAPTURE(r);
        CHECK(std::memcmp(&q.block_scale_inv[r], &ref.scale_inv, 4) == 0);
        CHECK(std::memcmp(&q.codes[r * cols], ref.codes.data(), cols) == 0);
        ++checked;
    }
    CHECK(checked >= 30);                              // most rows of the hard tensor are finite, and the five above
    CHECK(q.block_scale_inv[1] == std::exp2(-48.0f));  // 448 / 1e-12 = 4.5e14, down to 2^48
    CHECK(q.block_scale_inv[4] == 1.0f);
    CHECK(q.block_scale_inv[5] == 1.0f);  // 448 / (448 - ulp) rounds to 1 in float32
}

namespace {

std::vector<float> transposed(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    std::vector<float> t(x.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
    return t;
}

// Equal bits, NaN's included.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a transposed operand cast in place equals the cast of its transposed copy, transposed back") {
    // Shapes with partial blocks of every recipe (1 x 16, 1 x 32, 1 x 128, 128 x 128), the
    // hard tensor's outliers, zeros, subnormals, NaN and Inf, finite and non-saturating.
    for (const auto& shape : {std::pair<std::size_t, std::size_t>{200, 72}, {33, 300}, {1, 40}, {130, 1}}) {
        const std::size_t rows = shape.first, cols = shape.second;  // not a binding: CAPTURE's lambdas take them
        const std::vector<float> x = hard_tensor(rows * cols, 23);  // the operand transposed: rows x cols
        const std::vector<float> copy = transposed(x, rows, cols);  // the operand: cols x rows
        for (const Recipe& base : recipes())
            for (const Saturation saturation : {Saturation::Finite, Saturation::None}) {
                Experiment e;
                set_recipe(e, base.id);
                e.numerics.saturation = saturation;
                const Recipe r = recipe_of(e.numerics);
                for (const TensorRole role : kRoles) {
                    CAPTURE(fp8_recipe_name(r.id));
                    CAPTURE(int(role));
                    CAPTURE(rows);
                    CAPTURE(cols);
                    RecipeState state;
                    const Operand operand{"t", role, 3, 11, false, false};
                    Operand in_place = operand;
                    in_place.transposed = true;
                    if (!r.can_cast_transposed(role)) {
                        CHECK_THROWS_AS(quantize(x, rows, cols, r, in_place, state), std::logic_error);
                        continue;
                    }
                    const std::vector<float> want =
                        transposed(quantize(copy, cols, rows, r, operand, state).dequantize(), cols, rows);
                    CHECK(same_bits(quantize(x, rows, cols, r, in_place, state).dequantize(), want));
                }
                // The weight: where its cast transposes, W^T's cast is W's transposed.
                if (r.weight_cast_transposes()) {
                    RecipeState state;
                    const Operand weight{"w", TensorRole::Weight, 3, 11, false, false};
                    CHECK(same_bits(quantize(x, rows, cols, r, weight, state).dequantize(),
                                    transposed(quantize(copy, cols, rows, r, weight, state).dequantize(), cols, rows)));
                }
            }
    }
}

TEST_CASE("which recipes cast a transposed operand in place, and whose weights transpose their cast") {
    for (const Recipe& r : recipes()) {
        CAPTURE(fp8_recipe_name(r.id));
        const bool nvfp4 = r.rule == ScaleRule::Nvfp4;
        CHECK(r.can_cast_transposed(TensorRole::Input) == !nvfp4);
        CHECK(r.can_cast_transposed(TensorRole::GradOutput) == !nvfp4);
        // Per tensor, 128 x 128 and NVFP4's 16 x 16 tiles; not MX's 1 x 32 nor rowwise's rows.
        CHECK(r.weight_cast_transposes() == (r.per_tensor() || r.id == Fp8Recipe::Blockwise || nvfp4));
    }
    Experiment e;
    set_recipe(e, Fp8Recipe::MxFloor);
    e.numerics.rounding.gradient = RoundingMode::Stochastic;  // the element's bits depend on where it sits
    CHECK_FALSE(recipe_of(e.numerics).can_cast_transposed(TensorRole::GradOutput));
    CHECK(recipe_of(e.numerics).can_cast_transposed(TensorRole::Input));
}

TEST_CASE("a cast straight to values equals its codes dequantised, with the same scales, amaxes and counts") {
    // The hard tensor's NaN and Inf make the special codes (finite saturation: NaN only;
    // none: Inf and overflow too), which the values path takes from the codes.
    for (const auto& shape : {std::pair<std::size_t, std::size_t>{200, 72}, {33, 300}, {1, 40}, {130, 1}}) {
        const std::size_t rows = shape.first, cols = shape.second;
        const std::vector<float> x = hard_tensor(rows * cols, 29);
        for (const Recipe& base : recipes())
            for (const Saturation saturation : {Saturation::Finite, Saturation::None})
                for (const RoundingMode gradient_rounding : {RoundingMode::NearestEven, RoundingMode::Stochastic}) {
                    Experiment e;
                    set_recipe(e, base.id);
                    e.numerics.saturation = saturation;
                    e.numerics.rounding.gradient = gradient_rounding;
                    const Recipe r = recipe_of(e.numerics);
                    for (const TensorRole role : kRoles)
                        for (const bool wgrad : {false, true}) {
                            CAPTURE(fp8_recipe_name(r.id));
                            CAPTURE(int(role));
                            CAPTURE(rows);
                            CAPTURE(cols);
                            CAPTURE(wgrad);
                            RecipeState codes_state, values_state;
                            for (int step = 0; step < 2; ++step) {  // delayed: a scale from the history too
                                const Operand operand{"t", role, std::uint64_t(step), 11, wgrad, false};
                                const QuantizedTensor q = quantize(x, rows, cols, r, operand, codes_state);
                                std::vector<float> values(x.size(), 7.0f);
                                const QuantizedTensor v = quantize(x, rows, cols, r, operand, values_state, values);
                                CHECK(v.codes.empty());
                                CHECK(same_bits(values, q.dequantize()));
                                CHECK(v.block_amax == q.block_amax);
                                CHECK(same_bits(v.block_scale_inv, q.block_scale_inv));
                                CHECK(v.scale_codes == q.scale_codes);
                                CHECK(v.counts == q.counts);
                                codes_state.end_step();
                                values_state.end_step();
                            }
                        }
                }
    }
}

TEST_CASE("current scaling given its tensor's amax casts as it does alone, and refuses an amax not the tensor's") {
    for (const auto& shape : {std::pair<std::size_t, std::size_t>{200, 72}, {1, 40}, {130, 1}}) {
        const std::size_t rows = shape.first, cols = shape.second;
        for (const bool specials : {false, true}) {  // the hard tensor's NaN and Inf: NaN skipped, Inf kept
            std::vector<float> x = hard_tensor(rows * cols, 31);
            if (!specials)
                for (float& v : x)
                    if (!std::isfinite(v)) v = 0.5f;
            Experiment e;
            set_recipe(e, Fp8Recipe::Current);
            const Recipe r = recipe_of(e.numerics);
            RecipeState state;
            const Operand alone{"w", TensorRole::Weight};
            std::vector<float> expected(x.size()), got(x.size());
            const QuantizedTensor q = quantize(x, rows, cols, r, alone, state, expected);
            Operand given = alone;
            given.amax = q.tensor_amax();
            const QuantizedTensor g = quantize(x, rows, cols, r, given, state, got);
            CAPTURE(rows);
            CAPTURE(specials);
            CHECK(same_bits(got, expected));
            CHECK(g.block_amax == q.block_amax);
            CHECK(same_bits(g.block_scale_inv, q.block_scale_inv));
            CHECK(g.counts == q.counts);
            given.amax = std::nextafter(q.tensor_amax(), 0.0f);  // one ulp off: a stale amax
            CHECK_THROWS_AS(quantize(x, rows, cols, r, given, state, got), std::logic_error);
        }
    }
}

TEST_CASE("delayed scaling finds the amax of a tensor one column or one row wide (one column once went unrecorded)") {
    for (const auto& shape : {std::pair<std::size_t, std::size_t>{130, 1}, {1, 130}, {1, 1}}) {
        std::vector<float> x(shape.first * shape.second);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * float(i + 1) / 8;
        Experiment e;
        set_recipe(e, Fp8Recipe::Delayed);
        const Recipe r = recipe_of(e.numerics);
        RecipeState state;
        const QuantizedTensor q = quantize(x, shape.first, shape.second, r, Operand{"w", TensorRole::Weight}, state);
        CAPTURE(shape.first);
        CHECK(q.tensor_amax() == float(x.size()) / 8);
    }
}
