// SPDX-License-Identifier: Apache-2.0
// Enumeration, neighbours, ulp and rounding error of x.
#include <doctest/doctest.h>

#include <cmath>

#include "emulator/formats/value_grid.hpp"

using namespace fp8lab::emu;

TEST_CASE("representable values: counts and order") {
    // E4M3: 256 codes - 2 NaN - (-0) = 253 values; E5M2: 256 - 6 NaN - 2 Inf - (-0) = 247.
    CHECK(representable_values(e4m3()).size() == 253);
    CHECK(representable_values(e5m2()).size() == 247);
    CHECK(representable_values(e2m1()).size() == 15);
    CHECK(representable_values(e8m0()).size() == 255);
    const auto v = representable_values(e4m3());
    CHECK(v.front().value == -448);
    CHECK(v.back().value == 448);
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1].value < v[i].value);
    CHECK_THROWS(representable_values(fp32()));
}

TEST_CASE("neighbours bracket x and are adjacent") {
    const Neighbours n = neighbours(e4m3(), 300.0);
    CHECK(n.below == 288);
    CHECK(n.above == 320);
    const Neighbours exact = neighbours(e4m3(), 0.5);
    CHECK(exact.below == 0.5);
    CHECK(exact.above == 0.5);
    const Neighbours beyond = neighbours(e4m3(), 500.0);
    CHECK(beyond.below == 448);
    CHECK(std::isnan(beyond.above));  // nothing finite above, and E4M3 has no Inf
    CHECK(std::isinf(neighbours(e5m2(), 60000.0).above));
    const Neighbours sub = neighbours(e4m3(), 0x1.8p-9);
    CHECK(sub.below == 0x1p-9);
    CHECK(sub.above == 0x1p-8);
}

TEST_CASE("ulp doubles each binade and is constant across the subnormals") {
    CHECK(ulp(e4m3(), 1.0) == 0.125);
    CHECK(ulp(e4m3(), 2.0) == 0.25);
    CHECK(ulp(e4m3(), 448.0) == 32.0);
    CHECK(ulp(e4m3(), 0x1p-8) == 0x1p-9);
    CHECK(ulp(e4m3(), 0.0) == 0x1p-9);
    CHECK(ulp(e5m2(), 1.0) == 0.25);
    CHECK(ulp(e8m0(), 4.0) == 4.0);
}

TEST_CASE("rounding error of x") {
    const RoundingError e = rounding_error(e4m3(), 300.0);
    CHECK(e.result == 288.0);
    CHECK(e.abs_error == 12.0);
    CHECK(e.rel_error == doctest::Approx(0.04));
    CHECK(rounding_error(e4m3(), 0.0).rel_error == 0.0);
}
