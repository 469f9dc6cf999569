// MLP training step by step: quantised operands, float32 GEMMs (Eigen), AdamW.
#include "emulator/mlp_trainer.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include <Eigen/Dense>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "emulator/bulk.hpp"
#include "emulator/cpu_clones.hpp"
#include "emulator/ordered_gemm.hpp"
#include "emulator/parallel.hpp"

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

// GELU's tanh form. The backward pass reuses the forward's tanh of each element (the
// same expression of the same input: the same bits), so it is evaluated once per step.
float gelu_tanh(float z) { return std::tanh(kGeluC * (z + 0.044715f * z * z * z)); }
float gelu(float z, float t) { return 0.5f * z * (1.0f + t); }
float gelu_grad(float z, float t) {
    return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * z * z);
}

// An Eigen operand as strides over its memory (a transpose swaps them).
template <class Operand>
StridedMatrix strided(const Operand& m) {
    return {m.data(), m.rows(), m.cols(), m.rowStride(), m.colStride()};
}

// dst = lhs * rhs with dst's columns cut into fixed chunks run in parallel. Each element
// is summed in the order of Eigen's single-threaded GEMM over the whole matrix, for any
// thread count (the golden trainer test holds it to the bits): where that order is the
// panel order (emulator/ordered_gemm.hpp) the ordered GEMM computes it, 8 outputs to a
// vector where Eigen's kernel does 4; elsewhere each chunk is Eigen's own GEMM over the
// whole contraction, whose blocking along it depends only on its length, with chunk
// widths multiples of every register block (12, 8 and 4 rows of Eigen's transposed problem).
constexpr Eigen::Index kProductChunk = 192;
template <class Lhs, class Rhs>
void product(const Lhs& lhs, const Rhs& rhs, Matrix& dst) {
    dst.resize(lhs.rows(), rhs.cols());
    const Eigen::Index n = rhs.cols();
    const bool parallel = n >= 2 * kProductChunk && double(lhs.rows()) * double(lhs.cols()) * double(n) >= 4e6;
    if (eigen_order_is_panel_order(lhs.rows(), n, lhs.cols())) {
        const StridedMatrix a = strided(lhs), b = strided(rhs);
        const auto columns = [&](std::size_t begin, std::size_t end) {
            const auto width = std::ptrdiff_t(end - begin);
            panel_ordered_gemm(a, b, dst.data(), n, eigen_depth_panel(lhs.rows(), width, lhs.cols()),
                               std::ptrdiff_t(begin), std::ptrdiff_t(end));
        };
        if (!parallel)
            columns(0, std::size_t(n));
        else
            parallel_for_chunks(std::size_t(n), std::size_t(kProductChunk),
                                [&](std::size_t, std::size_t begin, std::size_t end) { columns(begin, end); });
        return;
    }
    if (!parallel) {
        dst.noalias() = lhs * rhs;
        return;
    }
    parallel_for_chunks(std::size_t(n), std::size_t(kProductChunk),
                        [&](std::size_t, std::size_t begin, std::size_t end) {
                            const Eigen::Index j = Eigen::Index(begin), w = Eigen::Index(end - begin);
                            dst.middleCols(j, w).noalias() = lhs * rhs.middleCols(j, w);
                        });
}

// out = GELU(pre) and t = the tanh inside it, element by element in parallel chunks.
void gelu_forward(const Matrix& pre, Matrix& out, Matrix& t) {
    out.resize(pre.rows(), pre.cols());
    t.resize(pre.rows(), pre.cols());
    const float* z = pre.data();
    float* o = out.data();
    float* th = t.data();
    parallel_for_chunks(std::size_t(pre.size()), 1 << 14, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            th[i] = gelu_tanh(z[i]);
            o[i] = gelu(z[i], th[i]);
        }
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

struct AdamStep {
    float beta1, beta2, epsilon, learning_rate, weight_decay, bc1, bc2, clip;
};

// AdamW on n parameters. Plain arrays and constants in locals let the compiler use
// vector instructions of any width: IEEE division and square root, and no contraction
// into FMA (-ffp-contract=off on this file), give the scalar loop's bits.
// Decay: the decoupled weight decay (weights); biases add 0 instead.
template <bool Decay>
FP8LAB_INLINE void adamw_body(const AdamStep& a, float* __restrict w, float* __restrict m, float* __restrict v,
                              const float* __restrict g, std::size_t n) {
    const float beta1 = a.beta1, beta2 = a.beta2, one_minus_beta1 = 1.0f - a.beta1, one_minus_beta2 = 1.0f - a.beta2,
                bc1 = a.bc1, bc2 = a.bc2, epsilon = a.epsilon, lr = a.learning_rate, decay = a.weight_decay,
                clip = a.clip;
    for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i] * clip;
        const float mi = beta1 * m[i] + one_minus_beta1 * gi;
        const float vi = beta2 * v[i] + one_minus_beta2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float update = (mi / bc1) / (std::sqrt(vi / bc2) + epsilon);
        w[i] -= lr * (update + (Decay ? decay * w[i] : 0.0f));
    }
}
FP8LAB_CPU_CLONES void adamw_span(const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n,
                                  bool decay) {
    if (decay)
        adamw_body<true>(a, w, m, v, g, n);
    else
        adamw_body<false>(a, w, m, v, g, n);
}
// Every element on its own, so chunks in parallel give the serial loop's bits.
void adamw(const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n, bool decay) {
    parallel_for_chunks(n, 1 << 16, [&](std::size_t, std::size_t b, std::size_t e) {
        adamw_span(a, w + b, m + b, v + b, g + b, e - b, decay);
    });
}

