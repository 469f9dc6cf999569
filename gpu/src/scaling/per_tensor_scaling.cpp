// SPDX-License-Identifier: Apache-2.0
// Per-tensor FP8 scaling on the native path: one scale per tensor, from the amax history
// (delayed) or from the tensor's own amax measured just before its cast (current).
#include "gpu/src/scaling/native_scaling.hpp"

namespace fp8lab::gpu::detail {
namespace {

class PerTensorScaling final : public NativeScaling {
  public:
    PerTensorScaling(const GpuRun& c, cudaStream_t s)
        : NativeScaling(c, emu::recipe(c.experiment.numerics.recipe).rule == emu::ScaleRule::Delayed, s) {}

    cudaDataType_t type(emu::TensorRole role) const override {
        return c_.experiment.numerics.formats.of(role) == &emu::e4m3() ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2;
    }

    MatmulOperand operand(int j, bool, Stored stored) override {
        return {type(kTensorRoles[j % 3]), stored, scale_inv_slot(j)};
    }

    // Current scaling first measures the amax and sets the scale; delayed scaling uses the
    // scale it has, and the cast records the amax for the history.
    void cast(const CastSource& source, int rows, int cols, int j, std::uint8_t* out, std::uint8_t* out_t, int ld_t,
              cudaStream_t s, float* loss_partials) override {
        if (!delayed_) {
            train::amax_only(source, rows, cols, amax_bits_.ptr + j, s);
            train::current_scale(amax_bits_.ptr + j, max_finite_[std::size_t(j)], scaling_.ptr + j, s);
        }
        const CastTarget target{scaling_.ptr + j,
                                type(kTensorRoles[j % 3]) == CUDA_R_8F_E4M3,
                                out,
                                out_t,
                                ld_t,
                                amax_bits_.ptr + j,
                                loss_partials,
                                stats_slot(j)};
        train::cast_transpose(source, rows, cols, target, s);
    }

    bool loss_in_cast() const override { return true; }

    // Delayed scaling casts the hidden gradient chunk by chunk with the scale it has;
    // current scaling needs the whole gradient's amax before its cast.
    int dgrad_chunk_rows(int rows) const override { return delayed_ ? std::min(rows, kDgradChunkRows) : rows; }

    std::string formats_name() const override {
        return c_.experiment.numerics.formats.gradient == &emu::e5m2() ? "hybrid" : "e4m3";
    }
};

}  // namespace

std::unique_ptr<NativeScaling> make_per_tensor_scaling(const GpuRun& config, cudaStream_t s) {
    return std::make_unique<PerTensorScaling>(config, s);
}

}  // namespace fp8lab::gpu::detail
