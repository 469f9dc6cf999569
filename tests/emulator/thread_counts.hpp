// SPDX-License-Identifier: Apache-2.0
// Runs the same computation on one thread and on two: what the determinism tests compare.
#pragma once

#include <utility>

#include "emulator/base/parallel.hpp"

namespace fp8lab::test {

// f() with the worker pool limited to one thread, then to two; the limit is lifted after.
template <class F>
auto on_one_and_two_threads(F&& f) {
    emu::set_max_threads(1);
    auto one = f();
    emu::set_max_threads(2);
    auto two = f();
    emu::set_max_threads(0);
    return std::pair{std::move(one), std::move(two)};
}

}  // namespace fp8lab::test
