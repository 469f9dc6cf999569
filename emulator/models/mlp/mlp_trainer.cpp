// SPDX-License-Identifier: Apache-2.0
// MLP training step by step: quantised operands, float32 GEMMs (the ordered GEMM), AdamW.
#include "emulator/models/mlp/mlp_trainer.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include <Eigen/Dense>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/training/adamw.hpp"
#include "emulator/formats/bf16_function_table.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/training/linear_gemms.hpp"
#include "emulator/models/mlp/inference_quantization.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/gemm/trainer_matrix.hpp"

namespace fp8lab::emu {
namespace {

struct Layer {
    Matrix weight;  // out x in
    Eigen::RowVectorXf bias;
    Matrix weight_m, weight_v;
    Eigen::RowVectorXf bias_m, bias_v;
    Matrix weight_grad;
    bool weight_grad_finite = false;   // known from its GEMM's operands (product_certainly_finite)
    std::optional<float> weight_amax;  // the weights' amax from AdamW's last update (none before it)
    Eigen::RowVectorXf bias_grad;
};

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)

// GELU's tanh form. The backward pass reuses the forward's tanh of each element (the
// same expression of the same input: the same bits), so it is evaluated once per step.
float gelu_tanh(float z) { return std::tanh(kGeluC * (z + 0.044715f * z * z * z)); }
float gelu(float z, float t) { return 0.5f * z * (1.0f + t); }
float gelu_grad(float z, float t) {
    return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * z * z);
}

// gelu_tanh at every BF16 value: where the step stores the pre-activation in BF16 (every
// recipe but FP32), GELU looks its tanh up (calling tanhf on each element was most of its time).
const float* bf16_gelu_tanh_table() {
    static const std::vector<float> table = bf16_function_table(gelu_tanh);
    return table.data();
}

// out = GELU(pre) and t = the tanh inside it, element by element in parallel chunks;
// pre_in_bf16: every element of pre is a BF16 value.
void gelu_forward(const Matrix& pre, bool pre_in_bf16, Matrix& out, Matrix& t) {
    out.resize(pre.rows(), pre.cols());
    t.resize(pre.rows(), pre.cols());
    const float* z = pre.data();
    float* o = out.data();
    float* th = t.data();
    const float* table = pre_in_bf16 ? bf16_gelu_tanh_table() : nullptr;
    parallel_for_chunks(std::size_t(pre.size()), 1 << 14, [&](std::size_t, std::size_t begin, std::size_t end) {
        if (table)
            for (std::size_t i = begin; i < end; ++i) th[i] = bf16_lookup(table, z[i]);
        else
            for (std::size_t i = begin; i < end; ++i) th[i] = gelu_tanh(z[i]);
        for (std::size_t i = begin; i < end; ++i) o[i] = gelu(z[i], th[i]);
    });
}

// grad *= GELU'(pre), with the forward's tanh values t.
void gelu_backward(const Matrix& pre, const Matrix& t, Matrix& grad) {
    const float* z = pre.data();
    const float* th = t.data();
    float* g = grad.data();
    parallel_for_chunks(std::size_t(grad.size()), 1 << 14, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) g[i] = g[i] * gelu_grad(z[i], th[i]);
    });
}

