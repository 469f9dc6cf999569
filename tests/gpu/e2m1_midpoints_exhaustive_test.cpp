// SPDX-License-Identifier: Apache-2.0
// NVFP4's E2M1 cast by midpoints (vector_quantize.hpp) against the generic float32 cast,
// nearest-even and saturating, for every one of the 2^32 float32 inputs, on every core.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "emulator/float32_kernel.hpp"
#include "emulator/format.hpp"
#include "gpu/src/vector_quantize.hpp"

using namespace fp8lab;

TEST_CASE("E2M1 by midpoints equals the generic nearest-even saturating cast for every float32") {
    const emu::detail::Float32KernelConstants k =
        emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
    constexpr std::uint64_t kBlock = 1 << 24;
    std::atomic<std::uint64_t> next{0}, mismatches{0}, first{~0ull};
    const auto worker = [&] {
        for (std::uint64_t b = next.fetch_add(kBlock); b < (1ull << 32); b = next.fetch_add(kBlock)) {
            std::uint64_t bad = 0;
            for (std::uint64_t v = b; v < b + kBlock; ++v) {
                const std::uint32_t u = std::uint32_t(v);
                const std::uint32_t generic =
                    emu::detail::encode_float32_bits<emu::RoundingMode::NearestEven>(u, k, 0, 32);
                if (gpu::vq::e2m1_nearest_code(u, k.nan_code) != generic) {
                    std::uint64_t none = ~0ull;
                    if (bad++ == 0) first.compare_exchange_strong(none, v);
                }
            }
            mismatches += bad;
        }
    };
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
    worker();
    pool.clear();  // joins
    INFO("first mismatching input bits: " << first.load());
    CHECK(mismatches == 0);
}
