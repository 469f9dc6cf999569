// SPDX-License-Identifier: Apache-2.0
// The MLP training step on the GPU for numerics its FP8 tensor cores cannot run (MX, NVFP4,
// FP6/FP4 elements, stochastic rounding, no scaling, BF16 edge layers, loss scaling): every
// GEMM operand is quantised exactly as the CPU trainer quantises it (codes and scales equal
// bit for bit) and written back as BF16, and the GEMMs multiply in BF16 with float32
// accumulation; the tensor's own dequantisation factor is the GEMM's alpha. Hopper has no
// MX or NVFP4 tensor cores: the speed is this emulation's, not that hardware's.
#include <cuda_bf16.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/kernels/emulated_cast.hpp"
#include "gpu/src/scaling/emulated_operand.hpp"
#include "gpu/src/scaling/emulated_recipe.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"
#include "gpu/src/kernels/step_guard.hpp"
#include "gpu/src/kernels/train_kernels.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu::detail {
namespace {

class GpuEmulatedMlp final : public MlpStep {
  public:
    GpuEmulatedMlp(const GpuRun& c, const HostTrainingData& data)
        : c_(c),
          n_(c.experiment.numerics),
          rates_(c.experiment),
          shapes_(layer_shapes(c.experiment.model)),
          layers_count_(int(shapes_.size())),
          tensors_(3 * layers_count_),
          fp8_(n_.precision == emu::Precision::Fp8),
          per_tensor_(fp8_ && n_.scaling && emu::recipe(n_.recipe).per_tensor()),
          delayed_(per_tensor_ && emu::recipe(n_.recipe).rule == emu::ScaleRule::Delayed),
          batches_(c.experiment.task.batches),
          rows_(c.experiment.tokens),
          max_dim_(std::max(c.experiment.model.input, c.experiment.model.hidden)),
          workspace_(kMatmulWorkspaceBytes),
          x_pool_(std::size_t(batches_) * rows_ * c.experiment.model.input),
          t_pool_(x_pool_.count),
          dy16_(std::size_t(rows_) * c.experiment.model.input),
          loss_partials_(std::size_t(train::kMaxLossPartials)),
          losses_(std::size_t(c.experiment.steps)),
          scale_per_step_(std::size_t(c.experiment.steps)),
          skipped_per_step_(std::size_t(c.experiment.steps)),
          step_(1),
          guard_(1),
          scaling_(std::size_t(tensors_)),
          amax_bits_(std::size_t(tensors_)),
          cast_amax_(std::size_t(tensors_) * 2),
          factors_(std::size_t(layers_count_) * kFactorsPerLayer),
          gq_(std::size_t(rows_) * max_dim_),
          gtq_(std::size_t(rows_) * max_dim_),
          da16_(std::size_t(rows_) * max_dim_) {
        FP8LAB_CUDA_CHECK(cudaMemset(step_.ptr, 0, sizeof(int)));
        FP8LAB_CUDA_CHECK(cudaMemset(losses_.ptr, 0xff, losses_.count * sizeof(float)));  // NaN until written
        upload(x_pool_.ptr, data.inputs, x_pool_.count);
        upload(t_pool_.ptr, data.targets, t_pool_.count);
        scored_rows_ = data.scored_rows;
        if (!data.row_mask.empty()) {
            row_mask_ = std::make_unique<DeviceBuffer<float>>(data.row_mask.size());
            upload(row_mask_->ptr, data.row_mask, data.row_mask.size());
        }
        train::StepGuard guard;
        guard.scale = n_.loss_scaling ? n_.loss_scaler.initial_scale : 1.0f;
        FP8LAB_CUDA_CHECK(cudaMemcpy(guard_.ptr, &guard, sizeof guard, cudaMemcpyHostToDevice));
        const std::vector<kernels::DeviceScaling> initial(static_cast<std::size_t>(tensors_));
        FP8LAB_CUDA_CHECK(cudaMemcpy(scaling_.ptr, initial.data(), initial.size() * sizeof(kernels::DeviceScaling),
                                     cudaMemcpyHostToDevice));
        FP8LAB_CUDA_CHECK(cudaMemset(amax_bits_.ptr, 0, amax_bits_.count * sizeof(unsigned)));
        make_tables();
        make_delayed_state();
        // Blocks that need an amax pass hold 16 elements or more: a bound on their number.
        std::size_t largest_tensor = std::size_t(rows_) * max_dim_;
        for (int l = 0; l < layers_count_; ++l) {
            add_layer(l, data.weights[std::size_t(l)]);
            largest_tensor = std::max(largest_tensor, layers_.back().w.count);
        }
        block_amax_ = std::make_unique<DeviceBuffer<unsigned>>(largest_tensor / 16);
        FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
        FP8LAB_CUDA_CHECK(cudaGetLastError());
    }

