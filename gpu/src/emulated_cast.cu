// The emulated recipes' kernels: one thread casts one vector of a block-scaled tensor with
// vector_quantize.hpp (the arithmetic the unit tests check on the host) and writes the
// BF16 operand a GEMM reads; block and tensor amaxes; the GEMM's factor.
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/src/cast_source.cuh"
#include "gpu/src/emulated_cast.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxVector = 32;

int blocks_for(std::size_t threads) { return int((threads + kThreads - 1) / kThreads); }

__device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The values of a vector: `count` elements from (r, c) along the row (columns false, in
// quads) or down the column (columns true).
template <Source K, bool Columns>
__device__ inline void load_vector(const CastSource& s, int r, int c, int count, float (&v)[kMaxVector]) {
    if constexpr (Columns) {
#pragma unroll
        for (int j = 0; j < kMaxVector; ++j) v[j] = j < count ? load_one<K>(s, r + j, c) : 0.0f;
    } else {
#pragma unroll
        for (int j = 0; j < kMaxVector; j += 4) {
            float4 q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (j < count) q = load_quad<K>(s, r, c + j);
            v[j] = q.x;
            v[j + 1] = q.y;
            v[j + 2] = q.z;
            v[j + 3] = q.w;
        }
    }
}

template <Source K, bool Columns>
__global__ void __launch_bounds__(kThreads) emulated_cast_kernel(CastSource s, int rows, int cols, EmulatedCast e) {
    __shared__ float values[256], e4m3_values[256];
    values[threadIdx.x] = e.element_values ? e.element_values[threadIdx.x] : 0.0f;
    e4m3_values[threadIdx.x] = e.e4m3_values ? e.e4m3_values[threadIdx.x] : 0.0f;
    __syncthreads();

    vq::Params p = e.params;
    if (e.step) {
        p.seed = emu::training_cast_seed(std::uint64_t(*e.step), p.seed);
        p.hadamard_seed = std::uint64_t(*e.step);
    }
    // The vectors: along each row (Columns false) or down each column, `vector` long.
    const int along = Columns ? rows : cols;         // the contraction dimension's extent
    const int per_line = ceil_div(along, e.vector);  // vectors per row (or column)
    const std::size_t total = std::size_t(per_line) * (Columns ? cols : rows);
    const std::size_t t = blockIdx.x * std::size_t(kThreads) + threadIdx.x;
    float local_amax = 0.0f;
    if (t < total) {
        // Columns: consecutive threads take consecutive columns (coalesced loads).
        const int line = Columns ? int(t % cols) : int(t / per_line);
        const int start = (Columns ? int(t / cols) : int(t % per_line)) * e.vector;
        const int count = min(e.vector, along - start);
        const int r = Columns ? start : line, c = Columns ? line : start;
        float v[kMaxVector];
        load_vector<K, Columns>(s, r, c, count, v);
        if (p.hadamard && count == 16) {
            float h[16];
#pragma unroll
            for (int j = 0; j < 16; ++j) h[j] = v[j];
            vq::hadamard16(h, p.hadamard_seed);
#pragma unroll
            for (int j = 0; j < 16; ++j) v[j] = h[j];
        }
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < kMaxVector; ++j)
            if (j < count) amax = fmaxf(amax, fabsf(v[j]));  // fmaxf skips NaN, keeps Inf
        local_amax = amax;
        // The emulator's tensor: the stored one, or its transpose (cols x rows).
        const int l_cols = Columns ? rows : cols;
        const int l_row = line;  // the vector lies in one row of the emulator's tensor
        const int l_grid_cols = ceil_div(l_cols, e.block_cols);
        const std::size_t block = std::size_t(l_row / e.block_rows) * l_grid_cols + start / e.block_cols;
        if (e.block_amax_bits) {  // blocks larger than a vector, in the stored tensor's grid
            const int s_block_rows = Columns ? e.block_cols : e.block_rows;
            const int s_block_cols = Columns ? e.block_rows : e.block_cols;
            amax = __uint_as_float(
                e.block_amax_bits[std::size_t(r / s_block_rows) * ceil_div(cols, s_block_cols) + c / s_block_cols]);
        }
        float tensor_scale = 1.0f;
        if (p.rule == vq::ScaleRule::PerTensor) tensor_scale = e.tensor_scaling->scale;
        if (p.rule == vq::ScaleRule::Nvfp4) tensor_scale = vq::nvfp4_s_enc(__uint_as_float(*e.tensor_amax_bits));
        const vq::BlockScale bs = vq::block_scale(p, amax, tensor_scale, e4m3_values);
        if (e.scale_inv) e.scale_inv[block] = bs.scale_inv;
        __nv_bfloat16 out[kMaxVector];
#pragma unroll
        for (int j = 0; j < kMaxVector; ++j) {
            if (j >= count) {
                out[j] = __float2bfloat16_rn(0.0f);
                continue;
            }
            if (p.rule == vq::ScaleRule::Bf16Only) {
                out[j] = __float2bfloat16_rn(v[j]);
                continue;
            }
            const std::uint64_t index = std::uint64_t(l_row) * l_cols + start + j;
            const std::uint32_t code = vq::cast_element(p, v[j], bs.multiplier, index);
            if (e.codes) e.codes[index] = std::uint8_t(code);
            out[j] = __float2bfloat16_rn(values[code] * bs.part);  // exact: see vector_quantize.hpp
        }
        __nv_bfloat16* o = static_cast<__nv_bfloat16*>(e.out);
        if constexpr (Columns) {
#pragma unroll
            for (int j = 0; j < kMaxVector; ++j)
                if (j < count) o[std::size_t(r + j) * cols + c] = out[j];
        } else {
#pragma unroll
            for (int j = 0; j < kMaxVector; j += 8)
                if (j < count) {
                    uint4 word;
                    word.x = __bfloat16_as_ushort(out[j]) | (unsigned(__bfloat16_as_ushort(out[j + 1])) << 16);
                    word.y = __bfloat16_as_ushort(out[j + 2]) | (unsigned(__bfloat16_as_ushort(out[j + 3])) << 16);
                    word.z = __bfloat16_as_ushort(out[j + 4]) | (unsigned(__bfloat16_as_ushort(out[j + 5])) << 16);
                    word.w = __bfloat16_as_ushort(out[j + 6]) | (unsigned(__bfloat16_as_ushort(out[j + 7])) << 16);
                    *reinterpret_cast<uint4*>(o + std::size_t(r) * cols + c + j) = word;
                }
        }
        if (t == 0 && e.tensor_factor) {
            float factor = 1.0f;
            if (p.rule == vq::ScaleRule::PerTensor) factor = e.tensor_scaling->scale_inv;
            if (p.rule == vq::ScaleRule::Nvfp4) factor = 1.0f / tensor_scale;
            *e.tensor_factor = factor;
        }
    }
    if (e.amax_bits) publish_amax<kThreads / 32>(local_amax, e.amax_bits);
}

