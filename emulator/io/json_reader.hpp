// SPDX-License-Identifier: Apache-2.0
// A strict JSON reader for the small files fp8lab reads back (experiments): values with
// the line they start on, so every error can name file:line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp8lab::json {

struct Member;

struct Value {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    bool boolean = false;
    std::string text;  // a string's contents, or a number exactly as written
    std::vector<Value> items;
    std::vector<Member> members;  // in file order
    int line = 1;

    const Value* find(std::string_view key) const;
};

struct Member {
    std::string key;
    Value value;
};

std::string_view kind_name(Value::Kind kind);  // "a number", "an object", ...

// Throws std::runtime_error "SOURCE:LINE: reason" for anything that is not one JSON value
// (nesting deeper than 64, duplicate keys and trailing text included).
Value parse(std::string_view text, std::string_view source);

}  // namespace fp8lab::json
