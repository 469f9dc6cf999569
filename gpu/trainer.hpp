// Training the MLP on the GPU: BF16 or FP8 GEMMs on tensor cores through cuBLASLt, fused
// cast/transpose/amax kernels, delayed scaling on the device, the step in a CUDA graph.
// No CUDA types here: the GUI, the labs and the CLI include this header in any build.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/amax_trace.hpp"
#include "emulator/delayed_scaling.hpp"
#include "emulator/experiment.hpp"

namespace fp8lab::gpu {

enum class GpuPrecision { Bf16, Fp8 };
// Delayed and current scale per tensor; blockwise (DeepSeek-V3) scales 1 x 128 blocks of
// activations and gradients and 128 x 128 tiles of weights, E4M3 everywhere, through
// cuBLASLt's block-scaled GEMMs (Hopper only: see blockwise_unsupported_reason()).
enum class GpuRecipe { Delayed, Current, Blockwise };
// Native: BF16 or FP8 GEMMs on the tensor cores (the settings below). Emulated: for
// numerics the FP8 tensor cores cannot run (MX, NVFP4, FP6/FP4 elements, stochastic
// rounding, scaling off, BF16 edge layers, loss scaling), every GEMM operand quantised
// exactly as the CPU trainer does (codes and scales equal bit for bit), written as BF16,
// multiplied in BF16 with float32 accumulation. Hopper has no MX or NVFP4 tensor cores:
// an emulated run's speed is this emulation's, never that hardware's.
enum class GpuPath { Native, Emulated };
std::string_view gpu_path_name(GpuPath p);  // "native" / "emulated"
// What every time of an emulated run carries (bench table and JSON, training panel, CLI).
std::string_view emulated_speed_note();
std::string_view gpu_precision_name(GpuPrecision p);  // "bf16" / "fp8"
std::string_view gpu_recipe_name(GpuRecipe r);        // "delayed" / "current" / "blockwise"

// The model: d -> h -> (h -> h)* -> d, tanh-GELU after every layer but the last, no
// biases (as in current LLM MLP blocks). The task and the initial weights are the CPU
// emulator's (emu::TrainingTask, emu::initial_weights: target = tanh(x Wt^T), BF16 data),
// made on the host and uploaded, so both backends start from the same bits; the batches
// stay on the device as a pool that the steps cycle through.
struct GpuTrainConfig {
    int input_dim = 768;    // d, also the output size
    int hidden_dim = 3072;  // h
    int tokens = 32;        // M, rows per step
    int hidden_layers = 1;  // GELU layers; linear layers = hidden_layers + 1
    GpuPrecision precision = GpuPrecision::Fp8;
    GpuRecipe recipe = GpuRecipe::Delayed;
    emu::FormatRecipe formats = emu::FormatRecipe::Hybrid;  // blockwise: E4M3 whatever this says
    emu::DelayedScalingConfig delayed{16, emu::AmaxAlgorithm::Max, 0};
    bool fast_accumulation = true;  // of the forward GEMMs; blockwise needs every one off
                                    // (cuBLASLt has none for block scales)
    bool fast_accumulation_dgrad = false, fast_accumulation_wgrad = false;
    int steps = 200;
    int warmup_steps = 10;  // run before timing (and before graph capture)
    float learning_rate = 1e-3f;
    float weight_decay = 0.0f;
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    std::uint64_t seed = 1;       // the task's (data) seed
    std::uint64_t init_seed = 1;  // the initial weights' seed
    int data_batches = 0;         // distinct batches; 0: as many as fit in 256 MiB (1 to 16)
    bool use_graph = true;        // replay the captured step; false launches each kernel
    bool record_trace = true;     // FP8: amax and scale of every tensor at every step
    GpuPath path = GpuPath::Native;
    emu::Numerics numerics;  // Emulated: every numeric setting (the fields above are unused)
};

// Throws std::invalid_argument naming the setting or the dimension (cuBLASLt's FP8
// kernels need every GEMM dimension to be a positive multiple of 16).
void validate(const GpuTrainConfig& config);

// The GPU's configuration of an experiment (steps, warm-up, graph and trace at their
// defaults), on the native path where it can run the numerics, else the emulated one.
// Throws std::invalid_argument naming every field of the experiment the GPU trainer cannot
// run, with the reason: nothing is dropped or replaced silently.
GpuTrainConfig gpu_config(const emu::Experiment& experiment);
// The experiment a configuration trains (its model, task, seeds and optimizer): what the
// host makes the data and the initial weights from.
emu::Experiment experiment_of(const GpuTrainConfig& config);
// The distinct batches the device holds for a configuration.
int data_batches(const GpuTrainConfig& config);

// The model FLOPs of one step, by the usual convention of model FLOPs utilisation (PaLM,
// appendix B): 6 x parameters x tokens, a forward and a backward of twice its cost,
// whatever an implementation leaves out or repeats.
double model_flops_per_step(const GpuTrainConfig& config);
// The FLOPs of the GEMMs this step runs: 2 x rows x inputs x outputs for the forward,
// dgrad and wgrad of every layer but the first layer's dgrad (its input is data, it needs
// no gradient), so 5/6 of the model FLOPs with one hidden layer.
double gemm_flops_per_step(const GpuTrainConfig& config);

struct GpuTrainResult {
    std::vector<float> loss;    // per step (warm-up steps included, they train too)
    double median_step_ms = 0;  // CUDA events around each replay, after warm-up
    double tokens_per_second = 0;
    double model_tflops = 0;              // model_flops_per_step / median step time
    double gemm_tflops = 0;               // gemm_flops_per_step / median step time
    std::uint64_t peak_memory_bytes = 0;  // device memory this run took (cudaMemGetInfo)
    int timed_steps = 0;
    std::string device;
    emu::AmaxTrace trace;  // FP8 with record_trace: the emulator's trace format
    bool cancelled = false;
    GpuPath path = GpuPath::Native;          // emulated: the speed is Hopper emulating the recipe
    std::vector<float> loss_scale;           // emulated path: the loss scale of each step
    std::vector<std::size_t> skipped_steps;  // emulated path: steps not applied (a gradient not finite)
    // Mean of the last min(10, steps) losses: the batches cycle through the pool, so one
    // step's loss depends on which batch it saw.
    double final_loss() const;
};

// Called every few steps with the number of steps done and the losses so far; returning
// false cancels (the result then holds the steps done and cancelled = true).
using GpuProgress = std::function<bool(int steps_done, const std::vector<float>& loss)>;

// Throws GpuUnavailable (tensor_ops.hpp) with probe()'s reason when no FP8-capable GPU can
// run, std::invalid_argument for a bad configuration, GpuError when CUDA fails.
GpuTrainResult train_mlp_on_gpu(const GpuTrainConfig& config, const GpuProgress& progress = {});

// What the device holds before the first step, read back: layer 0's float32 weights and
// batch 0's inputs and targets (as floats). Tests compare them with the emulator's.
struct GpuInitialState {
    std::vector<float> first_weights, first_inputs, first_targets;
};
GpuInitialState gpu_initial_state(const GpuTrainConfig& config);

// The shapes `fp8lab bench gpu` measures: tiny 768/3072/32, small 768/3072/8192,
// medium 1024/4096/16384, large 4096/16384/16384 (d / h / tokens).
struct GpuPreset {
    std::string name;
    int input_dim, hidden_dim, tokens;
};
const std::vector<GpuPreset>& gpu_presets();

}  // namespace fp8lab::gpu
