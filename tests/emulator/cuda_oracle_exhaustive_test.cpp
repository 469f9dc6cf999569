// SPDX-License-Identifier: Apache-2.0
// All 2^32 float32 inputs, and 10^8 float64 inputs, against CUDA 13's host conversions:
// the float32 ones against CUDA's code modelled as runs of inputs with one code (found with
// CUDA, checked with CUDA at every run's ends and on every 61st input).
// This file (a test) is the one place outside gpu/src that includes CUDA headers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/bulk_loops.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/parallel.hpp"
#include "tests/all_cores.hpp"
#include "tests/emulator/midpoint_oracle.hpp"

using namespace fp8lab::emu;
using fp8lab::test::on_all_cores;
using fp8lab::test::scratch;

namespace {

// One (format, mode, saturation) that CUDA defines.
struct CudaCase {
    const char* label;
    const Format* format;
    RoundingMode mode;
    Saturation saturation;
};

// Calls visit(case, from_float, from_double) for every case, with CUDA's float and double
// functions as captureless lambdas whose every argument but the value is a constant: GCC
// then specialises CUDA's conversion for the case.
template <__nv_saturation_t Sat, __nv_fp8_interpretation_t Interp, class Visit>
void visit_fp8(Visit& visit, const Format& f, Saturation saturation) {
    visit(
        CudaCase{"fp8", &f, RoundingMode::NearestEven, saturation},
        [](float x) { return std::uint32_t(__nv_cvt_float_to_fp8(x, Sat, Interp)); },
        [](double x) { return std::uint32_t(__nv_cvt_double_to_fp8(x, Sat, Interp)); });
}
template <__nv_saturation_t Sat, cudaRoundMode Mode, class Visit>
void visit_e8m0(Visit& visit, RoundingMode mode, Saturation saturation) {
    visit(
        CudaCase{"e8m0", &e8m0(), mode, saturation},
        [](float x) { return std::uint32_t(__nv_cvt_float_to_e8m0(x, Sat, Mode)); },
        [](double x) { return std::uint32_t(__nv_cvt_double_to_e8m0(x, Sat, Mode)); });
}
// FP6 and FP4 always saturate: CUDA takes no saturation argument.
template <__nv_fp6_interpretation_t Interp, cudaRoundMode Mode, class Visit>
void visit_fp6(Visit& visit, const Format& f, RoundingMode mode) {
    visit(
        CudaCase{"fp6", &f, mode, Saturation::Finite},
        [](float x) { return std::uint32_t(__nv_cvt_float_to_fp6(x, Interp, Mode)); },
        [](double x) { return std::uint32_t(__nv_cvt_double_to_fp6(x, Interp, Mode)); });
}
template <cudaRoundMode Mode, class Visit>
void visit_fp4(Visit& visit, RoundingMode mode) {
    visit(
        CudaCase{"fp4", &e2m1(), mode, Saturation::Finite},
        [](float x) { return std::uint32_t(__nv_cvt_float_to_fp4(x, __NV_E2M1, Mode)); },
        [](double x) { return std::uint32_t(__nv_cvt_double_to_fp4(x, __NV_E2M1, Mode)); });
}

template <class Visit>
void for_each_cuda_case(Visit&& visit) {
    visit_fp8<__NV_SATFINITE, __NV_E4M3>(visit, e4m3(), Saturation::Finite);
    visit_fp8<__NV_SATFINITE, __NV_E5M2>(visit, e5m2(), Saturation::Finite);
    visit_fp8<__NV_NOSAT, __NV_E4M3>(visit, e4m3(), Saturation::None);
    visit_fp8<__NV_NOSAT, __NV_E5M2>(visit, e5m2(), Saturation::None);
    visit_e8m0<__NV_SATFINITE, cudaRoundZero>(visit, RoundingMode::TowardZero, Saturation::Finite);
    visit_e8m0<__NV_SATFINITE, cudaRoundPosInf>(visit, RoundingMode::Up, Saturation::Finite);
    visit_e8m0<__NV_NOSAT, cudaRoundZero>(visit, RoundingMode::TowardZero, Saturation::None);
    visit_e8m0<__NV_NOSAT, cudaRoundPosInf>(visit, RoundingMode::Up, Saturation::None);
    visit_fp6<__NV_E2M3, cudaRoundNearest>(visit, e2m3(), RoundingMode::NearestEven);
    visit_fp6<__NV_E3M2, cudaRoundNearest>(visit, e3m2(), RoundingMode::NearestEven);
    visit_fp6<__NV_E2M3, cudaRoundZero>(visit, e2m3(), RoundingMode::TowardZero);
    visit_fp6<__NV_E3M2, cudaRoundZero>(visit, e3m2(), RoundingMode::TowardZero);
    visit_fp4<cudaRoundNearest>(visit, RoundingMode::NearestEven);
    visit_fp4<cudaRoundZero>(visit, RoundingMode::TowardZero);
}

std::string describe(const CudaCase& c) {
    return std::string(c.format->name) + " " + std::string(rounding_mode_name(c.mode)) + " " +
           std::string(saturation_name(c.saturation));
}

}  // namespace

