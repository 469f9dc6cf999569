// SPDX-License-Identifier: Apache-2.0
// The bulk span functions against the scalar encoder, and their determinism.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/parallel.hpp"

using namespace fp8lab::emu;

namespace {

// Values across every range a kernel distinguishes, with specials mixed in.
std::vector<float> awkward_values(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
        switch (rng() % 8) {
        case 0:
            x[i] = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
            break;  // any bits
        case 1:
            x[i] = std::ldexp(float(rng() % 1000) - 500.0f, -int(rng() % 40));
            break;
        case 2:
            x[i] = std::numeric_limits<float>::quiet_NaN();
            break;
        case 3:
            x[i] = (rng() & 1 ? 1 : -1) * std::numeric_limits<float>::infinity();
            break;
        case 4:
            x[i] = 0.0f * float(int(rng() & 1) * 2 - 1);
            break;
        default:
            x[i] = std::ldexp(std::uniform_real_distribution<float>(-2, 2)(rng), int(rng() % 60) - 30);
        }
    }
    return x;
}

}  // namespace

TEST_CASE("quantize_span equals the scalar encoder for every mode, format and scale") {
    const std::vector<float> x = awkward_values(200000, 1);
    for (const Format& f : all_formats()) {
        if (f.total_bits > 8) continue;
        CAPTURE(f.name);
        for (RoundingMode m : all_rounding_modes()) {
            for (Saturation s : {Saturation::Finite, Saturation::None}) {
                CAPTURE(rounding_mode_name(m));
                CAPTURE(saturation_name(s));
                ConvertOptions o{m, s, 42, m == RoundingMode::Stochastic ? 9 : 32};
                const float scale = 3.5f;
                std::vector<std::uint8_t> codes(x.size());
                quantize_span(f, x, scale, codes, o, 1000);
                std::size_t mismatches = 0;
                for (std::size_t i = 0; i < x.size(); ++i)
                    mismatches += codes[i] != encode(f, x[i] * scale, o, 1000 + i);
                CHECK(mismatches == 0);
            }
        }
    }
}

// E8M0's bulk path rounds on float32 bits: every exponent field with the mantissas where a
// mode's decision changes (0, 1, half - 1, half, half + 1, all ones, and the subnormal
// binade's bit 22 with its own half), both signs, every deterministic mode and saturation.
TEST_CASE("E8M0's bulk path equals the scalar encoder at every exponent and rounding boundary") {
    std::vector<float> x;
    const std::uint32_t mantissas[] = {0,        1,        0x1FFFFF, 0x200000, 0x200001, 0x3FFFFF, 0x3FFFFE,
                                       0x3FFFFF, 0x400000, 0x400001, 0x5FFFFF, 0x600000, 0x600001, 0x7FFFFF};
    for (std::uint32_t field = 0; field < 256; ++field)
        for (std::uint32_t m : mantissas)
            for (std::uint32_t sign : {0u, 0x80000000u}) x.push_back(std::bit_cast<float>(sign | field << 23 | m));
    for (RoundingMode m : all_rounding_modes()) {
        if (m == RoundingMode::Stochastic) continue;  // takes the reference encoder
        for (Saturation s : {Saturation::Finite, Saturation::None}) {
            CAPTURE(rounding_mode_name(m));
            CAPTURE(saturation_name(s));
            const ConvertOptions o{m, s};
            std::vector<std::uint8_t> codes(x.size());
            quantize_span(e8m0(), x, 1.0f, codes, o);
            for (std::size_t i = 0; i < x.size(); ++i) {
                CAPTURE(std::bit_cast<std::uint32_t>(x[i]));
                REQUIRE(codes[i] == encode(e8m0(), x[i], o));
            }
        }
    }
}

TEST_CASE("round_span equals decode(encode()) for 16-bit formats too") {
    const std::vector<float> x = awkward_values(100000, 2);
    for (const Format* f : {&bf16(), &fp16(), &e4m3(), &e2m1(), &e8m0(), &fp32()}) {
        CAPTURE(f->name);
        for (RoundingMode m : all_rounding_modes()) {
            ConvertOptions o{m, Saturation::Finite, 7, 16};
            std::vector<float> out(x.size());
            round_span(*f, x, out, o);
            std::size_t mismatches = 0;
            for (std::size_t i = 0; i < x.size(); ++i) {
                const float want = static_cast<float>(round_to_format(*f, x[i], o, i));
                mismatches += std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(want) &&
                              !(std::isnan(out[i]) && std::isnan(want));
            }
            CHECK(mismatches == 0);
        }
    }
}

TEST_CASE("results do not depend on the number of threads") {
    const std::vector<float> x = awkward_values(1 << 20, 3);
    const ConvertOptions o{RoundingMode::Stochastic, Saturation::Finite, 5, 32};
    std::vector<std::uint8_t> one(x.size()), two(x.size());
    set_max_threads(1);
    quantize_span(e4m3(), x, 1.0f, one, o);
    const RangeCounts c1 = count_range(e4m3(), x, 1.0f, o);
    set_max_threads(2);
    quantize_span(e4m3(), x, 1.0f, two, o);
    const RangeCounts c2 = count_range(e4m3(), x, 1.0f, o);
    set_max_threads(0);
    CHECK(one == two);
    CHECK(c1.overflowed == c2.overflowed);
    CHECK(c1.flushed_to_zero == c2.flushed_to_zero);
    // Pieces quantised with their global index give the same bits as the whole.
    std::vector<std::uint8_t> pieces(x.size());
    const std::size_t half = x.size() / 3;
    quantize_span(e4m3(), std::span(x).first(half), 1.0f, std::span(pieces).first(half), o, 0);
    quantize_span(e4m3(), std::span(x).subspan(half), 1.0f, std::span(pieces).subspan(half), o, half);
    CHECK(pieces == one);
}

