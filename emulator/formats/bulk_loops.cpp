// SPDX-License-Identifier: Apache-2.0
// Bulk loops, cloned for AVX-512, AVX2 and baseline x86-64 and picked at load time.
#include "emulator/formats/bulk_loops.hpp"

#include <bit>
#include <cstring>

#include "emulator/base/cpu_clones.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu::detail {
namespace {

template <RoundingMode Mode>
FP8LAB_INLINE std::uint32_t random_bits_for(const LoopParams& p, std::size_t i) {
    if constexpr (Mode == RoundingMode::Stochastic)
        return stochastic_bits(p.seed, p.first_index + i, p.random_bits);
    else
        return 0;
}

// Round to nearest, ties to even, with the FPU doing the subnormal range: the same
// magnitude codes as rounded_magnitude<NearestEven> for every finite input (the CUDA
// oracle sweeps all 2^32 inputs through these loops), in about a third of the vector
// instructions, with no shift that varies by lane.
//  - At or above the format's least normal: add half an ulp less one, plus the kept
//    mantissa's last bit (ties go to even), truncate, and rebias the exponent.
//  - Below it, |x| + 2^(emin - m + 23) has an ulp of exactly the format's subnormal step,
//    so the float addition rounds |x| to that step, nearest-even, and its mantissa holds
//    the code (up to 2^m, the least normal, when it rounds up to it). A float32
//    subnormal input reads as zero where the FPU is set to (DAZ, which a library built
//    with -ffast-math sets for the whole process): harmless where such inputs round to
//    code 0 anyway, and BF16, whose subnormals are float32's, takes the integer path for
//    all inputs (its least normal is float32's, so the integer path is exact there too).
// Both paths are computed for every lane and one is selected: this file is compiled with
// -fno-trapping-math, or GCC would move the float addition under a branch (it may raise
// an FPU flag, which nothing here reads) and stop vectorising.
struct NearestEvenConstants {
    std::uint32_t shift, half_minus_one, rebias, least_normal_bits, magic_bits;
    float magic;
};
FP8LAB_INLINE NearestEvenConstants nearest_even_constants(const Float32KernelConstants& k) {
    NearestEvenConstants c{};
    c.shift = 23u - k.mantissa_bits;
    c.half_minus_one = (1u << (c.shift - 1u)) - 1u;
    c.rebias = (k.min_field - 1u) << k.mantissa_bits;
    c.least_normal_bits = k.min_field > 1u ? k.min_field << 23 : 0u;
    c.magic_bits = (k.min_field + c.shift) << 23;
    c.magic = std::bit_cast<float>(c.magic_bits);
    return c;
}
FP8LAB_INLINE std::uint32_t nearest_even_magnitude(std::uint32_t a, const NearestEvenConstants& c) {
    const std::uint32_t normal = ((a + c.half_minus_one + ((a >> c.shift) & 1u)) >> c.shift) - c.rebias;
    const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(std::bit_cast<float>(a) + c.magic) - c.magic_bits;
    return a < c.least_normal_bits ? subnormal : normal;
}

// The rounded magnitude (before overflow handling) in `Mode`: nearest-even by the
// FPU, every other mode by the shared integer kernel.
template <RoundingMode Mode>
FP8LAB_INLINE std::uint32_t magnitude_of(std::uint32_t a, std::uint32_t sign, const Float32KernelConstants& k,
                                         const NearestEvenConstants& c, const LoopParams& p, std::size_t i) {
    if constexpr (Mode == RoundingMode::NearestEven)
        return nearest_even_magnitude(a, c);
    else
        return rounded_magnitude<Mode>(a, sign, k, random_bits_for<Mode>(p, i), p.random_bits);
}

template <RoundingMode Mode>
FP8LAB_INLINE std::uint32_t code_of(std::uint32_t u, const Float32KernelConstants& k, const NearestEvenConstants& c,
                                    const LoopParams& p, std::size_t i) {
    return code_of_magnitude<Mode>(magnitude_of<Mode>(u & 0x7FFFFFFFu, u >> 31, k, c, p, i), u, k);
}

template <RoundingMode Mode>
FP8LAB_INLINE void quantize_body(const float* __restrict in, std::uint8_t* __restrict out, std::size_t n,
                                 const LoopParams p) {
    const float scale = p.scale;
    const Float32KernelConstants k = p.k;
    const NearestEvenConstants c = nearest_even_constants(k);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i] * scale);
        out[i] = static_cast<std::uint8_t>(code_of<Mode>(u, k, c, p, i));
    }
}

