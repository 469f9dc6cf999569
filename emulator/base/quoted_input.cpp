// SPDX-License-Identifier: Apache-2.0
// Quoting untrusted text for messages (quoted_input.hpp).
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::emu {

std::string quoted_input(std::string_view text, std::size_t max_bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'";
    for (unsigned char c : text.substr(0, max_bytes)) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    out += text.size() > max_bytes ? "'... (" + std::to_string(text.size()) + " bytes)" : "'";
    return out;
}

}  // namespace fp8lab::emu
