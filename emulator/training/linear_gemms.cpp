// SPDX-License-Identifier: Apache-2.0
// A linear layer's GEMMs under FP32, BF16 or an FP8 recipe.
#include "emulator/training/linear_gemms.hpp"

#include <span>

#include "emulator/formats/bulk.hpp"

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
// narrow accumulator, emulator/gemm/ordered_gemm.hpp); the rest sum in float32.
template <class Lhs, class Rhs>
void gemm(bool fast_accumulation, Precision p, const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    if (fast_accumulation && p == Precision::Fp8)
        narrow_accumulator_product(lhs, rhs, dst, kFastAccumulationFractionBits);
    else
        banded_product(lhs, rhs, dst);
}

}  // namespace

const Matrix& LinearGemms::operand(const std::string& tensor, TensorRole role, Precision p, const Matrix& x,
                                   std::uint64_t step, AmaxTrace* trace, Matrix& out, const CastRequest& request) {
    if (p == Precision::Fp32) return x;
    out.resize(x.rows(), x.cols());
    const std::span<const float> in(x.data(), std::size_t(x.size()));
    const std::span<float> dst(out.data(), std::size_t(out.size()));
    if (p == Precision::Bf16)
        round_span(bf16(), in, dst);
    else
        quantizer_.quantize(tensor, role, in, std::size_t(x.rows()), std::size_t(x.cols()), step, trace, dst, request);
    return out;
}

void LinearGemms::forward(const std::string& name, Precision p, const Matrix& x, const Matrix& weight,
                          std::uint64_t step, AmaxTrace* trace, LinearSaved& saved, Matrix& y,
                          std::optional<float> weight_amax) {
    saved.precision = p;
    saved.input = &x;
    saved.input_q = &operand(name + ".input", TensorRole::Input, p, x, step, trace, saved.input_buffer);
    saved.weight_q = &operand(name + ".weight", TensorRole::Weight, p, weight, step, trace, saved.weight_buffer,
                              {.amax = weight_amax});
    gemm(fast_.forward, p, *saved.input_q, saved.weight_q->transpose(), y);
    if (stores_output_in_bf16(p)) store_in_bf16(y);
}

void LinearGemms::backward(const std::string& name, const LinearSaved& saved, const Matrix& weight, const Matrix& grad,
                           std::uint64_t step, AmaxTrace* trace, Matrix& weight_grad, Matrix* dx) {
    const Precision p = saved.precision;
    const Matrix& g_q = operand(name + ".grad_output", TensorRole::GradOutput, p, grad, step, trace, g_buffer_);
    const Recipe& r = quantizer_.recipe();
    if (p == Precision::Fp8 && !r.per_tensor()) {
        block_recipe_backward(
            r, name, grad, g_q, *saved.input, weight, *saved.weight_q, block_,
            [&](const std::string& tensor, TensorRole role, const Matrix& x, Matrix& out, bool wgrad_operand,
                bool transposed) -> const Matrix& {
                return operand(tensor, role, p, x, step, nullptr, out, {wgrad_operand, transposed});
            },
            [&](bool dgrad, const auto& lhs, const auto& rhs, Matrix& dst) {
                gemm(dgrad ? fast_.dgrad : fast_.wgrad, p, lhs, rhs, dst);
            },
            weight_grad, dx);
    } else {
        gemm(fast_.wgrad, p, g_q.transpose(), *saved.input_q, weight_grad);
        if (dx) gemm(fast_.dgrad, p, g_q, *saved.weight_q, *dx);
    }
    if (dx && stores_output_in_bf16(p)) store_in_bf16(*dx);
}

}  // namespace fp8lab::emu
