// The vectorisable loops of the bulk path, compiled once per rounding mode and CPU level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "emulator/float32_kernel.hpp"
#include "emulator/rounding.hpp"

namespace fp8lab::emu::detail {

// Per-element inputs besides the data, passed by value so stores through uint8_t
// pointers cannot alias them (that aliasing alone stops vectorisation).
struct LoopParams {
    Float32KernelConstants k;
    float scale;
    std::uint64_t seed;
    int random_bits;
    std::uint64_t first_index;  // global index of element 0, for stochastic bits
};

struct RangeTally {
    std::size_t nan = 0, inf = 0, overflowed = 0, flushed = 0, subnormal = 0;
};

// Each dispatches on the rounding mode to a loop compiled for the best CPU level present.
void quantize_loop(RoundingMode mode, const float* in, std::uint8_t* out, std::size_t n,
                   const LoopParams& p);
void round_loop(RoundingMode mode, const float* in, float* out, std::size_t n,
                const float* value_table, const LoopParams& p);
RangeTally range_loop(RoundingMode mode, const float* in, std::size_t n, std::uint32_t first_normal,
                      const LoopParams& p);

}  // namespace fp8lab::emu::detail
