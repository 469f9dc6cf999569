// Names of rounding and saturation modes, as the CLI and the labs spell them.
#include "emulator/rounding.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace fp8lab::emu {
namespace {

constexpr std::array<RoundingMode, 7> kModes = {
    RoundingMode::NearestEven, RoundingMode::NearestAway, RoundingMode::TowardZero,
    RoundingMode::Up,          RoundingMode::Down,        RoundingMode::Odd,
    RoundingMode::Stochastic};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::span<const RoundingMode> all_rounding_modes() { return kModes; }

std::string_view rounding_mode_name(RoundingMode mode) {
    switch (mode) {
    case RoundingMode::NearestEven: return "nearest-even";
    case RoundingMode::NearestAway: return "nearest-away";
    case RoundingMode::TowardZero: return "toward-zero";
    case RoundingMode::Up: return "up";
    case RoundingMode::Down: return "down";
    case RoundingMode::Odd: return "odd";
    case RoundingMode::Stochastic: return "stochastic";
    }
    return "?";
}

std::optional<RoundingMode> parse_rounding_mode(std::string_view name) {
    const std::string wanted = lower(name);
    for (RoundingMode m : kModes)
        if (rounding_mode_name(m) == wanted) return m;
    return std::nullopt;
}

std::string rounding_mode_names_list() {
    std::string out;
    for (RoundingMode m : kModes) {
        if (!out.empty()) out += ", ";
        out += rounding_mode_name(m);
    }
    return out;
}

std::string_view saturation_name(Saturation saturation) {
    return saturation == Saturation::Finite ? "finite" : "none";
}

std::optional<Saturation> parse_saturation(std::string_view name) {
    const std::string wanted = lower(name);
    if (wanted == "finite") return Saturation::Finite;
    if (wanted == "none") return Saturation::None;
    return std::nullopt;
}

}  // namespace fp8lab::emu
