// One thread's 4 x 4 square of a 64 x 64 tile cast to FP8: the codes as one word per row,
// the transpose as one word per column through shared memory, the block's amax. Shared by
// the cast kernel and AdamW fused with the cast of the weights it writes.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "gpu/src/cast_source.cuh"

namespace fp8lab::gpu::train {

// A 64 x 64 tile per block of 16 x 16 threads, each thread a 4 x 4 square: its four
// row loads (8 or 16 bytes each) are all in flight before any use, its codes go to `out`
// as one word per row and, transposed in registers (byte permutes), as one word per
// column through shared memory to `out_t`, so that every store is a coalesced word.
// (Two elements a thread with a load, a convert and a store per pair left the loads one
// at a time behind stores that might alias them: 2.3 TB/s and 37 instructions an element
// for a plain BF16 cast on an H200, Nsight Compute.)
constexpr int kTile = 64, kSide = 16, kQuad = 4;
static_assert(kSide * kQuad == kTile);

inline dim3 square_block() { return dim3(kSide, kSide); }
inline dim3 square_grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

// words[i] holds the codes of row i (columns 0..3, column 0 in the lowest byte); returns
// in words[j] the codes of column j (rows 0..3, row 0 in the lowest byte).
__device__ inline void transpose_bytes_4x4(std::uint32_t (&words)[4]) {
    const std::uint32_t a = __byte_perm(words[0], words[1], 0x5140), b = __byte_perm(words[0], words[1], 0x7362);
    const std::uint32_t c = __byte_perm(words[2], words[3], 0x5140), d = __byte_perm(words[2], words[3], 0x7362);
    words[0] = __byte_perm(a, c, 0x5410);
    words[1] = __byte_perm(a, c, 0x7632);
    words[2] = __byte_perm(b, d, 0x5410);
    words[3] = __byte_perm(b, d, 0x7632);
}

// load(row, col) gives the four values at (row, col..col+3); every thread of the block
// calls this once (it synchronises the block).
template <class Load>
__device__ inline void cast_square(const Load& load, int rows, int cols, const CastTarget& t) {
    __shared__ std::uint32_t by_column[kTile][kSide + 1];  // [column][group of 4 rows]
    const __nv_fp8_interpretation_t format = t.e4m3 ? __NV_E4M3 : __NV_E5M2;
    const float scale = t.scaling->scale;
    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    const int r = row0 + kQuad * threadIdx.y, c = col0 + kQuad * threadIdx.x;
    // rows and cols are multiples of 16: a thread's square is all inside or all outside.
    const bool inside = r < rows && c < cols;
    float local = 0.0f;
    std::uint32_t words[kQuad] = {0, 0, 0, 0};
    if (inside) {
        float4 v[kQuad];
#pragma unroll
        for (int i = 0; i < kQuad; ++i) v[i] = load(r + i, c);
#pragma unroll
        for (int i = 0; i < kQuad; ++i) {
            local = fmaxf(local, abs_max4(v[i]));
            words[i] = to_fp8x4(v[i], scale, format);
        }
        if (t.out)
#pragma unroll
            for (int i = 0; i < kQuad; ++i)
                *reinterpret_cast<std::uint32_t*>(t.out + std::size_t(r + i) * cols + c) = words[i];
    }
    if (t.out_t) {  // the same for the whole block
        transpose_bytes_4x4(words);
#pragma unroll
        for (int j = 0; j < kQuad; ++j) by_column[kQuad * threadIdx.x + j][threadIdx.y] = words[j];
        __syncthreads();
        const int id = threadIdx.y * kSide + threadIdx.x;
#pragma unroll
        for (int pass = 0; pass < kTile / kSide; ++pass) {  // 16 threads write one column's 64 rows
            const int column = id / kSide + kSide * pass, group = id % kSide;
            const int tc = col0 + column, tr = row0 + kQuad * group;
            if (tc < cols && tr < rows)
                *reinterpret_cast<std::uint32_t*>(t.out_t + std::size_t(tc) * t.ld_t + tr) = by_column[column][group];
        }
    }
    publish_amax<kSide * kSide / 32>(local, t.amax_bits);
}

}  // namespace fp8lab::gpu::train
