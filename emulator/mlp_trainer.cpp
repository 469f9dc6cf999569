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

void validate(const TrainerConfig& c) {
    auto positive = [](int v, const char* name) {
        if (v < 1) throw std::invalid_argument(std::string(name) + " must be at least 1, got " + std::to_string(v));
    };
    positive(c.hidden_dim, "hidden size");
    positive(c.hidden_layers, "hidden layers");
    positive(c.tokens, "tokens per step");
    positive(c.steps, "steps");
    if (!(c.learning_rate > 0)) throw std::invalid_argument("learning rate must be positive");
    validate(c.fp8.delayed);
}

// The trainer's state for one run: layers, quantiser, and the operand function.
class Run {
public:
    explicit Run(const TrainerConfig& c) : c_(c), task_(c.task), quantizer_(c.fp8) {
        std::vector<int> dims = {c.task.input_dim};
        for (int i = 0; i < c.hidden_layers; ++i) dims.push_back(c.hidden_dim);
        dims.push_back(c.task.output_dim);
        for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
            Layer layer;
            const int in = dims[l], out = dims[l + 1];
            layer.weight.resize(out, in);
            const float stddev = 1.0f / std::sqrt(float(in));
            for (int i = 0; i < out * in; ++i)
                layer.weight.data()[i] = stddev * normal_sample(c.init_seed * 1000 + l, std::uint64_t(i));
            layer.bias = Eigen::RowVectorXf::Zero(out);
            layer.weight_m = layer.weight_v = Matrix::Zero(out, in);
            layer.bias_m = layer.bias_v = Eigen::RowVectorXf::Zero(out);
            layers_.push_back(std::move(layer));
        }
        if (c.loss_scaling) scaler_.emplace(c.loss_scaler);
    }

    TrainerResult run(const TrainStepCallback& on_step) {
        TrainerResult result;
        if (c_.record_trace) {
            result.trace.header = {{"source", "fp8lab CPU emulator"},
                                   {"config", describe()}};
        }
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

    std::string describe() const {
        return "task=" + std::string(task_kind_name(c_.task.kind)) + " d=" + std::to_string(c_.task.input_dim) +
               " h=" + std::to_string(c_.hidden_dim) + " out=" + std::to_string(c_.task.output_dim) +
               " layers=" + std::to_string(c_.hidden_layers + 1) + " tokens=" + std::to_string(c_.tokens) +
               " precision=" + std::string(precision_name(c_.precision)) +
               " recipe=" + std::string(fp8_recipe_name(c_.fp8.recipe)) +
               " formats=" + (c_.fp8.formats == FormatRecipe::Hybrid ? "hybrid" : "e4m3") +
               " history=" + std::to_string(c_.fp8.delayed.history_length) +
               " algo=" + std::string(amax_algorithm_name(c_.fp8.delayed.algorithm)) +
               " margin=" + std::to_string(c_.fp8.delayed.margin) +
               " seed=" + std::to_string(c_.task.seed);
    }

    bool block_recipe() const {
        return c_.fp8.recipe != Fp8Recipe::Delayed && c_.fp8.recipe != Fp8Recipe::Current;
    }

    // What a GEMM sees of a rows x cols operand whose contraction runs along the columns.
    Matrix operand(const std::string& name, TensorRole role, const Matrix& x, std::size_t layer,
                   std::uint64_t step, AmaxTrace* trace, bool wgrad_operand = false) {
        const std::span<const float> in(x.data(), std::size_t(x.size()));
        Matrix out(x.rows(), x.cols());
        std::span<float> dst(out.data(), std::size_t(out.size()));
        const bool edge = layer == 0 || layer + 1 == layers_.size();
        Precision p = c_.precision;
        if (p == Precision::Fp8 && c_.first_last_in_bf16 && edge) p = Precision::Bf16;
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
        const Batch batch = task_.batch(std::uint64_t(step), c_.tokens);
        const int m = c_.tokens;
        AmaxTrace* trace = c_.record_trace ? &result.trace : nullptr;
        const std::size_t count = layers_.size();
        std::vector<Matrix> inputs(count), inputs_q(count), weights_q(count), pre(count);

        Matrix x = MatrixMap(batch.inputs.data(), m, c_.task.input_dim);
        for (std::size_t l = 0; l < count; ++l) {
            const std::string prefix = "fc" + std::to_string(l + 1);
            inputs[l] = x;
            inputs_q[l] = operand(prefix + ".input", TensorRole::Input, x, l, step, trace);
            weights_q[l] = operand(prefix + ".weight", TensorRole::Weight, layers_[l].weight, l, step, trace);
            pre[l] = inputs_q[l] * weights_q[l].transpose();
            pre[l].rowwise() += layers_[l].bias;
            x = l + 1 < count ? Matrix(pre[l].unaryExpr(&gelu)) : pre[l];
        }

        // Loss and its gradient with respect to the output.
        const Matrix& out = pre.back();
        const MatrixMap target(batch.targets.data(), m, c_.task.output_dim);
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
            if (block_recipe() && c_.precision == Precision::Fp8) {
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
            for (int t = 0; t < m; ++t) layer.bias_grad += g_q.row(t);  // fixed order
            if (l > 0) grad = grad.cwiseProduct(Matrix(pre[l - 1].unaryExpr(&gelu_grad)));
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
        const float clip = c_.grad_clip > 0 && norm_sq > double(c_.grad_clip) * c_.grad_clip
                               ? float(c_.grad_clip / std::sqrt(norm_sq))
                               : 1.0f;
        ++adam_steps_;
        const float bc1 = 1.0f - std::pow(c_.beta1, float(adam_steps_));
        const float bc2 = 1.0f - std::pow(c_.beta2, float(adam_steps_));
        auto adamw = [&](float* w, float* m, float* v, const float* g, Eigen::Index n, bool decay) {
            for (Eigen::Index i = 0; i < n; ++i) {
                const float gi = g[i] * clip;
                m[i] = c_.beta1 * m[i] + (1.0f - c_.beta1) * gi;
                v[i] = c_.beta2 * v[i] + (1.0f - c_.beta2) * gi * gi;
                const float update = (m[i] / bc1) / (std::sqrt(v[i] / bc2) + c_.epsilon);
                w[i] -= c_.learning_rate * (update + (decay ? c_.weight_decay * w[i] : 0.0f));
            }
        };
        for (Layer& layer : layers_) {
            adamw(layer.weight.data(), layer.weight_m.data(), layer.weight_v.data(),
                  layer.weight_grad.data(), layer.weight.size(), true);
            adamw(layer.bias.data(), layer.bias_m.data(), layer.bias_v.data(), layer.bias_grad.data(),
                  layer.bias.size(), false);
        }
    }

    const TrainerConfig& c_;
    TrainingTask task_;
    OperandQuantizer quantizer_;
    std::vector<Layer> layers_;
    std::optional<DynamicLossScaler> scaler_;
    int adam_steps_ = 0;
};

}  // namespace

std::string_view precision_name(Precision p) {
    switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Bf16: return "bf16";
    case Precision::Fp8: return "fp8";
    }
    return "?";
}

double final_loss(const std::vector<float>& loss) {
    const std::size_t n = std::min<std::size_t>(10, loss.size());
    if (n == 0) return 0.0;
    double sum = 0;
    for (std::size_t i = loss.size() - n; i < loss.size(); ++i) sum += loss[i];
    return sum / double(n);
}

TrainerResult train_mlp(const TrainerConfig& config, const TrainStepCallback& on_step) {
    validate(config);
    Run run(config);
    return run.run(on_step);
}

GradientSnapshot first_step_gradients(const TrainerConfig& config) {
    validate(config);
    Run run(config);
    return run.snapshot_first_step();
}

}  // namespace fp8lab::emu
