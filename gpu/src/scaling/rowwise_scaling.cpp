// SPDX-License-Identifier: Apache-2.0
// Rowwise FP8 scaling on the native path (torchao's rowwise recipe, E4M3 everywhere): one
// power-of-two float32 scale per row of each GEMM operand as stored, which cuBLASLt's
// outer-vector scale mode (OUTER_VEC_32F) applies: per token and per output channel in the
// forward, per token and per input channel in dgrad, per output and input channel in wgrad.
#include "gpu/src/scaling/native_scaling.hpp"
#include "gpu/src/kernels/rowwise_cast.hpp"

#include "emulator/training/experiment.hpp"

namespace fp8lab::gpu::detail {
namespace {

class RowwiseScaling final : public NativeScaling {
  public:
    // The per-tensor state is kept as well: the step's end traces each tensor's amax.
    RowwiseScaling(const GpuRun& c, const std::vector<LayerShape>& shapes, int rows, cudaStream_t s)
        : NativeScaling(c, false, s), min_amax_(emu::recipe_of(c.experiment.numerics).min_amax) {
        for (const LayerShape& sh : shapes) {
            const int sizes[3][2] = {{rows, sh.in}, {sh.out, sh.in}, {rows, sh.out}};  // input, weight, gradient
            for (const auto& size : sizes) {
                RowScales& r = scales_.emplace_back();
                r.scale_inv = std::make_unique<DeviceBuffer<float>>(std::size_t(size[0]));
                r.scale_inv_t = std::make_unique<DeviceBuffer<float>>(std::size_t(size[1]));
                r.scratch = std::make_unique<DeviceBuffer<float>>(std::size_t(size[0] + size[1]));
            }
        }
    }

    cudaDataType_t type(emu::TensorRole) const override { return CUDA_R_8F_E4M3; }

    MatmulOperand operand(int j, bool transposed_copy, Stored stored) override {
        const RowScales& r = scales_[std::size_t(j)];
        return {CUDA_R_8F_E4M3, stored, transposed_copy ? r.scale_inv_t->ptr : r.scale_inv->ptr, ScaleMode::PerRow};
    }

    void cast(const CastSource& source, int rows, int cols, int j, std::uint8_t* out, std::uint8_t* out_t, int ld_t,
              cudaStream_t s, float*) override {
        const RowScales& r = scales_[std::size_t(j)];
        train::RowwiseTarget target{
            out, r.scale_inv->ptr, out_t, ld_t, r.scale_inv_t->ptr, r.scratch->ptr, amax_bits_.ptr + j, min_amax_};
        target.stats = stats_slot(j);
        train::rowwise_cast(source, rows, cols, target, s);
    }

    bool loss_in_cast() const override { return false; }
    // Whole tensors only: a column's scale needs every row.
    int dgrad_chunk_rows(int rows) const override { return rows; }
    std::string formats_name() const override { return "e4m3"; }

  private:
    // A tensor's scales: per row of the codes as stored, per row of the transposed copy (a
    // column of the source), and the cast's scratch.
    struct RowScales {
        std::unique_ptr<DeviceBuffer<float>> scale_inv, scale_inv_t, scratch;
    };
    std::vector<RowScales> scales_;
    float min_amax_;
};

}  // namespace

std::unique_ptr<NativeScaling> make_rowwise_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                    int rows, cudaStream_t s) {
    return std::make_unique<RowwiseScaling>(config, shapes, rows, s);
}

}  // namespace fp8lab::gpu::detail
