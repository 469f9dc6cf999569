// SPDX-License-Identifier: Apache-2.0
// A function's values at every BF16 input, looked up by the input's bits.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace fp8lab::emu {

// f at each of the 65536 BF16 values, indexed by the value's bits (float32's upper half).
// Where a tensor is stored in BF16, an element-wise f costs a lookup instead of a call:
// the same function of the same input, so the same bits as calling f.
template <class F>
std::vector<float> bf16_function_table(F f) {
    std::vector<float> table(std::size_t(1) << 16);
    for (std::uint32_t u = 0; u < table.size(); ++u) table[u] = f(std::bit_cast<float>(u << 16));
    return table;
}

// The entry of `table` for x, a BF16 value held in a float.
inline float bf16_lookup(const float* table, float x) { return table[std::bit_cast<std::uint32_t>(x) >> 16]; }

}  // namespace fp8lab::emu
