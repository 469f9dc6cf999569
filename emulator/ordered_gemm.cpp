// SPDX-License-Identifier: Apache-2.0
// Float32 GEMM in Eigen's panel order, 8 outputs to a vector, cloned per CPU level.
#include "emulator/ordered_gemm.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/cpu_clones.hpp"

namespace fp8lab::emu {
namespace {

// Eigen's float packets in this build: SSE without FMA is the order this file reproduces.
#if defined(EIGEN_VECTORIZE_SSE2) && !defined(EIGEN_VECTORIZE_AVX) && !defined(EIGEN_VECTORIZE_FMA)
constexpr bool kEigenPacketsAreSse = true;
#else
constexpr bool kEigenPacketsAreSse = false;
#endif
// Rows of Eigen's 2-packet micro-kernel (rows of its transposed problem: our columns).
constexpr std::ptrdiff_t kEigenKernelRows = 2 * Eigen::internal::gebp_traits<float, float>::LhsProgress;

// Eight floats; built from +, * and loads only, so each clone (AVX-512, AVX2, SSE) rounds
// every lane as one scalar mul then one scalar add would (this file is compiled with
// -ffp-contract=off: no FMA).
using Floats8 = float __attribute__((vector_size(32)));
// Passed by reference only: a 32-byte vector by value has another ABI with and without
// AVX, which GCC points out (-Wpsabi) even where every call is inlined.
FP8LAB_INLINE void load8(Floats8& v, const float* p) { std::memcpy(&v, p, sizeof v); }
FP8LAB_INLINE void store8(float* p, const Floats8& v) { std::memcpy(p, &v, sizeof v); }

// The narrow accumulator: every lane's float32 bits with the fraction bits below the kept
// ones cleared (truncation toward zero). Bits 0 keeps every bit: the float32 accumulator.
using Bits8 = std::uint32_t __attribute__((vector_size(32)));
FP8LAB_INLINE void truncate8(Floats8& v, std::uint32_t keep_mask) {
    Bits8 bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= keep_mask;
    std::memcpy(&v, &bits, sizeof v);
}

// Where the computed block goes: its element (r, c) is data[r * row_step + c * col_step].
// The transposed product writes its rows down the result's columns.
struct Output {
    float* data;
    std::ptrdiff_t row_step, col_step;
};

// Columns [j0, j0 + Vectors*8) of rows [k0, k0 + depth) of m, as `depth` rows of
// Vectors*8 floats; columns at or past m.cols are zeros (their sums are never stored).
template <int Vectors>
FP8LAB_INLINE void pack_strip(const StridedMatrix& m, std::ptrdiff_t k0, std::ptrdiff_t depth, std::ptrdiff_t j0,
                              float* out) {
    constexpr int width = 8 * Vectors;
    const int valid = int(std::min<std::ptrdiff_t>(width, m.cols - j0));
    const float* first = m.data + k0 * m.row_stride + j0 * m.col_stride;
    if (valid < width)
        for (std::ptrdiff_t k = 0; k < depth; ++k)
            for (int c = valid; c < width; ++c) out[k * width + c] = 0.0f;
    if (m.col_stride == 1) {  // rows of m are contiguous: copy row pieces
        for (std::ptrdiff_t k = 0; k < depth; ++k)
            for (int c = 0; c < valid; ++c) out[k * width + c] = first[k * m.row_stride + c];
    } else {  // read each column down its memory
        for (int c = 0; c < valid; ++c)
            for (std::ptrdiff_t k = 0; k < depth; ++k) out[k * width + c] = first[k * m.row_stride + c * m.col_stride];
    }
}

// Rows x (Vectors*8) outputs over one panel of `depth` terms of a packed strip (row k at
// strip + k * Vectors * 8): each output summed from +0 term by term, then stored (first
// panel) or added to what the earlier panels left. Only the first `valid` columns are
// stored. Narrow: every running sum truncated with `keep_mask` after each addition.
template <int Rows, int Vectors, bool Narrow>
FP8LAB_INLINE void tile(const float* lhs, std::ptrdiff_t lhs_row_stride, std::ptrdiff_t lhs_col_stride,
                        const float* strip, std::ptrdiff_t depth, Output out, int valid, bool first_panel,
                        std::uint32_t keep_mask) {
    Floats8 acc[Rows][Vectors] = {};
    for (std::ptrdiff_t k = 0; k < depth; ++k) {
        Floats8 b[Vectors];
        for (int v = 0; v < Vectors; ++v) load8(b[v], strip + (k * Vectors + v) * 8);
        for (int r = 0; r < Rows; ++r) {
            const float a = lhs[r * lhs_row_stride + k * lhs_col_stride];
            for (int v = 0; v < Vectors; ++v) {
                acc[r][v] = acc[r][v] + b[v] * a;
                if constexpr (Narrow) truncate8(acc[r][v], keep_mask);
            }
        }
    }
    if (out.col_step == 1 && valid == 8 * Vectors) {
        for (int r = 0; r < Rows; ++r)
            for (int v = 0; v < Vectors; ++v) {
                float* o = out.data + r * out.row_step + v * 8;
                Floats8 sum = acc[r][v];
                if (!first_panel) {
                    Floats8 earlier;
                    load8(earlier, o);
                    sum = earlier + acc[r][v];
                }
                store8(o, sum);
            }
        return;
    }
    for (int r = 0; r < Rows; ++r) {
        float sums[8 * Vectors];
        for (int v = 0; v < Vectors; ++v) store8(sums + v * 8, acc[r][v]);
        for (int c = 0; c < valid; ++c) {
            float& o = out.data[r * out.row_step + c * out.col_step];
            o = first_panel ? sums[c] : o + sums[c];
        }
    }
}

// Every row of one strip of the output over one panel: 4 rows at a time, then the rest.
template <int Vectors, bool Narrow>
FP8LAB_INLINE void strip_rows(const StridedMatrix& lhs, std::ptrdiff_t k0, std::ptrdiff_t depth, const float* strip,
                              Output out, int valid, bool first_panel, std::uint32_t keep_mask) {
    const float* a = lhs.data + k0 * lhs.col_stride;
    std::ptrdiff_t i = 0;
    for (; i + 4 <= lhs.rows; i += 4)
        tile<4, Vectors, Narrow>(a + i * lhs.row_stride, lhs.row_stride, lhs.col_stride, strip, depth,
                                 Output{out.data + i * out.row_step, out.row_step, out.col_step}, valid, first_panel,
                                 keep_mask);
    for (; i < lhs.rows; ++i)
        tile<1, Vectors, Narrow>(a + i * lhs.row_stride, lhs.row_stride, lhs.col_stride, strip, depth,
                                 Output{out.data + i * out.row_step, out.row_step, out.col_step}, valid, first_panel,
                                 keep_mask);
}

// Rows of lhs against every packed strip of the panel of a `cols`-column rhs.
template <bool Narrow>
FP8LAB_INLINE void panel_strips(const StridedMatrix& rows, std::ptrdiff_t k0, std::ptrdiff_t depth, const float* packed,
                                Output out, std::ptrdiff_t cols, bool first_panel, std::uint32_t keep_mask) {
    const std::ptrdiff_t wide = cols / 16 * 16;
    for (std::ptrdiff_t j = 0; j < wide; j += 16)
        strip_rows<2, Narrow>(rows, k0, depth, packed + j * depth,
                              Output{out.data + j * out.col_step, out.row_step, out.col_step}, 16, first_panel,
                              keep_mask);
    for (std::ptrdiff_t j = wide; j < cols; j += 8)
        strip_rows<1, Narrow>(rows, k0, depth, packed + j * depth,
                              Output{out.data + j * out.col_step, out.row_step, out.col_step},
                              int(std::min<std::ptrdiff_t>(8, cols - j)), first_panel, keep_mask);
}

// out = lhs * rhs in panel order, rhs packed a panel at a time into 16-wide strips (the
// last 8 wide, zero-padded where rhs ends); lhs is read where it lies. Packed even where
// rhs's rows are contiguous: rows a multiple of 4 KiB apart (3072 floats) fall in the
// same L1 sets, and a strip read in place thrashes them.
template <bool Narrow>
FP8LAB_INLINE void gemm_panels_body(const StridedMatrix& lhs, const StridedMatrix& rhs, Output out,
                                    std::ptrdiff_t panel, float* packed, std::uint32_t keep_mask) {
    const std::ptrdiff_t cols = rhs.cols, wide = cols / 16 * 16, padded = (cols + 7) / 8 * 8;
    for (std::ptrdiff_t k0 = 0; k0 < lhs.cols; k0 += panel) {
        const std::ptrdiff_t depth = std::min(panel, lhs.cols - k0);
        const bool first_panel = k0 == 0;
        for (std::ptrdiff_t j = 0; j < wide; j += 16) pack_strip<2>(rhs, k0, depth, j, packed + j * depth);
        for (std::ptrdiff_t j = wide; j < cols; j += 8) pack_strip<1>(rhs, k0, depth, j, packed + j * depth);
        // A panel that fits the L1 cache stays there while the rows stream past once; a
        // larger one is taken a strip at a time, each strip held in L1 over all rows.
        if (depth * padded * std::ptrdiff_t(sizeof(float)) <= 24 * 1024) {
            for (std::ptrdiff_t i = 0; i < lhs.rows; i += 4) {
                const StridedMatrix rows{lhs.data + i * lhs.row_stride, std::min<std::ptrdiff_t>(4, lhs.rows - i),
                                         lhs.cols, lhs.row_stride, lhs.col_stride};
                panel_strips<Narrow>(rows, k0, depth, packed,
                                     Output{out.data + i * out.row_step, out.row_step, out.col_step}, cols, first_panel,
                                     keep_mask);
            }
        } else {
            panel_strips<Narrow>(lhs, k0, depth, packed, out, cols, first_panel, keep_mask);
        }
    }
}

// One clone set per accumulator (GCC's target_clones does not take templates).
FP8LAB_CPU_CLONES void gemm_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, Output out, std::ptrdiff_t panel,
                                   float* packed) {
    gemm_panels_body<false>(lhs, rhs, out, panel, packed, ~0u);
}
FP8LAB_CPU_CLONES void gemm_panels_narrow(const StridedMatrix& lhs, const StridedMatrix& rhs, Output out,
                                          std::ptrdiff_t panel, float* packed, std::uint32_t keep_mask) {
    gemm_panels_body<true>(lhs, rhs, out, panel, packed, keep_mask);
}

StridedMatrix transposed(const StridedMatrix& m) { return {m.data, m.cols, m.rows, m.col_stride, m.row_stride}; }

}  // namespace