template <RoundingMode Mode>
FP8LAB_INLINE void round_body(const float* __restrict in, float* __restrict out, std::size_t n,
                              const float* __restrict table, const LoopParams p) {
    const Float32KernelConstants k = p.k;
    const NearestEvenConstants c = nearest_even_constants(k);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i]);
        out[i] = table[code_of<Mode>(u, k, c, p, i)];
    }
}

// What a loop writes of each element's cast: nothing (the tally only), its code, or its
// value (the code decoded, times the block's scale_inv; the codes are not kept).
enum class Write { Nothing, Codes, Values };

// The values of a round-to-nearest-even cast, rounded in float32's own bits: decode(code)
// without the code. In the normal range, add half an ulp less one plus the kept last bit
// and clear the bits below the format's mantissa; in the subnormal range the FPU rounds
// (|x| + 2^k) - 2^k to the format's step (exact: the difference is a multiple of it). Both
// are the float32 of the code's value (nearest_even_magnitude's two paths, rebiased), the
// rest of the work of encoding and decoding is left out. Overflow and Inf take the largest
// value (what a saturating cast writes); a NaN, or an Inf or overflow when the cast does not
// saturate, is counted, and the caller redoes the row through its codes (cast_rows). Needs
// a least normal above float32's (every format with a decode: FP8, FP6, FP4).
// The rounding and tallies of both loops below, on one float32 (U, F: std::uint32_t,
// float) or on the lanes of GCC's vector types (LaneBits, LaneFloats), with the same
// operators: `scaled` is x times its multiplier; `value` gets the rounded value before its
// scale_inv, and each tally the element falls in gets 1 (per lane). Vectors pass by
// reference and __builtin_bit_cast, not std::bit_cast: passed by value, they would take
// an ABI that the clones do not share.
template <class U>
struct NearestEvenTallies {
    U nan{}, inf{}, over{}, flushed{}, subnormal{};
};
template <class U, class F>
FP8LAB_INLINE void nearest_even_value(const F& scaled, const NearestEvenConstants& c, std::uint32_t largest,
                                      NearestEvenTallies<U>& t, F& value) {
    const std::uint32_t keep = ~((1u << c.shift) - 1u), least_normal = c.least_normal_bits;
    const U u = __builtin_bit_cast(U, scaled);
    const U a = u & 0x7FFFFFFFu;
    const U normal = (a + c.half_minus_one + ((a >> c.shift) & 1u)) & keep;
    const U small = __builtin_bit_cast(U, (__builtin_bit_cast(F, a) + (F{} + c.magic)) - (F{} + c.magic));
    const U r = a < least_normal ? small : normal;
    const U past = U(r > largest) & 1u;
    const U v = past != 0u ? U{} + largest : r;
    const U finite = U(a < 0x7F800000u) & 1u;
    t.nan += U(a > 0x7F800000u) & 1u;
    t.inf += U(a == 0x7F800000u) & 1u;
    t.over += finite & past;
    t.flushed += finite & (U(a != 0u) & 1u) & (U(r == 0u) & 1u);
    t.subnormal += finite & (U(r != 0u) & 1u) & (U(r < least_normal) & 1u);
    value = __builtin_bit_cast(F, v | (u & 0x80000000u));
}
FP8LAB_INLINE std::uint32_t largest_value_bits(const LoopParams& p, const NearestEvenConstants& c) {
    return (p.k.max_magnitude + c.rebias) << c.shift;
}

template <bool PerElement>
FP8LAB_INLINE RangeTally nearest_even_values(const float* __restrict in, float* __restrict values, std::size_t n,
                                             const LoopParams& p, const NearestEvenConstants& c,
                                             const float* __restrict multipliers, float scale_inv,
                                             const float* __restrict scale_invs) {
    const float scale = p.scale;
    const std::uint32_t largest = largest_value_bits(p, c);
    NearestEvenTallies<std::uint32_t> t;
    for (std::size_t i = 0; i < n; ++i) {
        float v;
        nearest_even_value(in[i] * (PerElement ? multipliers[i] : scale), c, largest, t, v);
        values[i] = v * (PerElement ? scale_invs[i] : scale_inv);
    }
    return {t.nan, t.inf, t.over, t.flushed, t.subnormal};
}

