// SPDX-License-Identifier: Apache-2.0
// The timed steps of a GPU training run: a CUDA event before and after each, and the
// result's median step time and the rates made from it (both trainers' loops share this).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu::detail {

// events[2 i] and events[2 i + 1] bracket timed step i, for `timed` steps: the median's
// time, tokens per second and TFLOP/s (model and GEMM FLOPs) go into the result.
inline void record_step_times(const std::vector<cudaEvent_t>& events, int timed, const emu::Experiment& e,
                              GpuTrainResult& result) {
    std::vector<float> ms;
    for (int i = 0; i < timed; ++i) {
        float t = 0;
        FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&t, events[std::size_t(2 * i)], events[std::size_t(2 * i + 1)]));
        ms.push_back(t);
    }
    result.timed_steps = int(ms.size());
    if (ms.empty()) return;
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    result.median_step_ms = ms[ms.size() / 2];
    result.tokens_per_second = e.tokens / (result.median_step_ms * 1e-3);
    result.model_tflops = model_flops_per_step(e) / (result.median_step_ms * 1e-3) / 1e12;
    result.gemm_tflops = gemm_flops_per_step(e) / (result.median_step_ms * 1e-3) / 1e12;
    result.step_bytes = mlp_step_bytes(e);
    result.memory_gbps = result.step_bytes / (result.median_step_ms * 1e-3) / 1e9;
}

}  // namespace fp8lab::gpu::detail
