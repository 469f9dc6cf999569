// SPDX-License-Identifier: Apache-2.0
// JSON writer (for every layer): commas by nesting state; numbers via to_chars so they read back exactly.
#include "emulator/io/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace fp8lab::json {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    const unsigned b0 = byte(i);
    const auto continuation = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return byte(k) >= lo && byte(k) <= hi;
    };
    if (b0 < 0x80) return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(i + 1) ? 2 : 0;
    if (b0 == 0xE0) return continuation(i + 1, 0xA0) && continuation(i + 2) ? 3 : 0;
    if (b0 == 0xED) return continuation(i + 1, 0x80, 0x9F) && continuation(i + 2) ? 3 : 0;  // no surrogates
    if (b0 >= 0xE1 && b0 <= 0xEF) return continuation(i + 1) && continuation(i + 2) ? 3 : 0;
    if (b0 == 0xF0) return continuation(i + 1, 0x90) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    if (b0 >= 0xF1 && b0 <= 0xF3) return continuation(i + 1) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    if (b0 == 0xF4) return continuation(i + 1, 0x80, 0x8F) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    return 0;
}

}  // namespace

// Valid JSON whatever the bytes: control characters escaped, and a byte that is not part
// of well-formed UTF-8 written as U+FFFD (the replacement character), never copied.
std::string json_escape(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        switch (c) {
        case '"':
            out += "\\\"";
            ++i;
            continue;
        case '\\':
            out += "\\\\";
            ++i;
            continue;
        case '\n':
            out += "\\n";
            ++i;
            continue;
        case '\t':
            out += "\\t";
            ++i;
            continue;
        case '\r':
            out += "\\r";
            ++i;
            continue;
        default:
            break;
        }
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
            ++i;
            continue;
        }
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) {
            out += "\\ufffd";
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
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
    if (std::isnan(v))
        out_ += "\"NaN\"";
    else if (std::isinf(v))
        out_ += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
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
