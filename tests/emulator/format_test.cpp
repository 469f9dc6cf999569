// SPDX-License-Identifier: Apache-2.0
// Format descriptors against the table of docs/numerics.md §2 (OCP OFP8 and MX v1.0).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "emulator/formats/format.hpp"

using namespace fp8lab::emu;

TEST_CASE("derived properties match the OCP specifications") {
    struct Row {
        const char* name;
        int bias;
        double max, min_normal, min_subnormal;
        bool inf, nan;
    };
    const Row rows[] = {
        {"e4m3", 7, 448, 0x1p-6, 0x1p-9, false, true},
        {"e5m2", 15, 57344, 0x1p-14, 0x1p-16, true, true},
        {"e3m2", 3, 28, 0x1p-2, 0x1p-4, false, false},
        {"e2m3", 1, 7.5, 1, 0x1p-3, false, false},
        {"e2m1", 1, 6, 1, 0.5, false, false},
        {"e8m0", 127, 0x1p127, 0x1p-127, 0, false, true},
        {"e4m3-ieee", 7, 240, 0x1p-6, 0x1p-9, true, true},
        {"e4m3fnuz", 8, 240, 0x1p-7, 0x1p-10, false, true},
        {"e5m2fnuz", 16, 57344, 0x1p-15, 0x1p-17, false, true},
        {"fp16", 15, 65504, 0x1p-14, 0x1p-24, true, true},
        {"bf16", 127, 0x1.fep127, 0x1p-126, 0x1p-133, true, true},
        {"fp32", 127, 0x1.fffffep127, 0x1p-126, 0x1p-149, true, true},
    };
    for (const Row& r : rows) {
        CAPTURE(r.name);
        const Format& f = format_by_name(r.name);
        CHECK(f.bias == r.bias);
        CHECK(f.max_finite == r.max);
        CHECK(f.min_normal == r.min_normal);
        CHECK(f.min_subnormal == r.min_subnormal);
        CHECK(f.has_inf == r.inf);
        CHECK(f.has_nan == r.nan);
    }
    CHECK(e4m3().max_magnitude_code == 0x7E);  // S.1111.110
    CHECK(e4m3().nan_code == 0x7F);            // S.1111.111
    CHECK(e5m2().inf_code == 0x7C);            // S.11111.00
    CHECK(e8m0().nan_code == 0xFF);
    CHECK(e8m0().max_magnitude_code == 0xFE);
    CHECK(e4m3fnuz().nan_code == 0x80);  // the sign over a zero magnitude
    CHECK(e4m3fnuz().max_magnitude_code == 0x7F);
    CHECK(e5m2fnuz().nan_code == 0x80);
    CHECK_FALSE(e4m3fnuz().has_negative_zero);
    CHECK(e4m3().has_negative_zero);
    CHECK(e2m1().total_bits == 4);
    CHECK(e3m2().total_bits == 6);
}

TEST_CASE("lookup by name ignores case and rejects unknown names") {
    CHECK(&format_by_name("E4M3") == &e4m3());
    CHECK(&format_by_name("Bf16") == &bf16());
    CHECK(&format_by_name("E4M3-IEEE") == &e4m3_ieee());
    CHECK(find_format("e4m4") == nullptr);
    CHECK_THROWS_AS(format_by_name("fp8"), std::invalid_argument);
}

TEST_CASE("special codes are classified") {
    CHECK(e4m3().is_nan_code(0x7F));
    CHECK(e4m3().is_nan_code(0xFF));
    CHECK_FALSE(e4m3().is_nan_code(0x7E));
    CHECK_FALSE(e4m3().is_inf_code(0x78));  // 256 in OCP E4M3, Inf in the IEEE layout
    CHECK(e4m3_ieee().is_inf_code(0x78));
    CHECK(e5m2().is_inf_code(0xFC));
    for (std::uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu}) CHECK(e5m2().is_nan_code(c));
    for (std::uint32_t c = 0; c < 64; ++c) CHECK_FALSE(e3m2().is_nan_code(c));
}
