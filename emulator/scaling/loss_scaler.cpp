// SPDX-License-Identifier: Apache-2.0
// GradScaler's update: back off on overflow and skip; grow after an interval of clean steps.
#include "emulator/scaling/loss_scaler.hpp"

#include <stdexcept>

namespace fp8lab::emu {

DynamicLossScaler::DynamicLossScaler(LossScalerConfig config) : config_(config), scale_(config.initial_scale) {
    if (!(config.initial_scale > 0) || !(config.growth_factor > 1) ||
        !(config.backoff_factor > 0 && config.backoff_factor < 1) || config.growth_interval < 1)
        throw std::invalid_argument(
            "loss scaler: need initial scale > 0, growth > 1, "
            "0 < backoff < 1 and growth interval >= 1");
}

bool DynamicLossScaler::update(bool found_inf) {
    scale_per_step_.push_back(scale_);
    if (found_inf) {
        skipped_steps_.push_back(scale_per_step_.size() - 1);
        scale_ *= config_.backoff_factor;
        clean_steps_ = 0;
        return false;
    }
    if (++clean_steps_ == config_.growth_interval) {
        scale_ *= config_.growth_factor;
        clean_steps_ = 0;
    }
    return true;
}

}  // namespace fp8lab::emu
