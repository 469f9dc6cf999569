// SPDX-License-Identifier: Apache-2.0
// The shared float32 cast's constants made from a Format and a saturation mode.
#pragma once

#include <cstdint>

#include "emulator/formats/float32_cast.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu::detail {

inline Float32KernelConstants make_float32_kernel_constants(const Format& f, Saturation s) {
    Float32KernelConstants k{};
    k.mantissa_bits = static_cast<std::uint32_t>(f.mantissa_bits);
    k.min_field = static_cast<std::uint32_t>(f.min_exponent + 127);
    k.max_magnitude = f.max_magnitude_code;
    k.saturate_finite = s == Saturation::Finite;
    k.overflow_magnitude = k.saturate_finite ? f.max_magnitude_code
                           : f.has_inf       ? f.inf_code
                           : f.has_nan       ? f.nan_code
                                             : f.max_magnitude_code;
    k.nan_code = f.nan_code;
    k.sign_shift = static_cast<std::uint32_t>(f.total_bits - 1);
    return k;
}

// Formats the kernel handles: signed, with subnormals, narrower than float32.
inline bool float32_kernel_supports(const Format& f) {
    return f.encoding != Encoding::ScaleE8M0 && f.mantissa_bits < 23;
}

}  // namespace fp8lab::emu::detail
