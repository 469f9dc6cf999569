// SPDX-License-Identifier: Apache-2.0
// A small streaming JSON writer: objects, arrays, escaped strings, exact numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::json {

class JsonWriter {
  public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(double v);  // shortest round-trip; NaN and Inf as strings
    JsonWriter& value(float v);   // shortest text that reads back as this float32
    JsonWriter& value(std::int64_t v);
    JsonWriter& value(int v) { return value(std::int64_t(v)); }
    JsonWriter& value(std::uint64_t v);  // seeds: the whole uint64 range, never negative
    JsonWriter& value(bool v);
    JsonWriter& null();
    JsonWriter& raw(std::string_view json);  // a value that is JSON already (trailing newline dropped)
    const std::string& text() const { return out_; }

  private:
    void separate();
    JsonWriter& open(char bracket);
    JsonWriter& close(char bracket);
    std::string out_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool after_key_ = false;
};

std::string json_escape(std::string_view s);  // with the quotes

}  // namespace fp8lab::json
