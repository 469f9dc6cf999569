// SPDX-License-Identifier: Apache-2.0
// The GPU transformer's linear layers: parameters on the device, FP8 operands with their
// scaling slots (per tensor, delayed or current), block or row scales, and a layer's three
// GEMMs, native (BF16, FP8 per tensor, blockwise or rowwise on the tensor cores) or emulated
// (MX, NVFP4, and blockwise or rowwise where the tensor cores cannot run them).
// Included by gpu_transformer.cpp alone.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "emulator/models/transformer/transformer_trainer.hpp"
#include "gpu/src/gemm/block_scale_layout.hpp"
#include "gpu/src/kernels/blockwise_cast.hpp"
#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/scaling/emulated_operand.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/src/scaling/numerics_recorder.hpp"
#include "gpu/src/kernels/rowwise_cast.hpp"
#include "gpu/src/kernels/transformer_kernels.hpp"

namespace fp8lab::gpu::transformer {

using detail::BlockScaleLayout;
using detail::describe_emulated_cast;
using detail::DeviceBuffer;
using detail::EmulatedCastShared;
using detail::enqueue_nvfp4_amaxes;
using detail::LtMatmul;
using detail::MatmulOperand;
using detail::NumericsRecorder;
using detail::OperandCast;
using detail::plan_operand_cast;
using detail::ScaleMode;
using detail::Stored;
using detail::upload;

// One parameter tensor on the device: float32 master weights, AdamW's moments, the
// gradient, and the BF16 copy the BF16 GEMMs read.
struct DeviceParameter {
    std::string name;
    int rows, cols;
    bool decay;
    // Some BF16 GEMM reads w16, so AdamW writes it (an FP8 layer's weight, a norm's gain and
    // an untied embedding need no copy: 2 bytes a parameter less to write each step).
    bool bf16_copy = false;
    DeviceBuffer<float> w, m, v, g;
    DeviceBuffer<__nv_bfloat16> w16;
    DeviceParameter(const emu::ParameterGradient& p, bool decays)
        : name(p.name),
          rows(p.rows),
          cols(p.cols),
          decay(decays),
          w(p.value.size()),
          m(p.value.size()),
          v(p.value.size()),
          g(p.value.size()),
          w16(p.value.size()) {
        upload(w.ptr, p.value, p.value.size());
        FP8LAB_CUDA_CHECK(cudaMemset(m.ptr, 0, m.count * sizeof(float)));
        FP8LAB_CUDA_CHECK(cudaMemset(v.ptr, 0, v.count * sizeof(float)));
        train::f32_to_bf16(w.ptr, w16.ptr, w.count, nullptr);
    }
};

// Every FP8 operand's scale and amax, one slot each; with delayed scaling also its amax
// history, updated for all of them by one kernel at the end of each step.
class ScalingSlots {
  public:
    ScalingSlots(int capacity, const emu::Numerics& n)
        : delayed_(n.recipe == emu::Fp8Recipe::Delayed),
          length_(n.delayed.history_length),
          max_(n.delayed.algorithm == emu::AmaxAlgorithm::Max),
          margin_(n.delayed.margin),
          states_(std::size_t(std::max(capacity, 1))),
          amax_(states_.count),
          amax_saved_(states_.count),
          history_(delayed_ ? states_.count * std::size_t(length_) : 0),
          numerators_(states_.count) {
        std::vector<train::DeviceScaling> ones(states_.count);
        upload(states_.ptr, ones, ones.size());
        FP8LAB_CUDA_CHECK(cudaMemset(amax_.ptr, 0, amax_.count * sizeof(unsigned)));
        if (history_.count) FP8LAB_CUDA_CHECK(cudaMemset(history_.ptr, 0, history_.count * sizeof(float)));
    }
    bool delayed() const { return delayed_; }
    // The next slot, for an operand in E4M3 or E5M2.
    int take(bool e4m3) {
        if (std::size_t(used_) >= states_.count) throw GpuError("internal: more FP8 operands than scaling slots");
        numerators_host_.push_back(std::ldexp(e4m3 ? 448.0f : 57344.0f, -margin_));
        return used_++;
    }
    train::DeviceScaling* state(int slot) { return states_.ptr + slot; }
    unsigned* amax(int slot) { return amax_.ptr + slot; }
    // Delayed scaling's step end: every slot's amax into its history, the next scales.
    void end_step(cudaStream_t s) {
        if (!delayed_ || used_ == 0) return;
        if (!numerators_uploaded_) {
            upload(numerators_.ptr, numerators_host_, std::size_t(used_));
            numerators_uploaded_ = true;
        }
        transformer::delayed_update_all(states_.ptr, amax_.ptr, history_.ptr, numerators_.ptr, used_, length_, max_, s);
    }
    // An evaluation's casts record amaxes too; delayed scaling's history must not see them
    // (the CPU evaluates with a copy of its recipe state).
    void save_amax(cudaStream_t s) {
        FP8LAB_CUDA_CHECK(
            cudaMemcpyAsync(amax_saved_.ptr, amax_.ptr, amax_.count * sizeof(unsigned), cudaMemcpyDeviceToDevice, s));
    }
    void restore_amax(cudaStream_t s) {
        FP8LAB_CUDA_CHECK(
            cudaMemcpyAsync(amax_.ptr, amax_saved_.ptr, amax_.count * sizeof(unsigned), cudaMemcpyDeviceToDevice, s));
    }