// The trainer's state for one run: layers, quantiser, and the operand function.
class Run {
  public:
    Run(const Experiment& e, bool record_trace, bool record_numerics = false)
        : c_(e),
          n_(e.numerics),
          record_trace_(record_trace),
          record_numerics_(record_numerics),
          task_(e),
          quantizer_(e.numerics),
          learning_rates_(learning_rates(e)) {
        std::vector<int> dims = {e.model.input};
        for (int i = 0; i < e.model.hidden_layers; ++i) dims.push_back(e.model.hidden);
        dims.push_back(e.model.output);
        for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
            Layer layer;
            const int in = dims[l], out = dims[l + 1];
            const std::vector<float> w = initial_weights(e, int(l));
            layer.weight = MatrixMap(w.data(), out, in);
            layer.bias = Eigen::RowVectorXf::Zero(out);
            layer.weight_m = layer.weight_v = Matrix::Zero(out, in);
            layer.bias_m = layer.bias_v = Eigen::RowVectorXf::Zero(out);
            layers_.push_back(std::move(layer));
        }
        if (n_.loss_scaling) scaler_.emplace(n_.loss_scaler);
    }

    TrainerResult run(const TrainStepCallback& on_step) {
        TrainerResult result;
        if (record_trace_) result.trace.header = {{"source", "fp8lab CPU emulator"}, {"experiment", describe(c_)}};
        if (record_numerics_) quantizer_.log_numerics(&result.numerics);
        quantizer_.fill_histograms(record_trace_);
        std::vector<Matrix> start;
        for (const Layer& layer : layers_) start.push_back(layer.weight);
        for (int step = 0; step < c_.steps; ++step) {
            const float loss = train_step(step, result);
            if (!record_trace_) result.trace.records.clear();  // traced for the numerics only
            result.loss.push_back(loss);
            if (on_step && !on_step(step, loss)) {
                result.cancelled = true;
                break;
            }
        }
        quantizer_.log_numerics(nullptr);
        result.gradient_elements = quantizer_.gradient_elements();
        result.gradients_flushed = quantizer_.gradients_flushed();
        result.gradients_zero = quantizer_.gradients_zero();
        result.input_elements = quantizer_.input_elements();
        result.inputs_flushed = quantizer_.inputs_flushed();
        result.inputs_subnormal = quantizer_.inputs_subnormal();
        result.scaling = quantizer_.state();
        double moved = 0, size = 0;
        for (std::size_t l = 0; l < layers_.size(); ++l) {
            moved += (layers_[l].weight - start[l]).cast<double>().squaredNorm();
            size += start[l].cast<double>().squaredNorm();
        }
        result.weight_change = size > 0 ? std::sqrt(moved / size) : 0.0;
        for (const Layer& layer : layers_)
            result.final_layers.push_back({int(layer.weight.cols()),
                                           int(layer.weight.rows()),
                                           {layer.weight.data(), layer.weight.data() + layer.weight.size()},
                                           {layer.bias.data(), layer.bias.data() + layer.bias.size()}});
        if (scaler_) result.loss_scale = scaler_->scale_per_step();
        return result;
    }

    bool block_recipe() const { return !quantizer_.recipe().per_tensor(); }
    Precision layer_precision(std::size_t layer) const {
        const bool edge = layer == 0 || layer + 1 == layers_.size();
        if (n_.precision == Precision::Fp8 && n_.edge_layers_bf16 && edge) return Precision::Bf16;
        return n_.precision;
    }

    // One of a layer's GEMMs: an FP8 one with fast accumulation on goes through the CPU's
    // model of it (a narrow accumulator, emulator/gemm/ordered_gemm.hpp); the rest sum in float32.
    template <class Lhs, class Rhs>
    void gemm(bool fast_accumulation, std::size_t layer, const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
        if (fast_accumulation && layer_precision(layer) == Precision::Fp8)
            narrow_accumulator_product(lhs, rhs, dst, kFastAccumulationFractionBits);
        else
            product(lhs, rhs, dst);
    }
    bool quantised_operands() const { return n_.precision != Precision::Fp32; }
    // The matrix a GEMM operand reads, whether it is passed as stored or transposed.
    static const Matrix& stored(const Matrix& x) { return x; }
    static const Matrix& stored(const Eigen::Transpose<const Matrix>& x) { return x.nestedExpression(); }

    // What a GEMM sees of a rows x cols operand whose contraction runs along the columns,
    // into `out` (a buffer kept from step to step: its memory is reused, not faulted in).
    // FP32 operands are x itself (no copy): the result refers to x or to out.
    const Matrix& operand(const std::string& name, TensorRole role, const Matrix& x, std::size_t layer,
                          std::uint64_t step, AmaxTrace* trace, Matrix& out, const CastRequest& request = {}) {
        const std::span<const float> in(x.data(), std::size_t(x.size()));
        const Precision p = layer_precision(layer);
        if (p == Precision::Fp32) return x;
        out.resize(x.rows(), x.cols());
        const std::span<float> dst(out.data(), std::size_t(out.size()));
        if (p == Precision::Bf16)
            round_span(bf16(), in, dst);
        else
            quantizer_.quantize(name, role, in, std::size_t(x.rows()), std::size_t(x.cols()), step, trace, dst,
                                request);
        return out;
    }

    // The batch of a step, generated once per distinct batch while they fit in memory
    // (the teacher's targets cost as much as a training step's forward pass).
    const Batch& batch_of_step(int step) {
        const std::uint64_t index = std::uint64_t(step) % std::uint64_t(c_.task.batches);
        const double bytes =
            double(c_.tokens) * double(c_.model.input + c_.model.output) * 4.0 * double(c_.task.batches);
        if (bytes > kBatchCacheBytes) {
            uncached_batch_ = task_.batch_of_step(std::uint64_t(step));
            return uncached_batch_;
        }
        if (batches_.empty()) batches_.resize(std::size_t(c_.task.batches));
        if (!batches_[index]) batches_[index] = task_.batch_of_step(std::uint64_t(step));
        return *batches_[index];
    }

    float train_step(int step, TrainerResult& result) {
        const float loss = forward_backward(step, result);
        quantizer_.end_step();
        if (!apply_update(scaler_ ? scaler_->scale() : 1.0f, step)) result.skipped_steps.push_back(std::size_t(step));
        return loss;
    }

    GradientSnapshot snapshot_first_step() {
        TrainerResult scratch;
        GradientSnapshot snapshot;
        snapshot.loss = forward_backward(0, scratch);
        const float loss_scale = scaler_ ? scaler_->scale() : 1.0f;
        for (const Layer& layer : layers_) {
            auto copy = [](const auto& m, float divisor) {
                std::vector<float> v(m.data(), m.data() + m.size());
                for (float& x : v) x /= divisor;
                return v;
            };
            snapshot.layers.push_back({int(layer.weight.cols()), int(layer.weight.rows()), copy(layer.weight, 1.0f),
                                       copy(layer.bias, 1.0f), copy(layer.weight_grad, loss_scale),
                                       copy(layer.bias_grad, loss_scale)});
        }
        return snapshot;
    }

  private:
    // Forward, loss and backward of one step: leaves the gradients in the layers.
    float forward_backward(int step, TrainerResult& result) {
        const Batch& batch = batch_of_step(step);
        const int m = c_.tokens;
        AmaxTrace* trace = record_trace_ || record_numerics_ ? &result.trace : nullptr;
        const std::size_t count = layers_.size();
        inputs_.resize(count);
        inputs_q_.resize(count);
        weights_q_.resize(count);
        input_buffers_.resize(count);
        weight_buffers_.resize(count);
        pre_.resize(count);
        gelu_tanh_.resize(count);

        Matrix x = MatrixMap(batch.inputs.data(), m, c_.model.input);
        for (std::size_t l = 0; l < count; ++l) {
            const std::string prefix = "fc" + std::to_string(l + 1);
            inputs_[l] = x;
            inputs_q_[l] =
                &operand(prefix + ".input", TensorRole::Input, inputs_[l], l, step, trace, input_buffers_[l]);
            // AdamW found the weights' amax as it wrote them: per-tensor current scaling takes it.
            weights_q_[l] = &operand(prefix + ".weight", TensorRole::Weight, layers_[l].weight, l, step, trace,
                                     weight_buffers_[l], {.amax = layers_[l].weight_amax});
            gemm(n_.fast_accumulation.forward, l, *inputs_q_[l], weights_q_[l]->transpose(), pre_[l]);
            if (c_.model.biases) pre_[l].rowwise() += layers_[l].bias;
            if (quantised_operands()) store_in_bf16(pre_[l]);
            if (l + 1 < count)
                gelu_forward(pre_[l], quantised_operands(), x, gelu_tanh_[l]);
            else
                x = pre_[l];
        }

        // Loss and its gradient with respect to the output.
        const Matrix& out = pre_.back();
        const MatrixMap target(batch.targets.data(), m, c_.model.output);
        Matrix grad;
        float loss;
        if (is_regression(c_.task.kind)) {
            // The mean over the scored rows (all but the outlier task's massive ones).
            Matrix diff = out - target;
            int scored = m;
            if (!batch.scored.empty()) {
                scored = 0;
                for (int t = 0; t < m; ++t)
                    if (batch.scored[std::size_t(t)])
                        ++scored;
                    else
                        diff.row(t).setZero();
            }
            const float count = float(scored) * float(c_.model.output);
            loss = diff.squaredNorm() / count;
            grad = diff * (2.0f / count);
        } else {
            Matrix p = (out.colwise() - out.rowwise().maxCoeff()).array().exp();
            p.array().colwise() /= p.rowwise().sum().array();
            double nll = 0;
            int correct = 0;
            for (int t = 0; t < m; ++t) {
                nll -= std::log(std::max(p(t, batch.labels[t]), 1e-30f));
                Eigen::Index arg;
                out.row(t).maxCoeff(&arg);
                correct += arg == batch.labels[t];
            }
            loss = float(nll / m);
            result.accuracy.push_back(float(correct) / float(m));
            grad = (p - target) / float(m);
        }
        const float loss_scale = scaler_ ? scaler_->scale() : 1.0f;
        if (scaler_) grad *= loss_scale;

        for (std::size_t l = count; l-- > 0;) {
            const std::string prefix = "fc" + std::to_string(l + 1);
            Layer& layer = layers_[l];
            // A copy even in FP32: grad is overwritten by the dgrad below.
            g_q_ = operand(prefix + ".grad_output", TensorRole::GradOutput, grad, l, step, trace, g_buffer_);
            if (block_recipe() && n_.precision == Precision::Fp8) {
                block_recipe_backward(
                    quantizer_.recipe(), prefix, grad, g_q_, inputs_[l], layer.weight, *weights_q_[l], block_,
                    [&](const std::string& tensor, TensorRole role, const Matrix& x, Matrix& out, bool wgrad_operand,
                        bool transposed) -> const Matrix& {
                        return operand(tensor, role, x, l, step, nullptr, out, {wgrad_operand, transposed});
                    },
                    [&](bool dgrad, const auto& lhs, const auto& rhs, Matrix& dst) {
                        gemm(dgrad ? n_.fast_accumulation.dgrad : n_.fast_accumulation.wgrad, l, lhs, rhs, dst);
                        if (!dgrad)
                            layer.weight_grad_finite = product_certainly_finite(stored(lhs), stored(rhs), lhs.cols());
                    },
                    layer.weight_grad, l > 0 ? &grad : nullptr);
            } else {
                gemm(n_.fast_accumulation.wgrad, l, g_q_.transpose(), *inputs_q_[l], layer.weight_grad);
                layer.weight_grad_finite = product_certainly_finite(g_q_, *inputs_q_[l], m);
                if (l > 0) gemm(n_.fast_accumulation.dgrad, l, g_q_, *weights_q_[l], grad);
            }
            layer.bias_grad = Eigen::RowVectorXf::Zero(layer.bias.size());
            if (c_.model.biases)
                for (int t = 0; t < m; ++t) layer.bias_grad += g_q_.row(t);  // fixed order
            if (l > 0) {
                if (quantised_operands()) store_in_bf16(grad);  // dgrad's output, as the GPU stores it
                gelu_backward(pre_[l - 1], gelu_tanh_[l - 1], grad);
            }
        }
        return loss;
    }

    // False when the step's update was not applied: a gradient was not finite (with a
    // loss scaler, its overflow; without one, the GPU's step guard skips it the same way).
    bool apply_update(float loss_scale, int step) {
        bool finite = true;
        for (Layer& layer : layers_) {
            if (loss_scale != 1.0f) {
                layer.weight_grad /= loss_scale;
                layer.bias_grad /= loss_scale;
            }
            // Dividing by a scale of at least 1 keeps a finite gradient finite.
            const bool known_finite = layer.weight_grad_finite && loss_scale >= 1.0f;
            finite = finite &&
                     (known_finite || all_finite(layer.weight_grad.data(), std::size_t(layer.weight_grad.size()))) &&
                     all_finite(layer.bias_grad.data(), std::size_t(layer.bias_grad.size()));
        }
        if (scaler_) scaler_->update(!finite);
        if (!finite) return false;
        const OptimizerSpec& o = c_.optimizer;
        const float clip = o.grad_clip > 0 ? clip_factor(o.grad_clip) : 1.0f;
        ++adam_steps_;
        AdamStep a;
        a.beta1 = o.beta1, a.beta2 = o.beta2, a.epsilon = o.epsilon,
        a.learning_rate = learning_rates_[std::size_t(step)];
        a.bc1 = 1.0f - std::pow(o.beta1, float(adam_steps_));
        a.bc2 = 1.0f - std::pow(o.beta2, float(adam_steps_));
        a.clip = clip;
        for (Layer& layer : layers_) {
            a.weight_decay = o.weight_decay;
            layer.weight_amax = adamw(a, layer.weight.data(), layer.weight_m.data(), layer.weight_v.data(),
                                      layer.weight_grad.data(), std::size_t(layer.weight.size()), true);
            if (c_.model.biases) {
                adamw(a, layer.bias.data(), layer.bias_m.data(), layer.bias_v.data(), layer.bias_grad.data(),
                      std::size_t(layer.bias.size()), false);
            }
        }
        return true;
    }

    // The global-norm clip factor over every gradient in parameter order.
    float clip_factor(float grad_clip) const {
        std::vector<std::span<const float>> gradients;
        for (const Layer& layer : layers_) {
            gradients.emplace_back(layer.weight_grad.data(), std::size_t(layer.weight_grad.size()));
            gradients.emplace_back(layer.bias_grad.data(), std::size_t(layer.bias_grad.size()));
        }
        return emu::clip_factor(gradients, grad_clip);
    }

    const Experiment& c_;
    const Numerics& n_;
    bool record_trace_, record_numerics_;
    TrainingTask task_;
    OperandQuantizer quantizer_;
    std::vector<Layer> layers_;
    std::optional<DynamicLossScaler> scaler_;
    int adam_steps_ = 0;
    std::vector<float> learning_rates_;  // of each step: the schedule's (the GPU reads the same table)
    // Distinct batches kept while they take at most this much memory.
    static constexpr double kBatchCacheBytes = 256.0 * 1024 * 1024;
    std::vector<std::optional<Batch>> batches_;
    Batch uncached_batch_;
    // Per-step tensors, kept so that each step reuses the last one's memory.
    std::vector<Matrix> inputs_, input_buffers_, weight_buffers_, pre_, gelu_tanh_;
    std::vector<const Matrix*> inputs_q_, weights_q_;  // the GEMMs' operands: a buffer, or FP32's own tensor
    Matrix g_q_, g_buffer_;
    BlockBackwardBuffers block_;  // the block recipes' backward
};

}  // namespace

