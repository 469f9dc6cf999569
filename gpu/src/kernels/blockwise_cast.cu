// SPDX-License-Identifier: Apache-2.0
// The blockwise cast kernel: one 128 x 128 tile per thread block, read once; it writes the
// codes with row-wise 1 x 128 blocks, the transpose with column-wise blocks (or both with
// the tile's scale), every block's scale_inv in cuBLASLt's layout, and the tensor's amax.
#include <cfloat>
#include <stdexcept>

#include "gpu/src/kernels/blockwise_cast.hpp"
#include "gpu/src/kernels/cast_source.cuh"
#include "gpu/src/kernels/cast_stats.cuh"

namespace fp8lab::gpu::train {
namespace {

constexpr int kBlock = 128, kThreadsX = 32, kThreadsY = 8;
constexpr int kRowsPerThread = kBlock / kThreadsY;  // each thread: 4 columns of 16 rows

// emu::current_scale(amax, e4m3, power_of_two = true), float32 operation for operation.
__device__ float2 blockwise_scale(float amax) {
    if (amax == 0.0f || !isfinite(amax)) return make_float2(1.0f, 1.0f);
    float scale = __fdiv_rn(448.0f, amax);
    if (isinf(scale)) scale = FLT_MAX;
    scale = __uint_as_float(__float_as_uint(scale) & 0xFF800000u);  // 2^floor(log2 scale)
    return make_float2(scale, __fdiv_rn(1.0f, scale));
}

__device__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// The maximum over the thread block, returned to every thread.
__device__ float block_max(float v) {
    __shared__ float warps[kThreadsY];
    v = warp_max(v);
    if (threadIdx.x == 0) warps[threadIdx.y] = v;
    __syncthreads();
    float all = 0.0f;
    for (int w = 0; w < kThreadsY; ++w) all = fmaxf(all, warps[w]);
    return all;
}

__device__ std::uint32_t pack4(const float (&v)[4], const float (&scale)[4]) {
    std::uint32_t word = 0;
    for (int j = 0; j < 4; ++j) word |= std::uint32_t(to_fp8(v[j], scale[j], __NV_E4M3)) << (8 * j);
    return word;
}

template <Source K, bool kTiles>
__global__ void __launch_bounds__(kThreadsX* kThreadsY)
    blockwise_cast_kernel(CastSource s, int rows, int cols, BlockwiseTarget t) {
    __shared__ __align__(16) std::uint8_t staged[kBlock][kBlock + 4];  // codes by column, for out_t
    __shared__ float column_partial[kThreadsY][kBlock];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * kBlock, col0 = blockIdx.x * kBlock;
    const int c = col0 + 4 * tx;  // cols are multiples of 4: a thread's 4 columns are all in or all out
    float v[kRowsPerThread][4];
    float column_amax[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < kRowsPerThread; ++i) {
        const int r = row0 + ty + kThreadsY * i;
        if (r < rows && c < cols) {  // fmaxf skips NaN and keeps Inf, as the emulator's amax
            const float4 q = load_quad<K>(s, r, c);
            v[i][0] = q.x, v[i][1] = q.y, v[i][2] = q.z, v[i][3] = q.w;
        } else {
            v[i][0] = v[i][1] = v[i][2] = v[i][3] = 0.0f;  // outside the tensor: no effect on any amax
        }
        for (int j = 0; j < 4; ++j) column_amax[j] = fmaxf(column_amax[j], fabsf(v[i][j]));
    }
    const float tile_amax =
        block_max(fmaxf(fmaxf(column_amax[0], column_amax[1]), fmaxf(column_amax[2], column_amax[3])));
    if (tx == 0 && ty == 0 && t.amax_bits) atomicMax(t.amax_bits, __float_as_uint(tile_amax));

    float column_scale[4];
    if constexpr (kTiles) {
        const float2 sc = blockwise_scale(tile_amax);
        for (int j = 0; j < 4; ++j) column_scale[j] = sc.x;
        if (tx == 0 && ty == 0) {
            if (t.scale_inv) t.scale_inv[blockIdx.y * t.scale_line + blockIdx.x] = sc.y;
            if (t.scale_inv_t) t.scale_inv_t[blockIdx.x * t.scale_line_t + blockIdx.y] = sc.y;
        }
    } else {
        for (int j = 0; j < 4; ++j) column_partial[ty][4 * tx + j] = column_amax[j];
        __syncthreads();
        for (int j = 0; j < 4; ++j) {
            float a = 0.0f;
            for (int y = 0; y < kThreadsY; ++y) a = fmaxf(a, column_partial[y][4 * tx + j]);
            const float2 sc = blockwise_scale(a);
            column_scale[j] = sc.x;
            if (ty == 0 && t.scale_inv_t && c < cols) t.scale_inv_t[blockIdx.y * t.scale_line_t + c + j] = sc.y;
        }
    }

    CastTally tally;  // numerics recording only
    for (int i = 0; i < kRowsPerThread; ++i) {
        const int r = row0 + ty + kThreadsY * i;
        float row_scale[4], row_scale_inv;
        if constexpr (kTiles) {
            for (int j = 0; j < 4; ++j) row_scale[j] = column_scale[j];
            row_scale_inv = __fdiv_rn(1.0f, column_scale[0]);  // blockwise_scale's inverse
        } else {  // one warp holds one whole row of the tile: a 1 x 128 block
            const float2 sc = blockwise_scale(
                warp_max(fmaxf(fmaxf(fabsf(v[i][0]), fabsf(v[i][1])), fmaxf(fabsf(v[i][2]), fabsf(v[i][3])))));
            for (int j = 0; j < 4; ++j) row_scale[j] = sc.x;
            row_scale_inv = sc.y;
            if (tx == 0 && t.scale_inv && r < rows) t.scale_inv[blockIdx.x * t.scale_line + r] = sc.y;
        }
        if ((t.out || t.stats) && r < rows && c < cols) {
            const std::uint32_t word = pack4(v[i], row_scale);
            if (t.out) *reinterpret_cast<std::uint32_t*>(t.out + std::size_t(r) * cols + c) = word;
            if (t.stats)
                tally.add(make_float4(v[i][0], v[i][1], v[i][2], v[i][3]), word, row_scale[0], row_scale_inv,
                          __NV_E4M3);
        }
        if (t.out_t) {
            const std::uint32_t word = pack4(v[i], column_scale);
            for (int j = 0; j < 4; ++j) staged[4 * tx + j][ty + kThreadsY * i] = std::uint8_t(word >> (8 * j));
        }
    }
    if (t.stats) publish_stats(tally, t.stats);  // the same for the whole block
    if (!t.out_t) return;
    __syncthreads();
    // The transpose: each thread stores 4 consecutive rows of one column as one word.
    const int thread = ty * kThreadsX + tx;
    for (int k = 0; k < kBlock * kBlock / 4 / (kThreadsX * kThreadsY); ++k) {
        const int word = k * kThreadsX * kThreadsY + thread;
        const int column = word / (kBlock / 4), row = 4 * (word % (kBlock / 4));
        if (col0 + column < cols && row0 + row < rows)
            *reinterpret_cast<std::uint32_t*>(t.out_t + std::size_t(col0 + column) * t.ld_t + row0 + row) =
                *reinterpret_cast<const std::uint32_t*>(&staged[column][row]);
    }
}

template <Source K>
void launch(const CastSource& s, int rows, int cols, const BlockwiseTarget& t, cudaStream_t stream) {
    const dim3 block(kThreadsX, kThreadsY), grid((cols + kBlock - 1) / kBlock, (rows + kBlock - 1) / kBlock);
    if (t.tiles)
        blockwise_cast_kernel<K, true><<<grid, block, 0, stream>>>(s, rows, cols, t);
    else
        blockwise_cast_kernel<K, false><<<grid, block, 0, stream>>>(s, rows, cols, t);
}

}  // namespace

void blockwise_cast(const CastSource& s, int rows, int cols, const BlockwiseTarget& t, cudaStream_t stream) {
    if (s.kind == Source::MseGradBf16)  // it would write the codes but not the loss
        throw std::invalid_argument("blockwise_cast: the MSE gradient with its loss is cast per tensor only");
    with_source_kind(s.kind, [&](auto kind) { launch<decltype(kind)::value>(s, rows, cols, t, stream); });
}

}  // namespace fp8lab::gpu::train
