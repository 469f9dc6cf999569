// SPDX-License-Identifier: Apache-2.0
// Training the byte-level transformer on the GPU: its linear layers (transformer_linear.hpp:
// BF16, FP8 per tensor or blockwise on the tensor cores, the other block recipes emulated), its attention
// (transformer_attention.hpp), the kernels of transformer_kernels.cu for the rest, AdamW on
// float32 master weights, one CUDA graph for the step (it reads the step's tokens through
// a counter on the device), the validation loss and the samples between steps.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emulator/models/transformer/text_corpus.hpp"
#include "emulator/models/transformer/text_sampling.hpp"
#include "emulator/models/transformer/transformer_ops.hpp"
#include "emulator/models/transformer/transformer_trainer.hpp"
#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/scaling/emulated_operand.hpp"
#include "gpu/src/step/step_timing.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/src/models/transformer/transformer_attention.hpp"
#include "gpu/src/kernels/transformer_kernels.hpp"
#include "gpu/src/models/transformer/transformer_linear.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu {
namespace detail {
namespace {

namespace tk = transformer;
using transformer::Attention;
using transformer::AttentionSaved;
using transformer::Bf16;
using transformer::bf16_rows;
using transformer::BlockwiseOperand;
using transformer::DeviceParameter;
using transformer::EmulatedLinear;
using transformer::f32_rows;
using transformer::Linear;
using transformer::LinearLayer;
using transformer::NumericsRecorder;
using transformer::RowwiseOperand;
using transformer::ScaledLinear;
using transformer::ScalingSlots;

// Per-tensor recipes, blockwise and rowwise run on the FP8 tensor cores (as the MLP's
// native path runs them); the other block recipes, and blockwise or rowwise with settings
// the native casts do not implement, are emulated.
GpuPath transformer_path(const emu::Numerics& n) {
    if (n.precision != emu::Precision::Fp8 || emu::recipe(n.recipe).per_tensor()) return GpuPath::Native;
    const bool scaled_gemms = n.recipe == emu::Fp8Recipe::Blockwise || n.recipe == emu::Fp8Recipe::Rowwise;
    return scaled_gemms && native_path_can_run(n) ? GpuPath::Native : GpuPath::Emulated;
}

// The bytes a forward pass reads: tokens[*index * rows + r] and the same of targets (the
// training steps' arrays with the step counter, or the validation chunks with their number).
struct ByteSource {
    const std::uint8_t* tokens;
    const std::uint8_t* targets;
    const int* index;
};

// What a block keeps from its forward pass for its backward (SwiGLU's output only where the
// down projection's GEMMs read it stored: its FP8 cast computes it from gate_up).
struct BlockBuffers {
    DeviceBuffer<float> x_in, x_mid, inv1, inv2;
    Bf16 probs, n1, qkv, attn, n2, gate_up, act;
    DeviceBuffer<float> lse;
    BlockBuffers(int rows, int d, int qkv_w, int qw, int ffn, bool stored_act, const Attention& attention)
        : x_in(std::size_t(rows) * d),
          x_mid(std::size_t(rows) * d),
          inv1(std::size_t(rows)),
          inv2(std::size_t(rows)),
          probs(attention.probs_elements()),
          n1(std::size_t(rows) * d),
          qkv(std::size_t(rows) * qkv_w),
          attn(std::size_t(rows) * qw),
          n2(std::size_t(rows) * d),
          gate_up(std::size_t(rows) * 2 * ffn),
          act(stored_act ? std::size_t(rows) * ffn : 0),
          lse(attention.lse_elements()) {}
    AttentionSaved saved() { return {probs.ptr, lse.ptr}; }
};

// The amax trace of a run: each recorded cast's step, tensor, amax and scale, named and
// ordered as the CPU trainer's trace (the casts' numerics are attached where they are written).
emu::AmaxTrace transformer_trace(const std::vector<emu::TensorNumerics>& numerics, const std::string& device,
                                 const emu::Experiment& e) {
    emu::AmaxTrace trace;
    trace.header = {{"source", "fp8lab GPU transformer step (train_transformer_on_gpu)"},
                    {"device", device},
                    {"experiment", emu::describe(e)}};
    for (const emu::TensorNumerics& n : numerics) {
        emu::AmaxTraceRecord r;
        r.step = n.step;
        r.tensor = n.tensor;
        r.amax = n.amax;
        r.scale = n.scale;
        trace.records.push_back(std::move(r));
    }
    return trace;
}

class TransformerStep {
  public:
    TransformerStep(const GpuRun& run, const emu::TextCorpus& corpus)
        : e_(run.experiment),
          t_(e_.model.transformer),
          rows_(e_.tokens),
          d_(t_.width),
          hs_(t_.head_size()),
          qw_(t_.heads * hs_),
          kw_(t_.kv_heads * hs_),
          qkv_w_(qw_ + 2 * kw_),
          fuse_(run.fuse_into_casts),
          attention_kernel_(run.attention == AttentionKernel::Fused && transformer::flash_attention_supports(hs_)
                                ? AttentionKernel::Fused
                                : AttentionKernel::Gemms),
          rates_(e_),
          workspace_(kMatmulWorkspaceBytes),
          step_(1),
          losses_(std::size_t(e_.steps)),
          tokens_(std::size_t(e_.steps) * rows_),
          targets_(std::size_t(e_.steps) * rows_),
          offsets_(std::size_t(e_.steps) * 257),
          positions_(std::size_t(e_.steps) * rows_),
          sequences_(rows_ / t_.sequence),
          chunks_((e_.task.eval_sequences + sequences_ - 1) / sequences_),
          evaluations_(e_.steps / e_.task.eval_every + (e_.steps % e_.task.eval_every != 0)),
          eval_tokens_(std::size_t(chunks_) * rows_),
          eval_targets_(std::size_t(chunks_) * rows_),
          chunk_index_(std::size_t(chunks_)),
          eval_loss_(std::size_t(evaluations_) * chunks_ * rows_),
          sample_tokens_(std::size_t(rows_)),
          // The amax trace is made of the recorded casts' amaxes and scales: a trace records them too.
          recorder_((run.record_numerics || run.record_trace) && e_.numerics.precision == emu::Precision::Fp8,
                    e_.steps) {
        upload_data(corpus);
        upload_validation(corpus);
        const std::vector<emu::ParameterGradient> init = emu::transformer_initial_parameters(e_);
        for (const emu::ParameterGradient& p : init)
            params_.push_back(std::make_unique<DeviceParameter>(p, p.rows > 1));
        const emu::RotaryTable rotary = emu::rotary_table(t_.sequence, hs_);
        cos_ = std::make_unique<DeviceBuffer<float>>(rotary.cos.size());
        sin_ = std::make_unique<DeviceBuffer<float>>(rotary.sin.size());
        upload(cos_->ptr, rotary.cos, rotary.cos.size());
        upload(sin_->ptr, rotary.sin, rotary.sin.size());
        FP8LAB_CUDA_CHECK(cudaMemset(step_.ptr, 0, sizeof(int)));

        const bool fp8 = e_.numerics.precision == emu::Precision::Fp8;
        // Three FP8 operands per linear layer: 4 a block (6 with separate Q, K, V) and the output.
        slots_ = std::make_unique<ScalingSlots>(3 * (t_.layers * (t_.fused_qkv ? 4 : 6) + 1), e_.numerics);
        // Per-tensor recipes on the FP8 tensor cores, block recipes emulated.
        const bool emulated = transformer_path(e_.numerics) == GpuPath::Emulated;
        if (emulated) make_emulated_tables();
        const bool scaled = fp8 && !emulated && !emu::recipe(e_.numerics.recipe).per_tensor();
        const bool rowwise = e_.numerics.recipe == emu::Fp8Recipe::Rowwise;
        const auto linear = [&](int in, int out, bool quantised,
                                const std::string& name) -> std::unique_ptr<LinearLayer> {
            if (quantised && scaled && rowwise)
                return std::make_unique<ScaledLinear<RowwiseOperand>>(lt_.h, rows_, in, out, workspace_.ptr, name,
                                                                      recorder_, e_.numerics);
            if (quantised && scaled)
                return std::make_unique<ScaledLinear<BlockwiseOperand>>(lt_.h, rows_, in, out, workspace_.ptr, name,
                                                                        recorder_, e_.numerics);
            if (quantised && emulated)
                return std::make_unique<EmulatedLinear>(lt_.h, rows_, in, out, name, e_.numerics, shared_,
                                                        workspace_.ptr, recorder_);
            return std::make_unique<Linear>(lt_.h, rows_, in, out, quantised, fuse_, workspace_.ptr, *slots_, name,
                                            recorder_);
        };
        if (attention_kernel_ == AttentionKernel::Fused)
            attention_ = std::make_unique<transformer::FlashAttention>(sequences_, t_.sequence, t_.heads, t_.kv_heads,
                                                                       hs_, qkv_w_);
        else
            attention_ = std::make_unique<transformer::GemmAttention>(lt_.h, sequences_, t_.sequence, t_.heads,
                                                                      t_.kv_heads, hs_, qkv_w_, workspace_.ptr);
        for (int b = 0; b < t_.layers; ++b) {
            BlockLinears l;
            const std::string name = "blocks." + std::to_string(b) + ".";  // the CPU's tensor names
            if (t_.fused_qkv) {
                l.qkv = linear(d_, qkv_w_, fp8, name + "qkv");
            } else {
                l.q = linear(d_, qw_, fp8, name + "q");
                l.k = linear(d_, kw_, fp8, name + "k");
                l.v = linear(d_, kw_, fp8, name + "v");
            }
            l.proj = linear(qw_, d_, fp8, name + "proj");
            l.gate_up = linear(d_, 2 * t_.ffn, fp8, name + "gate_up");
            l.down = linear(t_.ffn, d_, fp8, name + "down");
            blocks_.push_back(std::make_unique<BlockBuffers>(rows_, d_, qkv_w_, qw_, t_.ffn, !computes_operands(l.down),
                                                             *attention_));
            linears_.push_back(std::move(l));
        }
        output_ = linear(d_, 256, fp8 && !t_.output_bf16, "output");
        recorder_.allocate();
        prepare_weights();
        const std::size_t td = std::size_t(rows_) * d_;
        x_ = std::make_unique<DeviceBuffer<float>>(td);
        dx_ = std::make_unique<DeviceBuffer<float>>(td);
        nf_ = std::make_unique<Bf16>(td);
        invf_ = std::make_unique<DeviceBuffer<float>>(std::size_t(rows_));
        y_ = std::make_unique<Bf16>(td);
        logits_ = std::make_unique<Bf16>(std::size_t(rows_) * 256);
        dlogits_ = std::make_unique<Bf16>(std::size_t(rows_) * 256);
        row_loss_ = std::make_unique<DeviceBuffer<float>>(std::size_t(rows_));
        dn_ = std::make_unique<Bf16>(td);
        dn2_ = std::make_unique<Bf16>(td);
        // The residual stream's gradient in BF16, for BF16 down and output projections.
        bool bf16_gradients = false;
        for (const BlockLinears& l : linears_)
            bf16_gradients = bf16_gradients || l.down->reads_bf16_gradient() || l.proj->reads_bf16_gradient();
        dx16_ = std::make_unique<Bf16>(bf16_gradients ? td : 0);
        dattn_ = std::make_unique<Bf16>(std::size_t(rows_) * qw_);
        dqkv_ = std::make_unique<Bf16>(std::size_t(rows_) * qkv_w_);
        dact_ = std::make_unique<Bf16>(std::size_t(rows_) * t_.ffn);
        // SwiGLU's gradient is stored only for gate/up GEMMs that read it so (BF16).
        const bool stored_dgate_up = t_.layers > 0 && !computes_operands(linears_.front().gate_up);
        dgate_up_ = std::make_unique<Bf16>(stored_dgate_up ? std::size_t(rows_) * 2 * t_.ffn : 0);
        gain_partials_ = std::make_unique<DeviceBuffer<float>>(std::size_t(tk::gain_partial_count(rows_)) * d_);
        out_grad_ = std::make_unique<DeviceBuffer<float>>(std::size_t(256) * d_);
        int squares = 0;
        for (const auto& p : params_) squares += tk::blocks_for_squares(p->g.count);
        square_partials_ = std::make_unique<DeviceBuffer<double>>(std::size_t(squares));
        clip_ = std::make_unique<DeviceBuffer<float>>(1);
    }

