// SPDX-License-Identifier: Apache-2.0
// Recursive-descent JSON reader: RFC 8259 grammar, UTF-8 passed through, \u escapes
// decoded (surrogate pairs joined), numbers kept as written so integers read back exactly.
#include "emulator/io/json_reader.hpp"

#include "emulator/base/quoted_input.hpp"

#include <cctype>
#include <unordered_set>

namespace fp8lab::json {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
  public:
    Parser(std::string_view text, std::string_view source) : s_(text), source_(source) {}

    Value document() {
        Value v = value(0);
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after the JSON value");
        return v;
    }

  private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::runtime_error(std::string(source_) + ":" + std::to_string(line_) + ": " + why);
    }
    void skip_space() {
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '\n')
                ++line_;
            else if (c != ' ' && c != '\t' && c != '\r')
                break;
            ++pos_;
        }
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect(char c, const char* what) {
        if (!eat(c)) fail(std::string("expected ") + what);
    }
    bool literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    Value value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
        skip_space();
        Value v;
        v.line = line_;
        if (pos_ >= s_.size()) fail("unexpected end of the file");
        const char c = s_[pos_];
        if (c == '{') {
            ++pos_;
            v.kind = Value::Kind::Object;
            if (eat('}')) return v;
            std::unordered_set<std::string> keys;  // a duplicate is found in constant time: parsing stays linear
            do {
                skip_space();
                if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a key in quotes");
                std::string key = string_body();
                if (!keys.insert(key).second) fail("the key " + emu::quoted_input(key) + " appears twice");
                expect(':', "':' after a key");
                Value member = value(depth + 1);
                v.members.push_back({std::move(key), std::move(member)});
            } while (eat(','));
            expect('}', "',' or '}' in an object");
        } else if (c == '[') {
            ++pos_;
            v.kind = Value::Kind::Array;
            if (eat(']')) return v;
            do v.items.push_back(value(depth + 1));
            while (eat(','));
            expect(']', "',' or ']' in an array");
        } else if (c == '"') {
            v.kind = Value::Kind::String;
            v.text = string_body();
        } else if (literal("true") || literal("false")) {
            v.kind = Value::Kind::Bool;
            v.boolean = c == 't';
        } else if (literal("null")) {
            v.kind = Value::Kind::Null;
        } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            v.kind = Value::Kind::Number;
            v.text = number();
        } else {
            fail("expected a value");
        }
        return v;
    }

    std::string number() {
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t from = pos_;
            while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
            return pos_ > from;
        };
        if (s_[pos_] == '-') ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '0')
            ++pos_;
        else if (!digits())
            fail("a number needs digits");
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            if (!digits()) fail("a number needs digits after '.'");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (!digits()) fail("a number needs digits in its exponent");
        }
        return std::string(s_.substr(start, pos_ - start));
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("a \\u escape needs four hex digits");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = s_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9')
                v |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f')
                v |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                v |= unsigned(h - 'A' + 10);
            else
                fail("a \\u escape needs four hex digits");
        }
        return v;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string string_body() {
        ++pos_;  // the opening quote
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("a string is not closed");
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("a string is not closed");
            const char e = s_[pos_++];
            switch (e) {
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case '/':
                out += '/';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00) {
                    if (!literal("\\u")) fail("a lone UTF-16 surrogate in a \\u escape");
                    const unsigned low = hex4();
                    if (low < 0xDC00 || low >= 0xE000) fail("a lone UTF-16 surrogate in a \\u escape");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    fail("a lone UTF-16 surrogate in a \\u escape");
                }
                append_utf8(out, cp);
                break;
            }
            default:
                fail(std::string("an unknown escape '\\") + e + "'");
            }
        }
    }

    std::string_view s_, source_;
    std::size_t pos_ = 0;
    int line_ = 1;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
    for (const auto& [k, v] : members)
        if (k == key) return &v;
    return nullptr;
}

std::string_view kind_name(Value::Kind kind) {
    switch (kind) {
    case Value::Kind::Null:
        return "null";
    case Value::Kind::Bool:
        return "true or false";
    case Value::Kind::Number:
        return "a number";
    case Value::Kind::String:
        return "a string";
    case Value::Kind::Array:
        return "an array";
    case Value::Kind::Object:
        return "an object";
    }
    return "?";
}

Value parse(std::string_view text, std::string_view source) { return Parser(text, source).document(); }

}  // namespace fp8lab::json
