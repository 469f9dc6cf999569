// SPDX-License-Identifier: Apache-2.0
// The GPU suites' guard: true when an FP8-capable GPU is usable, else prints why the case is skipped.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>

#include "gpu/probe.hpp"

inline bool gpu_ready() {
    static const fp8lab::gpu::ProbeResult p = fp8lab::gpu::probe();
    if (!p.ready) {
        std::printf("gpu test skipped: %s\n", p.reason.c_str());
        MESSAGE("skipped: " << p.reason);
    }
    return p.ready;
}
