// SPDX-License-Identifier: Apache-2.0
// The byte-level transformer's training step on the CPU: forward, cross-entropy, backward,
// AdamW; the validation loss and the samples.
#include "emulator/models/transformer/transformer_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>

#include "emulator/training/adamw.hpp"
#include "emulator/training/linear_gemms.hpp"
#include "emulator/scaling/loss_scaler.hpp"
#include "emulator/models/transformer/text_corpus.hpp"
#include "emulator/models/transformer/text_sampling.hpp"
#include "emulator/gemm/trainer_matrix.hpp"
#include "emulator/training/training_task.hpp"
#include "emulator/models/transformer/transformer_ops.hpp"

namespace fp8lab::emu {
namespace {

constexpr int kVocabulary = 256;
constexpr float kInitStddev = 0.02f;  // GPT-2's; the residual outputs scaled by 1 / sqrt(2 layers)

struct Parameter {
    std::string name;
    Matrix w, m, v, grad;
    bool decay = true;          // weights and embeddings; gains are not decayed
    std::optional<float> amax;  // w's amax from AdamW's last update (none before it)
};

// Where each block's parameters sit in the parameter list (-1: absent).
struct BlockParameters {
    int attn_norm = -1, qkv = -1, q = -1, k = -1, v = -1, proj = -1, mlp_norm = -1, gate_up = -1, down = -1;
};

// What a block's forward pass keeps for its backward pass.
struct BlockActivations {
    Matrix x_in, n1, q, k, v, qkv, attn, x_mid, n2, gate_up, act;
    std::vector<float> inv1, inv2, probs;
    LinearSaved qkv_s, q_s, k_s, v_s, proj_s, gate_up_s, down_s;
};

// Normal(0, stddev) values of one parameter tensor, from the init seed and its index.
Matrix normal_matrix(std::uint64_t init_seed, int index, int rows, int cols, float stddev) {
    Matrix w(rows, cols);
    const std::uint64_t seed = init_seed * 1000 + 500 + std::uint64_t(index);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = stddev * normal_sample(seed, std::uint64_t(i));
    return w;
}

class TransformerRun {
  public:
    TransformerRun(const Experiment& e, bool record_trace, bool load_text = true, bool record_numerics = false)
        : e_(e),
          t_(e.model.transformer),
          record_trace_(record_trace),
          record_numerics_(record_numerics),
          quantizer_(e.numerics),
          gemms_(quantizer_, e.numerics.fast_accumulation),
          rotary_(rotary_table(t_.sequence, t_.head_size())),
          learning_rates_(learning_rates(e)) {
        if (load_text) corpus_ = load_corpus(e.task.corpus, t_.sequence);
        const int d = t_.width, hs = t_.head_size(), qw = t_.heads * hs, kw = t_.kv_heads * hs;
        const float residual = kInitStddev / std::sqrt(2.0f * float(t_.layers));
        embed_ = add("embed", normal_matrix(e.init_seed, 0, kVocabulary, d, kInitStddev), true);
        for (int b = 0; b < t_.layers; ++b) {
            const std::string p = "blocks." + std::to_string(b) + ".";
            const int base = 1 + 8 * b;
            BlockParameters bp;
            bp.attn_norm = add(p + "attn_norm", Matrix::Ones(1, d), false);
            // The three projections are the fused weight's row slices: fused or not, the same start.
            const Matrix qkv = normal_matrix(e.init_seed, base + 1, qw + 2 * kw, d, kInitStddev);
            if (t_.fused_qkv) {
                bp.qkv = add(p + "qkv", qkv, true);
            } else {
                bp.q = add(p + "q", qkv.topRows(qw), true);
                bp.k = add(p + "k", qkv.middleRows(qw, kw), true);
                bp.v = add(p + "v", qkv.bottomRows(kw), true);
            }
            bp.proj = add(p + "proj", normal_matrix(e.init_seed, base + 2, d, qw, residual), true);
            bp.mlp_norm = add(p + "mlp_norm", Matrix::Ones(1, d), false);
            bp.gate_up = add(p + "gate_up", normal_matrix(e.init_seed, base + 3, 2 * t_.ffn, d, kInitStddev), true);
            bp.down = add(p + "down", normal_matrix(e.init_seed, base + 4, d, t_.ffn, residual), true);
            blocks_.push_back(bp);
        }
        final_norm_ = add("final_norm", Matrix::Ones(1, d), false);
        if (!t_.tied_output)
            output_ = add("output", normal_matrix(e.init_seed, 1 + 8 * t_.layers, kVocabulary, d, kInitStddev), true);
        acts_.resize(std::size_t(t_.layers));
        if (e.numerics.loss_scaling) scaler_.emplace(e.numerics.loss_scaler);
    }

