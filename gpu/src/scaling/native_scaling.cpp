// SPDX-License-Identifier: Apache-2.0
// The scaling state every native FP8 recipe keeps per tensor (amax, history, scale, trace),
// and the choice of recipe.
#include "gpu/src/scaling/native_scaling.hpp"

#include <cmath>

namespace fp8lab::gpu::detail {

NativeScaling::NativeScaling(const GpuRun& c, bool delayed, cudaStream_t s)
    : c_(c),
      tensors_(3 * int(layer_shapes(c.experiment.model).size())),
      delayed_(delayed),
      scaling_(std::size_t(tensors_)),
      amax_bits_(std::size_t(tensors_)),
      history_(std::size_t(tensors_) * std::size_t(c.experiment.numerics.delayed.history_length)),
      numerators_(std::size_t(tensors_)) {
    const std::vector<DeviceScaling> initial(static_cast<std::size_t>(tensors_));
    FP8LAB_CUDA_CHECK(cudaMemcpyAsync(scaling_.ptr, initial.data(), initial.size() * sizeof(DeviceScaling),
                                      cudaMemcpyHostToDevice, s));
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax_bits_.ptr, 0, tensors_ * sizeof(unsigned), s));
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(history_.ptr, 0, history_.count * sizeof(float), s));
    std::vector<float> numerators;
    for (int j = 0; j < tensors_; ++j) {
        const emu::Format& f = *c.experiment.numerics.formats.of(kTensorRoles[j % 3]);
        max_finite_.push_back(static_cast<float>(f.max_finite));
        // Formed in float32 first, exactly as the emulator does.
        numerators.push_back(std::ldexp(static_cast<float>(f.max_finite), -c.experiment.numerics.delayed.margin));
    }
    FP8LAB_CUDA_CHECK(cudaMemcpyAsync(numerators_.ptr, numerators.data(), numerators.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
    if (c.record_trace || c.record_numerics) {
        trace_amax_ = std::make_unique<DeviceBuffer<float>>(std::size_t(c.experiment.steps) * tensors_);
        trace_scale_ = std::make_unique<DeviceBuffer<float>>(trace_amax_->count);
    }
    if (c.record_numerics) {
        stats_ = std::make_unique<DeviceBuffer<CastStats>>(std::size_t(tensors_) * train::kStatsLanes);
        trace_stats_ = std::make_unique<DeviceBuffer<CastStats>>(std::size_t(c.experiment.steps) * tensors_);
        FP8LAB_CUDA_CHECK(cudaMemsetAsync(stats_->ptr, 0, stats_->count * sizeof(CastStats), s));
        FP8LAB_CUDA_CHECK(cudaMemsetAsync(trace_stats_->ptr, 0, trace_stats_->count * sizeof(CastStats), s));
    }
    // The copies above read host vectors that end here.
    FP8LAB_CUDA_CHECK(cudaStreamSynchronize(s));
}

void NativeScaling::fill(train::StepEnd& end) const {
    end.scaling = {scaling_.ptr,
                   amax_bits_.ptr,
                   history_.ptr,
                   numerators_.ptr,
                   trace_amax_ ? trace_amax_->ptr : nullptr,
                   trace_scale_ ? trace_scale_->ptr : nullptr,
                   stats_ ? stats_->ptr : nullptr,
                   trace_stats_ ? trace_stats_->ptr : nullptr};
    end.tensors = tensors_;
    end.history_length = c_.experiment.numerics.delayed.history_length;
    end.algorithm_max = c_.experiment.numerics.delayed.algorithm == emu::AmaxAlgorithm::Max;
    end.delayed = delayed_;
}

void NativeScaling::read_trace(int steps, std::vector<float>& amax, std::vector<float>& scale) const {
    const std::size_t n = trace_amax_ ? std::size_t(steps) * tensors_ : 0;
    amax.assign(n, 0);
    scale.assign(n, 0);
    if (!n) return;
    FP8LAB_CUDA_CHECK(cudaMemcpy(amax.data(), trace_amax_->ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    FP8LAB_CUDA_CHECK(cudaMemcpy(scale.data(), trace_scale_->ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
}

std::vector<CastStats> NativeScaling::read_numerics(int steps) const {
    std::vector<CastStats> out(trace_stats_ ? std::size_t(steps) * tensors_ : 0);
    if (!out.empty())
        FP8LAB_CUDA_CHECK(
            cudaMemcpy(out.data(), trace_stats_->ptr, out.size() * sizeof(CastStats), cudaMemcpyDeviceToHost));
    return out;
}

std::unique_ptr<NativeScaling> make_native_scaling(const GpuRun& config, const std::vector<LayerShape>& shapes,
                                                   int rows, cudaStream_t s) {
    // The GPU's dispatch to kernels: the recipe's blocks pick the scaling class.
    const emu::Recipe& r = emu::recipe(config.experiment.numerics.recipe);
    if (r.blocked(emu::BlockKind::Row)) return make_rowwise_scaling(config, shapes, rows, s);
    if (!r.per_tensor()) return make_blockwise_scaling(config, shapes, rows, s);
    return make_per_tensor_scaling(config, s);
}

}  // namespace fp8lab::gpu::detail
