// SPDX-License-Identifier: Apache-2.0
// The bit inspector's numbers: fields, classes, neighbours and encodings, from the emulator.
#include "labs/experiments/bit_inspection.hpp"

#include <cmath>
#include <stdexcept>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/experiments/format_text.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {

ValueClass classify(const emu::Format& f, std::uint32_t code, double value) {
    if (std::isnan(value)) return ValueClass::NaN;
    if (std::isinf(value)) return ValueClass::Infinity;
    if (value == 0) return ValueClass::Zero;
    if (std::fabs(value) == f.max_finite) return ValueClass::MaxFinite;
    const std::uint32_t exponent = (code >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
    if (f.has_subnormals && exponent == 0) return ValueClass::Subnormal;
    return ValueClass::Normal;
}

std::string explain(const emu::Format& f, ValueClass c) {
    const std::string name(f.display_name);
    switch (c) {
    case ValueClass::NaN:
        if (f.encoding == emu::Encoding::FiniteNan)
            return name +
                   " has no infinities: only the all-ones exponent with the all-ones mantissa is NaN, "
                   "which frees the other top-binade codes for finite values up to " +
                   number_text(f.max_finite) + ".";
        if (f.encoding == emu::Encoding::ScaleE8M0)
            return "0xFF is the one NaN of the E8M0 scale: a block whose scale is NaN decodes to NaN.";
        if (f.encoding == emu::Encoding::FiniteNanUnsignedZero)
            return name +
                   " (\"FNUZ\": finite, NaN, unsigned zero) spends the code of -0 on its one NaN, 0x80, "
                   "so every other code is finite, up to " +
                   number_text(f.max_finite) + ", and its bias is one more than IEEE's.";
        return "An all-ones exponent with a non-zero mantissa is NaN (IEEE 754 style): every such code.";
    case ValueClass::Infinity:
        return "The all-ones exponent with a zero mantissa is infinity (IEEE 754 style). "
               "Overflow without saturation lands here.";
    case ValueClass::Zero:
        if (!f.has_negative_zero)
            return "All bits zero: zero, the only one. " + name +
                   " has no -0: a negative value that rounds to "
                   "zero becomes +0, because the code -0 would have is NaN.";
        return "Exponent and mantissa all zero: zero. The sign bit gives +0 or -0, which compare equal.";
    case ValueClass::Subnormal:
        return "Exponent field 0: subnormal, no implicit leading 1. The exponent is fixed at 1 - bias, so the "
               "spacing is the smallest value, " +
               number_text(f.min_subnormal) + ", and relative precision falls as the value shrinks.";
    case ValueClass::MaxFinite:
        return "The largest finite value of " + name + ". Saturating conversion clamps anything larger to it.";
    case ValueClass::Normal:
        if (f.encoding == emu::Encoding::ScaleE8M0)
            return "E8M0 holds only a power of two, 2^(e-127): the shared scale of an MX block. "
                   "It has no sign, no mantissa and no zero.";
        return "Normal: value = (-1)^s x 2^(e - bias) x 1.m. Each binade holds 2^" + std::to_string(f.mantissa_bits) +
               " values; the gap doubles from one binade to the next.";
    }
    return {};
}

// Codes are ordered by magnitude within a sign: one step of the magnitude field moves to
// the adjacent value, which is how the neighbours of any code (FP32 too) are found.
NeighbourValue neighbour(const emu::Format& f, std::uint32_t code, double value, bool larger) {
    NeighbourValue n;
    const std::uint32_t sign = code & f.sign_mask();
    const std::uint32_t magnitude = code & ~f.sign_mask();
    std::uint32_t next = 0;
    if (!f.has_sign) {
        if (larger ? magnitude >= f.max_magnitude_code : magnitude == 0) return n;
        next = larger ? magnitude + 1 : magnitude - 1;
    } else if (value == 0) {
        next = (larger ? 0u : f.sign_mask()) | 1u;
    } else {
        const bool away_from_zero = (value > 0) == larger;
        if (away_from_zero && magnitude >= f.max_magnitude_code) return n;
        const std::uint32_t m = away_from_zero ? magnitude + 1 : magnitude - 1;
        next = m == 0 ? 0u : (sign | m);  // reaching zero from either side: +0
    }
    n.exists = true;
    n.code = next;
    n.value = emu::decode(f, next);
    n.gap = std::fabs(n.value - value);
    return n;
}

}  // namespace

