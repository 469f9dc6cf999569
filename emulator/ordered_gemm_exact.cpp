// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's exact scalar path: std::fma per term, for CPUs without AVX2 and FMA.
#include <cmath>

#include "emulator/gemm_kernel.hpp"
#include "emulator/ordered_gemm_levels.hpp"

namespace fp8lab::emu::gemm_levels {
namespace {

// Eight lanes the compiler may keep in registers; std::fma rounds each term once, in
// hardware where the CPU has FMA and in the C library's exact routine where it has not.
struct ExactFma {
    struct Vec {
        float lane[8];
    };
    static constexpr int kLanes = 8, kRows = 4, kVectors = 1;
    static void zero(Vec& v) {
        for (float& x : v.lane) x = 0.0f;
    }
    static void load(Vec& v, const float* p) {
        for (int i = 0; i < kLanes; ++i) v.lane[i] = p[i];
    }
    static void store(float* p, const Vec& v) {
        for (int i = 0; i < kLanes; ++i) p[i] = v.lane[i];
    }
    static void accumulate(Vec& sum, const Vec& b, float a) {
        for (int i = 0; i < kLanes; ++i) sum.lane[i] = std::fma(b.lane[i], a, sum.lane[i]);
    }
};

}  // namespace

void exact(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
           std::ptrdiff_t begin, std::ptrdiff_t end) {
    gemm_kernel::run_gemm<ExactFma>(
        lhs, rhs, dst, dst_stride, kPanel, begin, end,
        [](const StridedMatrix& a, const StridedMatrix& b, gemm_kernel::Output out, std::ptrdiff_t panel,
           float* packed) { gemm_kernel::gemm_panels(ExactFma{}, a, b, out, panel, packed); });
}

}  // namespace fp8lab::emu::gemm_levels
