// The recipe table and the one quantize(): every recipe casts every role on the CPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "emulator/convert.hpp"
#include "emulator/experiment.hpp"
#include "emulator/quantize.hpp"
#include "tests/gpu/hard_tensor.hpp"

using namespace fp8lab;
using namespace fp8lab::emu;

namespace {

const TensorRole kRoles[] = {TensorRole::Input, TensorRole::Weight, TensorRole::GradOutput};

}  // namespace

TEST_CASE("every recipe of the table casts every role on the CPU, with its element format and blocks") {
    const std::size_t rows = 32, cols = 128;
    const std::vector<float> x = hard_tensor(rows * cols, 5);
    for (const Recipe& r : recipes()) {
        CAPTURE(fp8_recipe_name(r.id));
        CHECK(parse_enum<Fp8Recipe>(fp8_recipe_name(r.id)) == r.id);  // a name for the CLI, JSON and Python
        CHECK(&recipe(r.id) == &r);
        CHECK_FALSE(r.label.empty());
        CHECK_FALSE(r.library.empty());
        CHECK_FALSE(r.scale_from.empty());
        CHECK_FALSE(r.accumulation.empty());
        Experiment e;
        set_recipe(e, r.id);
        validate(e);  // its default experiment is a valid one
        const Recipe cast = recipe_of(e.numerics);
        RecipeState state;
        for (TensorRole role : kRoles) {
            const QuantizedTensor q = quantize(x, rows, cols, cast, {"t", role, 1, 7, false}, state);
            CHECK(q.format == r.formats.of(role));
            const BlockShape b = r.blocks.of(role).shape(rows, cols);
            CHECK(q.block.rows == b.rows);
            CHECK(q.block.cols == b.cols);
            CHECK(q.codes.size() == x.size());
        }
    }
}
