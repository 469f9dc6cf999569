// Operand quantisation for the CPU trainer: one place that maps a recipe to its function.
#include "emulator/operand_quantizer.hpp"
#include "emulator/recipe_descriptor.hpp"

#include <stdexcept>

#include "emulator/bulk.hpp"
#include "emulator/current_scaling.hpp"
#include "emulator/stochastic_bits.hpp"

namespace fp8lab::emu {

std::uint64_t stochastic_cast_seed(std::uint64_t step, const std::string& tensor) {
    return training_cast_seed(step, tensor.size());
}

void OperandQuantizer::quantize(const std::string& tensor, TensorRole role, std::span<const float> x, std::size_t rows,
                                std::size_t cols, std::uint64_t step, AmaxTrace* trace, std::span<float> out,
                                bool wgrad_operand) {
    quantize_codes(tensor, role, x, rows, cols, step, trace, wgrad_operand).dequantize_into(out);
}

QuantizedTensor OperandQuantizer::quantize_codes(const std::string& tensor, TensorRole role, std::span<const float> x,
                                                 std::size_t rows, std::size_t cols, std::uint64_t step,
                                                 AmaxTrace* trace, bool wgrad_operand) {
    const Format& format = *numerics_.formats.of(role);
    const ConvertOptions options{numerics_.rounding.of(role), numerics_.saturation, stochastic_cast_seed(step, tensor),
                                 kMaxRandomBits};
    QuantizedTensor q;
    float scale_used = 1.0f;
    if (!numerics_.scaling) {
        q = quantize_blocks(x, rows, cols, {rows, cols}, format, options, [](float) { return BlockScale{1.0f, 1.0f}; });
    } else {
        switch (numerics_.recipe) {
        case Fp8Recipe::Delayed: {
            DelayedScaling& state = delayed_.try_emplace(tensor, format, numerics_.delayed).first->second;
            const ScalePair s = state.scale();
            scale_used = s.scale;
            q = quantize_blocks(x, rows, cols, {rows, cols}, format, options, [&](float) {
                return BlockScale{s.scale, s.scale_inv};
            });
            state.record_amax(q.tensor_amax());
            break;
        }
        case Fp8Recipe::Current:
            q = quantize_per_tensor(x, rows, cols, format, false, options);
            scale_used = 1.0f / q.block_scale_inv[0];
            break;
        case Fp8Recipe::MxFloor:
            q = quantize_mx(x, rows, cols, format, MxScaleRule::OcpFloor,
                            recipe_descriptor(Fp8Recipe::MxFloor).activation_blocks.cols, options);
            break;
        case Fp8Recipe::MxRceil:
            q = quantize_mx(x, rows, cols, format, MxScaleRule::Rceil,
                            recipe_descriptor(Fp8Recipe::MxRceil).activation_blocks.cols, options);
            break;
        case Fp8Recipe::Blockwise: {
            const RecipeDescriptor& d = recipe_descriptor(Fp8Recipe::Blockwise);
            q = quantize_blockwise(x, rows, cols, role == TensorRole::Weight ? d.weight_blocks : d.activation_blocks,
                                   options);
        } break;
        case Fp8Recipe::Nvfp4: {
            const Nvfp4Training& o = numerics_.nvfp4;
            q = quantize_nvfp4(
                x, rows, cols,
                {o.weight_tiles && role == TensorRole::Weight, o.stochastic_gradients && role == TensorRole::GradOutput,
                 stochastic_cast_seed(step, tensor), kMaxRandomBits,
                 o.hadamard_wgrad && wgrad_operand && cols % 16 == 0, step});
        } break;
        }
    }
    if (role == TensorRole::GradOutput) {
        gradient_elements_ += x.size();
        gradients_flushed_ += q.counts.flushed_to_zero;
    }
    if (trace) {
        AmaxTraceRecord r;
        r.step = step;
        r.tensor = tensor;
        // The blocks partition x, so their largest amax is x's, unless NVFP4 quantised a
        // Hadamard transform of x.
        const bool transformed = numerics_.scaling && numerics_.recipe == Fp8Recipe::Nvfp4 &&
                                 numerics_.nvfp4.hadamard_wgrad && wgrad_operand && cols % 16 == 0;
        r.amax = transformed ? amax(x) : q.tensor_amax();
        r.scale = scale_used;  // block recipes: 1, their scales live in the blocks
        fill_histogram(r, x);
        trace->records.push_back(std::move(r));
    }
    return q;
}

void OperandQuantizer::end_step() {
    for (auto& [name, state] : delayed_) state.update();
}

std::map<std::string, DelayedScalingState> OperandQuantizer::state() const {
    std::map<std::string, DelayedScalingState> states;
    for (const auto& [name, scaling] : delayed_) states.emplace(name, scaling.state());
    return states;
}

}  // namespace fp8lab::emu
