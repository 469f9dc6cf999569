// SPDX-License-Identifier: Apache-2.0
// Training the MLP on the GPU: BF16 or FP8 GEMMs on tensor cores through cuBLASLt, fused
// cast/transpose/amax kernels, delayed scaling on the device, the step in a CUDA graph.
// No CUDA types here: the GUI, the labs and the CLI include this header in any build.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/scaling/tensor_numerics.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {

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

// A training run on the GPU: the experiment both backends take (its model, task, seeds,
// optimizer and numerics) and what only a GPU run has. The model: d -> h -> (h -> h)* -> d,
// tanh-GELU after every layer but the last, no biases (as in current LLM MLP blocks). The
// task and the initial weights are the CPU emulator's (emu::TrainingTask,
// emu::initial_weights: target = tanh(x Wt^T), BF16 data), made on the host and uploaded,
// so both backends start from the same bits; the batches stay on the device as a pool
// that the steps cycle through. The native path runs the per-tensor recipes and blockwise
// on the FP8 tensor cores (Hopper: see blockwise_unsupported_reason()), BF16 on the BF16
// ones; every other numeric setting takes the emulated path (gpu_path()).
struct GpuRun {
    emu::Experiment experiment;
    int warmup_steps = 10;     // run before timing (and before graph capture)
    bool use_graph = true;     // replay the captured step; false launches each kernel
    bool record_trace = true;  // FP8: amax and scale of every tensor at every step
    bool text_report = true;   // the transformer: validation loss and samples (speed runs leave them out)
    // The transformer: GEMMs is attention through memory, for comparison; fused (the default)
    // runs where the head size allows, GEMMs elsewhere (the result says which ran).
    AttentionKernel attention = AttentionKernel::Fused;
    // FP8, either model, either path: every recorded cast's numerics (those the CPU trainer
    // records), counted in the cast kernels (train --stats). Off, the kernels skip that work.
    bool record_numerics = false;
    // The transformer's FP8 layers: SwiGLU and its gradient computed by the casts that read
    // them, and delayed scaling's weight casts done by AdamW, each without a pass of its own.
    // False writes them out and casts them in passes of their own: the same bits, slower (a
    // test compares the two).
    bool fuse_into_casts = true;
};

// The path that runs an experiment's numerics on the GPU.
GpuPath gpu_path(const emu::Experiment& experiment);
// Whether the native path's GEMMs for a recipe take 1 x 128 or 128 x 128 block scales,
// which cuBLASLt runs without fast accumulation.
bool block_scaled(emu::Fp8Recipe recipe);

// Throws std::invalid_argument naming every field of the experiment the GPU trainer cannot
// run (cuBLASLt's FP8 kernels need every GEMM dimension to be a positive multiple of 16),
// and the GPU-only settings out of range: nothing is dropped or replaced silently.
void validate(const GpuRun& run);

// The experiment `fp8lab bench gpu` and the crossover sweep measure at d, h and M: one
// hidden layer, delayed scaling with a history of 16, fast accumulation in the forward
// GEMMs, as many distinct batches as fit in 256 MiB (1 to 16).
emu::Experiment gpu_bench_experiment(int input_dim, int hidden_dim, int tokens);

// The model FLOPs of one step, by the usual convention of model FLOPs utilisation (PaLM,
// appendix B): 6 x parameters x tokens, a forward and a backward of twice its cost,
// whatever an implementation leaves out or repeats.
double model_flops_per_step(const emu::Experiment& experiment);
// The FLOPs of the GEMMs this step runs: 2 x rows x inputs x outputs for the forward,
// dgrad and wgrad of every layer but the first layer's dgrad (its input is data, it needs
// no gradient), so 5/6 of the model FLOPs with one hidden layer.
double gemm_flops_per_step(const emu::Experiment& experiment);

// The bytes the native MLP step's kernels read and write in memory (each kernel reading its
// inputs and writing its outputs once; BF16 and per-tensor FP8), 0 for the other recipes
// and the transformer: what a memory-bound step needs at least.
double mlp_step_bytes(const emu::Experiment& experiment);

