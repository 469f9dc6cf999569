// SPDX-License-Identifier: Apache-2.0
// The CPU trainer's operand casts (operand_quantizer.hpp).
#include "emulator/training/operand_quantizer.hpp"

#include <stdexcept>

#include "emulator/formats/bulk.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {

std::uint64_t stochastic_cast_seed(std::uint64_t step, const std::string& tensor) {
    return training_cast_seed(step, tensor.size());
}

void OperandQuantizer::quantize(const std::string& tensor, TensorRole role, std::span<const float> x, std::size_t rows,
                                std::size_t cols, std::uint64_t step, AmaxTrace* trace, std::span<float> out,
                                const CastRequest& request) {
    if (!(trace && numerics_)) {  // the values straight from the cast
        cast(tensor, role, x, rows, cols, step, trace, request, out);
        return;
    }
    const QuantizedTensor q = cast(tensor, role, x, rows, cols, step, trace, request, {});
    q.dequantize_into(out);
    const AmaxTraceRecord& r = trace->records.back();
    numerics_->push_back(tensor_numerics(step, tensor, r.amax, r.scale, x, q, out));
}

QuantizedTensor OperandQuantizer::quantize_codes(const std::string& tensor, TensorRole role, std::span<const float> x,
                                                 std::size_t rows, std::size_t cols, std::uint64_t step,
                                                 AmaxTrace* trace, const CastRequest& request) {
    return cast(tensor, role, x, rows, cols, step, trace, request, {});
}

QuantizedTensor OperandQuantizer::cast(const std::string& tensor, TensorRole role, std::span<const float> x,
                                       std::size_t rows, std::size_t cols, std::uint64_t step, AmaxTrace* trace,
                                       const CastRequest& request, std::span<float> values) {
    const Operand operand{
        tensor,      role, step, stochastic_cast_seed(step, tensor), request.wgrad_operand, request.transposed,
        request.amax};
    QuantizedTensor q = emu::quantize(x, rows, cols, recipe_, operand, state_, values);
    // The trace's scale: the one multiplier of a per-tensor cast (block recipes: 1, their
    // scales live in the blocks).
    float scale_used = 1.0f;
    if (recipe_.rule == ScaleRule::Delayed)
        scale_used = state_.delayed(tensor, *recipe_.formats.of(role)).scale().scale;
    else if (recipe_.rule == ScaleRule::Current && recipe_.per_tensor())
        scale_used = 1.0f / q.block_scale_inv[0];
    if (role == TensorRole::GradOutput) {
        gradient_elements_ += x.size();
        gradients_flushed_ += q.counts.flushed_to_zero;
        std::uint64_t zeros = 0;
        for (const float v : x) zeros += v == 0.0f;
        gradients_zero_ += zeros + q.counts.flushed_to_zero;
    } else if (role == TensorRole::Input && !request.wgrad_operand) {  // the forward GEMMs' activations
        input_elements_ += x.size();
        inputs_flushed_ += q.counts.flushed_to_zero;
        inputs_subnormal_ += q.counts.subnormal;
    }
    if (trace) {
        AmaxTraceRecord r;
        r.step = step;
        r.tensor = tensor;
        // The blocks partition x, so their largest amax is x's, unless NVFP4 quantised a
        // Hadamard transform of x.
        const bool transformed = recipe_.hadamard_wgrad && request.wgrad_operand && cols % 16 == 0;
        r.amax = transformed ? amax(x) : q.tensor_amax();
        r.scale = scale_used;
        if (histograms_) fill_histogram(r, x);
        trace->records.push_back(std::move(r));
    }
    return q;
}

void OperandQuantizer::end_step() { state_.end_step(); }

std::map<std::string, DelayedScalingState> OperandQuantizer::state() const { return state_.delayed_states(); }

}  // namespace fp8lab::emu