std::uint64_t mlp_training_bytes(const Experiment& e, bool trace) {
    std::uint64_t parameters = 0, widths = std::uint64_t(e.model.input) + std::uint64_t(e.model.output);
    for (int layer = 0; layer < e.linear_layers(); ++layer) {
        const std::uint64_t in = layer == 0 ? std::uint64_t(e.model.input) : std::uint64_t(e.model.hidden);
        const std::uint64_t out =
            layer + 1 == e.linear_layers() ? std::uint64_t(e.model.output) : std::uint64_t(e.model.hidden);
        parameters += in * out + out;
    }
    widths += std::uint64_t(e.model.hidden) * std::uint64_t(e.model.hidden_layers);
    const std::uint64_t program = 16ull << 20;
    // A trace record per traced tensor (three a layer) per step: its name and a log2
    // histogram of up to about 80 occupied binades in a map, 4 KiB at the most.
    const std::uint64_t trace_bytes = trace ? std::uint64_t(e.steps) * 3 * std::uint64_t(e.linear_layers()) * 4096 : 0;
    return program + 24 * parameters + 24 * std::uint64_t(e.tokens) * widths + trace_bytes;
}

TrainerResult train_mlp(const Experiment& e, const TrainStepCallback& on_step, bool record_trace,
                        bool record_numerics) {
    check_cpu_supports(e);
    if (e.model.kind != ModelKind::Mlp) throw std::invalid_argument("model.kind: is not 'mlp'");
    Run run(e, record_trace, record_numerics);
    TrainerResult result = run.run(on_step);
    if (e.inference.enabled && !result.cancelled) result.inference = evaluate_inference(e, result.final_layers);
    return result;
}

GradientSnapshot first_step_gradients(const Experiment& e) {
    check_cpu_supports(e);
    Run run(e, false);
    return run.snapshot_first_step();
}

}  // namespace fp8lab::emu
