// SPDX-License-Identifier: Apache-2.0
// One thread's share of a block-scaled cast, for the GPU's emulated recipes (MX, NVFP4,
// FP6/FP4 elements, stochastic rounding): the block scale rules and the element cast, in
// C++17 host-and-device code. The kernels run it on the device; the unit tests run the
// same functions on the host against the emulator, so the arithmetic is checked without
// a GPU and the GPU tests need only check where the kernels read and write.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "emulator/formats/float32_cast.hpp"
#include "emulator/scaling/hadamard16.hpp"
#include "emulator/base/stochastic_bits.hpp"

#ifdef __CUDACC__
#include <cuda_fp8.h>
#define FP8LAB_HD __host__ __device__
#else
#define FP8LAB_HD
#endif

namespace fp8lab::gpu::vq {

// How a vector of elements gets its scale. Bf16Only: no quantisation (BF16 rounding, for
// BF16 operands and the BF16 edge layers); Unit: scale 1 (scaling off); PerTensor: the
// tensor's scale from the device (delayed or current); the rest per block as the emulator.
enum class ScaleRule : int { Bf16Only, Unit, PerTensor, MxFloor, MxRceil, Blockwise, Nvfp4 };

struct Params {
    ScaleRule rule = ScaleRule::Unit;
    emu::detail::Float32KernelConstants element{};  // the element format's cast
    emu::detail::Float32KernelConstants e4m3{};     // NVFP4's block scale cast (nearest, finite)
    int element_emax = 0;                           // MX floor: the element format's max exponent
    std::uint32_t element_first_normal = 0;         // the magnitude code of its least normal (0: no subnormals)
    std::uint32_t element_past_bits = 0x7F800000u;  // the least |x| (float32 bits) nearest-even rounds past its largest
    float element_inv_max = 1.0f;                   // MX RCEIL: 1 / max finite, in float32
    float element_max = 448.0f;                     // blockwise: max finite of E4M3
    float min_amax = 0.0f;                          // blockwise: the amax is at least this (torchao's 1e-12)
    bool stochastic = false;                        // stochastic rounding of the elements
    // E4M3 or E5M2 elements rounded to nearest, saturating to the largest finite value:
    // the device's own conversion instruction gives the same codes (the GPU tests check it
    // bit for bit) in one instruction instead of the thirty of the generic cast, which
    // bounded the emulated recipes' casts by instructions.
    enum class Hardware : int { None, E4M3, E5M2 } hardware = Hardware::None;
    // E2M1 elements rounded to nearest, saturating: seven comparisons with the midpoints
    // between its eight magnitudes give the generic cast's codes (an exhaustive test
    // checks every float32) in half its instructions; Hopper has no E2M1 conversion.
    bool e2m1_by_midpoints = false;
    std::uint64_t seed = 0;  // its counter's seed
    int random_bits = 32;
    bool hadamard = false;  // NVFP4 wgrad: the random Hadamard transform
    std::uint64_t hadamard_seed = 0;
};

FP8LAB_HD inline std::uint32_t float_bits(float x) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
#endif
}
FP8LAB_HD inline float bits_float(std::uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float x;
    std::memcpy(&x, &u, 4);
    return x;
#endif
}
FP8LAB_HD inline bool is_finite(float x) { return (float_bits(x) & 0x7F800000u) != 0x7F800000u; }
FP8LAB_HD inline float finite_min(float a, float b) { return a < b ? a : b; }  // a, b not NaN

// 2^e for -149 <= e <= 127, exactly (subnormal below -126).
FP8LAB_HD inline float power_of_two(int e) {
    return e >= -126 ? bits_float(std::uint32_t(e + 127) << 23) : bits_float(1u << (e + 149));
}

// floor(log2 x) of a positive finite float from its bits (std::ilogb, subnormals included).
FP8LAB_HD inline int floor_log2(float x) {
    const std::uint32_t u = float_bits(x);
    const int field = int(u >> 23);
    if (field) return field - 127;
    int top = 22;
    while (top > 0 && !((u >> top) & 1u)) --top;
    return top - 149;
}

// The E8M0 code of x >= 0 rounded up (RCEIL), saturating at 254 (2^127); 0 for x <= 2^-127.
FP8LAB_HD inline int e8m0_ceil_code(float x) {
    if (x == 0.0f) return 0;
    const std::uint32_t u = float_bits(x);
    const std::uint32_t mantissa = u & 0x7FFFFFu;
    int e;
    if (u >> 23)
        e = int(u >> 23) - 127 + (mantissa ? 1 : 0);
    else
        e = floor_log2(x) + ((mantissa & (mantissa - 1u)) ? 1 : 0);  // a subnormal power of two is exact
    e += 127;
    return e < 0 ? 0 : e > 254 ? 254 : e;
}

