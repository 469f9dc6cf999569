// SPDX-License-Identifier: Apache-2.0
// The one description of a training experiment that both backends take: the model, the
// task, the optimizer and every numeric setting. Plain data, saved and read as JSON.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/training/inference_spec.hpp"
#include "emulator/scaling/loss_scaler.hpp"
#include "emulator/scaling/recipe.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

enum class Precision { Fp32, Bf16, Fp8 };  // Fp8: the quantised family, any recipe below
enum class TaskKind { TeacherRegression, GaussianClusters, Text, OutlierFeatures };
enum class ModelKind { Mlp, Transformer };

std::string_view precision_name(Precision p);    // "fp32", "bf16", "fp8"
std::string_view task_kind_name(TaskKind kind);  // "teacher", "clusters", "text", "outliers"
// The MLP tasks trained on the mean squared error (the teacher and the outlier task).
constexpr bool is_regression(TaskKind kind) {
    return kind == TaskKind::TeacherRegression || kind == TaskKind::OutlierFeatures;
}

// A byte-level decoder-only language model (vocabulary 256): token embeddings, `layers`
// blocks of RMSNorm -> grouped-query attention with rotary positions -> output projection
// -> residual, RMSNorm -> SwiGLU -> residual; a final RMSNorm and the output projection to
// 256 logits. Every linear layer's GEMMs run under the experiment's numerics (the output
// projection in BF16 unless `output_bf16` is off); embeddings, norms, rotary, softmax,
// residuals and the loss stay in float32; attention's two batched products in BF16.
struct TransformerSpec {
    int width = 128;
    int layers = 2;
    int heads = 4;     // query heads; the head size is width / heads
    int kv_heads = 2;  // key/value heads, each shared by heads / kv_heads query heads
    int ffn = 384;     // SwiGLU's inner width (gate and up each)
    int sequence = 128;
    bool fused_qkv = true;     // one QKV projection (one weight, one scale) or three
    bool tied_output = false;  // the output projection is the embedding's transpose
    bool output_bf16 = true;   // the output projection in BF16 under FP8 numerics
    int head_size() const { return width / heads; }
};

// The MLP: input -> hidden (x hidden_layers, GELU after each) -> output; or the transformer.
struct ModelSpec {
    int input = 64;
    int hidden = 256;
    int hidden_layers = 1;
    int output = 64;
    bool biases = false;  // off by default, as in current LLM MLP blocks (and on the GPU)
    ModelKind kind = ModelKind::Mlp;
    TransformerSpec transformer;
    static ModelSpec mlp(int input, int hidden, int hidden_layers, int output, bool biases) {
        ModelSpec m;
        m.input = input, m.hidden = hidden, m.hidden_layers = hidden_layers, m.output = output, m.biases = biases;
        return m;
    }
};

// Where the text task reads its corpus when the experiment names none: the plain-text
// files of Debian's `fortunes` package (quotations, literature, poems; about 2.6 MB).
// The outlier task's massive input channels: both in the first 32 (one MX block, one
// 128-wide block), so block scaling confines them while a per-tensor scale cannot.
inline constexpr std::array<int, 2> kOutlierChannels{5, 21};

inline constexpr std::string_view kDefaultCorpus = "/usr/share/games/fortunes";

// The data: `batches` distinct batches of `tokens` rows made from the seed; step s
// trains on batch s mod batches, so a GPU can hold them all and both backends see the
// same rows at the same step.
// The outlier task: the teacher's regression with one row in 32 holding "massive" values,
// `outlier_scale` times the others' standard deviation, in two channels (training_task.hpp).
// The text task (the transformer's): windows of the corpus drawn from the seed, a fixed
// validation split, its loss in bits per byte every `eval_every` steps over `eval_sequences`
// fixed windows.
struct TaskSpec {
    TaskKind kind = TaskKind::TeacherRegression;
    std::uint64_t seed = 1;
    int batches = 16;
    std::string corpus = std::string(kDefaultCorpus);  // a file, or a folder of plain-text files
    int eval_every = 50;
    int eval_sequences = 16;
    float outlier_scale = 1e5f;  // the outlier task's massive values, in the others' sd
};

// The learning rate of each step: constant, or a linear warm-up to the optimizer's rate
// followed by a cosine decay to floor x that rate at the last step (both backends read
// the same table, learning_rates()).
enum class LrScheduleKind { Constant, WarmupCosine };
struct LrSchedule {
    LrScheduleKind kind = LrScheduleKind::Constant;
    int warmup_steps = 0;
    float floor = 0.1f;  // of the peak rate, at the last step
};

struct OptimizerSpec {  // AdamW on float32 master weights
    float learning_rate = 1e-3f;
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    float weight_decay = 0.0f;  // decoupled, applied to weights (not biases)
    float grad_clip = 0.0f;     // global L2 norm; 0 disables
    LrSchedule schedule;        // constant unless set (the labs' experiments warm up and decay)
};

// cuBLASLt's FAST_ACCUM per FP8 GEMM of the per-tensor recipes: the GPU's tensor cores'
// own accumulator, or on the CPU the model below.
struct FastAccumulation {
    bool forward = false, dgrad = false, wgrad = false;
    bool any() const { return forward || dgrad || wgrad; }
};

// The CPU emulator's model of fast accumulation: a narrow accumulator keeping this many
// fraction bits, truncated after every addition and never promoted to float32. NVIDIA does
// not document Hopper's FP8 accumulator; the DeepSeek-V3 report estimates about 14
// significant bits (13 fraction bits and the leading one). Lab 10's accumulation step
// plots the model at this width by default.
inline constexpr int kFastAccumulationFractionBits = 13;

