// The GPU trainer's configuration rules, model FLOPs, presets and names (in every build).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/trainer.hpp"

#include "emulator/mlp_trainer.hpp"
#include "emulator/recipe.hpp"
#include "gpu/src/emulated_recipe.hpp"

namespace fp8lab::gpu {

std::string_view gpu_path_name(GpuPath p) { return p == GpuPath::Native ? "native" : "emulated"; }
std::string_view emulated_speed_note() {
    return "emulated: exact numerics, operands quantised on the GPU and multiplied as BF16; fp8lab has no native "
           "kernels for these numerics on this GPU, so the time is not its hardware speed";
}
GpuPath gpu_path(const emu::Experiment& e) {
    return detail::native_path_can_run(e.numerics) ? GpuPath::Native : GpuPath::Emulated;
}

bool block_scaled(emu::Fp8Recipe recipe) { return emu::recipe(recipe).blocked(emu::BlockKind::Block); }

void validate(const GpuRun& run) {
    const emu::Experiment& e = run.experiment;
    emu::validate(e);
    std::vector<std::string> refused;
    const auto refuse = [&](const std::string& field, const std::string& why) {
        refused.push_back(field + ": " + why);
    };
    const auto multiple_of_16 = [&](const char* field, int value) {
        if (value % 16 != 0)
            refuse(field, "must be a multiple of 16 on the GPU (cuBLASLt's FP8 GEMMs), not " + std::to_string(value));
    };
    if (e.model.kind != emu::ModelKind::Mlp)
        refuse("model.kind", "the GPU backend trains the MLP; the transformer trains on the CPU emulator for now");
    multiple_of_16("model.input", e.model.input);
    multiple_of_16("model.hidden", e.model.hidden);
    multiple_of_16("tokens", e.tokens);
    if (e.model.hidden_layers > 16)
        refuse("model.hidden_layers",
               "the GPU trainer has 1 to 16 hidden layers, not " + std::to_string(e.model.hidden_layers));
    const emu::Numerics& n = e.numerics;
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
    const bool native = gpu_path(e) == GpuPath::Native;
    if (!native && n.fast_accumulation.any())
        refuse("numerics.fast_accumulation",
               "these numerics run on the GPU's emulated path, whose GEMMs multiply in BF16: fast accumulation is a "
               "mode of the FP8 tensor cores' GEMMs only");
    if (native && n.precision == emu::Precision::Fp8 && emu::recipe(n.recipe).blocked(emu::BlockKind::Block) &&
        n.fast_accumulation.any())
        refuse("numerics.fast_accumulation",
               "blockwise scaling needs fast accumulation off: cuBLASLt's block-scaled FP8 GEMMs always promote their "
               "partial sums");
    if (run.warmup_steps < 1)
        refuse("warm-up steps",
               "at least 1 (the first step picks the GEMM kernels), not " + std::to_string(run.warmup_steps));
    if (!refused.empty()) {
        std::string text = "the GPU backend cannot run this experiment:";
        for (const std::string& r : refused) text += "\n  " + r;
        throw std::invalid_argument(text + "\nRun it on the CPU emulator, or change these settings.");
    }
}

emu::Experiment gpu_bench_experiment(int input_dim, int hidden_dim, int tokens) {
    emu::Experiment e;
    e.model.input = e.model.output = input_dim;
    e.model.hidden = hidden_dim;
    e.model.hidden_layers = 1;
    e.tokens = tokens;
    e.numerics.delayed.history_length = 16;
    e.numerics.fast_accumulation.forward = true;
    const double bytes = 2.0 * tokens * double(input_dim) * 2;  // BF16 inputs and targets
    e.task.batches = int(std::clamp(std::floor(double(256u << 20) / bytes), 1.0, 16.0));
    return e;
}

double model_flops_per_step(const emu::Experiment& e) {
    const double d = e.model.input, h = e.model.hidden;
    const double parameters = d * h + h * h * (e.model.hidden_layers - 1) + h * d;
    return 6 * parameters * e.tokens;
}

double gemm_flops_per_step(const emu::Experiment& e) {
    const double m = e.tokens, d = e.model.input, h = e.model.hidden;
    const double first = 2 * m * d * h * 2;  // forward and wgrad (no dgrad into the input)
    const double hidden = 2 * m * h * h * 3 * (e.model.hidden_layers - 1);
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
