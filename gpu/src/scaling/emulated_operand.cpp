// SPDX-License-Identifier: Apache-2.0
// One emulated GEMM operand's cast (emulated_operand.hpp).
#include "gpu/src/scaling/emulated_operand.hpp"

namespace fp8lab::gpu::detail {

train::EmulatedCast describe_emulated_cast(const OperandCast& p, int role, const EmulatedCastShared& shared,
                                           const train::CastSource& source, int rows, int cols, bool columns,
                                           __nv_bfloat16* out, float* factor, unsigned* nvfp4_amax, cudaStream_t s) {
    train::EmulatedCast e;
    e.params = p.params;
    e.columns = columns;
    e.vector = p.vector;
    e.block_rows = p.block_rows;
    e.block_cols = p.block_cols;
    e.step = shared.step;
    e.element_values = shared.role_values[role];
    e.e4m3_values = shared.e4m3_values;
    e.out = out;
    e.tensor_factor = factor;
    if (p.nvfp4) e.tensor_amax_bits = nvfp4_amax + (p.params.hadamard ? 1 : 0);
    if (p.block_amax_pass) {
        const int block_rows = columns ? p.block_cols : p.block_rows;
        const int block_cols = columns ? p.block_rows : p.block_cols;
        train::block_amax(source, rows, cols, block_rows, block_cols, shared.block_amax, s);
        e.block_amax_bits = shared.block_amax;
    }
    return e;
}

void enqueue_nvfp4_amaxes(const OperandCast& plan, const OperandCast* wgrad, const train::CastSource& source, int rows,
                          int cols, const int* step, unsigned* slots, cudaStream_t s) {
    if (!plan.nvfp4) return;
    if (wgrad && wgrad->params.hadamard)
        train::tensor_amax_pair(source, rows, cols, step, slots, slots + 1, s);
    else
        train::tensor_amax(source, rows, cols, false, 0, nullptr, slots, s);
}

}  // namespace fp8lab::gpu::detail