struct BlockScale {
    float multiplier = 1.0f;  // elements become cvt(x * multiplier)
    float part = 1.0f;        // the factor folded into the BF16 operand (exact there)
    float scale_inv = 1.0f;   // the emulator's block_scale_inv (part times the tensor's factor)
    std::uint8_t code = 0;    // the scale's own code (E8M0 or E4M3), where it has one
};

// NVFP4's float32 tensor scale S_enc = 448 * 6 / amax, as emu::quantize_nvfp4: 1 for an
// amax of 0, Inf or NaN, clamped to FLT_MAX.
FP8LAB_HD inline float nvfp4_s_enc(float tensor_amax) {
    if (tensor_amax == 0.0f || !is_finite(tensor_amax)) return 1.0f;
    const float s = finite_min(448.0f * 6.0f / tensor_amax, 3.402823466e38f);
    return s == 0.0f ? 1.0f : s;
}

// The scale of one block from its amax (NaN skipped, Inf kept). `tensor_scale`: the
// per-tensor scale (PerTensor) or S_enc (Nvfp4). e4m3_values: E4M3's decode table.
FP8LAB_HD inline BlockScale block_scale(const Params& p, float amax, float tensor_scale, const float* e4m3_values) {
    BlockScale s;
    switch (p.rule) {
    case ScaleRule::Bf16Only:
    case ScaleRule::Unit:
        return s;
    case ScaleRule::PerTensor:
        s.multiplier = tensor_scale;
        s.scale_inv = 1.0f / tensor_scale;
        return s;
    case ScaleRule::MxFloor:
    case ScaleRule::MxRceil: {
        if (!is_finite(amax)) {  // OCP MX: an Inf in the block makes the block NaN
            s.part = s.scale_inv = bits_float(0x7FC00000u);
            s.code = 0xFF;
            return s;
        }
        int code;
        if (p.rule == ScaleRule::MxFloor) {
            const int unbiased = amax == 0.0f ? -127 : floor_log2(amax) - p.element_emax;
            code = unbiased + 127 < 0 ? 0 : unbiased + 127 > 254 ? 254 : unbiased + 127;
        } else {
            code = e8m0_ceil_code(amax * p.element_inv_max);
        }
        s.multiplier = power_of_two(127 - code);
        s.part = s.scale_inv = power_of_two(code - 127);
        s.code = std::uint8_t(code);
        return s;
    }
    case ScaleRule::Blockwise: {                   // emu::current_scale(max(amax, min_amax), E4M3, power of two)
        if (amax < p.min_amax) amax = p.min_amax;  // NaN stays NaN
        if (amax == 0.0f || !is_finite(amax)) return s;
        float scale = p.element_max / amax;
        if (!is_finite(scale)) scale = 3.402823466e38f;
        scale = bits_float(float_bits(scale) & 0xFF800000u);
        s.multiplier = scale;
        s.part = s.scale_inv = 1.0f / scale;
        return s;
    }
    case ScaleRule::Nvfp4: {
        // d = cvt_e4m3(amax * (S_enc * (1/6))); multiplier = min(1 / (d * (1/S_enc)), FLT_MAX)
        const float s_enc = tensor_scale;
        const float s_enc_inv = 1.0f / s_enc;
        const std::uint32_t d_code = emu::detail::encode_float32_bits<emu::RoundingMode::NearestEven>(
            float_bits(amax * (s_enc * (1.0f / 6.0f))), p.e4m3, 0, 32);
        const float d = e4m3_values[d_code];
        s.scale_inv = d * s_enc_inv;
        s.multiplier = finite_min(1.0f / s.scale_inv, 3.402823466e38f);  // 1/0 = Inf -> FLT_MAX
        s.part = d;
        s.code = std::uint8_t(d_code);
        return s;
    }
    }
    return s;
}

// NVFP4's random Hadamard transform of 16 values: the emulator's own (emulator/scaling/hadamard16.hpp).
FP8LAB_HD inline void hadamard16(float (&v)[16], std::uint64_t seed) {
    float sign[16] = {};
    emu::hadamard16_signs(seed, sign);
    emu::hadamard16(v, sign);
}

