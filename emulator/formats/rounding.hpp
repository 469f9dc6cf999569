// SPDX-License-Identifier: Apache-2.0
// Rounding modes, saturation modes and the options every conversion takes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "emulator/base/enum_names.hpp"
#include "emulator/formats/rounding_mode.hpp"

namespace fp8lab::emu {

struct ConvertOptions {
    RoundingMode rounding = RoundingMode::NearestEven;
    Saturation saturation = Saturation::Finite;
    // Stochastic rounding only: the seed of the counter-based generator and the number n
    // of random bits compared with the discarded fraction (docs/numerics.md §3).
    std::uint64_t seed = 0;
    int random_bits = 32;
};

inline constexpr int kMaxRandomBits = 32;

std::span<const RoundingMode> all_rounding_modes();
std::string_view rounding_mode_name(RoundingMode mode);                  // "nearest-even", ...
std::optional<RoundingMode> parse_rounding_mode(std::string_view name);  // any case
std::string rounding_mode_names_list();
std::string_view saturation_name(Saturation saturation);  // "finite" / "none"
std::optional<Saturation> parse_saturation(std::string_view name);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::RoundingMode>> enum_names<emu::RoundingMode>();
template <>
std::span<const EnumName<emu::Saturation>> enum_names<emu::Saturation>();
}  // namespace fp8lab
