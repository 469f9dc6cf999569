// SPDX-License-Identifier: Apache-2.0
// The GPU transformer's per-tensor numerics: each FP8 cast the CPU trainer records adds its
// counts to its tensor's lanes, and at each step's end one kernel turns the lanes into the
// step's records (with the tensor's amax and scale), read back as emu::TensorNumerics.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/scaling/tensor_numerics.hpp"
#include "gpu/src/step/mlp_step.hpp"

namespace fp8lab::gpu::detail {

class NumericsRecorder {
  public:
    // `on`: the run records numerics; `capacity`: the steps it keeps.
    NumericsRecorder(bool on, int capacity) : on_(on), capacity_(capacity) {}
    bool on() const { return on_; }
    // A tensor the CPU records: its name, elements per cast, and where its amax and its
    // scale are on the device at the step's end (scaling null: scale 1, block recipes).
    // Returns its index; -1 when off. Every tensor is added before allocate().
    int add(const std::string& name, std::uint64_t elements, const unsigned* amax_bits,
            const train::DeviceScaling* scaling);
    // The device buffers, once every tensor is added.
    void allocate();
    // Tensor k's lanes for a cast being enqueued: null when off, for k = -1, and while
    // paused (the validation and sampling passes, which the CPU does not record).
    CastStats* lanes(int k) const;
    void pause(bool paused) { paused_ = paused; }
    // Enqueued at the step's end, before anything clears the amaxes or moves the scales.
    void end_step(const int* step, cudaStream_t s);
    // The records of the first `steps` steps, step by step, tensors in the order added.
    std::vector<emu::TensorNumerics> read(int steps) const;

  private:
    bool on_;
    int capacity_;
    bool paused_ = false;
    std::vector<std::string> names_;
    std::vector<std::uint64_t> elements_;
    std::vector<const unsigned*> amax_bits_;
    std::vector<const train::DeviceScaling*> scaling_;
    std::unique_ptr<DeviceBuffer<CastStats>> lanes_, records_;
    std::unique_ptr<DeviceBuffer<float>> amax_, scale_;
    std::unique_ptr<DeviceBuffer<const unsigned*>> amax_ptrs_;
    std::unique_ptr<DeviceBuffer<const train::DeviceScaling*>> scaling_ptrs_;
};

}  // namespace fp8lab::gpu::detail
