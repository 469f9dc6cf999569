// SPDX-License-Identifier: Apache-2.0
// Delayed scaling update, float32 operation for operation as docs/numerics.md §4.
#include "emulator/scaling/delayed_scaling.hpp"

#include "emulator/base/bounds.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>

namespace fp8lab::emu {

std::string_view amax_algorithm_name(AmaxAlgorithm a) { return enum_name(a); }

const Format& format_for(FormatRecipe recipe, TensorRole role) {
    return recipe == FormatRecipe::Hybrid && role == TensorRole::GradOutput ? e5m2() : e4m3();
}

void validate(const DelayedScalingConfig& c) {
    if (!contains(bounds::kHistory, c.history_length))
        throw std::invalid_argument("history length must be " + describe(bounds::kHistory) + ", not " +
                                    std::to_string(c.history_length));
    if (!contains(bounds::kMargin, c.margin))
        throw std::invalid_argument("margin must be " + describe(bounds::kMargin) + ", not " +
                                    std::to_string(c.margin));
}

DelayedScaling::DelayedScaling(const Format& format, DelayedScalingConfig config) : format_(&format), config_(config) {
    validate(config);
    history_.assign(static_cast<std::size_t>(config.history_length), 0.0f);
}

void DelayedScaling::update() {
    amax_per_step_.push_back(history_[0]);
    scale_per_step_.push_back(scale_.scale);
    if (history_[0] == 0.0f) return;  // the tensor saw no data: keep scale and history
    float a = history_[0];
    if (config_.algorithm == AmaxAlgorithm::Max)
        for (float h : history_) a = std::fmax(a, h);  // fmax skips NaN; Inf wins
    // Roll: new[i] = old[i+1], new[L-1] = old[0], then new[0] = 0 (also when L = 1).
    std::rotate(history_.begin(), history_.begin() + 1, history_.end());
    history_[0] = 0.0f;
    if (!std::isfinite(a) || !(a > 0.0f)) return;  // keep the old scale
    const float numerator = std::ldexp(static_cast<float>(format_->max_finite), -config_.margin);
    float scale = numerator / a;
    if (std::isinf(scale)) scale = FLT_MAX;
    scale_ = with_inverse(scale);
}

}  // namespace fp8lab::emu

namespace fp8lab {

template <>
std::span<const EnumName<emu::AmaxAlgorithm>> enum_names<emu::AmaxAlgorithm>() {
    static constexpr EnumName<emu::AmaxAlgorithm> table[] = {{emu::AmaxAlgorithm::Max, "max"},
                                                             {emu::AmaxAlgorithm::MostRecent, "most_recent"}};
    return table;
}

template <>
std::span<const EnumName<emu::FormatRecipe>> enum_names<emu::FormatRecipe>() {
    static constexpr EnumName<emu::FormatRecipe> table[] = {{emu::FormatRecipe::Hybrid, "hybrid"},
                                                            {emu::FormatRecipe::E4M3, "e4m3"}};
    return table;
}

}  // namespace fp8lab