bool eigen_order_is_panel_order(std::ptrdiff_t rows, std::ptrdiff_t cols, std::ptrdiff_t depth) {
    return kEigenPacketsAreSse && rows > 1 && cols > 1 && depth > 0 &&
           rows + cols + depth >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD && cols % kEigenKernelRows == 0;
}

std::ptrdiff_t eigen_depth_panel(std::ptrdiff_t rows, std::ptrdiff_t cols, std::ptrdiff_t depth) {
    // As Eigen's gemm_blocking_space for a row-major result: its m is our columns.
    Eigen::Index k = depth, m = cols, n = rows;
    Eigen::internal::computeProductBlockingSizes<float, float>(k, m, n, Eigen::Index(1));
    return k;
}

namespace {

// dst[:, begin:end) = lhs * rhs[:, begin:end) by gemm_panels (keep_mask ~0) or
// gemm_panels_narrow, packing the smaller, cheaper operand.
void run_panels(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                std::ptrdiff_t panel, std::ptrdiff_t begin, std::ptrdiff_t end, std::uint32_t keep_mask) {
    // One packed panel per thread, kept: the trainer calls this with the same sizes every step.
    thread_local std::vector<float> packed;
    const StridedMatrix columns{rhs.data + begin * rhs.col_stride, rhs.rows, end - begin, rhs.row_stride,
                                rhs.col_stride};
    // The packed operand is copied whole for each panel, so it should be the smaller, and
    // one whose columns are cheap to gather. A rhs that is a transpose (the forward's W^T,
    // 9 MB at the notebook's size) against few lhs rows (the tokens) swaps roles: lhs^T is
    // packed and the transposed block computed, each element the same sum in the same order.
    // (A rhs with contiguous rows packs fast: there the swap measured slower.)
    const bool transpose = rhs.col_stride != 1 && lhs.rows < columns.cols;
    const StridedMatrix packed_operand = transpose ? transposed(lhs) : columns;
    packed.resize(std::size_t(std::min(panel, lhs.cols) * ((packed_operand.cols + 15) / 16 * 16)));
    const StridedMatrix a = transpose ? transposed(columns) : lhs, b = transpose ? transposed(lhs) : columns;
    const Output out = transpose ? Output{dst + begin, 1, dst_stride} : Output{dst + begin, dst_stride, 1};
    if (keep_mask == ~0u)
        gemm_panels(a, b, out, panel, packed.data());
    else
        gemm_panels_narrow(a, b, out, panel, packed.data(), keep_mask);
}

}  // namespace

void panel_ordered_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                        std::ptrdiff_t panel, std::ptrdiff_t begin, std::ptrdiff_t end) {
    run_panels(lhs, rhs, dst, dst_stride, panel, begin, end, ~0u);
}

void narrow_accumulator_gemm(const StridedMatrix& lhs, const StridedMatrix& rhs, float* dst, std::ptrdiff_t dst_stride,
                             int fraction_bits, std::ptrdiff_t begin, std::ptrdiff_t end) {
    if (fraction_bits < 0 || fraction_bits > 23)
        throw std::invalid_argument("narrow_accumulator_gemm: fraction bits 0 to 23, not " +
                                    std::to_string(fraction_bits));
    const std::uint32_t keep_mask = ~((std::uint32_t(1) << (23 - fraction_bits)) - 1);
    // One panel over the whole depth: the narrow sum is never promoted.
    run_panels(lhs, rhs, dst, dst_stride, std::max<std::ptrdiff_t>(lhs.cols, 1), begin, end, keep_mask);
}

}  // namespace fp8lab::emu