    int batches() const override { return batches_; }

    GpuInitialState initial_state() const override {
        return read_initial_state(layers_[0].w, x_pool_.ptr, t_pool_.ptr, outputs());
    }

    // One step on one stream: the forward with each operand cast for its GEMM, the loss,
    // the backward with the operands each GEMM contracts over cast anew (block recipes),
    // then the overflow check, the loss scaler and AdamW, and the scaling state.
    void enqueue_step(int batch, cudaStream_t s) override {
        for (int l = 0; l < layers_count_; ++l) forward(l, batch, s);
        train::mse_loss(y_out(), target_batch(batch), outputs(), c_.experiment.model.input, row_mask(),
                        2.0f / float(scored_outputs()), dy16_.ptr, loss_partials_.ptr, s);
        for (int l = layers_count_ - 1; l >= 0; --l) backward(l, batch, s);
        for (const Layer& layer : layers_) train::finite_check(layer.dw.ptr, layer.dw.count, guard_.ptr, s);
        train::LossScalingRules rules;
        rules.enabled = n_.loss_scaling;
        rules.growth_factor = n_.loss_scaler.growth_factor;
        rules.backoff_factor = n_.loss_scaler.backoff_factor;
        rules.growth_interval = n_.loss_scaler.growth_interval;
        train::guard_update(guard_.ptr, rules, step_.ptr, scale_per_step_.ptr, skipped_per_step_.ptr,
                            c_.experiment.steps, s);
        const train::AdamParams adam = rates_.params(c_.experiment.optimizer);
        for (Layer& layer : layers_)
            train::guarded_adamw(layer.w.ptr, layer.m.ptr, layer.v.ptr, layer.dw.ptr, layer.w.count, adam, guard_.ptr,
                                 step_.ptr, s);
        train::StepEnd end;
        end.loss_partials = loss_partials_.ptr;
        end.loss_partial_count = train::loss_partials(outputs());
        end.inv_outputs = 1.0f / float(scored_outputs());
        end.losses = losses_.ptr;
        end.capacity = c_.experiment.steps;
        if (fp8_) {
            end.scaling = {scaling_.ptr,
                           amax_bits_.ptr,
                           history_ ? history_->ptr : nullptr,
                           numerators_ ? numerators_->ptr : nullptr,
                           trace_amax_ ? trace_amax_->ptr : nullptr,
                           trace_scale_ ? trace_scale_->ptr : nullptr,
                           stats_ ? stats_->ptr : nullptr,
                           trace_stats_ ? trace_stats_->ptr : nullptr};
            end.tensors = tensors_;
            end.history_length = n_.delayed.history_length;
            end.algorithm_max = n_.delayed.algorithm == emu::AmaxAlgorithm::Max;
            end.delayed = delayed_;
        }
        train::finish_step(end, step_.ptr, s);
    }

    void flush_pending_update(cudaStream_t) override {}  // every update runs in its own step

    std::vector<float> losses(int steps_done) const override { return read(losses_, steps_done); }

    // The loss scale each step used and the steps whose update was skipped (overflow).
    std::vector<float> loss_scales(int steps_done) const { return read(scale_per_step_, steps_done); }
    std::vector<std::size_t> skipped_steps(int steps_done) const {
        std::vector<std::size_t> skipped;
        const std::vector<int> flags = read(skipped_per_step_, steps_done);
        for (std::size_t t = 0; t < flags.size(); ++t)
            if (flags[t]) skipped.push_back(t);
        return skipped;
    }

