// SPDX-License-Identifier: Apache-2.0
// Fuzzes the amax trace reader: any bytes are read or refused with file:line, never a
// crash; a trace that is read writes back to text that reads to the same records.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "emulator/scaling/amax_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fp8lab::emu;
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    AmaxTrace trace;
    try {
        trace = read_amax_trace(in, "fuzz.csv");
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).rfind("fuzz.csv:", 0) != 0) __builtin_trap();  // always names the file
        return 0;
    }
    std::stringstream text;
    write_amax_trace(text, trace);
    const AmaxTrace back = read_amax_trace(text, "again");
    if (back.records.size() != trace.records.size()) __builtin_trap();
    if (!trace.records.empty()) {
        // What-ifs over a valid trace run too (history and margin within their bounds).
        (void)replay_delayed_scaling(trace, FormatRecipe::Hybrid, {16, AmaxAlgorithm::Max, 0});
    }
    return 0;
}