    // Forward, loss, backward, clip, AdamW, then the step's loss and ++step.
    void enqueue_step(cudaStream_t s) {
        forward({tokens_.ptr, targets_.ptr, step_.ptr}, s);
        backward(s);
        recorder_.end_step(step_.ptr, s);  // before the scaling state moves on
        // The next step's scales before AdamW, which casts the FP8 weights it writes with them.
        slots_->end_step(s);
        update(s);
        tk::finish_step(row_loss_->ptr, rows_, step_.ptr, losses_.ptr, s);
    }

    // The emulated casts' value tables and block-amax scratch (the largest cast tensor / 16).
    void make_emulated_tables() {
        const emu::Recipe recipe = emu::recipe_of(e_.numerics);
        const emu::TensorRole roles[3] = {emu::TensorRole::Input, emu::TensorRole::Weight, emu::TensorRole::GradOutput};
        for (int r = 0; r < 3; ++r) {
            role_values_[r] = std::make_unique<DeviceBuffer<float>>(256);
            upload(role_values_[r]->ptr, value_table(*recipe.formats.of(roles[r])), 256);
            shared_.role_values[r] = role_values_[r]->ptr;
        }
        e4m3_values_ = std::make_unique<DeviceBuffer<float>>(256);
        upload(e4m3_values_->ptr, value_table(emu::e4m3()), 256);
        shared_.e4m3_values = e4m3_values_->ptr;
        const std::size_t largest =
            std::max({std::size_t(rows_) * std::max({d_, qkv_w_, 2 * t_.ffn, 256}), std::size_t(2 * t_.ffn) * d_,
                      std::size_t(qkv_w_) * d_, std::size_t(256) * d_});
        block_amax_ = std::make_unique<DeviceBuffer<unsigned>>(largest / 16 + 1);
        shared_.block_amax = block_amax_->ptr;
        shared_.step = step_.ptr;
    }