    void read_result(GpuTrainResult& result, int steps_done) const override {
        result.path = GpuPath::Emulated;
        if ((c_.experiment.numerics.precision == emu::Precision::Fp8 || n_.precision == emu::Precision::Fp8) &&
            c_.record_trace)
            result.trace = trace(steps_done, result.device);
        result.loss_scale = loss_scales(steps_done);
        result.skipped_steps = skipped_steps(steps_done);
        if (trace_stats_) result.numerics = numerics(steps_done);
    }

    // Every FP8 tensor's cast counts at every step, as the CPU trainer records them (the
    // BF16 edge layers have none).
    std::vector<emu::TensorNumerics> numerics(int steps_done) const {
        const std::vector<float> amax = read(*trace_amax_, steps_done * tensors_);
        const std::vector<float> scale = read(*trace_scale_, steps_done * tensors_);
        const std::vector<CastStats> stats = read(*trace_stats_, steps_done * tensors_);
        std::vector<std::uint64_t>
            elements;  // a layer's input (tokens x in), weight (out x in), gradient (tokens x out)
        for (const LayerShape& l : shapes_)
            for (const std::uint64_t n :
                 {std::uint64_t(rows_) * l.in, std::uint64_t(l.out) * l.in, std::uint64_t(rows_) * l.out})
                elements.push_back(n);
        std::vector<emu::TensorNumerics> all, out;
        append_numerics(all, stats, amax, scale, elements, steps_done, tensors_);
        for (std::size_t k = 0; k < all.size(); ++k)
            if (!layers_[(k % std::size_t(tensors_)) / 3].edge) out.push_back(std::move(all[k]));
        return out;
    }

    emu::AmaxTrace trace(int steps_done, const std::string& device) const {
        emu::AmaxTrace trace;
        trace.header = {{"source", "fp8lab GPU training step, emulated recipe (train_mlp_on_gpu)"},
                        {"device", device},
                        {"experiment", emu::describe(c_.experiment)}};
        if (!trace_amax_) return trace;
        const std::vector<float> amax = read(*trace_amax_, steps_done * tensors_);
        const std::vector<float> scale = read(*trace_scale_, steps_done * tensors_);
        append_trace_records(trace, amax, scale, steps_done, tensors_);
        return trace;
    }

  private:
    // Per layer, the factors its GEMMs multiply by: one per operand cast, one per GEMM.
    enum Factor { kInput, kWeight, kWeightT, kGrad, kGradT, kInputT, kForward, kDgrad, kWgrad, kFactorsPerLayer };

    // The casts of one layer's operands, as the CPU trainer quantises them.
    struct LayerCasts {
        struct Cast {
            OperandCast plan;
            int tensor = 0;  // the scaled tensor j (3 per layer: input, weight, gradient)
        };
        Cast input, weight, weight_t, grad, grad_t, input_t;
        std::vector<const Cast*> all() const { return {&input, &weight, &weight_t, &grad, &grad_t, &input_t}; }
    };

    struct Layer {
        LayerShape shape;
        DeviceBuffer<float> w, m, v, dw;
        Bf16Buffer h16, xq, wq;           // pre-activation output; forward operands
        std::unique_ptr<Bf16Buffer> wtq;  // the weight cast along its rows' other dimension (dgrad)
        std::unique_ptr<Bf16Buffer> xtq;  // the input cast down its columns (wgrad), in the forward
        LayerCasts casts;
        bool edge = false;
        bool reuse_weight = false;  // dgrad reads wq (per-tensor, or square blocks cast to nearest)
        std::unique_ptr<LtMatmul> forward, dgrad, wgrad;
        Layer(LayerShape s, int rows)
            : shape(s),
              w(std::size_t(s.in) * s.out),
              m(w.count),
              v(w.count),
              dw(w.count),
              h16(std::size_t(rows) * s.out),
              xq(std::size_t(rows) * s.in),
              wq(w.count) {}
    };

    std::string tensor_name(int l, const char* role) const { return "fc" + std::to_string(l + 1) + role; }

