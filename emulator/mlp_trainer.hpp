// The CPU reference trainer: an MLP with GELU, AdamW on float32 master weights, and
// GEMM operands in FP32, BF16 or FP8 (any recipe), emulated bit-exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/amax_trace.hpp"
#include "emulator/loss_scaler.hpp"
#include "emulator/operand_quantizer.hpp"
#include "emulator/training_task.hpp"

namespace fp8lab::emu {

enum class Precision { Fp32, Bf16, Fp8 };
std::string_view precision_name(Precision p);  // "fp32", "bf16", "fp8"

struct TrainerConfig {
    TaskConfig task;              // input and output sizes, task kind, data seed
    int hidden_dim = 128;
    int hidden_layers = 2;        // linear layers = hidden_layers + 1
    int tokens = 128;             // batch rows per step
    int steps = 200;
    float learning_rate = 2e-3f;
    float weight_decay = 0.01f;
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    float grad_clip = 1.0f;       // global L2 norm; 0 disables
    std::uint64_t init_seed = 1;
    Precision precision = Precision::Fp8;
    Fp8Settings fp8;
    bool first_last_in_bf16 = false;  // FP8 only: keep the first and last layer in BF16
    bool loss_scaling = false;        // dynamic loss scaling (GradScaler)
    LossScalerConfig loss_scaler;
    bool record_trace = true;
};

// The mean of the last min(10, n) losses: batches differ from step to step, so one step's
// loss depends on which batch it saw. Every "final loss" in fp8lab (CPU and GPU) is this.
double final_loss(const std::vector<float>& loss);

// One linear layer's trained parameters (weight row-major, outputs x inputs).
struct LayerWeights {
    int inputs = 0, outputs = 0;
    std::vector<float> weight, bias;
};

struct TrainerResult {
    std::vector<float> loss;       // per step
    std::vector<float> accuracy;   // per step, classification only
    AmaxTrace trace;
    std::uint64_t gradient_elements = 0, gradients_flushed = 0;  // FP8 gradient operands
    std::vector<float> loss_scale;            // per step, with loss scaling
    std::vector<std::size_t> skipped_steps;   // overflowed steps, with loss scaling
    std::map<std::string, DelayedScalingState> scaling;  // per tensor, delayed scaling only
    std::vector<LayerWeights> final_layers;   // the parameters after the last step (inference labs)
    bool cancelled = false;
    double flushed_fraction() const {
        return gradient_elements ? double(gradients_flushed) / double(gradient_elements) : 0.0;
    }
};

// Called after every step with its loss; returning false cancels the run (the result
// then holds the steps done so far and cancelled = true).
using TrainStepCallback = std::function<bool(int step, float loss)>;

// Throws std::invalid_argument naming the setting when the configuration is unusable.
// The hidden activation is GELU's tanh approximation; the loss is the mean squared error
// (regression) or the mean softmax cross-entropy (classification).
TrainerResult train_mlp(const TrainerConfig& config, const TrainStepCallback& on_step = {});

// One linear layer's parameters (weight row-major, outputs x inputs) and their gradients.
struct LayerGradients {
    int inputs = 0, outputs = 0;
    std::vector<float> weight, bias, weight_grad, bias_grad;
};
struct GradientSnapshot {
    float loss = 0;
    std::vector<LayerGradients> layers;
};
// The initial parameters and the gradients the backward pass computes for step 0's
// batch, without updating: what a finite-difference check compares against.
GradientSnapshot first_step_gradients(const TrainerConfig& config);

}  // namespace fp8lab::emu