// E2M1's code of x by its midpoints, nearest-even and saturating (Inf to 6): each
// midpoint between two magnitudes belongs to the even code of the pair, so the test is
// `>` where the lower code is even and `>=` where it is odd. NaN becomes nan_code. The
// magnitude is compared as bits (a non-negative float32's bits are in its values' order;
// the midpoints 0.25, 0.75, 1.25, 1.75, 2.5, 3.5 and 5 below), with no branch and no
// float compare, so that a host loop of it vectorises (the exhaustive test's): the float
// compares' NaN check had kept GCC's loop scalar.
FP8LAB_HD inline std::uint32_t e2m1_nearest_code(std::uint32_t u, std::uint32_t nan_code) {
    const std::uint32_t a = u & 0x7FFFFFFFu;
    const std::uint32_t magnitude = std::uint32_t(a > 0x3E800000u) + std::uint32_t(a >= 0x3F400000u) +
                                    std::uint32_t(a > 0x3FA00000u) + std::uint32_t(a >= 0x3FE00000u) +
                                    std::uint32_t(a > 0x40200000u) + std::uint32_t(a >= 0x40600000u) +
                                    std::uint32_t(a > 0x40A00000u);
    return a > 0x7F800000u ? nan_code : ((u >> 31) << 3) | magnitude;
}

// How an element becomes its code, decided once per cast: a kernel picks the kind
// outside its element loop (with_element_cast), because a runtime choice inside the
// unrolled loop was compiled into every path run predicated for every element.
enum class ElementCast : int { HardwareE4M3, HardwareE5M2, E2M1Midpoints, Nearest, Stochastic };

FP8LAB_HD inline ElementCast element_cast_of(const Params& p) {
    if (p.hardware == Params::Hardware::E4M3) return ElementCast::HardwareE4M3;
    if (p.hardware == Params::Hardware::E5M2) return ElementCast::HardwareE5M2;
    if (p.e2m1_by_midpoints) return ElementCast::E2M1Midpoints;
    return p.stochastic ? ElementCast::Stochastic : ElementCast::Nearest;
}

// One element's code: cvt(x * multiplier) with the element format's rounding; `index` is
// the element's index in the tensor the emulator quantises (its stochastic counter).
// The host has no FP8 conversion instruction: there the hardware kinds run the generic
// nearest-even cast, whose codes the instruction's equal.
template <ElementCast C>
FP8LAB_HD inline std::uint32_t cast_element_as(const Params& p, float x, float multiplier, std::uint64_t index) {
#ifdef __CUDA_ARCH__
    if constexpr (C == ElementCast::HardwareE4M3 || C == ElementCast::HardwareE5M2)
        return __nv_cvt_float_to_fp8(__fmul_rn(x, multiplier), __NV_SATFINITE,
                                     C == ElementCast::HardwareE4M3 ? __NV_E4M3 : __NV_E5M2);
    const std::uint32_t u = __float_as_uint(__fmul_rn(x, multiplier));
#else
    const std::uint32_t u = float_bits(x * multiplier);
#endif
    if constexpr (C == ElementCast::E2M1Midpoints) return e2m1_nearest_code(u, p.element.nan_code);
    if constexpr (C == ElementCast::Stochastic)
        return emu::detail::encode_float32_bits<emu::RoundingMode::Stochastic>(
            u, p.element, emu::stochastic_bits(p.seed, index, p.random_bits), p.random_bits);
    return emu::detail::encode_float32_bits<emu::RoundingMode::NearestEven>(u, p.element, 0, p.random_bits);
}

// Calls f(std::integral_constant<ElementCast, kind>{}) for the cast's kind.
template <class F>
FP8LAB_HD inline void with_element_cast(const Params& p, F&& f) {
    switch (element_cast_of(p)) {
    case ElementCast::HardwareE4M3:
        return f(std::integral_constant<ElementCast, ElementCast::HardwareE4M3>{});
    case ElementCast::HardwareE5M2:
        return f(std::integral_constant<ElementCast, ElementCast::HardwareE5M2>{});
    case ElementCast::E2M1Midpoints:
        return f(std::integral_constant<ElementCast, ElementCast::E2M1Midpoints>{});
    case ElementCast::Nearest:
        return f(std::integral_constant<ElementCast, ElementCast::Nearest>{});
    case ElementCast::Stochastic:
        return f(std::integral_constant<ElementCast, ElementCast::Stochastic>{});
    }
}

// The same with the kind chosen per call (the host tests).
FP8LAB_HD inline std::uint32_t cast_element(const Params& p, float x, float multiplier, std::uint64_t index) {
    std::uint32_t code = 0;
    with_element_cast(p, [&](auto kind) { code = cast_element_as<decltype(kind)::value>(p, x, multiplier, index); });
    return code;
}

}  // namespace fp8lab::gpu::vq