  private:
    bool delayed_;
    int length_;
    bool max_;
    int margin_, used_ = 0;
    bool numerators_uploaded_ = false;
    DeviceBuffer<train::DeviceScaling> states_;
    DeviceBuffer<unsigned> amax_, amax_saved_;
    DeviceBuffer<float> history_, numerators_;
    std::vector<float> numerators_host_;
};

// A per-tensor FP8 operand: the codes, their transpose, and its slot's scale; its casts
// counted under `name` when the run records numerics.
struct Fp8Operand {
    bool e4m3;
    ScalingSlots& slots;
    int slot;
    DeviceBuffer<std::uint8_t> codes, codes_t;
    NumericsRecorder& recorder;
    int record;
    Fp8Operand(std::size_t n, bool e4m3_, ScalingSlots& s, NumericsRecorder& r, const std::string& name)
        : e4m3(e4m3_),
          slots(s),
          slot(s.take(e4m3_)),
          codes(n),
          codes_t(n),
          recorder(r),
          record(r.add(name, n, s.amax(slot), s.state(slot))) {}
    // Current scaling: two passes, as Transformer Engine's (the amax, then the cast).
    // Delayed: one pass with the scale the history set; the cast records the amax.
    void cast(const train::CastSource& source, int rows, int cols, cudaStream_t s) {
        train::DeviceScaling* scaling = slots.state(slot);
        unsigned* amax = slots.amax(slot);
        if (!slots.delayed()) {
            FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax, 0, sizeof(unsigned), s));
            train::amax_only(source, rows, cols, amax, s);
            train::current_scale(amax, e4m3 ? 448.0f : 57344.0f, scaling, s);
            FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax, 0, sizeof(unsigned), s));
        }
        train::cast_transpose(source, rows, cols, target(rows), s);
    }
    // Where a cast of `rows` rows writes: the codes, their transpose, the slot's amax.
    train::CastTarget target(int rows) {
        return {slots.state(slot),     e4m3, codes.ptr, codes_t.ptr, rows, slots.amax(slot), nullptr,
                recorder.lanes(record)};
    }
    MatmulOperand as(Stored stored) {
        return {e4m3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2, stored, &slots.state(slot)->scale_inv, ScaleMode::PerTensor};
    }
};

// A layer's input or output gradient as its casts read it (train::CastSource).
inline train::CastSource bf16_rows(const void* x, int cols) { return {train::Source::Bf16, x, nullptr, cols}; }
inline train::CastSource f32_rows(const float* x, int cols) { return {train::Source::F32, x, nullptr, cols}; }

