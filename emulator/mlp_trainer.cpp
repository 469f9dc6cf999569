// MLP training step by step: quantised operands, float32 GEMMs (Eigen), AdamW.
#include "emulator/mlp_trainer.hpp"

#include <algorithm>

#include <Eigen/Dense>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "emulator/bulk.hpp"

namespace fp8lab::emu {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<const Matrix>;

struct Layer {
    Matrix weight;  // out x in
    Eigen::RowVectorXf bias;
    Matrix weight_m, weight_v;
    Eigen::RowVectorXf bias_m, bias_v;
    Matrix weight_grad;
    Eigen::RowVectorXf bias_grad;
};

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)

float gelu(float z) { return 0.5f * z * (1.0f + std::tanh(kGeluC * (z + 0.044715f * z * z * z))); }
float gelu_grad(float z) {
    const float t = std::tanh(kGeluC * (z + 0.044715f * z * z * z));
    return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * z * z);
}

// Rounds every element to BF16 (nearest-even): how a GEMM's BF16 output is stored.
void store_in_bf16(Matrix& m) {
    std::span<float> v(m.data(), std::size_t(m.size()));
    round_span(bf16(), v, v);
}

// The trainer's state for one run: layers, quantiser, and the operand function.
class Run {
public:
    Run(const Experiment& e, bool record_trace)
        : c_(e), n_(e.numerics), record_trace_(record_trace), task_(e), quantizer_(e.numerics) {
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
        if (record_trace_)
            result.trace.header = {{"source", "fp8lab CPU emulator"}, {"experiment", describe(c_)}};
        for (int step = 0; step < c_.steps; ++step) {
            const float loss = train_step(step, result);
            result.loss.push_back(loss);
            if (on_step && !on_step(step, loss)) {
                result.cancelled = true;
                break;
            }
        }
        result.gradient_elements = quantizer_.gradient_elements();
        result.gradients_flushed = quantizer_.gradients_flushed();
        result.scaling = quantizer_.state();
        for (const Layer& layer : layers_)
            result.final_layers.push_back({int(layer.weight.cols()), int(layer.weight.rows()),
                                           {layer.weight.data(), layer.weight.data() + layer.weight.size()},
                                           {layer.bias.data(), layer.bias.data() + layer.bias.size()}});
        if (scaler_) {
            result.loss_scale = scaler_->scale_per_step();
            result.skipped_steps = scaler_->skipped_steps();
        }
        return result;
    }

    bool block_recipe() const { return n_.recipe != Fp8Recipe::Delayed && n_.recipe != Fp8Recipe::Current; }
    bool quantised_operands() const { return n_.precision != Precision::Fp32; }

    // What a GEMM sees of a rows x cols operand whose contraction runs along the columns.
    Matrix operand(const std::string& name, TensorRole role, const Matrix& x, std::size_t layer,
                   std::uint64_t step, AmaxTrace* trace, bool wgrad_operand = false) {
        const std::span<const float> in(x.data(), std::size_t(x.size()));
        Matrix out(x.rows(), x.cols());
        std::span<float> dst(out.data(), std::size_t(out.size()));
        const bool edge = layer == 0 || layer + 1 == layers_.size();
        Precision p = n_.precision;
        if (p == Precision::Fp8 && n_.edge_layers_bf16 && edge) p = Precision::Bf16;
        switch (p) {
        case Precision::Fp32: return x;
        case Precision::Bf16: round_span(bf16(), in, dst); return out;
        case Precision::Fp8: {
            const std::vector<float> q = quantizer_.quantize(name, role, in, std::size_t(x.rows()),
                                                             std::size_t(x.cols()), step, trace,
                                                             wgrad_operand);
            std::copy(q.begin(), q.end(), out.data());
            return out;
        }
        }
        return x;
    }

