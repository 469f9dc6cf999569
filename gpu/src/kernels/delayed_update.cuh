// SPDX-License-Identifier: Apache-2.0
// The delayed-scaling update of docs/numerics.md §4 as a device function, shared by the
// test kernel and the training steps: float32 operation for operation as the emulator.
#pragma once

#include <cfloat>

#include "gpu/src/kernels/kernels.hpp"

namespace fp8lab::gpu::kernels {

// One warp (all 32 lanes call it) ends a step of tensor `history`'s delayed scaling, with
// `amax` the step's amax (the value the update treats as history[0], which it does not
// read): the largest of amax and the history by a warp reduction, then the roll, 32
// elements a round. Each round's values are loaded once, for both, and the next round's
// before this round's stores, so that a short history costs one trip to memory (the step
// end is on the critical path of a small training step). The result is the emulator's to
// the bit: fmaxf skips NaN in any order, and the largest of the others does not depend on
// the order (a history's amaxes are never -0, and an amax of +-0 keeps the old scale
// either way). A single thread took tens of microseconds for a history of 1024 (each load
// and store in turn), a sizeable part of a small training step.
__device__ inline void delayed_update_warp(float* history, int length, bool algorithm_max, float numerator, float amax,
                                           DeviceScaling* state) {
    const int lane = int(threadIdx.x) & 31;
    float v = lane < length ? history[lane] : 0.0f;  // loaded before the test below needs amax
    if (amax == 0.0f) {  // the tensor saw no data: keep scale and history (every lane alike)
        if (lane == 0) history[0] = 0.0f;
        return;
    }
    float a = amax;
    // Roll: new[i] = old[i+1], new[L-1] = old[0] = amax, then new[0] = 0 (also when L = 1).
    for (int base = 0; base < length; base += 32) {
        const int i = base + lane;
        const float next = base + 32 + lane < length ? history[base + 32 + lane] : 0.0f;
        if (algorithm_max && i > 0 && i < length) a = fmaxf(a, v);
        float shifted = __shfl_down_sync(0xffffffffu, v, 1);
        const float next_first = __shfl_sync(0xffffffffu, next, 0);
        if (lane == 31) shifted = next_first;
        if (i < length) history[i] = i == 0 ? 0.0f : (i + 1 < length ? shifted : amax);
        v = next;
    }
    if (algorithm_max)
        for (int offset = 16; offset > 0; offset /= 2) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, offset));
    if (lane != 0 || !isfinite(a) || !(a > 0.0f)) return;  // keep the old scale
    float scale = __fdiv_rn(numerator, a);
    if (isinf(scale)) scale = FLT_MAX;
    state->scale = scale;
    state->scale_inv = __fdiv_rn(1.0f, scale);
}

}  // namespace fp8lab::gpu::kernels
