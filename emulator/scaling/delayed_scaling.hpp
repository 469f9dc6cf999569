// SPDX-License-Identifier: Apache-2.0
// Delayed scaling as Transformer Engine's DelayedScaling: amax history, roll, margin.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/scaling/current_scaling.hpp"
#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"

namespace fp8lab::emu {

enum class AmaxAlgorithm { Max, MostRecent };
std::string_view amax_algorithm_name(AmaxAlgorithm a);  // "max" / "most_recent"

struct DelayedScalingConfig {
    int history_length = 1024;
    AmaxAlgorithm algorithm = AmaxAlgorithm::Max;
    int margin = 0;
};

// Which tensor of a linear layer a scale is for; HYBRID picks the format by it.
enum class TensorRole { Input, Weight, GradOutput };
enum class FormatRecipe { E4M3, Hybrid };  // HYBRID: E4M3 forward, E5M2 gradients
const Format& format_for(FormatRecipe recipe, TensorRole role);

// What a view plots of one tensor's delayed scaling.
struct DelayedScalingState {
    std::vector<float> amax_history;    // the window, [0] the newest (0 after the roll)
    std::vector<float> amax_per_step;   // the amax recorded at each completed step
    std::vector<float> scale_per_step;  // the scale each completed step quantised with
    ScalePair next_scale;               // what the next step uses
};

// One tensor's state. Per step: quantise with scale(), then record_amax(amax of that
// step), then update(): the new scale takes effect at the next step.
class DelayedScaling {
  public:
    DelayedScaling(const Format& format, DelayedScalingConfig config);

    ScalePair scale() const { return scale_; }
    void record_amax(float amax) { history_[0] = amax; }
    void update();

    const std::vector<float>& history() const { return history_; }  // [0] is the newest
    DelayedScalingState state() const { return {history_, amax_per_step_, scale_per_step_, scale_}; }
    const Format& format() const { return *format_; }
    const DelayedScalingConfig& config() const { return config_; }

  private:
    const Format* format_;
    DelayedScalingConfig config_;
    std::vector<float> history_;
    ScalePair scale_;
    std::vector<float> amax_per_step_, scale_per_step_;
};

// Throws std::invalid_argument naming the field when a configuration is unusable.
void validate(const DelayedScalingConfig& config);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::AmaxAlgorithm>> enum_names<emu::AmaxAlgorithm>();
template <>
std::span<const EnumName<emu::FormatRecipe>> enum_names<emu::FormatRecipe>();  // "e4m3", "hybrid"
}  // namespace fp8lab