namespace {

// CUDA's code as a function of a float32's bits, as runs of inputs with one code: run k
// ends at last[k]. Calling CUDA's host conversion (about 10 ns) on every one of 2^32
// inputs took most of this sweep's time; its runs take a few hundred thousand calls.
struct Run {
    std::uint32_t last;
    std::uint8_t code;
};

// The runs, each found from its first input by doubling the step until the code changes,
// then bisecting: about 64 calls a run, where the code is the same over the whole run.
// That it is, input by input, is what the sweep checks (the kernel against the runs, and
// CUDA itself on every 61st input and around every run's ends).
template <class Cuda>
std::vector<Run> runs_of(Cuda cuda) {
    constexpr std::uint64_t kEnd = 1ull << 32;
    const auto code_at = [&](std::uint64_t u) { return std::uint8_t(cuda(std::bit_cast<float>(std::uint32_t(u)))); };
    std::vector<Run> runs;
    for (std::uint64_t first = 0; first < kEnd;) {
        const std::uint8_t code = code_at(first);
        std::uint64_t same = first, other = kEnd;  // code_at(same) == code; other: past the run
        for (std::uint64_t step = 1;; step *= 2) {
            const std::uint64_t next = std::min(same + step, kEnd);
            if (next == kEnd || code_at(next) != code) {
                other = next;
                break;
            }
            same = next;
        }
        while (other - same > 1) {
            const std::uint64_t mid = same + (other - same) / 2;
            (code_at(mid) == code ? same : other) = mid;
        }
        runs.push_back({std::uint32_t(same), code});
        first = same + 1;
    }
    return runs;
}

// The run holding input u.
const Run& run_of(const std::vector<Run>& runs, std::uint64_t u) {
    return *std::lower_bound(runs.begin(), runs.end(), u, [](const Run& r, std::uint64_t v) { return r.last < v; });
}

}  // namespace