// One linear layer's three GEMMs: y = x W^T, dx = dy W, dW = dy^T x (rows x in -> out).
class LinearLayer {
  public:
    virtual ~LinearLayer() = default;
    // x: rows x in (BF16, or SwiGLU of a gate|up pair where computes_operands()); weight:
    // its float32 master and BF16 copy.
    virtual void forward(const train::CastSource& x, const DeviceParameter& weight, void* y, cudaStream_t s) = 0;
    // dy: rows x out (BF16, float32 as the residual stream's gradient, or SwiGLU's gradient
    // where computes_operands()); dx may be null.
    virtual void backward(const train::CastSource& x, const DeviceParameter& weight, const train::CastSource& dy,
                          float* weight_grad, void* dx, cudaStream_t s) = 0;
    // Whether its GEMMs read the weight's BF16 copy.
    virtual bool reads_bf16_weight() const { return false; }
    // Whether its GEMMs read the output gradient as BF16 (a BF16 layer), so that the step
    // may hand it the residual stream's gradient in BF16 rather than float32.
    virtual bool reads_bf16_gradient() const { return false; }
    // Whether its casts can compute an operand on the way (SwiGLU or its gradient), so the
    // step need not write it first: every FP8 layer. A BF16 layer's GEMMs read the operand
    // as stored.
    virtual bool computes_operands() const { return true; }
    // Whether its FP8 weight is cast by the optimizer (update_weight) rather than by its
    // forward pass; then cast_weight makes the first step's codes before any step runs.
    virtual bool casts_weight_in_update() const { return false; }
    virtual void cast_weight(const DeviceParameter&, cudaStream_t) {}
    virtual void update_weight(DeviceParameter&, const train::AdamParams&, const int*, cudaStream_t) {}
};

// BF16, or FP8 with per-tensor scaling on the FP8 tensor cores.
class Linear final : public LinearLayer {
  public:
    // weight_in_update: AdamW casts the weight (delayed scaling only; casts_weight_in_update).
    Linear(cublasLtHandle_t lt, int rows, int in, int out, bool fp8, bool weight_in_update, void* workspace,
           ScalingSlots& slots, const std::string& name, NumericsRecorder& recorder)
        : rows_(rows),
          in_(in),
          out_(out),
          fp8_(fp8),
          weight_in_update_(fp8 && weight_in_update && slots.delayed()),
          workspace_(workspace) {
        const MatmulOperand bf{CUDA_R_16BF, Stored::AsIs}, bf_t{CUDA_R_16BF, Stored::Transposed};
        if (!fp8) {
            forward_ = std::make_unique<LtMatmul>(lt, rows, out, in, bf, bf_t, CUDA_R_16BF, false);
            dgrad_ = std::make_unique<LtMatmul>(lt, rows, in, out, bf, bf, CUDA_R_16BF, false);
            wgrad_ = std::make_unique<LtMatmul>(lt, out, in, rows, bf_t, bf, CUDA_R_32F, false);
            return;
        }
        x_ = std::make_unique<Fp8Operand>(std::size_t(rows) * in, true, slots, recorder, name + ".input");
        w_ = std::make_unique<Fp8Operand>(std::size_t(out) * in, true, slots, recorder, name + ".weight");
        g_ = std::make_unique<Fp8Operand>(std::size_t(rows) * out, false, slots, recorder, name + ".grad_output");
        // FP8 GEMMs take A as is and B transposed: the transposed codes serve the backward.
        forward_ = std::make_unique<LtMatmul>(lt, rows, out, in, x_->as(Stored::AsIs), w_->as(Stored::Transposed),
                                              CUDA_R_16BF, false);
        dgrad_ = std::make_unique<LtMatmul>(lt, rows, in, out, g_->as(Stored::AsIs), w_->as(Stored::Transposed),
                                            CUDA_R_16BF, false);
        wgrad_ = std::make_unique<LtMatmul>(lt, out, in, rows, g_->as(Stored::AsIs), x_->as(Stored::Transposed),
                                            CUDA_R_32F, false);
    }
    void forward(const train::CastSource& x, const DeviceParameter& weight, void* y, cudaStream_t s) override {
        if (!fp8_) return forward_->run(stored_bf16(x), weight.w16.ptr, y, workspace_, s);
        x_->cast(x, rows_, in_, s);
        if (!weight_in_update_) cast_weight(weight, s);
        forward_->run(x_->codes.ptr, w_->codes.ptr, y, workspace_, s);
    }
    void backward(const train::CastSource& x, const DeviceParameter& weight, const train::CastSource& dy,
                  float* weight_grad, void* dx, cudaStream_t s) override {
        if (!fp8_) {
            const void* g = stored_bf16(dy);
            wgrad_->run(g, stored_bf16(x), weight_grad, workspace_, s);
            if (dx) dgrad_->run(g, weight.w16.ptr, dx, workspace_, s);
            return;
        }
        g_->cast(dy, rows_, out_, s);
        wgrad_->run(g_->codes_t.ptr, x_->codes_t.ptr, weight_grad, workspace_, s);
        if (dx) dgrad_->run(g_->codes.ptr, w_->codes_t.ptr, dx, workspace_, s);
    }
    bool reads_bf16_weight() const override { return !fp8_; }
    bool reads_bf16_gradient() const override { return !fp8_; }
    bool computes_operands() const override { return fp8_; }
    // Delayed scaling: the next step's weight scale is set when a step ends, before AdamW
    // runs, so AdamW casts the weights it writes and the forward pass reads their codes (a
    // read of the float32 weights a step saved). The codes, amax and counts are those the
    // forward's own cast would make.
    bool casts_weight_in_update() const override { return weight_in_update_; }
    void cast_weight(const DeviceParameter& weight, cudaStream_t s) override {
        w_->cast({train::Source::F32, weight.w.ptr, nullptr, in_}, out_, in_, s);
    }
    void update_weight(DeviceParameter& weight, const train::AdamParams& a, const int* step, cudaStream_t s) override {
        train::adamw_cast_transpose(weight.w.ptr, weight.m.ptr, weight.v.ptr, weight.g.ptr, out_, in_, a, step, 0,
                                    w_->target(out_), s);
    }

