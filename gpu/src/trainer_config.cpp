// The GPU trainer's configuration rules, model FLOPs, presets and names (in every build).
#include <stdexcept>
#include <string>

#include "gpu/trainer.hpp"

#include "emulator/mlp_trainer.hpp"

namespace fp8lab::gpu {
namespace {

void require_multiple_of_16(int value, const char* name) {
    if (value <= 0 || value % 16 != 0)
        throw std::invalid_argument(std::string(name) + " must be a positive multiple of 16 (cuBLASLt's FP8 GEMMs), not " +
                                    std::to_string(value));
}

}  // namespace

std::string_view gpu_precision_name(GpuPrecision p) { return p == GpuPrecision::Bf16 ? "bf16" : "fp8"; }
std::string_view gpu_recipe_name(GpuRecipe r) {
    switch (r) {
    case GpuRecipe::Delayed: return "delayed";
    case GpuRecipe::Current: return "current";
    case GpuRecipe::Blockwise: return "blockwise";
    }
    return "?";
}

void validate(const GpuTrainConfig& c) {
    require_multiple_of_16(c.input_dim, "the input size d");
    require_multiple_of_16(c.hidden_dim, "the hidden size h");
    require_multiple_of_16(c.tokens, "the tokens per step M");
    if (c.hidden_layers < 1 || c.hidden_layers > 16)
        throw std::invalid_argument("hidden layers must be 1 to 16, not " + std::to_string(c.hidden_layers));
    if (c.steps < 1) throw std::invalid_argument("steps must be at least 1, not " + std::to_string(c.steps));
    if (c.warmup_steps < 1)
        throw std::invalid_argument("warm-up steps must be at least 1 (the first step picks the GEMM kernels), not " +
                                    std::to_string(c.warmup_steps));
    if (!(c.learning_rate > 0.0f) || !(c.learning_rate < 1e3f))
        throw std::invalid_argument("the learning rate must be a positive number");
    if (c.delayed.history_length < 1)
        throw std::invalid_argument("the amax history length must be at least 1, not " +
                                    std::to_string(c.delayed.history_length));
    if (c.precision == GpuPrecision::Fp8 && c.recipe == GpuRecipe::Blockwise && c.fast_accumulation)
        throw std::invalid_argument("blockwise scaling needs fast accumulation off: cuBLASLt's block-scaled FP8 GEMMs "
                                    "always promote their partial sums");
    if (c.delayed.margin < 0 || c.delayed.margin > 64)
        throw std::invalid_argument("the margin must be 0 to 64, not " + std::to_string(c.delayed.margin));
}

double model_flops_per_step(const GpuTrainConfig& c) {
    const double d = c.input_dim, h = c.hidden_dim;
    const double parameters = d * h + h * h * (c.hidden_layers - 1) + h * d;
    return 6 * parameters * c.tokens;
}

double gemm_flops_per_step(const GpuTrainConfig& c) {
    const double m = c.tokens, d = c.input_dim, h = c.hidden_dim;
    const double first = 2 * m * d * h * 2;  // forward and wgrad (no dgrad into the input)
    const double hidden = 2 * m * h * h * 3 * (c.hidden_layers - 1);
    const double last = 2 * m * h * d * 3;
    return first + hidden + last;
}

double GpuTrainResult::final_loss() const { return emu::final_loss(loss); }

const std::vector<GpuPreset>& gpu_presets() {
    static const std::vector<GpuPreset> presets = {{"tiny", 768, 3072, 32},
                                                   {"small", 768, 3072, 8192},
                                                   {"medium", 1024, 4096, 16384},
                                                   {"large", 4096, 16384, 16384}};
    return presets;
}

}  // namespace fp8lab::gpu
