// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM on AVX-512: 8 rows by 2 vectors of 16 outputs a tile.
// Compiled with -mavx512f (emulator/CMakeLists.txt); called only where the CPU has it.
#include "emulator/gemm/ordered_gemm_levels.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>

#include "emulator/gemm/gemm_kernel.hpp"

namespace fp8lab::emu::gemm_levels {
namespace {

// 16 accumulators of the 32 registers; a 32-wide strip divides the trainers' widths and
// the notebook's 32 tokens (the transposed forward packs them) without padding.
struct Avx512Fma {
    using Vec = __m512;
    static constexpr int kLanes = 16, kRows = 8, kVectors = 2;
    static void zero(Vec& v) { v = _mm512_setzero_ps(); }
    static void load(Vec& v, const float* p) { v = _mm512_loadu_ps(p); }
    static void store(float* p, const Vec& v) { _mm512_storeu_ps(p, v); }
    static void accumulate(Vec& sum, const Vec& b, float a) { sum = _mm512_fmadd_ps(b, _mm512_set1_ps(a), sum); }
};

}  // namespace

void avx512_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out, std::ptrdiff_t panel,
                   float* packed) {
    gemm_kernel::gemm_panels(Avx512Fma{}, lhs, rhs, out, panel, packed);
}

}  // namespace fp8lab::emu::gemm_levels
#else
#include <stdexcept>

namespace fp8lab::emu::gemm_levels {
void avx512_panels(const StridedMatrix&, const StridedMatrix&, gemm_kernel::Output, std::ptrdiff_t, float*) {
    throw std::logic_error("ordered GEMM: this build has no AVX-512 path");
}
}  // namespace fp8lab::emu::gemm_levels
#endif
