// SPDX-License-Identifier: Apache-2.0
// A step's parameter schema (choice, integer range, float range, toggle) and values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"

namespace fp8lab::labs {

enum class ParameterKind { Choice, Integer, Float, Toggle };

using ParameterValue = std::variant<std::string, std::int64_t, double, bool>;

struct ParameterSpec {
    std::string name;   // identifier used by --set and saved settings
    std::string label;  // what the GUI shows: from the step's text
    std::string help;   // from the step's text
    ParameterKind kind = ParameterKind::Choice;
    std::vector<std::string> choices;       // Choice
    std::int64_t int_min = 0, int_max = 0;  // Integer
    double float_min = 0, float_max = 0;    // Float
    bool log_slider = false;                // Float: a slider on a log scale
    ParameterValue default_value;
};

// A choice parameter's values from an enum's one name table.
template <class E>
std::vector<std::string> enum_choice_names() {
    std::vector<std::string> names;
    for (const EnumName<E>& n : enum_names<E>()) names.emplace_back(n.name);
    return names;
}
// A subset of them, in the order given, for a setting that allows only these values.
template <class E>
std::vector<std::string> enum_choice_names(std::initializer_list<E> values) {
    std::vector<std::string> names;
    for (E v : values) names.emplace_back(enum_name(v));
    return names;
}

// A choice parameter's values: these formats' names, from the format table.
std::vector<std::string> format_choice_names(std::initializer_list<const emu::Format*> formats);
// The element formats of every recipe: E4M3, E5M2, E3M2, E2M3, E2M1.
std::vector<std::string> element_format_names();

// A parameter as the code defines it: name, values and default. Its label and help are
// words of the step's text (the "~~~parameters" block), filled in when the catalog loads.
ParameterSpec choice(std::string name, std::vector<std::string> choices, std::string default_choice);
ParameterSpec integer(std::string name, std::int64_t min, std::int64_t max, std::int64_t default_value);
ParameterSpec real(std::string name, double min, double max, double default_value, bool log_slider);
ParameterSpec toggle(std::string name, bool default_value);

// A value that a parameter refused: the message names the parameter and what it accepts.
struct ParameterError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

std::string accepted_values(const ParameterSpec& spec);  // "one of e4m3, e5m2", "an integer 1 to 64"
std::string value_text(const ParameterValue& value);

// Parses text for one parameter (hex 0x.. accepted for integers; true/false/on/off/1/0
// for toggles); throws ParameterError.
ParameterValue parse_value(const ParameterSpec& spec, const std::string& text);
// Throws ParameterError when the value has the wrong type or is out of range.
void check_value(const ParameterSpec& spec, const ParameterValue& value);

// The values a step runs with: every parameter of its schema, defaults unless set.
class Parameters {
  public:
    Parameters() = default;
    explicit Parameters(const std::vector<ParameterSpec>& schema);

    // Throws ParameterError for an unknown name or a refused value.
    void set(const std::string& name, const ParameterValue& value);
    void set_text(const std::string& name, const std::string& text);

    const std::string& choice(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    double real(const std::string& name) const;
    bool toggle(const std::string& name) const;

    const std::map<std::string, ParameterValue>& values() const { return values_; }
    const std::vector<ParameterSpec>& schema() const { return schema_; }

  private:
    const ParameterSpec& spec(const std::string& name) const;
    const ParameterValue& get(const std::string& name) const;
    std::vector<ParameterSpec> schema_;
    std::map<std::string, ParameterValue> values_;
};

}  // namespace fp8lab::labs
