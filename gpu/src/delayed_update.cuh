// SPDX-License-Identifier: Apache-2.0
// The delayed-scaling update of docs/numerics.md §4 as a device function, shared by the
// test kernel and the training step: float32 operation for operation as the emulator.
#pragma once

#include <cfloat>

#include "gpu/src/kernels.hpp"

namespace fp8lab::gpu::kernels {

// One thread: the fmaxf reduction must run in the emulator's order (NaN skipping
// depends on it), and a history of at most a few thousand floats costs microseconds.
__device__ inline void delayed_update_one(float* history, int length, bool algorithm_max, float numerator,
                                          DeviceScaling* state) {
    if (history[0] == 0.0f) return;
    float a = history[0];
    if (algorithm_max)
        for (int i = 0; i < length; ++i) a = fmaxf(a, history[i]);
    const float oldest = history[0];
    for (int i = 0; i + 1 < length; ++i) history[i] = history[i + 1];
    history[length - 1] = oldest;
    history[0] = 0.0f;
    if (!isfinite(a) || !(a > 0.0f)) return;
    float scale = __fdiv_rn(numerator, a);
    if (isinf(scale)) scale = FLT_MAX;
    state->scale = scale;
    state->scale_inv = __fdiv_rn(1.0f, scale);
}

}  // namespace fp8lab::gpu::kernels
