// SPDX-License-Identifier: Apache-2.0
// Inference timing on the GPU (gpu/inference_timing.hpp): each variant's weights made on
// the device from the same BF16 draw, its forward pass captured in one CUDA graph, timed
// in batches of replays between CUDA events, its memory and output error measured.
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/inference_timing.hpp"
#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/kernels/inference_kernels.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;
using detail::Epilogue;
using detail::LtMatmul;
using detail::MatmulOperand;
using detail::ScaleMode;
using detail::Stored;

constexpr unsigned kInputSeed = 1000;

// One GEMM of the forward with cuBLASLt's bias (+ GELU) epilogue, or, where cuBLASLt has
// no kernel with that epilogue, the bare GEMM and the epilogue as a kernel of its own.
// FP8 GEMMs ask for fast accumulation (what inference engines use) first.
class LayerGemm {
  public:
    LayerGemm(cublasLtHandle_t handle, int m, int n, int k, MatmulOperand a, MatmulOperand b, const void* bias,
              bool gelu)
        : n_(n), m_(m), bias_(bias), gelu_(gelu) {
        const bool fp8 = a.type == CUDA_R_8F_E4M3;
        for (const bool fast : fp8 ? std::vector<bool>{true, false} : std::vector<bool>{false})
            for (const bool fused : {true, false}) {
                try {
                    gemm_.emplace(handle, m, n, k, a, b, CUDA_R_16BF, fast, nullptr,
                                  fused ? Epilogue{bias, gelu} : Epilogue{});
                    fused_ = fused;
                    fast_ = fast;
                    return;
                } catch (const GpuError&) {
                    gemm_.reset();
                }
            }
        throw GpuError("cuBLASLt has no kernel for the " + std::string(fp8 ? "FP8" : "BF16") +
                       " GEMM m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
    }
    void run(const void* a, const void* b, void* y, void* workspace, cudaStream_t stream) {
        gemm_->run(a, b, y, workspace, stream);
        if (!fused_) kernels::bias_gelu_bf16(y, m_, n_, bias_, gelu_, stream);
    }
    std::string describe() const {
        return std::string(fast_ ? "fast accumulation, " : "") +
               (fused_ ? "bias+GELU in the GEMM's epilogue"
                       : "bias+GELU in a kernel of its own (cuBLASLt refused the epilogue)");
    }

  private:
    std::optional<LtMatmul> gemm_;
    int n_, m_;
    const void* bias_;
    bool gelu_, fused_ = false, fast_ = false;
};

// A layer's weights as the variant stores them.
struct LayerWeights {
    int inputs = 0, outputs = 0;
    std::unique_ptr<DeviceBuffer<std::uint16_t>> bf16;  // outputs x inputs
    std::unique_ptr<DeviceBuffer<std::uint8_t>> codes;  // E4M3, outputs x inputs
    std::unique_ptr<DeviceBuffer<float>> scale_inv;     // 1 (per tensor) or `outputs` (per channel)
    std::unique_ptr<DeviceBuffer<std::uint16_t>> bias;
    std::size_t stored_bytes() const {
        return (bf16 ? bf16->count * 2 : 0) + (codes ? codes->count : 0) + (scale_inv ? scale_inv->count * 4 : 0) +
               bias->count * 2;
    }
};

bool quantised_weights(InferenceVariant v) { return v != InferenceVariant::Bf16; }
bool per_channel_weights(InferenceVariant v) {
    return v == InferenceVariant::WeightOnly || v == InferenceVariant::PerTokenPerChannel;
}
bool fp8_activations(InferenceVariant v) { return v != InferenceVariant::Bf16 && v != InferenceVariant::WeightOnly; }

// The same draw for every variant: layer l's weights from seed l, uniform with the
// variance 1/inputs (so activations keep their size through the layers), its bias from
// seed 100 + l.
LayerWeights make_weights(InferenceVariant v, int l, int inputs, int outputs, cudaStream_t stream) {
    LayerWeights w;
    w.inputs = inputs;
    w.outputs = outputs;
    const std::size_t count = std::size_t(inputs) * outputs;
    auto master = std::make_unique<DeviceBuffer<std::uint16_t>>(count);
    kernels::fill_uniform_bf16(master->ptr, count, unsigned(l), std::sqrt(3.0f / float(inputs)), stream);
    w.bias = std::make_unique<DeviceBuffer<std::uint16_t>>(std::size_t(outputs));
    kernels::fill_uniform_bf16(w.bias->ptr, std::size_t(outputs), 100u + unsigned(l), 0.1f, stream);
    if (!quantised_weights(v)) {
        w.bf16 = std::move(master);
        return w;
    }
    w.codes = std::make_unique<DeviceBuffer<std::uint8_t>>(count);
    if (per_channel_weights(v)) {
        w.scale_inv = std::make_unique<DeviceBuffer<float>>(std::size_t(outputs));
        kernels::cast_rows_dynamic_e4m3(master->ptr, outputs, inputs, w.codes->ptr, w.scale_inv->ptr, stream);
        FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the master copy is freed
        return w;
    }
    w.scale_inv = std::make_unique<DeviceBuffer<float>>(1);
    DeviceBuffer<float> amax{std::size_t(outputs)}, scale{1};
    kernels::row_amax_bf16(master->ptr, outputs, inputs, amax.ptr, stream);
    kernels::scales_from_amax(amax.ptr, outputs, true, scale.ptr, w.scale_inv->ptr, stream);
    kernels::cast_rows_e4m3(master->ptr, outputs, inputs, scale.ptr, false, w.codes->ptr, stream);
    FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // before amax, scale and the master copy are freed
    return w;
}

// A variant's model, buffers and GEMMs at one token count: forward() enqueues one pass.
class InferenceRun {
  public:
    // `rows` >= tokens: the rows the GEMMs run on (padding where cuBLASLt needs it).
    InferenceRun(const InferenceModel& model, InferenceVariant v, int tokens, int rows, cublasLtHandle_t handle,
                 cudaStream_t stream, const std::vector<std::vector<float>>& calibration_amax)
        : v_(v), tokens_(tokens), rows_(rows), workspace_(detail::kMatmulWorkspaceBytes) {
        const int layers = int(model.widths.size()) - 1;
        int widest = 0;
        for (int w : model.widths) widest = std::max(widest, w);
        for (int l = 0; l <= layers; ++l)
            h_.push_back(
                std::make_unique<DeviceBuffer<std::uint16_t>>(std::size_t(rows) * model.widths[std::size_t(l)]));
        kernels::fill_uniform_bf16(h_[0]->ptr, h_[0]->count, kInputSeed, 1.0f, stream);
        if (fp8_activations(v)) {
            a8_ = std::make_unique<DeviceBuffer<std::uint8_t>>(std::size_t(rows) * widest);
            row_amax_ = std::make_unique<DeviceBuffer<float>>(std::size_t(rows));
        }
        const bool fused_gemv = v == InferenceVariant::WeightOnly && rows <= kernels::kFusedWeightOnlyTokens;
        std::size_t widest_weight = 0;
        for (int l = 0; l < layers; ++l)
            widest_weight =
                std::max(widest_weight, std::size_t(model.widths[std::size_t(l)]) * model.widths[std::size_t(l) + 1]);
        if (v == InferenceVariant::WeightOnly && !fused_gemv)
            widened_ = std::make_unique<DeviceBuffer<std::uint16_t>>(widest_weight);
        for (int l = 0; l < layers; ++l) {
            const int k = model.widths[std::size_t(l)], n = model.widths[std::size_t(l) + 1];
            weights_.push_back(make_weights(v, l, k, n, stream));
            LayerWeights& w = weights_.back();
            // Per-tensor activation scales: one for static (from the calibration amax), one
            // recomputed every pass for dynamic; per token: one a row.
            const int act_scales = v == InferenceVariant::PerTokenPerChannel ? rows : 1;
            act_scale_.push_back(std::make_unique<DeviceBuffer<float>>(std::size_t(act_scales)));
            act_scale_inv_.push_back(std::make_unique<DeviceBuffer<float>>(std::size_t(act_scales)));
            if (v == InferenceVariant::StaticPerTensor) {
                const std::vector<float>& amax = calibration_amax[std::size_t(l)];
                DeviceBuffer<float> a(amax.size());
                FP8LAB_CUDA_CHECK(cudaMemcpy(a.ptr, amax.data(), amax.size() * 4, cudaMemcpyHostToDevice));
                kernels::scales_from_amax(a.ptr, int(amax.size()), true, act_scale_.back()->ptr,
                                          act_scale_inv_.back()->ptr, stream);
                FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
            }
            const bool gelu = l + 1 < layers;
            if (fused_gemv) {
                gemms_.emplace_back();
                continue;
            }
            MatmulOperand a, b;
            b.stored = Stored::Transposed;
            if (fp8_activations(v)) {
                a.type = b.type = CUDA_R_8F_E4M3;
                a.scale_inv = act_scale_inv_.back()->ptr;
                b.scale_inv = w.scale_inv->ptr;
                if (v == InferenceVariant::PerTokenPerChannel) a.scale_mode = b.scale_mode = ScaleMode::PerRow;
            }
            gemms_.push_back(std::make_unique<LayerGemm>(handle, rows, n, k, a, b, w.bias->ptr, gelu));
        }
        kernels_ = describe_kernels(fused_gemv);
        if (rows > tokens)
            kernels_ += "; " + std::to_string(tokens) + " token(s) padded to " + std::to_string(rows) +
                        " rows (cuBLASLt had no FP8 kernel for " + std::to_string(tokens) + ")";
    }