// nearest_even_values over `blocks` whole blocks of Width elements (NVFP4's 16, MX's 32),
// each with its multiplier and scale_inv, in vectors of kLanes lanes (one AVX2 register;
// the AVX-512 clone uses the same width, the baseline clone splits it), the tallies kept
// per lane across the blocks and summed once at the end. Block by block through
// nearest_even_values, the five tallies' horizontal sums and the constants set up again
// took most of an NVFP4 or MX cast's time; as plain loops over arrays GCC left this
// scalar, and vectors of a whole 32-wide block it moved through memory.
constexpr std::size_t kLanes = 8;
typedef std::uint32_t LaneBits __attribute__((vector_size(4 * kLanes)));
typedef float LaneFloats __attribute__((vector_size(4 * kLanes)));
template <std::size_t Width>
FP8LAB_INLINE RangeTally nearest_even_value_blocks(const float* __restrict in, float* __restrict values,
                                                   std::size_t blocks, const LoopParams& p,
                                                   const NearestEvenConstants& c, const float* __restrict multipliers,
                                                   const float* __restrict scale_invs) {
    static_assert(Width % kLanes == 0);
    const std::uint32_t largest = largest_value_bits(p, c);
    NearestEvenTallies<LaneBits> t;
    for (std::size_t b = 0; b < blocks; ++b) {
        const float scale = multipliers[b], scale_inv = scale_invs[b];
        for (std::size_t k = 0; k < Width; k += kLanes) {
            LaneFloats x, v;
            std::memcpy(&x, in + b * Width + k, sizeof x);
            nearest_even_value(x * scale, c, largest, t, v);
            v *= scale_inv;
            std::memcpy(values + b * Width + k, &v, sizeof v);
        }
    }
    RangeTally total;
    for (std::size_t j = 0; j < kLanes; ++j) {
        total.nan += t.nan[j];
        total.inf += t.inf[j];
        total.overflowed += t.over[j];
        total.flushed += t.flushed[j];
        total.subnormal += t.subnormal[j];
    }
    return total;
}

// The range tally of x * scale, from one rounding per element, with what W says written.
// PerElement: element i's multiplier (and scale_inv) is multipliers[i] (scale_invs[i])
// instead of p.scale (scale_inv): blocks one column wide. Bitwise &, not &&:
// short-circuits are branches, which stop vectorisation.
template <RoundingMode Mode, Write W, bool PerElement = false>
FP8LAB_INLINE RangeTally tally_body(const float* __restrict in, std::uint8_t* __restrict codes,
                                    float* __restrict values, std::size_t n, std::uint32_t first_normal,
                                    const LoopParams p, const float* __restrict multipliers = nullptr,
                                    float scale_inv = 1.0f, const float* __restrict scale_invs = nullptr,
                                    const CodeDecoder* decoder = nullptr) {
    const float scale = p.scale;
    const Float32KernelConstants k = p.k;
    const NearestEvenConstants c = nearest_even_constants(k);
    if constexpr (Mode == RoundingMode::NearestEven && W == Write::Values)
        if (c.least_normal_bits != 0)
            return nearest_even_values<PerElement>(in, values, n, p, c, multipliers, scale_inv, scale_invs);
    CodeDecoder d{};
    if constexpr (W == Write::Values) d = *decoder;
    std::uint32_t nan = 0, inf = 0, over = 0, flushed = 0, subnormal = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i] * (PerElement ? multipliers[i] : scale));
        const std::uint32_t a = u & 0x7FFFFFFFu;
        const std::uint32_t mag = magnitude_of<Mode>(a, u >> 31, k, c, p, i);
        if constexpr (W == Write::Codes) codes[i] = static_cast<std::uint8_t>(code_of_magnitude<Mode>(mag, u, k));
        if constexpr (W == Write::Values)
            values[i] = decoded_value(d, code_of_magnitude<Mode>(mag, u, k)) * (PerElement ? scale_invs[i] : scale_inv);
        const std::uint32_t finite = a < 0x7F800000u;
        nan += a > 0x7F800000u;
        inf += a == 0x7F800000u;
        over += finite & (mag > k.max_magnitude);
        flushed += finite & (a != 0) & (mag == 0);
        subnormal += finite & (mag != 0) & (mag < first_normal);
    }
    return {nan, inf, over, flushed, subnormal};
}

