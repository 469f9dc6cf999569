// SPDX-License-Identifier: Apache-2.0
// The bit inspector's numbers: classes, neighbours over every code of the small formats,
// and encodings in every format and mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/experiments/bit_inspection.hpp"

using namespace fp8lab;
using labs::ValueClass;

TEST_CASE("E4M3's largest value, NaN, zero and a subnormal are classified and explained") {
    const labs::CodeInspection max = labs::inspect_code(emu::e4m3(), 0x7E);
    CHECK(max.value == 448);
    CHECK(max.value_class == ValueClass::MaxFinite);
    CHECK(max.exponent_bits == "1111");
    CHECK(max.mantissa_bits == "110");
    CHECK(max.below.exists);
    CHECK(max.below.value == 416);
    CHECK(max.below.gap == 32);
    CHECK_FALSE(max.above.exists);
    CHECK(max.formula.find("448") != std::string::npos);

    const labs::CodeInspection nan = labs::inspect_code(emu::e4m3(), 0x7F);
    CHECK(nan.value_class == ValueClass::NaN);
    CHECK(nan.explanation.find("no infinities") != std::string::npos);

    const labs::CodeInspection zero = labs::inspect_code(emu::e4m3(), 0x00);
    CHECK(zero.value_class == ValueClass::Zero);
    CHECK(zero.below.value == -emu::e4m3().min_subnormal);
    CHECK(zero.above.value == emu::e4m3().min_subnormal);

    const labs::CodeInspection sub = labs::inspect_code(emu::e4m3(), 0x03);
    CHECK(sub.value_class == ValueClass::Subnormal);
    CHECK(sub.below.gap == emu::e4m3().min_subnormal);
}

TEST_CASE("E5M2's infinity sits next to its largest finite value") {
    const labs::CodeInspection inf = labs::inspect_code(emu::e5m2(), 0x7C);
    CHECK(inf.value_class == ValueClass::Infinity);
    CHECK(inf.below.value == 57344);
    CHECK_FALSE(inf.above.exists);
    const labs::CodeInspection minus_inf = labs::inspect_code(emu::e5m2(), 0xFC);
    CHECK(minus_inf.above.value == -57344);
}

TEST_CASE("every finite code's neighbours are the adjacent values of the format's grid") {
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1(), &emu::e8m0()}) {
        CAPTURE(f->name);
        // The grid, from the emulator's own listing: every finite value once, increasing.
        std::vector<double> grid;
        for (const emu::RepresentableValue& v : emu::representable_values(*f)) grid.push_back(v.value);
        REQUIRE(std::is_sorted(grid.begin(), grid.end()));
        for (std::uint32_t code = 0; code < f->code_count(); ++code) {
            const labs::CodeInspection c = labs::inspect_code(*f, code);
            if (!std::isfinite(c.value)) continue;
            const auto at = std::lower_bound(grid.begin(), grid.end(), c.value);
            REQUIRE(at != grid.end());
            CHECK(*at == c.value);
            CHECK(c.below.exists == (at != grid.begin()));
            if (c.below.exists) CHECK(c.below.value == *(at - 1));
            CHECK(c.above.exists == (at + 1 != grid.end()));
            if (c.above.exists) CHECK(c.above.value == *(at + 1));
            if (c.below.exists) CHECK(emu::decode(*f, c.below.code) == c.below.value);
        }
    }
}

TEST_CASE("flipping bits and refusing codes that do not fit") {
    CHECK(labs::flip_bit(emu::e4m3(), 0x7E, 7) == 0xFE);
    CHECK(labs::flip_bit(emu::e4m3(), 0x7E, 0) == 0x7F);
    CHECK_THROWS_AS(labs::flip_bit(emu::e4m3(), 0, 8), std::invalid_argument);
    CHECK_THROWS_WITH_AS(labs::inspect_code(emu::e4m3(), 0x100), doctest::Contains("does not fit"),
                         std::invalid_argument);
    const labs::CodeInspection one = labs::inspect_code(emu::fp32(), 0x3F800000);
    CHECK(one.value == 1);
    CHECK(one.above.gap == std::ldexp(1.0, -23));
    CHECK(one.below.gap == std::ldexp(1.0, -24));
}

TEST_CASE("0.3 in every format and deterministic mode, with the stochastic probability") {
    const auto rows = labs::encode_in_every_format(0.3, emu::Saturation::Finite);
    REQUIRE(rows.size() == emu::all_formats().size());
    for (const labs::FormatEncoding& e : rows) {
        CAPTURE(e.format->name);
        CHECK(e.modes.size() == emu::all_rounding_modes().size() - 1);
        for (const labs::ModeEncoding& m : e.modes) {
            const emu::ConvertOptions options{m.mode, emu::Saturation::Finite};
            CHECK(m.code == emu::encode(*e.format, 0.3, options));
        }
    }
    const labs::FormatEncoding& e4m3 = rows[0];
    REQUIRE(e4m3.format->name == "e4m3");
    CHECK(e4m3.modes[0].value == 0.3125);
    CHECK(e4m3.modes[0].rel_error == doctest::Approx((0.3125 - 0.3) / 0.3));
    // 0.3 lies between 0.28125 and 0.3125: 60% of the way up.
    CHECK(e4m3.stochastic_up_probability == doctest::Approx(0.6));
    const auto overflow = labs::encode_in_every_format(1e6, emu::Saturation::None);
    CHECK(std::isnan(overflow[0].modes[0].value));  // E4M3 overflows to NaN
    CHECK(std::isnan(overflow[0].stochastic_up_probability));
}
