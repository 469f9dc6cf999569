// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's per-level entry points, each in a file compiled for its level.
#pragma once

#include <cstddef>

#include "emulator/gemm/gemm_kernel.hpp"
#include "emulator/gemm/ordered_gemm.hpp"

namespace fp8lab::emu::gemm_levels {

// One level's kernel over a whole product (gemm_kernel::gemm_panels with its policy):
// out = lhs * rhs with rhs packed into `packed` a panel at a time. Each is callable only
// where its level runs (emulator/base/cpu_level.hpp); ordered_gemm.cpp chooses the operands.
using Panels = void(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out, std::ptrdiff_t panel,
                    float* packed);
Panels exact_panels, avx2_panels, avx512_panels;

// fma(a, b, c) rounded once, computed without an FMA instruction (the exact path's; the
// tests compare it with std::fma).
float exact_fma(float a, float b, float c);

// Terms per depth panel: any value gives the same bits; this one keeps a 3-vector strip of
// a panel (256 x 24 floats, 24 KiB) in a 32 KiB L1.
inline constexpr std::ptrdiff_t kPanel = 256;

}  // namespace fp8lab::emu::gemm_levels