    float train_step(int step, TrainerResult& result) {
        const float loss = forward_backward(step, result);
        quantizer_.end_step();
        apply_update(scaler_ ? scaler_->scale() : 1.0f);
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
            snapshot.layers.push_back({int(layer.weight.cols()), int(layer.weight.rows()),
                                       copy(layer.weight, 1.0f), copy(layer.bias, 1.0f),
                                       copy(layer.weight_grad, loss_scale),
                                       copy(layer.bias_grad, loss_scale)});
        }
        return snapshot;
    }

private:
    // Forward, loss and backward of one step: leaves the gradients in the layers.
    float forward_backward(int step, TrainerResult& result) {
        const Batch batch = task_.batch_of_step(std::uint64_t(step));
        const int m = c_.tokens;
        AmaxTrace* trace = record_trace_ ? &result.trace : nullptr;
        const std::size_t count = layers_.size();
        std::vector<Matrix> inputs(count), inputs_q(count), weights_q(count), pre(count);

        Matrix x = MatrixMap(batch.inputs.data(), m, c_.model.input);
        for (std::size_t l = 0; l < count; ++l) {
            const std::string prefix = "fc" + std::to_string(l + 1);
            inputs[l] = x;
            inputs_q[l] = operand(prefix + ".input", TensorRole::Input, x, l, step, trace);
            weights_q[l] = operand(prefix + ".weight", TensorRole::Weight, layers_[l].weight, l, step, trace);
            pre[l] = inputs_q[l] * weights_q[l].transpose();
            if (c_.model.biases) pre[l].rowwise() += layers_[l].bias;
            if (quantised_operands()) store_in_bf16(pre[l]);
            x = l + 1 < count ? Matrix(pre[l].unaryExpr(&gelu)) : pre[l];
        }

        // Loss and its gradient with respect to the output.
        const Matrix& out = pre.back();
        const MatrixMap target(batch.targets.data(), m, c_.model.output);
        Matrix grad;
        float loss;
        if (c_.task.kind == TaskKind::TeacherRegression) {
            const Matrix diff = out - target;
            loss = diff.squaredNorm() / float(diff.size());
            grad = diff * (2.0f / float(diff.size()));
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
            const Matrix g_q = operand(prefix + ".grad_output", TensorRole::GradOutput, grad, l, step, trace);
            // wgrad contracts over tokens, dgrad over outputs: block recipes need their
            // blocks along those dimensions, so they quantise the transposes anew.
            if (block_recipe() && n_.precision == Precision::Fp8) {
                // NVFP4 rotates both wgrad operands with the same Hadamard transform
                // along the tokens (when they come in groups of 16).
                const Matrix g_t = operand(prefix + ".grad_output", TensorRole::GradOutput,
                                           grad.transpose(), l, step, nullptr, true);
                const Matrix x_t = operand(prefix + ".input", TensorRole::Input,
                                           inputs[l].transpose(), l, step, nullptr, true);
                layer.weight_grad = g_t * x_t.transpose();
                if (l > 0) {
                    const Matrix w_t = operand(prefix + ".weight", TensorRole::Weight,
                                               layer.weight.transpose(), l, step, nullptr);
                    grad = g_q * w_t.transpose();
                }
            } else {
                layer.weight_grad = g_q.transpose() * inputs_q[l];
                if (l > 0) grad = g_q * weights_q[l];
            }
            layer.bias_grad = Eigen::RowVectorXf::Zero(layer.bias.size());
            if (c_.model.biases)
                for (int t = 0; t < m; ++t) layer.bias_grad += g_q.row(t);  // fixed order
            if (l > 0) {
                if (quantised_operands()) store_in_bf16(grad);  // dgrad's output, as the GPU stores it
                grad = grad.cwiseProduct(Matrix(pre[l - 1].unaryExpr(&gelu_grad)));
            }
        }
        return loss;
    }

    void apply_update(float loss_scale) {
        double norm_sq = 0;
        bool finite = true;
        for (Layer& layer : layers_) {
            if (loss_scale != 1.0f) {
                layer.weight_grad /= loss_scale;
                layer.bias_grad /= loss_scale;
            }
            for (Eigen::Index i = 0; i < layer.weight_grad.size(); ++i) {
                const float g = layer.weight_grad.data()[i];
                finite = finite && std::isfinite(g);
                norm_sq += double(g) * g;
            }
            for (Eigen::Index i = 0; i < layer.bias_grad.size(); ++i) {
                finite = finite && std::isfinite(layer.bias_grad[i]);
                norm_sq += double(layer.bias_grad[i]) * layer.bias_grad[i];
            }
        }
        if (scaler_ && !scaler_->update(!finite)) return;  // overflow: skip the step
        if (!finite) return;  // without a scaler a non-finite gradient is still not applied
        const OptimizerSpec& o = c_.optimizer;
        const float clip = o.grad_clip > 0 && norm_sq > double(o.grad_clip) * o.grad_clip
                               ? float(o.grad_clip / std::sqrt(norm_sq))
                               : 1.0f;
        ++adam_steps_;
        const float bc1 = 1.0f - std::pow(o.beta1, float(adam_steps_));
        const float bc2 = 1.0f - std::pow(o.beta2, float(adam_steps_));
        auto adamw = [&](float* w, float* m, float* v, const float* g, Eigen::Index n, bool decay) {
            for (Eigen::Index i = 0; i < n; ++i) {
                const float gi = g[i] * clip;
                m[i] = o.beta1 * m[i] + (1.0f - o.beta1) * gi;
                v[i] = o.beta2 * v[i] + (1.0f - o.beta2) * gi * gi;
                const float update = (m[i] / bc1) / (std::sqrt(v[i] / bc2) + o.epsilon);
                w[i] -= o.learning_rate * (update + (decay ? o.weight_decay * w[i] : 0.0f));
            }
        };
        for (Layer& layer : layers_) {
            adamw(layer.weight.data(), layer.weight_m.data(), layer.weight_v.data(),
                  layer.weight_grad.data(), layer.weight.size(), true);
            if (c_.model.biases)
                adamw(layer.bias.data(), layer.bias_m.data(), layer.bias_v.data(), layer.bias_grad.data(),
                      layer.bias.size(), false);
        }
    }

    const Experiment& c_;
    const Numerics& n_;
    bool record_trace_;
    TrainingTask task_;
    OperandQuantizer quantizer_;
    std::vector<Layer> layers_;
    std::optional<DynamicLossScaler> scaler_;
    int adam_steps_ = 0;
};

}  // namespace

