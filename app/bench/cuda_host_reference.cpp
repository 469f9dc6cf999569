// SPDX-License-Identifier: Apache-2.0
// CUDA's host conversion in a plain loop (guarded: builds without the CUDA headers too).
#include "app/bench/cuda_host_reference.hpp"

#include <thread>
#include <vector>

#if __has_include(<cuda_fp8.h>)
#include <cuda_fp8.h>
#define FP8LAB_HAVE_CUDA_FP8 1
#endif

namespace fp8lab::bench {

#ifdef FP8LAB_HAVE_CUDA_FP8
bool cuda_host_reference_available() { return true; }

void cuda_host_quantize_e4m3(std::span<const float> x, float scale, std::span<std::uint8_t> codes, int threads) {
    auto run = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
            codes[i] = __nv_cvt_float_to_fp8(x[i] * scale, __NV_SATFINITE, __NV_E4M3);
    };
    const std::size_t n = x.size(), per = (n + threads - 1) / threads;
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(run, std::min(n, t * per), std::min(n, (t + 1) * per));
    run(0, std::min(n, per));
}
#else
bool cuda_host_reference_available() { return false; }
void cuda_host_quantize_e4m3(std::span<const float>, float, std::span<std::uint8_t>, int) {}
#endif

}  // namespace fp8lab::bench
