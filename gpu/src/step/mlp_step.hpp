// SPDX-License-Identifier: Apache-2.0
// The MLP's training step on the device as train_mlp_on_gpu (gpu_trainer.cpp) drives it,
// whichever path runs it (the native FP8/BF16 step, native_mlp.cpp; the emulated recipes',
// emulated_mlp.cpp): the interface, and what both paths share.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "emulator/scaling/recipe.hpp"
#include "gpu/src/gemm/block_scale_layout.hpp"
#include "gpu/src/kernels/blockwise_cast.hpp"
#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"
#include "gpu/src/kernels/train_kernels.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu::detail {

using train::CastSource;
using train::CastStats;
using train::CastTarget;
using train::DeviceScaling;
using train::Source;

using Bf16Buffer = DeviceBuffer<__nv_bfloat16>;
using Fp8Buffer = DeviceBuffer<std::uint8_t>;

// Scaled tensor j of the step is role j % 3 of layer j / 3.
constexpr emu::TensorRole kTensorRoles[3] = {emu::TensorRole::Input, emu::TensorRole::Weight,
                                             emu::TensorRole::GradOutput};

struct LayerShape {
    int in, out;
};

inline std::vector<LayerShape> layer_shapes(const emu::ModelSpec& m) {
    std::vector<LayerShape> shapes{{m.input, m.hidden}};
    for (int l = 1; l < m.hidden_layers; ++l) shapes.push_back({m.hidden, m.hidden});
    shapes.push_back({m.hidden, m.input});
    return shapes;
}

// The dgrad of a hidden layer runs in row chunks in FP8 with delayed scaling, so that its
// BF16 output (cast at once to FP8 with GELU's backward) needs a chunk, not the whole
// tensor: this is what keeps FP8's peak memory under BF16's. Current scaling needs the
// amax of the whole gradient before the cast, so it takes the whole tensor at once.
// 8192 rows, not 4096: fewer, larger GEMMs, medium's FP8 step 3% faster, large's the
// same (H200, side by side). FP8's peak memory stays under BF16's at the medium and large
// presets (834 and 4194 against 882 and 4386 MiB); small's dgrad (8192 rows, one chunk)
// takes it 8 MiB over (544 against 536).
constexpr int kDgradChunkRows = 8192;

// With this many tokens per step the next step's first GEMMs outlast the last layer's
// AdamW, so that update waits for the next step and runs beside its forward instead of
// ending this step. AdamW moves 28 bytes per weight, the forward GEMM does 2 M FLOPs per
// weight: at about 3 TB/s and 1300 FP8 TFLOP/s (H100) the GEMM alone covers it from
// M = 6000 on, and with the input and GELU casts before it from about 4096.
constexpr int kDeferUpdateMinTokens = 4096;

// In such a step two GEMMs run beside an AdamW: the first layer's forward beside the last
// layer's deferred update, the last layer's wgrad beside the first layer's. cuBLASLt's
// kernels hold every SM, so the update mostly waited for the GEMM to end. Sized for fewer
// SMs (LtMatmul::run_on_sms), the GEMM leaves the update some; an FP8 GEMM, twice as fast
// as BF16's, leaves more, since the update must move its bytes in half the time. Swept on
// an H200 (132 SMs, large preset): FP8 delayed best leaving 12 (10.73 -> 10.43 ms; 16:
// 10.45, 24: 10.56), BF16 leaving 8 (17.93 -> 17.55; 16: 17.87). Against the tree before,
// alternating in one call: delayed 10.52-10.55 against 10.82-10.86 ms, current 11.62-11.64
// against 11.91-11.92, blockwise 14.18-14.34 against 14.63, BF16 17.71-17.99 against
// 18.02-18.06; the same losses. With 4M weights a layer (medium) BF16 was 1-2% slower
// leaving any and small gained nothing: only updates of at least 2^24 weights get SMs.
constexpr std::size_t kShareSmsMinWeights = std::size_t(1) << 24;
inline int sms_left_to_update(int device_sms, bool fp8) { return device_sms * (fp8 ? 3 : 2) / 32; }

