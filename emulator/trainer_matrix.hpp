// SPDX-License-Identifier: Apache-2.0
// The CPU trainers' matrices and their deterministic operations: the GEMM in fixed chunks,
// the tiled transpose, the finiteness check and the BF16 store of a GEMM's output.
#pragma once

#include <cstddef>

#include <Eigen/Dense>

#include "emulator/ordered_gemm.hpp"
#include "emulator/parallel.hpp"

namespace fp8lab::emu {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<const Matrix>;

// An Eigen operand as strides over its memory (a transpose swaps them).
template <class Operand>
StridedMatrix strided(const Operand& m) {
    return {m.data(), m.rows(), m.cols(), m.rowStride(), m.colStride()};
}

// dst = lhs * rhs with dst's columns cut into fixed chunks run in parallel. Each element
// is summed in the order of Eigen's single-threaded GEMM over the whole matrix, for any
// thread count (the golden trainer test holds it to the bits): where that order is the
// panel order (emulator/ordered_gemm.hpp) the ordered GEMM computes it, 8 outputs to a
// vector where Eigen's kernel does 4; elsewhere each chunk is Eigen's own GEMM over the
// whole contraction, whose blocking along it depends only on its length, with chunk
// widths multiples of every register block (12, 8 and 4 rows of Eigen's transposed problem).
inline constexpr Eigen::Index kProductChunk = 192;
template <class Lhs, class Rhs>
void product(const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    dst.resize(lhs.rows(), rhs.cols());
    const Eigen::Index n = rhs.cols();
    const bool parallel = n >= 2 * kProductChunk && double(lhs.rows()) * double(lhs.cols()) * double(n) >= 4e6;
    if (eigen_order_is_panel_order(lhs.rows(), n, lhs.cols())) {
        const StridedMatrix a = strided(lhs), b = strided(rhs);
        const auto columns = [&](std::size_t begin, std::size_t end) {
            const auto width = std::ptrdiff_t(end - begin);
            panel_ordered_gemm(a, b, dst.data(), n, eigen_depth_panel(lhs.rows(), width, lhs.cols()),
                               std::ptrdiff_t(begin), std::ptrdiff_t(end));
        };
        if (!parallel)
            columns(0, std::size_t(n));
        else
            parallel_for_chunks(std::size_t(n), std::size_t(kProductChunk),
                                [&](std::size_t, std::size_t begin, std::size_t end) { columns(begin, end); });
        return;
    }
    if (!parallel) {
        dst.noalias() = lhs * rhs;
        return;
    }
    parallel_for_chunks(std::size_t(n), std::size_t(kProductChunk),
                        [&](std::size_t, std::size_t begin, std::size_t end) {
                            const Eigen::Index j = Eigen::Index(begin), w = Eigen::Index(end - begin);
                            dst.middleCols(j, w).noalias() = lhs * rhs.middleCols(j, w);
                        });
}

// dst = lhs * rhs through the narrow accumulator (emulator/ordered_gemm.hpp), columns in
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

// Rounds every element to BF16 (nearest-even): how a GEMM's BF16 output is stored.
void store_in_bf16(Matrix& m);

}  // namespace fp8lab::emu
