// SPDX-License-Identifier: Apache-2.0
// One table of names per enum: parsing, printing, listing and serialising all read it.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "emulator/base/quoted_input.hpp"

namespace fp8lab {

template <class E>
struct EnumName {
    E value;
    std::string_view name;
};

// Specialised once per enum, next to the enum's declaration (the table itself in a .cpp).
template <class E>
std::span<const EnumName<E>> enum_names();

template <class E>
std::string_view enum_name(E value) {
    for (const EnumName<E>& n : enum_names<E>())
        if (n.value == value) return n.name;
    return "?";
}

template <class E>
std::optional<E> parse_enum(std::string_view text) {
    for (const EnumName<E>& n : enum_names<E>())
        if (n.name == text) return n.value;
    return std::nullopt;
}

// "a, b or c": for help texts and error messages.
template <class E>
std::string enum_choices() {
    const auto names = enum_names<E>();
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) text += i + 1 == names.size() ? " or " : ", ";
        text += names[i].name;
    }
    return text;
}

// Throws std::invalid_argument "FIELD: 'TEXT' is not a, b or c" (a long TEXT is cut).
template <class E>
E parse_enum_or_throw(std::string_view text, std::string_view field) {
    if (const std::optional<E> v = parse_enum<E>(text)) return *v;
    throw std::invalid_argument(std::string(field) + ": " + emu::quoted_input(text) + " is not " + enum_choices<E>());
}

}  // namespace fp8lab