// One thread per 16-element segment: along a row when a block spans 16 columns or more,
// else down a column (blocks one column wide).
template <Source K>
__global__ void __launch_bounds__(kThreads)
    block_amax_kernel(CastSource s, int rows, int cols, int block_rows, int block_cols, unsigned* amax_bits) {
    const bool down = block_cols < 16;
    const std::size_t segments = std::size_t(rows) * cols / 16;
    const std::size_t t = blockIdx.x * std::size_t(kThreads) + threadIdx.x;
    if (t >= segments) return;
    int r, c;
    float amax = 0.0f;
    if (down) {
        c = int(t % cols);
        r = int(t / cols) * 16;
        for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(load_one<K>(s, r + j, c)));
    } else {
        r = int(t / (cols / 16));
        c = int(t % (cols / 16)) * 16;
        for (int j = 0; j < 16; j += 4) amax = fmaxf(amax, abs_max4(load_quad<K>(s, r, c + j)));
    }
    // A segment lies in one block: blocks are whole multiples of 16 along the segment.
    atomicMax(amax_bits + std::size_t(r / block_rows) * ceil_div(cols, block_cols) + c / block_cols,
              __float_as_uint(amax));
}

template <Source K>
__global__ void __launch_bounds__(kThreads)
    tensor_amax_kernel(CastSource s, int rows, int cols, bool hadamard, std::uint64_t seed, const int* step,
                       unsigned* amax_bits) {
    if (step) seed = std::uint64_t(*step);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    float local = 0.0f;
    for (std::size_t t = blockIdx.x * std::size_t(kThreads) + threadIdx.x; t < segments;
         t += std::size_t(gridDim.x) * kThreads) {
        float v[16];
        if (hadamard) {  // 16 rows of one column, transformed as the wgrad operand is
            const int c = int(t % cols), r = int(t / cols) * 16;
            for (int j = 0; j < 16; ++j) v[j] = load_one<K>(s, r + j, c);
            vq::hadamard16(v, seed);
        } else {
            const int r = int(t / (cols / 16)), c = int(t % (cols / 16)) * 16;
            for (int j = 0; j < 16; j += 4) {
                const float4 q = load_quad<K>(s, r, c + j);
                v[j] = q.x, v[j + 1] = q.y, v[j + 2] = q.z, v[j + 3] = q.w;
            }
        }
        for (int j = 0; j < 16; ++j) local = fmaxf(local, fabsf(v[j]));
    }
    publish_amax<kThreads / 32>(local, amax_bits);
}