  private:
    static const void* stored_bf16(const train::CastSource& x) {
        if (x.kind != train::Source::Bf16)
            throw GpuError("internal: a BF16 linear layer was given an operand that is not stored as BF16");
        return x.x;
    }
    int rows_, in_, out_;
    bool fp8_, weight_in_update_;
    void* workspace_;
    std::unique_ptr<LtMatmul> forward_, dgrad_, wgrad_;
    std::unique_ptr<Fp8Operand> x_, w_, g_;
};

// A blockwise FP8 operand (DeepSeek-V3's recipe, E4M3): its codes with a scale per 1 x 128
// block of a row (inputs, gradients) or per 128 x 128 tile (weights), and the transposed
// copy with its own scales (blocks along the tokens, which wgrad contracts over), both
// written by one cast in the layouts cuBLASLt reads; its casts counted under `name` when
// the run records numerics (its amax beside them, its scale 1 as the CPU's).
struct BlockwiseOperand {
    int rows, cols;
    BlockScaleLayout layout, layout_t;
    DeviceBuffer<std::uint8_t> codes, codes_t;
    DeviceBuffer<float> scales, scales_t;
    DeviceBuffer<unsigned> amax;
    NumericsRecorder& recorder;
    int record;
    BlockwiseOperand(int r, int c, bool tiles, NumericsRecorder& rec, const std::string& name, const emu::Numerics&)
        : rows(r),
          cols(c),
          layout{tiles, r, c},
          layout_t{tiles, c, r},
          codes(std::size_t(r) * c),
          codes_t(codes.count),
          scales(layout.count()),
          scales_t(layout_t.count()),
          amax(1),
          recorder(rec),
          record(rec.add(name, codes.count, amax.ptr, nullptr)) {
        // The padding is never read as a scale; ones keep it harmless all the same.
        upload(scales.ptr, std::vector<float>(scales.count, 1.0f), scales.count);
        upload(scales_t.ptr, std::vector<float>(scales_t.count, 1.0f), scales_t.count);
    }
    void cast(const train::CastSource& source, cudaStream_t s) {
        train::BlockwiseTarget t{layout.tiles, codes.ptr,    scales.ptr,      layout.line(), codes_t.ptr,
                                 rows,         scales_t.ptr, layout_t.line(), nullptr};
        t.stats = recorder.lanes(record);
        if (t.stats) {
            FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax.ptr, 0, sizeof(unsigned), s));
            t.amax_bits = amax.ptr;
        }
        train::blockwise_cast(source, rows, cols, t, s);
    }
    MatmulOperand as(bool transposed_copy, Stored stored) const {
        return {CUDA_R_8F_E4M3, stored, transposed_copy ? scales_t.ptr : scales.ptr,
                layout.tiles ? ScaleMode::Tiles128x128 : ScaleMode::Blocks1x128};
    }
};

