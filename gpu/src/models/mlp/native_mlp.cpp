// SPDX-License-Identifier: Apache-2.0
// The native training step on the GPU: BF16, or FP8 on the FP8 tensor cores with the
// recipe's scaling (native_scaling.hpp); buffers, cuBLASLt GEMMs and the kernel sequence of
// one step on two streams, its losses and amax trace.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/src/scaling/native_scaling.hpp"
#include "gpu/src/kernels/train_kernels.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu::detail {
namespace {

class GpuMlp final : public MlpStep {
  public:
    GpuMlp(const GpuRun& c, const HostTrainingData& data)
        : c_(c),
          rates_(c.experiment),
          shapes_(layer_shapes(c.experiment.model)),
          fp8_(c.experiment.numerics.precision == emu::Precision::Fp8),
          scaling_(fp8_ ? make_native_scaling(c, shapes_, c.experiment.tokens, nullptr) : nullptr),
          loss_in_cast_(scaling_ && scaling_->loss_in_cast()),
          batches_(c.experiment.task.batches),
          rows_(c.experiment.tokens),
          max_dim_(std::max(c.experiment.model.input, c.experiment.model.hidden)),
          chunk_rows_(scaling_ ? scaling_->dgrad_chunk_rows(rows_) : rows_),
          defer_last_update_(c.experiment.tokens >= kDeferUpdateMinTokens),
          side_(shapes_.size()),
          workspace_(detail::kMatmulWorkspaceBytes),
          x_pool_(std::size_t(batches_) * rows_ * c.experiment.model.input),
          t_pool_(x_pool_.count),
          loss_partials_(std::size_t(
              std::max(train::kMaxLossPartials, train::cast_tiles(c.experiment.tokens, c.experiment.model.input)))),
          losses_(std::size_t(c.experiment.steps)),
          step_(1) {
        scored_rows_ = data.scored_rows;
        const cudaStream_t s = nullptr;
        FP8LAB_CUDA_CHECK(cudaMemset(step_.ptr, 0, sizeof(int)));
        FP8LAB_CUDA_CHECK(cudaMemset(losses_.ptr, 0xff, losses_.count * sizeof(float)));  // NaN until written
        upload(x_pool_.ptr, data.inputs, x_pool_.count);
        upload(t_pool_.ptr, data.targets, t_pool_.count);
        if (!data.row_mask.empty()) {
            row_mask_ = std::make_unique<DeviceBuffer<float>>(data.row_mask.size());
            upload(row_mask_->ptr, data.row_mask, data.row_mask.size());
        }
        for (std::size_t l = 0; l < shapes_.size(); ++l) add_layer(int(l), data.weights[l], s);
        if (!defer_last_update_) side_workspace_ = std::make_unique<DeviceBuffer<char>>(detail::kMatmulWorkspaceBytes);
        if (fp8_)
            make_fp8_buffers();
        else
            make_bf16_buffers();
        if (!loss_in_cast_) dy16_ = std::make_unique<Bf16Buffer>(std::size_t(rows_) * c_.experiment.model.input);
        if (defer_last_update_) share_sms_with_updates();
        FP8LAB_CUDA_CHECK(cudaStreamSynchronize(s));
        FP8LAB_CUDA_CHECK(cudaGetLastError());
    }

    int batches() const override { return batches_; }

    // Read back for tests: layer 0's weights and batch 0 (inputs, targets) as floats.
    GpuInitialState initial_state() const override {
        return read_initial_state(layers_[0].w, x_batch(0), target_batch(0), outputs());
    }

