// All 2^32 float32 inputs into E4M3FNUZ and E5M2FNUZ, in every rounding mode and saturation.
// No CUDA function converts to FNUZ, so the sweep leans on two facts instead: below half
// the OCP format's maximum an FNUZ code's value is exactly half the OCP value of the same
// code (one more bias, same fields), so FNUZ(x) equals OCP(2x) there, and the OCP bulk
// path is itself checked against CUDA on all 2^32 inputs; from there up (the FNUZ top,
// overflow, Inf, NaN) the float64 scalar encoder, whose arithmetic shares nothing with the
// bulk kernel, and the enumerate-and-midpoint oracle decide.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "emulator/bulk.hpp"
#include "emulator/convert.hpp"
#include "emulator/parallel.hpp"
#include "emulator/stochastic_bits.hpp"
#include "tests/emulator/midpoint_oracle.hpp"

using namespace fp8lab::emu;

namespace {

void on_all_cores(std::uint64_t n, std::uint64_t block, const std::function<void(std::uint64_t, std::uint64_t)>& body) {
    std::atomic<std::uint64_t> next{0};
    auto worker = [&] {
        for (std::uint64_t b = next.fetch_add(block); b < n; b = next.fetch_add(block)) body(b, std::min(n, b + block));
    };
    std::vector<std::jthread> pool;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 1; t < cores; ++t) pool.emplace_back(worker);
    worker();
}

}  // namespace

TEST_CASE("FNUZ formats: all 2^32 float32 inputs, every rounding mode and saturation") {
    set_max_threads(1);  // the sweep parallelises itself
    for (auto [fnuz, ocp] : {std::pair{&e4m3fnuz(), &e4m3()}, std::pair{&e5m2fnuz(), &e5m2()}}) {
        const fp8lab::test::MidpointOracle oracle(*fnuz);
        const double shared = ocp->max_finite / 2;  // below it, FNUZ(x) = OCP(2x) code for code
        for (RoundingMode mode : all_rounding_modes()) {
            for (Saturation saturation : {Saturation::Finite, Saturation::None}) {
                ConvertOptions o{mode, saturation};
                o.seed = 11;
                o.random_bits = 8;
                std::atomic<std::uint64_t> shared_bad{0}, top_bad{0}, oracle_bad{0}, top_checked{0};
                std::atomic<std::uint64_t> first_bad{~0ull};
                on_all_cores(1ull << 32, 1 << 20, [&](std::uint64_t b, std::uint64_t e) {
                    std::vector<float> x(e - b);
                    std::vector<std::uint8_t> codes(x.size()), doubled(x.size());
                    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::bit_cast<float>(std::uint32_t(b + i));
                    quantize_span(*fnuz, x, 1.0f, codes, o, b);
                    quantize_span(*ocp, x, 2.0f, doubled, o, b);  // 2x is exact below the shared range's top
                    std::uint64_t bad = 0, top = 0, checked = 0, oracle_mismatch = 0;
                    for (std::size_t i = 0; i < x.size(); ++i) {
                        const double a = std::fabs(double(x[i]));
                        std::uint32_t want;
                        if (a < shared) {
                            // The same code, except that OCP's -0 is FNUZ's NaN: FNUZ gives +0.
                            want = (doubled[i] & 0x7Fu) == 0 ? 0u : doubled[i];
                            if (codes[i] != want) {
                                ++bad;
                                std::uint64_t expected = ~0ull;
                                first_bad.compare_exchange_strong(expected, b + i);
                            }
                            continue;
                        }
                        // The top binades checked whole; far past max (the same overflow rule
                        // for every input) and NaN payloads, every 61st.
                        if (a < 4 * fnuz->max_finite || (b + i) % 61 == 0) {
                            ++checked;
                            want = encode(*fnuz, double(x[i]), o, b + i);
                            top += codes[i] != want;
                            const std::uint32_t random =
                                mode == RoundingMode::Stochastic ? stochastic_bits(o.seed, b + i, o.random_bits) : 0u;
                            oracle_mismatch += oracle.encode(double(x[i]), o, random) != want;
                        }
                    }
                    shared_bad += bad;
                    top_bad += top;
                    oracle_bad += oracle_mismatch;
                    top_checked += checked;
                });
                CAPTURE(fnuz->name);
                CAPTURE(rounding_mode_name(mode));
                CAPTURE(saturation_name(saturation));
                CAPTURE(first_bad.load());
                CHECK(shared_bad == 0);
                CHECK(top_bad == 0);
                CHECK(oracle_bad == 0);
                CHECK(top_checked > (1u << 24));  // the top binades alone hold about 2^25 inputs
            }
        }
    }
    set_max_threads(0);
}
