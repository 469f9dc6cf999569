// SPDX-License-Identifier: Apache-2.0
// The paired comparison of two runs over the same seeds: Student's t, the interval, its
// words, and the interval's coverage on simulated runs with a known effect.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "emulator/training/paired_comparison.hpp"

using namespace fp8lab::emu;

TEST_CASE("Student's t at 97.5%, against its tabulated values") {
    CHECK(student_t_975(1) == doctest::Approx(12.7062).epsilon(1e-5));
    CHECK(student_t_975(2) == doctest::Approx(4.30265).epsilon(1e-5));
    CHECK(student_t_975(3) == doctest::Approx(3.18245).epsilon(1e-5));
    CHECK(student_t_975(10) == doctest::Approx(2.22814).epsilon(1e-5));
    CHECK(student_t_975(30) == doctest::Approx(2.04227).epsilon(1e-5));
    CHECK(student_t_975(1000) == doctest::Approx(1.96234).epsilon(1e-4));
    CHECK_THROWS_AS(student_t_975(0), std::invalid_argument);
}

TEST_CASE("a consistent 1% gap under a 5% spread of the seeds is a difference") {
    // The seeds' own losses differ by about 5%; the variant is 1% above its baseline on
    // each seed, give or take 0.1%. Unpaired ranges overlap; paired, the gap is plain.
    const std::vector<double> baseline{1.00, 1.05, 0.97, 1.02};
    const std::vector<double> variant{1.00 * 1.0116, 1.05 * 1.0139, 0.97 * 1.0101, 1.02 * 1.0112};
    const PairedComparison c = compare_paired(baseline, variant);
    CHECK(c.differs());
    CHECK(c.low > 1.0);
    CHECK(c.worse == 4);
    CHECK(c.mean_ratio == doctest::Approx(1.0117).epsilon(1e-4));
    CHECK(paired_words(c, "FP8 delayed", "BF16").find("FP8 delayed 1.2% worse than BF16 (95% interval +0.9") == 0);
    CHECK(paired_words(c, "FP8 delayed", "BF16").find("worse on 4 of 4 seeds") != std::string::npos);
}

TEST_CASE("identical runs: no difference found") {
    const std::vector<double> runs{0.5, 0.6, 0.55};
    const PairedComparison c = compare_paired(runs, runs);
    CHECK_FALSE(c.differs());
    CHECK(c.low == 1.0);
    CHECK(c.high == 1.0);
    CHECK(c.equal == 3);
    CHECK(paired_words(c, "FP8", "BF16") == "no difference found at 3 seeds (+0.0%, 95% interval +0.0% to +0.0%)");
}

TEST_CASE("a difference whose interval holds zero is no finding; one seed has no interval") {
    const PairedComparison mixed =
        compare_paired(std::vector{1.0, 1.0, 1.0, 1.0}, std::vector{1.01, 0.99, 1.02, 0.985});
    CHECK_FALSE(mixed.differs());
    CHECK(mixed.low < 1.0);
    CHECK(mixed.high > 1.0);
    CHECK(paired_words(mixed, "FP8", "BF16").find("no difference found at 4 seeds") == 0);
    const PairedComparison one = compare_paired(std::vector{1.0}, std::vector{1.5});
    CHECK_FALSE(one.has_interval());
    CHECK_FALSE(one.differs());
    CHECK(paired_words(one, "FP8", "BF16").find("no interval") != std::string::npos);
}

TEST_CASE("an interval's ends never read as 0.0% unless they are 1, and the estimate is given") {
    PairedComparison c;
    c.ratios = {1.0, 1.0};
    c.mean_ratio = 0.9945, c.low = 0.989, c.high = 1.0001;  // width 1.1 points: one decimal would print +0.0%
    CHECK(percent_decimals(c) == 2);
    CHECK(paired_words(c, "", "") == "no difference found at 2 seeds (-0.55%, 95% interval -1.10% to +0.01%)");
    c.low = 0.95, c.high = 1.04;
    CHECK(percent_decimals(c) == 1);
    CHECK(percent_text(1.0123, 2) == "+1.23%");
}

TEST_CASE("unpaired or unusable losses are refused") {
    CHECK_THROWS_AS(compare_paired(std::vector{1.0, 2.0}, std::vector{1.0}), std::invalid_argument);
    CHECK_THROWS_AS(compare_paired(std::vector<double>{}, std::vector<double>{}), std::invalid_argument);
    CHECK_THROWS_AS(compare_paired(std::vector{1.0}, std::vector{std::nan("")}), std::invalid_argument);
    CHECK_THROWS_AS(compare_paired(std::vector{0.0}, std::vector{1.0}), std::invalid_argument);
}

TEST_CASE("the 95% interval holds the true ratio in about 95% of simulated comparisons") {
    // Each simulated seed: a baseline loss with a 5% spread between seeds, and a variant
    // whose log-ratio to it is normal around log(1.01) with a 0.5% spread.
    std::mt19937_64 draw(20261207);
    std::normal_distribution<double> seed_spread(0.0, 0.05), effect(std::log(1.01), 0.005);
    for (const int seeds : {3, 4, 8}) {
        const int trials = 4000;
        int covered = 0, found = 0;
        for (int trial = 0; trial < trials; ++trial) {
            std::vector<double> baseline, variant;
            for (int k = 0; k < seeds; ++k) {
                baseline.push_back(std::exp(seed_spread(draw)));
                variant.push_back(baseline.back() * std::exp(effect(draw)));
            }
            const PairedComparison c = compare_paired(baseline, variant);
            covered += c.low <= 1.01 && 1.01 <= c.high;
            found += c.differs();
        }
        const double coverage = double(covered) / trials;
        MESSAGE(seeds << " seeds: coverage " << coverage << ", the 1% effect found in " << found << " of " << trials);
        // Binomial standard error at 4000 trials: 0.0034; four of them either side.
        CHECK(coverage > 0.95 - 0.014);
        CHECK(coverage < 0.95 + 0.014);
    }
}
