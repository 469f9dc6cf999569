// SPDX-License-Identifier: Apache-2.0
// The rowwise cast: a pass of 32 x 32 tiles that takes every row's and every column's amax,
// a pass that turns them into power-of-two scales, and a pass of tiles that writes the codes
// along the rows and, through shared memory, the transpose along the columns.
#include <cfloat>
#include <stdexcept>

#include "gpu/src/kernels/cast_source.cuh"
#include "gpu/src/kernels/cast_stats.cuh"
#include "gpu/src/kernels/rowwise_cast.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kTile = 32, kThreadsY = 8;

// Every row's and column's max |x| of one tile into the amaxes (bits of non-negative
// floats order as the floats; fmaxf skips NaN and keeps Inf, as the emulator's amax).
template <Source K>
__global__ void row_column_amax_kernel(CastSource s, int rows, int cols, unsigned* row_bits, unsigned* col_bits) {
    __shared__ float column_part[kThreadsY][kTile];
    const int c = blockIdx.x * kTile + threadIdx.x, r0 = blockIdx.y * kTile;
    float column = 0.0f;
    for (int i = threadIdx.y; i < kTile; i += kThreadsY) {
        const int r = r0 + i;
        const float v = r < rows && c < cols ? fabsf(load_one<K>(s, r, c)) : 0.0f;
        column = fmaxf(column, v);
        float row = v;  // the warp is one row of the tile
        for (int offset = 16; offset > 0; offset /= 2) row = fmaxf(row, __shfl_xor_sync(0xffffffffu, row, offset));
        if (threadIdx.x == 0 && r < rows) atomicMax(row_bits + r, __float_as_uint(row));
    }
    column_part[threadIdx.y][threadIdx.x] = column;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        for (int y = 1; y < kThreadsY; ++y) column = fmaxf(column, column_part[y][threadIdx.x]);
        atomicMax(col_bits + c, __float_as_uint(column));
    }
}

// emu::current_scale(max(amax, min_amax), e4m3, power_of_two = true), operation for operation.
__global__ void rowwise_scales_kernel(float* scratch, int n, float min_amax, float* scale_inv, int rows,
                                      float* scale_inv_t, unsigned* amax_bits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float amax = scratch[i];  // the bits written by the amax pass
    if (amax_bits && i < rows) atomicMax(amax_bits, __float_as_uint(amax));
    if (amax < min_amax) amax = min_amax;  // NaN stays NaN
    float scale = 1.0f, inv = 1.0f;
    if (amax != 0.0f && isfinite(amax)) {
        scale = __fdiv_rn(448.0f, amax);
        if (isinf(scale)) scale = FLT_MAX;
        scale = __uint_as_float(__float_as_uint(scale) & 0xFF800000u);  // 2^floor(log2 scale)
        inv = __fdiv_rn(1.0f, scale);
    }
    scratch[i] = scale;
    if (i < rows) {
        if (scale_inv) scale_inv[i] = inv;
    } else if (scale_inv_t) {
        scale_inv_t[i - rows] = inv;
    }
}

template <Source K>
__global__ void rowwise_cast_kernel(CastSource s, int rows, int cols, RowwiseTarget t) {
    __shared__ float tile[kTile][kTile + 1];
    const float* row_scale = t.scratch;
    const float* col_scale = t.scratch + rows;
    const int c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
    CastTally tally;  // numerics recording only
    for (int i = threadIdx.y; i < kTile; i += kThreadsY) {
        const int r = r0 + i, c = c0 + threadIdx.x;
        const float v = r < rows && c < cols ? load_one<K>(s, r, c) : 0.0f;
        tile[i][threadIdx.x] = v;
        if ((t.out || t.stats) && r < rows && c < cols) {
            const std::uint8_t code = to_fp8(v, row_scale[r], __NV_E4M3);
            if (t.out) t.out[std::size_t(r) * cols + c] = code;
            if (t.stats) tally.add_one(v, code, row_scale[r], __fdiv_rn(1.0f, row_scale[r]), __NV_E4M3);
        }
    }
    if (t.stats) publish_stats(tally, t.stats);  // the same for the whole block
    if (!t.out_t) return;
    __syncthreads();
    for (int i = threadIdx.y; i < kTile; i += kThreadsY) {
        const int c = c0 + i, r = r0 + threadIdx.x;  // the transpose's row c, column r
        if (c < cols && r < rows)
            t.out_t[std::size_t(c) * t.ld_t + r] = to_fp8(tile[threadIdx.x][i], col_scale[c], __NV_E4M3);
    }
}

}  // namespace

void rowwise_cast(const CastSource& s, int rows, int cols, const RowwiseTarget& t, cudaStream_t stream) {
    if (s.kind == Source::MseGradBf16)  // it would write the codes but not the loss
        throw std::invalid_argument("rowwise_cast: the MSE gradient with its loss is cast per tensor only");
    if (!t.scratch) throw std::invalid_argument("rowwise_cast: the scratch buffer is missing");
    const int n = rows + cols;
    cudaMemsetAsync(t.scratch, 0, std::size_t(n) * sizeof(float), stream);
    if (t.amax_bits) cudaMemsetAsync(t.amax_bits, 0, sizeof(unsigned), stream);
    const dim3 block(kTile, kThreadsY), grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    unsigned* bits = reinterpret_cast<unsigned*>(t.scratch);
    with_source_kind(s.kind, [&](auto kind) {
        row_column_amax_kernel<decltype(kind)::value><<<grid, block, 0, stream>>>(s, rows, cols, bits, bits + rows);
    });
    rowwise_scales_kernel<<<(n + 255) / 256, 256, 0, stream>>>(t.scratch, n, t.min_amax, t.scale_inv, rows,
                                                               t.scale_inv_t, t.amax_bits);
    with_source_kind(s.kind, [&](auto kind) {
        rowwise_cast_kernel<decltype(kind)::value><<<grid, block, 0, stream>>>(s, rows, cols, t);
    });
}

}  // namespace fp8lab::gpu::train