TEST_CASE("all 2^32 float32 inputs match CUDA's host conversions (bulk and scalar paths)") {
    set_max_threads(1);  // the sweep parallelises itself; keep each bulk call serial
    for_each_cuda_case([](const CudaCase& c, auto from_float, auto) {
        const ConvertOptions o{c.mode, c.saturation};
        const std::vector<Run> runs = runs_of(from_float);
        // CUDA itself on both sides of every run's ends: a code that differs there from
        // its run's is one the runs did not model.
        std::uint64_t edge_bad = 0;
        for (const Run& r : runs)
            for (std::uint64_t u = r.last > 1 ? r.last - 1 : 0; u <= std::min<std::uint64_t>(r.last + 2, 0xFFFFFFFFu);
                 ++u)
                edge_bad += from_float(std::bit_cast<float>(std::uint32_t(u))) != run_of(runs, u).code;
        std::atomic<std::uint64_t> mismatches{0}, cuda_mismatches{0}, scalar_mismatches{0};
        std::atomic<std::uint64_t> first_bad{~0ull};
        on_all_cores(1ull << 32, 1 << 20, [&](std::uint64_t b, std::uint64_t e) {
            thread_local std::vector<float> x_store;
            thread_local std::vector<std::uint8_t> codes_store;
            const std::uint32_t n = std::uint32_t(e - b);
            float* const x = scratch(x_store, n);
            std::uint8_t* const codes = scratch(codes_store, n);
            const std::uint32_t first = std::uint32_t(b);
            for (std::uint32_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(first + i);
            quantize_span(*c.format, {x, n}, 1.0f, {codes, n}, o);
            // Against the runs, a run's stretch of the block at a time (branch-free counts).
            std::uint64_t bad = 0;
            for (std::uint64_t u = b; u < e;) {
                const Run& r = run_of(runs, u);
                const std::uint64_t end = std::min<std::uint64_t>(std::uint64_t(r.last) + 1, e);
                std::uint32_t run_bad = 0;  // 32-bit indices and count: the loop vectorises
                const std::uint8_t* const from = codes + (u - b);
                const std::uint32_t length = std::uint32_t(end - u);
                for (std::uint32_t v = 0; v < length; ++v) run_bad += from[v] != r.code;
                if (run_bad) {
                    std::uint64_t at = u;
                    while (codes[at - b] == r.code) ++at;
                    std::uint64_t none = ~0ull;
                    first_bad.compare_exchange_strong(none, at);
                }
                bad += run_bad;
                u = end;
            }
            // CUDA and the scalar path on every 61st input, against the kernel's code.
            std::uint64_t cuda_bad = 0, scalar_bad = 0;
            for (std::uint32_t i = 0; i < n; i += 61) {
                cuda_bad += from_float(x[i]) != codes[i];
                scalar_bad += encode(*c.format, x[i], o) != codes[i];
            }
            mismatches += bad;
            cuda_mismatches += cuda_bad;
            scalar_mismatches += scalar_bad;
        });
        MESSAGE(describe(c) << ": " << runs.size() << " runs of one code; " << mismatches.load()
                            << " mismatches of 2^32");
        CAPTURE(describe(c));
        CAPTURE(first_bad.load());
        CHECK(edge_bad == 0);
        CHECK(mismatches == 0);
        CHECK(cuda_mismatches == 0);
        CHECK(scalar_mismatches == 0);
    });
    set_max_threads(0);
}

// BF16's bulk rounding (round_span: integer arithmetic below kBf16Past, the table loop for
// the rest) against CUDA's __float2bfloat16_rn for every input it rounds by arithmetic, and
// against the scalar path for Inf, NaN and what rounds past the largest finite value, whose
// values depend on the saturation (CUDA's function always gives Inf or its NaN).
TEST_CASE("all 2^32 float32 inputs round to BF16 as CUDA's __float2bfloat16_rn does (bulk path)") {
    set_max_threads(1);  // the sweep parallelises itself; keep each bulk call serial
    for (const Saturation saturation : {Saturation::None, Saturation::Finite}) {
        const ConvertOptions o{RoundingMode::NearestEven, saturation};
        std::atomic<std::uint64_t> cuda_bad{0}, special_bad{0}, specials{0}, reported{0};
        on_all_cores(1ull << 32, 1 << 20, [&](std::uint64_t b, std::uint64_t e) {
            thread_local std::vector<float> x_store, out_store, copied_store;
            const std::uint32_t n = std::uint32_t(e - b);
            float* const x = scratch(x_store, n);
            float* const out = scratch(out_store, n);
            float* const copied = scratch(copied_store, n);
            const std::uint32_t first = std::uint32_t(b);
            for (std::uint32_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(first + i);
            round_span(bf16(), {x, n}, {out, n}, o);
            // The loop's count of the inputs it leaves to the table loop, against the sweep's.
            reported += detail::round_bf16_nearest_even(x, copied, n);
            std::uint64_t bad = 0, odd = 0, seen = 0;
            for (std::uint32_t i = 0; i < n; ++i) {
                const std::uint32_t got = std::bit_cast<std::uint32_t>(out[i]);
                if ((std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu) < detail::kBf16Past) {
                    bad += got != std::bit_cast<std::uint32_t>(__bfloat162float(__float2bfloat16_rn(x[i])));
                } else {
                    const float want = static_cast<float>(round_to_format(bf16(), x[i], o));
                    odd += std::isnan(want) ? !std::isnan(out[i]) : got != std::bit_cast<std::uint32_t>(want);
                    ++seen;
                }
            }
            cuda_bad += bad;
            special_bad += odd;
            specials += seen;
        });
        CAPTURE(saturation_name(saturation));
        CHECK(cuda_bad == 0);
        CHECK(special_bad == 0);
        CHECK(reported == specials);
    }
    set_max_threads(0);
}

TEST_CASE("float64 inputs match CUDA's host conversions and the midpoint oracle") {
    std::uint64_t total = 0;
    for_each_cuda_case([&](const CudaCase& c, auto, auto from_double) {
        const ConvertOptions o{c.mode, c.saturation};
        const fp8lab::test::MidpointOracle oracle(*c.format);
        // Boundary exponents crossed with significand patterns, then random significands.
        std::vector<double> inputs;
        const std::uint64_t patterns[] = {0, 1, 0xFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFEull};
        for (int e = c.format->min_exponent - c.format->mantissa_bits - 3; e <= c.format->max_exponent + 3; ++e)
            for (std::uint64_t p : patterns)
                for (double s : {1.0, -1.0})
                    inputs.push_back(s * std::bit_cast<double>((std::uint64_t(e + 1023) << 52) | p));
        for (double v : oracle.values_and_midpoints())
            for (double s : {1.0, -1.0}) {
                double up = s * v, down = s * v;
                for (int k = 0; k < 3; ++k) {
                    inputs.insert(inputs.end(), {up, down});
                    up = std::nextafter(up, INFINITY);
                    down = std::nextafter(down, -INFINITY);
                }
            }
        for (double special : {0.0, -0.0, 0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp1023, 1e300})
            inputs.insert(inputs.end(), {special, -special});
        std::mt19937_64 rng(c.format->total_bits * 131 + int(c.mode));
        std::uniform_int_distribution<int> exponent(c.format->min_exponent - c.format->mantissa_bits - 6,
                                                    c.format->max_exponent + 3);
        const std::size_t target = 7'500'000;
        while (inputs.size() < target) {
            const std::uint64_t mantissa = rng() >> 12;
            const std::uint64_t e = std::uint64_t(exponent(rng) + 1023);
            inputs.push_back(std::bit_cast<double>(((rng() & 1) << 63) | (e << 52) | mantissa));
        }
        std::atomic<std::uint64_t> cuda_bad{0}, oracle_bad{0};
        on_all_cores(inputs.size(), 1 << 16, [&](std::uint64_t b, std::uint64_t e) {
            std::uint64_t bad = 0, obad = 0;
            for (std::uint64_t i = b; i < e; ++i) {
                const std::uint32_t got = encode(*c.format, inputs[i], o);
                bad += got != from_double(inputs[i]);
                obad += got != oracle.encode(inputs[i], o);
            }
            cuda_bad += bad;
            oracle_bad += obad;
        });
        total += inputs.size();
        CAPTURE(describe(c));
        CHECK(cuda_bad == 0);
        CHECK(oracle_bad == 0);
    });
    MESSAGE("float64 inputs checked: " << total);
    CHECK(total >= 100'000'000);
}

// Specials from float64 against CUDA alone (the midpoint oracle covers finite values):
// NaN of both signs with quiet and signalling payloads, Inf, signed zeros and float64
// subnormals, in every (format, mode, saturation) CUDA defines.
TEST_CASE("float64 NaN, Inf, -0 and subnormals convert as CUDA's float64 functions do") {
    const auto from_bits = [](std::uint64_t b) { return std::bit_cast<double>(b); };
    const double specials[] = {from_bits(0x7FF8000000000000ull),
                               from_bits(0xFFF8000000000000ull),
                               from_bits(0x7FF4000000000000ull),
                               from_bits(0xFFF4000000000000ull),
                               from_bits(0x7FFC000000000000ull),
                               from_bits(0xFFFC000000000000ull),
                               from_bits(0x7FF0000000000001ull),
                               from_bits(0xFFF0000000000001ull),
                               from_bits(0x7FFFFFFFFFFFFFFFull),
                               INFINITY,
                               -INFINITY,
                               0.0,
                               -0.0,
                               0x1p-1074,
                               -0x1p-1074,
                               0x1.fffffffffffffp-1023,
                               -0x1.8p-1050};
    for_each_cuda_case([&](const CudaCase& c, auto, auto from_double) {
        const ConvertOptions o{c.mode, c.saturation};
        for (double x : specials) {
            CAPTURE(describe(c));
            CAPTURE(std::bit_cast<std::uint64_t>(x));
            CHECK(encode(*c.format, x, o) == from_double(x));
        }
    });
}
