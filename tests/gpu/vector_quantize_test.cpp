// SPDX-License-Identifier: Apache-2.0
// The GPU's emulated casts without a GPU: the block scale rules and the element cast of
// vector_quantize.hpp, run on the host exactly as a kernel thread runs them, against the
// CPU trainer's OperandQuantizer and the emulator's block recipes, bit for bit.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/training/operand_quantizer.hpp"
#include "emulator/training/training_task.hpp"
#include "gpu/src/scaling/emulated_recipe.hpp"
#include "tests/gpu/cast_cases.hpp"
#include "tests/gpu/same_bits.hpp"

using namespace fp8lab;
using gpu::detail::OperandCast;
using test::edge_tensor;
using test::transposed;
namespace vq = fp8lab::gpu::vq;

using fp8lab::test::same_bits;

namespace {

// What the emulated cast kernel computes for the tensor the emulator quantises (rows x
// cols, blocks along its rows), with every thread's vector walked in turn: the values a
// GEMM sees (value(code) times the block's scale_inv, as QuantizedTensor::dequantize).
std::vector<float> cast_like_the_kernel(const OperandCast& c, std::vector<float> x, std::size_t rows, std::size_t cols,
                                        std::uint64_t step) {
    vq::Params p = c.params;
    p.seed = emu::training_cast_seed(step, p.seed);
    p.hadamard_seed = step;
    const std::vector<float> values = c.element ? gpu::detail::value_table(*c.element) : std::vector<float>(256, 0.0f);
    const std::vector<float> e4m3_values = gpu::detail::value_table(emu::e4m3());
    std::vector<float> transformed = x;
    if (p.hadamard) emu::random_hadamard_transform_16(transformed, rows, cols, step);
    float tensor_scale = 1.0f;
    if (p.rule == vq::ScaleRule::PerTensor) tensor_scale = emu::current_scale(emu::amax(x), *c.element).scale;
    if (p.rule == vq::ScaleRule::Nvfp4) tensor_scale = vq::nvfp4_s_enc(emu::amax(transformed));
    const std::size_t grid_cols = (cols + c.block_cols - 1) / c.block_cols;
    std::vector<float> block_amax;
    if (c.block_amax_pass) {
        block_amax.assign(((rows + c.block_rows - 1) / c.block_rows) * grid_cols, 0.0f);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t col = 0; col < cols; ++col) {
                float& a = block_amax[(r / c.block_rows) * grid_cols + col / c.block_cols];
                a = std::fmax(a, std::fabs(x[r * cols + col]));
            }
    }
    std::vector<float> out(x.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t start = 0; start < cols; start += std::size_t(c.vector)) {
            const std::size_t count = std::min<std::size_t>(c.vector, cols - start);
            float v[32] = {};
            for (std::size_t j = 0; j < count; ++j) v[j] = x[r * cols + start + j];
            if (p.hadamard && count == 16) {
                float h[16];
                std::copy(v, v + 16, h);
                vq::hadamard16(h, p.hadamard_seed);
                std::copy(h, h + 16, v);
            }
            float amax = 0.0f;
            for (std::size_t j = 0; j < count; ++j) amax = std::fmax(amax, std::fabs(v[j]));
            if (c.block_amax_pass) amax = block_amax[(r / c.block_rows) * grid_cols + start / c.block_cols];
            const vq::BlockScale s = vq::block_scale(p, amax, tensor_scale, e4m3_values.data());
            for (std::size_t j = 0; j < count; ++j) {
                const std::size_t i = r * cols + start + j;
                if (p.rule == vq::ScaleRule::Bf16Only) {
                    out[i] = v[j];
                    continue;
                }
                out[i] = values[vq::cast_element(p, v[j], s.multiplier, i)] * s.scale_inv;
            }
        }
    return out;
}

int first_difference(const std::vector<float>& a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], 4) != 0) return int(i);
    return -1;
}

// One operand through the CPU trainer's quantiser and through the kernel's arithmetic.
void check_operand(const emu::Numerics& n, emu::TensorRole role, const std::vector<float>& x, std::size_t rows,
                   std::size_t cols, bool wgrad, std::uint64_t step, const std::string& name) {
    emu::OperandQuantizer quantizer(n);
    const std::vector<float> cpu =
        quantizer.quantize_codes(name, role, x, rows, cols, step, nullptr, {.wgrad_operand = wgrad}).dequantize();
    const OperandCast c = gpu::detail::plan_operand_cast(n, role, false, wgrad, name.size());
    const std::vector<float> gpu = cast_like_the_kernel(c, x, rows, cols, step);
    INFO("recipe " << emu::fp8_recipe_name(n.recipe) << ", format " << n.formats.of(role)->name << ", role "
                   << int(role) << ", rows " << rows << ", cols " << cols << ", wgrad " << wgrad << ", stochastic "
                   << c.params.stochastic << ", first difference at " << first_difference(cpu, gpu));
    CHECK(same_bits(cpu, gpu));
}

}  // namespace

