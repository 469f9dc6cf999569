// SPDX-License-Identifier: Apache-2.0
// The GPU's emulated recipes: the cast kernel's codes, block scales and BF16 operands
// against the CPU trainer's quantiser bit for bit (MX, NVFP4, blockwise, FP6/FP4 per tensor,
// stochastic rounding), and dynamic loss scaling's scales and skipped steps against the CPU.
#include <doctest/doctest.h>

#include <bit>
#include <ios>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "emulator/formats/convert.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/operand_quantizer.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/framework/training_mapping.hpp"
#include "tests/gpu/gpu_ready.hpp"
#include "tests/gpu/cast_cases.hpp"

using namespace fp8lab;
using test::edge_tensor;
using test::transposed;

namespace {

int count_differences(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    int n = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] != b[i];
    return a.size() == b.size() ? n : -1;
}

// Bit for bit, except that any NaN equals any NaN (the GPU's arithmetic makes its own).
int count_differences(const std::vector<float>& a, const std::vector<float>& b) {
    int n = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        n += !(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], 4) != 0;
    return a.size() == b.size() ? n : -1;
}

// The BF16 operand the GPU should hold: value(code) times the block's part of the scale
// (NVFP4: its E4M3 block scale; per-tensor: 1; MX and blockwise: the block scale itself),
// rounded to BF16, in x's layout. The rounding is exact except for products under 2^-126,
// where BF16's subnormals keep fewer bits (an MX block whose amax is below about 2^-110).
std::vector<float> expected_operand(const emu::QuantizedTensor& q, bool columns, bool nvfp4, bool per_tensor) {
    std::vector<float> out(q.codes.size());
    for (std::size_t r = 0; r < q.rows; ++r)
        for (std::size_t c = 0; c < q.cols; ++c) {
            const std::size_t i = r * q.cols + c, b = q.block_of(r, c);
            const float value = float(emu::decode(*q.format, q.codes[i]));
            const float part = nvfp4        ? float(emu::decode(emu::e4m3(), q.scale_codes[b]))
                               : per_tensor ? 1.0f
                                            : q.block_scale_inv[b];
            // Saturation none: an Inf code stays Inf in BF16, as on the GPU.
            out[columns ? c * q.rows + r : i] = float(emu::round_to_format(
                emu::bf16(), double(value * part), {emu::RoundingMode::NearestEven, emu::Saturation::None}));
        }
    return out;
}

void check_cast(const emu::Numerics& n, emu::TensorRole role, const std::string& name, const std::vector<float>& x,
                int rows, int cols, bool columns, bool wgrad, std::uint64_t step, bool paired = false) {
    emu::OperandQuantizer quantizer(n);
    const std::vector<float> l = columns ? transposed(x, rows, cols) : x;
    const emu::QuantizedTensor q = quantizer.quantize_codes(name, role, l, columns ? cols : rows, columns ? rows : cols,
                                                            step, nullptr, {.wgrad_operand = wgrad});
    const gpu::EmulatedCastOnGpu g =
        gpu::emulated_cast_on_gpu(n, role, name, x, rows, cols, columns, wgrad, step, paired);
    const bool nvfp4 = n.recipe == emu::Fp8Recipe::Nvfp4 && n.scaling;
    const bool per_tensor = !n.scaling || n.recipe == emu::Fp8Recipe::Delayed || n.recipe == emu::Fp8Recipe::Current;
    CAPTURE(emu::fp8_recipe_name(n.recipe));
    CAPTURE(n.formats.of(role)->name);
    CAPTURE(name);
    CAPTURE(columns);
    CAPTURE(paired);
    CAPTURE(rows);
    CAPTURE(cols);
    for (std::size_t i = 0; i < q.codes.size() && i < g.codes.size(); ++i)
        if (q.codes[i] != g.codes[i]) {  // the first difference, to see what it is
            const std::size_t r = i / q.cols, c = i % q.cols, at = columns ? c * q.rows + r : i;
            MESSAGE("code " << i << ": input " << x[at] << " (bits " << std::hex << std::bit_cast<std::uint32_t>(x[at])
                            << std::dec << "), emulator " << int(q.codes[i]) << ", GPU " << int(g.codes[i]));
            break;
        }
    CHECK(count_differences(q.codes, g.codes) == 0);
    const std::vector<float> scales(g.scale_inv.begin(),
                                    g.scale_inv.begin() + std::ptrdiff_t(q.block_scale_inv.size()));
    CHECK(count_differences(q.block_scale_inv, scales) == 0);
    CHECK(count_differences(expected_operand(q, columns, nvfp4, per_tensor), g.operand) == 0);
    if (nvfp4) CHECK(g.tensor_factor == q.tensor_scale_inv);
    if (per_tensor) CHECK(g.tensor_factor == q.block_scale_inv[0]);
}

}  // namespace

