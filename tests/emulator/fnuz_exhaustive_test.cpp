// SPDX-License-Identifier: Apache-2.0
// All 2^32 float32 inputs into E4M3FNUZ and E5M2FNUZ, in every rounding mode and saturation.
// No CUDA function converts to FNUZ, so the sweep leans on two facts instead: below half
// the OCP format's maximum an FNUZ code's value is exactly half the OCP value of the same
// code (one more bias, same fields), so FNUZ(x) equals OCP(2x) there, and the OCP bulk
// path is itself checked against CUDA on all 2^32 inputs. From there to past the rounding
// boundary beyond max every input, and beyond it (where every input overflows alike) a
// sample with Inf and NaN, is checked against the enumerate-and-midpoint oracle and the
// float64 scalar encoder, whose arithmetic shares nothing with the bulk kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/stochastic_bits.hpp"
#include "tests/all_cores.hpp"
#include "tests/emulator/midpoint_oracle.hpp"

using namespace fp8lab::emu;
using fp8lab::test::on_all_cores;
using fp8lab::test::scratch;

namespace {

struct FnuzCase {
    const Format* fnuz;
    const Format* ocp;
};
constexpr std::uint32_t kStochasticSeed = 11;
constexpr int kRandomBits = 8;

ConvertOptions options(RoundingMode mode, Saturation saturation) {
    ConvertOptions o{mode, saturation};
    o.seed = kStochasticSeed;
    o.random_bits = kRandomBits;
    return o;
}

}  // namespace

TEST_CASE("FNUZ formats: all 2^32 float32 inputs below half the OCP maximum equal OCP(2x), every mode") {
    set_max_threads(1);  // the sweep parallelises itself
    for (const FnuzCase c : {FnuzCase{&e4m3fnuz(), &e4m3()}, FnuzCase{&e5m2fnuz(), &e5m2()}}) {
        const double shared = c.ocp->max_finite / 2;  // below it, FNUZ(x) = OCP(2x) code for code
        // The magnitudes below `shared` are the bit patterns below its own (float32's order
        // is its bits' order): the sweep runs over exactly those, both signs, and converts
        // nothing it does not check (the top, Inf and NaN: the next test case).
        // Input j: the positive magnitudes j < below, then the negative ones. 32-bit
        // arithmetic and selects, no branches: the loops that build and compare a block
        // vectorise (with branches they took more time than the conversions they check).
        const std::uint32_t below = std::bit_cast<std::uint32_t>(float(shared));
        const auto input = [below](std::uint32_t j) {
            return std::bit_cast<float>(j < below ? j : (j - below) | 0x80000000u);
        };
        for (RoundingMode mode : all_rounding_modes()) {
            // Saturation acts only past max, which this range never reaches.
            const ConvertOptions o = options(mode, Saturation::None);
            std::atomic<std::uint64_t> mismatches{0}, checked{0}, first_bad{~0ull};
            on_all_cores(2 * std::uint64_t(below), 1 << 20, [&](std::uint64_t b, std::uint64_t e) {
                thread_local std::vector<float> x_store;
                thread_local std::vector<std::uint8_t> codes_store, doubled_store;
                const std::uint32_t n = std::uint32_t(e - b);
                float* const x = scratch(x_store, n);
                std::uint8_t* const codes = scratch(codes_store, n);
                std::uint8_t* const doubled = scratch(doubled_store, n);
                const std::uint32_t first = std::uint32_t(b);  // 2 * below < 2^32
                for (std::uint32_t i = 0; i < n; ++i) x[i] = input(first + i);
                quantize_span(*c.fnuz, {x, n}, 1.0f, {codes, n}, o, b);
                quantize_span(*c.ocp, {x, n}, 2.0f, {doubled, n}, o, b);  // 2x is exact in this range
                // The same code, except that OCP's -0 is FNUZ's NaN: FNUZ gives +0.
                const auto want = [&](std::uint32_t i) {
                    return (doubled[i] & 0x7Fu) == 0 ? std::uint8_t(0) : doubled[i];
                };
                std::uint32_t bad = 0;  // 32 bits: the count vectorises with fewer widenings
                for (std::uint32_t i = 0; i < n; ++i) bad += codes[i] != want(i);
                if (bad) {  // rare: find the first for the report
                    std::uint32_t at = 0;
                    while (codes[at] == want(at)) ++at;
                    std::uint64_t none = ~0ull;
                    first_bad.compare_exchange_strong(none, std::bit_cast<std::uint32_t>(x[at]));
                }
                mismatches += bad;
                checked += n;
            });
            CAPTURE(c.fnuz->name);
            CAPTURE(rounding_mode_name(mode));
            CAPTURE(first_bad.load());
            CHECK(mismatches == 0);
            CHECK(checked == 2 * std::uint64_t(below));  // every float32 of magnitude below half the OCP maximum
        }
    }
    set_max_threads(0);
}

