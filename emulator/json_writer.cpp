// JSON writer (for every layer): commas by nesting state; numbers via to_chars so they read back exactly.
#include "emulator/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace fp8lab::json {

std::string json_escape(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

void JsonWriter::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ',';
        first_.back() = false;
    }
}

JsonWriter& JsonWriter::open(char bracket) {
    separate();
    out_ += bracket;
    first_.push_back(true);
    return *this;
}
JsonWriter& JsonWriter::close(char bracket) {
    out_ += bracket;
    first_.pop_back();
    return *this;
}
JsonWriter& JsonWriter::begin_object() { return open('{'); }
JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::begin_array() { return open('['); }
JsonWriter& JsonWriter::end_array() { return close(']'); }
JsonWriter& JsonWriter::key(std::string_view k) {
    separate();
    out_ += json_escape(k) + ':';
    after_key_ = true;
    return *this;
}
JsonWriter& JsonWriter::value(std::string_view s) {
    separate();
    out_ += json_escape(s);
    return *this;
}
JsonWriter& JsonWriter::value(double v) {
    separate();
    if (std::isnan(v)) out_ += "\"NaN\"";
    else if (std::isinf(v)) out_ += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else {
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
        out_.append(buf, r.ptr);
    }
    return *this;
}
JsonWriter& JsonWriter::value(float v) {
    if (!std::isfinite(v)) return value(double(v));
    separate();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    return *this;
}
JsonWriter& JsonWriter::value(std::int64_t v) {
    separate();
    out_ += std::to_string(v);
    return *this;
}
JsonWriter& JsonWriter::value(std::uint64_t v) {
    separate();
    out_ += std::to_string(v);
    return *this;
}
JsonWriter& JsonWriter::value(bool v) {
    separate();
    out_ += v ? "true" : "false";
    return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
    separate();
    while (!json.empty() && json.back() == '\n') json.remove_suffix(1);
    out_ += json;
    return *this;
}
JsonWriter& JsonWriter::null() {
    separate();
    out_ += "null";
    return *this;
}

}  // namespace fp8lab::json