TEST_CASE("the emulated casts' block scales equal emu::quantize_mx for every amax binade, both rules, every element") {
    const emu::Format* elements[] = {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()};
    const std::uint32_t mantissas[] = {0u, 1u, 2u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFEu, 0x7FFFFFu, 0x123457u};
    for (const emu::Format* f : elements)
        for (const emu::MxScaleRule rule : {emu::MxScaleRule::OcpFloor, emu::MxScaleRule::Rceil}) {
            emu::Numerics n;
            n.recipe = rule == emu::MxScaleRule::OcpFloor ? emu::Fp8Recipe::MxFloor : emu::Fp8Recipe::MxRceil;
            n.formats = {f, f, f};
            const OperandCast c = gpu::detail::plan_operand_cast(n, emu::TensorRole::Input, false, false, 9);
            int checked = 0, wrong = 0;
            for (std::uint32_t field = 0; field < 255; ++field)
                for (const std::uint32_t m : mantissas) {
                    const std::uint32_t bits = (field << 23) | m;
                    float amax;
                    std::memcpy(&amax, &bits, 4);
                    const std::vector<float> block(32, amax);
                    const emu::QuantizedTensor q = emu::quantize_mx(block, 1, 32, *f, rule);
                    const vq::BlockScale s = vq::block_scale(c.params, amax, 1.0f, nullptr);
                    ++checked;
                    wrong += s.code != q.scale_codes[0];
                }
            const vq::BlockScale inf = vq::block_scale(c.params, std::numeric_limits<float>::infinity(), 1.0f, nullptr);
            CHECK(inf.code == 0xFF);
            INFO(f->name << " " << emu::mx_scale_rule_name(rule) << ": " << wrong << " of " << checked << " differ");
            CHECK(wrong == 0);
        }
}

TEST_CASE("MX casts of every element format, nearest and stochastic, equal the CPU trainer's operands") {
    const emu::Format* elements[] = {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()};
    for (const emu::Format* f : elements)
        for (const emu::Fp8Recipe recipe : {emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::MxRceil})
            for (const emu::RoundingMode rounding : {emu::RoundingMode::NearestEven, emu::RoundingMode::Stochastic}) {
                emu::Numerics n;
                n.recipe = recipe;
                n.formats = {f, f, f};
                n.rounding = {rounding, rounding, rounding};
                for (const float magnitude : {1.0f, 1e-3f, 3e4f}) {
                    const std::vector<float> x = edge_tensor(16, 96, 7, magnitude);  // 96: a last block of 0
                    check_operand(n, emu::TensorRole::GradOutput, x, 16, 96, false, 3, "fc1.grad_output");
                    check_operand(n, emu::TensorRole::Input, transposed(x, 16, 96), 96, 16, true, 5, "fc2.input");
                }
            }
}

TEST_CASE("NVFP4 casts with each option equal the CPU trainer's operands, tensor scale edge cases included") {
    for (const bool tiles : {true, false})
        for (const bool stochastic : {true, false})
            for (const bool hadamard : {true, false}) {
                emu::Numerics n;
                n.recipe = emu::Fp8Recipe::Nvfp4;
                n.formats = {&emu::e2m1(), &emu::e2m1(), &emu::e2m1()};
                n.nvfp4 = {tiles, stochastic, hadamard};
                // 1e-36: an amax for which 448 * 6 / amax overflows float32 (S_enc clamps).
                for (const float magnitude : {1.0f, 1e-3f, 1e-36f, 5e4f}) {
                    const std::vector<float> x = edge_tensor(32, 64, 11, magnitude);
                    check_operand(n, emu::TensorRole::Weight, x, 32, 64, false, 2, "fc1.weight");
                    check_operand(n, emu::TensorRole::GradOutput, x, 32, 64, false, 4, "fc2.grad_output");
                    check_operand(n, emu::TensorRole::GradOutput, transposed(x, 32, 64), 64, 32, true, 4,
                                  "fc2.grad_output");
                    check_operand(n, emu::TensorRole::Input, transposed(x, 32, 64), 64, 32, true, 4, "fc2.input");
                }
            }
}

