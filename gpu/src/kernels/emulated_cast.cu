// SPDX-License-Identifier: Apache-2.0
// The emulated recipes' kernels: the casts' launcher (its kernels, one thread a vector of a
// block-scaled tensor, are in emulated_cast_kernels.cuh), the paired cast of a tensor's two
// GEMM operands, block and tensor amaxes, the GEMM's factor.
#include <algorithm>
#include <stdexcept>

#include "gpu/src/kernels/emulated_cast_kernels.cuh"

namespace fp8lab::gpu::train {

using namespace emulated;

namespace {

// Both casts of one tensor whose GEMMs contract over different dimensions (16-element
// vectors along the rows, and down the columns): a block reads a 16 x 128 tile once (one
// column per thread, coalesced), casts its column, and through shared memory casts one
// of the tile's 128 row vectors. The source (a GELU, its backward) is read and computed
// once instead of twice, and the column cast's reads are the row cast's.
constexpr int kPairThreads = 128;
constexpr int kPairStride = 8 * 17 + 1;  // a tile row: 8 vectors of 16, each padded by one (fewer bank conflicts)

__global__ void __launch_bounds__(kPairThreads)
    emulated_cast_pair_kernel(CastSource s, int rows, int cols, EmulatedCast along_rows, EmulatedCast down_columns) {
    __shared__ float tile[16 * kPairStride];
    __shared__ float row_values[256], column_values[256], e4m3_values[256];
    load_tables(along_rows, row_values, e4m3_values);
    for (int i = int(threadIdx.x); i < 256; i += kPairThreads)
        column_values[i] = down_columns.element_values ? down_columns.element_values[i] : 0.0f;
    const int r0 = int(blockIdx.y) * 16, c0 = int(blockIdx.x) * kPairThreads;
    const int tx = int(threadIdx.x), c = c0 + tx;
    float v[16];
    load_vector<true, 16>(s, r0, c, 16, v);
#pragma unroll
    for (int j = 0; j < 16; ++j) tile[j * kPairStride + (tx / 16) * 17 + tx % 16] = v[j];
    __syncthreads();
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && tx == 0;
    const vq::Params pc = params_at_step(down_columns);
    CastTally column_tally, row_tally;
    const float column_amax = cast_vector<true, 16>(down_columns, pc, v, r0, c, 16, rows, cols, column_values,
                                                    e4m3_values, down_columns.stats != nullptr, column_tally);
    if (first) write_tensor_factor(down_columns, pc);
    const int row = tx / 8, k = tx % 8;  // this thread's row vector: row `row`, columns 16k..16k+15 of the tile
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = tile[row * kPairStride + k * 17 + j];
    const vq::Params pr = params_at_step(along_rows);
    const float row_amax = cast_vector<false, 16>(along_rows, pr, v, r0 + row, c0 + 16 * k, 16, rows, cols, row_values,
                                                  e4m3_values, along_rows.stats != nullptr, row_tally);
    if (first) write_tensor_factor(along_rows, pr);
    if (along_rows.amax_bits) publish_amax<kPairThreads / 32>(row_amax, along_rows.amax_bits);
    if (along_rows.stats) publish_stats(row_tally, along_rows.stats);
    __syncthreads();  // publish_amax's and publish_stats's shared slots are used again below
    if (down_columns.amax_bits) publish_amax<kPairThreads / 32>(column_amax, down_columns.amax_bits);
    if (down_columns.stats) publish_stats(column_tally, down_columns.stats);
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

// plain_bits (with `hadamard` only, may be null): the amax before the transform as well,
// from the same reads.
template <Source K>
__global__ void __launch_bounds__(kThreads)
    tensor_amax_kernel(CastSource s, int rows, int cols, bool hadamard, std::uint64_t seed, const int* step,
                       unsigned* amax_bits, unsigned* plain_bits) {
    if (step) seed = std::uint64_t(*step);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    float local = 0.0f, plain = 0.0f;
    for (std::size_t t = blockIdx.x * std::size_t(kThreads) + threadIdx.x; t < segments;
         t += std::size_t(gridDim.x) * kThreads) {
        float v[16];
        if (hadamard) {  // 16 rows of one column, transformed as the wgrad operand is
            const int c = int(t % cols), r = int(t / cols) * 16;
            for (int j = 0; j < 16; ++j) {
                v[j] = load_one<K>(s, r + j, c);
                plain = fmaxf(plain, fabsf(v[j]));
            }
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
    if (!plain_bits) return;
    __syncthreads();  // publish_amax's shared slots are used again
    publish_amax<kThreads / 32>(plain, plain_bits);
}

__global__ void gemm_alpha_kernel(const float* a, const float* b, float* alpha) { *alpha = __fmul_rn(*a, *b); }

}  // namespace

void emulated_cast(const CastSource& s, int rows, int cols, const EmulatedCast& e, cudaStream_t stream) {
    const int along = e.columns ? rows : cols;
    const std::size_t threads = std::size_t((along + e.vector - 1) / e.vector) * (e.columns ? cols : rows);
    if (e.vector != 16 && e.vector != 32) throw std::invalid_argument("emulated_cast: vectors are 16 or 32 long");
    if (threads + kThreads > std::size_t(1) << 31) throw std::invalid_argument("emulated_cast: tensor too large");
    if (e.stats && e.params.hadamard)
        throw std::invalid_argument("emulated_cast: no numerics for a Hadamard-transformed cast");
    if (e.columns)
        emulated::launch_cast_columns(s, rows, cols, e, threads, stream);
    else
        emulated::launch_cast_rows(s, rows, cols, e, threads, stream);
}

bool can_cast_pair(int rows, int cols, const EmulatedCast& along_rows, const EmulatedCast& down_columns) {
    const auto fits = [](const EmulatedCast& e) { return e.vector == 16 && !e.block_amax_bits; };
    return rows % 16 == 0 && cols % kPairThreads == 0 && rows / 16 <= 65535 && !along_rows.columns &&
           down_columns.columns && fits(along_rows) && fits(down_columns);
}

void emulated_cast_pair(const CastSource& s, int rows, int cols, const EmulatedCast& along_rows,
                        const EmulatedCast& down_columns, cudaStream_t stream) {
    if (!can_cast_pair(rows, cols, along_rows, down_columns))
        throw std::invalid_argument("emulated_cast_pair: not a pair of 16-element casts of a 16 x 128 tiled tensor");
    if ((along_rows.stats && along_rows.params.hadamard) || (down_columns.stats && down_columns.params.hadamard))
        throw std::invalid_argument("emulated_cast_pair: no numerics for a Hadamard-transformed cast");
    const dim3 grid(unsigned(cols / kPairThreads), unsigned(rows / 16));
    require_stored(s);
    emulated_cast_pair_kernel<<<grid, kPairThreads, 0, stream>>>(s, rows, cols, along_rows, down_columns);
}

void block_amax(const CastSource& s, int rows, int cols, int block_rows, int block_cols, unsigned* amax_bits,
                cudaStream_t stream) {
    const std::size_t blocks =
        std::size_t((rows + block_rows - 1) / block_rows) * std::size_t((cols + block_cols - 1) / block_cols);
    cudaMemsetAsync(amax_bits, 0, blocks * sizeof(unsigned), stream);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    with_source_kind<false>(s.kind, [&](auto kind) {
        block_amax_kernel<decltype(kind)::value>
            <<<blocks_for(segments), kThreads, 0, stream>>>(s, rows, cols, block_rows, block_cols, amax_bits);
    });
}

namespace {
void launch_tensor_amax(const CastSource& s, int rows, int cols, bool hadamard_columns, std::uint64_t hadamard_seed,
                        const int* step, unsigned* amax_bits, unsigned* plain_bits, cudaStream_t stream) {
    cudaMemsetAsync(amax_bits, 0, sizeof(unsigned), stream);
    if (plain_bits) cudaMemsetAsync(plain_bits, 0, sizeof(unsigned), stream);
    const std::size_t segments = std::size_t(rows) * cols / 16;
    const int grid = int(std::min<std::size_t>(std::max<std::size_t>(blocks_for(segments) / 4, 1), 4096));
    with_source_kind<false>(s.kind, [&](auto kind) {
        tensor_amax_kernel<decltype(kind)::value><<<grid, kThreads, 0, stream>>>(
            s, rows, cols, hadamard_columns, hadamard_seed, step, amax_bits, plain_bits);
    });
}
}  // namespace

void tensor_amax(const CastSource& s, int rows, int cols, bool hadamard_columns, std::uint64_t hadamard_seed,
                 const int* step, unsigned* amax_bits, cudaStream_t stream) {
    launch_tensor_amax(s, rows, cols, hadamard_columns, hadamard_seed, step, amax_bits, nullptr, stream);
}

void tensor_amax_pair(const CastSource& s, int rows, int cols, const int* step, unsigned* plain_bits,
                      unsigned* hadamard_bits, cudaStream_t stream) {
    launch_tensor_amax(s, rows, cols, true, 0, step, hadamard_bits, plain_bits, stream);
}

void gemm_alpha(const float* a, const float* b, float* alpha, cudaStream_t stream) {
    gemm_alpha_kernel<<<1, 1, 0, stream>>>(a, b, alpha);
}

}  // namespace fp8lab::gpu::train
