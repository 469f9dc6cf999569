// SPDX-License-Identifier: Apache-2.0
// The emulated cast's kernels for vectors down the columns (emulated_cast_kernels.cuh).
#include "gpu/src/kernels/emulated_cast_kernels.cuh"

namespace fp8lab::gpu::train::emulated {

void launch_cast_columns(const CastSource& s, int rows, int cols, const EmulatedCast& e, std::size_t threads,
                         cudaStream_t stream) {
    launch_cast<true>(s, rows, cols, e, threads, stream);
}

}  // namespace fp8lab::gpu::train::emulated
