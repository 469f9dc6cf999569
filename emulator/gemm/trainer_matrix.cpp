// SPDX-License-Identifier: Apache-2.0
// The CPU trainers' transpose, finiteness check and BF16 store.
#include "emulator/gemm/trainer_matrix.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

#include "emulator/formats/bulk.hpp"
#include "emulator/base/cpu_clones.hpp"

namespace fp8lab::emu {

void transpose_into(const Matrix& src, Matrix& dst) {
    const std::size_t rows = std::size_t(src.rows()), cols = std::size_t(src.cols());
    dst.resize(src.cols(), src.rows());
    // Tiles of 64 x 64, each moved in 8 x 8 pieces through a small buffer: the reads run
    // along the source's rows and the writes along the destination's, 8 floats at a time
    // (twice as fast here as element by element). A copy: any order gives the same bits.
    constexpr std::size_t kTile = 64, kPiece = 8;
    const float* in = src.data();
    float* out = dst.data();
    parallel_for_chunks(rows, kTile, [&](std::size_t, std::size_t r0, std::size_t r1) {
        for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
            const std::size_t c1 = std::min(cols, c0 + kTile);
            for (std::size_t r = r0; r < r1; r += kPiece)
                for (std::size_t c = c0; c < c1; c += kPiece) {
                    if (r + kPiece <= r1 && c + kPiece <= c1) {
                        float piece[kPiece][kPiece];
                        for (std::size_t i = 0; i < kPiece; ++i)
                            for (std::size_t j = 0; j < kPiece; ++j) piece[j][i] = in[(r + i) * cols + c + j];
                        for (std::size_t j = 0; j < kPiece; ++j)
                            std::memcpy(out + (c + j) * rows + r, piece[j], sizeof piece[j]);
                        continue;
                    }
                    for (std::size_t i = r; i < std::min(r1, r + kPiece); ++i)
                        for (std::size_t j = c; j < std::min(c1, c + kPiece); ++j) out[j * rows + i] = in[i * cols + j];
                }
        }
    });
}

namespace {

// Whether any of n floats has the all-ones exponent (Inf or NaN); vectorised per CPU level.
FP8LAB_INLINE bool any_special_body(const float* x, std::size_t n) {
    std::uint32_t special = 0;
    for (std::size_t i = 0; i < n; ++i)
        special |= std::uint32_t((std::bit_cast<std::uint32_t>(x[i]) & 0x7F800000u) == 0x7F800000u);
    return special != 0;
}
FP8LAB_CPU_DISPATCH(bool, any_special, (const float* x, std::size_t n), (x, n), any_special_body)

// The largest |x| as bits over n floats; at least 0x7F800000 when any is Inf or NaN.
FP8LAB_INLINE std::uint32_t largest_magnitude_bits_body(const float* x, std::size_t n) {
    std::uint32_t largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t a = std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu;
        largest = a > largest ? a : largest;
    }
    return largest;
}
FP8LAB_CPU_DISPATCH(std::uint32_t, largest_magnitude_bits, (const float* x, std::size_t n), (x, n),
                    largest_magnitude_bits_body)

}  // namespace

bool product_certainly_finite(const Matrix& a, const Matrix& b, Eigen::Index k) {
    constexpr Eigen::Index kMaxSum = 4096;
    if (k > kMaxSum) return false;
    const std::uint32_t la = largest_magnitude_bits(a.data(), std::size_t(a.size()));
    const std::uint32_t lb = largest_magnitude_bits(b.data(), std::size_t(b.size()));
    if (la >= 0x7F800000u || lb >= 0x7F800000u) return false;
    const double bound = double(k) * double(std::bit_cast<float>(la)) * double(std::bit_cast<float>(lb));
    return bound <= 0.25 * double(std::numeric_limits<float>::max());
}

bool all_finite(const float* x, std::size_t n) {
    // A weight gradient of millions of floats is read at memory speed: both cores read half.
    constexpr std::size_t kChunk = std::size_t(1) << 18;
    if (n < 2 * kChunk) return !any_special(x, n);
    std::atomic<bool> special{false};
    parallel_for_chunks(n, kChunk, [&](std::size_t, std::size_t begin, std::size_t end) {
        if (any_special(x + begin, end - begin)) special.store(true, std::memory_order_relaxed);
    });
    return !special.load();
}

void store_in_bf16(Matrix& m) {
    std::span<float> v(m.data(), std::size_t(m.size()));
    round_span(bf16(), v, v);
}

}  // namespace fp8lab::emu