    void add_layer(int l, const std::vector<float>& initial) {
        const LayerShape sh = shapes_[std::size_t(l)];
        Layer& layer = layers_.emplace_back(sh, rows_);
        upload(layer.w.ptr, initial, layer.w.count);
        FP8LAB_CUDA_CHECK(cudaMemset(layer.m.ptr, 0, layer.m.count * sizeof(float)));
        FP8LAB_CUDA_CHECK(cudaMemset(layer.v.ptr, 0, layer.v.count * sizeof(float)));
        layer.edge = n_.edge_layers_bf16 && (l == 0 || l + 1 == layers_count_);
        const auto plan = [&](emu::TensorRole role, const char* suffix, bool wgrad, int tensor) {
            return LayerCasts::Cast{plan_operand_cast(n_, role, layer.edge, wgrad, tensor_name(l, suffix).size()),
                                    tensor};
        };
        LayerCasts& k = layer.casts;
        k.input = plan(emu::TensorRole::Input, ".input", false, 3 * l);
        k.weight = plan(emu::TensorRole::Weight, ".weight", false, 3 * l + 1);
        k.weight_t = plan(emu::TensorRole::Weight, ".weight", false, 3 * l + 1);
        k.grad = plan(emu::TensorRole::GradOutput, ".grad_output", false, 3 * l + 2);
        k.grad_t = plan(emu::TensorRole::GradOutput, ".grad_output", true, 3 * l + 2);
        k.input_t = plan(emu::TensorRole::Input, ".input", true, 3 * l);
        const OperandCast& w = k.weight.plan;
        // W^T cast in square blocks is the transpose of W's cast (same blocks, same amaxes)
        // unless stochastic rounding counts the elements in the transposed order.
        layer.reuse_weight = w.per_tensor || (w.square_blocks() && !w.params.stochastic);
        if (l > 0 && !layer.reuse_weight) layer.wtq = std::make_unique<Bf16Buffer>(layer.w.count);
        if (!k.input.plan.per_tensor) layer.xtq = std::make_unique<Bf16Buffer>(layer.xq.count);
        float* f = factors_.ptr + std::size_t(l) * kFactorsPerLayer;
        const MatmulOperand as_is{CUDA_R_16BF, Stored::AsIs}, transposed{CUDA_R_16BF, Stored::Transposed};
        layer.forward = std::make_unique<LtMatmul>(lt_.h, rows_, sh.out, sh.in, as_is, transposed, CUDA_R_16BF, false,
                                                   f + kForward);
        layer.wgrad =
            std::make_unique<LtMatmul>(lt_.h, sh.out, sh.in, rows_, transposed, as_is, CUDA_R_32F, false, f + kWgrad);
        if (l > 0)
            layer.dgrad =
                std::make_unique<LtMatmul>(lt_.h, rows_, sh.in, sh.out, as_is, as_is, CUDA_R_16BF, false, f + kDgrad);
    }

    void make_tables() {
        const std::vector<float> e4m3 = value_table(emu::e4m3());
        e4m3_values_ = std::make_unique<DeviceBuffer<float>>(256);
        FP8LAB_CUDA_CHECK(cudaMemcpy(e4m3_values_->ptr, e4m3.data(), 256 * sizeof(float), cudaMemcpyHostToDevice));
        const emu::TensorRole roles[3] = {emu::TensorRole::Input, emu::TensorRole::Weight, emu::TensorRole::GradOutput};
        for (int r = 0; r < 3; ++r) {
            const emu::Format& f = *emu::recipe_of(n_).formats.of(roles[r]);
            const std::vector<float> values = value_table(f);
            role_values_[r] = std::make_unique<DeviceBuffer<float>>(256);
            FP8LAB_CUDA_CHECK(
                cudaMemcpy(role_values_[r]->ptr, values.data(), 256 * sizeof(float), cudaMemcpyHostToDevice));
            max_finite_[r] = static_cast<float>(f.max_finite);
        }
    }

