// SPDX-License-Identifier: Apache-2.0
// A test tensor for the GPU suites: N(0,1) with outliers, zeros, values in the subnormal
// range after scaling, values that flush, and NaN / Inf of both signs.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/training/training_task.hpp"

inline std::vector<float> hard_tensor(std::size_t n, std::uint64_t seed) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
        float v = fp8lab::emu::normal_sample(seed, i);
        switch (i % 97) {
        case 0:
            v *= 1000.0f;
            break;  // outlier
        case 1:
            v = 0.0f;
            break;
        case 2:
            v = -0.0f;
            break;
        case 3:
            v *= 1e-4f;
            break;  // subnormal range after a scale near 1
        case 4:
            v *= 1e-7f;
            break;  // flushes to zero
        default:
            break;
        }
        x[i] = v;
    }
    x[10] = std::numeric_limits<float>::infinity();
    x[11] = -std::numeric_limits<float>::infinity();
    x[12] = std::numeric_limits<float>::quiet_NaN();
    return x;
}
