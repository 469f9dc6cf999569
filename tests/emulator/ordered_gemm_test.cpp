// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM against a scalar statement of its order (one std::fma per term) on every
// CPU path, bit for bit, in every operand layout, and its narrow-accumulator twin likewise.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <optional>
#include <stdexcept>
#include <vector>

#include "emulator/base/cpu_level.hpp"
#include "emulator/gemm/ordered_gemm.hpp"
#include "emulator/gemm/ordered_gemm_levels.hpp"
#include "emulator/gemm/trainer_matrix.hpp"

using namespace fp8lab::emu;

namespace {

// Values of every magnitude, so that the order of the sums shows in the low bits; with
// `specials`, infinities and zeros of both signs too.
Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng, bool specials) {
    Matrix m(rows, cols);
    std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
    for (Eigen::Index i = 0; i < m.size(); ++i) {
        const unsigned pick = rng() % 16;
        if (specials && pick == 0)
            m.data()[i] = (rng() & 1 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
        else if (specials && pick == 1)
            m.data()[i] = rng() & 1 ? 0.0f : -0.0f;
        else
            m.data()[i] = std::ldexp(mantissa(rng), int(rng() % 24) - 12);
    }
    return m;
}

// Bits equal, or both NaN (a NaN's sign and payload are not part of the contract).
bool same(float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

// The result of `gemm(begin, end, dst)` run over column chunks of `chunk`, as the trainer
// runs it, against the model's `want`: the number of elements that differ.
template <class Gemm>
int chunked_mismatches(Eigen::Index rows, Eigen::Index cols, Eigen::Index chunk, Gemm gemm, const Matrix& want) {
    Matrix got = Matrix::Constant(rows, cols, 12345.0f);
    for (Eigen::Index begin = 0; begin < cols; begin += chunk) gemm(begin, std::min(begin + chunk, cols), got);
    int count = 0;
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) count += !same(got(i, j), want(i, j));
    return count;
}

// A GEMM's model of lhs * rhs: each output term by term from +0, sum = add(sum, a, b).
// Computed once per pair of operands; every layout, chunk and CPU path is held to it.
template <class Add>
Matrix term_by_term(const Matrix& lhs, const Matrix& rhs, Add add) {
    Matrix want(lhs.rows(), rhs.cols());
    for (Eigen::Index i = 0; i < lhs.rows(); ++i)
        for (Eigen::Index j = 0; j < rhs.cols(); ++j) {
            float sum = 0.0f;
            for (Eigen::Index k = 0; k < lhs.cols(); ++k) sum = add(sum, lhs(i, k), rhs(k, j));
            want(i, j) = sum;
        }
    return want;
}

// The ordered GEMM's model: one std::fma per term.
Matrix fma_model(const Matrix& lhs, const Matrix& rhs) {
    return term_by_term(lhs, rhs, [](float sum, float a, float b) { return std::fma(a, b, sum); });
}

// lhs * rhs by the ordered GEMM against the model's result.
template <class Lhs, class Rhs>
int differences(const Lhs& lhs, const Rhs& rhs, Eigen::Index chunk, const Matrix& want) {
    return chunked_mismatches(
        lhs.rows(), rhs.cols(), chunk,
        [&](Eigen::Index begin, Eigen::Index end, Matrix& got) {
            ordered_gemm(strided(lhs), strided(rhs), got.data(), got.cols(), begin, end);
        },
        want);
}

// Every path this CPU runs, the slowest (exact) first.
std::vector<CpuLevel> levels_here() {
    std::vector<CpuLevel> out;
    for (const auto& n : fp8lab::enum_names<CpuLevel>())
        if (int(n.value) <= int(detected_cpu_level())) out.push_back(n.value);
    return out;
}

}  // namespace

TEST_CASE("the ordered GEMM is one FMA sum per output, in order, on every CPU path, in every operand layout") {
    std::mt19937 rng(20261124);
    struct Shape {
        Eigen::Index rows, cols, depth;
    };
    // Rows off every path's tiles (4 and 8 rows), columns off its strips (24 and 32 wide)
    // and off one vector (tails of 1 to 15), depths of one panel and of several (256 terms),
    // a row and a column (matrix-vector products), an empty contraction.
    const Shape shapes[] = {{2, 16, 9},     {3, 24, 17},    {4, 16, 700},   {5, 40, 1400}, {7, 56, 2100},
                            {32, 192, 768}, {32, 48, 3072}, {48, 80, 96},   {13, 8, 4096}, {2, 8, 10},
                            {9, 37, 300},   {1, 64, 64},    {64, 1, 64},    {4, 8, 4},     {32, 12, 64},
                            {17, 33, 257},  {3, 5, 0},      {33, 100, 513}, {8, 7, 1}};
    for (const Shape& s : shapes) {
        CAPTURE(s.rows);
        CAPTURE(s.cols);
        CAPTURE(s.depth);
        for (const bool specials : {false, true}) {
            CAPTURE(specials);
            const Matrix a = random_matrix(s.rows, s.depth, rng, specials);  // rows x depth
            const Matrix b = random_matrix(s.depth, s.cols, rng, specials);  // depth x cols
            const Matrix at = a.transpose(), bt = b.transpose();
            const Matrix want = fma_model(a, b);
            for (const CpuLevel level : levels_here()) {
                CAPTURE(fp8lab::enum_name(level));
                force_cpu_level(level);
                for (const Eigen::Index chunk : {s.cols, Eigen::Index(8), Eigen::Index(24)}) {
                    CAPTURE(chunk);
                    CHECK(differences(a, b, chunk, want) == 0);                            // A B
                    CHECK(differences(a, bt.transpose(), chunk, want) == 0);               // A B^T (the forward)
                    CHECK(differences(at.transpose(), b, chunk, want) == 0);               // A^T B (the wgrad)
                    CHECK(differences(at.transpose(), bt.transpose(), chunk, want) == 0);  // A^T B^T
                }
            }
        }
    }
    force_cpu_level(std::nullopt);
}

