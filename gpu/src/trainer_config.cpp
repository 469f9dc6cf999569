// The GPU trainer's configuration rules, model FLOPs, presets and names (in every build).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/trainer.hpp"

#include "emulator/mlp_trainer.hpp"
#include "gpu/src/emulated_recipe.hpp"

namespace fp8lab::gpu {
namespace {

void require_multiple_of_16(int value, const char* name) {
    if (value <= 0 || value % 16 != 0)
        throw std::invalid_argument(std::string(name) +
                                    " must be a positive multiple of 16 (cuBLASLt's FP8 GEMMs), not " +
                                    std::to_string(value));
}

}  // namespace

std::string_view gpu_path_name(GpuPath p) { return p == GpuPath::Native ? "native" : "emulated"; }
std::string_view emulated_speed_note() {
    return "emulated: exact numerics, operands quantised on the GPU and multiplied as BF16; this GPU has no tensor "
           "cores for the recipe, so the time is not its hardware speed";
}
std::string_view gpu_precision_name(GpuPrecision p) { return p == GpuPrecision::Bf16 ? "bf16" : "fp8"; }
std::string_view gpu_recipe_name(GpuRecipe r) {
    switch (r) {
    case GpuRecipe::Delayed:
        return "delayed";
    case GpuRecipe::Current:
        return "current";
    case GpuRecipe::Blockwise:
        return "blockwise";
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
    if (c.precision == GpuPrecision::Fp8 && c.recipe == GpuRecipe::Blockwise &&
        (c.fast_accumulation || c.fast_accumulation_dgrad || c.fast_accumulation_wgrad))
        throw std::invalid_argument(
            "blockwise scaling needs fast accumulation off: cuBLASLt's block-scaled FP8 GEMMs "
            "always promote their partial sums");
    if (c.delayed.margin < 0 || c.delayed.margin > 64)
        throw std::invalid_argument("the margin must be 0 to 64, not " + std::to_string(c.delayed.margin));
    if (c.data_batches < 0 || c.data_batches > 4096)
        throw std::invalid_argument("data batches must be 0 (automatic) to 4096, not " +
                                    std::to_string(c.data_batches));
}

int data_batches(const GpuTrainConfig& c) {
    if (c.data_batches > 0) return c.data_batches;
    const double bytes = 2.0 * c.tokens * double(c.input_dim) * 2;  // BF16 inputs and targets
    return int(std::clamp(std::floor(double(256u << 20) / bytes), 1.0, 16.0));
}

GpuTrainConfig gpu_config(const emu::Experiment& e) {
    emu::validate(e);
    std::vector<std::string> refused;
    const auto refuse = [&](const std::string& field, const std::string& why) {
        refused.push_back(field + ": " + why);
    };
    const emu::Numerics& n = e.numerics;
    const bool fp8 = n.precision == emu::Precision::Fp8;
    if (e.model.output != e.model.input)
        refuse("model.output",
               "the GPU trainer's last layer maps back to the input size (d -> h -> d); set output = input");
    if (e.model.biases) refuse("model.biases", "the GPU trainer's layers have no biases");
    if (e.task.kind != emu::TaskKind::TeacherRegression)
        refuse("task.kind", "the GPU trainer has the mean squared error only (teacher regression)");
    if (e.optimizer.grad_clip > 0) refuse("optimizer.grad_clip", "the GPU trainer does not clip gradients");
    if (n.precision == emu::Precision::Fp32) refuse("numerics.precision", "the GPU trains BF16 or FP8, not FP32");
    if (e.inference.enabled)
        refuse("inference.enabled",
               "the quantised model's evaluation runs on the CPU emulator; on the GPU lab 9's "
               "serving-speed step times FP8 inference");
    const bool native = detail::native_path_can_run(n);
    if (!native && n.fast_accumulation.any())
        refuse("numerics.fast_accumulation",
               "these numerics run on the GPU's emulated path, whose GEMMs multiply in BF16: fast accumulation is a "
               "mode of the FP8 tensor cores' GEMMs only");
    if (!refused.empty()) {
        std::string text = "the GPU backend cannot run this experiment:";
        for (const std::string& r : refused) text += "\n  " + r;
        throw std::invalid_argument(text + "\nRun it on the CPU emulator, or change these settings.");
    }
    GpuTrainConfig g;
    g.input_dim = e.model.input;
    g.hidden_dim = e.model.hidden;
    g.hidden_layers = e.model.hidden_layers;
    g.tokens = e.tokens;
    g.precision = fp8 ? GpuPrecision::Fp8 : GpuPrecision::Bf16;
    g.recipe = n.recipe == emu::Fp8Recipe::Current     ? GpuRecipe::Current
               : n.recipe == emu::Fp8Recipe::Blockwise ? GpuRecipe::Blockwise
                                                       : GpuRecipe::Delayed;
    g.formats = n.formats.gradient == &emu::e5m2() ? emu::FormatRecipe::Hybrid : emu::FormatRecipe::E4M3;
    g.delayed = n.delayed;
    g.fast_accumulation = n.fast_accumulation.forward;
    g.fast_accumulation_dgrad = n.fast_accumulation.dgrad;
    g.fast_accumulation_wgrad = n.fast_accumulation.wgrad;
    g.path = native ? GpuPath::Native : GpuPath::Emulated;
    g.numerics = n;
    g.steps = e.steps;
    g.learning_rate = e.optimizer.learning_rate;
    g.weight_decay = e.optimizer.weight_decay;
    g.beta1 = e.optimizer.beta1;
    g.beta2 = e.optimizer.beta2;
    g.epsilon = e.optimizer.epsilon;
    g.seed = e.task.seed;
    g.init_seed = e.init_seed;
    g.data_batches = e.task.batches;
    validate(g);
    return g;
}

emu::Experiment experiment_of(const GpuTrainConfig& c) {
    emu::Experiment e;
    e.model = {c.input_dim, c.hidden_dim, c.hidden_layers, c.input_dim, false};
    e.task = {emu::TaskKind::TeacherRegression, c.seed, data_batches(c)};
    e.tokens = c.tokens;
    e.steps = c.steps;
    e.init_seed = c.init_seed;
    e.optimizer = {c.learning_rate, c.beta1, c.beta2, c.epsilon, c.weight_decay, 0.0f};
    emu::Numerics& n = e.numerics;
    n.precision = c.precision == GpuPrecision::Fp8 ? emu::Precision::Fp8 : emu::Precision::Bf16;
    n.recipe = c.recipe == GpuRecipe::Current     ? emu::Fp8Recipe::Current
               : c.recipe == GpuRecipe::Blockwise ? emu::Fp8Recipe::Blockwise
                                                  : emu::Fp8Recipe::Delayed;
    n.formats = {
        &emu::e4m3(), &emu::e4m3(),
        c.formats == emu::FormatRecipe::Hybrid && c.recipe != GpuRecipe::Blockwise ? &emu::e5m2() : &emu::e4m3()};
    n.delayed = c.delayed;
    n.fast_accumulation = {c.fast_accumulation, c.fast_accumulation_dgrad, c.fast_accumulation_wgrad};
    if (c.path == GpuPath::Emulated) n = c.numerics;
    return e;
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
