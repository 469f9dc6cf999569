// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM against Eigen's own product, bit for bit, in every operand layout, and
// its narrow-accumulator twin against a scalar statement of the model.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "emulator/ordered_gemm.hpp"

using namespace fp8lab::emu;

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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

template <class Operand>
StridedMatrix strided(const Operand& m) {
    return {m.data(), m.rows(), m.cols(), m.rowStride(), m.colStride()};
}

// Bits equal, or both NaN (a NaN's sign and payload are not part of the contract).
bool same(float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

// The result of `gemm(begin, end, dst)` run over column chunks of `chunk`, as the trainer
// runs it, against want(i, j): the number of elements that differ.
template <class Gemm, class Want>
int chunked_mismatches(Eigen::Index rows, Eigen::Index cols, Eigen::Index chunk, Gemm gemm, Want want) {
    Matrix got = Matrix::Constant(rows, cols, 12345.0f);
    for (Eigen::Index begin = 0; begin < cols; begin += chunk) gemm(begin, std::min(begin + chunk, cols), got);
    int count = 0;
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) count += !same(got(i, j), want(i, j));
    return count;
}

// lhs * rhs by the ordered GEMM against Eigen's single product.
template <class Lhs, class Rhs>
int differences(const Lhs& lhs, const Rhs& rhs, Eigen::Index chunk) {
    Matrix expected(lhs.rows(), rhs.cols());
    expected.noalias() = lhs * rhs;
    return chunked_mismatches(
        lhs.rows(), rhs.cols(), chunk,
        [&](Eigen::Index begin, Eigen::Index end, Matrix& got) {
            panel_ordered_gemm(strided(lhs), strided(rhs), got.data(), got.cols(),
                               eigen_depth_panel(lhs.rows(), end - begin, lhs.cols()), begin, end);
        },
        [&](Eigen::Index i, Eigen::Index j) { return expected(i, j); });
}

}  // namespace

TEST_CASE("the ordered GEMM equals Eigen's product bit for bit wherever Eigen sums in panel order") {
    std::mt19937 rng(20261124);
    struct Shape {
        Eigen::Index rows, cols, depth;
    };
    // Rows off the 4-row tiles, columns off the 16-wide strips (an 8-wide tail), depths of
    // one panel and of several (Eigen cuts depths past its L1 budget, about 680 here).
    const Shape shapes[] = {{2, 16, 9},     {3, 24, 17},    {4, 16, 700}, {5, 40, 1400}, {7, 56, 2100},
                            {32, 192, 768}, {32, 48, 3072}, {48, 80, 96}, {13, 8, 4096}, {2, 8, 10}};
    for (const Shape& s : shapes) {
        CAPTURE(s.rows);
        CAPTURE(s.cols);
        CAPTURE(s.depth);
        REQUIRE(eigen_order_is_panel_order(s.rows, s.cols, s.depth));
        for (const bool specials : {false, true}) {
            CAPTURE(specials);
            const Matrix a = random_matrix(s.rows, s.depth, rng, specials);  // rows x depth
            const Matrix b = random_matrix(s.depth, s.cols, rng, specials);  // depth x cols
            const Matrix at = a.transpose(), bt = b.transpose();
            for (const Eigen::Index chunk : {s.cols, Eigen::Index(8), Eigen::Index(24)}) {
                CAPTURE(chunk);
                CHECK(differences(a, b, chunk) == 0);                            // A B
                CHECK(differences(a, bt.transpose(), chunk) == 0);               // A B^T (the forward)
                CHECK(differences(at.transpose(), b, chunk) == 0);               // A^T B (the wgrad)
                CHECK(differences(at.transpose(), bt.transpose(), chunk) == 0);  // A^T B^T
            }
        }
    }
}

TEST_CASE("the ordered GEMM leaves to Eigen the products Eigen sums in another order") {
    CHECK_FALSE(eigen_order_is_panel_order(1, 64, 64));   // a row: Eigen's matrix-vector product
    CHECK_FALSE(eigen_order_is_panel_order(64, 1, 64));   // a column: the same
    CHECK_FALSE(eigen_order_is_panel_order(4, 8, 4));     // tiny: Eigen's coefficient-wise product
    CHECK_FALSE(eigen_order_is_panel_order(32, 12, 64));  // columns off the 8-row micro-kernel
    CHECK_FALSE(eigen_order_is_panel_order(32, 64, 0));
}

TEST_CASE("Eigen's depth panel cuts long contractions and keeps short ones whole") {
    CHECK(eigen_depth_panel(32, 192, 96) == 96);
    const std::ptrdiff_t panel = eigen_depth_panel(32, 192, 3072);
    CHECK(panel > 0);
    CHECK(panel < 3072);
    CHECK(panel % 8 == 0);  // Eigen's k peeling
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

// One output of the narrow accumulator, term by term from +0.
template <class Lhs, class Rhs>
float narrow_dot(const Lhs& lhs, const Rhs& rhs, Eigen::Index i, Eigen::Index j, int fraction_bits) {
    float sum = 0.0f;
    for (Eigen::Index k = 0; k < lhs.cols(); ++k) {
        const volatile float product = lhs(i, k) * rhs(k, j);  // rounded to float32 on its own
        sum = truncated(sum + product, fraction_bits);
    }
    return sum;
}

template <class Lhs, class Rhs>
int narrow_differences(const Lhs& lhs, const Rhs& rhs, Eigen::Index chunk, int fraction_bits) {
    return chunked_mismatches(
        lhs.rows(), rhs.cols(), chunk,
        [&](Eigen::Index begin, Eigen::Index end, Matrix& got) {
            narrow_accumulator_gemm(strided(lhs), strided(rhs), got.data(), got.cols(), fraction_bits, begin, end);
        },
        [&](Eigen::Index i, Eigen::Index j) { return narrow_dot(lhs, rhs, i, j, fraction_bits); });
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
            for (const Eigen::Index chunk : {s.cols, Eigen::Index(8)}) {
                CHECK(narrow_differences(a, b, chunk, bits) == 0);
                CHECK(narrow_differences(a, bt.transpose(), chunk, bits) == 0);
                CHECK(narrow_differences(at.transpose(), b, chunk, bits) == 0);
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
