// SPDX-License-Identifier: Apache-2.0
// Parameter schema helpers, parsing with messages that name the parameter, and lookups.
#include "labs/framework/parameters.hpp"

#include <charconv>

#include "emulator/base/integer_text.hpp"
#include "emulator/base/quoted_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fp8lab::labs {
namespace {

using emu::quoted_input;
std::string quoted(const std::string& text) { return quoted_input(text); }

ParameterSpec base(std::string name, ParameterKind kind) {
    ParameterSpec s;
    s.name = std::move(name);
    s.kind = kind;
    return s;
}

}  // namespace

std::vector<std::string> format_choice_names(std::initializer_list<const emu::Format*> formats) {
    std::vector<std::string> names;
    for (const emu::Format* f : formats) names.emplace_back(f->name);
    return names;
}

std::vector<std::string> element_format_names() {
    return format_choice_names({&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()});
}

ParameterSpec choice(std::string name, std::vector<std::string> choices, std::string default_choice) {
    ParameterSpec s = base(std::move(name), ParameterKind::Choice);
    s.choices = std::move(choices);
    s.default_value = std::move(default_choice);
    return s;
}

ParameterSpec integer(std::string name, std::int64_t min, std::int64_t max, std::int64_t default_value) {
    ParameterSpec s = base(std::move(name), ParameterKind::Integer);
    s.int_min = min;
    s.int_max = max;
    s.default_value = default_value;
    return s;
}

ParameterSpec real(std::string name, double min, double max, double default_value, bool log_slider) {
    ParameterSpec s = base(std::move(name), ParameterKind::Float);
    s.float_min = min;
    s.float_max = max;
    s.log_slider = log_slider;
    s.default_value = default_value;
    return s;
}

ParameterSpec toggle(std::string name, bool default_value) {
    ParameterSpec s = base(std::move(name), ParameterKind::Toggle);
    s.default_value = default_value;
    return s;
}

std::string value_text(const ParameterValue& value) {
    struct Visitor {
        std::string operator()(const std::string& s) const { return s; }
        std::string operator()(std::int64_t v) const { return std::to_string(v); }
        // The shortest text that reads back as the same double: a step link or a `run`
        // header reopens exactly this state (ten digits did not).
        std::string operator()(double v) const {
            char buf[32];
            const auto r = std::to_chars(buf, buf + sizeof buf, v);
            return std::string(buf, r.ptr);
        }
        std::string operator()(bool v) const { return v ? "true" : "false"; }
    };
    return std::visit(Visitor{}, value);
}

std::string accepted_values(const ParameterSpec& spec) {
    switch (spec.kind) {
    case ParameterKind::Choice: {
        std::string list;
        for (const std::string& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        return "one of " + list;
    }
    case ParameterKind::Integer:
        return "an integer from " + std::to_string(spec.int_min) + " to " + std::to_string(spec.int_max);
    case ParameterKind::Float:
        return "a number from " + value_text(spec.float_min) + " to " + value_text(spec.float_max);
    case ParameterKind::Toggle:
        return "true or false";
    }
    return "";
}

namespace {

[[noreturn]] void refuse(const ParameterSpec& spec, const std::string& what) {
    throw ParameterError("parameter " + emu::quoted_input(spec.name) + ": " + what + "; it accepts " +
                         accepted_values(spec));
}

}  // namespace

ParameterValue parse_value(const ParameterSpec& spec, const std::string& text) {
    ParameterValue value;
    switch (spec.kind) {
    case ParameterKind::Choice:
        value = text;
        break;
    case ParameterKind::Integer: {
        const std::optional<std::int64_t> v = emu::parse_signed(text);
        if (!v) refuse(spec, quoted(text) + " is not an integer (decimal, or hex as 0x...)");
        value = *v;
        break;
    }
    case ParameterKind::Float: {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v)) refuse(spec, quoted(text) + " is not a finite number");
        value = v;
        break;
    }
    case ParameterKind::Toggle:
        if (text == "true" || text == "on" || text == "1")
            value = true;
        else if (text == "false" || text == "off" || text == "0")
            value = false;
        else
            refuse(spec, quoted(text) + " is not a toggle value");
        break;
    }
    check_value(spec, value);
    return value;
}

void check_value(const ParameterSpec& spec, const ParameterValue& value) {
    switch (spec.kind) {
    case ParameterKind::Choice: {
        const auto* s = std::get_if<std::string>(&value);
        if (!s) refuse(spec, "the value is not a choice");
        if (std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
            refuse(spec, quoted(*s) + " is not a choice");
        return;
    }
    case ParameterKind::Integer: {
        const auto* v = std::get_if<std::int64_t>(&value);
        if (!v) refuse(spec, "the value is not an integer");
        if (*v < spec.int_min || *v > spec.int_max) refuse(spec, std::to_string(*v) + " is out of range");
        return;
    }
    case ParameterKind::Float: {
        const auto* v = std::get_if<double>(&value);
        if (!v) refuse(spec, "the value is not a number");
        if (!(*v >= spec.float_min && *v <= spec.float_max)) refuse(spec, value_text(*v) + " is out of range");
        return;
    }
    case ParameterKind::Toggle:
        if (!std::holds_alternative<bool>(value)) refuse(spec, "the value is not a toggle");
        return;
    }
}

Parameters::Parameters(const std::vector<ParameterSpec>& schema) : schema_(schema) {
    for (const ParameterSpec& s : schema_) {
        check_value(s, s.default_value);  // a schema whose default is refused is a bug
        values_[s.name] = s.default_value;
    }
}

const ParameterSpec& Parameters::spec(const std::string& name) const {
    for (const ParameterSpec& s : schema_)
        if (s.name == name) return s;
    std::string known;
    for (const ParameterSpec& s : schema_) known += (known.empty() ? "" : ", ") + s.name;
    throw ParameterError("unknown parameter " + quoted(name) + "; this step has " +
                         (known.empty() ? std::string("no parameters") : known));
}

void Parameters::set(const std::string& name, const ParameterValue& value) {
    check_value(spec(name), value);
    values_[name] = value;
}

void Parameters::set_text(const std::string& name, const std::string& text) {
    values_[name] = parse_value(spec(name), text);
}

const ParameterValue& Parameters::get(const std::string& name) const {
    spec(name);  // names the parameter when the step asks for one it did not declare
    return values_.at(name);
}

const std::string& Parameters::choice(const std::string& name) const { return std::get<std::string>(get(name)); }
std::int64_t Parameters::integer(const std::string& name) const { return std::get<std::int64_t>(get(name)); }
double Parameters::real(const std::string& name) const { return std::get<double>(get(name)); }
bool Parameters::toggle(const std::string& name) const { return std::get<bool>(get(name)); }

}  // namespace fp8lab::labs