    void make_delayed_state() {
        if (!fp8_) return;
        const int length = n_.delayed.history_length;
        history_ = std::make_unique<DeviceBuffer<float>>(std::size_t(tensors_) * length);
        FP8LAB_CUDA_CHECK(cudaMemset(history_->ptr, 0, history_->count * sizeof(float)));
        std::vector<float> numerators;
        for (int j = 0; j < tensors_; ++j)  // formed in float32 first, exactly as the emulator does
            numerators.push_back(std::ldexp(max_finite_[j % 3], -n_.delayed.margin));
        numerators_ = std::make_unique<DeviceBuffer<float>>(numerators.size());
        FP8LAB_CUDA_CHECK(
            cudaMemcpy(numerators_->ptr, numerators.data(), numerators.size() * sizeof(float), cudaMemcpyHostToDevice));
        if (c_.record_trace || c_.record_numerics) {
            trace_amax_ = std::make_unique<DeviceBuffer<float>>(std::size_t(c_.experiment.steps) * tensors_);
            trace_scale_ = std::make_unique<DeviceBuffer<float>>(trace_amax_->count);
        }
        if (c_.record_numerics) {
            stats_ = std::make_unique<DeviceBuffer<CastStats>>(std::size_t(tensors_) * train::kStatsLanes);
            trace_stats_ = std::make_unique<DeviceBuffer<CastStats>>(std::size_t(c_.experiment.steps) * tensors_);
            FP8LAB_CUDA_CHECK(cudaMemset(stats_->ptr, 0, stats_->count * sizeof(CastStats)));
            FP8LAB_CUDA_CHECK(cudaMemset(trace_stats_->ptr, 0, trace_stats_->count * sizeof(CastStats)));
        }
    }

    // One cast of `source` (rows x cols) into `out`. `columns`: blocks down the columns
    // (the CPU quantises the transpose); `record`: this cast carries the tensor's amax.
    void cast(const LayerCasts::Cast& k, const train::CastSource& source, int rows, int cols, bool columns, bool record,
              __nv_bfloat16* out, float* factor, cudaStream_t s) {
        train::emulated_cast(source, rows, cols, prepare(k, source, rows, cols, columns, record, out, factor, s), s);
    }

    // Both casts of a tensor that feeds two GEMMs contracting over different dimensions:
    // along its rows into `out` and down its columns into `out_t`, in one kernel where
    // train::can_cast_pair allows (one read of the source), else one after the other.
    void cast_both(const LayerCasts::Cast& k, const LayerCasts::Cast& k_t, const train::CastSource& source, int rows,
                   int cols, __nv_bfloat16* out, float* factor, __nv_bfloat16* out_t, float* factor_t, cudaStream_t s) {
        const train::EmulatedCast along = prepare(k, source, rows, cols, false, true, out, factor, s);
        if (along.block_amax_bits) {  // one block amax buffer: cast before the next pass refills it
            train::emulated_cast(source, rows, cols, along, s);
            cast(k_t, source, rows, cols, true, false, out_t, factor_t, s);
            return;
        }
        const train::EmulatedCast down = prepare(k_t, source, rows, cols, true, false, out_t, factor_t, s);
        if (train::can_cast_pair(rows, cols, along, down)) {
            train::emulated_cast_pair(source, rows, cols, along, down, s);
        } else {
            train::emulated_cast(source, rows, cols, along, s);
            train::emulated_cast(source, rows, cols, down, s);
        }
    }

    // A cast's description, with the passes it needs first (amaxes, scales) enqueued.
    train::EmulatedCast prepare(const LayerCasts::Cast& k, const train::CastSource& source, int rows, int cols,
                                bool columns, bool record, __nv_bfloat16* out, float* factor, cudaStream_t s) {
        const OperandCast& p = k.plan;
        const int j = k.tensor;
        const bool per_tensor_scale = p.params.rule == vq::ScaleRule::PerTensor;
        if (per_tensor_scale && !delayed_) {  // current scaling: this tensor's own amax first
            train::tensor_amax(source, rows, cols, false, 0, nullptr, amax_bits_.ptr + j, s);
            train::current_scale(amax_bits_.ptr + j, max_finite_[j % 3], scaling_.ptr + j, s);
        }
        const EmulatedCastShared shared{step_.ptr,
                                        {role_values_[0]->ptr, role_values_[1]->ptr, role_values_[2]->ptr},
                                        e4m3_values_->ptr,
                                        block_amax_->ptr};
        // NVFP4's amax slots were filled by nvfp4_amaxes().
        train::EmulatedCast e = describe_emulated_cast(p, j % 3, shared, source, rows, cols, columns, out, factor,
                                                       cast_amax_.ptr + 2 * j, s);
        if (per_tensor_scale) e.tensor_scaling = scaling_.ptr + j;
        if (!(per_tensor_scale && !delayed_) && record && fp8_)
            e.amax_bits = amax_bits_.ptr + j;  // the trace's amax (and delayed scaling's record)
        if (record && stats_ && p.params.rule != vq::ScaleRule::Bf16Only)
            e.stats = stats_->ptr + std::size_t(j) * train::kStatsLanes;  // the cast the CPU records
        return e;
    }

