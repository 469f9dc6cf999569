// SPDX-License-Identifier: Apache-2.0
// Blockwise FP8 scaling on the native path (DeepSeek-V3's recipe, E4M3 everywhere): a scale
// per 1 x 128 block of inputs and gradients and per 128 x 128 tile of weights, computed in
// the cast's own pass, in the layouts cuBLASLt reads.
#include "gpu/src/scaling/native_scaling.hpp"

namespace fp8lab::gpu::detail {
namespace {

class BlockwiseScaling final : public NativeScaling {
  public:
    // The per-tensor state is kept as well: the step's end traces each tensor's amax.
    BlockwiseScaling(const GpuRun& c, const std::vector<LayerShape>& shapes, int rows, cudaStream_t s)
        : NativeScaling(c, false, s) {
        for (const LayerShape& sh : shapes) {
            const BlockScaleLayout layouts[3][2] = {{{false, rows, sh.in}, {false, sh.in, rows}},
                                                    {{true, sh.out, sh.in}, {true, sh.in, sh.out}},
                                                    {{false, rows, sh.out}, {false, sh.out, rows}}};
            for (const auto& pair : layouts) {
                BlockScales& b = blocks_.emplace_back();
                b.layout = pair[0];
                b.layout_t = pair[1];
                b.rowwise = std::make_unique<DeviceBuffer<float>>(b.layout.count());
                b.columnwise = std::make_unique<DeviceBuffer<float>>(b.layout_t.count());
                // The padding is never read as a scale; ones keep it harmless all the same.
                const std::vector<float> ones(std::max(b.layout.count(), b.layout_t.count()), 1.0f);
                FP8LAB_CUDA_CHECK(
                    cudaMemcpy(b.rowwise->ptr, ones.data(), b.layout.count() * sizeof(float), cudaMemcpyHostToDevice));
                FP8LAB_CUDA_CHECK(cudaMemcpy(b.columnwise->ptr, ones.data(), b.layout_t.count() * sizeof(float),
                                             cudaMemcpyHostToDevice));
            }
        }
    }

    // E4M3 everywhere, as emu::quantize_blockwise.
    cudaDataType_t type(emu::TensorRole) const override { return CUDA_R_8F_E4M3; }

    MatmulOperand operand(int j, bool transposed_copy, Stored stored) override {
        const BlockScales& b = blocks_[std::size_t(j)];
        return {type(kTensorRoles[j % 3]), stored, transposed_copy ? b.columnwise->ptr : b.rowwise->ptr,
                j % 3 == 1 ? ScaleMode::Tiles128x128 : ScaleMode::Blocks1x128};
    }

    // Every block's scale in the same pass as the cast.
    void cast(const CastSource& source, int rows, int cols, int j, std::uint8_t* out, std::uint8_t* out_t, int ld_t,
              cudaStream_t s, float*) override {
        const BlockScales& b = blocks_[std::size_t(j)];
        train::BlockwiseTarget target{
            j % 3 == 1,        out, b.rowwise->ptr, b.layout.line(), out_t, ld_t, b.columnwise->ptr, b.layout_t.line(),
            amax_bits_.ptr + j};
        target.stats = stats_slot(j);
        train::blockwise_cast(source, rows, cols, target, s);
    }

    // The loss is mse_loss's, before the cast: the cast kernel here computes no loss.
    bool loss_in_cast() const override { return false; }
    // Whole tensors only: the block scales index all rows.
    int dgrad_chunk_rows(int rows) const override { return rows; }
    std::string formats_name() const override { return "e4m3"; }

  private:
    // A tensor's block scales in cuBLASLt's layouts: of the codes as stored (inputs and
    // gradients rows x features in 1 x 128 blocks, weights out x in in 128 x 128 tiles) and
    // of the transposed copy (blocks along the tokens, which wgrad contracts over).
    struct BlockScales {
        BlockScaleLayout layout, layout_t;
        std::unique_ptr<DeviceBuffer<float>> rowwise, columnwise;
    };
    std::vector<BlockScales> blocks_;
};

}  // namespace

std::unique_ptr<NativeScaling> make_blockwise_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                      int rows, cudaStream_t s) {
    return std::make_unique<BlockwiseScaling>(config, shapes, rows, s);
}

}  // namespace fp8lab::gpu::detail
