// SPDX-License-Identifier: Apache-2.0
// The GPU transformer's per-tensor numerics (numerics_recorder.hpp).
#include "gpu/src/scaling/numerics_recorder.hpp"

#include "gpu/src/runtime/cuda_check.hpp"

namespace fp8lab::gpu::detail {

int NumericsRecorder::add(const std::string& name, std::uint64_t elements, const unsigned* amax_bits,
                          const train::DeviceScaling* scaling) {
    if (!on_) return -1;
    if (lanes_) throw GpuError("internal: a tensor added to the numerics recorder after allocate()");
    names_.push_back(name);
    elements_.push_back(elements);
    amax_bits_.push_back(amax_bits);
    scaling_.push_back(scaling);
    return int(names_.size()) - 1;
}

void NumericsRecorder::allocate() {
    if (!on_ || names_.empty()) return;
    const std::size_t tensors = names_.size(), kept = std::size_t(capacity_) * tensors;
    lanes_ = std::make_unique<DeviceBuffer<CastStats>>(tensors * train::kStatsLanes);
    records_ = std::make_unique<DeviceBuffer<CastStats>>(kept);
    amax_ = std::make_unique<DeviceBuffer<float>>(kept);
    scale_ = std::make_unique<DeviceBuffer<float>>(kept);
    amax_ptrs_ = std::make_unique<DeviceBuffer<const unsigned*>>(tensors);
    scaling_ptrs_ = std::make_unique<DeviceBuffer<const train::DeviceScaling*>>(tensors);
    FP8LAB_CUDA_CHECK(cudaMemset(lanes_->ptr, 0, lanes_->count * sizeof(CastStats)));
    FP8LAB_CUDA_CHECK(cudaMemset(records_->ptr, 0, records_->count * sizeof(CastStats)));
    upload(amax_ptrs_->ptr, amax_bits_, tensors);
    upload(scaling_ptrs_->ptr, scaling_, tensors);
}

CastStats* NumericsRecorder::lanes(int k) const {
    if (!on_ || k < 0 || paused_) return nullptr;
    if (!lanes_) throw GpuError("internal: numerics lanes asked for before allocate()");
    return lanes_->ptr + std::size_t(k) * train::kStatsLanes;
}

void NumericsRecorder::end_step(const int* step, cudaStream_t s) {
    if (!lanes_) return;
    train::NumericsCollect c;
    c.lanes = lanes_->ptr;
    c.records = records_->ptr;
    c.amax = amax_->ptr;
    c.scale = scale_->ptr;
    c.amax_bits = amax_ptrs_->ptr;
    c.scaling = scaling_ptrs_->ptr;
    c.tensors = int(names_.size());
    c.capacity = capacity_;
    train::collect_numerics(c, step, s);
}

std::vector<emu::TensorNumerics> NumericsRecorder::read(int steps) const {
    std::vector<emu::TensorNumerics> out;
    if (!lanes_) return out;
    const std::size_t tensors = names_.size();
    const std::size_t n = std::size_t(std::min(std::max(steps, 0), capacity_)) * tensors;
    std::vector<CastStats> records(n);
    std::vector<float> amax(n), scale(n);
    if (n) {
        FP8LAB_CUDA_CHECK(cudaMemcpy(records.data(), records_->ptr, n * sizeof(CastStats), cudaMemcpyDeviceToHost));
        FP8LAB_CUDA_CHECK(cudaMemcpy(amax.data(), amax_->ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
        FP8LAB_CUDA_CHECK(cudaMemcpy(scale.data(), scale_->ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    }
    for (std::size_t at = 0; at < n; ++at)
        out.push_back(numerics_record(records[at], at / tensors, names_[at % tensors], amax[at], scale[at],
                                      elements_[at % tensors]));
    return out;
}

}  // namespace fp8lab::gpu::detail