    // One whole training step on `main`: forward, loss, backward, AdamW, scaling update.
    // A side stream runs the work the main stream need not wait for: the FP8 weight casts
    // during the forward, each layer's AdamW during the rest of the backward (the last
    // layer's, with many tokens, during the next step's forward), and with few tokens the
    // last layer's wgrad.
    void enqueue_step(int batch, cudaStream_t main) override {
        const cudaStream_t side = side_.stream;
        FP8LAB_CUDA_CHECK(cudaEventRecord(side_.fork, main));
        FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(side, side_.fork, 0));
        if (fp8_)
            forward_fp8(batch, main);
        else
            forward_bf16(batch, main);
        if (!loss_in_cast_)
            train::mse_loss(y_out(), target_batch(batch), outputs(), c_.experiment.model.input, row_mask(),
                            2.0f / float(scored_outputs()), dy16_->ptr, loss_partials_.ptr, main);
        if (fp8_)
            backward_fp8(batch, main);
        else
            backward_bf16(batch, main);
        update_pending_ = defer_last_update_;
        FP8LAB_CUDA_CHECK(cudaEventRecord(side_.join, side));
        FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(main, side_.join, 0));
        train::StepEnd end;
        end.loss_partials = loss_partials_.ptr;
        end.loss_partial_count =
            loss_in_cast_ ? train::cast_tiles(rows_, c_.experiment.model.input) : train::loss_partials(outputs());
        end.inv_outputs = 1.0f / float(scored_outputs());
        end.losses = losses_.ptr;
        end.capacity = c_.experiment.steps;
        if (scaling_) scaling_->fill(end);
        train::finish_step(end, step_.ptr, main);  // after every AdamW of this step: they read the step
    }

    // The last layer's update that the last step left for the next one, for a final state
    // that has every update applied.
    void flush_pending_update(cudaStream_t s) override {
        if (update_pending_) adamw_of(int(layers_.size()) - 1, -1, s);
        update_pending_ = false;
    }

    std::vector<float> losses(int steps_done) const override {
        std::vector<float> host(static_cast<std::size_t>(steps_done));
        if (steps_done)
            FP8LAB_CUDA_CHECK(
                cudaMemcpy(host.data(), losses_.ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
        return host;
    }

    void read_result(GpuTrainResult& result, int steps_done) const override {
        if (c_.experiment.numerics.precision == emu::Precision::Fp8 && c_.record_trace)
            result.trace = trace(steps_done, result.device);
        if (c_.experiment.numerics.precision == emu::Precision::Fp8 && c_.record_numerics) {
            std::vector<float> amax, scale;
            scaling_->read_trace(steps_done, amax, scale);
            // Elements per cast: a layer's input (tokens x in), weight (out x in), gradient (tokens x out).
            std::vector<std::uint64_t> elements;
            for (const LayerShape& l : shapes_)
                for (const std::uint64_t n :
                     {std::uint64_t(rows_) * l.in, std::uint64_t(l.out) * l.in, std::uint64_t(rows_) * l.out})
                    elements.push_back(n);
            append_numerics(result.numerics, scaling_->read_numerics(steps_done), amax, scale, elements, steps_done,
                            scaling_->tensors());
        }
    }

    emu::AmaxTrace trace(int steps_done, const std::string& device) const {
        emu::AmaxTrace trace;
        trace.header = {{"source", "fp8lab GPU training step (train_mlp_on_gpu)"},
                        {"device", device},
                        {"configuration", describe_config()}};
        std::vector<float> amax, scale;
        scaling_->read_trace(steps_done, amax, scale);
        append_trace_records(trace, amax, scale, steps_done, scaling_->tensors());
        return trace;
    }

  private:
    struct Layer {
        LayerShape shape;
        DeviceBuffer<float> w, m, v, dw;
        std::unique_ptr<Bf16Buffer> w16, h16;     // h16: the output (pre-activation) of this layer
        std::unique_ptr<Bf16Buffer> a16;          // BF16: this layer's input when it is a hidden activation
        std::unique_ptr<Fp8Buffer> w8, w8t, at8;  // FP8: weight, its transpose, the input transposed
        std::unique_ptr<LtMatmul> forward, wgrad;
        std::vector<std::unique_ptr<LtMatmul>> dgrad;  // one per distinct chunk row count
        Layer(LayerShape s, std::size_t n) : shape(s), w(n), m(n), v(n), dw(n) {}
    };

    std::string describe_config() const {
        std::string text = "d=" + std::to_string(c_.experiment.model.input) +
                           " h=" + std::to_string(c_.experiment.model.hidden) +
                           " tokens=" + std::to_string(c_.experiment.tokens) +
                           " hidden_layers=" + std::to_string(c_.experiment.model.hidden_layers) +
                           " precision=" + std::string(emu::precision_name(c_.experiment.numerics.precision));
        if (fp8_)
            text += " recipe=" + std::string(emu::fp8_recipe_name(c_.experiment.numerics.recipe)) +
                    " formats=" + scaling_->formats_name() +
                    " history=" + std::to_string(c_.experiment.numerics.delayed.history_length) +
                    " algo=" + std::string(emu::amax_algorithm_name(c_.experiment.numerics.delayed.algorithm)) +
                    " margin=" + std::to_string(c_.experiment.numerics.delayed.margin) +
                    " fast_accum=" + (c_.experiment.numerics.fast_accumulation.forward ? "1" : "0") +
                    (c_.experiment.numerics.fast_accumulation.dgrad ? "1" : "0") +
                    (c_.experiment.numerics.fast_accumulation.wgrad ? "1" : "0");
        return text + " lr=" + std::to_string(c_.experiment.optimizer.learning_rate) +
               " seed=" + std::to_string(c_.experiment.task.seed) +
               " init_seed=" + std::to_string(c_.experiment.init_seed) + " batches=" + std::to_string(batches_);
    }

    void add_layer(int l, const std::vector<float>& initial, cudaStream_t s) {
        const LayerShape sh = shapes_[std::size_t(l)];
        const std::size_t n = std::size_t(sh.in) * sh.out;
        Layer& layer = layers_.emplace_back(sh, n);
        upload(layer.w.ptr, initial, n);
        FP8LAB_CUDA_CHECK(cudaMemsetAsync(layer.m.ptr, 0, n * sizeof(float), s));
        FP8LAB_CUDA_CHECK(cudaMemsetAsync(layer.v.ptr, 0, n * sizeof(float), s));
        layer.h16 = std::make_unique<Bf16Buffer>(std::size_t(rows_) * sh.out);
        if (fp8_) {
            layer.w8 = std::make_unique<Fp8Buffer>(n);
            layer.w8t = std::make_unique<Fp8Buffer>(n);
            layer.at8 = std::make_unique<Fp8Buffer>(std::size_t(rows_) * sh.in);
            const int input = 3 * l, weight = 3 * l + 1, grad = 3 * l + 2;
            layer.forward =
                std::make_unique<LtMatmul>(lt_.h, rows_, sh.out, sh.in, scaling_->operand(input, false, Stored::AsIs),
                                           scaling_->operand(weight, false, Stored::Transposed), CUDA_R_16BF,
                                           c_.experiment.numerics.fast_accumulation.forward);
            // wgrad: dW (out x in) = G^T (stored out x M) * X (stored transposed, in x M).
            layer.wgrad =
                std::make_unique<LtMatmul>(lt_.h, sh.out, sh.in, rows_, scaling_->operand(grad, true, Stored::AsIs),
                                           scaling_->operand(input, true, Stored::Transposed), CUDA_R_32F,
                                           c_.experiment.numerics.fast_accumulation.wgrad);
            // dgrad: dX (rows x in) = G (rows x out) * W (stored transposed, in x out).
            if (l > 0)
                for (int rows : chunk_row_counts())
                    layer.dgrad.push_back(std::make_unique<LtMatmul>(
                        lt_.h, rows, sh.in, sh.out, scaling_->operand(grad, false, Stored::AsIs),
                        scaling_->operand(weight, true, Stored::Transposed), CUDA_R_16BF,
                        c_.experiment.numerics.fast_accumulation.dgrad));
        } else {
            layer.w16 = std::make_unique<Bf16Buffer>(n);
            train::f32_to_bf16(layer.w.ptr, layer.w16->ptr, n, s);
            if (l > 0) layer.a16 = std::make_unique<Bf16Buffer>(std::size_t(rows_) * sh.in);
            layer.forward =
                std::make_unique<LtMatmul>(lt_.h, rows_, sh.out, sh.in, MatmulOperand{CUDA_R_16BF, Stored::AsIs},
                                           MatmulOperand{CUDA_R_16BF, Stored::Transposed}, CUDA_R_16BF, false);
            layer.wgrad =
                std::make_unique<LtMatmul>(lt_.h, sh.out, sh.in, rows_, MatmulOperand{CUDA_R_16BF, Stored::Transposed},
                                           MatmulOperand{CUDA_R_16BF, Stored::AsIs}, CUDA_R_32F, false);
            if (l > 0)
                layer.dgrad.push_back(
                    std::make_unique<LtMatmul>(lt_.h, rows_, sh.in, sh.out, MatmulOperand{CUDA_R_16BF, Stored::AsIs},
                                               MatmulOperand{CUDA_R_16BF, Stored::AsIs}, CUDA_R_16BF, false));
        }
    }

    // The two GEMMs that run beside an AdamW in a deferred step leave it SMs (mlp_step.hpp).
    void share_sms_with_updates() {
        int device = 0, sms = 0;
        FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
        FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        const int gemm_sms = sms - sms_left_to_update(sms, fp8_);
        if (layers_.back().w.count >= kShareSmsMinWeights) layers_.front().forward->run_on_sms(gemm_sms);
        if (layers_.front().w.count >= kShareSmsMinWeights) layers_.back().wgrad->run_on_sms(gemm_sms);
    }

    // Layer l's gradient is complete and its weights are no longer read this step: its
    // AdamW runs on the side stream while the main stream goes on with the layers below.
    void release_layer(int l, cudaStream_t main) {
        FP8LAB_CUDA_CHECK(cudaEventRecord(side_.layer_done[std::size_t(l)], main));
        FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(side_.stream, side_.layer_done[std::size_t(l)], 0));
        adamw_of(l, 0, side_.stream);
    }

    // With few tokens every kernel of the backward is short and each waits for the one
    // before: the last layer's wgrad runs on the side stream (with a workspace of its
    // own), beside the dgrad and the layers below, instead of between them.
    template <class Wgrad>
    void top_wgrad_on_side(const Wgrad& wgrad, cudaStream_t main) {
        FP8LAB_CUDA_CHECK(cudaEventRecord(side_.gradient_ready, main));
        FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(side_.stream, side_.gradient_ready, 0));
        wgrad(side_workspace_->ptr, side_.stream);
    }

    // The first layer's AdamW is the last update of a step. With a deferred last layer it
    // runs on the side stream beside that layer's wgrad; otherwise nothing is left to run
    // beside it, and on the main stream it need not wait behind the side stream's updates.
    void release_first_layer(cudaStream_t main) {
        if (defer_last_update_)
            release_layer(0, main);
        else
            adamw_of(0, 0, main);
    }

    // step_offset -1: the update of the step before, run after the step counter moved on.
    void adamw_of(int l, int step_offset, cudaStream_t s) {
        Layer& layer = layers_[std::size_t(l)];
        const train::AdamParams adam = rates_.params(c_.experiment.optimizer);
        train::adamw(layer.w.ptr, layer.m.ptr, layer.v.ptr, layer.dw.ptr, layer.w.count, adam, step_.ptr, step_offset,
                     fp8_ ? nullptr : layer.w16->ptr, s);
    }

    // On the side stream, before anything reads the last layer's weights.
    void run_deferred_update() {
        if (!update_pending_) return;
        adamw_of(int(layers_.size()) - 1, -1, side_.stream);
        update_pending_ = false;
    }
    bool deferred(int l) const { return defer_last_update_ && l + 1 == int(layers_.size()); }

    std::vector<int> chunk_row_counts() const {
        std::vector<int> counts{chunk_rows_};
        if (rows_ % chunk_rows_) counts.push_back(rows_ % chunk_rows_);
        return counts;
    }

    // The FP8 path's activation and gradient buffers.
    void make_fp8_buffers() {
        act8_ = std::make_unique<Fp8Buffer>(std::size_t(rows_) * max_dim_);
        // The last layer's gradient (rows x d); with hidden-to-hidden layers, also their
        // gradients (rows x h), in two buffers that alternate.
        const bool deep = c_.experiment.model.hidden_layers >= 2;
        g8_[0] = std::make_unique<Fp8Buffer>(std::size_t(rows_) * (deep ? max_dim_ : c_.experiment.model.input));
        if (deep) g8_[1] = std::make_unique<Fp8Buffer>(std::size_t(rows_) * max_dim_);
        da16_ = std::make_unique<Bf16Buffer>(std::size_t(chunk_rows_) * c_.experiment.model.hidden);
        dyt8_ = std::make_unique<Fp8Buffer>(std::size_t(rows_) * c_.experiment.model.input);
    }

    void make_bf16_buffers() {
        g16_[0] = std::make_unique<Bf16Buffer>(std::size_t(rows_) * c_.experiment.model.hidden);
        if (c_.experiment.model.hidden_layers >= 2)
            g16_[1] = std::make_unique<Bf16Buffer>(std::size_t(rows_) * c_.experiment.model.hidden);
    }

    std::size_t outputs() const { return std::size_t(rows_) * c_.experiment.model.input; }
    const __nv_bfloat16* x_batch(int batch) const { return x_pool_.ptr + std::size_t(batch) * outputs(); }
    const __nv_bfloat16* target_batch(int batch) const { return t_pool_.ptr + std::size_t(batch) * outputs(); }
    __nv_bfloat16* y_out() { return layers_.back().h16->ptr; }

    void cast(const CastSource& source, int rows, int cols, int j, std::uint8_t* out, std::uint8_t* out_t, int ld_t,
              cudaStream_t s, float* loss_partials = nullptr) {
        scaling_->cast(source, rows, cols, j, out, out_t, ld_t, s, loss_partials);
    }

    void forward_fp8(int batch, cudaStream_t s) {
        for (std::size_t l = 0; l < layers_.size(); ++l) {  // the weights, on the side stream
            Layer& layer = layers_[l];
            if (l + 1 == layers_.size()) run_deferred_update();
            cast({Source::F32, layer.w.ptr, nullptr, layer.shape.in}, layer.shape.out, layer.shape.in, 3 * int(l) + 1,
                 layer.w8->ptr, layer.w8t->ptr, layer.shape.out, side_.stream);
            FP8LAB_CUDA_CHECK(cudaEventRecord(side_.weight_ready[l], side_.stream));
        }
        cast({Source::Bf16, x_batch(batch), nullptr, c_.experiment.model.input}, rows_, c_.experiment.model.input, 0,
             act8_->ptr, layers_[0].at8->ptr, rows_, s);
        for (std::size_t l = 0; l < layers_.size(); ++l) {
            Layer& layer = layers_[l];
            const int j = 3 * int(l);
            FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(s, side_.weight_ready[l], 0));
            layer.forward->run(act8_->ptr, layer.w8->ptr, layer.h16->ptr, workspace_.ptr, s);
            if (l + 1 < layers_.size())  // GELU, cast for the next GEMM and its transpose for wgrad
                cast({Source::GeluOfBf16, layer.h16->ptr, nullptr, layer.shape.out}, rows_, layer.shape.out, j + 3,
                     act8_->ptr, layers_[l + 1].at8->ptr, rows_, s);
        }
    }

    void backward_fp8(int batch, cudaStream_t s) {
        const int last = int(layers_.size()) - 1;
        // The transposed gradient of a hidden layer lives where the forward's FP8 input was:
        // that is dead now. The last layer's has a buffer of its own, since its wgrad runs
        // beside (or after) the rest of the backward.
        std::uint8_t* gt8 = act8_->ptr;
        int g = 0;  // g8_[g] holds the current layer's gradient, not transposed
        // The output's gradient: with per-tensor scaling the loss is computed in its cast.
        const CastSource gradient = loss_in_cast_
                                        ? CastSource{Source::MseGradBf16,
                                                     y_out(),
                                                     target_batch(batch),
                                                     c_.experiment.model.input,
                                                     2.0f / float(scored_outputs()),
                                                     nullptr,
                                                     row_mask()}
                                        : CastSource{Source::Bf16, dy16_->ptr, nullptr, c_.experiment.model.input};
        cast(gradient, rows_, c_.experiment.model.input, 3 * last + 2, g8_[g]->ptr, dyt8_->ptr, rows_, s,
             loss_partials_.ptr);
        Layer& top = layers_.back();
        const auto top_wgrad = [&](void* workspace, cudaStream_t on) {
            top.wgrad->run(dyt8_->ptr, top.at8->ptr, top.dw.ptr, workspace, on);
        };
        // The GEMMs read the weights' FP8 copies, never the float32 weights: a layer's AdamW
        // can start as soon as its gradient is complete, beside its dgrad and the layers
        // below (BF16's must wait for the dgrad, which reads the copy its AdamW writes).
        if (!defer_last_update_) {
            top_wgrad_on_side(top_wgrad, s);
            adamw_of(last, 0, side_.stream);
        }
        for (int l = last; l >= 0; --l) {
            Layer& layer = layers_[std::size_t(l)];
            if (l < last) layer.wgrad->run(gt8, layer.at8->ptr, layer.dw.ptr, workspace_.ptr, s);
            if (l == 0) {
                release_first_layer(s);
                break;
            }
            if (l < last) release_layer(l, s);
            const LayerShape sh = layer.shape;
            const bool need_plain = l - 1 > 0;  // the first layer has no dgrad, so no plain copy
            if (need_plain && !g8_[1 - g]) throw GpuError("internal: no buffer for the hidden gradient");
            const __nv_bfloat16* h_prev = layers_[std::size_t(l - 1)].h16->ptr;
            for (int row0 = 0; row0 < rows_; row0 += chunk_rows_) {
                const int rows = std::min(chunk_rows_, rows_ - row0);
                LtMatmul& gemm = *layer.dgrad[rows == chunk_rows_ ? 0 : 1];
                gemm.run(g8_[g]->ptr + std::size_t(row0) * sh.out, layer.w8t->ptr, da16_->ptr, workspace_.ptr, s);
                cast({Source::GeluGradBf16, da16_->ptr, h_prev + std::size_t(row0) * sh.in, sh.in}, rows, sh.in,
                     3 * (l - 1) + 2, need_plain ? g8_[1 - g]->ptr + std::size_t(row0) * sh.in : nullptr, gt8 + row0,
                     rows_, s);
            }
            g = 1 - g;
        }
        if (defer_last_update_) top_wgrad(workspace_.ptr, s);
    }

    void forward_bf16(int batch, cudaStream_t s) {
        if (update_pending_) {
            run_deferred_update();
            FP8LAB_CUDA_CHECK(cudaEventRecord(side_.weight_ready.back(), side_.stream));
        }
        for (std::size_t l = 0; l < layers_.size(); ++l) {
            Layer& layer = layers_[l];
            if (deferred(int(l))) FP8LAB_CUDA_CHECK(cudaStreamWaitEvent(s, side_.weight_ready[l], 0));
            const __nv_bfloat16* input = l == 0 ? x_batch(batch) : layer.a16->ptr;
            layer.forward->run(input, layer.w16->ptr, layer.h16->ptr, workspace_.ptr, s);
            if (l + 1 < layers_.size())
                train::gelu_forward_bf16(layer.h16->ptr, layers_[l + 1].a16->ptr, layer.h16->count, s);
        }
    }

    void backward_bf16(int batch, cudaStream_t s) {
        __nv_bfloat16* grad = dy16_->ptr;
        int next = 0;
        const int last = int(layers_.size()) - 1;
        Layer& top = layers_.back();
        const auto top_wgrad = [&](void* workspace, cudaStream_t on) {  // its input: a hidden activation
            top.wgrad->run(dy16_->ptr, top.a16->ptr, top.dw.ptr, workspace, on);
        };
        if (!defer_last_update_) top_wgrad_on_side(top_wgrad, s);
        for (int l = last; l >= 0; --l) {
            Layer& layer = layers_[std::size_t(l)];
            const __nv_bfloat16* input = l == 0 ? x_batch(batch) : layer.a16->ptr;
            if (l < last) layer.wgrad->run(grad, input, layer.dw.ptr, workspace_.ptr, s);
            if (l == 0) {
                release_first_layer(s);
                break;
            }
            __nv_bfloat16* da = g16_[next]->ptr;
            layer.dgrad[0]->run(grad, layer.w16->ptr, da, workspace_.ptr, s);
            if (!deferred(l)) release_layer(l, s);  // after the dgrad: it reads this layer's BF16 weights
            const Bf16Buffer& h_prev = *layers_[std::size_t(l - 1)].h16;
            train::gelu_backward_bf16(da, h_prev.ptr, h_prev.count, s);
            grad = da;
            next = 1 - next;
        }
        if (defer_last_update_) top_wgrad(workspace_.ptr, s);
    }

    // The second stream of a step and the events that order it against the main one.
    struct SideStream {
        cudaStream_t stream = nullptr;
        cudaEvent_t fork = nullptr, join = nullptr, gradient_ready = nullptr;
        std::vector<cudaEvent_t> weight_ready, layer_done;
        explicit SideStream(std::size_t layers) : weight_ready(layers), layer_done(layers) {
            FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
            for (cudaEvent_t* e : all()) FP8LAB_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
        }
        ~SideStream() {
            if (stream) cudaStreamSynchronize(stream);
            for (cudaEvent_t* e : all())
                if (*e) cudaEventDestroy(*e);
            if (stream) cudaStreamDestroy(stream);
        }
        std::vector<cudaEvent_t*> all() {
            std::vector<cudaEvent_t*> events{&fork, &join, &gradient_ready};
            for (cudaEvent_t& e : weight_ready) events.push_back(&e);
            for (cudaEvent_t& e : layer_done) events.push_back(&e);
            return events;
        }
        SideStream(const SideStream&) = delete;
        SideStream& operator=(const SideStream&) = delete;
    };

    GpuRun c_;
    StepRates rates_;
    std::vector<LayerShape> shapes_;
    bool fp8_;
    std::unique_ptr<NativeScaling> scaling_;  // FP8 only; before the layers, whose GEMMs point into it
    bool loss_in_cast_;                       // the scaling computes the loss in the gradient's cast
    int batches_, rows_, max_dim_, chunk_rows_;
    bool defer_last_update_;
    bool update_pending_ = false;  // the last step left the last layer's AdamW to this one
    detail::LtHandle lt_;
    SideStream side_;
    DeviceBuffer<char> workspace_;
    std::unique_ptr<DeviceBuffer<char>> side_workspace_;  // for a GEMM on the side stream
    Bf16Buffer x_pool_, t_pool_;
    DeviceBuffer<float> loss_partials_, losses_;
    DeviceBuffer<int> step_;
    std::unique_ptr<Bf16Buffer> dy16_;  // the output's gradient, where mse_loss writes it
    // The outlier task: the rows the loss counts (null: every row), and how many.
    int scored_rows_ = 0;
    std::unique_ptr<DeviceBuffer<float>> row_mask_;
    const float* row_mask() const { return row_mask_ ? row_mask_->ptr : nullptr; }
    std::size_t scored_outputs() const { return std::size_t(scored_rows_) * c_.experiment.model.input; }
    std::deque<Layer> layers_;  // a deque: layers hold buffers that never move
    std::unique_ptr<Fp8Buffer> act8_, g8_[2], dyt8_;
    std::unique_ptr<Bf16Buffer> da16_, g16_[2];
};

}  // namespace

std::unique_ptr<MlpStep> make_native_mlp(const GpuRun& config, const HostTrainingData& data) {
    return std::make_unique<GpuMlp>(config, data);
}

}  // namespace fp8lab::gpu::detail