TEST_CASE("FNUZ formats: the top binades, overflow, Inf and NaN against the oracle and the float64 encoder") {
    set_max_threads(1);
    for (const FnuzCase c : {FnuzCase{&e4m3fnuz(), &e4m3()}, FnuzCase{&e5m2fnuz(), &e5m2()}}) {
        const fp8lab::test::MidpointOracle oracle(*c.fnuz);
        const std::uint32_t from = std::bit_cast<std::uint32_t>(float(c.ocp->max_finite / 2));
        // Twice the first grid value past max: beyond it every input overflows the same way.
        const float past =
            float(2 * (c.fnuz->max_finite + std::ldexp(1.0, c.fnuz->max_exponent - c.fnuz->mantissa_bits)));
        const std::uint32_t whole_to = std::bit_cast<std::uint32_t>(past);
        // Every input of [from, whole_to), then every 4099th bit pattern up to NaN's, both signs.
        std::vector<std::uint32_t> magnitudes;
        for (std::uint32_t u = from; u < whole_to; ++u) magnitudes.push_back(u);
        for (std::uint64_t u = whole_to; u <= 0x7FFFFFFFu; u += 4099) magnitudes.push_back(std::uint32_t(u));
        magnitudes.insert(magnitudes.end(), {0x7F800000u, 0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu});
        for (RoundingMode mode : all_rounding_modes()) {
            for (Saturation saturation : {Saturation::Finite, Saturation::None}) {
                const ConvertOptions o = options(mode, saturation);
                std::atomic<std::uint64_t> bulk_bad{0}, scalar_bad{0};
                on_all_cores(magnitudes.size(), 1 << 18, [&](std::uint64_t b, std::uint64_t e) {
                    std::vector<float> x;
                    for (std::uint64_t i = b; i < e; ++i)
                        for (std::uint32_t sign : {0u, 0x80000000u})
                            x.push_back(std::bit_cast<float>(magnitudes[i] | sign));
                    std::vector<std::uint8_t> codes(x.size());
                    quantize_span(*c.fnuz, x, 1.0f, codes, o, 2 * b);
                    std::uint64_t bad = 0, scalar = 0;
                    for (std::size_t i = 0; i < x.size(); ++i) {
                        const std::uint64_t index = 2 * b + i;
                        const std::uint32_t random =
                            mode == RoundingMode::Stochastic ? stochastic_bits(o.seed, index, o.random_bits) : 0u;
                        const std::uint32_t want = oracle.encode(double(x[i]), o, random);
                        bad += codes[i] != want;
                        scalar += encode(*c.fnuz, x[i], o, index) != want;
                    }
                    bulk_bad += bad;
                    scalar_bad += scalar;
                });
                CAPTURE(c.fnuz->name);
                CAPTURE(rounding_mode_name(mode));
                CAPTURE(saturation_name(saturation));
                CHECK(bulk_bad == 0);
                CHECK(scalar_bad == 0);
            }
        }
    }
    set_max_threads(0);
}
