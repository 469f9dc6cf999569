// SPDX-License-Identifier: Apache-2.0
// Step links: a link round-trips a step's state; a bad link opens the nearest valid state
// and names what it ignored.
#include <doctest/doctest.h>

#include "labs/logic/curriculum.hpp"
#include "labs/framework/step_link.hpp"

using namespace fp8lab;
using namespace fp8lab::labs;

TEST_CASE("a step link round-trips the lab, step, every parameter and the backend") {
    const Catalog c = load_curriculum();
    const Lab& lab = *c.find("rounding");
    const Step& step = *lab.find_step("stochastic");
    Parameters p(step.logic.parameters);
    p.set_text("format", "e5m2");
    p.set_text("delta", "0.0625");
    p.set_text("steps", "123");
    const std::string link = make_step_link(lab, step, p, Backend::Cpu);
    CHECK(link.rfind("fp8lab://rounding/stochastic?", 0) == 0);
    CHECK(link.find("format=e5m2") != std::string::npos);
    CHECK(link.find("backend=cpu") != std::string::npos);
    const OpenedLink opened = open_step_link(c, link);
    CHECK(opened.ignored.empty());
    CHECK(opened.lab == &lab);
    CHECK(opened.step == &step);
    CHECK(opened.parameters.values() == p.values());
    CHECK(opened.backend == Backend::Cpu);
    // A value of more than ten significant digits comes back as the same double.
    p.set_text("delta", "0.0123456789012345");
    const OpenedLink precise = open_step_link(c, make_step_link(lab, step, p, Backend::Cpu));
    CHECK(precise.ignored.empty());
    CHECK(precise.parameters.values() == p.values());
}

TEST_CASE("a bad link opens the nearest valid state and says what it ignored") {
    const Catalog c = load_curriculum();
    const OpenedLink unknown_step = open_step_link(c, "fp8lab://rounding/nope?format=e5m2&steps=99999999&colour=red");
    CHECK(unknown_step.lab == c.find("rounding"));
    CHECK(unknown_step.step == &c.find("rounding")->steps.front());
    REQUIRE(unknown_step.ignored.size() == 3);  // the step, a parameter the first step lacks, colour
    CHECK(unknown_step.ignored[0].find("no such step") != std::string::npos);

    const OpenedLink bad_values = open_step_link(c, "fp8lab://rounding/stochastic?format=e9m9&steps=20&delta=%zz");
    CHECK(bad_values.step == c.find("rounding")->find_step("stochastic"));
    CHECK(bad_values.parameters.integer("steps") == 20);      // the good one is taken
    CHECK(bad_values.parameters.choice("format") == "bf16");  // the bad ones keep their defaults
    CHECK(bad_values.ignored.size() == 2);

    const OpenedLink gpu_on_cpu_step = open_step_link(c, "fp8lab://formats/bits-to-value?backend=gpu");
    CHECK(gpu_on_cpu_step.backend == Backend::Cpu);
    CHECK(gpu_on_cpu_step.ignored.at(0).find("CPU emulator") != std::string::npos);

    const OpenedLink not_a_link = open_step_link(c, "https://example.com");
    CHECK(not_a_link.lab == &c.labs.front());
    CHECK(not_a_link.ignored.at(0).find("not an fp8lab:// link") != std::string::npos);

    const OpenedLink no_lab = open_step_link(c, "fp8lab://nolab");
    CHECK(no_lab.ignored.at(0).find("no such lab") != std::string::npos);
}
