// SPDX-License-Identifier: Apache-2.0
// The trainers' float32 GEMM in one fixed order (FMA), and its narrow-accumulator twin.
#pragma once

#include <cstddef>

namespace fp8lab::emu {

// A matrix read through strides: element (r, c) is data[r * row_stride + c * col_stride],
// so a matrix and its transpose are the same memory with the strides swapped.
struct StridedMatrix {
    const float* data;
    std::ptrdiff_t rows, cols, row_stride, col_stride;
};

// The trainers' float32 GEMM: each output summed from +0 over the whole contraction, term
// by term in order, each term added by one fused multiply-add (rounded once). That order
// is the same for any vector width, tiling, chunking and thread count, so the result is
// bit-identical on every machine: AVX-512 and AVX2 with FMA run it in vectors, and a CPU
// without them runs the exact scalar path (the same bits, slower; emulator/base/cpu_level.hpp).
// dst[:, begin:end) = lhs * rhs[:, begin:end); dst is row-major with dst_stride floats per row.
void ordered_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t begin, std::ptrdiff_t end);

// The same product through a narrow accumulator (the CPU's model of the FP8 tensor cores'
// fast accumulation): each output summed from +0 over the whole depth, each product rounded
// to float32, each sum rounded to float32 and then truncated to `fraction_bits` (0 to 23)
// fraction bits (no FMA); never promoted to a wider total. Lab 10's accumulation step plots this model.
void narrow_accumulator_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                             int fraction_bits, std::ptrdiff_t begin, std::ptrdiff_t end);

}  // namespace fp8lab::emu