__global__ void gemm_alpha_kernel(const float* a, const float* b, float* alpha) { *alpha = __fmul_rn(*a, *b); }

}  // namespace

void emulated_cast(const CastSource& s, int rows, int cols, const EmulatedCast& e, cudaStream_t stream) {
    const int along = e.columns ? rows : cols;
    const std::size_t threads = std::size_t((along + e.vector - 1) / e.vector) * (e.columns ? cols : rows);
    with_source_kind(s.kind, [&](auto kind) {
        constexpr Source K = decltype(kind)::value;
        if (e.columns)
            emulated_cast_kernel<K, true><<<blocks_for(threads), kThreads, 0, stream>>>(s, rows, cols, e);
        else
            emulated_cast_kernel<K, false><<<blocks_for(threads), kThreads, 0, stream>>>(s, rows, cols, e);
    });
}

void block_amax(const CastSource& s, int rows, int cols, int block_rows, int block_cols, unsigned* amax_bits,
                cudaStream_t stream) {
    const std::size_t blocks =
        std::size_t((rows + block_rows - 1) / block_rows) * std::size_t((cols + block_cols - 1) / block_cols);
    cudaMemsetAsync(amax_bits, 0, blocks * sizeof(unsigned), stream);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    with_source_kind(s.kind, [&](auto kind) {
        block_amax_kernel<decltype(kind)::value>
            <<<blocks_for(segments), kThreads, 0, stream>>>(s, rows, cols, block_rows, block_cols, amax_bits);
    });
}

void tensor_amax(const CastSource& s, int rows, int cols, bool hadamard_columns, std::uint64_t hadamard_seed,
                 const int* step, unsigned* amax_bits, cudaStream_t stream) {
    cudaMemsetAsync(amax_bits, 0, sizeof(unsigned), stream);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    const int grid = int(std::min<std::size_t>(std::max<std::size_t>(blocks_for(segments) / 4, 1), 4096));
    with_source_kind(s.kind, [&](auto kind) {
        tensor_amax_kernel<decltype(kind)::value>
            <<<grid, kThreads, 0, stream>>>(s, rows, cols, hadamard_columns, hadamard_seed, step, amax_bits);
    });
}

void gemm_alpha(const float* a, const float* b, float* alpha, cudaStream_t stream) {
    gemm_alpha_kernel<<<1, 1, 0, stream>>>(a, b, alpha);
}

}  // namespace fp8lab::gpu::train
