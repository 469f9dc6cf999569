// SPDX-License-Identifier: Apache-2.0
// NVFP4's random Hadamard transform of one group of 16 values, in C++17 with no library:
// the CPU emulator and the GPU's kernels run this one code, so both get the same floats.
#pragma once

#include <cstdint>

#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {

// The random signs of a transform: bit i of the seed's counter makes entry i -1.
constexpr void hadamard16_signs(std::uint64_t seed, float (&sign)[16]) {
    for (int i = 0; i < 16; ++i) sign[i] = stochastic_bits(seed, std::uint64_t(i), 1) ? -1.0f : 1.0f;
}

// v becomes H16 * diag(sign) * v / 4: the signs, an in-place fast Walsh-Hadamard
// transform, then 1/sqrt(16), an orthogonal map.
constexpr void hadamard16(float (&v)[16], const float (&sign)[16]) {
    for (int i = 0; i < 16; ++i) v[i] *= sign[i];
    for (int h = 1; h < 16; h *= 2)
        for (int i = 0; i < 16; i += 2 * h)
            for (int j = i; j < i + h; ++j) {
                const float a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
    for (int i = 0; i < 16; ++i) v[i] *= 0.25f;
}

}  // namespace fp8lab::emu