TEST_CASE("the ordered GEMM's FMA rounds each term once: a sum a separate multiply and add would round otherwise") {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the product rounded alone loses the 2^-24, which
    // the fused multiply-add keeps when it adds -(1 + 2^-11) in the same rounding.
    const float x = 1.0f + std::ldexp(1.0f, -12);
    Matrix lhs(1, 2);  // filled in place: GCC 12 warns falsely on copying a comma-initialised temporary
    lhs << -(1.0f + std::ldexp(1.0f, -11)), x;
    Matrix rhs = Matrix::Constant(2, 8, 1.0f);
    rhs.row(1).setConstant(x);
    for (const CpuLevel level : levels_here()) {
        CAPTURE(fp8lab::enum_name(level));
        force_cpu_level(level);
        Matrix got(1, 8);
        ordered_gemm(strided(lhs), strided(rhs), got.data(), 8, 0, 8);
        CHECK(got(0, 0) == std::ldexp(1.0f, -24));
    }
    force_cpu_level(std::nullopt);
}

TEST_CASE("the exact path's fused multiply-add in doubles equals std::fma, halfway cases and extremes included") {
    std::mt19937 rng(20261127);
    const auto any_float = [&] {  // every exponent, subnormals, zeros of both signs
        const std::uint32_t bits = rng();
        return (bits & 0x7F800000u) == 0x7F800000u ? std::ldexp(1.0f, int(rng() % 40)) : std::bit_cast<float>(bits);
    };
    const auto near = [&](float x, int exponent_spread) {  // a float near x in magnitude, either sign
        return (rng() & 1 ? 1.0f : -1.0f) *
               std::ldexp(std::fabs(x), int(rng() % (2 * exponent_spread + 1)) - exponent_spread) *
               (1.0f + std::ldexp(float(rng() % 4096), -12));
    };
    int differences = 0;
    for (int i = 0; i < 2000000; ++i) {
        const float a = any_float(), b = i % 4 == 0 ? any_float() : near(a, 8);
        float c;
        const float product = a * b;
        switch (i % 5) {
        case 0:  // any
            c = any_float();
            break;
        case 1:  // cancels the rounded product: the sum is the product's rounding error
            c = -product;
            break;
        case 2:  // a few of the product's ulps off it: sums near float32 rounding boundaries
            c = -std::nextafter(product, rng() & 1 ? INFINITY : -INFINITY) +
                std::ldexp(float(int(rng() % 7) - 3), std::ilogb(product == 0 ? 1.0f : product) - 24);
            break;
        case 3:  // far larger or far smaller than the product: the product decides the rounding
            c = near(product == 0 ? 1.0f : product, 30);
            break;
        default:  // subnormal results
            c = std::ldexp(float(int(rng() % 2001) - 1000), -149);
            break;
        }
        const float want = std::fma(a, b, c), got = fp8lab::emu::gemm_levels::exact_fma(a, b, c);
        if (!same(got, want)) {
            if (++differences <= 5)
                MESSAGE("fma(" << a << ", " << b << ", " << c << "): " << got << " against " << want);
        }
    }
    CHECK(differences == 0);
    // Where rounding to a double and then to a float32 goes wrong: (1 + 2^-23)(2^-24 - 2^-47)
    // + (1 + 2^-23) is 1 + 2^-23 + 2^-24 - 2^-70, just below the midpoint of 1 + 2^-23 and
    // 1 + 2^-22; a double rounds it onto the midpoint, and ties-to-even then goes up.
    const float a = 1.0f + std::ldexp(1.0f, -23), b = std::ldexp(1.0f, -24) - std::ldexp(1.0f, -47);
    CHECK(float(double(a) * double(b) + double(a)) == 1.0f + std::ldexp(1.0f, -22));  // double rounding
    CHECK(std::fma(a, b, a) == a);
    CHECK(fp8lab::emu::gemm_levels::exact_fma(a, b, a) == a);
    CHECK(std::isinf(fp8lab::emu::gemm_levels::exact_fma(3e38f, 2.0f, 0.0f)));
}

