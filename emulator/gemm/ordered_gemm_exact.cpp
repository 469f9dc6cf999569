// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's exact path for CPUs without AVX2 and FMA: fused multiply-adds in doubles.
#include <bit>
#include <cstdint>

#include "emulator/gemm/gemm_kernel.hpp"
#include "emulator/gemm/ordered_gemm_levels.hpp"

namespace fp8lab::emu::gemm_levels {
namespace {

// float32 fma(a, b, c) without an FMA instruction: the product of two floats is exact in a
// double; p + c is rounded to a double s, and TwoSum gives its error exactly. An inexact s
// that is even could sit on a float32 rounding boundary that the exact sum is not on, so
// it is moved one double ulp toward the exact sum (an odd double: round to odd); the one
// rounding to float32 after that is the correctly rounded fma (53 bits are more than
// float32's 24 + 2). Written as plain code, the compiler's vectoriser takes the lanes; an
// SSE2 version with intrinsics measured no faster.
float fma_exact(float a, float b, float c) {
    const double p = double(a) * double(b), cd = double(c), s = p + cd;
    const double bb = s - p, err = (p - (s - bb)) + (cd - bb);
    std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
    const bool finite = (bits & 0x7FF0000000000000ull) != 0x7FF0000000000000ull;
    if (err != 0.0 && finite && (bits & 1) == 0) bits += (err > 0.0) == (s > 0.0) ? 1 : std::uint64_t(-1);
    return float(std::bit_cast<double>(bits));
}

// Eight lanes the compiler may keep in registers.
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
        for (int i = 0; i < kLanes; ++i) sum.lane[i] = fma_exact(b.lane[i], a, sum.lane[i]);
    }
};

}  // namespace

float exact_fma(float a, float b, float c) { return fma_exact(a, b, c); }

void exact_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out, std::ptrdiff_t panel,
                  float* packed) {
    gemm_kernel::gemm_panels(ExactFma{}, lhs, rhs, out, panel, packed);
}

}  // namespace fp8lab::emu::gemm_levels
