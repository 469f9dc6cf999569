// SPDX-License-Identifier: Apache-2.0
// The GPU trainer's configuration rules, model FLOPs, presets and names (in every build).
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/trainer.hpp"

#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/scaling/recipe.hpp"
#include "gpu/src/scaling/emulated_recipe.hpp"

namespace fp8lab::gpu {

std::string_view gpu_path_name(GpuPath p) { return p == GpuPath::Native ? "native" : "emulated"; }
std::string_view attention_kernel_name(AttentionKernel k) { return k == AttentionKernel::Fused ? "fused" : "gemms"; }
std::string_view emulated_speed_note() {
    return "emulated: exact numerics, operands quantised on the GPU and multiplied as BF16; fp8lab has no native "
           "kernels for these numerics on this GPU, so the time is not its hardware speed";
}
GpuPath gpu_path(const emu::Experiment& e) {
    return detail::native_path_can_run(e.numerics) ? GpuPath::Native : GpuPath::Emulated;
}

bool block_scaled(emu::Fp8Recipe recipe) { return emu::recipe(recipe).blocked(emu::BlockKind::Block); }

namespace {

using Refuse = std::function<void(const std::string&, const std::string&)>;

void multiple_of_16(const Refuse& refuse, const char* field, int value) {
    if (value % 16 != 0)
        refuse(field, "must be a multiple of 16 on the GPU (cuBLASLt's FP8 GEMMs), not " + std::to_string(value));
}

// What the GPU's transformer runs: BF16; FP8 with per-tensor delayed or current scaling and
// HYBRID formats, blockwise and rowwise, on the FP8 tensor cores (what the native casts
// implement); MX and NVFP4 emulated (every cast as the CPU's), and blockwise or rowwise
// where their settings leave the native casts; head sizes its attention kernels take.
void validate_transformer(const GpuRun& run, const Refuse& refuse) {
    const emu::Experiment& e = run.experiment;
    const emu::TransformerSpec& t = e.model.transformer;
    const emu::Numerics& n = e.numerics;
    multiple_of_16(refuse, "model.transformer.width", t.width);
    multiple_of_16(refuse, "model.transformer.ffn", t.ffn);
    multiple_of_16(refuse, "tokens", e.tokens);
    if (t.head_size() != 32 && t.head_size() != 64 && t.head_size() != 128)
        refuse("model.transformer.heads",
               "the GPU's attention kernels take head sizes (width / heads) of 32, 64 or "
               "128, not " +
                   std::to_string(t.head_size()));
    if (n.precision == emu::Precision::Fp32) refuse("numerics.precision", "the GPU trains BF16 or FP8, not FP32");
    if (n.precision == emu::Precision::Fp8) {
        const bool per_tensor = n.recipe == emu::Fp8Recipe::Current || n.recipe == emu::Fp8Recipe::Delayed;
        const bool emulated = n.recipe == emu::Fp8Recipe::MxFloor || n.recipe == emu::Fp8Recipe::MxRceil ||
                              n.recipe == emu::Fp8Recipe::Nvfp4 || n.recipe == emu::Fp8Recipe::Blockwise ||
                              n.recipe == emu::Fp8Recipe::Rowwise;
        if (!per_tensor && !emulated)
            refuse("numerics.recipe",
                   "the GPU's transformer runs per-tensor delayed or current scaling, blockwise and rowwise natively "
                   "and MX and NVFP4 emulated, not '" +
                       std::string(enum_name(n.recipe)) + "' (the CPU emulator runs every recipe)");
        if (per_tensor) {
            if (n.formats.input != &emu::e4m3() || n.formats.weight != &emu::e4m3() ||
                n.formats.gradient != &emu::e5m2())
                refuse("numerics.formats",
                       "the GPU's transformer casts per-tensor recipes HYBRID (E4M3 inputs and weights, E5M2 "
                       "gradients)");
            if (n.rounding.input != emu::RoundingMode::NearestEven ||
                n.rounding.weight != emu::RoundingMode::NearestEven ||
                n.rounding.gradient != emu::RoundingMode::NearestEven)
                refuse("numerics.rounding", "the GPU's transformer rounds per-tensor recipes to nearest-even");
            if (n.saturation != emu::Saturation::Finite) refuse("numerics.saturation", "the GPU's casts saturate");
        }
        if (!n.scaling) refuse("numerics.scaling", "the GPU's transformer scales every tensor");
    }
    if (n.fast_accumulation.any())
        refuse("numerics.fast_accumulation", "the GPU's transformer accumulates its FP8 GEMMs in full precision");
    if (n.loss_scaling) refuse("numerics.loss_scaling", "the GPU's transformer has no loss scaler");
}

void validate_mlp(const GpuRun& run, const Refuse& refuse) {
    const emu::Experiment& e = run.experiment;
    const auto multiple_of_16 = [&](const char* field, int value) { gpu::multiple_of_16(refuse, field, value); };
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
    if (e.task.kind != emu::TaskKind::TeacherRegression && e.task.kind != emu::TaskKind::OutlierFeatures)
        refuse("task.kind",
               "the GPU trainer has the mean squared error only (teacher regression and the outlier task)");
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
}

}  // namespace

void validate(const GpuRun& run) {
    const emu::Experiment& e = run.experiment;
    emu::validate(e);
    std::vector<std::string> refused;
    const auto refuse = [&](const std::string& field, const std::string& why) {
        refused.push_back(field + ": " + why);
    };
    if (e.model.kind == emu::ModelKind::Transformer) {
        validate_transformer(run, refuse);
    } else {
        validate_mlp(run, refuse);
    }
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

namespace {

// The transformer's linear layers' weights (the embedding's lookup is no GEMM; a tied
// output projection still runs its GEMMs).
double transformer_linear_parameters(const emu::TransformerSpec& t) {
    const double d = t.width, hs = t.head_size(), qw = t.heads * hs, kw = t.kv_heads * hs;
    return t.layers * (d * (qw + 2 * kw) + qw * d + 3 * double(t.ffn) * d) + 256.0 * d;
}

}  // namespace

double model_flops_per_step(const emu::Experiment& e) {
    if (e.model.kind == emu::ModelKind::Transformer) {
        // PaLM's appendix B: 6 N per token for the weights, and 12 layers x width x
        // sequence per token for attention's two products (forward and backward).
        const emu::TransformerSpec& t = e.model.transformer;
        return (6 * transformer_linear_parameters(t) + 12.0 * t.layers * t.width * t.sequence) * e.tokens;
    }
    const double d = e.model.input, h = e.model.hidden;
    const double parameters = d * h + h * h * (e.model.hidden_layers - 1) + h * d;
    return 6 * parameters * e.tokens;
}

double gemm_flops_per_step(const emu::Experiment& e) {
    if (e.model.kind == emu::ModelKind::Transformer)
        return 6 * transformer_linear_parameters(e.model.transformer) * e.tokens;  // cuBLASLt's GEMMs only
    const double m = e.tokens, d = e.model.input, h = e.model.hidden;
    const double first = 2 * m * d * h * 2;  // forward and wgrad (no dgrad into the input)
    const double hidden = 2 * m * h * h * 3 * (e.model.hidden_layers - 1);
    const double last = 2 * m * h * d * 3;
    return first + hidden + last;
}

double mlp_step_bytes(const emu::Experiment& e) {
    if (e.model.kind != emu::ModelKind::Mlp) return 0;
    const bool fp8 = e.numerics.precision == emu::Precision::Fp8;
    const emu::Recipe recipe = emu::recipe_of(e.numerics);
    if (fp8 && (gpu_path(e) != GpuPath::Native || !recipe.per_tensor())) return 0;
    const bool delayed = fp8 && recipe.rule == emu::ScaleRule::Delayed;
    const double m = e.tokens, d = e.model.input, h = e.model.hidden;
    std::vector<std::pair<double, double>> layers{{d, h}};  // (inputs, outputs) of each layer
    for (int i = 1; i < e.model.hidden_layers; ++i) layers.emplace_back(h, h);
    layers.emplace_back(h, d);
    const double operand = fp8 ? 1 : 2;  // bytes of a GEMM operand's element
    // A per-tensor FP8 cast writes the codes and their transpose; current scaling reads its
    // source once more for the amax first.
    const double reads = delayed ? 1 : 2;
    double bytes = 0;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const auto [in, out] = layers[l];
        const double p = in * out;
        const bool first = l == 0, last = l + 1 == layers.size();
        bytes += m * in * operand + p * operand + m * out * 2;              // forward GEMM, BF16 output
        bytes += m * out * operand + m * in * operand + p * 4;              // wgrad, float32 dW
        if (!first) bytes += m * out * operand + p * operand + m * in * 2;  // dgrad, BF16 dX
        bytes += p * 28;  // AdamW: w, m, v and dW read, w, m, v written
        // BF16: AdamW writes the BF16 copy of the weights; FP8: the forward casts them.
        bytes += fp8 ? p * (4 * reads + 2) : p * 2;
        if (fp8 && first) bytes += m * in * (2 * reads + 2);                // the batch's cast
        if (!last) bytes += fp8 ? m * out * (2 * reads + 2) : m * out * 4;  // GELU (and its output's cast)
        if (last) bytes += fp8 ? m * out * (4 * reads + 2) : m * out * 6;   // the loss and its gradient (cast)
        // GELU's backward into this layer's input gradient (and its cast: the plain codes
        // only where the layer below has a dgrad).
        if (!first) bytes += fp8 ? m * in * (4 * reads + (l > 1 ? 2 : 1)) : m * in * 6;
    }
    return bytes;
}

const std::vector<TransformerPreset>& transformer_presets() {
    static const std::vector<TransformerPreset> presets = {{"cpu-default", 128, 2, 4, 2, 384, 128, 8},
                                                           {"gpt2-small", 768, 12, 12, 12, 3072, 1024, 8},
                                                           {"wide", 4096, 2, 32, 8, 11008, 2048, 4}};
    return presets;
}

emu::Experiment transformer_preset_experiment(const TransformerPreset& p, emu::Precision precision, bool fused_qkv,
                                              int steps, emu::Fp8Recipe recipe) {
    emu::Experiment e = emu::default_transformer_experiment();
    e.numerics.precision = precision;
    emu::set_recipe(e, recipe);
    emu::TransformerSpec& t = e.model.transformer;
    t.width = p.width, t.layers = p.blocks, t.heads = p.heads, t.kv_heads = p.kv_heads, t.ffn = p.ffn;
    t.sequence = p.sequence, t.fused_qkv = fused_qkv;
    e.tokens = p.sequence * p.sequences;
    e.steps = steps;
    return e;
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