    std::vector<Parameter>& parameters() { return params_; }

    TrainerResult run(const TrainStepCallback& on_step) {
        TrainerResult result;
        result.text.emplace();
        TextReport& report = *result.text;
        if (record_numerics_) quantizer_.log_numerics(&result.numerics);
        quantizer_.fill_histograms(record_trace_);
        report.corpus = corpus_.description;
        report.parameters = transformer_parameters(t_);
        if (record_trace_) result.trace.header = {{"source", "fp8lab CPU emulator"}, {"experiment", describe(e_)}};
        std::vector<Matrix> start;
        for (const Parameter& p : params_) start.push_back(p.w);
        for (int step = 0; step < e_.steps; ++step) {
            const TextBatch batch =
                training_batch(corpus_, e_.task.seed, std::uint64_t(step), sequences(), t_.sequence);
            const float loss =
                float(forward_backward(batch, step, record_trace_ || record_numerics_ ? &result.trace : nullptr));
            if (!record_trace_) result.trace.records.clear();  // traced for the numerics only
            quantizer_.end_step();
            if (!apply_update(step)) result.skipped_steps.push_back(std::size_t(step));
            result.loss.push_back(loss);
            if ((step + 1) % e_.task.eval_every == 0 || step + 1 == e_.steps)
                report.validation.push_back({step, validation_bits_per_byte(step)});
            if (on_step && !on_step(step, loss)) {
                result.cancelled = true;
                break;
            }
        }
        result.gradient_elements = quantizer_.gradient_elements();
        result.gradients_flushed = quantizer_.gradients_flushed();
        result.gradients_zero = quantizer_.gradients_zero();
        double moved = 0, size = 0;
        for (std::size_t i = 0; i < params_.size(); ++i)
            if (params_[i].decay) {  // the weights and the embedding, not the norms' gains
                moved += (params_[i].w - start[i]).cast<double>().squaredNorm();
                size += start[i].cast<double>().squaredNorm();
            }
        result.weight_change = size > 0 ? std::sqrt(moved / size) : 0.0;
        result.input_elements = quantizer_.input_elements();
        result.inputs_flushed = quantizer_.inputs_flushed();
        result.inputs_subnormal = quantizer_.inputs_subnormal();
        result.scaling = quantizer_.state();
        if (scaler_) result.loss_scale = scaler_->scale_per_step();
        quantizer_.log_numerics(nullptr);
        if (!result.cancelled)
            write_samples(
                corpus_, e_.task.seed, t_.sequence,
                [this](const std::vector<std::uint8_t>& context) { return next_byte_logits(context); }, report);
        return result;
    }

    // The loss and gradients of a batch without an update (unscaled by any loss scale).
    double gradients_of(const TextBatch& batch) {
        const double loss = forward_backward(batch, 0, nullptr);
        const float scale = scaler_ ? scaler_->scale() : 1.0f;
        for (Parameter& p : params_) p.grad /= scale;
        return loss;
    }
    double loss_of(const TextBatch& batch) {
        LinearGemms gemms(quantizer_, e_.numerics.fast_accumulation);
        return forward(batch, 0, gemms, nullptr, nullptr);
    }
    TextBatch first_batch() const { return training_batch(corpus_, e_.task.seed, 0, sequences(), t_.sequence); }

