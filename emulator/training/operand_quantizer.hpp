// SPDX-License-Identifier: Apache-2.0
// The CPU trainer's casts: quantize() with the experiment's recipe, its state, its counts and its trace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/scaling/block_recipes.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/scaling/quantize.hpp"
#include "emulator/scaling/tensor_numerics.hpp"

namespace fp8lab::emu {

// The seed of a stochastic cast: a function of the step and the tensor's name only, so
// any backend that casts the same tensor at the same step draws the same bits.
std::uint64_t stochastic_cast_seed(std::uint64_t step, const std::string& tensor);

// How an operand is cast beyond its tensor, role and step.
struct CastRequest {
    bool wgrad_operand = false;                // it feeds the weight gradient: NVFP4's Hadamard transform applies
    bool transposed = false;                   // x holds the operand transposed (Operand::transposed)
    std::optional<float> amax = std::nullopt;  // x's amax, found by whatever wrote x (Operand::amax)
};

class OperandQuantizer {
  public:
    explicit OperandQuantizer(const Numerics& numerics) : recipe_(recipe_of(numerics)), state_(numerics.delayed) {}
    const Recipe& recipe() const { return recipe_; }

    // The values the GEMM sees for a rows x cols operand (contraction along the columns).
    // Delayed scaling quantises with the tensor's current scale and records its amax.
    // `request.wgrad_operand`: NVFP4 applies its random Hadamard transform (same seed for
    // both operands of a step, so their product is unchanged); other recipes ignore it.
    // `trace` receives the tensor's amax and scale (nullptr: not traced).
    // `out` (rows * cols elements) receives the dequantised values.
    // `request.transposed`: x holds the operand transposed, and `out` gets the cast in x's
    // layout (Operand::transposed; the recipe must can_cast_transposed(role)).
    void quantize(const std::string& tensor, TensorRole role, std::span<const float> x, std::size_t rows,
                  std::size_t cols, std::uint64_t step, AmaxTrace* trace, std::span<float> out,
                  const CastRequest& request = {});

    // The same cast with its codes and scales (quantize() is its dequantisation).
    QuantizedTensor quantize_codes(const std::string& tensor, TensorRole role, std::span<const float> x,
                                   std::size_t rows, std::size_t cols, std::uint64_t step, AmaxTrace* trace,
                                   const CastRequest& request = {});

    // From now on every traced cast (trace not null) also appends its numerics to `log`
    // (null: none are kept).
    void log_numerics(std::vector<TensorNumerics>* log) { numerics_ = log; }
    // Whether traced casts fill their record's log2 histogram (the trace file's); off when
    // the trace only carries the numerics, whose counts do not need it (a pass over x).
    void fill_histograms(bool on) { histograms_ = on; }

    // Ends a training step: delayed scaling computes the scales of the next one.
    void end_step();

    // Gradient elements that were non-zero but became zero, over the whole run.
    std::uint64_t gradient_elements() const { return gradient_elements_; }
    std::uint64_t gradients_flushed() const { return gradients_flushed_; }
    // Gradient elements that reach their GEMM as zero: flushed by their cast, or zero
    // already because the gradient upstream was flushed.
    std::uint64_t gradients_zero() const { return gradients_zero_; }
    std::uint64_t input_elements() const { return input_elements_; }
    std::uint64_t inputs_flushed() const { return inputs_flushed_; }
    std::uint64_t inputs_subnormal() const { return inputs_subnormal_; }

    // Per tensor, what a view plots of its delayed scaling (empty for other recipes).
    std::map<std::string, DelayedScalingState> state() const;

  private:
    // The cast, its counts and its trace record; with `values`, the dequantised values from
    // the same pass and no codes kept.
    QuantizedTensor cast(const std::string& tensor, TensorRole role, std::span<const float> x, std::size_t rows,
                         std::size_t cols, std::uint64_t step, AmaxTrace* trace, const CastRequest& request,
                         std::span<float> values);

    Recipe recipe_;
    RecipeState state_;
    std::uint64_t gradient_elements_ = 0, gradients_flushed_ = 0, gradients_zero_ = 0;
    std::uint64_t input_elements_ = 0, inputs_flushed_ = 0, inputs_subnormal_ = 0;  // forward operands only
    std::vector<TensorNumerics>* numerics_ = nullptr;
    bool histograms_ = true;
};

}  // namespace fp8lab::emu
