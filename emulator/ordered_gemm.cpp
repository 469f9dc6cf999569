// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's dispatch to this CPU's path, and the narrow accumulator (cloned per level).
#include "emulator/ordered_gemm.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emulator/cpu_level.hpp"
#include "emulator/gemm_kernel.hpp"
#include "emulator/ordered_gemm_levels.hpp"

namespace fp8lab::emu {
namespace {

// Eight floats; built from +, * and loads only, so each clone (AVX-512, AVX2, SSE) rounds
// every lane as one scalar mul then one scalar add would (this file is compiled with
// -ffp-contract=off: no FMA).
using Floats8 = float __attribute__((vector_size(32)));
using Bits8 = std::uint32_t __attribute__((vector_size(32)));

// The narrow accumulator: each product rounded, each sum rounded, then its fraction bits
// below the kept ones cleared (truncation toward zero). Vectors pass by reference only: a
// 32-byte vector by value has another ABI with and without AVX (GCC's -Wpsabi).
struct NarrowAccumulator {
    using Vec = Floats8;
    static constexpr int kLanes = 8, kRows = 4, kVectors = 2;
    std::uint32_t keep_mask;
    static void zero(Vec& v) { v = Vec{}; }
    static void load(Vec& v, const float* p) { std::memcpy(&v, p, sizeof v); }
    static void store(float* p, const Vec& v) { std::memcpy(p, &v, sizeof v); }
    void accumulate(Vec& sum, const Vec& b, float a) const {
        sum = sum + b * a;
        Bits8 bits;
        std::memcpy(&bits, &sum, sizeof bits);
        bits &= keep_mask;
        std::memcpy(&sum, &bits, sizeof sum);
    }
};

FP8LAB_CPU_CLONES void narrow_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out,
                                     std::ptrdiff_t panel, float* packed, std::uint32_t keep_mask) {
    gemm_kernel::gemm_panels(NarrowAccumulator{keep_mask}, lhs, rhs, out, panel, packed);
}

// Once per process, where the exact path runs because the CPU lacks the baseline.
void note_exact_path() {
    static const bool noted = [] {
        std::fprintf(stderr,
                     "fp8lab: this CPU has no AVX2 with FMA, so the trainer's GEMMs take the exact scalar path: the "
                     "same results, many times slower than on a CPU with them\n");
        return true;
    }();
    (void)noted;
}

}  // namespace

void ordered_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t begin, std::ptrdiff_t end) {
    switch (gemm_cpu_level()) {
    case CpuLevel::Avx512:
        return gemm_levels::avx512(lhs, rhs, dst, dst_stride, begin, end);
    case CpuLevel::Avx2:
        return gemm_levels::avx2(lhs, rhs, dst, dst_stride, begin, end);
    case CpuLevel::Exact:
        if (detected_cpu_level() == CpuLevel::Exact) note_exact_path();
        return gemm_levels::exact(lhs, rhs, dst, dst_stride, begin, end);
    }
}

void narrow_accumulator_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                             int fraction_bits, std::ptrdiff_t begin, std::ptrdiff_t end) {
    if (fraction_bits < 0 || fraction_bits > 23)
        throw std::invalid_argument("narrow_accumulator_gemm: fraction bits 0 to 23, not " +
                                    std::to_string(fraction_bits));
    const std::uint32_t keep_mask = ~((std::uint32_t(1) << (23 - fraction_bits)) - 1);
    // One panel over the whole depth: the narrow sum is never promoted.
    gemm_kernel::run_gemm<NarrowAccumulator>(
        lhs, rhs, dst, dst_stride, std::max<std::ptrdiff_t>(lhs.cols, 1), begin, end,
        [keep_mask](const StridedMatrix& a, const StridedMatrix& b, gemm_kernel::Output out, std::ptrdiff_t panel,
                    float* packed) { narrow_panels(a, b, out, panel, packed, keep_mask); });
}

}  // namespace fp8lab::emu
