// The emulated path's cast of each operand, recipe by recipe (emulated_recipe.hpp).
#include "gpu/src/emulated_recipe.hpp"

#include "emulator/convert.hpp"
#include "emulator/float32_kernel.hpp"
#include "emulator/recipe_descriptor.hpp"

namespace fp8lab::gpu::detail {

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
    if (!n.scaling) {  // every recipe: scale 1, the role's element format and rounding
        whole(vq::ScaleRule::Unit);
        return c;
    }
    switch (n.recipe) {
    case emu::Fp8Recipe::Delayed:
    case emu::Fp8Recipe::Current:
        whole(vq::ScaleRule::PerTensor);
        break;
    case emu::Fp8Recipe::MxFloor:
    case emu::Fp8Recipe::MxRceil:
        p.rule = n.recipe == emu::Fp8Recipe::MxFloor ? vq::ScaleRule::MxFloor : vq::ScaleRule::MxRceil;
        c.block_rows = int(emu::recipe_descriptor(n.recipe).activation_blocks.rows);
        c.block_cols = int(emu::recipe_descriptor(n.recipe).activation_blocks.cols);
        c.vector = c.block_cols;  // one thread casts one block
        break;
    case emu::Fp8Recipe::Blockwise:
        p.rule = vq::ScaleRule::Blockwise;
        c.vector = 16;
        {
            const emu::RecipeDescriptor& d = emu::recipe_descriptor(n.recipe);
            const emu::BlockShape b = role == emu::TensorRole::Weight ? d.weight_blocks : d.activation_blocks;
            c.block_rows = int(b.rows);
            c.block_cols = int(b.cols);
        }
        c.block_amax_pass = true;
        break;
    case emu::Fp8Recipe::Nvfp4: {
        // NVFP4 has its own options instead of the roles' rounding and the saturation.
        const emu::Nvfp4Training& o = n.nvfp4;
        p.rule = vq::ScaleRule::Nvfp4;
        p.element = emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
        p.hardware = vq::Params::Hardware::None;  // E2M1: Hopper has no conversion for it
        c.element = &emu::e2m1();
        p.stochastic = o.stochastic_gradients && role == emu::TensorRole::GradOutput;
        p.e2m1_by_midpoints = !p.stochastic;
        p.hadamard = o.hadamard_wgrad && wgrad_operand;
        const emu::RecipeDescriptor& d = emu::recipe_descriptor(n.recipe);
        const bool tiles = o.weight_tiles && role == emu::TensorRole::Weight;
        c.block_rows = int(tiles ? d.weight_blocks.rows : d.activation_blocks.rows);
        c.block_cols = int(d.activation_blocks.cols);
        c.vector = c.block_cols;
        c.block_amax_pass = tiles;
        c.nvfp4 = true;
        break;
    }
    }
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
    const bool recipe = n.recipe == emu::Fp8Recipe::Delayed || n.recipe == emu::Fp8Recipe::Current ||
                        n.recipe == emu::Fp8Recipe::Blockwise;
    const bool formats = n.formats.input == &emu::e4m3() && n.formats.weight == &emu::e4m3() &&
                         (n.formats.gradient == &emu::e5m2() || n.formats.gradient == &emu::e4m3());
    const auto nearest = [](emu::RoundingMode m) { return m == emu::RoundingMode::NearestEven; };
    return recipe && formats && nearest(n.rounding.input) && nearest(n.rounding.weight) &&
           nearest(n.rounding.gradient) && n.saturation == emu::Saturation::Finite && n.scaling &&
           !n.edge_layers_bf16 && !n.loss_scaling;
}

}  // namespace fp8lab::gpu::detail
