// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM's dispatch to this CPU's path, and the narrow accumulator (cloned per level).
#include "emulator/gemm/ordered_gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/base/cpu_level.hpp"
#include "emulator/gemm/gemm_kernel.hpp"
#include "emulator/gemm/ordered_gemm_levels.hpp"

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

FP8LAB_INLINE void narrow_panels_body(const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out,
                                      std::ptrdiff_t panel, float* packed, std::uint32_t keep_mask) {
    gemm_kernel::gemm_panels(NarrowAccumulator{keep_mask}, lhs, rhs, out, panel, packed);
}
FP8LAB_CPU_DISPATCH(void, narrow_panels,
                    (const StridedMatrix& lhs, const StridedMatrix& rhs, gemm_kernel::Output out, std::ptrdiff_t panel,
                     float* packed, std::uint32_t keep_mask),
                    (lhs, rhs, out, panel, packed, keep_mask), narrow_panels_body)

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

StridedMatrix transposed(const StridedMatrix& m) { return {m.data, m.cols, m.rows, m.col_stride, m.row_stride}; }

// dst[:, begin:end) = lhs * rhs[:, begin:end) by panels(a, b, out, panel, packed), a
// level's gemm_kernel::gemm_panels; this picks the operand to pack and keeps its buffer.
template <class Panels>
void run_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
              std::ptrdiff_t panel, std::ptrdiff_t begin, std::ptrdiff_t end, const Panels& panels) {
    // One packed panel per thread, kept: the trainer calls this with the same sizes every step.
    thread_local std::vector<float> packed;
    const StridedMatrix columns{rhs.data + begin * rhs.col_stride, rhs.rows, end - begin, rhs.row_stride,
                                rhs.col_stride};
    // The packed operand is copied whole for each panel, so it should be the smaller, and
    // one whose columns are cheap to gather. A rhs that is a transpose (the forward's W^T,
    // 9 MB at the notebook's size) against few lhs rows (the tokens) swaps roles: lhs^T is
    // packed and the transposed block computed, each element the same sum in the same order
    // (a * b and b * a round alike). (A rhs with contiguous rows packs fast: there the swap
    // measured slower.)
    const bool transpose = rhs.col_stride != 1 && lhs.rows < columns.cols;
    const StridedMatrix a = transpose ? transposed(columns) : lhs, b = transpose ? transposed(lhs) : columns;
    const gemm_kernel::Output out =
        transpose ? gemm_kernel::Output{dst + begin, 1, dst_stride} : gemm_kernel::Output{dst + begin, dst_stride, 1};
    if (lhs.cols == 0) {  // an empty contraction: every sum is +0
        for (std::ptrdiff_t i = 0; i < a.rows; ++i)
            for (std::ptrdiff_t j = 0; j < b.cols; ++j) out.data[i * out.row_step + j * out.col_step] = 0.0f;
        return;
    }
    constexpr std::ptrdiff_t lanes = gemm_kernel::kMaxLanes;
    packed.resize(std::size_t(std::min(panel, lhs.cols) * ((b.cols + lanes - 1) / lanes * lanes)));
    panels(a, b, out, panel, packed.data());
}

}  // namespace

void ordered_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t begin, std::ptrdiff_t end) {
    gemm_levels::Panels* panels = gemm_levels::exact_panels;
    switch (gemm_cpu_level()) {
    case CpuLevel::Avx512:
        panels = gemm_levels::avx512_panels;
        break;
    case CpuLevel::Avx2:
        panels = gemm_levels::avx2_panels;
        break;
    case CpuLevel::Exact:
        if (detected_cpu_level() == CpuLevel::Exact) note_exact_path();
        break;
    }
    run_gemm(lhs, rhs, dst, dst_stride, gemm_levels::kPanel, begin, end, *panels);
}

void narrow_accumulator_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                             int fraction_bits, std::ptrdiff_t begin, std::ptrdiff_t end) {
    if (fraction_bits < 0 || fraction_bits > 23)
        throw std::invalid_argument("narrow_accumulator_gemm: fraction bits 0 to 23, not " +
                                    std::to_string(fraction_bits));
    const std::uint32_t keep_mask = ~((std::uint32_t(1) << (23 - fraction_bits)) - 1);
    // One panel over the whole depth: the narrow sum is never promoted.
    run_gemm(lhs, rhs, dst, dst_stride, std::max<std::ptrdiff_t>(lhs.cols, 1), begin, end,
             [keep_mask](const StridedMatrix& a, const StridedMatrix& b, gemm_kernel::Output out, std::ptrdiff_t panel,
                         float* packed) { narrow_panels(a, b, out, panel, packed, keep_mask); });
}

}  // namespace fp8lab::emu
