// SPDX-License-Identifier: Apache-2.0
// NVFP4's E2M1 cast by midpoints (vector_quantize.hpp) against the generic float32 cast (the
// bulk path's), nearest-even and saturating, for every one of the 2^32 float32 inputs, on every core.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/base/parallel.hpp"
#include "gpu/src/kernels/vector_quantize.hpp"
#include "tests/all_cores.hpp"

using namespace fp8lab;

TEST_CASE("E2M1 by midpoints equals the generic nearest-even saturating cast for every float32") {
    const emu::detail::Float32KernelConstants k =
        emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
    const emu::ConvertOptions o{emu::RoundingMode::NearestEven, emu::Saturation::Finite};
    emu::set_max_threads(1);  // the sweep parallelises itself; keep each bulk call serial
    std::atomic<std::uint64_t> mismatches{0}, first{~0ull};
    test::on_all_cores(1ull << 32, 1 << 20, [&](std::uint64_t b, std::uint64_t e) {
        // The generic cast by the bulk path (its loops are encode_float32_bits, vectorised;
        // the CUDA oracle checks them on every input), a block at a time.
        thread_local std::vector<float> x_store;
        thread_local std::vector<std::uint8_t> codes_store;
        const std::uint32_t n = std::uint32_t(e - b), first_bits = std::uint32_t(b);
        float* const x = test::scratch(x_store, n);
        std::uint8_t* const codes = test::scratch(codes_store, n);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(first_bits + i);
        emu::quantize_span(emu::e2m1(), {x, n}, 1.0f, {codes, n}, o);
        const auto same = [&](std::uint32_t i) {
            return gpu::vq::e2m1_nearest_code(first_bits + i, k.nan_code) == codes[i];
        };
        // A count without a branch, then a second look only where it is not zero.
        std::uint32_t bad = 0;
        for (std::uint32_t i = 0; i < n; ++i) bad += !same(i);
        if (bad) {
            std::uint32_t at = 0;
            while (same(at)) ++at;
            std::uint64_t none = ~0ull;
            first.compare_exchange_strong(none, b + at);
        }
        mismatches += bad;
    });
    emu::set_max_threads(0);
    INFO("first mismatching input bits: " << first.load());
    CHECK(mismatches == 0);
}
