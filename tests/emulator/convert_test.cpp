// SPDX-License-Identifier: Apache-2.0
// The scalar encoder: traps of docs/numerics.md §3, round trips, and the midpoint oracle.
#include <doctest/doctest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>
#include <random>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/base/stochastic_bits.hpp"
#include "tests/emulator/midpoint_oracle.hpp"

using namespace fp8lab::emu;

namespace {

ConvertOptions with(RoundingMode m, Saturation s = Saturation::Finite) {
    ConvertOptions o;
    o.rounding = m;
    o.saturation = s;
    return o;
}

const ConvertOptions kNone = with(RoundingMode::NearestEven, Saturation::None);

}  // namespace

TEST_CASE("E4M3 saturation is decided after rounding") {
    CHECK(encode(e4m3(), 464.0) == 0x7E);             // midpoint, ties to even 448
    CHECK(encode(e4m3(), 464.0, kNone) == 0x7E);      // and it is not an overflow
    CHECK(encode(e4m3(), 464.0001, kNone) == 0x7F);   // past the midpoint: NaN
    CHECK(encode(e4m3(), -464.0001, kNone) == 0xFF);  // the sign is kept
    CHECK(encode(e4m3(), 464.0001) == 0x7E);          // saturated to 448
    CHECK(encode(e4m3(), 1e30) == 0x7E);
    CHECK(encode(e5m2(), 61440.0, kNone) == 0x7C);  // E5M2 overflows to Inf
    CHECK(encode(e5m2(), 61439.99, kNone) == 0x7B);
}

TEST_CASE("float64 inputs are rounded once") {
    // Through float32 first, -431.99999999999994 becomes -432, a tie that goes to -448.
    CHECK(encode(e4m3(), -431.99999999999994) == 0xFD);  // -416
    CHECK(decode(e4m3(), 0xFD) == -416.0);
    CHECK(encode(e4m3(), static_cast<float>(-431.99999999999994)) == 0xFE);
}

TEST_CASE("values just below powers of two round by their bits, not by log2") {
    for (int k = -5; k <= 8; ++k) {  // binades whose lower neighbour is normal
        CAPTURE(k);
        const float below = std::nextafter(std::ldexp(1.0f, k), 0.0f);
        CHECK(decode(e4m3(), encode(e4m3(), below)) == std::ldexp(1.0, k));  // rounds up
        CHECK(decode(e4m3(), encode(e4m3(), below, with(RoundingMode::TowardZero))) == std::ldexp(1.875, k - 1));
        CHECK(encode(e8m0(), below, with(RoundingMode::TowardZero)) == unsigned(126 + k));
        CHECK(encode(e8m0(), below, with(RoundingMode::Up)) == unsigned(127 + k));
    }
}

TEST_CASE("NaN and Inf under both saturation modes") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const Format* f : {&e4m3(), &e5m2(), &e3m2(), &e2m3(), &e2m1(), &bf16(), &fp16()}) {
        CAPTURE(f->name);
        // CUDA: a float32 NaN gives +NaN (+max); a float64 NaN keeps its sign in FP8, and
        // E5M2 takes the payload bit below the quiet bit (0 in the default NaN: 0x7E).
        CHECK(encode(*f, float(nan)) == f->nan_code);
        CHECK(encode(*f, -float(nan)) == f->nan_code);
        const bool fp8 = f == &e4m3() || f == &e5m2();
        const std::uint32_t float64_nan = f == &e5m2() ? 0x7Eu : f->nan_code;
        CHECK(encode(*f, nan) == float64_nan);
        CHECK(encode(*f, -nan) == (fp8 ? f->sign_mask() | float64_nan : f->nan_code));
        CHECK(encode(*f, inf) == f->max_magnitude_code);
        CHECK(encode(*f, -inf) == (f->sign_mask() | f->max_magnitude_code));
        const std::uint32_t expected_inf = f->has_inf ? f->inf_code : f->has_nan ? f->nan_code : f->max_magnitude_code;
        CHECK(encode(*f, inf, kNone) == expected_inf);
        CHECK(encode(*f, -inf, kNone) == (f->sign_mask() | expected_inf));
        // An infinite input is not an overflow: toward zero keeps it infinite.
        CHECK(encode(*f, inf, with(RoundingMode::TowardZero, Saturation::None)) == expected_inf);
    }
    CHECK(encode(e8m0(), nan) == 0xFF);
    CHECK(encode(e8m0(), inf) == 0xFE);
    CHECK(encode(e8m0(), inf, kNone) == 0xFF);
}

