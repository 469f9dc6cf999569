// SPDX-License-Identifier: Apache-2.0
// The ordered GEMMs' packing, tiles and panels, written once over an accumulation policy.
#pragma once

#include <cstddef>

#include "emulator/base/cpu_clones.hpp"
#include "emulator/gemm/ordered_gemm.hpp"

// Included by the files that compile one policy each (ordered_gemm.cpp for the narrow
// accumulator, ordered_gemm_<level>.cpp for the FMA one), each with its own compiler
// flags. Every function here is a template over the policy, whose types those files
// declare in unnamed namespaces, and calls nothing of the standard library: no two files
// share an instantiation, so no function compiled for AVX-512 can be the copy the linker
// keeps for a machine that lacks it (a std::min or a vector's resize instantiated in an
// AVX-512 file could be). The buffers and the choice of operand are ordered_gemm.cpp's.
//
// A policy P has: Vec (its vector of floats, P::kLanes of them), kRows and kVectors (a
// tile: kRows outputs rows by kVectors vectors of columns), and
//   zero(Vec&), load(Vec&, const float*), store(float*, const Vec&),
//   accumulate(Vec& sum, const Vec& b, float a): every lane's sum += b * a, rounded its way.
// Each output is one running sum over the whole contraction, term by term in order from
// +0, its lanes independent: the vector width, the tiles, the depth panels (a panel's sums
// continue from what the earlier panels stored) and the column chunks change no bit.

