// SPDX-License-Identifier: Apache-2.0
// Dynamic loss scaling with PyTorch GradScaler's rules and defaults.
#pragma once

#include <cstddef>
#include <vector>

namespace fp8lab::emu {

struct LossScalerConfig {
    float initial_scale = 65536.0f;  // 2^16
    float growth_factor = 2.0f;
    float backoff_factor = 0.5f;
    int growth_interval = 2000;
};

// What a view plots of a loss scaler.
struct LossScalerState {
    float scale;                             // the scale of the next step
    int clean_steps;                         // steps since the last growth or backoff
    std::vector<float> scale_per_step;       // the scale each completed step used
    std::vector<std::size_t> skipped_steps;  // steps whose gradients overflowed
};

class DynamicLossScaler {
  public:
    explicit DynamicLossScaler(LossScalerConfig config = {});

    float scale() const { return scale_; }

    // After backward: `found_inf` says whether an unscaled gradient held Inf or NaN.
    // Returns whether the optimizer step should be applied (false: skip it).
    bool update(bool found_inf);

    // History for plots: the scale used at each step, and the steps that were skipped.
    const std::vector<float>& scale_per_step() const { return scale_per_step_; }
    const std::vector<std::size_t>& skipped_steps() const { return skipped_steps_; }
    LossScalerState state() const { return {scale_, clean_steps_, scale_per_step_, skipped_steps_}; }

  private:
    LossScalerConfig config_;
    float scale_;
    int clean_steps_ = 0;
    std::vector<float> scale_per_step_;
    std::vector<std::size_t> skipped_steps_;
};

}  // namespace fp8lab::emu
