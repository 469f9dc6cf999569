// SPDX-License-Identifier: Apache-2.0
// Names of rounding and saturation modes, as the CLI and the labs spell them.
#include "emulator/formats/rounding.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace fp8lab::emu {
namespace {

constexpr std::array<RoundingMode, 7> kModes = {
    RoundingMode::NearestEven, RoundingMode::NearestAway, RoundingMode::TowardZero, RoundingMode::Up,
    RoundingMode::Down,        RoundingMode::Odd,         RoundingMode::Stochastic};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::span<const RoundingMode> all_rounding_modes() { return kModes; }

std::string_view rounding_mode_name(RoundingMode mode) { return enum_name(mode); }

std::optional<RoundingMode> parse_rounding_mode(std::string_view name) { return parse_enum<RoundingMode>(lower(name)); }

std::string rounding_mode_names_list() {
    std::string out;
    for (const EnumName<RoundingMode>& n : enum_names<RoundingMode>()) {
        if (!out.empty()) out += ", ";
        out += n.name;
    }
    return out;
}

std::string_view saturation_name(Saturation saturation) { return enum_name(saturation); }

std::optional<Saturation> parse_saturation(std::string_view name) { return parse_enum<Saturation>(lower(name)); }

}  // namespace fp8lab::emu

namespace fp8lab {

template <>
std::span<const EnumName<emu::RoundingMode>> enum_names<emu::RoundingMode>() {
    using emu::RoundingMode;
    static constexpr EnumName<RoundingMode> table[] = {{RoundingMode::NearestEven, "nearest-even"},
                                                       {RoundingMode::NearestAway, "nearest-away"},
                                                       {RoundingMode::TowardZero, "toward-zero"},
                                                       {RoundingMode::Up, "up"},
                                                       {RoundingMode::Down, "down"},
                                                       {RoundingMode::Odd, "odd"},
                                                       {RoundingMode::Stochastic, "stochastic"}};
    return table;
}

template <>
std::span<const EnumName<emu::Saturation>> enum_names<emu::Saturation>() {
    static constexpr EnumName<emu::Saturation> table[] = {{emu::Saturation::Finite, "finite"},
                                                          {emu::Saturation::None, "none"}};
    return table;
}

}  // namespace fp8lab