// dst = src^T in 32 x 32 tiles, bands of source rows in parallel: Eigen's assignment of a
// transpose walks one side with a stride of a whole row (a cache miss per element).
void transpose_into(const Matrix& src, Matrix& dst) {
    const std::size_t rows = std::size_t(src.rows()), cols = std::size_t(src.cols());
    dst.resize(src.cols(), src.rows());
    constexpr std::size_t kTile = 32;
    const float* in = src.data();
    float* out = dst.data();
    parallel_for_chunks(rows, 4 * kTile, [&](std::size_t, std::size_t r0, std::size_t r1) {
        for (std::size_t c0 = 0; c0 < cols; c0 += kTile)
            for (std::size_t rt = r0; rt < r1; rt += kTile)
                for (std::size_t r = rt; r < std::min(r1, rt + kTile); ++r)
                    for (std::size_t c = c0; c < std::min(cols, c0 + kTile); ++c) out[c * rows + r] = in[r * cols + c];
    });
}

// No NaN or Inf among n floats. On the bits: Eigen's allFinite() tests x - x == 0 one
// element at a time, which took 15% of a step at the notebook's size.
bool all_finite(const float* x, std::size_t n) {
    std::uint32_t special = 0;
    for (std::size_t i = 0; i < n; ++i)
        special |= std::uint32_t((std::bit_cast<std::uint32_t>(x[i]) & 0x7F800000u) == 0x7F800000u);
    return special == 0;
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
        : c_(e),
          n_(e.numerics),
          record_trace_(record_trace),
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
            result.final_layers.push_back({int(layer.weight.cols()),
                                           int(layer.weight.rows()),
                                           {layer.weight.data(), layer.weight.data() + layer.weight.size()},
                                           {layer.bias.data(), layer.bias.data() + layer.bias.size()}});
        if (scaler_) result.loss_scale = scaler_->scale_per_step();
        return result;
    }

    bool block_recipe() const { return !quantizer_.recipe().per_tensor(); }
    bool quantised_operands() const { return n_.precision != Precision::Fp32; }

    // What a GEMM sees of a rows x cols operand whose contraction runs along the columns,
    // into `out` (a buffer kept from step to step: its memory is reused, not faulted in).
    // FP32 operands are x itself (no copy): the result refers to x or to out.
    const Matrix& operand(const std::string& name, TensorRole role, const Matrix& x, std::size_t layer,
                          std::uint64_t step, AmaxTrace* trace, Matrix& out, bool wgrad_operand = false) {
        const std::span<const float> in(x.data(), std::size_t(x.size()));
        const bool edge = layer == 0 || layer + 1 == layers_.size();
        Precision p = n_.precision;
        if (p == Precision::Fp8 && n_.edge_layers_bf16 && edge) p = Precision::Bf16;
        if (p == Precision::Fp32) return x;
        out.resize(x.rows(), x.cols());
        const std::span<float> dst(out.data(), std::size_t(out.size()));
        if (p == Precision::Bf16)
            round_span(bf16(), in, dst);
        else
            quantizer_.quantize(name, role, in, std::size_t(x.rows()), std::size_t(x.cols()), step, trace, dst,
                                wgrad_operand);
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
        AmaxTrace* trace = record_trace_ ? &result.trace : nullptr;
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
            weights_q_[l] =
                &operand(prefix + ".weight", TensorRole::Weight, layers_[l].weight, l, step, trace, weight_buffers_[l]);
            product(*inputs_q_[l], weights_q_[l]->transpose(), pre_[l]);
            if (c_.model.biases) pre_[l].rowwise() += layers_[l].bias;
            if (quantised_operands()) store_in_bf16(pre_[l]);
            if (l + 1 < count)
                gelu_forward(pre_[l], x, gelu_tanh_[l]);
            else
                x = pre_[l];
        }

        // Loss and its gradient with respect to the output.
        const Matrix& out = pre_.back();
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
            // A copy even in FP32: grad is overwritten by the dgrad below.
            g_q_ = operand(prefix + ".grad_output", TensorRole::GradOutput, grad, l, step, trace, g_buffer_);
            // wgrad contracts over tokens, dgrad over outputs: block recipes need their
            // blocks along those dimensions, so they quantise the transposes anew.
            if (block_recipe() && n_.precision == Precision::Fp8) {
                // NVFP4 rotates both wgrad operands with the same Hadamard transform
                // along the tokens (when they come in groups of 16).
                transpose_into(grad, transposed_);
                const Matrix& g_t =
                    operand(prefix + ".grad_output", TensorRole::GradOutput, transposed_, l, step, nullptr, g_t_, true);
                transpose_into(inputs_[l], transposed_x_);
                const Matrix& x_t =
                    operand(prefix + ".input", TensorRole::Input, transposed_x_, l, step, nullptr, x_t_, true);
                product(g_t, x_t.transpose(), layer.weight_grad);
                if (l > 0) {
                    transpose_into(layer.weight, transposed_);
                    const Matrix& w_t =
                        operand(prefix + ".weight", TensorRole::Weight, transposed_, l, step, nullptr, w_t_);
                    product(g_q_, w_t.transpose(), grad);
                }
            } else {
                product(g_q_.transpose(), *inputs_q_[l], layer.weight_grad);
                if (l > 0) product(g_q_, *weights_q_[l], grad);
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
            finite = finite && all_finite(layer.weight_grad.data(), std::size_t(layer.weight_grad.size())) &&
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
            adamw(a, layer.weight.data(), layer.weight_m.data(), layer.weight_v.data(), layer.weight_grad.data(),
                  std::size_t(layer.weight.size()), true);
            if (c_.model.biases) {
                adamw(a, layer.bias.data(), layer.bias_m.data(), layer.bias_v.data(), layer.bias_grad.data(),
                      std::size_t(layer.bias.size()), false);
            }
        }
        return true;
    }

    // The global-norm clip factor: clip / ||g|| when ||g|| > clip, else 1. The norm is the
    // float64 sum of g^2 in parameter order (its rounding decides the factor's bits). A
    // sum in four lanes first, with the bound on both sums' rounding (n u of the sum, u =
    // 2^-53, each), settles the common case of a norm clearly below the clip without the
    // serial chain of 5 million dependent additions; only near or above the clip is the
    // serial sum formed.
    float clip_factor(float grad_clip) const {
        const double limit = double(grad_clip) * grad_clip;
        double lanes[4] = {0, 0, 0, 0};
        std::size_t n = 0;
        const auto add_lanes = [&](const float* g, std::size_t count) {
            std::size_t i = 0;
            for (; i + 4 <= count; i += 4)
                for (int k = 0; k < 4; ++k) lanes[k] += double(g[i + k]) * g[i + k];
            for (; i < count; ++i) lanes[0] += double(g[i]) * g[i];
            n += count;
        };
        for (const Layer& layer : layers_) {
            add_lanes(layer.weight_grad.data(), std::size_t(layer.weight_grad.size()));
            add_lanes(layer.bias_grad.data(), std::size_t(layer.bias_grad.size()));
        }
        const double quick = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        if (quick * (1.0 + 4.0 * double(n) * 0x1p-53) < limit) return 1.0f;
        double norm_sq = 0;
        for (const Layer& layer : layers_) {
            for (Eigen::Index i = 0; i < layer.weight_grad.size(); ++i) {
                const float g = layer.weight_grad.data()[i];
                norm_sq += double(g) * g;
            }
            for (Eigen::Index i = 0; i < layer.bias_grad.size(); ++i)
                norm_sq += double(layer.bias_grad[i]) * layer.bias_grad[i];
        }
        return norm_sq > limit ? float(grad_clip / std::sqrt(norm_sq)) : 1.0f;
    }

    const Experiment& c_;
    const Numerics& n_;
    bool record_trace_;
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
    Matrix g_q_, g_buffer_, g_t_, x_t_, w_t_, transposed_, transposed_x_;
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
            std::string("numerics.fast_accumulation.") +
            (f.forward ? "forward"
             : f.dgrad ? "dgrad"
                       : "wgrad") +
            ": the CPU emulator accumulates every GEMM in float32; fast accumulation is a property of the GPU's "
            "FP8 tensor cores (the accumulation lab measures it). Run this on the GPU or turn it off");
}

std::uint64_t cpu_training_bytes(const Experiment& e, bool trace) {
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

TrainerResult train_mlp(const Experiment& e, const TrainStepCallback& on_step, bool record_trace) {
    check_cpu_supports(e);
    Run run(e, record_trace);
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
