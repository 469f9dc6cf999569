// SPDX-License-Identifier: Apache-2.0
// The CPU's vector level for the trainers' GEMM and element loops: detected once, forced by tests.
#include "emulator/base/cpu_level.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace fp8lab::emu {
namespace {

CpuLevel detect() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return CpuLevel::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuLevel::Avx2;
#endif
    return CpuLevel::Exact;
}

// The highest x86-64 level whose code (cpu_clones.hpp's copies) this CPU runs, by the
// levels' defining features (GCC 12's "x86-64-v3" names would leave GCC 11 out; every CPU
// with these also has v3's F16C, LZCNT and MOVBE).
CpuLevel detect_loop_level() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                    __builtin_cpu_supports("bmi2");
    const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512vl");
    if (v4) return CpuLevel::Avx512;
    if (v3) return CpuLevel::Avx2;
#endif
    return CpuLevel::Exact;
}

// -1: not forced; otherwise the forced level's value.
std::atomic<int> forced{-1};

}  // namespace

CpuLevel detected_cpu_level() {
    static const CpuLevel level = detect();
    return level;
}

CpuLevel gemm_cpu_level() {
    const int f = forced.load(std::memory_order_relaxed);
    return f < 0 ? detected_cpu_level() : CpuLevel(f);
}

CpuLevel loop_cpu_level() {
    static const CpuLevel runs = detect_loop_level();
    const CpuLevel level = gemm_cpu_level();
    return int(level) < int(runs) ? level : runs;
}

void force_cpu_level(std::optional<CpuLevel> level) {
    if (level && int(*level) > int(detected_cpu_level()))
        throw std::invalid_argument("this CPU runs " + std::string(enum_name(detected_cpu_level())) + " at most, not " +
                                    std::string(enum_name(*level)));
    forced.store(level ? int(*level) : -1, std::memory_order_relaxed);
}

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::CpuLevel>> enum_names<emu::CpuLevel>() {
    static constexpr EnumName<emu::CpuLevel> table[] = {
        {emu::CpuLevel::Exact, "exact"}, {emu::CpuLevel::Avx2, "avx2"}, {emu::CpuLevel::Avx512, "avx512"}};
    return table;
}
}  // namespace fp8lab