  private:
    int add(const std::string& name, const Matrix& w, bool decay) {
        Parameter p;
        p.name = name;
        p.w = w;
        p.m = p.v = p.grad = Matrix::Zero(w.rows(), w.cols());
        p.decay = decay;
        params_.push_back(std::move(p));
        return int(params_.size()) - 1;
    }
    Matrix& w(int index) { return params_[std::size_t(index)].w; }
    std::optional<float> amax(int index) const { return params_[std::size_t(index)].amax; }
    Matrix& grad(int index) { return params_[std::size_t(index)].grad; }
    int sequences() const { return e_.tokens / t_.sequence; }
    const Matrix& output_weight() { return w(t_.tied_output ? embed_ : output_); }

    Precision precision() const { return e_.numerics.precision; }
    // The gate_up projection's output, which SwiGLU reads, as LinearGemms::forward stores it.
    bool gate_in_bf16() const { return LinearGemms::stores_output_in_bf16(precision()); }
    Precision output_precision() const {
        return precision() == Precision::Fp8 && t_.output_bf16 ? Precision::Bf16 : precision();
    }

    // Forward pass and loss; with dlogits, its gradient (times the loss scale) too.
    double forward(const TextBatch& batch, int step, LinearGemms& gemms, AmaxTrace* trace, Matrix* dlogits) {
        const int rows = batch.sequences * batch.sequence, d = t_.width, hs = t_.head_size();
        const int qw = t_.heads * hs, kw = t_.kv_heads * hs;
        const AttentionShape shape{batch.sequences, batch.sequence, t_.heads, t_.kv_heads, hs};
        const bool bf16 = precision() != Precision::Fp32;
        const std::uint64_t s = std::uint64_t(step);
        Matrix x(rows, d);
        for (int r = 0; r < rows; ++r) x.row(r) = w(embed_).row(batch.inputs[std::size_t(r)]);
        for (int b = 0; b < t_.layers; ++b) {
            const BlockParameters& bp = blocks_[std::size_t(b)];
            BlockActivations& a = acts_[std::size_t(b)];
            const std::string p = "blocks." + std::to_string(b) + ".";
            a.x_in = x;
            a.n1.resize(rows, d);
            a.inv1.resize(std::size_t(rows));
            rmsnorm_forward(a.x_in.data(), w(bp.attn_norm).data(), rows, d, a.n1.data(), a.inv1.data());
            if (t_.fused_qkv) {
                gemms.forward(p + "qkv", precision(), a.n1, w(bp.qkv), s, trace, a.qkv_s, a.qkv, amax(bp.qkv));
                a.q = a.qkv.leftCols(qw);
                a.k = a.qkv.middleCols(qw, kw);
                a.v = a.qkv.rightCols(kw);
            } else {
                gemms.forward(p + "q", precision(), a.n1, w(bp.q), s, trace, a.q_s, a.q, amax(bp.q));
                gemms.forward(p + "k", precision(), a.n1, w(bp.k), s, trace, a.k_s, a.k, amax(bp.k));
                gemms.forward(p + "v", precision(), a.n1, w(bp.v), s, trace, a.v_s, a.v, amax(bp.v));
            }
            rotary_apply(a.q.data(), rows, t_.heads, hs, rotary_, false);
            rotary_apply(a.k.data(), rows, t_.kv_heads, hs, rotary_, false);
            a.attn.resize(rows, qw);
            a.probs.resize(std::size_t(batch.sequences) * t_.heads * batch.sequence * batch.sequence);
            attention_forward(shape, a.q.data(), a.k.data(), a.v.data(), bf16, a.probs.data(), a.attn.data());
            gemms.forward(p + "proj", precision(), a.attn, w(bp.proj), s, trace, a.proj_s, y_, amax(bp.proj));
            a.x_mid = a.x_in + y_;
            a.n2.resize(rows, d);
            a.inv2.resize(std::size_t(rows));
            rmsnorm_forward(a.x_mid.data(), w(bp.mlp_norm).data(), rows, d, a.n2.data(), a.inv2.data());
            gemms.forward(p + "gate_up", precision(), a.n2, w(bp.gate_up), s, trace, a.gate_up_s, a.gate_up,
                          amax(bp.gate_up));
            a.act.resize(rows, t_.ffn);
            swiglu_forward(a.gate_up.data(), rows, t_.ffn, a.act.data(), gate_in_bf16());
            gemms.forward(p + "down", precision(), a.act, w(bp.down), s, trace, a.down_s, y_, amax(bp.down));
            x = a.x_mid + y_;
        }
        x_final_ = x;
        nf_.resize(rows, d);
        inv_f_.resize(std::size_t(rows));
        rmsnorm_forward(x_final_.data(), w(final_norm_).data(), rows, d, nf_.data(), inv_f_.data());
        gemms.forward("output", output_precision(), nf_, output_weight(), s, trace, output_s_, logits_,
                      amax(t_.tied_output ? embed_ : output_));
        if (dlogits) dlogits->resize(rows, kVocabulary);
        const float scale = scaler_ ? scaler_->scale() : 1.0f;
        return cross_entropy(logits_.data(), batch.targets.data(), rows, kVocabulary,
                             dlogits ? dlogits->data() : nullptr, scale);
    }

