// SPDX-License-Identifier: Apache-2.0
// Progress: per lab from the solved set, and the progress file a student hands in.
#include <doctest/doctest.h>

#include <stdexcept>

#include "labs/logic/curriculum.hpp"
#include "labs/framework/progress.hpp"

using namespace fp8lab::labs;

TEST_CASE("progress counts each lab's solved exercises among its steps with one") {
    const Catalog c = load_curriculum();
    const std::vector<LabProgress> none = progress_by_lab(c, {});
    REQUIRE(none.size() == c.labs.size());
    int exercises = 0;
    for (const LabProgress& p : none) {
        CHECK(p.solved == 0);
        exercises += p.exercises;
    }
    CHECK(exercises > 20);
    const std::vector<LabProgress> some = progress_by_lab(
        c, {"formats/bits-to-value", "formats/ocp-vs-ieee", "nolab/nostep", "formats/range-and-precision"});
    CHECK(some[0].lab->id == "formats");
    CHECK(some[0].solved == 3);  // an unknown step does not count
    // Nor does a step without an exercise (the first one the catalog has, if any).
    for (std::size_t l = 0; l < c.labs.size(); ++l)
        for (const Step& step : c.labs[l].steps)
            if (!step.exercise) {
                const std::vector<LabProgress> p = progress_by_lab(c, {c.labs[l].id + "/" + step.logic.id});
                CHECK(p[l].solved == 0);
                return;
            }
}

TEST_CASE("a progress file round-trips and a bad one is refused with its line") {
    ProgressFile p;
    p.student = "Ada Lovelace";
    p.solved = {"formats/bits-to-value", "rounding/modes"};
    const ProgressFile back = read_progress_file(progress_file_text(p), "p.txt");
    CHECK(back.student == p.student);
    CHECK(back.solved == p.solved);
    CHECK_THROWS_WITH_AS(read_progress_file("student = x\n", "a.txt"),
                         doctest::Contains("a.txt:1: not an fp8lab progress file"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_progress_file("# fp8lab progress v1\nstudent = x\nsolved = nolab\n", "b.txt"),
                         doctest::Contains("b.txt:3: solved 'nolab' is not lab/step"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_progress_file("# fp8lab progress v1\nscore = 10\n", "c.txt"),
                         doctest::Contains("c.txt:2: unknown key 'score'"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_progress_file("# fp8lab progress v1\nsolved = a/b\n", "d.txt"),
                         doctest::Contains("d.txt: no student line"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_progress_file("", "e.txt"), doctest::Contains("e.txt:1: empty"), std::runtime_error);
}