namespace fp8lab::emu::gemm_kernel {

// The widest policy's lanes: a buffer padded to a multiple of it fits every policy's strips.
inline constexpr std::ptrdiff_t kMaxLanes = 16;

// Where a computed block goes: its element (r, c) is data[r * row_step + c * col_step].
// The transposed product writes its rows down the result's columns.
struct Output {
    float* data;
    std::ptrdiff_t row_step, col_step;
};

// Columns [j0, j0 + Width) of rows [k0, k0 + depth) of m, as `depth` rows of Width floats;
// columns at or past m.cols are zeros (their sums are never stored).
template <class P, int Width>
FP8LAB_INLINE void pack_strip(const StridedMatrix& m, std::ptrdiff_t k0, std::ptrdiff_t depth, std::ptrdiff_t j0,
                              float* out) {
    const int valid = m.cols - j0 < Width ? int(m.cols - j0) : Width;
    const float* first = m.data + k0 * m.row_stride + j0 * m.col_stride;
    if (valid < Width)
        for (std::ptrdiff_t k = 0; k < depth; ++k)
            for (int c = valid; c < Width; ++c) out[k * Width + c] = 0.0f;
    if (m.col_stride == 1) {  // rows of m are contiguous: copy row pieces
        for (std::ptrdiff_t k = 0; k < depth; ++k)
            for (int c = 0; c < valid; ++c) out[k * Width + c] = first[k * m.row_stride + c];
    } else {  // read each column down its memory
        for (int c = 0; c < valid; ++c)
            for (std::ptrdiff_t k = 0; k < depth; ++k) out[k * Width + c] = first[k * m.row_stride + c * m.col_stride];
    }
}

// Rows x (Vectors vectors) outputs over one panel of `depth` terms of a packed strip (row
// k at strip + k * Vectors * kLanes): each output's sum starts at +0 (first panel) or where
// the earlier panels left it in `out`, takes the panel's terms in order, and is stored.
// Only the first `valid` columns are read and stored.
template <class P, int Rows, int Vectors>
FP8LAB_INLINE void tile(const P& p, const float* lhs, std::ptrdiff_t lhs_row_stride, std::ptrdiff_t lhs_col_stride,
                        const float* strip, std::ptrdiff_t depth, Output out, int valid, bool first_panel) {
    constexpr int width = Vectors * P::kLanes;
    const bool contiguous = out.col_step == 1 && valid == width;
    typename P::Vec acc[Rows][Vectors];
    for (int r = 0; r < Rows; ++r) {
        float* o = out.data + r * out.row_step;
        if (first_panel) {
            for (int v = 0; v < Vectors; ++v) p.zero(acc[r][v]);
        } else if (contiguous) {
            for (int v = 0; v < Vectors; ++v) p.load(acc[r][v], o + v * P::kLanes);
        } else {
            float sums[width] = {};
            for (int c = 0; c < valid; ++c) sums[c] = o[c * out.col_step];
            for (int v = 0; v < Vectors; ++v) p.load(acc[r][v], sums + v * P::kLanes);
        }
    }
    for (std::ptrdiff_t k = 0; k < depth; ++k) {
        typename P::Vec b[Vectors];
        for (int v = 0; v < Vectors; ++v) p.load(b[v], strip + (k * Vectors + v) * P::kLanes);
        for (int r = 0; r < Rows; ++r) {
            const float a = lhs[r * lhs_row_stride + k * lhs_col_stride];
            for (int v = 0; v < Vectors; ++v) p.accumulate(acc[r][v], b[v], a);
        }
    }
    for (int r = 0; r < Rows; ++r) {
        float* o = out.data + r * out.row_step;
        if (contiguous) {
            for (int v = 0; v < Vectors; ++v) p.store(o + v * P::kLanes, acc[r][v]);
            continue;
        }
        float sums[width];
        for (int v = 0; v < Vectors; ++v) p.store(sums + v * P::kLanes, acc[r][v]);
        for (int c = 0; c < valid; ++c) o[c * out.col_step] = sums[c];
    }
}

// Every row of one strip of the output over one panel: P::kRows rows at a time, then the rest.
template <class P, int Vectors>
FP8LAB_INLINE void strip_rows(const P& p, const StridedMatrix& lhs, std::ptrdiff_t k0, std::ptrdiff_t depth,
                              const float* strip, Output out, int valid, bool first_panel) {
    const float* a = lhs.data + k0 * lhs.col_stride;
    std::ptrdiff_t i = 0;
    for (; i + P::kRows <= lhs.rows; i += P::kRows)
        tile<P, P::kRows, Vectors>(p, a + i * lhs.row_stride, lhs.row_stride, lhs.col_stride, strip, depth,
                                   Output{out.data + i * out.row_step, out.row_step, out.col_step}, valid, first_panel);
    for (; i < lhs.rows; ++i)
        tile<P, 1, Vectors>(p, a + i * lhs.row_stride, lhs.row_stride, lhs.col_stride, strip, depth,
                            Output{out.data + i * out.row_step, out.row_step, out.col_step}, valid, first_panel);
}

// The packed panel's strips: kVectors vectors wide, then one vector wide for the rest (the
// last zero-padded where the operand ends).
template <class P>
constexpr std::ptrdiff_t wide_columns(std::ptrdiff_t cols) {
    constexpr std::ptrdiff_t wide = P::kVectors * P::kLanes;
    return cols / wide * wide;
}
template <class P>
constexpr std::ptrdiff_t padded_columns(std::ptrdiff_t cols) {
    return (cols + P::kLanes - 1) / P::kLanes * P::kLanes;
}

// Rows of lhs against every packed strip of the panel of a `cols`-column rhs.
template <class P>
FP8LAB_INLINE void panel_strips(const P& p, const StridedMatrix& rows, std::ptrdiff_t k0, std::ptrdiff_t depth,
                                const float* packed, Output out, std::ptrdiff_t cols, bool first_panel) {
    constexpr int wide = P::kVectors * P::kLanes;
    const std::ptrdiff_t wide_end = wide_columns<P>(cols);
    for (std::ptrdiff_t j = 0; j < wide_end; j += wide)
        strip_rows<P, P::kVectors>(p, rows, k0, depth, packed + j * depth,
                                   Output{out.data + j * out.col_step, out.row_step, out.col_step}, wide, first_panel);
    for (std::ptrdiff_t j = wide_end; j < cols; j += P::kLanes)
        strip_rows<P, 1>(p, rows, k0, depth, packed + j * depth,
                         Output{out.data + j * out.col_step, out.row_step, out.col_step},
                         cols - j < P::kLanes ? int(cols - j) : P::kLanes, first_panel);
}

// out = lhs * rhs, rhs packed a panel of `panel` terms at a time into strips; lhs is read
// where it lies. Packed even where rhs's rows are contiguous: rows a multiple of 4 KiB
// apart (3072 floats) fall in the same L1 sets, and a strip read in place thrashes them.
// `packed` holds panel * padded_columns<P>(rhs.cols) floats (kMaxLanes covers every policy).
template <class P>
FP8LAB_INLINE void gemm_panels(const P& p, const StridedMatrix& lhs, const StridedMatrix& rhs, Output out,
                               std::ptrdiff_t panel, float* packed) {
    constexpr int wide = P::kVectors * P::kLanes;
    const std::ptrdiff_t cols = rhs.cols, wide_end = wide_columns<P>(cols), padded = padded_columns<P>(cols);
    for (std::ptrdiff_t k0 = 0; k0 < lhs.cols; k0 += panel) {
        const std::ptrdiff_t depth = lhs.cols - k0 < panel ? lhs.cols - k0 : panel;
        const bool first_panel = k0 == 0;
        for (std::ptrdiff_t j = 0; j < wide_end; j += wide) pack_strip<P, wide>(rhs, k0, depth, j, packed + j * depth);
        for (std::ptrdiff_t j = wide_end; j < cols; j += P::kLanes)
            pack_strip<P, P::kLanes>(rhs, k0, depth, j, packed + j * depth);
        // A panel that fits the L1 cache stays there while the rows stream past once; a
        // larger one is taken a strip at a time, each strip held in L1 over all rows.
        if (depth * padded * std::ptrdiff_t(sizeof(float)) <= 24 * 1024) {
            for (std::ptrdiff_t i = 0; i < lhs.rows; i += P::kRows) {
                const StridedMatrix rows{lhs.data + i * lhs.row_stride,
                                         lhs.rows - i < P::kRows ? lhs.rows - i : P::kRows, lhs.cols, lhs.row_stride,
                                         lhs.col_stride};
                panel_strips(p, rows, k0, depth, packed,
                             Output{out.data + i * out.row_step, out.row_step, out.col_step}, cols, first_panel);
            }
        } else {
            panel_strips(p, lhs, k0, depth, packed, out, cols, first_panel);
        }
    }
}

}  // namespace fp8lab::emu::gemm_kernel