template <RoundingMode Mode>
FP8LAB_INLINE RangeTally range_body(const float* in, std::size_t n, std::uint32_t first_normal, const LoopParams p) {
    return tally_body<Mode, Write::Nothing>(in, nullptr, nullptr, n, first_normal, p);
}

// Blocks of a compile-time width (0: width known at run time), so that short blocks
// (NVFP4's 16, MX's 32) are straight vector code with no loop remainder.
template <RoundingMode Mode, Write W, std::size_t Width>
FP8LAB_INLINE RangeTally row_blocks_body(const float* in, const RowOutput& o, std::size_t n, std::size_t block_cols,
                                         const float* multipliers, std::uint32_t first_normal, const LoopParams p) {
    const std::size_t width = Width ? Width : block_cols;
    RangeTally total;
    std::size_t b = 0, c0 = 0;
    if constexpr (Width != 0 && Mode == RoundingMode::NearestEven && W == Write::Values) {
        const NearestEvenConstants c = nearest_even_constants(p.k);
        if (c.least_normal_bits != 0) {  // every format with a decode (nearest_even_values)
            b = n / Width;
            c0 = b * Width;
            total = nearest_even_value_blocks<Width>(in, o.values, b, p, c, multipliers, o.scale_invs);
        }
    }
    for (; c0 < n; ++b, c0 += width) {
        LoopParams q = p;
        q.scale = multipliers[b];
        q.first_index = p.first_index + c0;
        const std::size_t len = n - c0 < width ? n - c0 : width;
        std::uint8_t* codes = W == Write::Codes ? o.codes + c0 : nullptr;
        float* values = W == Write::Values ? o.values + c0 : nullptr;
        const float scale_inv = W == Write::Values ? o.scale_invs[b] : 1.0f;
        const RangeTally t = len == width ? tally_body<Mode, W>(in + c0, codes, values, width, first_normal, q, nullptr,
                                                                scale_inv, nullptr, o.decoder)
                                          : tally_body<Mode, W>(in + c0, codes, values, len, first_normal, q, nullptr,
                                                                scale_inv, nullptr, o.decoder);
        total.nan += t.nan;
        total.inf += t.inf;
        total.overflowed += t.overflowed;
        total.flushed += t.flushed;
        total.subnormal += t.subnormal;
    }
    return total;
}

template <RoundingMode Mode, Write W>
FP8LAB_INLINE RangeTally row_blocks_write(const float* in, const RowOutput& o, std::size_t n, std::size_t block_cols,
                                          const float* multipliers, std::uint32_t first_normal, const LoopParams& p) {
    // One block over the whole row with the amax wanted: a per-tensor cast whose scale was
    // known before its amax (delayed scaling) reads x from memory once. The row's amax
    // first, in a loop of its own, then the cast from L1 (a row is at most 256 KiB): in one
    // loop the amax's registers pushed the cast's constants onto the stack. Before the
    // one-column case below: a tensor one column wide is one such block, and its amax counts.
    if (o.amax_bits && block_cols >= n) {
        std::uint32_t largest = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t a = std::bit_cast<std::uint32_t>(in[i]) & 0x7FFFFFFFu;
            const std::uint32_t v = a & (0u - std::uint32_t(a <= 0x7F800000u));
            largest = v > largest ? v : largest;
        }
        *o.amax_bits = largest > *o.amax_bits ? largest : *o.amax_bits;
        LoopParams q = p;
        q.scale = multipliers[0];
        const float scale_inv = W == Write::Values ? o.scale_invs[0] : 1.0f;
        return tally_body<Mode, W>(in, o.codes, o.values, n, first_normal, q, nullptr, scale_inv, nullptr, o.decoder);
    }
    // Blocks one column wide (a transposed operand's blocks laid over it): one multiplier
    // per element, in one vector loop rather than a loop per element.
    if (block_cols == 1)
        return tally_body<Mode, W, true>(in, o.codes, o.values, n, first_normal, p, multipliers, 1.0f, o.scale_invs,
                                         o.decoder);
    if (block_cols == 16) return row_blocks_body<Mode, W, 16>(in, o, n, block_cols, multipliers, first_normal, p);
    if (block_cols == 32) return row_blocks_body<Mode, W, 32>(in, o, n, block_cols, multipliers, first_normal, p);
    return row_blocks_body<Mode, W, 0>(in, o, n, block_cols, multipliers, first_normal, p);
}