// A rowwise FP8 operand (torchao's recipe, E4M3): its codes with one power-of-two scale
// per row, and the transposed copy with one per row of the transpose (a column of the
// source), both from one rowwise_cast, for cuBLASLt's outer-vector scale mode; its casts
// counted under `name` when the run records numerics (its amax beside them, scale 1 as the
// CPU's).
struct RowwiseOperand {
    int rows, cols;
    float min_amax;
    DeviceBuffer<std::uint8_t> codes, codes_t;
    DeviceBuffer<float> scale_inv, scale_inv_t, scratch;
    DeviceBuffer<unsigned> amax;
    NumericsRecorder& recorder;
    int record;
    RowwiseOperand(int r, int c, bool, NumericsRecorder& rec, const std::string& name, const emu::Numerics& n)
        : rows(r),
          cols(c),
          min_amax(emu::recipe_of(n).min_amax),
          codes(std::size_t(r) * c),
          codes_t(codes.count),
          scale_inv(std::size_t(r)),
          scale_inv_t(std::size_t(c)),
          scratch(std::size_t(r) + std::size_t(c)),
          amax(1),
          recorder(rec),
          record(rec.add(name, codes.count, amax.ptr, nullptr)) {}
    void cast(const train::CastSource& source, cudaStream_t s) {
        train::RowwiseTarget t{codes.ptr,       scale_inv.ptr, codes_t.ptr, rows,
                               scale_inv_t.ptr, scratch.ptr,   amax.ptr,    min_amax};
        t.stats = recorder.lanes(record);
        train::rowwise_cast(source, rows, cols, t, s);
    }
    MatmulOperand as(bool transposed_copy, Stored stored) const {
        return {CUDA_R_8F_E4M3, stored, transposed_copy ? scale_inv_t.ptr : scale_inv.ptr, ScaleMode::PerRow};
    }
};

// FP8 with block or row scales on the tensor cores (Operand: BlockwiseOperand or
// RowwiseOperand): cuBLASLt's scaled GEMMs (Hopper, cuBLASLt 12.9 or later), which always
// promote their partial sums.
template <class Operand>
class ScaledLinear final : public LinearLayer {
  public:
    ScaledLinear(cublasLtHandle_t lt, int rows, int in, int out, void* workspace, const std::string& name,
                 NumericsRecorder& recorder, const emu::Numerics& n)
        : in_(in),
          workspace_(workspace),
          x_(rows, in, false, recorder, name + ".input", n),
          w_(out, in, true, recorder, name + ".weight", n),
          g_(rows, out, false, recorder, name + ".grad_output", n) {
        // As the per-tensor layer: A as stored, B transposed; the transposed copies serve
        // the backward.
        forward_ = std::make_unique<LtMatmul>(lt, rows, out, in, x_.as(false, Stored::AsIs),
                                              w_.as(false, Stored::Transposed), CUDA_R_16BF, false);
        dgrad_ = std::make_unique<LtMatmul>(lt, rows, in, out, g_.as(false, Stored::AsIs),
                                            w_.as(true, Stored::Transposed), CUDA_R_16BF, false);
        wgrad_ = std::make_unique<LtMatmul>(lt, out, in, rows, g_.as(true, Stored::AsIs),
                                            x_.as(true, Stored::Transposed), CUDA_R_32F, false);
    }
    void forward(const train::CastSource& x, const DeviceParameter& weight, void* y, cudaStream_t s) override {
        x_.cast(x, s);
        w_.cast({train::Source::F32, weight.w.ptr, nullptr, in_}, s);
        forward_->run(x_.codes.ptr, w_.codes.ptr, y, workspace_, s);
    }
    void backward(const train::CastSource&, const DeviceParameter&, const train::CastSource& dy, float* weight_grad,
                  void* dx, cudaStream_t s) override {
        g_.cast(dy, s);
        wgrad_->run(g_.codes_t.ptr, x_.codes_t.ptr, weight_grad, workspace_, s);
        if (dx) dgrad_->run(g_.codes.ptr, w_.codes_t.ptr, dx, workspace_, s);
    }

