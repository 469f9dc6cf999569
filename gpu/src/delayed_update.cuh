// SPDX-License-Identifier: Apache-2.0
// The delayed-scaling update of docs/numerics.md §4 as a device function, shared by the
// test kernel and the training steps: float32 operation for operation as the emulator.
#pragma once

#include <cfloat>

#include "gpu/src/kernels.hpp"

namespace fp8lab::gpu::kernels {

// One warp (all 32 lanes call it): the history's largest value by a warp reduction, then
// the roll, 32 elements at a time. The result is the emulator's to the bit: fmaxf skips
// NaN in any order, and the largest of the others does not depend on the order (a
// history's amaxes are never -0, and an amax of +-0 keeps the old scale either way). A
// single thread took tens of microseconds for a history of 1024 (each load and store in
// turn), a sizeable part of a small training step.
__device__ inline void delayed_update_warp(float* history, int length, bool algorithm_max, float numerator,
                                           DeviceScaling* state) {
    const int lane = int(threadIdx.x) & 31;
    const float first = history[0];
    __syncwarp();
    if (first == 0.0f) return;  // the tensor saw no data: keep scale and history (every lane alike)
    float a = first;
    if (algorithm_max) {
        for (int i = lane; i < length; i += 32) a = fmaxf(a, history[i]);
        for (int offset = 16; offset > 0; offset /= 2) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, offset));
    }
    // Roll: new[i] = old[i+1], new[L-1] = old[0], then new[0] = 0 (also when L = 1). Each
    // round reads its 32 new values before any lane writes them.
    for (int base = 0; base < length; base += 32) {
        const int i = base + lane;
        float v = 0.0f;
        if (i < length) v = i + 1 < length ? history[i + 1] : first;
        __syncwarp();
        if (i < length) history[i] = i == 0 ? 0.0f : v;
        __syncwarp();
    }
    if (lane != 0 || !isfinite(a) || !(a > 0.0f)) return;  // keep the old scale
    float scale = __fdiv_rn(numerator, a);
    if (isinf(scale)) scale = FLT_MAX;
    state->scale = scale;
    state->scale_inv = __fdiv_rn(1.0f, scale);
}

}  // namespace fp8lab::gpu::kernels