template <RoundingMode Mode>
FP8LAB_INLINE RangeTally row_blocks_dispatch(const float* in, const RowOutput& o, std::size_t n, std::size_t block_cols,
                                             const float* multipliers, std::uint32_t first_normal,
                                             const LoopParams& p) {
    return o.values ? row_blocks_write<Mode, Write::Values>(in, o, n, block_cols, multipliers, first_normal, p)
                    : row_blocks_write<Mode, Write::Codes>(in, o, n, block_cols, multipliers, first_normal, p);
}

// One entry point per (loop, mode), each compiled per x86-64 level (cpu_clones.hpp).
#define FP8LAB_DEFINE_LOOPS(MODE, SUFFIX)                                                                          \
    FP8LAB_CPU_DISPATCH(void, quantize_##SUFFIX,                                                                   \
                        (const float* in, std::uint8_t* out, std::size_t n, const LoopParams& p), (in, out, n, p), \
                        quantize_body<RoundingMode::MODE>)                                                         \
    FP8LAB_CPU_DISPATCH(void, round_##SUFFIX,                                                                      \
                        (const float* in, float* out, std::size_t n, const float* table, const LoopParams& p),     \
                        (in, out, n, table, p), round_body<RoundingMode::MODE>)                                    \
    FP8LAB_CPU_DISPATCH(RangeTally, range_##SUFFIX,                                                                \
                        (const float* in, std::size_t n, std::uint32_t first_normal, const LoopParams& p),         \
                        (in, n, first_normal, p), range_body<RoundingMode::MODE>)                                  \
    FP8LAB_CPU_DISPATCH(RangeTally, row_blocks_##SUFFIX,                                                           \
                        (const float* in, const RowOutput& o, std::size_t n, std::size_t block_cols,               \
                         const float* multipliers, std::uint32_t first_normal, const LoopParams& p),               \
                        (in, o, n, block_cols, multipliers, first_normal, p), row_blocks_dispatch<RoundingMode::MODE>)

FP8LAB_DEFINE_LOOPS(NearestEven, nearest_even)
FP8LAB_DEFINE_LOOPS(NearestAway, nearest_away)
FP8LAB_DEFINE_LOOPS(TowardZero, toward_zero)
FP8LAB_DEFINE_LOOPS(Up, up)
FP8LAB_DEFINE_LOOPS(Down, down)
FP8LAB_DEFINE_LOOPS(Odd, odd)
FP8LAB_DEFINE_LOOPS(Stochastic, stochastic)
#undef FP8LAB_DEFINE_LOOPS

// The largest |x| of in[c0, c1) as bits, NaN skipped: masked to 0 (a select here stops GCC 12
// vectorising the max).
FP8LAB_INLINE std::uint32_t amax_bits(const float* __restrict in, std::size_t c0, std::size_t c1) {
    std::uint32_t m = 0;
    for (std::size_t i = c0; i < c1; ++i) {
        const std::uint32_t a = std::bit_cast<std::uint32_t>(in[i]) & 0x7FFFFFFFu;
        const std::uint32_t v = a & (0u - std::uint32_t(a <= 0x7F800000u));
        m = v > m ? v : m;
    }
    return m;
}
// Cols: the block width when the compiler should know it (NVFP4's 16, MX's 32: each full
// block one vector's reduction, where a run-time count of 16 left it a loop with a scalar
// tail and took a tenth of an NVFP4 step), 0 for any.
template <std::size_t Cols>
FP8LAB_INLINE void row_block_amax_body(const float* __restrict in, std::size_t n, std::size_t block_cols,
                                       float* __restrict amax) {
    for (std::size_t b = 0, c0 = 0; c0 < n; ++b, c0 += block_cols) {
        const std::size_t c1 = n - c0 < block_cols ? n : c0 + block_cols;
        amax[b] = std::bit_cast<float>(Cols && c1 - c0 == Cols ? amax_bits(in + c0, 0, Cols) : amax_bits(in, c0, c1));
    }
}
FP8LAB_INLINE void row_block_amax_widths(const float* __restrict in, std::size_t n, std::size_t block_cols,
                                         float* __restrict amax) {
    if (block_cols == 16) return row_block_amax_body<16>(in, n, block_cols, amax);
    if (block_cols == 32) return row_block_amax_body<32>(in, n, block_cols, amax);
    row_block_amax_body<0>(in, n, block_cols, amax);
}
FP8LAB_CPU_DISPATCH(void, row_block_amax_loop, (const float* in, std::size_t n, std::size_t block_cols, float* amax),
                    (in, n, block_cols, amax), row_block_amax_widths)

