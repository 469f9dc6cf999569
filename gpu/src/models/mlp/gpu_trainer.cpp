// SPDX-License-Identifier: Apache-2.0
// Training the MLP on the GPU: warm-up, one CUDA graph per batch of the pool, timed
// replays, progress and cancellation, peak memory, the result (gpu/trainer.hpp).
#include <algorithm>
#include <bit>
#include <mutex>
#include <string>
#include <memory>
#include <vector>

#include "emulator/training/training_task.hpp"

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/step/step_timing.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu {
namespace {

// The emulator's batches and initial weights for a configuration, made on the host with
// every core. The last one made is kept: a BF16 run and an FP8 run of the same
// experiment (the comparison, every benchmark) share their data.
const detail::HostTrainingData& host_training_data(const emu::Experiment& e) {
    static std::mutex mutex;
    static std::string cached_key;
    static detail::HostTrainingData cached;
    emu::Experiment data_only = e;  // what the data and the weights depend on
    data_only.numerics = {};
    data_only.optimizer = {};
    data_only.steps = 1;
    const std::string key = emu::to_json(data_only);
    std::lock_guard<std::mutex> lock(mutex);
    if (key == cached_key) return cached;
    cached_key.clear();
    detail::HostTrainingData data;
    const emu::TrainingTask task(e);
    const int batches = e.task.batches;
    const std::size_t per_batch = std::size_t(e.tokens) * e.model.input;
    data.inputs.resize(per_batch * batches);
    data.targets.resize(per_batch * batches);
    const auto bits = [](float v) {
        return std::uint16_t(std::bit_cast<std::uint32_t>(v) >> 16);
    };  // exact: BF16 values
    data.scored_rows = e.tokens;
    for (int b = 0; b < batches; ++b) {
        const emu::Batch batch = task.batch(std::uint64_t(b), e.tokens);
        for (std::size_t i = 0; i < per_batch; ++i) {
            data.inputs[std::size_t(b) * per_batch + i] = bits(batch.inputs[i]);
            data.targets[std::size_t(b) * per_batch + i] = bits(batch.targets[i]);
        }
        if (batch.scored.empty()) continue;
        std::vector<float> mask(batch.scored.begin(), batch.scored.end());
        if (b > 0 && mask != data.row_mask) throw GpuError("internal: the scored rows differ from batch to batch");
        data.row_mask = std::move(mask);
        data.scored_rows = 0;
        for (const float m : data.row_mask) data.scored_rows += m != 0.0f;
    }
    for (int l = 0; l < e.linear_layers(); ++l) data.weights.push_back(emu::initial_weights(e, l));
    cached = std::move(data);
    cached_key = key;
    return cached;
}

std::size_t used_device_bytes(std::size_t free_at_start) {
    std::size_t free = 0, total = 0;
    FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free_at_start > free ? free_at_start - free : 0;
}

// The path that runs a configuration: the emulated one, or the native FP8/BF16 step.
std::unique_ptr<detail::MlpStep> make_mlp(const GpuRun& run) {
    const detail::HostTrainingData& data = host_training_data(run.experiment);
    if (gpu_path(run.experiment) == GpuPath::Emulated) return detail::make_emulated_mlp(run, data);
    return detail::make_native_mlp(run, data);
}

// The loop of a run on either path.
GpuTrainResult train_with(const GpuRun& config, const GpuProgress& progress) {
    const emu::Experiment& e = config.experiment;
    std::size_t free_at_start = 0, total = 0;
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free_at_start, &total));
    GpuTrainResult result;
    result.device = describe(probe());
    std::size_t peak = 0;
    {
        const std::unique_ptr<detail::MlpStep> made = make_mlp(config);
        detail::MlpStep& mlp = *made;
        cudaStream_t stream;
        // The GEMMs' stream gets the higher priority: the side stream's memory-bound kernels
        // should fill the SMs the GEMMs leave, not take them.
        int least = 0, greatest = 0;
        FP8LAB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        FP8LAB_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
        std::vector<cudaGraphExec_t> graphs;
        std::vector<cudaEvent_t> events;
        // Everything CUDA made here is released on every way out, a throw included.
        struct Release {
            cudaStream_t& stream;
            std::vector<cudaGraphExec_t>& graphs;
            std::vector<cudaEvent_t>& events;
            ~Release() {
                cudaStreamSynchronize(stream);
                for (cudaGraphExec_t g : graphs) cudaGraphExecDestroy(g);
                for (cudaEvent_t e : events) cudaEventDestroy(e);
                cudaStreamDestroy(stream);
            }
        } release{stream, graphs, events};

        int done = 0;
        const auto report = [&]() {
            FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
            peak = std::max(peak, used_device_bytes(free_at_start));
            result.loss = mlp.losses(done);
            if (progress && !progress(done, result.loss)) result.cancelled = true;
            return !result.cancelled;
        };
        // Warm-up, launched kernel by kernel: it also lets each GEMM pick a kernel that runs.
        const int warmup = std::min(config.warmup_steps, e.steps);
        for (; done < warmup; ++done) mlp.enqueue_step(done % mlp.batches(), stream);
        FP8LAB_CUDA_CHECK(cudaGetLastError());
        bool go_on = report();
        if (go_on && config.use_graph)
            for (int b = 0; b < mlp.batches(); ++b) {  // one graph per batch of the pool
                cudaGraph_t graph;
                FP8LAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
                mlp.enqueue_step(b, stream);
                FP8LAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
                cudaGraphExec_t exec;
                // Each kernel keeps the priority of the stream it was captured from.
                const cudaError_t made = cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority);
                cudaGraphDestroy(graph);
                FP8LAB_CUDA_CHECK(made);
                graphs.push_back(exec);
            }
        const int timed = e.steps - done;
        events.resize(std::size_t(2 * std::max(timed, 0)));
        for (cudaEvent_t& e : events) FP8LAB_CUDA_CHECK(cudaEventCreate(&e));
        // Steps are queued without waiting; every kReportEvery steps the host catches up to
        // report progress (its pause falls between two timed steps, outside both events).
        constexpr int kReportEvery = 25;
        for (int i = 0; go_on && i < timed; ++i, ++done) {
            const int batch = done % mlp.batches();
            FP8LAB_CUDA_CHECK(cudaEventRecord(events[std::size_t(2 * i)], stream));
            if (config.use_graph)
                FP8LAB_CUDA_CHECK(cudaGraphLaunch(graphs[std::size_t(batch)], stream));
            else
                mlp.enqueue_step(batch, stream);
            FP8LAB_CUDA_CHECK(cudaEventRecord(events[std::size_t(2 * i + 1)], stream));
            if ((i + 1) % kReportEvery == 0 && i + 1 < timed) go_on = report();
        }
        mlp.flush_pending_update(stream);
        if (go_on) report();
        FP8LAB_CUDA_CHECK(cudaGetLastError());
        detail::record_step_times(events, done - warmup, e, result);
        result.loss = mlp.losses(done);
        mlp.read_result(result, done);
    }
    result.peak_memory_bytes = peak;
    return result;
}

}  // namespace

GpuTrainResult train_mlp_on_gpu(const GpuRun& run, const GpuProgress& progress) {
    validate(run);
    detail::require_gpu();
    detail::require_scaled_gemms(gpu_path(run.experiment), run.experiment.numerics);
    return train_with(run, progress);
}

GpuInitialState gpu_initial_state(const GpuRun& run) {
    validate(run);
    detail::require_gpu();
    return make_mlp(run)->initial_state();
}

}  // namespace fp8lab::gpu
