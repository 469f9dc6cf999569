// SPDX-License-Identifier: Apache-2.0
// The one cast of a GEMM operand under a recipe: the CPU trainer, `fp8lab quantize`, the
// Python module and the labs all call quantize(), whatever the recipe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/formats/quantized_tensor.hpp"
#include "emulator/scaling/recipe.hpp"

namespace fp8lab::emu {

// One operand's cast: which tensor, in which role, at which step.
struct Operand {
    std::string_view tensor;  // names its delayed-scaling state
    TensorRole role = TensorRole::Input;
    std::uint64_t step = 0;      // the Hadamard transform's signs (NVFP4's wgrad)
    std::uint64_t seed = 0;      // the stochastic roundings' bits
    bool wgrad_operand = false;  // feeds the weight gradient: the recipe's Hadamard transform applies
    // x holds the operand transposed (its contraction runs down x's columns): the role's
    // blocks of the operand are laid over x, and the result is in x's layout. The values
    // equal the transposed operand's cast, element for element, where the recipe
    // can_cast_transposed(role); quantize() refuses it elsewhere.
    bool transposed = false;
    // x's amax (NaN skipped, Inf kept) where whatever wrote x found it already (AdamW, as it
    // writes the weights): per-tensor current scaling then casts in one pass instead of two,
    // and throws std::logic_error if the pass finds another amax. Other rules ignore it.
    std::optional<float> amax = std::nullopt;
};

// What a recipe keeps from step to step: per tensor, delayed scaling's amax history.
class RecipeState {
  public:
    explicit RecipeState(DelayedScalingConfig delayed = {}) : config_(delayed) {}
    DelayedScaling& delayed(std::string_view tensor, const Format& format);
    // Ends a training step: delayed scaling computes the scales of the next one.
    void end_step();
    // Per tensor, what a view plots of its delayed scaling (empty for other rules).
    std::map<std::string, DelayedScalingState> delayed_states() const;

  private:
    DelayedScalingConfig config_;
    std::map<std::string, DelayedScaling, std::less<>> delayed_;
};

// x is rows x cols, row-major, the contraction along the columns; each block of the
// role's blocking gets its scale by the recipe's rule, its elements the role's format and
// rounding. Delayed scaling quantises with the tensor's current scale and records its amax.
// `values` (x.size() elements, or empty): receives the dequantised values from the pass
// that casts, and the result keeps no codes (quantize_blocks).
QuantizedTensor quantize(std::span<const float> x, std::size_t rows, std::size_t cols, const Recipe& recipe,
                         const Operand& operand, RecipeState& state, std::span<float> values = {});

}  // namespace fp8lab::emu
