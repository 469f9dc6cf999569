// SPDX-License-Identifier: Apache-2.0
// NVFP4's E2M1 cast by midpoints (vector_quantize.hpp) against the generic float32 cast,
// nearest-even and saturating, for every one of the 2^32 float32 inputs, on every core.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>

#include "emulator/float32_kernel.hpp"
#include "emulator/format.hpp"
#include "gpu/src/vector_quantize.hpp"
#include "tests/all_cores.hpp"

using namespace fp8lab;

TEST_CASE("E2M1 by midpoints equals the generic nearest-even saturating cast for every float32") {
    const emu::detail::Float32KernelConstants k =
        emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
    std::atomic<std::uint64_t> mismatches{0}, first{~0ull};
    test::on_all_cores(1ull << 32, 1 << 24, [&](std::uint64_t b, std::uint64_t e) {
        const auto same = [&](std::uint32_t u) {
            return gpu::vq::e2m1_nearest_code(u, k.nan_code) ==
                   emu::detail::encode_float32_bits<emu::RoundingMode::NearestEven>(u, k, 0, 32);
        };
        // A count without a branch, then a second look only where it is not zero.
        std::uint32_t bad = 0;
        for (std::uint64_t v = b; v < e; ++v) bad += !same(std::uint32_t(v));
        if (bad) {
            std::uint64_t at = b, none = ~0ull;
            while (same(std::uint32_t(at))) ++at;
            first.compare_exchange_strong(none, at);
        }
        mismatches += bad;
    });
    INFO("first mismatching input bits: " << first.load());
    CHECK(mismatches == 0);
}