TEST_CASE("the CPU level: named, detected, and forced only down to what the CPU runs, loops with the GEMM") {
    CHECK(fp8lab::enum_name(CpuLevel::Exact) == "exact");
    CHECK(fp8lab::parse_enum<CpuLevel>("avx512") == CpuLevel::Avx512);
    CHECK(gemm_cpu_level() == detected_cpu_level());
    const CpuLevel loops = loop_cpu_level();
    CHECK(int(loops) <= int(detected_cpu_level()));
    force_cpu_level(CpuLevel::Exact);
    CHECK(gemm_cpu_level() == CpuLevel::Exact);
    CHECK(loop_cpu_level() == CpuLevel::Exact);  // the loops' baseline copy
    if (detected_cpu_level() != CpuLevel::Exact) {
        force_cpu_level(CpuLevel::Avx2);
        CHECK(loop_cpu_level() == std::min(CpuLevel::Avx2, loops));
    }
    force_cpu_level(std::nullopt);
    CHECK(gemm_cpu_level() == detected_cpu_level());
    CHECK(loop_cpu_level() == loops);
    if (detected_cpu_level() != CpuLevel::Avx512)
        CHECK_THROWS_AS(force_cpu_level(CpuLevel::Avx512), std::invalid_argument);
}

namespace {

// x truncated toward zero to `fraction_bits` fraction bits (normal floats), by its
// significand rather than its bits: an independent statement of the narrow accumulator.
float truncated(float x, int fraction_bits) {
    if (x == 0.0f || !std::isfinite(x)) return x;
    int exponent = 0;
    const double significand = std::frexp(double(x), &exponent);  // in [0.5, 1)
    return float(std::ldexp(std::trunc(std::ldexp(significand, fraction_bits + 1)), exponent - fraction_bits - 1));
}

// The narrow accumulator's model: each product rounded to float32, each running sum truncated.
Matrix narrow_model(const Matrix& lhs, const Matrix& rhs, int fraction_bits) {
    return term_by_term(lhs, rhs, [fraction_bits](float sum, float a, float b) {
        const volatile float product = a * b;  // rounded to float32 on its own
        return truncated(sum + product, fraction_bits);
    });
}

template <class Lhs, class Rhs>
int narrow_differences(const Lhs& lhs, const Rhs& rhs, Eigen::Index chunk, int fraction_bits, const Matrix& want) {
    return chunked_mismatches(
        lhs.rows(), rhs.cols(), chunk,
        [&](Eigen::Index begin, Eigen::Index end, Matrix& got) {
            narrow_accumulator_gemm(strided(lhs), strided(rhs), got.data(), got.cols(), fraction_bits, begin, end);
        },
        want);
}

}  // namespace

TEST_CASE("the narrow-accumulator GEMM truncates every running sum and never promotes it") {
    std::mt19937 rng(20261127);
    struct Shape {
        Eigen::Index rows, cols, depth;
    };
    // Depths past the float32 GEMM's panels (no promotion at a panel's end), rows and
    // columns off the tiles and strips, widths that are no multiple of 8.
    const Shape shapes[] = {{2, 16, 9}, {5, 40, 1400}, {3, 12, 700}, {32, 48, 3072}, {1, 5, 33}};
    for (const Shape& s : shapes)
        for (const int bits : {23, 13, 8}) {
            CAPTURE(s.rows);
            CAPTURE(s.cols);
            CAPTURE(s.depth);
            CAPTURE(bits);
            const Matrix a = random_matrix(s.rows, s.depth, rng, false), b = random_matrix(s.depth, s.cols, rng, false);
            const Matrix at = a.transpose(), bt = b.transpose();
            const Matrix want = narrow_model(a, b, bits);
            for (const Eigen::Index chunk : {s.cols, Eigen::Index(8)}) {
                CHECK(narrow_differences(a, b, chunk, bits, want) == 0);
                CHECK(narrow_differences(a, bt.transpose(), chunk, bits, want) == 0);
                CHECK(narrow_differences(at.transpose(), b, chunk, bits, want) == 0);
            }
        }
}

TEST_CASE("the narrow accumulator loses what the float32 one keeps on long positive sums") {
    // 4096 products of 1 * (1 + 2^-10): once the sum reaches 16, a 13-bit accumulator's
    // last kept bit is worth 2^-9, and every addition drops the term's 2^-10.
    const Eigen::Index depth = 4096;
    const Matrix ones = Matrix::Ones(1, depth);
    const Matrix terms = Matrix::Constant(depth, 8, 1.0f + std::ldexp(1.0f, -10));
    Matrix narrow(1, 8), wide(1, 8);
    narrow_accumulator_gemm(strided(ones), strided(terms), narrow.data(), 8, 13, 0, 8);
    narrow_accumulator_gemm(strided(ones), strided(terms), wide.data(), 8, 23, 0, 8);
    const double exact = double(depth) * (1.0 + std::ldexp(1.0, -10));
    CHECK(wide(0, 0) == doctest::Approx(exact).epsilon(1e-6));
    CHECK(narrow(0, 0) < wide(0, 0));
    CHECK(narrow(0, 0) >= float(depth));  // truncation drops the small parts, never a whole term
    CHECK_THROWS_AS(narrow_accumulator_gemm(strided(ones), strided(terms), narrow.data(), 8, 24, 0, 8),
                    std::invalid_argument);
}
