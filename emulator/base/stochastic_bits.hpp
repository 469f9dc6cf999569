// SPDX-License-Identifier: Apache-2.0
// Counter-based random bits: element i's bits depend only on (seed, i), never on threads.
#pragma once

#include <cstdint>

namespace fp8lab::emu {

// SplitMix64's finaliser over (seed, index): a bijective mix, so distinct indices never
// share a state, and a lane can compute its bits without touching its neighbours.
constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The top `bits` (1..32) of the mixed counter, as an integer in [0, 2^bits).
constexpr std::uint32_t stochastic_bits(std::uint64_t seed, std::uint64_t index, int bits) {
    // A Weyl sequence per seed, then the mix: neighbouring indices get unrelated bits.
    const std::uint64_t z = mix64(mix64(seed) + index * 0x9E3779B97F4A7C15ull);
    return static_cast<std::uint32_t>(z >> (64 - bits));
}

// The seed of a stochastic cast in training: a function of the step and a key of the
// tensor (its name's length) only, so that any backend casting the same tensor at the same
// step draws the same bits, and a GPU can form it on the device from its step counter.
constexpr std::uint64_t training_cast_seed(std::uint64_t step, std::uint64_t tensor_key) {
    return step * 7919 + tensor_key;
}

}  // namespace fp8lab::emu