TEST_CASE("overflow under directed rounding follows IEEE 754 section 7.4") {
    const auto none = [](RoundingMode m) { return with(m, Saturation::None); };
    CHECK(encode(e5m2(), 1e6, none(RoundingMode::TowardZero)) == 0x7B);
    CHECK(encode(e5m2(), 1e6, none(RoundingMode::Up)) == 0x7C);
    CHECK(encode(e5m2(), -1e6, none(RoundingMode::Up)) == 0xFB);
    CHECK(encode(e5m2(), 1e6, none(RoundingMode::Down)) == 0x7B);
    CHECK(encode(e5m2(), -1e6, none(RoundingMode::Down)) == 0xFC);
    CHECK(encode(e8m0(), 0x1p200, none(RoundingMode::TowardZero)) == 0xFE);  // as CUDA
}

TEST_CASE("E8M0 encodes |x| and clips below 2^-127") {
    CHECK(encode(e8m0(), 0.0) == 0x00);
    CHECK(encode(e8m0(), -8.0) == 127 + 3);
    CHECK(encode(e8m0(), 0x1p-140) == 0x00);
    CHECK(decode(e8m0(), 0) == 0x1p-127);
    CHECK(decode(e8m0(), 127) == 1.0);
    CHECK(std::isnan(decode(e8m0(), 0xFF)));
}

TEST_CASE("FNUZ: NaN is 0x80, no -0, no Inf, overflow without saturation is NaN") {
    for (const Format* f : {&e4m3fnuz(), &e5m2fnuz()}) {
        CAPTURE(f->name);
        for (RoundingMode m : all_rounding_modes()) {
            CAPTURE(rounding_mode_name(m));
            CHECK(encode(*f, -0.0, with(m, Saturation::None)) == 0x00);
            CHECK(encode(*f, -0.0f, with(m, Saturation::None)) == 0x00);
            CHECK(encode(*f, std::nan(""), with(m, Saturation::Finite)) == 0x80);
            CHECK(encode(*f, -std::nanf(""), with(m, Saturation::None)) == 0x80);
            CHECK(encode(*f, -INFINITY, with(m, Saturation::None)) == 0x80);
            CHECK(encode(*f, -INFINITY, with(m, Saturation::Finite)) == 0xFF);
            CHECK(encode(*f, f->max_finite * 4, with(m, Saturation::Finite)) == 0x7F);
        }
        CHECK(std::isnan(decode(*f, 0x80)));
        CHECK(decode(*f, 0x00) == 0.0);
        CHECK_FALSE(std::signbit(decode(*f, 0x00)));
        // A negative value too small to keep rounds to +0, never to the NaN code.
        CHECK(encode(*f, -f->min_subnormal / 4) == 0x00);
        CHECK(encode(*f, -f->min_subnormal / 4, with(RoundingMode::Down, Saturation::Finite)) == 0x81);
        CHECK(encode(*f, f->max_finite * 4, with(RoundingMode::NearestEven, Saturation::None)) == 0x80);
    }
    CHECK(decode(e4m3fnuz(), 0x7F) == 240);
    CHECK(decode(e4m3fnuz(), 0xFF) == -240);
    CHECK(decode(e4m3fnuz(), 0x01) == 0x1p-10);
    CHECK(decode(e5m2fnuz(), 0x7F) == 57344);
    CHECK(decode(e5m2fnuz(), 0x01) == 0x1p-17);
    CHECK(encode(e4m3fnuz(), 244.0) == 0x7F);  // 240's next neighbour would be 256: the midpoint 248
    CHECK(encode(e4m3fnuz(), 248.0, with(RoundingMode::NearestEven, Saturation::None)) == 0x80);
}

TEST_CASE("every code of every format round-trips") {
    for (const Format& f : all_formats()) {
        if (f.total_bits > 16) continue;
        CAPTURE(f.name);
        for (std::uint32_t c = 0; c < f.code_count(); ++c) {
            const double v = decode(f, c);
            if (std::isnan(v)) {
                CHECK(f.is_nan_code(c));
                continue;
            }
            for (RoundingMode m : all_rounding_modes()) {
                CAPTURE(rounding_mode_name(m));
                const auto none = with(m, Saturation::None);
                CHECK(encode(f, v, none) == c);
                CHECK(encode(f, static_cast<float>(v), none) == c);
            }
        }
    }
}

