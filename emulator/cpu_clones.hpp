// SPDX-License-Identifier: Apache-2.0
// Marks a function to be compiled once per x86-64 level and picked at load time.
#pragma once

// GCC clones the function for AVX-512, AVX2 and baseline x86-64 and dispatches through an
// ifunc; always-inline bodies called from it are compiled inside each clone with its ISA.
// Elsewhere (clang, other CPUs) the function is compiled once for the build's target.
// FP8LAB_CLONES_UP_TO_AVX2 (the CMake option of that name, for developers) leaves the
// AVX-512 clone out, so that an AVX-512 machine runs, and times, the AVX2 code.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(FP8LAB_CLONES_UP_TO_AVX2)
#define FP8LAB_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FP8LAB_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FP8LAB_CPU_CLONES
#endif
#define FP8LAB_INLINE [[gnu::always_inline]] inline
