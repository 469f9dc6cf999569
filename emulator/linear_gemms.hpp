// SPDX-License-Identifier: Apache-2.0
// One linear layer's three GEMMs (forward, dgrad, wgrad) with operands in FP32, BF16 or the
// experiment's FP8 recipe, as the transformer's every linear layer runs them.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/amax_trace.hpp"
#include "emulator/experiment.hpp"
#include "emulator/operand_quantizer.hpp"
#include "emulator/trainer_matrix.hpp"

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

class LinearGemms {
  public:
    LinearGemms(OperandQuantizer& quantizer, FastAccumulation fast) : quantizer_(quantizer), fast_(fast) {}

    // y = x W^T (W is outputs x inputs). With BF16 or FP8 operands the output is stored in
    // BF16, as a GPU's GEMM stores it; FP32 keeps float32.
    void forward(const std::string& name, Precision precision, const Matrix& x, const Matrix& weight,
                 std::uint64_t step, AmaxTrace* trace, LinearSaved& saved, Matrix& y);

    // weight_grad = grad^T x and, when dx is given, dx = grad W (stored in BF16 when
    // quantised). Block recipes cast the transposes anew (their blocks run along each
    // GEMM's contraction): in place where the recipe can_cast_transposed, else from
    // transposed copies; a weight whose blocks are square reuses its forward cast. NVFP4
    // rotates both wgrad operands with its Hadamard transform.
    void backward(const std::string& name, const LinearSaved& saved, const Matrix& weight, const Matrix& grad,
                  std::uint64_t step, AmaxTrace* trace, Matrix& weight_grad, Matrix* dx);

  private:
    // What a GEMM sees of x (contraction along its columns): x itself in FP32, else `out`.
    const Matrix& operand(const std::string& tensor, TensorRole role, Precision p, const Matrix& x, std::uint64_t step,
                          AmaxTrace* trace, Matrix& out, bool wgrad_operand = false, bool transposed = false);

    OperandQuantizer& quantizer_;
    FastAccumulation fast_;
    Matrix g_buffer_, g_t_, x_t_, w_t_, transposed_, transposed_x_;  // scratch, reused step to step
};

}  // namespace fp8lab::emu