TEST_CASE("every mode of every format agrees with the enumerate-and-midpoint oracle") {
    std::mt19937_64 rng(7);
    for (const Format& f : all_formats()) {
        if (f.total_bits > 16) continue;
        CAPTURE(f.name);
        const fp8lab::test::MidpointOracle oracle(f);
        // Grid values and midpoints, 0-3 doubles/floats either side, both signs.
        std::vector<double> inputs;
        for (double v : oracle.values_and_midpoints()) {
            for (double s : {1.0, -1.0}) {
                double up = v * s, down = v * s;
                float fup = float(v * s), fdown = float(v * s);
                for (int k = 0; k < 4; ++k) {
                    inputs.insert(inputs.end(), {up, down, double(fup), double(fdown)});
                    up = std::nextafter(up, INFINITY);
                    down = std::nextafter(down, -INFINITY);
                    fup = std::nextafter(fup, INFINITY);
                    fdown = std::nextafter(fdown, -INFINITY);
                }
            }
        }
        // Random doubles over the format's range and a little past it.
        std::uniform_int_distribution<int> exponent(f.min_exponent - f.mantissa_bits - 4, f.max_exponent + 2);
        for (int i = 0; i < 20000; ++i) {
            const double m = 1.0 + double(rng() >> 11) * 0x1p-53;
            inputs.push_back(std::ldexp(rng() & 1 ? -m : m, exponent(rng)));
        }
        int mismatches = 0;
        for (RoundingMode mode : all_rounding_modes()) {
            for (Saturation sat : {Saturation::Finite, Saturation::None}) {
                ConvertOptions o = with(mode, sat);
                o.seed = 99;
                o.random_bits = mode == RoundingMode::Stochastic ? 12 : 32;
                for (std::size_t i = 0; i < inputs.size(); ++i) {
                    const std::uint32_t random = stochastic_bits(o.seed, i, o.random_bits);
                    const std::uint32_t want = oracle.encode(inputs[i], o, random);
                    const std::uint32_t got = encode(f, inputs[i], o, i);
                    if (want != got && ++mismatches <= 5) {
                        CAPTURE(rounding_mode_name(mode));
                        CAPTURE(saturation_name(sat));
                        CAPTURE(inputs[i]);
                        CHECK(got == want);
                    }
                }
            }
        }
        CHECK(mismatches == 0);
    }
}

TEST_CASE("FP32 from float64 matches the hardware conversion in each direction") {
#ifdef __clang__
    // clang keeps a conversion in the rounding mode set around it only when told that the
    // code reads the floating-point environment (GCC does without, and has no such pragma).
#pragma STDC FENV_ACCESS ON
#endif
    std::mt19937_64 rng(11);
    const struct {
        RoundingMode mode;
        int fe;
    } modes[] = {{RoundingMode::NearestEven, FE_TONEAREST},
                 {RoundingMode::TowardZero, FE_TOWARDZERO},
                 {RoundingMode::Up, FE_UPWARD},
                 {RoundingMode::Down, FE_DOWNWARD}};
    for (const auto& m : modes) {
        CAPTURE(rounding_mode_name(m.mode));
        int mismatches = 0;
        for (int i = 0; i < 200000; ++i) {
            const double x = std::bit_cast<double>(rng());
            if (!std::isfinite(x) || std::fabs(x) > 0x1p127) continue;  // stay in range
            std::fesetround(m.fe);
            volatile double vx = x;
            const float hw = static_cast<float>(vx);
            std::fesetround(FE_TONEAREST);
            mismatches += encode(fp32(), x, with(m.mode)) != std::bit_cast<std::uint32_t>(hw);
        }
        CHECK(mismatches == 0);
    }
}

TEST_CASE("stochastic rounding is exactly unbiased over all 2^n random values") {
    std::mt19937 rng(3);
    for (const Format* f : {&e4m3(), &e5m2(), &e2m1(), &e3m2(), &bf16()}) {
        CAPTURE(f->name);
        for (int n : {1, 4, 8, 12}) {
            const auto k = detail::make_float32_kernel_constants(*f, Saturation::Finite);
            for (int trial = 0; trial < 40; ++trial) {
                // x = lo + j/2^n of a quantum: the discarded fraction has exactly n bits.
                const std::uint32_t code = rng() % f->max_magnitude_code;
                const double lo = decode(*f, code), hi = decode(*f, code + 1);
                const double x = lo + (hi - lo) * double(rng() % (1u << n)) / double(1u << n);
                const float xf = static_cast<float>(x);
                REQUIRE(double(xf) == x);
                double sum = 0;
                for (std::uint32_t r = 0; r < (1u << n); ++r)
                    sum += decode(*f, detail::encode_float32_bits<RoundingMode::Stochastic>(
                                          std::bit_cast<std::uint32_t>(xf), k, r, n));
                CHECK(sum == std::ldexp(x, n));
            }
        }
    }
}

TEST_CASE("stochastic rounding: float64 path uses the same bits as the float32 kernel") {
    ConvertOptions o = with(RoundingMode::Stochastic);
    o.seed = 1234;
    o.random_bits = 32;
    const auto k = detail::make_float32_kernel_constants(e4m3(), Saturation::Finite);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-500.0f, 500.0f);
    for (std::uint64_t i = 0; i < 100000; ++i) {
        const float x = dist(rng) * (i % 3 == 0 ? 1e-3f : 1.0f);
        const std::uint32_t r = stochastic_bits(o.seed, i, o.random_bits);
        REQUIRE(encode(e4m3(), double(x), o, i) == detail::encode_float32_bits<RoundingMode::Stochastic>(
                                                       std::bit_cast<std::uint32_t>(x), k, r, o.random_bits));
    }
}
