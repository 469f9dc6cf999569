// SPDX-License-Identifier: Apache-2.0
// The CPU trainers' transpose, finiteness check and BF16 store.
#include "emulator/trainer_matrix.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "emulator/bulk.hpp"

namespace fp8lab::emu {

void transpose_into(const Matrix& src, Matrix& dst) {
    const std::size_t rows = std::size_t(src.rows()), cols = std::size_t(src.cols());
    dst.resize(src.cols(), src.rows());
    constexpr std::size_t kTile = 32;
    const float* in = src.data();
    float* out = dst.data();
    parallel_for_chunks(rows, 4 * kTile, [&](std::size_t, std::size_t r0, std::size_t r1) {
        for (std::size_t c0 = 0; c0 < cols; c0 += kTile)
            for (std::size_t rt = r0; rt < r1; rt += kTile)
                for (std::size_t r = rt; r < std::min(r1, rt + kTile); ++r)
                    for (std::size_t c = c0; c < std::min(cols, c0 + kTile); ++c) out[c * rows + r] = in[r * cols + c];
    });
}

bool all_finite(const float* x, std::size_t n) {
    std::uint32_t special = 0;
    for (std::size_t i = 0; i < n; ++i)
        special |= std::uint32_t((std::bit_cast<std::uint32_t>(x[i]) & 0x7F800000u) == 0x7F800000u);
    return special == 0;
}

void store_in_bf16(Matrix& m) {
    std::span<float> v(m.data(), std::size_t(m.size()));
    round_span(bf16(), v, v);
}

}  // namespace fp8lab::emu
