// SPDX-License-Identifier: Apache-2.0
// A loop over CUDA's host FP8 conversion, the baseline the emulator benchmark compares with.
#pragma once

#include <cstdint>
#include <span>

namespace fp8lab::bench {

// False where this build found no cuda_fp8.h (the comparison is then skipped, and said).
bool cuda_host_reference_available();

// codes[i] = __nv_cvt_float_to_fp8(x[i] * scale, __NV_SATFINITE, __NV_E4M3), on `threads`.
void cuda_host_quantize_e4m3(std::span<const float> x, float scale, std::span<std::uint8_t> codes, int threads);

}  // namespace fp8lab::bench
