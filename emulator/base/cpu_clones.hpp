// SPDX-License-Identifier: Apache-2.0
// Compiles a function once per x86-64 level and picks the copy at each call.
#pragma once

#include "emulator/base/cpu_level.hpp"

// FP8LAB_CPU_DISPATCH(RET, NAME, (PARAMS), (ARGS), BODY) defines RET NAME(PARAMS), which
// calls BODY(ARGS), an always-inline function, inlined into three copies compiled for
// x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) and baseline x86-64; the copy that runs is
// the one loop_cpu_level() names, so force_cpu_level runs every copy on one machine (the
// goldens test compares them all; GCC's target_clones, used before, picked one at load
// time, which no test could change). Elsewhere (clang, other CPUs): one copy, compiled for
// the build's target.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FP8LAB_CPU_DISPATCH(RET, NAME, PARAMS, ARGS, BODY)                                          \
    __attribute__((target("arch=x86-64-v4"))) static RET NAME##_avx512 PARAMS { return BODY ARGS; } \
    __attribute__((target("arch=x86-64-v3"))) static RET NAME##_avx2 PARAMS { return BODY ARGS; }   \
    static RET NAME##_baseline PARAMS { return BODY ARGS; }                                         \
    RET NAME PARAMS {                                                                               \
        switch (::fp8lab::emu::loop_cpu_level()) {                                                  \
        case ::fp8lab::emu::CpuLevel::Avx512:                                                       \
            return NAME##_avx512 ARGS;                                                              \
        case ::fp8lab::emu::CpuLevel::Avx2:                                                         \
            return NAME##_avx2 ARGS;                                                                \
        case ::fp8lab::emu::CpuLevel::Exact:                                                        \
            break;                                                                                  \
        }                                                                                           \
        return NAME##_baseline ARGS;                                                                \
    }
#else
#define FP8LAB_CPU_DISPATCH(RET, NAME, PARAMS, ARGS, BODY) \
    RET NAME PARAMS { return BODY ARGS; }
#endif
#define FP8LAB_INLINE [[gnu::always_inline]] inline
