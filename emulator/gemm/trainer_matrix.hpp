// SPDX-License-Identifier: Apache-2.0
// The CPU trainers' matrices and their deterministic operations: the GEMM in fixed chunks,
// the tiled transpose, the finiteness check and the BF16 store of a GEMM's output.
#pragma once

#include <cstddef>

#include <Eigen/Dense>

#include "emulator/gemm/ordered_gemm.hpp"
#include "emulator/base/parallel.hpp"

namespace fp8lab::emu {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<const Matrix>;

// An Eigen operand as strides over its memory (a transpose swaps them).
template <class Operand>
StridedMatrix strided(const Operand& m) {
    return {m.data(), m.rows(), m.cols(), m.rowStride(), m.colStride()};
}

// dst = lhs * rhs by the ordered GEMM (emulator/gemm/ordered_gemm.hpp), dst's columns cut into
// fixed chunks run in parallel where the product is large enough to share. Each element is
// one FMA sum over the whole contraction in order: the same bits for any chunking, thread
// count and CPU (the golden trainer test holds it to the bits at every CPU level).
inline constexpr Eigen::Index kProductChunk = 192;
template <class Lhs, class Rhs>
void product(const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    dst.resize(lhs.rows(), rhs.cols());
    const Eigen::Index n = rhs.cols();
    const bool parallel = n >= 2 * kProductChunk && double(lhs.rows()) * double(lhs.cols()) * double(n) >= 4e6;
    const StridedMatrix a = strided(lhs), b = strided(rhs);
    if (!parallel) {
        ordered_gemm(a, b, dst.data(), n, 0, n);
        return;
    }
    parallel_for_chunks(std::size_t(n), std::size_t(kProductChunk),
                        [&](std::size_t, std::size_t begin, std::size_t end) {
                            ordered_gemm(a, b, dst.data(), n, std::ptrdiff_t(begin), std::ptrdiff_t(end));
                        });
}

// dst = lhs * rhs through the narrow accumulator (emulator/gemm/ordered_gemm.hpp), columns in
// fixed chunks run in parallel: each output is one sum over the whole contraction, so the
// bits do not depend on the chunking or the thread count.
template <class Lhs, class Rhs>
void narrow_accumulator_product(const Lhs& lhs, const Rhs& rhs, Matrix& dst, int fraction_bits) {
    dst.resize(lhs.rows(), rhs.cols());
    const StridedMatrix a = strided(lhs), b = strided(rhs);
    parallel_for_chunks(std::size_t(rhs.cols()), std::size_t(kProductChunk),
                        [&](std::size_t, std::size_t begin, std::size_t end) {
                            narrow_accumulator_gemm(a, b, dst.data(), rhs.cols(), fraction_bits, std::ptrdiff_t(begin),
                                                    std::ptrdiff_t(end));
                        });
}

// dst = src^T in 32 x 32 tiles, bands of source rows in parallel: Eigen's assignment of a
// transpose walks one side with a stride of a whole row (a cache miss per element).
void transpose_into(const Matrix& src, Matrix& dst);

// No NaN or Inf among n floats (on the bits: Eigen's allFinite() tests x - x == 0 one
// element at a time, which took 15% of a step at the notebook's size).
bool all_finite(const float* x, std::size_t n);

// Whether a product of a and b that sums k products an element (in whatever orientation
// they are stored) is certainly finite without reading it: both operands finite, and
// S = k x max|a| x max|b| at most a quarter of float32's largest value, with k <= 4096.
// A sum of k float32 products in any order is at most S / (1 - k u) with u = 2^-24, under
// 2 S; the fast-accumulation model truncates its sums toward zero, which only makes them
// smaller. When false the product must be scanned (all_finite). A wgrad's output is then
// read once less a step.
bool product_certainly_finite(const Matrix& a, const Matrix& b, Eigen::Index k);

// Rounds every element to BF16 (nearest-even): how a GEMM's BF16 output is stored.
void store_in_bf16(Matrix& m);

}  // namespace fp8lab::emu
