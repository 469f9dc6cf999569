// SPDX-License-Identifier: Apache-2.0
// A float32 dot product in one fixed order, whatever the compiler, vector width, thread
// count or machine (with contraction into FMA off where it is compiled for FMA machines).
#pragma once

#include "emulator/base/cpu_clones.hpp"

namespace fp8lab::emu {

// Eight lanes, then a fixed tree, then the tail.
FP8LAB_INLINE float dot_fixed_order(const float* a, const float* b, int n) {
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int k = 0;
    for (; k + 8 <= n; k += 8)
        for (int j = 0; j < 8; ++j) lane[j] += a[k + j] * b[k + j];
    float tail = 0;
    for (; k < n; ++k) tail += a[k] * b[k];
    return (((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))) + tail;
}

}  // namespace fp8lab::emu
