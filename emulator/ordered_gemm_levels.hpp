// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's per-level entry points, each in a file compiled for its level.
#pragma once

#include <cstddef>

#include "emulator/ordered_gemm.hpp"

namespace fp8lab::emu::gemm_levels {

// As ordered_gemm; each callable only where its level runs (emulator/cpu_level.hpp).
void exact(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
           std::ptrdiff_t begin, std::ptrdiff_t end);
void avx2(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
          std::ptrdiff_t begin, std::ptrdiff_t end);
void avx512(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
            std::ptrdiff_t begin, std::ptrdiff_t end);

// fma(a, b, c) rounded once, computed without an FMA instruction (the exact path's; the
// tests compare it with std::fma).
float exact_fma(float a, float b, float c);

// Terms per depth panel: any value gives the same bits; this one keeps a 3-vector strip of
// a panel (256 x 24 floats, 24 KiB) in a 32 KiB L1.
inline constexpr std::ptrdiff_t kPanel = 256;

}  // namespace fp8lab::emu::gemm_levels