// BF16 is float32's upper half: rounding to nearest even adds 0x7FFF and the kept last bit
// to x's bits and clears the lower half, exact for every |x| below 0x7F7F8000 (the least
// that rounds past BF16's largest finite value), subnormals and -0 included. Inf, NaN and
// those that round past it are copied unchanged and counted, for the caller's table loop.
// (The table loop looked every value up in BF16's 65536-value table, a fifth of a BF16
// training step.)
FP8LAB_INLINE std::size_t round_bf16_nearest_even_body(const float* __restrict in, float* __restrict out,
                                                       std::size_t n) {
    std::uint32_t special = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i]);
        const std::uint32_t past = (u & 0x7FFFFFFFu) >= kBf16Past;
        special += past;
        const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        out[i] = std::bit_cast<float>(past ? u : rounded);
    }
    return special;
}
FP8LAB_CPU_DISPATCH(std::size_t, round_bf16_nearest_even_loop, (const float* in, float* out, std::size_t n),
                    (in, out, n), round_bf16_nearest_even_body)

FP8LAB_INLINE void column_amax_body(const float* __restrict in, std::size_t n, float* __restrict amax) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t a = std::bit_cast<std::uint32_t>(in[i]) & 0x7FFFFFFFu;
        const std::uint32_t v = a & (0u - std::uint32_t(a <= 0x7F800000u));  // NaN skipped, as above
        const std::uint32_t m = std::bit_cast<std::uint32_t>(amax[i]);
        amax[i] = std::bit_cast<float>(v > m ? v : m);
    }
}
FP8LAB_CPU_DISPATCH(void, column_amax_loop, (const float* in, std::size_t n, float* amax), (in, n, amax),
                    column_amax_body)

}  // namespace

#define FP8LAB_DISPATCH(CALL)       \
    switch (mode) {                 \
    case RoundingMode::NearestEven: \
        return CALL(nearest_even);  \
    case RoundingMode::NearestAway: \
        return CALL(nearest_away);  \
    case RoundingMode::TowardZero:  \
        return CALL(toward_zero);   \
    case RoundingMode::Up:          \
        return CALL(up);            \
    case RoundingMode::Down:        \
        return CALL(down);          \
    case RoundingMode::Odd:         \
        return CALL(odd);           \
    case RoundingMode::Stochastic:  \
        return CALL(stochastic);    \
    }

void quantize_loop(RoundingMode mode, const float* in, std::uint8_t* out, std::size_t n, const LoopParams& p) {
#define FP8LAB_CALL(S) quantize_##S(in, out, n, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
}

void round_loop(RoundingMode mode, const float* in, float* out, std::size_t n, const float* value_table,
                const LoopParams& p){
#define FP8LAB_CALL(S) round_##S(in, out, n, value_table, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
}

RangeTally
    range_loop(RoundingMode mode, const float* in, std::size_t n, std::uint32_t first_normal, const LoopParams& p) {
#define FP8LAB_CALL(S) range_##S(in, n, first_normal, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
    return {};
}

RangeTally quantize_row_blocks(RoundingMode mode, const float* in, const RowOutput& out, std::size_t n,
                               std::size_t block_cols, const float* multipliers, std::uint32_t first_normal,
                               const LoopParams& p) {
#define FP8LAB_CALL(S) row_blocks_##S(in, out, n, block_cols, multipliers, first_normal, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
    return {};
}

std::size_t round_bf16_nearest_even(const float* in, float* out, std::size_t n) {
    return round_bf16_nearest_even_loop(in, out, n);
}

void row_block_amax(const float* in, std::size_t n, std::size_t block_cols, float* amax) {
    row_block_amax_loop(in, n, block_cols, amax);
}

void column_amax(const float* in, std::size_t n, float* amax) { column_amax_loop(in, n, amax); }

}  // namespace fp8lab::emu::detail
