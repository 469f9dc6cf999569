// SPDX-License-Identifier: Apache-2.0
// quantize(): the recipe's scale rule applied to the role's blocks (quantize.hpp).
#include "emulator/scaling/quantize.hpp"

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {

DelayedScaling& RecipeState::delayed(std::string_view tensor, const Format& format) {
    auto it = delayed_.find(tensor);
    if (it == delayed_.end()) it = delayed_.emplace(std::string(tensor), DelayedScaling(format, config_)).first;
    return it->second;
}

void RecipeState::end_step() {
    for (auto& [name, state] : delayed_) state.update();
}

std::map<std::string, DelayedScalingState> RecipeState::delayed_states() const {
    std::map<std::string, DelayedScalingState> states;
    for (const auto& [name, scaling] : delayed_) states.emplace(name, scaling.state());
    return states;
}

QuantizedTensor quantize(std::span<const float> x, std::size_t rows, std::size_t cols, const Recipe& recipe,
                         const Operand& operand, RecipeState& state, std::span<float> values) {
    const Format& format = *recipe.formats.of(operand.role);
    const RoundingMode rounding = recipe.rounding.of(operand.role);
    const ConvertOptions options{rounding, recipe.saturation, operand.seed, kMaxRandomBits};
    BlockShape blocks = recipe.blocks.of(operand.role).shape(rows, cols);
    if (operand.transposed) {
        if (!recipe.can_cast_transposed(operand.role))
            throw std::logic_error("quantize: " + std::string(operand.tensor) +
                                   "'s cast depends on its layout under this recipe; transpose it instead");
        const BlockShape b = recipe.blocks.of(operand.role).shape(cols, rows);
        blocks = {b.cols, b.rows};
    }
    switch (recipe.rule) {
    case ScaleRule::One:
        return quantize_blocks(
            x, rows, cols, blocks, format, options,
            [](float) {
                return BlockScale{1.0f, 1.0f};
            },
            values);
    case ScaleRule::Delayed: {
        DelayedScaling& tensor = state.delayed(operand.tensor, format);
        const ScalePair s = tensor.scale();
        // The scale comes from the history, not this amax: one pass casts and finds it.
        QuantizedTensor q = blocks.rows >= rows && blocks.cols >= cols
                                ? quantize_with_scale(x, rows, cols, format, options, {s.scale, s.scale_inv}, values)
                                : quantize_blocks(
                                      x, rows, cols, blocks, format, options,
                                      [&](float) {
                                          return BlockScale{s.scale, s.scale_inv};
                                      },
                                      values);
        tensor.record_amax(q.tensor_amax());
        return q;
    }
    case ScaleRule::Current: {
        const bool power_of_two = recipe.scale_type == ScaleType::Float32PowerOfTwo;
        const float least = recipe.min_amax;
        const auto scale_of = [&](float a) {
            const ScalePair s = current_scale(a < least ? least : a, format, power_of_two);
            return BlockScale{s.scale, s.scale_inv};
        };
        // One block, its amax known: the scale first, then one pass that casts and finds the
        // amax again, from the same bits, as a check that the known one is x's.
        if (operand.amax && blocks.rows >= rows && blocks.cols >= cols && rows > 0 && cols > 0) {
            QuantizedTensor q = quantize_with_scale(x, rows, cols, format, options, scale_of(*operand.amax), values);
            if (std::bit_cast<std::uint32_t>(q.tensor_amax()) != std::bit_cast<std::uint32_t>(*operand.amax))
                throw std::logic_error("quantize: " + std::string(operand.tensor) + "'s amax was given as " +
                                       std::to_string(*operand.amax) + ", its cast found " +
                                       std::to_string(q.tensor_amax()));
            return q;
        }
        return quantize_blocks(x, rows, cols, blocks, format, options, scale_each(scale_of), values);
    }
    case ScaleRule::MxFloor:
    case ScaleRule::MxRceil:
        return quantize_mx(x, rows, cols, format,
                           recipe.rule == ScaleRule::MxFloor ? MxScaleRule::OcpFloor : MxScaleRule::Rceil, blocks,
                           options, values);
    case ScaleRule::Nvfp4:
        return quantize_nvfp4(
            x, rows, cols,
            {blocks.rows > 1, rounding == RoundingMode::Stochastic, operand.seed, kMaxRandomBits,
             recipe.hadamard_wgrad && operand.wgrad_operand && cols % 16 == 0, operand.step, operand.amax},
            values);
    }
    throw std::logic_error("quantize: a scale rule without a cast");
}

}  // namespace fp8lab::emu
