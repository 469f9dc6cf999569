// SPDX-License-Identifier: Apache-2.0
// Which vector path the trainers' GEMM and element loops run on this CPU: all give the same bits.
#pragma once

#include <optional>
#include <span>

#include "emulator/base/enum_names.hpp"

namespace fp8lab::emu {

// The ordered GEMM's paths (emulator/gemm/ordered_gemm.hpp), slowest first. The baseline is
// x86-64 with AVX2 and FMA; a CPU below it (or another architecture) runs the exact
// scalar path: std::fma per term, the same bits, several times slower.
enum class CpuLevel { Exact, Avx2, Avx512 };

// The fastest path this CPU runs (AVX-512 needs AVX-512F; AVX2 needs AVX2 and FMA).
CpuLevel detected_cpu_level();

// The path the GEMM takes now: the detected one unless forced.
CpuLevel gemm_cpu_level();

// The code the element loops run now (cpu_clones.hpp: compiled for x86-64-v4, -v3 and the
// baseline): the GEMM's level where this CPU runs that x86-64 level's code, else the
// highest level it runs (AVX-512F alone is not x86-64-v4).
CpuLevel loop_cpu_level();

// Forces the GEMM and the element loops onto `level` (tests compare every path's bits; a
// benchmark times one against another); std::nullopt returns to the detected path.
// Throws std::invalid_argument for a level above this CPU's.
void force_cpu_level(std::optional<CpuLevel> level);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::CpuLevel>> enum_names<emu::CpuLevel>();  // "exact", "avx2", "avx512"
}
