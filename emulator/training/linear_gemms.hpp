// SPDX-License-Identifier: Apache-2.0
// One linear layer's three GEMMs (forward, dgrad, wgrad) with operands in FP32, BF16 or the
// experiment's FP8 recipe, as the transformer's every linear layer runs them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/training/operand_quantizer.hpp"
#include "emulator/gemm/trainer_matrix.hpp"

namespace fp8lab::emu {

// What the forward pass keeps for the backward: the input (the caller keeps it alive) and
// the operands the forward GEMM saw.
struct LinearSaved {
    Precision precision = Precision::Fp32;
    const Matrix* input = nullptr;
    const Matrix* input_q = nullptr;
    const Matrix* weight_q = nullptr;
    Matrix input_buffer, weight_buffer;
};

// Scratch of a block recipe's backward, kept from step to step.
struct BlockBackwardBuffers {
    Matrix g_t, x_t, w_t, transposed, transposed_x;
};

// A block recipe's wgrad (weight_grad = grad^T input) and, with dx, dgrad (dx = g_q W): their
// operands need blocks along the other dimension (wgrad contracts over the tokens, dgrad
// over the outputs), so they are cast anew: in place where the recipe can_cast_transposed,
// else from transposed copies (NVFP4: its Hadamard transform and stochastic gradients); a
// weight whose cast transposes reuses its forward cast, weight_q. Both trainers call this:
// cast(tensor, role, x, out, wgrad_operand, transposed) is the caller's operand cast (what
// the GEMM sees of x), gemm(dgrad, lhs, rhs, dst) its GEMM. dx may be grad itself: grad is
// read before the dgrad writes.
template <class Cast, class Gemm>
void block_recipe_backward(const Recipe& r, const std::string& name, const Matrix& grad, const Matrix& g_q,
                           const Matrix& input, const Matrix& weight, const Matrix& weight_q, BlockBackwardBuffers& b,
                           const Cast& cast, const Gemm& gemm, Matrix& weight_grad, Matrix* dx) {
    const std::string g_name = name + ".grad_output", x_name = name + ".input", w_name = name + ".weight";
    if (r.can_cast_transposed(TensorRole::GradOutput) && r.can_cast_transposed(TensorRole::Input)) {
        const Matrix& g_c = cast(g_name, TensorRole::GradOutput, grad, b.g_t, true, true);
        const Matrix& x_c = cast(x_name, TensorRole::Input, input, b.x_t, true, true);
        gemm(false, g_c.transpose(), x_c, weight_grad);
    } else {
        transpose_into(grad, b.transposed);
        const Matrix& g_t = cast(g_name, TensorRole::GradOutput, b.transposed, b.g_t, true, false);
        transpose_into(input, b.transposed_x);
        const Matrix& x_t = cast(x_name, TensorRole::Input, b.transposed_x, b.x_t, true, false);
        gemm(false, g_t, x_t.transpose(), weight_grad);
    }
    if (!dx) return;
    if (r.weight_cast_transposes()) {
        gemm(true, g_q, weight_q, *dx);
    } else if (r.can_cast_transposed(TensorRole::Weight)) {
        gemm(true, g_q, cast(w_name, TensorRole::Weight, weight, b.w_t, false, true), *dx);
    } else {
        transpose_into(weight, b.transposed);
        gemm(true, g_q, cast(w_name, TensorRole::Weight, b.transposed, b.w_t, false, false).transpose(), *dx);
    }
}

class LinearGemms {
  public:
    LinearGemms(OperandQuantizer& quantizer, FastAccumulation fast) : quantizer_(quantizer), fast_(fast) {}

    // Whether forward's y and backward's dx are stored in BF16: with BF16 or FP8 operands,
    // as a GPU's GEMM stores them; FP32 keeps float32.
    static bool stores_output_in_bf16(Precision precision) { return precision != Precision::Fp32; }

    // y = x W^T (W is outputs x inputs), stored as stores_output_in_bf16 says.
    // `weight_amax`: W's amax where AdamW found it (CastRequest::amax).
    void forward(const std::string& name, Precision precision, const Matrix& x, const Matrix& weight,
                 std::uint64_t step, AmaxTrace* trace, LinearSaved& saved, Matrix& y,
                 std::optional<float> weight_amax = {});

    // weight_grad = grad^T x and, when dx is given, dx = grad W (stored in BF16 when
    // quantised). Block recipes cast their operands anew (block_recipe_backward).
    void backward(const std::string& name, const LinearSaved& saved, const Matrix& weight, const Matrix& grad,
                  std::uint64_t step, AmaxTrace* trace, Matrix& weight_grad, Matrix* dx);

  private:
    // What a GEMM sees of x (contraction along its columns): x itself in FP32, else `out`.
    const Matrix& operand(const std::string& tensor, TensorRole role, Precision p, const Matrix& x, std::uint64_t step,
                          AmaxTrace* trace, Matrix& out, const CastRequest& request = {});

    OperandQuantizer& quantizer_;
    FastAccumulation fast_;
    Matrix g_buffer_;  // scratch, reused step to step
    BlockBackwardBuffers block_;
};

}  // namespace fp8lab::emu
