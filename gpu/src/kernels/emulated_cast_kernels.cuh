// SPDX-License-Identifier: Apache-2.0
// The emulated cast's device code, shared by the files that instantiate its kernel (one for
// casts along the rows, one down the columns, compiled side by side: together in one file
// they were the build's longest step) and by the paired cast in emulated_cast.cu.
#pragma once

#include <cuda_bf16.h>

#include "gpu/src/kernels/cast_source.cuh"
#include "gpu/src/kernels/cast_stats.cuh"
#include "gpu/src/kernels/emulated_cast.hpp"

namespace fp8lab::gpu::train::emulated {

constexpr int kThreads = 256;

inline int blocks_for(std::size_t threads) { return int((threads + kThreads - 1) / kThreads); }

__device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The values of a vector: `count` elements from (r, c) along the row (columns false, in
// quads) or down the column (columns true).
template <Source K, bool Columns, int Vector>
__device__ inline void load_vector_of(const CastSource& s, int r, int c, int count, float (&v)[Vector]) {
    if constexpr (Columns) {
#pragma unroll
        for (int j = 0; j < Vector; ++j) v[j] = j < count ? load_one<K>(s, r + j, c) : 0.0f;
    } else {
#pragma unroll
        for (int j = 0; j < Vector; j += 4) {
            float4 q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (j < count) q = load_quad<K>(s, r, c + j);
            v[j] = q.x;
            v[j + 1] = q.y;
            v[j + 2] = q.z;
            v[j + 3] = q.w;
        }
    }
}

// The same with the source's kind chosen at run time, by one switch on a value every thread
// shares. The emulated casts' kernels are templates of the vector and the element cast, not
// of the source: a kernel per source kind multiplied their unrolled element loops by six, and
// each of the three files took about a minute to compile. The stored kinds only: the
// launchers refuse SwiGLU's computed ones (require_stored) before any launch.
template <bool Columns, int Vector>
__device__ inline void load_vector(const CastSource& s, int r, int c, int count, float (&v)[Vector]) {
    if (with_stored_kind(s.kind,
                         [&](auto kind) { load_vector_of<decltype(kind)::value, Columns, Vector>(s, r, c, count, v); }))
        return;
#pragma unroll
    for (int j = 0; j < Vector; ++j) v[j] = 0.0f;  // not reached: refused on the host
}

// The host's check that an emulated cast reads a stored operand.
inline void require_stored(const CastSource& s) {
    with_source_kind<false>(s.kind, [](auto) {});
}

// The cast's parameters at this step: in training the seeds come from the step counter.
__device__ inline vq::Params params_at_step(const EmulatedCast& e) {
    vq::Params p = e.params;
    if (e.step) {
        p.seed = emu::training_cast_seed(std::uint64_t(*e.step), p.seed);
        p.hadamard_seed = std::uint64_t(*e.step);
    }
    return p;
}

// The tensor's share of the dequantisation (the GEMM's alpha), written once per cast.
__device__ inline void write_tensor_factor(const EmulatedCast& e, const vq::Params& p) {
    if (!e.tensor_factor) return;
    float factor = 1.0f;
    if (p.rule == vq::ScaleRule::PerTensor) factor = e.tensor_scaling->scale_inv;
    if (p.rule == vq::ScaleRule::Nvfp4) factor = 1.0f / vq::nvfp4_s_enc(__uint_as_float(*e.tensor_amax_bits));
    *e.tensor_factor = factor;
}

// Whether x * multiplier (finite, its code at the format's largest magnitude) rounded past
// the largest value before saturation, under stochastic rounding (its bits decide). Rare,
// so not inlined: one copy serves every kernel variant.
static __device__ __noinline__ bool stochastic_past_largest(emu::detail::Float32KernelConstants k, std::uint64_t seed,
                                                            int random_bits, std::uint32_t scaled_bits,
                                                            std::uint64_t index) {
    return emu::detail::rounded_magnitude<emu::RoundingMode::Stochastic>(
               scaled_bits & 0x7FFFFFFFu, scaled_bits >> 31, k, emu::stochastic_bits(seed, index, random_bits),
               random_bits) > k.max_magnitude;
}

// One element's numerics (recording on), as emu::count_range counts them: flushed (a
// finite non-zero x * multiplier whose code has magnitude 0) and subnormal from the code
// itself (saturation only moves magnitudes past the largest); past the largest value by
// one comparison for nearest-even rounding, by the stochastic bits otherwise.
template <vq::ElementCast C>
__device__ inline void tally_element(const vq::Params& p, float x, const vq::BlockScale& bs, std::uint32_t code,
                                     float decoded, std::uint64_t index, CastTally& tally) {
    const std::uint32_t scaled = __float_as_uint(__fmul_rn(x, bs.multiplier)), a = scaled & 0x7FFFFFFFu;
    const std::uint32_t magnitude = code & ((1u << p.element.sign_shift) - 1u);
    const bool finite = a < 0x7F800000u;
    bool past;
    if constexpr (C == vq::ElementCast::Stochastic)
        past = finite && magnitude >= p.element.max_magnitude &&
               stochastic_past_largest(p.element, p.seed, p.random_bits, scaled, index);
    else
        past = finite && a >= p.element_past_bits;
    tally.add_flags(x, finite && a != 0 && magnitude == 0, past,
                    finite && magnitude != 0 && magnitude < p.element_first_normal, decoded * bs.scale_inv);
}

// Casts one vector: v holds `count` values (zeros after) from (r, c) of the stored rows x
// cols tensor, along the row (Columns false) or down the column, and writes their BF16
// operand values at the same places. Returns the vector's amax (before any transform).
// Vector (16 or 32) is a template argument: with the loops unrolled to the vector's own
// length, a 16-element cast issues no instructions for the slots it does not have.
// With `counting` (recording on), `tally` gets the elements' numerics. A reference and a
// flag, not a pointer that is null when off: a pointer chosen at run time to a kernel's
// local tally put the tally in local memory, which made a recorded cast 3x slower.
template <bool Columns, int Vector>
__device__ inline float cast_vector(const EmulatedCast& e, const vq::Params& p, float (&v)[Vector], int r, int c,
                                    int count, int rows, int cols, const float* values, const float* e4m3_values,
                                    bool counting, CastTally& tally) {
    float plain_amax = 0.0f;
#pragma unroll
    for (int j = 0; j < Vector; ++j) plain_amax = fmaxf(plain_amax, fabsf(v[j]));  // fmaxf skips NaN, keeps Inf
    if constexpr (Vector == 16)
        if (p.hadamard && count == 16) vq::hadamard16(v, p.hadamard_seed);
    float amax = plain_amax;
    if constexpr (Vector == 16)
        if (p.hadamard && count == 16) {
            amax = 0.0f;
#pragma unroll
            for (int j = 0; j < Vector; ++j) amax = fmaxf(amax, fabsf(v[j]));
        }
    // The emulator's tensor: the stored one, or its transpose (cols x rows); the vector
    // lies in one of its rows, l_row, from l_start.
    const int l_cols = Columns ? rows : cols;
    const int l_row = Columns ? c : r, l_start = Columns ? r : c;
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
    if (e.scale_inv)
        e.scale_inv[std::size_t(l_row / e.block_rows) * ceil_div(l_cols, e.block_cols) + l_start / e.block_cols] =
            bs.scale_inv;
    __nv_bfloat16 out[Vector];
    if (p.rule == vq::ScaleRule::Bf16Only) {
#pragma unroll
        for (int j = 0; j < Vector; ++j) out[j] = __float2bfloat16_rn(v[j]);  // zeros past count
    } else {
        vq::with_element_cast(p, [&](auto kind) {
#pragma unroll
            for (int j = 0; j < Vector; ++j) {
                const std::uint64_t index = std::uint64_t(l_row) * l_cols + l_start + j;
                const std::uint32_t code = vq::cast_element_as<decltype(kind)::value>(p, v[j], bs.multiplier, index);
                if (e.codes && j < count) e.codes[index] = std::uint8_t(code);
                if (counting && j < count)
                    tally_element<decltype(kind)::value>(p, v[j], bs, code, values[code], index, tally);
                // exact: see vector_quantize.hpp
                out[j] = __float2bfloat16_rn(j < count ? values[code] * bs.part : 0.0f);
            }
        });
    }
    __nv_bfloat16* o = static_cast<__nv_bfloat16*>(e.out);
    if constexpr (Columns) {
#pragma unroll
        for (int j = 0; j < Vector; ++j)
            if (j < count) o[std::size_t(r + j) * cols + c] = out[j];
    } else {
#pragma unroll
        for (int j = 0; j < Vector; j += 8)
            if (j < count) {
                uint4 word;
                word.x = __bfloat16_as_ushort(out[j]) | (unsigned(__bfloat16_as_ushort(out[j + 1])) << 16);
                word.y = __bfloat16_as_ushort(out[j + 2]) | (unsigned(__bfloat16_as_ushort(out[j + 3])) << 16);
                word.z = __bfloat16_as_ushort(out[j + 4]) | (unsigned(__bfloat16_as_ushort(out[j + 5])) << 16);
                word.w = __bfloat16_as_ushort(out[j + 6]) | (unsigned(__bfloat16_as_ushort(out[j + 7])) << 16);
                *reinterpret_cast<uint4*>(o + std::size_t(r) * cols + c + j) = word;
            }
    }
    return plain_amax;
}

// The decode tables of one cast into shared memory (256 floats each), by all threads.
__device__ inline void load_tables(const EmulatedCast& e, float* values, float* e4m3_values) {
    for (int i = int(threadIdx.x); i < 256; i += int(blockDim.x)) {
        values[i] = e.element_values ? e.element_values[i] : 0.0f;
        e4m3_values[i] = e.e4m3_values ? e.e4m3_values[i] : 0.0f;
    }
}

// One thread per vector, along the rows (Columns false) or down the columns.
template <bool Columns, int Vector>
__global__ void __launch_bounds__(kThreads) emulated_cast_kernel(CastSource s, int rows, int cols, EmulatedCast e) {
    __shared__ float values[256], e4m3_values[256];
    load_tables(e, values, e4m3_values);
    __syncthreads();
    const vq::Params p = params_at_step(e);
    // 32-bit indices (the launcher checks the count): 64-bit division is a software loop.
    const unsigned along = Columns ? rows : cols;             // the contraction dimension's extent
    const unsigned per_line = (along + Vector - 1) / Vector;  // vectors per row (or column)
    const unsigned total = per_line * unsigned(Columns ? cols : rows);
    const unsigned t = blockIdx.x * unsigned(kThreads) + threadIdx.x;
    float local_amax = 0.0f;
    CastTally tally;
    if (t < total) {
        // Columns: consecutive threads take consecutive columns (coalesced loads).
        const int line = int(Columns ? t % unsigned(cols) : t / per_line);
        const int start = int(Columns ? t / unsigned(cols) : t % per_line) * Vector;
        const int count = min(Vector, int(along) - start);
        const int r = Columns ? start : line, c = Columns ? line : start;
        float v[Vector];
        load_vector<Columns, Vector>(s, r, c, count, v);
        local_amax = cast_vector<Columns, Vector>(e, p, v, r, c, count, rows, cols, values, e4m3_values,
                                                  e.stats != nullptr, tally);
        if (t == 0) write_tensor_factor(e, p);
    }
    if (e.amax_bits) publish_amax<kThreads / 32>(local_amax, e.amax_bits);
    if (e.stats) publish_stats(tally, e.stats);
}

// The cast kernels of one direction (Columns false: emulated_cast_rows.cu, true:
// emulated_cast_columns.cu), 16- and 32-element vectors.
void launch_cast_rows(const CastSource& s, int rows, int cols, const EmulatedCast& e, std::size_t threads,
                      cudaStream_t stream);
void launch_cast_columns(const CastSource& s, int rows, int cols, const EmulatedCast& e, std::size_t threads,
                         cudaStream_t stream);

// Launches emulated_cast_kernel<Columns, 16 or 32>.
template <bool Columns>
void launch_cast(const CastSource& s, int rows, int cols, const EmulatedCast& e, std::size_t threads,
                 cudaStream_t stream) {
    require_stored(s);
    if (e.vector == 16)
        emulated_cast_kernel<Columns, 16><<<blocks_for(threads), kThreads, 0, stream>>>(s, rows, cols, e);
    else
        emulated_cast_kernel<Columns, 32><<<blocks_for(threads), kThreads, 0, stream>>>(s, rows, cols, e);
}

}  // namespace fp8lab::gpu::train::emulated
