// SPDX-License-Identifier: Apache-2.0
// The ordered GEMM against Eigen's own product, bit for bit, in every operand layout.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

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

// lhs * rhs by the ordered GEMM, in chunks of `chunk` columns as the trainer runs it,
// against Eigen's single product; returns the number of differing elements.
template <class Lhs, class Rhs>
int differences(const Lhs& lhs, const Rhs& rhs, Eigen::Index chunk) {
    Matrix expected(lhs.rows(), rhs.cols());
    expected.noalias() = lhs * rhs;
    Matrix got = Matrix::Constant(lhs.rows(), rhs.cols(), 12345.0f);
    for (Eigen::Index begin = 0; begin < rhs.cols(); begin += chunk) {
        const Eigen::Index end = std::min(begin + chunk, rhs.cols());
        panel_ordered_gemm(strided(lhs), strided(rhs), got.data(), got.cols(),
                           eigen_depth_panel(lhs.rows(), end - begin, lhs.cols()), begin, end);
    }
    int count = 0;
    for (Eigen::Index i = 0; i < got.size(); ++i) count += !same(got.data()[i], expected.data()[i]);
    return count;
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