  private:
    int in_;
    void* workspace_;
    Operand x_, w_, g_;
    std::unique_ptr<LtMatmul> forward_, dgrad_, wgrad_;
};

using Bf16 = DeviceBuffer<__nv_bfloat16>;

// A linear layer under an emulated block recipe (MX, NVFP4; blockwise off Hopper): every operand cast as the
// CPU's LinearGemms casts it (codes and scales by emulated_recipe's plans: blocks along each
// GEMM's contraction, the CPU's stochastic seeds and Hadamard signs), written as BF16 and
// multiplied in BF16 with float32 accumulation, the tensors' factors as the GEMM's alpha.
// Hopper has no MX or NVFP4 tensor cores: the time is this emulation's.
class EmulatedLinear final : public LinearLayer {
  public:
    EmulatedLinear(cublasLtHandle_t lt, int rows, int in, int out, const std::string& name, const emu::Numerics& n,
                   const EmulatedCastShared& shared, void* workspace, NumericsRecorder& recorder)
        : rows_(rows),
          in_(in),
          out_(out),
          shared_(shared),
          workspace_(workspace),
          recorder_(recorder),
          factors_(kFactors),
          nvfp4_amax_(6),
          amax_(3),
          xq_(std::size_t(rows) * in),
          xtq_(xq_.count),
          wq_(std::size_t(out) * in),
          gq_(std::size_t(rows) * out),
          gtq_(gq_.count) {
        // The CPU's tensor names: their lengths key the stochastic roundings' seeds.
        const auto plan = [&](emu::TensorRole role, const char* suffix, bool wgrad) {
            return plan_operand_cast(n, role, false, wgrad, (name + suffix).size());
        };
        input_ = plan(emu::TensorRole::Input, ".input", false);
        input_t_ = plan(emu::TensorRole::Input, ".input", true);
        weight_ = plan(emu::TensorRole::Weight, ".weight", false);
        grad_ = plan(emu::TensorRole::GradOutput, ".grad_output", false);
        grad_t_ = plan(emu::TensorRole::GradOutput, ".grad_output", true);
        // W^T cast in square blocks is the transpose of W's cast unless stochastic rounding
        // counts its elements in the transposed order (as the MLP's emulated step).
        reuse_weight_ = weight_.square_blocks() && !weight_.params.stochastic;
        if (!reuse_weight_) wtq_ = std::make_unique<Bf16>(wq_.count);
        const MatmulOperand as_is{CUDA_R_16BF, Stored::AsIs}, transposed{CUDA_R_16BF, Stored::Transposed};
        forward_ = std::make_unique<LtMatmul>(lt, rows, out, in, as_is, transposed, CUDA_R_16BF, false, f(kForward));
        dgrad_ = std::make_unique<LtMatmul>(lt, rows, in, out, as_is, as_is, CUDA_R_16BF, false, f(kDgrad));
        wgrad_ = std::make_unique<LtMatmul>(lt, out, in, rows, transposed, as_is, CUDA_R_32F, false, f(kWgrad));
        // The casts the CPU records: the forward's input and weight, the gradient along its
        // rows; block recipes have no tensor scale (1), and their amax is the tensor's.
        const char* suffixes[3] = {".input", ".weight", ".grad_output"};
        const std::uint64_t elements[3] = {std::uint64_t(rows) * in, std::uint64_t(out) * in,
                                           std::uint64_t(rows) * out};
        for (int k = 0; k < 3; ++k) records_[k] = recorder.add(name + suffixes[k], elements[k], amax_.ptr + k, nullptr);
    }
    void forward(const train::CastSource& xs, const DeviceParameter& weight, void* y, cudaStream_t s) override {
        const train::CastSource ws{train::Source::F32, weight.w.ptr, nullptr, in_};
        enqueue_nvfp4_amaxes(input_, &input_t_, xs, rows_, in_, shared_.step, nvfp4_amax_.ptr, s);
        enqueue_nvfp4_amaxes(weight_, nullptr, ws, out_, in_, shared_.step, nvfp4_amax_.ptr + 2, s);
        cast(input_, 0, xs, rows_, in_, false, xq_.ptr, kInput, 0, s, true);
        cast(weight_, 1, ws, out_, in_, false, wq_.ptr, kWeight, 2, s, true);
        train::gemm_alpha(f(kInput), f(kWeight), f(kForward), s);
        forward_->run(xq_.ptr, wq_.ptr, y, workspace_, s);
    }
    void backward(const train::CastSource& xs, const DeviceParameter& weight, const train::CastSource& gs,
                  float* weight_grad, void* dx, cudaStream_t s) override {
        enqueue_nvfp4_amaxes(grad_, &grad_t_, gs, rows_, out_, shared_.step, nvfp4_amax_.ptr + 4, s);
        // wgrad contracts over the rows: both its operands cast down their columns (x's NVFP4
        // amaxes are the forward's: the same tensor).
        cast(grad_, 2, gs, rows_, out_, false, gq_.ptr, kGrad, 4, s, true);
        cast(grad_t_, 2, gs, rows_, out_, true, gtq_.ptr, kGradT, 4, s);
        cast(input_t_, 0, xs, rows_, in_, true, xtq_.ptr, kInputT, 0, s);
        train::gemm_alpha(f(kGradT), f(kInputT), f(kWgrad), s);
        wgrad_->run(gtq_.ptr, xtq_.ptr, weight_grad, workspace_, s);
        if (!dx) return;
        const __nv_bfloat16* w_t = wq_.ptr;
        Factor w_factor = kWeight;
        if (!reuse_weight_) {
            cast(weight_, 1, {train::Source::F32, weight.w.ptr, nullptr, in_}, out_, in_, true, wtq_->ptr, kWeightT, 2,
                 s);
            w_t = wtq_->ptr;
            w_factor = kWeightT;
        }
        train::gemm_alpha(f(kGrad), f(w_factor), f(kDgrad), s);
        dgrad_->run(gq_.ptr, w_t, dx, workspace_, s);
    }

