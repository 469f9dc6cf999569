// SPDX-License-Identifier: Apache-2.0
// How the native FP8 step scales its tensors, one class per recipe behind one interface:
// per tensor (delayed or current), blockwise and rowwise. The step's kernel sequence (native_mlp.cpp)
// names no recipe; it asks this for each cast, each GEMM operand and the step's end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/src/step/mlp_step.hpp"

namespace fp8lab::gpu::detail {

class NativeScaling {
  public:
    virtual ~NativeScaling() = default;
    NativeScaling(const NativeScaling&) = delete;
    NativeScaling& operator=(const NativeScaling&) = delete;

    // The FP8 type a role's codes are stored in.
    virtual cudaDataType_t type(emu::TensorRole role) const = 0;
    // Scaled tensor j as a GEMM operand: its codes or (`transposed_copy`) the transposed
    // copy, with the scale (or the block scales) that goes with them.
    virtual MatmulOperand operand(int j, bool transposed_copy, Stored stored) = 0;
    // Casts `source` (rows x cols) to FP8 for scaled tensor j, into `out` and its transpose
    // `out_t` (leading dimension ld_t; either may be null). With `loss_partials` the cast
    // also computes the loss of an MSE gradient source.
    virtual void cast(const CastSource& source, int rows, int cols, int j, std::uint8_t* out, std::uint8_t* out_t,
                      int ld_t, cudaStream_t s, float* loss_partials) = 0;
    // Whether the loss is computed in the cast of the output's gradient (one kernel less,
    // and no BF16 gradient in memory) rather than by mse_loss before it.
    virtual bool loss_in_cast() const = 0;
    // The rows of a hidden layer's dgrad chunk: the cast after it must see what it needs.
    virtual int dgrad_chunk_rows(int rows) const = 0;
    // "hybrid" or "e4m3", as the trace's configuration line names the formats.
    virtual std::string formats_name() const = 0;

    // The per-tensor state the step's end updates (the scale of each tensor from its amax
    // and history), and records when the run traces its amaxes.
    void fill(train::StepEnd& end) const;
    // The amax and scale of every tensor at each of the first `steps` steps.
    void read_trace(int steps, std::vector<float>& amax, std::vector<float>& scale) const;
    // With record_numerics: every tensor's cast counts at each of the first `steps` steps
    // (step-major), else empty.
    std::vector<CastStats> read_numerics(int steps) const;
    int tensors() const { return tensors_; }

  protected:
    NativeScaling(const GpuRun& c, bool delayed, cudaStream_t s);
    const float* scale_inv_slot(int j) const { return &scaling_.ptr[j].scale_inv; }

    const GpuRun c_;
    const int tensors_;  // 3 per layer: input, weight, grad_output
    const bool delayed_;
    DeviceBuffer<DeviceScaling> scaling_;
    DeviceBuffer<unsigned> amax_bits_;
    DeviceBuffer<float> history_, numerators_;
    std::unique_ptr<DeviceBuffer<float>> trace_amax_, trace_scale_;
    std::unique_ptr<DeviceBuffer<CastStats>> stats_, trace_stats_;  // record_numerics only
    CastStats* stats_slot(int j) const { return stats_ ? stats_->ptr + std::size_t(j) * train::kStatsLanes : nullptr; }
    std::vector<float> max_finite_;
};

// The scaling of the experiment's recipe (delayed, current, blockwise or rowwise); the layers' shapes and the
// tokens per step size its block scales.
std::unique_ptr<NativeScaling> make_native_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                   int rows, cudaStream_t s);
// The three families, each in its own file.
std::unique_ptr<NativeScaling> make_per_tensor_scaling(const GpuRun& config, cudaStream_t s);
std::unique_ptr<NativeScaling> make_blockwise_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                      int rows, cudaStream_t s);
std::unique_ptr<NativeScaling> make_rowwise_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                    int rows, cudaStream_t s);

}  // namespace fp8lab::gpu::detail