struct Nvfp4Training {                 // Transformer Engine's NVFP4BlockScaling options
    bool weight_tiles = true;          // 16x16 blocks for weights (1x16 otherwise)
    bool stochastic_gradients = true;  // stochastic rounding of the gradients' elements
    bool hadamard_wgrad = true;        // random Hadamard transform of both wgrad operands
};

struct Numerics {
    Precision precision = Precision::Fp8;
    Fp8Recipe recipe = Fp8Recipe::Delayed;
    PerRole<const Format*> formats{&e4m3(), &e4m3(), &e5m2()};  // HYBRID
    // nearest-even or stochastic, per role (the per-tensor, MX and blockwise casts).
    PerRole<RoundingMode> rounding{RoundingMode::NearestEven, RoundingMode::NearestEven, RoundingMode::NearestEven};
    Saturation saturation = Saturation::Finite;  // of the casts; none lets overflow become Inf/NaN
    bool scaling = true;                         // false: scale 1 everywhere (shows underflow)
    DelayedScalingConfig delayed;                // history 1024, max, margin 0
    FastAccumulation fast_accumulation;
    bool edge_layers_bf16 = false;  // the first and the last layer in BF16, the rest quantised
    bool loss_scaling = false;      // dynamic loss scaling (GradScaler's rules)
    LossScalerConfig loss_scaler;
    Nvfp4Training nvfp4;
};

// The experiment's recipe as it casts: the table's entry with the numerics' element formats,
// rounding and saturation, NVFP4's options, and scale 1 everywhere when scaling is off.
Recipe recipe_of(const Numerics& numerics);

struct Experiment {
    // 2: the model's kind and the transformer, the text task. Version 1 files still load.
    static constexpr int kVersion = 2;
    ModelSpec model;
    TaskSpec task;
    int tokens = 128;  // rows per step
    int steps = 200;
    std::uint64_t init_seed = 1;
    // A comparison trains every variant `seeds` times: run k from task.seed + k and
    // init_seed + k (with_seed), and shows the spread beside the mean.
    int seeds = 1;
    OptimizerSpec optimizer;
    Numerics numerics;
    InferenceSpec inference;  // after training: the model quantised for inference, evaluated

    int linear_layers() const { return model.hidden_layers + 1; }
    bool operator==(const Experiment& other) const;
};

// The transformer experiment the labs and `train --model transformer` start from: 2 blocks of
// width 128, 4 query and 2 key/value heads, sequences of 128 bytes, 8 a step, 200 steps, the
// learning-rate schedule on, FP8 delayed scaling (HYBRID) with the output projection in BF16.
Experiment default_transformer_experiment();

// The same experiment at another precision: the comparison runs BF16 and FP8 this way.
Experiment with_precision(Experiment e, Precision p);
// Run k (from 0) of an experiment's seeds: its data and initial weights from task.seed + k
// and init_seed + k, trained once (seeds 1).
Experiment with_seed(Experiment e, int k);

// The learning rate of each of the experiment's steps (computed in float64, rounded once to
// float32): what the CPU trainer and the GPU's AdamW kernels read, step by step.
std::vector<float> learning_rates(const Experiment& e);

// Throws std::invalid_argument "FIELD: reason" (FIELD as in the JSON, e.g.
// "numerics.delayed.history") for any value out of its range or not allowed together.
void validate(const Experiment& e);

// The recipe and its element formats: the ones it fixes (blockwise E4M3, NVFP4 E2M1) or
// its defaults, which a caller may change after (per tensor: hybrid; MX: E4M3 everywhere,
// as Transformer Engine's MXFP8BlockScaling).
void set_recipe(Experiment& e, Fp8Recipe recipe);
// Every role's element format, when `format` is an element format; BF16 and FP16 (no
// element format) leave the roles as they are, so a step's "all formats" choice can list them.
void set_all_formats(Experiment& e, const Format& format);

// The JSON form (a version field first, every setting named).
std::string to_json(const Experiment& e);
// Throws std::runtime_error "SOURCE:LINE: FIELD: reason" for malformed JSON, an unknown or
// mistyped field, a value out of range or a file of a newer version. Missing fields keep
// their defaults.
Experiment experiment_from_json(std::string_view text, std::string_view source);

// The model trained, in words for a title: "MLP (3 linear layers, width 256)",
// "Transformer on text (2 blocks of width 128)".
std::string model_name(const Experiment& experiment);

// One line for lists and legends: "768-3072-768, 32 tokens, FP8 delayed hybrid, ...".
std::string describe(const Experiment& e);
// The inference evaluation alone: "inference with e4m3 weights per-channel, e4m3
// activations static (8 calibration batches)".
std::string describe_inference(const InferenceSpec& inference);
// The numerics alone: "FP8 delayed (E4M3/E4M3/E5M2), history 1024 max margin 0".
std::string describe_numerics(const Experiment& e);
// The steps a run did not apply, as both backends report them: "3 of 200 steps not
// applied: a weight gradient was not finite (the loss scaler backed off each time)".
std::string describe_skipped_steps(std::size_t skipped, std::size_t steps, bool loss_scaling);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::Precision>> enum_names<emu::Precision>();
template <>
std::span<const EnumName<emu::TaskKind>> enum_names<emu::TaskKind>();
template <>
std::span<const EnumName<emu::LrScheduleKind>> enum_names<emu::LrScheduleKind>();
template <>
std::span<const EnumName<emu::ModelKind>> enum_names<emu::ModelKind>();
}  // namespace fp8lab
