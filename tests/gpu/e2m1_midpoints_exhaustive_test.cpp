// NVFP4's E2M1 cast by midpoints (vector_quantize.hpp) against the generic float32 cast,
// nearest-even and saturating, for every one of the 2^32 float32 inputs.
#include <doctest/doctest.h>

#include <cstdint>

#include "emulator/float32_kernel.hpp"
#include "emulator/format.hpp"
#include "gpu/src/vector_quantize.hpp"

using namespace fp8lab;

TEST_CASE("E2M1 by midpoints equals the generic nearest-even saturating cast for every float32") {
    const emu::detail::Float32KernelConstants k =
        emu::detail::make_float32_kernel_constants(emu::e2m1(), emu::Saturation::Finite);
    std::uint64_t mismatches = 0;
    std::uint32_t first = 0;
    std::uint32_t u = 0;
    do {
        const std::uint32_t generic = emu::detail::encode_float32_bits<emu::RoundingMode::NearestEven>(u, k, 0, 32);
        if (gpu::vq::e2m1_nearest_code(u, k.nan_code) != generic && mismatches++ == 0) first = u;
    } while (++u != 0);
    INFO("first mismatching input bits: " << first);
    CHECK(mismatches == 0);
}