TEST_CASE("the GPU's MX casts equal the emulator's bit for bit: both rules, every element format, both directions") {
    if (!gpu_ready()) return;
    const emu::Format* elements[] = {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()};
    for (const emu::Format* f : elements)
        for (const emu::Fp8Recipe recipe : {emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::MxRceil})
            for (const bool stochastic : {false, true}) {
                emu::Numerics n;
                n.recipe = recipe;
                n.formats = {f, f, f};
                if (stochastic)
                    n.rounding = {emu::RoundingMode::Stochastic, emu::RoundingMode::Stochastic,
                                  emu::RoundingMode::Stochastic};
                for (const float magnitude : {1.0f, 3e-3f, 2e4f}) {
                    // 48 rows: the column casts end in a block of 16.
                    const std::vector<float> x = edge_tensor(48, 96, 3, magnitude);
                    check_cast(n, emu::TensorRole::GradOutput, "fc1.grad_output", x, 48, 96, false, false, 5);
                    check_cast(n, emu::TensorRole::GradOutput, "fc1.grad_output", x, 48, 96, true, true, 5);
                    check_cast(n, emu::TensorRole::Weight, "fc2.weight", x, 48, 96, true, false, 7);
                }
            }
}

TEST_CASE("the GPU's NVFP4 casts equal the emulator's with every option, S_enc's clamp included") {
    if (!gpu_ready()) return;
    for (const bool tiles : {true, false})
        for (const bool stochastic : {true, false})
            for (const bool hadamard : {true, false}) {
                emu::Numerics n;
                n.recipe = emu::Fp8Recipe::Nvfp4;
                n.formats = {&emu::e2m1(), &emu::e2m1(), &emu::e2m1()};
                n.nvfp4 = {tiles, stochastic, hadamard};
                for (const float magnitude : {1.0f, 1e-36f, 5e4f}) {  // 1e-36: 2688 / amax overflows
                    const std::vector<float> x = edge_tensor(64, 96, 9, magnitude);
                    check_cast(n, emu::TensorRole::Weight, "fc1.weight", x, 64, 96, false, false, 2);
                    check_cast(n, emu::TensorRole::Weight, "fc1.weight", x, 64, 96, true, false, 2);
                    check_cast(n, emu::TensorRole::GradOutput, "fc2.grad_output", x, 64, 96, false, false, 3);
                    check_cast(n, emu::TensorRole::GradOutput, "fc2.grad_output", x, 64, 96, true, true, 3);
                    check_cast(n, emu::TensorRole::Input, "fc2.input", x, 64, 96, true, true, 3);
                }
            }
}

TEST_CASE("the GPU's paired NVFP4 cast (rows and columns from one read) equals the emulator's in both directions") {
    if (!gpu_ready()) return;
    for (const bool stochastic : {true, false})
        for (const bool hadamard : {true, false}) {
            emu::Numerics n;
            n.recipe = emu::Fp8Recipe::Nvfp4;
            n.formats = {&emu::e2m1(), &emu::e2m1(), &emu::e2m1()};
            n.nvfp4 = {true, stochastic, hadamard};
            for (const float magnitude : {1.0f, 1e-36f, 5e4f}) {
                // 48 x 256: three tile rows of 16, two tile columns of 128.
                const std::vector<float> x = edge_tensor(48, 256, 11, magnitude);
                for (const bool columns : {false, true}) {
                    check_cast(n, emu::TensorRole::Input, "fc2.input", x, 48, 256, columns, columns, 4, true);
                    check_cast(n, emu::TensorRole::GradOutput, "fc1.grad_output", x, 48, 256, columns, columns, 4,
                               true);
                }
            }
        }
}

TEST_CASE(
    "the GPU's blockwise, rowwise, per-tensor FP6/FP4 and unscaled casts equal the emulator's, stochastic included") {
    if (!gpu_ready()) return;
    const std::vector<float> x = edge_tensor(128, 256, 13, 1.0f);
    for (const test::CastCase& c : test::block_and_per_tensor_cases())
        check_cast(c.numerics, c.role, c.tensor, x, 128, 256, c.columns, c.wgrad, c.step);
}

TEST_CASE("dynamic loss scaling on the GPU backs off, skips and grows on the CPU trainer's steps") {
    if (!gpu_ready()) return;
    // Built to overflow: no scaling and no saturation, so a gradient past E5M2's range
    // becomes Inf. The scale grows 16x per clean step and falls 16x on overflow, so each
    // decision has a factor of 2 or more of margin either way.
    emu::Experiment e = labs::lab_experiment();
    e.steps = 24;
    e.numerics.scaling = false;
    e.numerics.saturation = emu::Saturation::None;
    e.numerics.loss_scaling = true;
    e.numerics.loss_scaler = {65536.0f, 16.0f, 1.0f / 16.0f, 1};
    const emu::TrainerResult cpu = emu::train_mlp(e);
    const gpu::GpuRun c{e};
    REQUIRE(gpu::gpu_path(e) == gpu::GpuPath::Emulated);
    const gpu::GpuTrainResult g = gpu::train_mlp_on_gpu(c);
    std::printf("loss scaling: %zu of %d steps skipped on the CPU, %zu on the GPU\n", cpu.skipped_steps.size(), e.steps,
                g.skipped_steps.size());
    CHECK(!cpu.skipped_steps.empty());
    CHECK(g.skipped_steps == cpu.skipped_steps);
    CHECK(g.loss_scale == cpu.loss_scale);
}