    // Whether the validation loss is due after `completed` steps (as on the CPU).
    bool evaluation_due(int completed) const { return completed % e_.task.eval_every == 0 || completed == e_.steps; }
    // The validation windows' forward passes, each chunk's row losses kept on the device.
    void enqueue_validation(cudaStream_t s) {
        if (evaluated_ >= evaluations_) throw GpuError("internal: more evaluations than planned");
        const Unrecorded unrecorded(recorder_);
        slots_->save_amax(s);
        for (int c = 0; c < chunks_; ++c) {
            forward({eval_tokens_.ptr, eval_targets_.ptr, chunk_index_.ptr + c}, s);
            float* kept = eval_loss_.ptr + (std::size_t(evaluated_) * chunks_ + std::size_t(c)) * rows_;
            FP8LAB_CUDA_CHECK(
                cudaMemcpyAsync(kept, row_loss_->ptr, std::size_t(rows_) * sizeof(float), cudaMemcpyDeviceToDevice, s));
        }
        slots_->restore_amax(s);
        ++evaluated_;
    }
    // The evaluations done so far in bits per byte: each chunk's mean row loss (in double,
    // its real rows only) weighted by its windows, as the CPU's.
    AttentionKernel attention_kernel() const { return attention_kernel_; }
    std::vector<double> validation_bits_per_byte() const {
        std::vector<float> rows(std::size_t(evaluated_) * chunks_ * rows_);
        FP8LAB_CUDA_CHECK(cudaMemcpy(rows.data(), eval_loss_.ptr, rows.size() * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<double> out;
        for (int k = 0; k < evaluated_; ++k) {
            double nats = 0;
            for (int c = 0; c < chunks_; ++c) {
                const int count = chunk_sequences(c), real = count * t_.sequence;
                const float* r = rows.data() + (std::size_t(k) * chunks_ + std::size_t(c)) * rows_;
                double sum = 0;
                for (int i = 0; i < real; ++i) sum += r[i];
                nats += sum / real * count;
            }
            out.push_back(nats / e_.task.eval_sequences / std::log(2.0));
        }
        return out;
    }
    // The logits after `context` (at most a sequence): the context at the start of every
    // sequence of the step's batch, its own bytes repeated after it. Under current scaling
    // those extra rows enter the casts' amaxes, which the CPU's one window does not have.
    std::vector<float> next_byte_logits(const std::vector<std::uint8_t>& context, cudaStream_t s) {
        const std::size_t n = context.size();
        std::vector<std::uint8_t> tokens(static_cast<std::size_t>(rows_));
        for (std::size_t r = 0; r < tokens.size(); ++r) tokens[r] = context[(r % std::size_t(t_.sequence)) % n];
        upload(sample_tokens_.ptr, tokens, tokens.size());
        const Unrecorded unrecorded(recorder_);
        slots_->save_amax(s);
        forward({sample_tokens_.ptr, eval_targets_.ptr, chunk_index_.ptr}, s);
        slots_->restore_amax(s);
        std::vector<std::uint16_t> bits(256);
        FP8LAB_CUDA_CHECK(cudaMemcpyAsync(bits.data(), logits_->ptr + (n - 1) * 256, 256 * sizeof(std::uint16_t),
                                          cudaMemcpyDeviceToHost, s));
        FP8LAB_CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<float> z(256);
        for (std::size_t c = 0; c < 256; ++c) {
            const std::uint32_t word = std::uint32_t(bits[c]) << 16;
            std::memcpy(&z[c], &word, sizeof word);
        }
        return z;
    }

    // Every recorded cast's numerics of the first `done` steps (record_numerics).
    std::vector<emu::TensorNumerics> numerics(int done) const { return recorder_.read(done); }

    std::vector<float> losses(int done) const {
        std::vector<float> out(std::size_t(std::min(done, e_.steps)));
        FP8LAB_CUDA_CHECK(cudaMemcpy(out.data(), losses_.ptr, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
        return out;
    }

  private:
    // The passes between steps (validation, samples) are not training casts: the CPU does
    // not record them.
    struct Unrecorded {
        NumericsRecorder& r;
        explicit Unrecorded(NumericsRecorder& recorder) : r(recorder) { r.pause(true); }
        ~Unrecorded() { r.pause(false); }
        Unrecorded(const Unrecorded&) = delete;
        Unrecorded& operator=(const Unrecorded&) = delete;
    };
    struct BlockLinears {
        std::unique_ptr<LinearLayer> qkv, q, k, v, proj, gate_up, down;
    };
    DeviceParameter& p(int index) { return *params_[std::size_t(index)]; }
    // Whether the step leaves a layer's SwiGLU operand to its cast.
    bool computes_operands(const std::unique_ptr<LinearLayer>& layer) const {
        return fuse_ && layer->computes_operands();
    }
    // The down projection's input: SwiGLU's output as stored, or computed by its cast.
    train::CastSource swiglu_output(const BlockBuffers& a) const {
        if (a.act.ptr) return bf16_rows(a.act.ptr, t_.ffn);
        return {train::Source::SwigluOfBf16, a.gate_up.ptr, nullptr, t_.ffn};
    }
    // AdamW keeps the BF16 copy of exactly the weights some layer's BF16 GEMMs read, and casts
    // the FP8 weights of the layers that leave that cast to it (their first codes made here).
    void prepare_weights() {
        weight_casters_.assign(params_.size(), nullptr);
        const auto reads = [&](const std::unique_ptr<LinearLayer>& layer, int param) {
            if (!layer) return;
            if (layer->reads_bf16_weight()) p(param).bf16_copy = true;
            if (layer->casts_weight_in_update()) {
                weight_casters_[std::size_t(param)] = layer.get();
                layer->cast_weight(p(param), nullptr);
            }
        };
        for (int b = 0; b < t_.layers; ++b) {
            const BlockLinears& l = linears_[std::size_t(b)];
            const int proj = block_param(b, t_.fused_qkv ? 2 : 4);
            reads(l.qkv, block_param(b, 1));
            reads(l.q, block_param(b, 1));
            reads(l.k, block_param(b, 2));
            reads(l.v, block_param(b, 3));
            reads(l.proj, proj);
            reads(l.gate_up, proj + 2);
            reads(l.down, proj + 3);
        }
        reads(output_, t_.tied_output ? 0 : final_norm() + 1);
        FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // the step's stream does not wait for the default one
    }
    // The CPU trainer's parameter order: embed, then per block attn_norm, qkv (or q, k, v),
    // proj, mlp_norm, gate_up, down; final_norm; output unless tied.
    int per_block() const { return t_.fused_qkv ? 6 : 8; }
    int block_param(int b, int k) const { return 1 + b * per_block() + k; }
    int final_norm() const { return 1 + t_.layers * per_block(); }
    DeviceParameter& output_weight() { return p(t_.tied_output ? 0 : final_norm() + 1); }

    void upload_data(const emu::TextCorpus& corpus) {
        const int sequences = sequences_;
        std::vector<std::uint8_t> tokens, targets;
        std::vector<int> offsets, positions;
        for (int step = 0; step < e_.steps; ++step) {
            const emu::TextBatch batch =
                emu::training_batch(corpus, e_.task.seed, std::uint64_t(step), sequences, t_.sequence);
            tokens.insert(tokens.end(), batch.inputs.begin(), batch.inputs.end());
            targets.insert(targets.end(), batch.targets.begin(), batch.targets.end());
            // The rows of each byte value in order: the embedding's gradient sums them so.
            std::array<int, 257> start{};
            for (const std::uint8_t t : batch.inputs) ++start[std::size_t(t) + 1];
            for (int v = 0; v < 256; ++v) start[std::size_t(v) + 1] += start[std::size_t(v)];
            offsets.insert(offsets.end(), start.begin(), start.end());
            std::vector<int> at(start.begin(), start.end() - 1);
            std::vector<int> order(static_cast<std::size_t>(rows_));
            for (int r = 0; r < rows_; ++r) order[std::size_t(at[batch.inputs[std::size_t(r)]]++)] = r;
            positions.insert(positions.end(), order.begin(), order.end());
        }
        upload(tokens_.ptr, tokens, tokens.size());
        upload(targets_.ptr, targets, targets.size());
        upload(offsets_.ptr, offsets, offsets.size());
        upload(positions_.ptr, positions, positions.size());
    }

    // Validation chunk c: windows c * sequences_ on, as many as are left; a short last
    // chunk repeats its first window in the rows it lacks (copies change no amax).
    int chunk_sequences(int c) const { return std::min(sequences_, e_.task.eval_sequences - c * sequences_); }
    void upload_validation(const emu::TextCorpus& corpus) {
        std::vector<std::uint8_t> tokens, targets;
        std::vector<int> index(static_cast<std::size_t>(chunks_));
        for (int c = 0; c < chunks_; ++c) {
            index[std::size_t(c)] = c;
            const int count = chunk_sequences(c);
            const emu::TextBatch b =
                emu::validation_batch(corpus, c * sequences_, count, e_.task.eval_sequences, t_.sequence);
            for (int w = 0; w < sequences_; ++w) {
                const std::ptrdiff_t at = std::ptrdiff_t(w < count ? w : 0) * t_.sequence;
                tokens.insert(tokens.end(), b.inputs.begin() + at, b.inputs.begin() + at + t_.sequence);
                targets.insert(targets.end(), b.targets.begin() + at, b.targets.begin() + at + t_.sequence);
            }
        }
        upload(eval_tokens_.ptr, tokens, tokens.size());
        upload(eval_targets_.ptr, targets, targets.size());
        upload(chunk_index_.ptr, index, index.size());
    }

    void forward(const ByteSource& bytes, cudaStream_t s) {
        // The residual stream goes from buffer to buffer: block b's input is what the block
        // before it (or the embedding) wrote into its x_in, the last block's output is x_.
        const auto stream_in = [&](int b) { return b < t_.layers ? blocks_[std::size_t(b)]->x_in.ptr : x_->ptr; };
        // Each residual add runs with the norm after it: a block's first norm is the add that
        // ends the block before it (or follows the embedding), the final norm the last add.
        const auto next_norm = [&](int b) {
            struct Norm {
                const float* gain;
                __nv_bfloat16* out;
                float* inv_rms;
            };
            if (b == t_.layers) return Norm{p(final_norm()).w.ptr, nf_->ptr, invf_->ptr};
            BlockBuffers& next = *blocks_[std::size_t(b)];
            return Norm{p(block_param(b, 0)).w.ptr, next.n1.ptr, next.inv1.ptr};
        };
        tk::embed_forward(p(0).w.ptr, bytes.tokens, bytes.index, rows_, d_, stream_in(0), s);
        const auto first = next_norm(0);
        tk::rmsnorm_forward(stream_in(0), first.gain, rows_, d_, first.out, first.inv_rms, s);
        for (int b = 0; b < t_.layers; ++b) {
            BlockBuffers& a = *blocks_[std::size_t(b)];
            BlockLinears& l = linears_[std::size_t(b)];
            if (t_.fused_qkv) {
                l.qkv->forward(bf16_rows(a.n1.ptr, d_), p(block_param(b, 1)), a.qkv.ptr, s);
            } else {  // three projections, each copied into its columns of the one q|k|v buffer
                const int widths[3] = {qw_, kw_, kw_}, offsets[3] = {0, qw_, qw_ + kw_};
                LinearLayer* linears[3] = {l.q.get(), l.k.get(), l.v.get()};
                for (int j = 0; j < 3; ++j) {
                    linears[j]->forward(bf16_rows(a.n1.ptr, d_), p(block_param(b, 1 + j)), dattn_->ptr, s);
                    FP8LAB_CUDA_CHECK(cudaMemcpy2DAsync(a.qkv.ptr + offsets[j], qkv_w_ * 2, dattn_->ptr, widths[j] * 2,
                                                        widths[j] * 2, rows_, cudaMemcpyDeviceToDevice, s));
                }
            }
            __nv_bfloat16* q = a.qkv.ptr;
            tk::rotary(q, qkv_w_, rows_, t_.heads, hs_, t_.sequence, cos_->ptr, sin_->ptr, false, s);
            tk::rotary(q + qw_, qkv_w_, rows_, t_.kv_heads, hs_, t_.sequence, cos_->ptr, sin_->ptr, false, s);
            attention_->forward(q, a.saved(), a.attn.ptr, s);
            const int proj = block_param(b, t_.fused_qkv ? 2 : 4);
            l.proj->forward(bf16_rows(a.attn.ptr, qw_), p(proj), y_->ptr, s);
            tk::add_rmsnorm_forward(a.x_in.ptr, y_->ptr, p(proj + 1).w.ptr, rows_, d_, a.x_mid.ptr, a.n2.ptr,
                                    a.inv2.ptr, s);
            l.gate_up->forward(bf16_rows(a.n2.ptr, d_), p(proj + 2), a.gate_up.ptr, s);
            if (a.act.ptr) tk::swiglu_forward(a.gate_up.ptr, rows_, t_.ffn, a.act.ptr, s);
            l.down->forward(swiglu_output(a), p(proj + 3), y_->ptr, s);
            const auto norm = next_norm(b + 1);
            tk::add_rmsnorm_forward(a.x_mid.ptr, y_->ptr, norm.gain, rows_, d_, stream_in(b + 1), norm.out,
                                    norm.inv_rms, s);
        }
        output_->forward(bf16_rows(nf_->ptr, d_), output_weight(), logits_->ptr, s);
        tk::cross_entropy(logits_->ptr, bytes.targets, bytes.index, rows_, row_loss_->ptr, dlogits_->ptr, s);
    }

    void backward(cudaStream_t s) {
        const std::size_t td = std::size_t(rows_) * d_;
        DeviceParameter& out_w = output_weight();
        output_->backward(bf16_rows(nf_->ptr, d_), out_w, bf16_rows(dlogits_->ptr, 256),
                          t_.tied_output ? out_grad_->ptr : out_w.g.ptr, dn_->ptr, s);
        FP8LAB_CUDA_CHECK(cudaMemsetAsync(dx_->ptr, 0, td * sizeof(float), s));
        tk::rmsnorm_backward(x_->ptr, p(final_norm()).w.ptr, invf_->ptr, dn_->ptr, rows_, d_, dx_->ptr,
                             dx16_for(t_.layers - 1, &BlockLinears::down), gain_partials_->ptr, p(final_norm()).g.ptr,
                             s);
        for (int b = t_.layers; b-- > 0;) {
            BlockBuffers& a = *blocks_[std::size_t(b)];
            BlockLinears& l = linears_[std::size_t(b)];
            const int proj = block_param(b, t_.fused_qkv ? 2 : 4);
            l.down->backward(swiglu_output(a), p(proj + 3), residual_grad(l.down), p(proj + 3).g.ptr, dact_->ptr, s);
            // An FP8 gate/up layer's cast computes SwiGLU's gradient as it reads it.
            train::CastSource dgate_up{train::Source::SwigluGradBf16, dact_->ptr, a.gate_up.ptr, t_.ffn};
            if (!computes_operands(l.gate_up)) {
                tk::swiglu_backward(a.gate_up.ptr, dact_->ptr, rows_, t_.ffn, dgate_up_->ptr, s);
                dgate_up = bf16_rows(dgate_up_->ptr, 2 * t_.ffn);
            }
            l.gate_up->backward(bf16_rows(a.n2.ptr, d_), p(proj + 2), dgate_up, p(proj + 2).g.ptr, dn_->ptr, s);
            tk::rmsnorm_backward(a.x_mid.ptr, p(proj + 1).w.ptr, a.inv2.ptr, dn_->ptr, rows_, d_, dx_->ptr,
                                 dx16_for(b, &BlockLinears::proj), gain_partials_->ptr, p(proj + 1).g.ptr, s);
            l.proj->backward(bf16_rows(a.attn.ptr, qw_), p(proj), residual_grad(l.proj), p(proj).g.ptr, dattn_->ptr, s);
            // q|k|v as the forward left them (after rotary), in one buffer either way.
            attention_->backward(a.qkv.ptr, a.attn.ptr, a.saved(), dattn_->ptr, dqkv_->ptr, s);
            tk::rotary(dqkv_->ptr, qkv_w_, rows_, t_.heads, hs_, t_.sequence, cos_->ptr, sin_->ptr, true, s);
            tk::rotary(dqkv_->ptr + qw_, qkv_w_, rows_, t_.kv_heads, hs_, t_.sequence, cos_->ptr, sin_->ptr, true, s);
            if (t_.fused_qkv) {
                l.qkv->backward(bf16_rows(a.n1.ptr, d_), p(block_param(b, 1)), bf16_rows(dqkv_->ptr, qkv_w_),
                                p(block_param(b, 1)).g.ptr, dn_->ptr, s);
            } else {
                backward_separate(a, l, b, s);
            }
            tk::rmsnorm_backward(a.x_in.ptr, p(block_param(b, 0)).w.ptr, a.inv1.ptr, dn_->ptr, rows_, d_, dx_->ptr,
                                 dx16_for(b - 1, &BlockLinears::down), gain_partials_->ptr, p(block_param(b, 0)).g.ptr,
                                 s);
        }
        tk::embed_backward(dx_->ptr, offsets_.ptr, positions_.ptr, step_.ptr, rows_, d_, p(0).g.ptr, s);
        if (t_.tied_output) tk::add_f32(p(0).g.ptr, out_grad_->ptr, out_grad_->count, s);
    }

    // The residual stream's gradient as `linear` reads it, right after the norm's backward
    // that wrote it: BF16 for a BF16 layer (the copy dx16_for asked that backward to write
    // beside the float32, where a pass of its own would read the float32 again), else float32.
    train::CastSource residual_grad(const std::unique_ptr<LinearLayer>& linear) const {
        return linear->reads_bf16_gradient() ? bf16_rows(dx16_->ptr, d_) : f32_rows(dx_->ptr, d_);
    }
    // Where a norm's backward writes the BF16 copy of the residual stream's gradient: only
    // when the next reader, layer `linear` of block b (none past the first block), is BF16.
    void* dx16_for(int b, std::unique_ptr<LinearLayer> BlockLinears::*linear) const {
        if (b < 0 || !(linears_[std::size_t(b)].*linear)->reads_bf16_gradient()) return nullptr;
        return dx16_->ptr;
    }

    // Three projections: each gradient slice copied out of dqkv, three dgrads added.
    void backward_separate(BlockBuffers& a, BlockLinears& l, int b, cudaStream_t s) {
        const int widths[3] = {qw_, kw_, kw_}, offsets[3] = {0, qw_, qw_ + kw_};
        LinearLayer* linears[3] = {l.q.get(), l.k.get(), l.v.get()};
        for (int j = 0; j < 3; ++j) {
            FP8LAB_CUDA_CHECK(cudaMemcpy2DAsync(dattn_->ptr, widths[j] * 2, dqkv_->ptr + offsets[j], qkv_w_ * 2,
                                                widths[j] * 2, rows_, cudaMemcpyDeviceToDevice, s));
            DeviceParameter& w = p(block_param(b, 1 + j));
            linears[j]->backward(bf16_rows(a.n1.ptr, d_), w, bf16_rows(dattn_->ptr, widths[j]), w.g.ptr,
                                 j == 0 ? dn_->ptr : dn2_->ptr, s);
            if (j > 0) add_dn(s);
        }
    }
    // dn += dn2 (both BF16): through float32 scratch, rounded once.
    void add_dn(cudaStream_t s) {
        const std::size_t td = std::size_t(rows_) * d_;
        kernels::bf16_to_float(dn_->ptr, x_->ptr, td, s);  // x_ is free in the backward pass
        tk::add_bf16(x_->ptr, dn2_->ptr, td, s);
        train::f32_to_bf16(x_->ptr, dn_->ptr, td, s);
    }

    void update(cudaStream_t s) {
        const emu::OptimizerSpec& o = e_.optimizer;
        if (o.grad_clip > 0) {
            int at = 0;
            for (const auto& q : params_) {
                tk::sum_squares(q->g.ptr, q->g.count, square_partials_->ptr + at, s);
                at += tk::blocks_for_squares(q->g.count);
            }
            tk::clip_factor(square_partials_->ptr, at, o.grad_clip, clip_->ptr, s);
        }
        for (std::size_t k = 0; k < params_.size(); ++k) {
            DeviceParameter& q = *params_[k];
            train::AdamParams a = rates_.params(o);
            if (!q.decay) a.weight_decay = 0.0f;
            if (o.grad_clip > 0) a.grad_scale = clip_->ptr;
            if (weight_casters_[k])
                weight_casters_[k]->update_weight(q, a, step_.ptr, s);
            else
                train::adamw(q.w.ptr, q.m.ptr, q.v.ptr, q.g.ptr, q.w.count, a, step_.ptr, 0,
                             q.bf16_copy ? q.w16.ptr : nullptr, s);
        }
    }

    const emu::Experiment& e_;
    const emu::TransformerSpec& t_;
    int rows_, d_, hs_, qw_, kw_, qkv_w_;
    bool fuse_;
    AttentionKernel attention_kernel_;
    StepRates rates_;
    LtHandle lt_;
    DeviceBuffer<std::uint8_t> workspace_;
    DeviceBuffer<int> step_;
    DeviceBuffer<float> losses_;
    DeviceBuffer<std::uint8_t> tokens_, targets_;
    DeviceBuffer<int> offsets_, positions_;
    int sequences_, chunks_, evaluations_, evaluated_ = 0;
    DeviceBuffer<std::uint8_t> eval_tokens_, eval_targets_;
    DeviceBuffer<int> chunk_index_;
    DeviceBuffer<float> eval_loss_;
    DeviceBuffer<std::uint8_t> sample_tokens_;
    NumericsRecorder recorder_;  // before the linear layers, which hold it
    std::vector<std::unique_ptr<DeviceParameter>> params_;
    std::unique_ptr<DeviceBuffer<float>> cos_, sin_;
    std::vector<std::unique_ptr<BlockBuffers>> blocks_;
    std::vector<BlockLinears> linears_;
    std::unique_ptr<LinearLayer> output_;
    std::vector<LinearLayer*> weight_casters_;  // per parameter: the layer whose AdamW casts it, or null
    std::unique_ptr<ScalingSlots> slots_;
    EmulatedCastShared shared_;
    std::unique_ptr<DeviceBuffer<float>> role_values_[3], e4m3_values_;
    std::unique_ptr<DeviceBuffer<unsigned>> block_amax_;
    std::unique_ptr<Attention> attention_;
    std::unique_ptr<DeviceBuffer<float>> x_, dx_, invf_, row_loss_, gain_partials_, out_grad_, clip_;
    std::unique_ptr<Bf16> nf_, y_, logits_, dlogits_, dn_, dn2_, dx16_, dattn_, dqkv_, dact_, dgate_up_;
    std::unique_ptr<DeviceBuffer<double>> square_partials_;
};

std::size_t used_bytes(std::size_t free_at_start) {
    std::size_t free = 0, total = 0;
    FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free_at_start > free ? free_at_start - free : 0;
}

}  // namespace
}  // namespace detail

GpuTrainResult train_transformer_on_gpu(const GpuRun& run, const GpuProgress& progress) {
    validate(run);
    detail::require_gpu();
    const emu::Experiment& e = run.experiment;
    detail::require_scaled_gemms(detail::transformer_path(e.numerics), e.numerics);
    const emu::TextCorpus corpus = emu::load_corpus(e.task.corpus, e.model.transformer.sequence);
    std::size_t free_at_start = 0, total = 0;
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free_at_start, &total));
    GpuTrainResult result;
    result.device = describe(probe());
    {
        detail::TransformerStep step(run, corpus);
        cudaStream_t stream;
        FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        cudaGraphExec_t graph = nullptr;
        std::vector<cudaEvent_t> events;
        struct Release {
            cudaStream_t& stream;
            cudaGraphExec_t& graph;
            std::vector<cudaEvent_t>& events;
            ~Release() {
                cudaStreamSynchronize(stream);
                if (graph) cudaGraphExecDestroy(graph);
                for (cudaEvent_t ev : events) cudaEventDestroy(ev);
                cudaStreamDestroy(stream);
            }
        } release{stream, graph, events};
        int done = 0;
        const auto report = [&] {
            FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
            result.peak_memory_bytes =
                std::max<std::uint64_t>(result.peak_memory_bytes, detail::used_bytes(free_at_start));
            result.loss = step.losses(done);
            if (progress && !progress(done, result.loss)) result.cancelled = true;
            return !result.cancelled;
        };
        // The validation passes go between steps, outside the step's graph and its timing.
        std::vector<int> evaluated_after;
        const auto evaluate_if_due = [&](int completed) {
            if (!run.text_report || !step.evaluation_due(completed)) return;
            step.enqueue_validation(stream);
            evaluated_after.push_back(completed - 1);
        };
        const int warmup = std::min(run.warmup_steps, e.steps);
        for (; done < warmup; ++done) {
            step.enqueue_step(stream);
            evaluate_if_due(done + 1);
        }
        FP8LAB_CUDA_CHECK(cudaGetLastError());
        bool go_on = report();
        if (go_on && run.use_graph && done < e.steps) {
            cudaGraph_t g;
            FP8LAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
            step.enqueue_step(stream);
            FP8LAB_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
            const cudaError_t made = cudaGraphInstantiate(&graph, g, 0);
            cudaGraphDestroy(g);
            FP8LAB_CUDA_CHECK(made);
        }
        const int timed = e.steps - done;
        events.resize(std::size_t(2 * std::max(timed, 0)));
        for (cudaEvent_t& ev : events) FP8LAB_CUDA_CHECK(cudaEventCreate(&ev));
        for (int i = 0; go_on && i < timed; ++i, ++done) {
            FP8LAB_CUDA_CHECK(cudaEventRecord(events[std::size_t(2 * i)], stream));
            if (graph)
                FP8LAB_CUDA_CHECK(cudaGraphLaunch(graph, stream));
            else
                step.enqueue_step(stream);
            FP8LAB_CUDA_CHECK(cudaEventRecord(events[std::size_t(2 * i + 1)], stream));
            evaluate_if_due(done + 1);
            if ((i + 1) % 25 == 0 && i + 1 < timed) go_on = report();
        }
        if (go_on) report();
        FP8LAB_CUDA_CHECK(cudaGetLastError());
        detail::record_step_times(events, done - warmup, e, result);
        result.loss = step.losses(done);
        std::vector<emu::TensorNumerics> numerics = step.numerics(done);
        if (run.record_trace && e.numerics.precision == emu::Precision::Fp8)
            result.trace = detail::transformer_trace(numerics, result.device, e);
        if (run.record_numerics) result.numerics = std::move(numerics);
        result.attention = step.attention_kernel();
        if (run.text_report) {
            emu::TextReport& text = result.text.emplace();
            text.corpus = corpus.description;
            text.parameters = emu::transformer_parameters(e.model.transformer);
            const std::vector<double> bits = step.validation_bits_per_byte();
            for (std::size_t k = 0; k < bits.size(); ++k) text.validation.push_back({evaluated_after[k], bits[k]});
            if (!result.cancelled)
                emu::write_samples(
                    corpus, e.task.seed, e.model.transformer.sequence,
                    [&](const std::vector<std::uint8_t>& context) { return step.next_byte_logits(context, stream); },
                    text);
        }
    }
    result.path = detail::transformer_path(e.numerics);
    return result;
}

}  // namespace fp8lab::gpu
