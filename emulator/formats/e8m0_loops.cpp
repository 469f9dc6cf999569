// SPDX-License-Identifier: Apache-2.0
// The E8M0 codes of a span (MX scales), compiled once per rounding mode and CPU level.
#include <bit>

#include "emulator/base/cpu_clones.hpp"
#include "emulator/formats/e8m0_float32.hpp"

namespace fp8lab::emu::detail {
namespace {

// Compiled at the baseline width alone, this loop was a fifth to a quarter of the
// exhaustive CUDA sweep's time (perf); the AVX2 and AVX-512 copies give the same codes (integer arithmetic after
// one float multiply, which every level rounds alike).
template <RoundingMode Mode>
FP8LAB_INLINE void e8m0_codes_body(const float* __restrict in, float scale, std::uint8_t* __restrict out, std::size_t n,
                                   bool finite) {
    for (std::size_t i = 0; i < n; ++i)
        out[i] = std::uint8_t(e8m0_code_in_mode<Mode>(std::bit_cast<std::uint32_t>(in[i] * scale), finite));
}

#define FP8LAB_DEFINE_E8M0_LOOP(MODE, SUFFIX)                                                          \
    FP8LAB_CPU_DISPATCH(void, e8m0_##SUFFIX,                                                           \
                        (const float* in, float scale, std::uint8_t* out, std::size_t n, bool finite), \
                        (in, scale, out, n, finite), e8m0_codes_body<RoundingMode::MODE>)
FP8LAB_DEFINE_E8M0_LOOP(NearestEven, nearest_even)
FP8LAB_DEFINE_E8M0_LOOP(NearestAway, nearest_away)
FP8LAB_DEFINE_E8M0_LOOP(TowardZero, toward_zero)
FP8LAB_DEFINE_E8M0_LOOP(Up, up)
FP8LAB_DEFINE_E8M0_LOOP(Odd, odd)
#undef FP8LAB_DEFINE_E8M0_LOOP

}  // namespace

void e8m0_codes_of_float32(const float* in, float scale, std::uint8_t* out, std::size_t n, RoundingMode mode,
                           Saturation saturation) {
    const bool finite = saturation == Saturation::Finite;
    switch (mode) {
    case RoundingMode::NearestEven:
        return e8m0_nearest_even(in, scale, out, n, finite);
    case RoundingMode::NearestAway:
        return e8m0_nearest_away(in, scale, out, n, finite);
    case RoundingMode::Up:
        return e8m0_up(in, scale, out, n, finite);
    case RoundingMode::Odd:
        return e8m0_odd(in, scale, out, n, finite);
    case RoundingMode::TowardZero:
    case RoundingMode::Down:  // E8M0 encodes |x|: down is toward zero
    case RoundingMode::Stochastic:
        break;
    }
    e8m0_toward_zero(in, scale, out, n, finite);
}

}  // namespace fp8lab::emu::detail