    double forward_backward(const TextBatch& batch, int step, AmaxTrace* trace) {
        const double loss = forward(batch, step, gemms_, trace, &dlogits_);
        const int rows = batch.sequences * batch.sequence, d = t_.width, hs = t_.head_size();
        const int qw = t_.heads * hs, kw = t_.kv_heads * hs;
        const AttentionShape shape{batch.sequences, batch.sequence, t_.heads, t_.kv_heads, hs};
        const bool bf16 = precision() != Precision::Fp32;
        const std::uint64_t s = std::uint64_t(step);
        for (Parameter& p : params_) p.grad.setZero();

        gemms_.backward("output", output_s_, output_weight(), dlogits_, s, trace, wgrad_, &dn_);
        grad(t_.tied_output ? embed_ : output_) += wgrad_;
        Matrix dx(rows, d);
        rmsnorm_backward(x_final_.data(), w(final_norm_).data(), inv_f_.data(), dn_.data(), rows, d, dx.data(),
                         grad(final_norm_).data());
        for (int b = t_.layers; b-- > 0;) {
            const BlockParameters& bp = blocks_[std::size_t(b)];
            BlockActivations& a = acts_[std::size_t(b)];
            const std::string p = "blocks." + std::to_string(b) + ".";
            // The feed-forward half: x_out = x_mid + down(swiglu(gate_up(norm(x_mid)))).
            gemms_.backward(p + "down", a.down_s, w(bp.down), dx, s, trace, grad(bp.down), &dact_);
            dgate_up_.resize(rows, 2 * t_.ffn);
            swiglu_backward(a.gate_up.data(), dact_.data(), rows, t_.ffn, dgate_up_.data(), gate_in_bf16());
            gemms_.backward(p + "gate_up", a.gate_up_s, w(bp.gate_up), dgate_up_, s, trace, grad(bp.gate_up), &dn_);
            dnorm_.resize(rows, d);
            rmsnorm_backward(a.x_mid.data(), w(bp.mlp_norm).data(), a.inv2.data(), dn_.data(), rows, d, dnorm_.data(),
                             grad(bp.mlp_norm).data());
            dx += dnorm_;
            // The attention half: x_mid = x_in + proj(attention(rotary(qkv(norm(x_in))))).
            gemms_.backward(p + "proj", a.proj_s, w(bp.proj), dx, s, trace, grad(bp.proj), &dattn_);
            dq_.resize(rows, qw);
            dk_.resize(rows, kw);
            dv_.resize(rows, kw);
            attention_backward(shape, a.q.data(), a.k.data(), a.v.data(), a.probs.data(), dattn_.data(), bf16,
                               dq_.data(), dk_.data(), dv_.data());
            rotary_apply(dq_.data(), rows, t_.heads, hs, rotary_, true);
            rotary_apply(dk_.data(), rows, t_.kv_heads, hs, rotary_, true);
            if (t_.fused_qkv) {
                dqkv_.resize(rows, qw + 2 * kw);
                dqkv_ << dq_, dk_, dv_;
                gemms_.backward(p + "qkv", a.qkv_s, w(bp.qkv), dqkv_, s, trace, grad(bp.qkv), &dn_);
            } else {
                gemms_.backward(p + "q", a.q_s, w(bp.q), dq_, s, trace, grad(bp.q), &dn_);
                gemms_.backward(p + "k", a.k_s, w(bp.k), dk_, s, trace, grad(bp.k), &dpart_);
                dn_ += dpart_;
                gemms_.backward(p + "v", a.v_s, w(bp.v), dv_, s, trace, grad(bp.v), &dpart_);
                dn_ += dpart_;
            }
            rmsnorm_backward(a.x_in.data(), w(bp.attn_norm).data(), a.inv1.data(), dn_.data(), rows, d, dnorm_.data(),
                             grad(bp.attn_norm).data());
            dx += dnorm_;
        }
        Matrix& de = grad(embed_);
        for (int r = 0; r < rows; ++r) de.row(batch.inputs[std::size_t(r)]) += dx.row(r);  // token order
        return loss;
    }