TEST_CASE("dequantize multiplies the code's value by scale_inv") {
    std::vector<std::uint8_t> codes = {0x7E, 0xFE, 0x01, 0x00, 0x38};
    std::vector<float> out(codes.size());
    dequantize_span(e4m3(), codes, 0.5f, out);
    CHECK(out == std::vector<float>{224.0f, -224.0f, 0x1p-10f, 0.0f, 0.5f});
    CHECK_THROWS_AS(dequantize_span(bf16(), codes, 1.0f, out), std::invalid_argument);
}

TEST_CASE("amax skips NaN and propagates Inf") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x = {1.0f, -3.0f, nan, 2.0f};
    CHECK(amax(x) == 3.0f);
    x.push_back(-std::numeric_limits<float>::infinity());
    CHECK(std::isinf(amax(x)));
    std::vector<float> big(1 << 20, 1.0f);
    big[777777] = -9.0f;
    big[5] = nan;
    CHECK(amax(big) == 9.0f);
    CHECK(amax(std::vector<float>{}) == 0.0f);
}

TEST_CASE("count_range counts overflow after rounding, flushes and subnormals") {
    // E4M3: 464 rounds to 448 (no overflow), 465 overflows; 2^-11 flushes; 2^-8 is subnormal.
    const std::vector<float> x = {464.0f,
                                  465.0f,
                                  -1000.0f,
                                  0x1p-11f,
                                  0x1p-8f,
                                  0.0f,
                                  1.0f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity()};
    const RangeCounts c = count_range(e4m3(), x, 1.0f);
    CHECK(c.elements == 9);
    CHECK(c.overflowed == 2);
    CHECK(c.flushed_to_zero == 1);
    CHECK(c.subnormal == 1);
    CHECK(c.nan_inputs == 1);
    CHECK(c.inf_inputs == 1);
    // Scaled by 1/4 everything fits; 2^-10 is the tie between 0 and 2^-9: it flushes.
    const RangeCounts scaled = count_range(e4m3(), x, 0.25f);
    CHECK(scaled.overflowed == 0);
    CHECK(scaled.subnormal == 0);
    CHECK(scaled.flushed_to_zero == 2);
}

TEST_CASE("error statistics") {
    const std::vector<float> ref = {1.0f, 2.0f, -4.0f, 0.0f};
    const std::vector<float> approx = {1.0f, 2.5f, -4.0f, 0.25f};
    const ErrorStats s = error_stats(ref, approx);
    CHECK(s.mean_squared_error == doctest::Approx((0.25 + 0.0625) / 4));
    CHECK(s.max_abs_error == 0.5);
    CHECK(s.max_rel_error == 0.25);
    CHECK(s.rel_frobenius_error == doctest::Approx(std::sqrt(0.3125 / 21.0)));
}

TEST_CASE("parallel loops: every chunk once, nested loops, an exception reaches the caller, the pool reused") {
    const int threads_before = max_threads();
    for (const int threads : {1, 2, 3, 8}) {
        set_max_threads(threads);
        CAPTURE(threads);
        for (int round = 0; round < 50; ++round) {  // the same workers, loop after loop
            std::vector<std::atomic<int>> seen(37);
            parallel_for_chunks(37 * 5 - 2, 5, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
                CHECK(begin == chunk * 5);
                CHECK(end == std::min<std::size_t>(37 * 5 - 2, begin + 5));
                // A loop inside a loop runs (serially) rather than waiting for the busy pool.
                std::atomic<int> inner{0};
                parallel_for_chunks(4, 1, [&](std::size_t, std::size_t, std::size_t) { ++inner; });
                CHECK(inner == 4);
                ++seen[chunk];
            });
            for (const std::atomic<int>& s : seen) CHECK(s == 1);
        }
        CHECK_THROWS_WITH_AS(parallel_for_chunks(64, 1,
                                                 [](std::size_t chunk, std::size_t, std::size_t) {
                                                     if (chunk == 40) throw std::runtime_error("chunk 40");
                                                 }),
                             "chunk 40", std::runtime_error);
        std::atomic<int> after{0};  // and the pool still runs loops afterwards
        parallel_for_chunks(16, 1, [&](std::size_t, std::size_t, std::size_t) { ++after; });
        CHECK(after == 16);
        // Loops far enough apart that the waiting workers stop polling and sleep, and loops
        // from two threads at once (they take turns).
        for (int round = 0; round < 3; ++round) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            std::atomic<int> woken{0};
            parallel_for_chunks(16, 1, [&](std::size_t, std::size_t, std::size_t) { ++woken; });
            CHECK(woken == 16);
        }
        std::atomic<int> both{0};
        std::thread other([&] {
            for (int round = 0; round < 200; ++round)
                parallel_for_chunks(8, 1, [&](std::size_t, std::size_t, std::size_t) { ++both; });
        });
        for (int round = 0; round < 200; ++round)
            parallel_for_chunks(8, 1, [&](std::size_t, std::size_t, std::size_t) { ++both; });
        other.join();
        CHECK(both == 2 * 200 * 8);
    }
    set_max_threads(threads_before);
}