    void forward(cudaStream_t stream) {
        const int layers = int(weights_.size());
        for (int l = 0; l < layers; ++l) {
            LayerWeights& w = weights_[std::size_t(l)];
            const void* x = h_[std::size_t(l)]->ptr;
            void* y = h_[std::size_t(l) + 1]->ptr;
            const bool gelu = l + 1 < layers;
            float* scale = act_scale_[std::size_t(l)]->ptr;
            float* scale_inv = act_scale_inv_[std::size_t(l)]->ptr;
            switch (v_) {
            case InferenceVariant::Bf16:
                gemms_[std::size_t(l)]->run(x, w.bf16->ptr, y, workspace_.ptr, stream);
                break;
            case InferenceVariant::WeightOnly:
                if (!gemms_[std::size_t(l)]) {
                    kernels::fp8_weight_gemv(x, rows_, w.codes->ptr, w.scale_inv->ptr, w.bias->ptr, gelu, w.outputs,
                                             w.inputs, y, stream);
                } else {
                    kernels::widen_rows_e4m3(w.codes->ptr, w.scale_inv->ptr, w.outputs, w.inputs, widened_->ptr,
                                             stream);
                    gemms_[std::size_t(l)]->run(x, widened_->ptr, y, workspace_.ptr, stream);
                }
                break;
            case InferenceVariant::StaticPerTensor:
                kernels::cast_rows_e4m3(x, rows_, w.inputs, scale, false, a8_->ptr, stream);
                gemms_[std::size_t(l)]->run(a8_->ptr, w.codes->ptr, y, workspace_.ptr, stream);
                break;
            case InferenceVariant::DynamicPerTensor:
                kernels::row_amax_bf16(x, rows_, w.inputs, row_amax_->ptr, stream);
                kernels::scales_from_amax(row_amax_->ptr, rows_, true, scale, scale_inv, stream);
                kernels::cast_rows_e4m3(x, rows_, w.inputs, scale, false, a8_->ptr, stream);
                gemms_[std::size_t(l)]->run(a8_->ptr, w.codes->ptr, y, workspace_.ptr, stream);
                break;
            case InferenceVariant::PerTokenPerChannel:
                kernels::cast_rows_dynamic_e4m3(x, rows_, w.inputs, a8_->ptr, scale_inv, stream);
                gemms_[std::size_t(l)]->run(a8_->ptr, w.codes->ptr, y, workspace_.ptr, stream);
                break;
            }
        }
    }