std::string value_class_name(ValueClass c) {
    switch (c) {
    case ValueClass::Zero:
        return "zero";
    case ValueClass::Subnormal:
        return "subnormal";
    case ValueClass::Normal:
        return "normal";
    case ValueClass::MaxFinite:
        return "largest finite";
    case ValueClass::Infinity:
        return "infinity";
    case ValueClass::NaN:
        return "NaN";
    }
    return "?";
}

CodeInspection inspect_code(const emu::Format& f, std::uint32_t code) {
    if (f.total_bits < 32 && code >= (std::uint32_t(1) << f.total_bits))
        throw std::invalid_argument("code " + std::to_string(code) + " does not fit " + std::string(f.name) + " (" +
                                    std::to_string(f.total_bits) + " bits)");
    CodeInspection c;
    c.code = code;
    c.total_bits = f.total_bits;
    const CodeFields fields = code_fields(f, code);
    c.sign = fields.sign;
    c.exponent = fields.exponent;
    c.mantissa = fields.mantissa;
    c.sign_bits = fields.sign_bits;
    c.exponent_bits = fields.exponent_bits;
    c.mantissa_bits = fields.mantissa_bits;
    c.value = emu::decode(f, code);
    c.value_class = classify(f, code, c.value);
    c.formula = value_formula(f, code);
    c.explanation = explain(f, c.value_class);
    if (std::isfinite(c.value)) {
        c.below = neighbour(f, code, c.value, false);
        c.above = neighbour(f, code, c.value, true);
    } else if (std::isinf(c.value)) {
        // The finite value an infinity is nearest to: the largest, with its sign.
        const std::uint32_t max_code = (code & f.sign_mask()) | f.max_magnitude_code;
        NeighbourValue& n = c.value > 0 ? c.below : c.above;
        n = {true, max_code, emu::decode(f, max_code), INFINITY};
    }
    return c;
}

std::uint32_t flip_bit(const emu::Format& f, std::uint32_t code, int bit) {
    if (bit < 0 || bit >= f.total_bits)
        throw std::invalid_argument("bit " + std::to_string(bit) + " is outside " + std::string(f.name));
    return code ^ (std::uint32_t(1) << bit);
}

std::vector<FormatEncoding> encode_in_every_format(double x, emu::Saturation saturation) {
    std::vector<FormatEncoding> out;
    for (const emu::Format& f : emu::all_formats()) {
        FormatEncoding e;
        e.format = &f;
        const double target = f.has_sign ? x : std::fabs(x);
        for (emu::RoundingMode mode : emu::all_rounding_modes()) {
            if (mode == emu::RoundingMode::Stochastic) continue;
            ModeEncoding m;
            m.mode = mode;
            m.code = emu::encode(f, x, emu::ConvertOptions{mode, saturation});
            m.value = emu::decode(f, m.code);
            m.abs_error = std::isfinite(m.value) ? std::fabs(m.value - target) : NAN;
            m.rel_error = target != 0 ? m.abs_error / std::fabs(target) : (m.value == 0 ? 0.0 : NAN);
            e.modes.push_back(m);
        }
        const emu::Neighbours n = emu::neighbours(f, target);
        if (!std::isfinite(target) || !std::isfinite(n.below) || !std::isfinite(n.above))
            e.stochastic_up_probability = NAN;
        else if (n.above == n.below)
            e.stochastic_up_probability = 0;
        else
            e.stochastic_up_probability = (target - n.below) / (n.above - n.below);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace fp8lab::labs