    // Its casts read stored operands (the emulated casts are compiled for those kinds only).
    bool computes_operands() const override { return false; }

  private:
    enum Factor { kInput, kWeight, kWeightT, kGrad, kGradT, kInputT, kForward, kDgrad, kWgrad, kFactors };
    float* f(Factor k) { return factors_.ptr + k; }
    // One cast; `amax_slot`: the tensor's NVFP4 slots (0 input, 2 weight, 4 gradient);
    // `recorded`: the cast the CPU records (its numerics counted while the run records them).
    void cast(const OperandCast& plan, int role, const train::CastSource& source, int rows, int cols, bool columns,
              __nv_bfloat16* out, Factor factor, int amax_slot, cudaStream_t s, bool recorded = false) {
        train::EmulatedCast e = describe_emulated_cast(plan, role, shared_, source, rows, cols, columns, out, f(factor),
                                                       nvfp4_amax_.ptr + amax_slot, s);
        if (recorded) e.stats = recorder_.lanes(records_[role]);
        if (e.stats) {
            FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax_.ptr + role, 0, sizeof(unsigned), s));
            e.amax_bits = amax_.ptr + role;
        }
        train::emulated_cast(source, rows, cols, e, s);
    }
    int rows_, in_, out_;
    EmulatedCastShared shared_;
    void* workspace_;
    NumericsRecorder& recorder_;
    int records_[3] = {-1, -1, -1};  // the recorder's input, weight and gradient
    OperandCast input_, input_t_, weight_, grad_, grad_t_;
    bool reuse_weight_ = false;
    DeviceBuffer<float> factors_;
    DeviceBuffer<unsigned> nvfp4_amax_, amax_;  // amax_: the recorded casts' amaxes
    Bf16 xq_, xtq_, wq_, gq_, gtq_;
    std::unique_ptr<Bf16> wtq_;
    std::unique_ptr<LtMatmul> forward_, dgrad_, wgrad_;
};

}  // namespace fp8lab::gpu::transformer
