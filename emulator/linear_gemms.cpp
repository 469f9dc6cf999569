// SPDX-License-Identifier: Apache-2.0
// A linear layer's GEMMs under FP32, BF16 or an FP8 recipe.
#include "emulator/linear_gemms.hpp"

#include <span>

#include "emulator/bulk.hpp"

namespace fp8lab::emu {
namespace {

// dst = lhs * rhs in bands of kBand rows of lhs, in parallel: the transformer's GEMMs are
// too narrow for product()'s column chunks to use both cores. Band boundaries are fixed,
// so the bits are the same for any thread count.
constexpr Eigen::Index kBand = 64;
template <class Lhs, class Rhs>
void banded_product(const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    dst.resize(lhs.rows(), rhs.cols());
    parallel_for_chunks(std::size_t(lhs.rows()), std::size_t(kBand), [&](std::size_t, std::size_t b, std::size_t e) {
        Matrix band;
        product(lhs.middleRows(Eigen::Index(b), Eigen::Index(e - b)), rhs, band);
        dst.middleRows(Eigen::Index(b), Eigen::Index(e - b)) = band;
    });
}

// One GEMM: an FP8 one with fast accumulation goes through the CPU's model of it (a
// narrow accumulator, emulator/ordered_gemm.hpp); the rest sum in float32.
template <class Lhs, class Rhs>
void gemm(bool fast_accumulation, Precision p, const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    if (fast_accumulation && p == Precision::Fp8)
        narrow_accumulator_product(lhs, rhs, dst, kFastAccumulationFractionBits);
    else
        banded_product(lhs, rhs, dst);
}

}  // namespace

const Matrix& LinearGemms::operand(const std::string& tensor, TensorRole role, Precision p, const Matrix& x,
                                   std::uint64_t step, AmaxTrace* trace, Matrix& out, bool wgrad_operand,
                                   bool transposed) {
    if (p == Precision::Fp32) return x;
    out.resize(x.rows(), x.cols());
    const std::span<const float> in(x.data(), std::size_t(x.size()));
    const std::span<float> dst(out.data(), std::size_t(out.size()));
    if (p == Precision::Bf16)
        round_span(bf16(), in, dst);
    else
        quantizer_.quantize(tensor, role, in, std::size_t(x.rows()), std::size_t(x.cols()), step, trace, dst,
                            wgrad_operand, transposed);
    return out;
}

void LinearGemms::forward(const std::string& name, Precision p, const Matrix& x, const Matrix& weight,
                          std::uint64_t step, AmaxTrace* trace, LinearSaved& saved, Matrix& y) {
    saved.precision = p;
    saved.input = &x;
    saved.input_q = &operand(name + ".input", TensorRole::Input, p, x, step, trace, saved.input_buffer);
    saved.weight_q = &operand(name + ".weight", TensorRole::Weight, p, weight, step, trace, saved.weight_buffer);
    gemm(fast_.forward, p, *saved.input_q, saved.weight_q->transpose(), y);
    if (p != Precision::Fp32) store_in_bf16(y);
}

void LinearGemms::backward(const std::string& name, const LinearSaved& saved, const Matrix& weight, const Matrix& grad,
                           std::uint64_t step, AmaxTrace* trace, Matrix& weight_grad, Matrix* dx) {
    const Precision p = saved.precision;
    const Matrix& g_q = operand(name + ".grad_output", TensorRole::GradOutput, p, grad, step, trace, g_buffer_);
    const Recipe& r = quantizer_.recipe();
    if (p == Precision::Fp8 && !r.per_tensor()) {
        // wgrad: both operands' blocks along the tokens.
        if (r.can_cast_transposed(TensorRole::GradOutput) && r.can_cast_transposed(TensorRole::Input)) {
            const Matrix& g_c =
                operand(name + ".grad_output", TensorRole::GradOutput, p, grad, step, nullptr, g_t_, true, true);
            const Matrix& x_c =
                operand(name + ".input", TensorRole::Input, p, *saved.input, step, nullptr, x_t_, true, true);
            gemm(fast_.wgrad, p, g_c.transpose(), x_c, weight_grad);
        } else {
            transpose_into(grad, transposed_);
            const Matrix& g_t =
                operand(name + ".grad_output", TensorRole::GradOutput, p, transposed_, step, nullptr, g_t_, true);
            transpose_into(*saved.input, transposed_x_);
            const Matrix& x_t =
                operand(name + ".input", TensorRole::Input, p, transposed_x_, step, nullptr, x_t_, true);
            gemm(fast_.wgrad, p, g_t, x_t.transpose(), weight_grad);
        }
        // dgrad: the weight's blocks along its outputs.
        if (dx && r.weight_cast_transposes()) {
            gemm(fast_.dgrad, p, g_q, *saved.weight_q, *dx);
        } else if (dx && r.can_cast_transposed(TensorRole::Weight)) {
            const Matrix& w_c =
                operand(name + ".weight", TensorRole::Weight, p, weight, step, nullptr, w_t_, false, true);
            gemm(fast_.dgrad, p, g_q, w_c, *dx);
        } else if (dx) {
            transpose_into(weight, transposed_);
            const Matrix& w_t = operand(name + ".weight", TensorRole::Weight, p, transposed_, step, nullptr, w_t_);
            gemm(fast_.dgrad, p, g_q, w_t.transpose(), *dx);
        }
    } else {
        gemm(fast_.wgrad, p, g_q.transpose(), *saved.input_q, weight_grad);
        if (dx) gemm(fast_.dgrad, p, g_q, *saved.weight_q, *dx);
    }
    if (dx && p != Precision::Fp32) store_in_bf16(*dx);
}

}  // namespace fp8lab::emu
