// SPDX-License-Identifier: Apache-2.0
// The emulated path's cast of each operand, recipe by recipe (emulated_recipe.hpp).
#include "gpu/src/scaling/emulated_recipe.hpp"

#include "emulator/formats/convert.hpp"
#include "emulator/formats/float32_cast.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/training/experiment.hpp"

#include <stdexcept>
#include <string>

namespace fp8lab::gpu::detail {

namespace {
// The least float32 magnitude (as bits) that rounds, nearest-even, past the format's
// largest value: rounded magnitudes grow with the bits, so a binary search finds it.
std::uint32_t first_bits_past_largest(const emu::detail::Float32KernelConstants& k) {
    std::uint32_t low = 0, high = 0x7F800000u;  // high: Inf, past every finite value
    while (low < high) {
        const std::uint32_t mid = low + (high - low) / 2;
        if (emu::detail::rounded_magnitude<emu::RoundingMode::NearestEven>(mid, 0, k, 0, 32) > k.max_magnitude)
            high = mid;
        else
            low = mid + 1;
    }
    return low;
}
}  // namespace

OperandCast plan_operand_cast(const emu::Numerics& n, emu::TensorRole role, bool bf16, bool wgrad_operand,
                              std::uint64_t seed_key) {
    OperandCast c;
    constexpr int kWhole = 1 << 30;  // one block: the whole tensor
    if (bf16 || n.precision != emu::Precision::Fp8) {
        c.params.rule = vq::ScaleRule::Bf16Only;
        c.block_rows = c.block_cols = kWhole;
        c.per_tensor = true;
        return c;
    }
    const emu::Format& element = *n.formats.of(role);
    c.element = &element;
    vq::Params& p = c.params;
    p.element = emu::detail::make_float32_kernel_constants(element, n.saturation);
    p.e4m3 = emu::detail::make_float32_kernel_constants(emu::e4m3(), emu::Saturation::Finite);
    p.element_emax = element.max_exponent;
    p.element_inv_max = 1.0f / static_cast<float>(element.max_finite);
    p.element_max = static_cast<float>(element.max_finite);
    p.stochastic = n.rounding.of(role) == emu::RoundingMode::Stochastic;
    p.seed = seed_key;  // the step is added on the device
    if (!p.stochastic && n.saturation == emu::Saturation::Finite &&
        n.rounding.of(role) == emu::RoundingMode::NearestEven)
        p.hardware = &element == &emu::e4m3()   ? vq::Params::Hardware::E4M3
                     : &element == &emu::e5m2() ? vq::Params::Hardware::E5M2
                                                : vq::Params::Hardware::None;
    p.random_bits = emu::kMaxRandomBits;
    const auto whole = [&](vq::ScaleRule rule) {
        p.rule = rule;
        c.block_rows = c.block_cols = kWhole;
        c.per_tensor = true;
    };
    const emu::Recipe recipe = emu::recipe_of(n);
    // The block the emulator quantises, from the recipe's blocking of this role.
    const auto take_blocks = [&] {
        const emu::Blocking& b = recipe.blocks.of(role);
        const bool block = b.kind == emu::BlockKind::Block;
        c.block_rows = block ? int(b.block.rows) : b.kind == emu::BlockKind::Row ? 1 : kWhole;
        c.block_cols = block ? int(b.block.cols) : kWhole;  // a row: the whole contraction
        c.per_tensor = b.kind == emu::BlockKind::Tensor;
    };
    switch (recipe.rule) {
    case emu::ScaleRule::One:  // every recipe with scaling off: scale 1, the role's format and rounding
        whole(vq::ScaleRule::Unit);
        break;
    case emu::ScaleRule::Delayed:
        whole(vq::ScaleRule::PerTensor);
        break;
    case emu::ScaleRule::Current:
        if (recipe.per_tensor()) {
            whole(vq::ScaleRule::PerTensor);
            break;
        }
        if (recipe.scale_type != emu::ScaleType::Float32PowerOfTwo)
            throw std::invalid_argument(
                "numerics.recipe: the GPU's emulated block casts take power-of-two scales, not " +
                std::string(recipe.scale_type_text()));
        p.rule = vq::ScaleRule::Blockwise;
        p.min_amax = recipe.min_amax;
        c.vector = 16;
        take_blocks();
        c.block_amax_pass = true;
        break;
    case emu::ScaleRule::MxFloor:
    case emu::ScaleRule::MxRceil:
        p.rule = recipe.rule == emu::ScaleRule::MxFloor ? vq::ScaleRule::MxFloor : vq::ScaleRule::MxRceil;
        take_blocks();
        c.vector = c.block_cols;  // one thread casts one block
        break;
    case emu::ScaleRule::Nvfp4:
        // NVFP4 has its own options instead of the roles' rounding and the saturation.
        p.rule = vq::ScaleRule::Nvfp4;
        p.element = emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
        p.hardware = vq::Params::Hardware::None;  // E2M1: Hopper has no conversion for it
        c.element = &emu::e2m1();
        p.stochastic = recipe.rounding.of(role) == emu::RoundingMode::Stochastic;
        p.e2m1_by_midpoints = !p.stochastic;
        p.hadamard = recipe.hadamard_wgrad && wgrad_operand;
        take_blocks();
        c.vector = c.block_cols;
        c.block_amax_pass = c.block_rows > 1;  // tiles
        c.nvfp4 = true;
        break;
    }
    p.element_first_normal = c.element->has_subnormals ? 1u << c.element->mantissa_bits : 0u;
    p.element_past_bits = first_bits_past_largest(p.element);
    return c;
}

std::vector<float> value_table(const emu::Format& format) {
    std::vector<float> table(256, 0.0f);
    for (std::uint32_t code = 0; code < 256 && code < format.code_count(); ++code)
        table[code] = static_cast<float>(emu::decode(format, code));
    return table;
}

bool native_path_can_run(const emu::Numerics& n) {
    if (n.precision != emu::Precision::Fp8) return !n.loss_scaling;
    const bool recipe = emu::recipe(n.recipe).native.hopper;
    const bool formats = n.formats.input == &emu::e4m3() && n.formats.weight == &emu::e4m3() &&
                         (n.formats.gradient == &emu::e5m2() || n.formats.gradient == &emu::e4m3());
    const auto nearest = [](emu::RoundingMode m) { return m == emu::RoundingMode::NearestEven; };
    return recipe && formats && nearest(n.rounding.input) && nearest(n.rounding.weight) &&
           nearest(n.rounding.gradient) && n.saturation == emu::Saturation::Finite && n.scaling &&
           !n.edge_layers_bf16 && !n.loss_scaling;
}

}  // namespace fp8lab::gpu::detail
