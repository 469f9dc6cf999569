// SPDX-License-Identifier: Apache-2.0
// Fuzzes number parsing as the CLI and the lab parameters read it: any bytes must give a
// value or a refusal, and a value must print and read back to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "app/options/number_text.hpp"
#include "emulator/base/integer_text.hpp"
#include "emulator/base/quoted_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fp8lab;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (options::InputPrecision p : {options::InputPrecision::Float32, options::InputPrecision::Float64}) {
        if (const auto v = options::parse_number(text, p)) {
            const auto back = options::parse_number(options::hex_float(*v), options::InputPrecision::Float64);
            if (!back || (*back != *v && !(*back != *back && *v != *v))) __builtin_trap();  // hex floats are exact
        }
    }
    if (const auto u = emu::parse_unsigned(text)) {
        if (emu::parse_unsigned(std::to_string(*u)) != u) __builtin_trap();
    }
    if (const auto s = emu::parse_signed(text)) {
        if (emu::parse_signed(std::to_string(*s)) != s) __builtin_trap();
    }
    (void)options::parse_code(text);
    // A message quotes a short prefix: 40 bytes, each at most 4 characters escaped, and a count.
    if (emu::quoted_input(text).size() > 4 * 40 + 40) __builtin_trap();
    return 0;
}
