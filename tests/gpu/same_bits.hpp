// SPDX-License-Identifier: Apache-2.0
// Two float vectors with the same bits, element by element (NaN payloads and signed zeros
// included): the GPU tests' test of "the same result", not merely equal values.
#pragma once

#include <cstring>
#include <vector>

namespace fp8lab::test {

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace fp8lab::test