    // NVFP4's tensor amaxes of tensor k for this step, before its first cast: the plain one
    // (rows casts, and columns casts without the transform) and, where the wgrad operand's
    // columns are Hadamard-transformed, the transformed one, from the same read. A tensor
    // is the same in its forward and backward casts, so one pass serves both.
    void nvfp4_amaxes(const LayerCasts::Cast& k, const LayerCasts::Cast* wgrad, const train::CastSource& source,
                      int rows, int cols, cudaStream_t s) {
        enqueue_nvfp4_amaxes(k.plan, wgrad ? &wgrad->plan : nullptr, source, rows, cols, step_.ptr,
                             cast_amax_.ptr + 2 * k.tensor, s);
    }

    train::CastSource layer_input(int l, int batch) const {
        if (l == 0) return {train::Source::Bf16, x_batch(batch), nullptr, c_.experiment.model.input};
        return {train::Source::GeluOfBf16, layers_[std::size_t(l - 1)].h16.ptr, nullptr, shapes_[std::size_t(l)].in};
    }

    float* factor(int l, Factor f) { return factors_.ptr + std::size_t(l) * kFactorsPerLayer + f; }

    void forward(int l, int batch, cudaStream_t s) {
        Layer& layer = layers_[std::size_t(l)];
        const LayerShape sh = layer.shape;
        const train::CastSource weight{train::Source::F32, layer.w.ptr, nullptr, sh.in};
        nvfp4_amaxes(layer.casts.input, &layer.casts.input_t, layer_input(l, batch), rows_, sh.in, s);
        nvfp4_amaxes(layer.casts.weight, nullptr, weight, sh.out, sh.in, s);
        if (layer.xtq)  // block recipes: the wgrad's operand too, from the same read
            cast_both(layer.casts.input, layer.casts.input_t, layer_input(l, batch), rows_, sh.in, layer.xq.ptr,
                      factor(l, kInput), layer.xtq->ptr, factor(l, kInputT), s);
        else
            cast(layer.casts.input, layer_input(l, batch), rows_, sh.in, false, true, layer.xq.ptr, factor(l, kInput),
                 s);
        cast(layer.casts.weight, weight, sh.out, sh.in, false, true, layer.wq.ptr, factor(l, kWeight), s);
        train::gemm_alpha(factor(l, kInput), factor(l, kWeight), factor(l, kForward), s);
        layer.forward->run(layer.xq.ptr, layer.wq.ptr, layer.h16.ptr, workspace_.ptr, s);
    }