    // False when the update was not applied: a gradient was not finite.
    bool apply_update(int step) {
        const float scale = scaler_ ? scaler_->scale() : 1.0f;
        bool finite = true;
        std::vector<std::span<const float>> grads;
        for (Parameter& p : params_) {
            if (scale != 1.0f) p.grad /= scale;
            finite = finite && all_finite(p.grad.data(), std::size_t(p.grad.size()));
            grads.emplace_back(p.grad.data(), std::size_t(p.grad.size()));
        }
        if (scaler_) scaler_->update(!finite);
        if (!finite) return false;
        const OptimizerSpec& o = e_.optimizer;
        ++adam_steps_;
        AdamStep a;
        a.beta1 = o.beta1, a.beta2 = o.beta2, a.epsilon = o.epsilon, a.weight_decay = o.weight_decay;
        a.learning_rate = learning_rates_[std::size_t(step)];
        a.bc1 = 1.0f - std::pow(o.beta1, float(adam_steps_));
        a.bc2 = 1.0f - std::pow(o.beta2, float(adam_steps_));
        a.clip = o.grad_clip > 0 ? clip_factor(grads, o.grad_clip) : 1.0f;
        for (Parameter& p : params_)  // the weights' amax for the next step's current scaling
            p.amax = adamw(a, p.w.data(), p.m.data(), p.v.data(), p.grad.data(), std::size_t(p.w.size()), p.decay);
        return true;
    }

    // The validation windows' mean cross-entropy in bits, casting with a copy of the
    // recipe's state (an evaluation leaves delayed scaling's history as training left it).
    double validation_bits_per_byte(int step) {
        OperandQuantizer copy = quantizer_;
        LinearGemms gemms(copy, e_.numerics.fast_accumulation);
        const int total = e_.task.eval_sequences, chunk = sequences();
        double nats = 0;
        for (int first = 0; first < total; first += chunk) {
            const int count = std::min(chunk, total - first);
            const TextBatch batch = validation_batch(corpus_, first, count, total, t_.sequence);
            nats += forward(batch, step, gemms, nullptr, nullptr) * count;
        }
        return nats / double(total) / std::log(2.0);
    }

    // The logits for the byte after `context` (at most `sequence` bytes), casting with a
    // copy of the recipe's state.
    std::vector<float> next_byte_logits(const std::vector<std::uint8_t>& context) {
        const int n = int(context.size());
        TextBatch batch{1, n, context, std::vector<std::uint8_t>(context.size(), 0)};
        OperandQuantizer copy = quantizer_;
        LinearGemms gemms(copy, e_.numerics.fast_accumulation);
        forward(batch, e_.steps, gemms, nullptr, nullptr);
        const float* z = logits_.data() + std::ptrdiff_t(n - 1) * kVocabulary;
        return {z, z + kVocabulary};
    }

