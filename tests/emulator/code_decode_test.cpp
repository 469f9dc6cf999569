// SPDX-License-Identifier: Apache-2.0
// The arithmetic decode against the value table, every code of every format it covers.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "emulator/formats/code_decode.hpp"
#include "emulator/formats/convert.hpp"

using namespace fp8lab::emu;

TEST_CASE("every code of every FP8, FP6 and FP4 format decodes to the table's bits, times every kind of scale") {
    int covered = 0;
    for (const Format& f : all_formats()) {
        std::vector<float> values(256, 0.0f);
        for (std::uint32_t c = 0; c < 256 && c < f.code_count(); ++c) values[c] = float(decode(f, c));
        const auto d = code_decoder(f, values.data());
        if (f.total_bits > 8 || f.encoding == Encoding::FiniteNanUnsignedZero || f.encoding == Encoding::ScaleE8M0) {
            CHECK_FALSE(d.has_value());
            continue;
        }
        REQUIRE(d.has_value());
        ++covered;
        CAPTURE(f.name);
        const std::size_t n = std::size_t(f.code_count());
        std::vector<std::uint8_t> codes(n);
        for (std::size_t c = 0; c < n; ++c) codes[c] = std::uint8_t(c);
        // One block per scale: 1, a power of two, an odd one, one that rounds, a tiny one.
        for (const float scale : {1.0f, 0.0078125f, 3.0f, 0.1f, 1e-30f}) {
            CAPTURE(scale);
            std::vector<float> out(n, 12345.0f);
            decode_row(*d, codes.data(), n, n, &scale, out.data());
            int mismatches = 0;
            for (std::size_t c = 0; c < n; ++c) {
                const float want = values[c] * scale;
                mismatches += std::bit_cast<std::uint32_t>(out[c]) != std::bit_cast<std::uint32_t>(want);
            }
            CHECK(mismatches == 0);
        }
        // Blocks of 7 with their own scales, across the row.
        const std::size_t blocks = (n + 6) / 7;
        std::vector<float> scales(blocks);
        for (std::size_t b = 0; b < blocks; ++b) scales[b] = std::ldexp(1.0f + float(b) / 8, int(b % 5) - 2);
        std::vector<float> out(n);
        decode_row(*d, codes.data(), n, 7, scales.data(), out.data());
        int mismatches = 0;
        for (std::size_t c = 0; c < n; ++c)
            mismatches +=
                std::bit_cast<std::uint32_t>(out[c]) != std::bit_cast<std::uint32_t>(values[c] * scales[c / 7]);
        CHECK(mismatches == 0);
    }
    CHECK(covered >= 6);  // E4M3, E4M3 IEEE-style, E5M2, E3M2, E2M3, E2M1
}