// Native FP8 with block or row scales needs cuBLASLt's scaled GEMMs (Hopper, cuBLASLt 12.9
// or later): throws GpuUnavailable with the reason where they are missing.
inline void require_scaled_gemms(GpuPath path, const emu::Numerics& n) {
    if (path != GpuPath::Native || n.precision != emu::Precision::Fp8 || emu::recipe(n.recipe).per_tensor()) return;
    if (const std::string why = blockwise_unsupported_reason(); !why.empty()) throw GpuUnavailable(why);
}

// What the host makes for the device (gpu_trainer.cpp): the emulator's batches and initial
// weights. BF16 data as raw bits (the values are BF16 already, so no rounding happens).
struct HostTrainingData {
    std::vector<std::uint16_t> inputs, targets;  // data_batches x tokens x d, batch by batch
    std::vector<std::vector<float>> weights;     // per layer, outputs x inputs
    // Per row of a batch, 1 where the loss counts it (the same rows in every batch); empty:
    // every row (all tasks but the outlier task, which leaves its massive rows out).
    std::vector<float> row_mask;
    int scored_rows = 0;  // rows the loss counts
};

// Host data into a device buffer of exactly as many elements (bits copied as they are).
template <class T, class Device>
void upload(Device* device, const std::vector<T>& host, std::size_t count) {
    if (host.size() != count)
        throw GpuError("internal: host data of " + std::to_string(host.size()) + " elements for a device buffer of " +
                       std::to_string(count));
    FP8LAB_CUDA_CHECK(cudaMemcpy(device, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
}

// What AdamW reads per step on the device, made on the host as the CPU trainer makes it,
// so both backends step alike: the learning rate of every step when the experiment
// schedules it (emu::learning_rates), and the bias corrections of every Adam step t
// (1 - beta^t in float32, as the CPU trainer's std::pow); AdamW's parameters with them.
class StepRates {
  public:
    explicit StepRates(const emu::Experiment& e) : corrections_(std::size_t(e.steps) + 1) {
        const emu::OptimizerSpec& o = e.optimizer;
        std::vector<float2> corrections(corrections_.count);
        for (std::size_t t = 0; t < corrections.size(); ++t)
            corrections[t] = {1.0f - std::pow(o.beta1, float(t)), 1.0f - std::pow(o.beta2, float(t))};
        upload(corrections_.ptr, corrections, corrections.size());
        if (o.schedule.kind == emu::LrScheduleKind::Constant) return;
        const std::vector<float> rates = emu::learning_rates(e);
        rates_ = std::make_unique<DeviceBuffer<float>>(rates.size());
        upload(rates_->ptr, rates, rates.size());
    }
    train::AdamParams params(const emu::OptimizerSpec& o) const {
        return {o.learning_rate, o.beta1, o.beta2, o.epsilon, o.weight_decay, rates_ ? rates_->ptr : nullptr,
                corrections_.ptr};
    }

  private:
    DeviceBuffer<float2> corrections_;
    std::unique_ptr<DeviceBuffer<float>> rates_;
};

// The per-step amax and scale of every scaled tensor (step-major, 3 tensors per layer:
// input, weight, gradient) as amax trace records named like the CPU trainer's.
inline void append_trace_records(emu::AmaxTrace& trace, const std::vector<float>& amax, const std::vector<float>& scale,
                                 int steps, int tensors) {
    static const char* const kRoleNames[3] = {".input", ".weight", ".grad_output"};
    for (int t = 0; t < steps; ++t)
        for (int j = 0; j < tensors; ++j) {
            emu::AmaxTraceRecord r;
            r.step = std::uint64_t(t);
            r.tensor = "fc" + std::to_string(j / 3 + 1) + kRoleNames[j % 3];
            r.amax = amax[std::size_t(t) * tensors + j];
            r.scale = scale[std::size_t(t) * tensors + j];
            trace.records.push_back(std::move(r));
        }
}

// One cast's counts on the device as the CPU trainer's record of it.
inline emu::TensorNumerics numerics_record(const CastStats& s, std::uint64_t step, std::string tensor, float amax,
                                           float scale, std::uint64_t elements) {
    emu::TensorNumerics n;
    n.step = step;
    n.tensor = std::move(tensor);
    n.amax = amax;
    n.scale = scale;
    n.elements = elements;
    n.zeros = s.zeros;
    n.flushed = s.flushed;
    n.saturated = s.saturated;
    n.subnormal = s.subnormal;
    n.relative_error = s.value_squares > 0 ? std::sqrt(s.error_squares / s.value_squares) : 0.0;
    return n;
}

// The per-step cast counts of every scaled tensor (step-major, as the trace) as the CPU
// trainer's TensorNumerics, with each record's amax and scale from the trace arrays.
inline void append_numerics(std::vector<emu::TensorNumerics>& out, const std::vector<CastStats>& stats,
                            const std::vector<float>& amax, const std::vector<float>& scale,
                            const std::vector<std::uint64_t>& elements, int steps, int tensors) {
    static const char* const kRoleNames[3] = {".input", ".weight", ".grad_output"};
    for (int t = 0; t < steps; ++t)
        for (int j = 0; j < tensors; ++j) {
            const std::size_t at = std::size_t(t) * tensors + j;
            out.push_back(numerics_record(stats[at], std::uint64_t(t),
                                          "fc" + std::to_string(j / 3 + 1) + kRoleNames[j % 3], amax[at], scale[at],
                                          elements[std::size_t(j)]));
        }
}

// `count` BF16 values on the device, read back as floats.
inline std::vector<float> read_bf16(const __nv_bfloat16* device, std::size_t count) {
    std::vector<std::uint16_t> bits(count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(bits.data(), device, bits.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<float> out(count);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t u = std::uint32_t(bits[i]) << 16;
        std::memcpy(&out[i], &u, 4);
    }
    return out;
}

// What a run starts from, read back for tests: the first layer's float32 weights, and the
// first batch's inputs and targets (`count` BF16 values each).
inline GpuInitialState read_initial_state(const DeviceBuffer<float>& first_weights, const __nv_bfloat16* inputs,
                                          const __nv_bfloat16* targets, std::size_t count) {
    GpuInitialState st;
    st.first_weights.resize(first_weights.count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(st.first_weights.data(), first_weights.ptr, st.first_weights.size() * sizeof(float),
                                 cudaMemcpyDeviceToHost));
    st.first_inputs = read_bf16(inputs, count);
    st.first_targets = read_bf16(targets, count);
    return st;
}

// One path's training step: buffers on the device, the kernel sequence of a step ready to
// be captured in a CUDA graph, and what the run reads back.
class MlpStep {
  public:
    virtual ~MlpStep() = default;
    virtual int batches() const = 0;  // distinct batches of the pool, one graph each
    // Read back for tests: layer 0's weights and batch 0 (inputs, targets) as floats.
    virtual GpuInitialState initial_state() const = 0;
    // One whole training step on `main`: forward, loss, backward, AdamW, scaling update.
    virtual void enqueue_step(int batch, cudaStream_t main) = 0;
    // An update the last step left for the next one, applied, for a final state with every
    // update in it.
    virtual void flush_pending_update(cudaStream_t s) = 0;
    virtual std::vector<float> losses(int steps_done) const = 0;
    // The rest of the result after `steps_done` steps: the path, the amax trace where the
    // run records one, and the loss scaler's scales and skipped steps.
    virtual void read_result(GpuTrainResult& result, int steps_done) const = 0;
};

std::unique_ptr<MlpStep> make_native_mlp(const GpuRun& config, const HostTrainingData& data);
std::unique_ptr<MlpStep> make_emulated_mlp(const GpuRun& config, const HostTrainingData& data);

}  // namespace fp8lab::gpu::detail
