// SPDX-License-Identifier: Apache-2.0
// The rounding and saturation modes alone, in C++17 with no library: what the shared
// element cast (float32_cast.hpp) needs, so that CUDA kernels can include it too.
#pragma once

namespace fp8lab::emu {

enum class RoundingMode { NearestEven, NearestAway, TowardZero, Up, Down, Odd, Stochastic };
enum class Saturation { Finite, None };

}  // namespace fp8lab::emu
