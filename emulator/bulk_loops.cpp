// Bulk loops, cloned for AVX-512, AVX2 and baseline x86-64 and picked at load time.
#include "emulator/bulk_loops.hpp"

#include <bit>

#include "emulator/stochastic_bits.hpp"

// GCC clones each entry point per CPU level and dispatches through an ifunc; the
// always-inline bodies below are compiled inside each clone, so each gets that ISA.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FP8LAB_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FP8LAB_CPU_CLONES
#endif
#define FP8LAB_INLINE [[gnu::always_inline]] inline

namespace fp8lab::emu::detail {
namespace {

template <RoundingMode Mode>
FP8LAB_INLINE std::uint32_t random_bits_for(const LoopParams& p, std::size_t i) {
    if constexpr (Mode == RoundingMode::Stochastic)
        return stochastic_bits(p.seed, p.first_index + i, p.random_bits);
    else
        return 0;
}

template <RoundingMode Mode>
FP8LAB_INLINE void quantize_body(const float* __restrict in, std::uint8_t* __restrict out,
                                 std::size_t n, const LoopParams p) {
    const float scale = p.scale;
    const Float32KernelConstants k = p.k;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i] * scale);
        out[i] = static_cast<std::uint8_t>(
            encode_float32_bits<Mode>(u, k, random_bits_for<Mode>(p, i), p.random_bits));
    }
}

template <RoundingMode Mode>
FP8LAB_INLINE void round_body(const float* __restrict in, float* __restrict out, std::size_t n,
                              const float* __restrict table, const LoopParams p) {
    const Float32KernelConstants k = p.k;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i]);
        out[i] = table[encode_float32_bits<Mode>(u, k, random_bits_for<Mode>(p, i), p.random_bits)];
    }
}

template <RoundingMode Mode>
FP8LAB_INLINE RangeTally range_body(const float* __restrict in, std::size_t n,
                                    std::uint32_t first_normal, const LoopParams p) {
    const float scale = p.scale;
    const Float32KernelConstants k = p.k;
    std::uint32_t nan = 0, inf = 0, over = 0, flushed = 0, subnormal = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(in[i] * scale);
        const std::uint32_t a = u & 0x7FFFFFFFu;
        const std::uint32_t mag =
            rounded_magnitude<Mode>(a, u >> 31, k, random_bits_for<Mode>(p, i), p.random_bits);
        const bool finite = a < 0x7F800000u;
        nan += a > 0x7F800000u;
        inf += a == 0x7F800000u;
        over += finite && mag > k.max_magnitude;
        flushed += finite && a != 0 && mag == 0;
        subnormal += finite && mag != 0 && mag < first_normal;
    }
    return {nan, inf, over, flushed, subnormal};
}

// One cloned entry point per (loop, mode): target_clones does not apply to templates.
#define FP8LAB_DEFINE_LOOPS(MODE, SUFFIX)                                                     \
    FP8LAB_CPU_CLONES void quantize_##SUFFIX(const float* in, std::uint8_t* out,              \
                                             std::size_t n, const LoopParams& p) {            \
        quantize_body<RoundingMode::MODE>(in, out, n, p);                                     \
    }                                                                                         \
    FP8LAB_CPU_CLONES void round_##SUFFIX(const float* in, float* out, std::size_t n,         \
                                          const float* table, const LoopParams& p) {          \
        round_body<RoundingMode::MODE>(in, out, n, table, p);                                 \
    }                                                                                         \
    FP8LAB_CPU_CLONES RangeTally range_##SUFFIX(const float* in, std::size_t n,               \
                                                std::uint32_t first_normal,                   \
                                                const LoopParams& p) {                        \
        return range_body<RoundingMode::MODE>(in, n, first_normal, p);                        \
    }

FP8LAB_DEFINE_LOOPS(NearestEven, nearest_even)
FP8LAB_DEFINE_LOOPS(NearestAway, nearest_away)
FP8LAB_DEFINE_LOOPS(TowardZero, toward_zero)
FP8LAB_DEFINE_LOOPS(Up, up)
FP8LAB_DEFINE_LOOPS(Down, down)
FP8LAB_DEFINE_LOOPS(Odd, odd)
FP8LAB_DEFINE_LOOPS(Stochastic, stochastic)
#undef FP8LAB_DEFINE_LOOPS

}  // namespace

#define FP8LAB_DISPATCH(CALL)                                   \
    switch (mode) {                                             \
    case RoundingMode::NearestEven: return CALL(nearest_even);  \
    case RoundingMode::NearestAway: return CALL(nearest_away);  \
    case RoundingMode::TowardZero: return CALL(toward_zero);    \
    case RoundingMode::Up: return CALL(up);                     \
    case RoundingMode::Down: return CALL(down);                 \
    case RoundingMode::Odd: return CALL(odd);                   \
    case RoundingMode::Stochastic: return CALL(stochastic);     \
    }

void quantize_loop(RoundingMode mode, const float* in, std::uint8_t* out, std::size_t n,
                   const LoopParams& p) {
#define FP8LAB_CALL(S) quantize_##S(in, out, n, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
}

void round_loop(RoundingMode mode, const float* in, float* out, std::size_t n,
                const float* value_table, const LoopParams& p) {
#define FP8LAB_CALL(S) round_##S(in, out, n, value_table, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
}

RangeTally range_loop(RoundingMode mode, const float* in, std::size_t n, std::uint32_t first_normal,
                      const LoopParams& p) {
#define FP8LAB_CALL(S) range_##S(in, n, first_normal, p)
    FP8LAB_DISPATCH(FP8LAB_CALL)
#undef FP8LAB_CALL
    return {};
}

}  // namespace fp8lab::emu::detail