struct GpuTrainResult {
    std::vector<float> loss;    // per step (warm-up steps included, they train too)
    double median_step_ms = 0;  // CUDA events around each replay, after warm-up
    double tokens_per_second = 0;
    double model_tflops = 0;              // model_flops_per_step / median step time
    double gemm_tflops = 0;               // gemm_flops_per_step / median step time
    double step_bytes = 0;                // mlp_step_bytes (0: not counted)
    double memory_gbps = 0;               // step_bytes / median step time, in GB/s
    std::uint64_t peak_memory_bytes = 0;  // device memory this run took (cudaMemGetInfo)
    int timed_steps = 0;
    std::string device;
    emu::AmaxTrace trace;                       // FP8 with record_trace: the emulator's trace format
    std::vector<emu::TensorNumerics> numerics;  // with record_numerics: per step and tensor, as the CPU's
    bool cancelled = false;
    GpuPath path = GpuPath::Native;                      // emulated: the speed is Hopper emulating the recipe
    AttentionKernel attention = AttentionKernel::Gemms;  // the transformer's, as it ran
    std::vector<float> loss_scale;                       // emulated path: the loss scale of each step
    std::vector<std::size_t> skipped_steps;              // emulated path: steps not applied (a gradient not finite)
    std::optional<emu::TextReport> text;  // the transformer: corpus, validation loss, samples (as the CPU's)
    // Mean of the last min(10, steps) losses: the batches cycle through the pool, so one
    // step's loss depends on which batch it saw.
    double final_loss() const;
};

// Called every few steps with the number of steps done and the losses so far; returning
// false cancels (the result then holds the steps done and cancelled = true).
using GpuProgress = std::function<bool(int steps_done, const std::vector<float>& loss)>;

// Throws GpuUnavailable (tensor_ops.hpp) with probe()'s reason when no FP8-capable GPU can
// run, std::invalid_argument for a bad configuration, GpuError when CUDA fails.
GpuTrainResult train_mlp_on_gpu(const GpuRun& run, const GpuProgress& progress = {});
// The byte-level transformer (model.kind "transformer"): BF16, FP8 per-tensor delayed or
// current scaling with HYBRID formats on the FP8 tensor cores, or MX, NVFP4 and blockwise
// emulated (result.path says which); the training loss per step, the timing, and the text
// report the CPU gives (the validation loss every task.eval_every steps, between the timed
// steps, and the samples after the last).
GpuTrainResult train_transformer_on_gpu(const GpuRun& run, const GpuProgress& progress = {});
// The GPU's one training entry, whichever the model: the trainer of run.experiment.model.kind
// from the GPU's table of models (gpu/src/models/gpu_training.cpp). Callers use this, and
// never branch on the model themselves.
GpuTrainResult train_on_gpu(const GpuRun& run, const GpuProgress& progress = {});

// What the device holds before the first step, read back: layer 0's float32 weights and
// batch 0's inputs and targets (as floats). Tests compare them with the emulator's.
struct GpuInitialState {
    std::vector<float> first_weights, first_inputs, first_targets;
};
GpuInitialState gpu_initial_state(const GpuRun& run);

// The shapes `fp8lab bench gpu` measures: tiny 768/3072/32, small 768/3072/8192,
// medium 1024/4096/16384, large 4096/16384/16384 (d / h / tokens).
struct GpuPreset {
    std::string name;
    int input_dim, hidden_dim, tokens;
};
const std::vector<GpuPreset>& gpu_presets();

// The transformer's sizes measured on the GPU: the CPU default (128 x 2 blocks, sequences of
// 128), a GPT-2-small-like one (768 x 12, 12 heads, sequences of 1024) and a wide one where
// the GEMMs dominate (4096 x 2, 32/8 heads, sequences of 2048).
struct TransformerPreset {
    std::string name;
    int width, blocks, heads, kv_heads, ffn, sequence, sequences;
};
const std::vector<TransformerPreset>& transformer_presets();
// The default transformer experiment at a preset's size, at the given precision and FP8
// recipe (per tensor: current or delayed, HYBRID), fused QKV or not.
emu::Experiment transformer_preset_experiment(const TransformerPreset& preset, emu::Precision precision, bool fused_qkv,
                                              int steps, emu::Fp8Recipe recipe = emu::Fp8Recipe::Current);

}  // namespace fp8lab::gpu