    const Experiment& e_;
    const TransformerSpec& t_;
    bool record_trace_, record_numerics_;
    TextCorpus corpus_;
    OperandQuantizer quantizer_;
    LinearGemms gemms_;
    RotaryTable rotary_;
    std::vector<float> learning_rates_;
    std::optional<DynamicLossScaler> scaler_;
    int adam_steps_ = 0;
    std::vector<Parameter> params_;
    std::vector<BlockParameters> blocks_;
    int embed_ = -1, final_norm_ = -1, output_ = -1;
    std::vector<BlockActivations> acts_;
    LinearSaved output_s_;
    std::vector<float> inv_f_;
    Matrix x_final_, nf_, logits_, dlogits_, y_, wgrad_, dn_, dnorm_, dact_, dgate_up_, dattn_, dq_, dk_, dv_, dqkv_,
        dpart_;
};

}  // namespace

std::uint64_t transformer_parameters(const TransformerSpec& t) {
    const std::uint64_t d = std::uint64_t(t.width), hs = std::uint64_t(t.head_size());
    const std::uint64_t qw = std::uint64_t(t.heads) * hs, kw = std::uint64_t(t.kv_heads) * hs, f = std::uint64_t(t.ffn);
    const std::uint64_t block = 2 * d + d * (qw + 2 * kw) + qw * d + 3 * f * d;
    return std::uint64_t(kVocabulary) * d * (t.tied_output ? 1 : 2) + std::uint64_t(t.layers) * block + d;
}

std::uint64_t transformer_training_bytes(const Experiment& e) {
    const TransformerSpec& t = e.model.transformer;
    const std::uint64_t rows = std::uint64_t(e.tokens), d = std::uint64_t(t.width), hs = std::uint64_t(t.head_size());
    const std::uint64_t qw = std::uint64_t(t.heads) * hs, kw = std::uint64_t(t.kv_heads) * hs, f = std::uint64_t(t.ffn);
    // Per block and row: x_in, n1, x_mid, n2 (d each), q, k, v and qkv, attention's output,
    // gate/up and the activation, and the quantised copies of each GEMM input; the
    // probabilities sequence^2 per sequence and head.
    const std::uint64_t per_row = 4 * d + 2 * (qw + 2 * kw) + qw + 3 * f + (d + qw + d + f);
    const std::uint64_t probs = rows * std::uint64_t(t.heads) * std::uint64_t(t.sequence);
    const std::uint64_t activations = std::uint64_t(t.layers) * (rows * per_row + probs) + 3 * rows * kVocabulary;
    const std::uint64_t program = 16ull << 20, corpus = 8ull << 20;
    return program + corpus + 24 * transformer_parameters(t) + 4 * activations;
}

TrainerResult train_transformer(const Experiment& e, const TrainStepCallback& on_step, bool record_trace,
                                bool record_numerics) {
    check_cpu_supports(e);
    if (e.model.kind != ModelKind::Transformer) throw std::invalid_argument("model.kind: is not 'transformer'");
    TransformerRun run(e, record_trace, true, record_numerics);
    return run.run(on_step);
}

namespace {

void set_parameters(std::vector<Parameter>& params, const std::vector<ParameterGradient>& values) {
    if (params.size() != values.size()) throw std::invalid_argument("transformer: another parameter list");
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].w.rows() != values[i].rows || params[i].w.cols() != values[i].cols)
            throw std::invalid_argument("transformer: " + params[i].name + " has another shape");
        params[i].w = MatrixMap(values[i].value.data(), values[i].rows, values[i].cols);
    }
}

}  // namespace

TransformerGradients transformer_first_step_gradients(const Experiment& e,
                                                      const std::vector<ParameterGradient>* parameters) {
    check_cpu_supports(e);
    TransformerRun run(e, false);
    if (parameters) set_parameters(run.parameters(), *parameters);
    TransformerGradients out;
    out.loss = run.gradients_of(run.first_batch());
    for (const Parameter& p : run.parameters())
        out.parameters.push_back({p.name,
                                  int(p.w.rows()),
                                  int(p.w.cols()),
                                  {p.w.data(), p.w.data() + p.w.size()},
                                  {p.grad.data(), p.grad.data() + p.grad.size()}});
    return out;
}

std::vector<ParameterGradient> transformer_initial_parameters(const Experiment& e) {
    validate(e);
    TransformerRun run(e, false, false);
    std::vector<ParameterGradient> out;
    for (const Parameter& p : run.parameters())
        out.push_back({p.name, int(p.w.rows()), int(p.w.cols()), {p.w.data(), p.w.data() + p.w.size()}, {}});
    return out;
}

double transformer_loss(const Experiment& e, const std::vector<ParameterGradient>& parameters) {
    check_cpu_supports(e);
    TransformerRun run(e, false);
    set_parameters(run.parameters(), parameters);
    return run.loss_of(run.first_batch());
}

}  // namespace fp8lab::emu
