// SPDX-License-Identifier: Apache-2.0
// Launchers of the emulated path's step end (plain C++17 types): the overflow check of the
// weight gradients, GradScaler's update, and AdamW that skips an overflowed step, all on
// the device, so that a captured step needs no host synchronisation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {

// The guard's state on the device. The step's loss scale multiplies the output's
// gradient; after the backward, found_inf says whether a weight gradient held Inf or NaN.
struct StepGuard {
    float scale = 1.0f;   // the loss scale of the next step (1 without loss scaling)
    float used = 1.0f;    // the scale this step used: the gradients are divided by it
    int clean_steps = 0;  // steps since the last growth or backoff
    int found_inf = 0;    // set by finite_check, cleared by guard_update
    int apply = 1;        // whether this step's AdamW runs
    int adam_steps = 0;   // updates applied so far: AdamW's bias correction counts these
};

struct LossScalingRules {  // emu::LossScalerConfig, and whether it is on
    bool enabled = false;
    float growth_factor = 2.0f, backoff_factor = 0.5f;
    int growth_interval = 2000;
};

// guard->found_inf = 1 when any of the n values is Inf or NaN.
void finite_check(const float* values, std::size_t n, StepGuard* guard, cudaStream_t stream);
// After every finite_check of a step: the emulator's rules (emu::DynamicLossScaler and the
// CPU trainer's skip of a non-finite step). Records the scale used and whether the step
// was skipped at [*step] (when below capacity; either array may be null).
void guard_update(StepGuard* guard, LossScalingRules rules, const int* step, float* scale_per_step,
                  int* skipped_per_step, int capacity, cudaStream_t stream);
// AdamW of the gradient divided by guard->used, with the bias correction of
// guard->adam_steps and the learning rate of training step *step; nothing when
// guard->apply is 0. n must be a multiple of 4.
void guarded_adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const StepGuard* guard,
                   const int* step, cudaStream_t stream);

}  // namespace fp8lab::gpu::train
