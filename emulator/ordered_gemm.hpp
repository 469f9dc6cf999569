// SPDX-License-Identifier: Apache-2.0
// The trainer's float32 GEMM in Eigen's summation order, and its narrow-accumulator twin.
#pragma once

#include <cstddef>

namespace fp8lab::emu {

// A matrix read through strides: element (r, c) is data[r * row_stride + c * col_stride],
// so a matrix and its transpose are the same memory with the strides swapped.
struct StridedMatrix {
    const float* data;
    std::ptrdiff_t rows, cols, row_stride, col_stride;
};

// The summation order of Eigen's float32 GEMM (3.4, SSE without FMA) for a product it runs
// through its 2-packet micro-kernel: the depth is cut into panels of `panel` terms; within a
// panel each output is summed from +0 one term after the other (the product rounded, then
// the sum); the panels' sums are added in order to a result that starts at +0.
// Multiplying in that order with wider vectors across the outputs gives the same bits.

// Whether Eigen runs dst(rows x cols) = lhs * rhs with that order in this build: a GEMM
// (not Eigen's coefficient-wise product of tiny matrices, not a matrix-vector product),
// every output column in the 2-packet micro-kernel (cols a multiple of its 8 rows:
// Eigen works on the transposed, column-major problem), and Eigen's packets SSE without
// FMA (an FMA or AVX build of Eigen rounds in another order: then the trainer keeps Eigen).
bool eigen_order_is_panel_order(std::ptrdiff_t rows, std::ptrdiff_t cols, std::ptrdiff_t depth);

// The depth panel Eigen's blocking picks for that product when it runs one
// single-threaded GEMM over `cols` output columns: it depends on the L1 data cache's size.
std::ptrdiff_t eigen_depth_panel(std::ptrdiff_t rows, std::ptrdiff_t cols, std::ptrdiff_t depth);

// dst[:, begin:end) = lhs * rhs[:, begin:end) in panel order (above); dst is row-major
// with dst_stride floats per row; end - begin is a multiple of 8.
void panel_ordered_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                        std::ptrdiff_t panel, std::ptrdiff_t begin, std::ptrdiff_t end);

// The same product through a narrow accumulator (the CPU's model of the FP8 tensor cores'
// fast accumulation): each output summed from +0 over the whole depth, each product rounded
// to float32, each sum rounded to float32 and then truncated to `fraction_bits` (0 to 23)
// fraction bits; never promoted to a wider total. Lab 10's accumulation step plots this model.
void narrow_accumulator_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                             int fraction_bits, std::ptrdiff_t begin, std::ptrdiff_t end);

}  // namespace fp8lab::emu
