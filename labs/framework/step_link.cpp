// SPDX-License-Identifier: Apache-2.0
// Step links: percent-encoded query values, and the nearest valid state for a bad link.
#include "labs/framework/step_link.hpp"

#include <cstdio>

#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {
namespace {

constexpr std::string_view kScheme = "fp8lab://";

bool unreserved(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

std::string percent_encode(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (unreserved(c)) {
            out += c;
            continue;
        }
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", unsigned(static_cast<unsigned char>(c)));
        out += hex;
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// False for a malformed escape ("%G1", "%4").
bool percent_decode(std::string_view text, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size()) return false;
        const int high = hex_digit(text[i + 1]), low = hex_digit(text[i + 2]);
        if (high < 0 || low < 0) return false;
        out += char(high * 16 + low);
        i += 2;
    }
    return true;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

}  // namespace

std::string make_step_link(const Lab& lab, const Step& step, const Parameters& parameters, Backend backend) {
    std::string link = std::string(kScheme) + percent_encode(lab.id) + "/" + percent_encode(step.logic.id);
    char separator = '?';
    for (const ParameterSpec& spec : parameters.schema()) {
        link +=
            separator + percent_encode(spec.name) + "=" + percent_encode(value_text(parameters.values().at(spec.name)));
        separator = '&';
    }
    return link + separator + "backend=" + std::string(backend_name(backend));
}

OpenedLink open_step_link(const Catalog& catalog, std::string_view link) {
    OpenedLink opened;
    opened.lab = &catalog.labs.front();
    opened.step = &opened.lab->steps.front();
    auto finish = [&] {
        opened.parameters = Parameters(opened.step->logic.parameters);
        return opened;
    };
    if (link.substr(0, kScheme.size()) != kScheme) {
        opened.ignored.push_back(emu::quoted_input(link) + ": not an fp8lab:// link; opened the first step");
        return finish();
    }
    link.remove_prefix(kScheme.size());
    const std::size_t question = link.find('?');
    const std::string_view path = link.substr(0, question);
    const std::string_view query = question == std::string_view::npos ? std::string_view() : link.substr(question + 1);

    const std::vector<std::string_view> names = split(path, '/');
    std::string lab_id, step_id;
    percent_decode(names[0], lab_id);
    if (names.size() > 1) percent_decode(names[1], step_id);
    if (const Lab* lab = catalog.find(lab_id)) {
        opened.lab = lab;
        opened.step = &lab->steps.front();
        if (const Step* step = lab->find_step(step_id))
            opened.step = step;
        else
            opened.ignored.push_back("step " + emu::quoted_input(step_id) + ": " + lab->id +
                                     " has no such step; opened its first");
    } else {
        opened.ignored.push_back("lab " + emu::quoted_input(lab_id) + ": no such lab; opened the first step");
    }
    if (names.size() > 2) opened.ignored.push_back("the path past LAB/STEP");
    finish();

    for (std::string_view pair : split(query, '&')) {
        if (pair.empty()) continue;
        const std::size_t eq = pair.find('=');
        std::string name, value;
        if (eq == std::string_view::npos || !percent_decode(pair.substr(0, eq), name) ||
            !percent_decode(pair.substr(eq + 1), value)) {
            opened.ignored.push_back(emu::quoted_input(pair) + ": not NAME=VALUE");
            continue;
        }
        if (name == "backend") {
            if (value == backend_name(Backend::Gpu) && opened.step->supports(Backend::Gpu))
                opened.backend = Backend::Gpu;
            else if (value == backend_name(Backend::Cpu))
                opened.backend = Backend::Cpu;
            else
                opened.ignored.push_back("backend " + emu::quoted_input(value) +
                                         ": this step runs on the CPU emulator");
            continue;
        }
        try {
            opened.parameters.set_text(name, value);
        } catch (const ParameterError& e) {
            opened.ignored.push_back(std::string(e.what()) + "; kept the default");
        }
    }
    return opened;
}

}  // namespace fp8lab::labs
