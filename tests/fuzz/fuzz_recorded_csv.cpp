// SPDX-License-Identifier: Apache-2.0
// Fuzzes the recorded GPU measurements (crossover, accumulation, inference): any bytes
// are read or refused with file:line, never a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "labs/experiments/accumulation.hpp"
#include "labs/experiments/crossover.hpp"
#include "labs/experiments/inference_speed.hpp"
#include "labs/experiments/transformer_speed.hpp"

namespace {

template <class Read>
void read_or_refuse(const std::string& text, Read read) {
    std::istringstream in(text);
    try {
        (void)read(in, "fuzz.csv");
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).rfind("fuzz.csv:", 0) != 0) __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fp8lab::labs;
    const std::string text(reinterpret_cast<const char*>(data), size);
    read_or_refuse(text, read_crossover_csv);
    read_or_refuse(text, read_accumulation_csv);
    read_or_refuse(text, read_inference_csv);
    read_or_refuse(text, read_transformer_speed_csv);
    return 0;
}
