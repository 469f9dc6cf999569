// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM on AVX2 with FMA: 4 rows by 3 vectors of 8 outputs a tile.
// Compiled with -mavx2 -mfma (emulator/CMakeLists.txt); called only where the CPU has both.
#include "emulator/gemm/ordered_gemm_levels.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "emulator/gemm/gemm_kernel.hpp"

namespace fp8lab::emu::gemm_levels {
namespace {

// 12 accumulators, 3 strip vectors and the broadcast: 16 registers, and 12 independent
// FMAs in flight cover the FMA units' latency.
struct Avx2Fma {
    using Vec = __m256;
    static constexpr int kLanes = 8, kRows = 4, kVectors = 3;
    static void zero(Vec& v) { v = _mm256_setzero_ps(); }
    static void load(Vec& v, const float* p) { v = _mm256_loadu_ps(p); }
    static void store(float* p, const Vec& v) { _mm256_storeu_ps(p, v); }
    static void accumulate(Vec& sum, const Vec& b, float a) { sum = _mm256_fmadd_ps(b, _mm256_set1_ps(a), sum); }
};

}  // namespace

void avx2_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out, std::ptrdiff_t panel,
                 float* packed) {
    gemm_kernel::gemm_panels(Avx2Fma{}, lhs, rhs, out, panel, packed);
}

}  // namespace fp8lab::emu::gemm_levels
#else
#include <stdexcept>

namespace fp8lab::emu::gemm_levels {
void avx2_panels(const StridedMatrix&, const StridedMatrix&, gemm_kernel::Output, std::ptrdiff_t, float*) {
    throw std::logic_error("ordered GEMM: this build has no AVX2 path");
}
}  // namespace fp8lab::emu::gemm_levels
#endif