TEST_CASE("blockwise, rowwise, per-tensor and unscaled casts with FP6/FP4 elements equal the CPU trainer's operands") {
    const std::size_t rows = 128, cols = 256;
    const std::vector<float> x = edge_tensor(rows, cols, 13, 1.0f);
    for (const test::CastCase& c : test::block_and_per_tensor_cases())
        check_operand(c.numerics, c.role, c.columns ? transposed(x, rows, cols) : x, c.columns ? cols : rows,
                      c.columns ? rows : cols, c.wgrad, c.step, c.tensor);
}

TEST_CASE("every recipe of the table has a GPU path: native, or emulated with a cast for every role") {
    for (const emu::Recipe& r : emu::recipes()) {
        CAPTURE(emu::fp8_recipe_name(r.id));
        emu::Experiment e;
        emu::set_recipe(e, r.id);
        if (gpu::detail::native_path_can_run(e.numerics)) continue;
        for (const emu::TensorRole role :
             {emu::TensorRole::Input, emu::TensorRole::Weight, emu::TensorRole::GradOutput})
            for (const bool wgrad : {false, true}) {
                const OperandCast c = gpu::detail::plan_operand_cast(e.numerics, role, false, wgrad, 4);
                CHECK(c.params.rule != vq::ScaleRule::Bf16Only);
                CHECK(c.element == r.formats.of(role));
            }
    }
}

TEST_CASE("the emulated path is taken exactly where the native FP8 GEMMs cannot run the numerics") {
    emu::Numerics n;
    CHECK(gpu::detail::native_path_can_run(n));
    n.recipe = emu::Fp8Recipe::Blockwise;
    n.formats.gradient = &emu::e4m3();
    CHECK(gpu::detail::native_path_can_run(n));
    n.recipe = emu::Fp8Recipe::MxRceil;
    CHECK_FALSE(gpu::detail::native_path_can_run(n));
    emu::Numerics e5m2_everywhere;
    e5m2_everywhere.formats = {&emu::e5m2(), &emu::e5m2(), &emu::e5m2()};
    CHECK_FALSE(gpu::detail::native_path_can_run(e5m2_everywhere));
    for (auto change :
         {+[](emu::Numerics& m) { m.loss_scaling = true; }, +[](emu::Numerics& m) { m.edge_layers_bf16 = true; },
          +[](emu::Numerics& m) { m.rounding.gradient = emu::RoundingMode::Stochastic; },
          +[](emu::Numerics& m) { m.scaling = false; },
          +[](emu::Numerics& m) { m.saturation = emu::Saturation::None; }}) {
        emu::Numerics m;
        change(m);
        CHECK_FALSE(gpu::detail::native_path_can_run(m));
    }
    emu::Numerics bf16;
    bf16.precision = emu::Precision::Bf16;
    CHECK(gpu::detail::native_path_can_run(bf16));
    bf16.loss_scaling = true;
    CHECK_FALSE(gpu::detail::native_path_can_run(bf16));
}

TEST_CASE("the emulated casts' threshold for 'past the largest value' is where emu::count_range starts counting") {
    // The numerics tally on the GPU counts an element as past the largest value when its
    // scaled bits reach Params::element_past_bits: the least float32 that rounds past it.
    const emu::Format* elements[] = {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()};
    for (const emu::Format* f : elements)
        for (const emu::Saturation saturation : {emu::Saturation::Finite, emu::Saturation::None}) {
            emu::Numerics n;
            n.precision = emu::Precision::Fp8;
            n.recipe = emu::Fp8Recipe::MxRceil;
            n.formats = {f, f, f};
            n.saturation = saturation;
            const std::uint32_t past =
                gpu::detail::plan_operand_cast(n, emu::TensorRole::Input, false, false, 11).params.element_past_bits;
            CAPTURE(f->name);
            CAPTURE(past);
            float at, below;
            std::memcpy(&at, &past, 4);
            const std::uint32_t before = past - 1;
            std::memcpy(&below, &before, 4);
            CHECK(at > float(f->max_finite));  // past the largest value, not at it
            CHECK(emu::count_range(*f, std::vector<float>{at, -at}, 1.0f).overflowed == 2);
            CHECK(emu::count_range(*f, std::vector<float>{below, -below}, 1.0f).overflowed == 0);
        }
}
