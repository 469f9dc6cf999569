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

namespace fp8lab::gpu {

enum class GpuPrecision { Bf16, Fp8 };
// Delayed and current scale per tensor; blockwise (DeepSeek-V3) scales 1 x 128 blocks of
// activations and gradients and 128 x 128 tiles of weights, E4M3 everywhere, through
// cuBLASLt's block-scaled GEMMs (Hopper only: see blockwise_unsupported_reason()).
enum class GpuRecipe { Delayed, Current, Blockwise };
std::string_view gpu_precision_name(GpuPrecision p);  // "bf16" / "fp8"
std::string_view gpu_recipe_name(GpuRecipe r);        // "delayed" / "current" / "blockwise"

// The model: d -> h -> (h -> h)* -> d, tanh-GELU after every layer but the last, no
// biases (as in current LLM MLP blocks). The task: regress a fixed random teacher,
// target = tanh(x Wt^T) with x ~ N(0, 1), mean squared error. Batches come from a pool
// generated on the device from the seed (the same pool for BF16 and FP8).
struct GpuTrainConfig {
    int input_dim = 768;   // d, also the output size
    int hidden_dim = 3072; // h
    int tokens = 32;       // M, rows per step
    int hidden_layers = 1; // GELU layers; linear layers = hidden_layers + 1
    GpuPrecision precision = GpuPrecision::Fp8;
    GpuRecipe recipe = GpuRecipe::Delayed;
    emu::FormatRecipe formats = emu::FormatRecipe::Hybrid;  // blockwise: E4M3 whatever this says
    emu::DelayedScalingConfig delayed{16, emu::AmaxAlgorithm::Max, 0};
    bool fast_accumulation = true;  // forward GEMMs only; dgrad and wgrad always promote;
                                    // blockwise needs it off (cuBLASLt has none for block scales)
    int steps = 200;
    int warmup_steps = 10;          // run before timing (and before graph capture)
    float learning_rate = 1e-3f;
    float weight_decay = 0.0f;
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    std::uint64_t seed = 1;
    bool use_graph = true;          // replay the captured step; false launches each kernel
    bool record_trace = true;       // FP8: amax and scale of every tensor at every step
};

// Throws std::invalid_argument naming the setting or the dimension (cuBLASLt's FP8
// kernels need every GEMM dimension to be a positive multiple of 16).
void validate(const GpuTrainConfig& config);

// The model FLOPs of one step, by the usual convention of model FLOPs utilisation (PaLM,
// appendix B): 6 x parameters x tokens, a forward and a backward of twice its cost,
// whatever an implementation leaves out or repeats.
double model_flops_per_step(const GpuTrainConfig& config);
// The FLOPs of the GEMMs this step runs: 2 x rows x inputs x outputs for the forward,
// dgrad and wgrad of every layer but the first layer's dgrad (its input is data, it needs
// no gradient), so 5/6 of the model FLOPs with one hidden layer.
double gemm_flops_per_step(const GpuTrainConfig& config);

struct GpuTrainResult {
    std::vector<float> loss;        // per step (warm-up steps included, they train too)
    double median_step_ms = 0;      // CUDA events around each replay, after warm-up
    double tokens_per_second = 0;
    double model_tflops = 0;        // model_flops_per_step / median step time
    double gemm_tflops = 0;         // gemm_flops_per_step / median step time
    std::uint64_t peak_memory_bytes = 0;  // device memory this run took (cudaMemGetInfo)
    int timed_steps = 0;
    std::string device;
    emu::AmaxTrace trace;           // FP8 with record_trace: the emulator's trace format
    bool cancelled = false;
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

// The shapes `fp8lab bench gpu` measures (issue 4): tiny 768/3072/32, small 768/3072/8192,
// medium 1024/4096/16384, large 4096/16384/16384 (d / h / tokens).
struct GpuPreset {
    std::string name;
    int input_dim, hidden_dim, tokens;
};
const std::vector<GpuPreset>& gpu_presets();

}  // namespace fp8lab::gpu