    // The amax each layer's input reaches, [layer][row]: a BF16 run's, for static scales.
    std::vector<std::vector<float>> input_amax(cudaStream_t stream) {
        std::vector<std::vector<float>> out;
        DeviceBuffer<float> amax{std::size_t(tokens_)};
        for (std::size_t l = 0; l < weights_.size(); ++l) {
            kernels::row_amax_bf16(h_[l]->ptr, tokens_, weights_[l].inputs, amax.ptr, stream);  // the real rows only
            std::vector<float>& host = out.emplace_back(std::size_t(tokens_));
            FP8LAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), amax.ptr, host.size() * 4, cudaMemcpyDeviceToHost, stream));
            FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        return out;
    }

    // The real tokens' rows of the last layer's output.
    std::vector<float> output(cudaStream_t stream) const {
        const DeviceBuffer<std::uint16_t>& y = *h_.back();
        std::vector<std::uint16_t> bits(y.count / std::size_t(rows_) * std::size_t(tokens_));
        FP8LAB_CUDA_CHECK(cudaMemcpyAsync(bits.data(), y.ptr, bits.size() * 2, cudaMemcpyDeviceToHost, stream));
        FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<float> out;
        for (std::uint16_t b : bits) out.push_back(std::bit_cast<float>(std::uint32_t(b) << 16));
        return out;
    }

    std::size_t stored_weight_bytes() const {
        std::size_t bytes = 0;
        for (const LayerWeights& w : weights_) bytes += w.stored_bytes();
        return bytes;
    }
    const std::string& kernels() const { return kernels_; }

  private:
    std::string describe_kernels(bool fused_gemv) const {
        switch (v_) {
        case InferenceVariant::Bf16:
            return "cuBLASLt BF16 GEMMs, " + gemms_.front()->describe();
        case InferenceVariant::WeightOnly:
            return fused_gemv ? "fp8lab's fused kernel: FP8 weights read once, decoded in registers, float32 "
                                "accumulation on CUDA cores, bias+GELU in the same kernel"
                              : "each layer's FP8 weights widened to BF16 by a kernel, then a cuBLASLt BF16 GEMM, " +
                                    gemms_.front()->describe();
        case InferenceVariant::StaticPerTensor:
            return "activation cast with the calibrated scale, cuBLASLt FP8 GEMMs, " + gemms_.front()->describe();
        case InferenceVariant::DynamicPerTensor:
            return "activation amax, scale and cast (3 kernels), cuBLASLt FP8 GEMMs, " + gemms_.front()->describe();
        case InferenceVariant::PerTokenPerChannel:
            return "per-token amax and cast in one kernel, cuBLASLt FP8 GEMMs with outer-vector scales, " +
                   gemms_.front()->describe();
        }
        return {};
    }

    InferenceVariant v_;
    int tokens_, rows_;
    DeviceBuffer<std::uint8_t> workspace_;
    std::vector<std::unique_ptr<DeviceBuffer<std::uint16_t>>> h_;  // h_[l]: layer l's input, BF16
    std::unique_ptr<DeviceBuffer<std::uint8_t>> a8_;               // an FP8 layer input
    std::unique_ptr<DeviceBuffer<float>> row_amax_;
    std::unique_ptr<DeviceBuffer<std::uint16_t>> widened_;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> act_scale_, act_scale_inv_;
    std::vector<LayerWeights> weights_;
    std::vector<std::unique_ptr<LayerGemm>> gemms_;  // null where the fused kernel runs
    std::string kernels_;
};