double final_loss(const std::vector<float>& loss) {
    const std::size_t n = std::min<std::size_t>(10, loss.size());
    if (n == 0) return 0.0;
    double sum = 0;
    for (std::size_t i = loss.size() - n; i < loss.size(); ++i) sum += loss[i];
    return sum / double(n);
}

void check_cpu_supports(const Experiment& e) {
    validate(e);
    const FastAccumulation& f = e.numerics.fast_accumulation;
    if (e.numerics.precision == Precision::Fp8 && f.any())
        throw std::invalid_argument(
            std::string("numerics.fast_accumulation.") + (f.forward ? "forward" : f.dgrad ? "dgrad" : "wgrad") +
            ": the CPU emulator accumulates every GEMM in float32; fast accumulation is a property of the GPU's "
            "FP8 tensor cores (the accumulation lab measures it). Run this on the GPU or turn it off");
}

TrainerResult train_mlp(const Experiment& e, const TrainStepCallback& on_step, bool record_trace) {
    check_cpu_supports(e);
    Run run(e, record_trace);
    return run.run(on_step);
}

GradientSnapshot first_step_gradients(const Experiment& e) {
    check_cpu_supports(e);
    Run run(e, false);
    return run.snapshot_first_step();
}

}  // namespace fp8lab::emu
