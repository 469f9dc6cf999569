// SPDX-License-Identifier: Apache-2.0
// Live numbers in lab text: {{E4M3.max}}, {{E5M2.min_subnormal:pow2}}, filled from the emulator.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::labs {

// A placeholder the emulator cannot fill; `line` counts from the start of the text (1).
struct PlaceholderError : std::invalid_argument {
    PlaceholderError(int line, const std::string& message) : std::invalid_argument(message), line(line) {}
    int line;
};

// Values a caller gives by name ({{width}}: a number the code computed), beside the
// emulator's FORMAT.property placeholders.
using PlaceholderValues = std::map<std::string, std::string>;

// The value of one placeholder's inside, e.g. "E4M3.max" -> "448", or a name of `values`.
// Throws PlaceholderError (line 0) naming what is unknown and what is known.
//   FORMAT: any format name (e4m3, E5M2, bf16, e4m3-ieee, ...)
//   property: max, min_normal, min_subnormal, bias, bits, exponent_bits, mantissa_bits,
//             epsilon (2^-mantissa_bits), min_exponent, max_exponent, nan_codes,
//             inf_codes, finite_values (distinct finite values, +0 and -0 as one),
//             binades (log2 of max / smallest positive)
//   ":pow2" after a power-of-two value writes it as 2^k; ":round" rounds to an integer.
//   lab.seeds, lab.warmup_steps, lab.lr_floor: the labs' experiment's (lab_experiment());
//   lab.fast_accumulation_bits: the fraction bits of the CPU's fast-accumulation model.
std::string placeholder_value(std::string_view inside, const PlaceholderValues& values = {});

// The text with every {{...}} filled. Throws PlaceholderError with the line of the first
// unknown placeholder or unclosed "{{".
std::string render_placeholders(std::string_view markdown, const PlaceholderValues& values = {});

// Every problem at once, for validation: (line, message) pairs. `examined`, when given,
// receives how many bytes of the text the walk's searches passed over: linear in the text,
// which the tests check by counting, not by timing.
std::vector<PlaceholderError> placeholder_errors(std::string_view markdown, const PlaceholderValues& values = {},
                                                 std::size_t* examined = nullptr);

// The list of property names, for messages and the GUI's help.
const std::vector<std::string>& placeholder_properties();

}  // namespace fp8lab::labs