// The forward captured once, replayed in batches sized to about a millisecond; the
// median over batches of the time per replay.
double median_forward_us(InferenceRun& run, cudaStream_t stream) {
    cudaGraph_t graph;
    FP8LAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    run.forward(stream);
    FP8LAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    FP8LAB_CUDA_CHECK(made);
    cudaEvent_t start, stop;
    FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
    FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
    struct Release {
        cudaGraphExec_t exec;
        cudaEvent_t start, stop;
        ~Release() {
            cudaGraphExecDestroy(exec);
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
        }
    } release{exec, start, stop};
    const auto timed = [&](int replays) {
        FP8LAB_CUDA_CHECK(cudaEventRecord(start, stream));
        for (int i = 0; i < replays; ++i) FP8LAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        FP8LAB_CUDA_CHECK(cudaEventRecord(stop, stream));
        FP8LAB_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        return double(ms) * 1000.0 / replays;
    };
    timed(3);  // warm-up: clocks, caches, the graph's first upload
    const int replays = int(std::clamp(1000.0 / std::max(timed(3), 0.5), 1.0, 2000.0));
    std::vector<double> us;
    for (int b = 0; b < 15; ++b) us.push_back(timed(replays));
    std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
    return us[us.size() / 2];
}

std::size_t free_device_bytes() {
    std::size_t free = 0, total = 0;
    FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

double relative_error(const std::vector<float>& y, const std::vector<float>& reference) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        diff += double(y[i] - reference[i]) * double(y[i] - reference[i]);
        norm += double(reference[i]) * reference[i];
    }
    return norm > 0 ? std::sqrt(diff / norm) : 0.0;
}

}  // namespace