    void backward(int l, int batch, cudaStream_t s) {
        Layer& layer = layers_[std::size_t(l)];
        const LayerShape sh = layer.shape;
        // The gradient of this layer's output: the loss's (times the loss scale), or the
        // dgrad of the layer above through GELU's derivative.
        const train::CastSource grad =
            l + 1 == layers_count_ ? train::CastSource{train::Source::MseGradF32,
                                                       y_out(),
                                                       target_batch(batch),
                                                       c_.experiment.model.input,
                                                       2.0f / float(scored_outputs()),
                                                       &guard_.ptr->scale,
                                                       row_mask()}
                                   : train::CastSource{train::Source::GeluGradBf16, da16_.ptr, layer.h16.ptr, sh.out};
        nvfp4_amaxes(layer.casts.grad, &layer.casts.grad_t, grad, rows_, sh.out, s);
        // wgrad contracts over the tokens: block recipes cast both operands down the columns
        // (the input's was cast in the forward).
        const __nv_bfloat16* g_t = gq_.ptr;
        Factor g_t_factor = kGrad;
        if (layer.casts.grad.plan.per_tensor) {
            cast(layer.casts.grad, grad, rows_, sh.out, false, true, gq_.ptr, factor(l, kGrad), s);
        } else {
            cast_both(layer.casts.grad, layer.casts.grad_t, grad, rows_, sh.out, gq_.ptr, factor(l, kGrad), gtq_.ptr,
                      factor(l, kGradT), s);
            g_t = gtq_.ptr;
            g_t_factor = kGradT;
        }
        const __nv_bfloat16* x_t = layer.xtq ? layer.xtq->ptr : layer.xq.ptr;
        const Factor x_t_factor = layer.xtq ? kInputT : kInput;
        train::gemm_alpha(factor(l, g_t_factor), factor(l, x_t_factor), factor(l, kWgrad), s);
        layer.wgrad->run(g_t, x_t, layer.dw.ptr, workspace_.ptr, s);
        if (l == 0) return;  // the input needs no gradient
        const __nv_bfloat16* w_t = layer.wq.ptr;
        Factor w_t_factor = kWeight;
        if (!layer.reuse_weight) {
            cast(layer.casts.weight_t, {train::Source::F32, layer.w.ptr, nullptr, sh.in}, sh.out, sh.in, true, false,
                 layer.wtq->ptr, factor(l, kWeightT), s);
            w_t = layer.wtq->ptr;
            w_t_factor = kWeightT;
        }
        train::gemm_alpha(factor(l, kGrad), factor(l, w_t_factor), factor(l, kDgrad), s);
        layer.dgrad->run(gq_.ptr, w_t, da16_.ptr, workspace_.ptr, s);
    }

    template <class T>
    static std::vector<T> read(const DeviceBuffer<T>& buffer, int count) {
        std::vector<T> host(std::size_t(std::max(count, 0)));
        if (!host.empty())
            FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), buffer.ptr, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }

    std::size_t outputs() const { return std::size_t(rows_) * c_.experiment.model.input; }
    // The outlier task: the rows the loss counts (null: every row), and how many.
    const float* row_mask() const { return row_mask_ ? row_mask_->ptr : nullptr; }
    std::size_t scored_outputs() const { return std::size_t(scored_rows_) * c_.experiment.model.input; }
    const __nv_bfloat16* x_batch(int batch) const { return x_pool_.ptr + std::size_t(batch) * outputs(); }
    const __nv_bfloat16* target_batch(int batch) const { return t_pool_.ptr + std::size_t(batch) * outputs(); }
    __nv_bfloat16* y_out() { return layers_.back().h16.ptr; }

    GpuRun c_;
    emu::Numerics n_;
    StepRates rates_;
    std::vector<LayerShape> shapes_;
    int layers_count_, tensors_;
    bool fp8_, per_tensor_, delayed_;
    int batches_, rows_, max_dim_;
    LtHandle lt_;
    DeviceBuffer<char> workspace_;
    Bf16Buffer x_pool_, t_pool_, dy16_;
    DeviceBuffer<float> loss_partials_, losses_, scale_per_step_;
    DeviceBuffer<int> skipped_per_step_, step_;
    DeviceBuffer<train::StepGuard> guard_;
    DeviceBuffer<kernels::DeviceScaling> scaling_;
    DeviceBuffer<unsigned> amax_bits_, cast_amax_;
    std::unique_ptr<DeviceBuffer<unsigned>> block_amax_;
    DeviceBuffer<float> factors_;
    Bf16Buffer gq_, gtq_, da16_;
    std::unique_ptr<DeviceBuffer<float>> e4m3_values_, role_values_[3];
    float max_finite_[3] = {448.0f, 448.0f, 57344.0f};
    std::unique_ptr<DeviceBuffer<float>> history_, numerators_, trace_amax_, trace_scale_;
    std::unique_ptr<DeviceBuffer<CastStats>> stats_, trace_stats_;  // record_numerics only
    std::deque<Layer> layers_;                                      // a deque: layers hold buffers that never move
    int scored_rows_ = 0;
    std::unique_ptr<DeviceBuffer<float>> row_mask_;
};

}  // namespace

std::unique_ptr<MlpStep> make_emulated_mlp(const GpuRun& config, const HostTrainingData& data) {
    return std::make_unique<GpuEmulatedMlp>(config, data);
}

}  // namespace fp8lab::gpu::detail