std::vector<InferenceTiming> time_inference(const InferenceModel& model, int tokens) {
    if (model.widths.size() < 2) throw std::invalid_argument("an inference model needs at least two widths");
    for (int w : model.widths)
        if (w <= 0 || w % 16 != 0)
            throw std::invalid_argument(
                "inference model widths must be positive multiples of 16 (cuBLASLt's FP8 rule): " + std::to_string(w));
    if (tokens <= 0) throw std::invalid_argument("tokens must be positive");
    detail::require_gpu();
    detail::LtHandle handle;
    cudaStream_t stream;
    FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    struct ReleaseStream {
        cudaStream_t s;
        ~ReleaseStream() {
            cudaStreamSynchronize(s);
            cudaStreamDestroy(s);
        }
    } release{stream};
    std::vector<InferenceTiming> out;
    std::vector<float> reference;
    std::vector<std::vector<float>> calibration;  // per layer: the BF16 run's input amax per row
    for (const InferenceVariantName& name : kInferenceVariants) {
        FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::size_t free_before = free_device_bytes();
        // FP8 GEMMs with fewer rows than 16 run padded when cuBLASLt has no kernel for them.
        const bool fp8_gemms = fp8_activations(name.variant);
        std::unique_ptr<InferenceRun> made;
        try {
            made = std::make_unique<InferenceRun>(model, name.variant, tokens, tokens, handle.h, stream, calibration);
            made->forward(stream);  // untimed: also lets each GEMM settle on a kernel before capture
            FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
        } catch (const GpuError&) {
            if (!fp8_gemms || tokens % 16 == 0) throw;
            made.reset();
            made = std::make_unique<InferenceRun>(model, name.variant, tokens, (tokens + 15) / 16 * 16, handle.h,
                                                  stream, calibration);
            made->forward(stream);
            FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        InferenceRun& run = *made;
        InferenceTiming t;
        t.variant = name.variant;
        t.tokens = tokens;
        t.device_mib = double(free_before - std::min(free_before, free_device_bytes())) / (1024.0 * 1024.0);
        t.weight_mib = double(run.stored_weight_bytes()) / (1024.0 * 1024.0);
        t.median_us = median_forward_us(run, stream);
        // The output of one fresh pass (replays leave the same values: the input is fixed).
        const std::vector<float> y = run.output(stream);
        if (name.variant == InferenceVariant::Bf16) {
            reference = y;
            calibration = run.input_amax(stream);
        }
        t.output_error = relative_error(y, reference);
        t.kernels = run.kernels();
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace fp8lab::gpu
