// SPDX-License-Identifier: Apache-2.0
// Scaling recipes for NumPy: current scaling, a DelayedScaling object, and quantize() for
// the per-tensor and block recipes (codes, scales and the dequantised array).
#include <pybind11/stl.h>

#include <numeric>

#include "emulator/scaling/quantize.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/base/quoted_input.hpp"
#include "python/bindings.hpp"

namespace fp8lab::python {
namespace {

template <class T>
py::array_t<T> array_of(const std::vector<T>& v, std::vector<py::ssize_t> shape) {
    py::array_t<T> a(shape);
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

// The largest block side: the longest axis NumPy can hold is smaller, and a larger value
// would overflow the block grid's arithmetic.
constexpr long long kMaxBlockSide = 1ll << 40;

// One side of a block: a Python int from 1 to kMaxBlockSide (bool is refused, though it is an int).
std::size_t block_side(const py::handle& side, const char* what) {
    if (!py::isinstance<py::int_>(side) || py::isinstance<py::bool_>(side))
        throw py::type_error(std::string("block: ") + what + " must be an int, not " +
                             std::string(py::str(py::type::handle_of(side).attr("__name__"))));
    const py::int_ n = py::reinterpret_borrow<py::int_>(side);
    if (n < py::int_(1) || n > py::int_(kMaxBlockSide))
        throw py::value_error(std::string("block: ") + what + " must be from 1 to 2^40, not " +
                              std::string(py::str(side)));
    return std::size_t(n.cast<long long>());
}

// The block shape argument, read while the GIL is held (it calls the Python C API).
emu::BlockShape block_argument(const py::object& block, emu::BlockShape fallback) {
    if (block.is_none()) return fallback;
    if (py::isinstance<py::int_>(block) && !py::isinstance<py::bool_>(block))
        return {1, block_side(block, "the column count")};
    if (!py::isinstance<py::tuple>(block) && !py::isinstance<py::list>(block))
        throw py::type_error("block: must be a number of columns or a (rows, cols) pair");
    const py::sequence pair = py::reinterpret_borrow<py::sequence>(block);
    if (pair.size() != 2)
        throw py::value_error("block: a (rows, cols) pair has two sides, not " + std::to_string(pair.size()));
    return {block_side(pair[0], "rows"), block_side(pair[1], "cols")};
}

py::dict quantize(const py::object& x_object, const std::string& recipe_name, const py::object& fmt,
                  const py::object& block, bool power_of_two, const std::string& rounding, const py::object& saturate,
                  std::uint64_t seed, bool weight_tiles, bool stochastic, bool hadamard, std::uint64_t hadamard_seed) {
    const std::optional<emu::Fp8Recipe> id = parse_enum<emu::Fp8Recipe>(recipe_name);
    if (!id)
        throw py::value_error("recipe: " + emu::quoted_input(recipe_name) + " is not " +
                              enum_choices<emu::Fp8Recipe>());
    emu::Recipe recipe = emu::recipe(*id);
    if (recipe.rule == emu::ScaleRule::Delayed)
        throw py::value_error(
            "recipe: delayed scaling keeps state across steps: use fp8lab.DelayedScaling for the "
            "scale and encode(x * scale, fmt)");
    const py::array x_in = as_array(x_object);
    if (!holds<float>(x_in))
        throw py::value_error("x: the recipes compute in float32 (as a GPU does); pass x.astype(numpy.float32), not " +
                              std::string(py::str(x_in.dtype())));
    const py::array_t<float, py::array::c_style> x = c_order<float>(x_in);
    // Blocks run along the last axis (a GEMM's contraction); the others are rows.
    const std::size_t cols = x.ndim() == 0 ? 1 : std::size_t(x.shape(x.ndim() - 1));
    const std::size_t rows = cols == 0 ? 0 : std::size_t(x.size()) / cols;
    const std::span<const float> values(x.data(), std::size_t(x.size()));
    const emu::ConvertOptions options = convert_options(rounding, saturate, seed, 32);
    const emu::Format& f = format_argument(fmt, "fmt");
    // Python objects are read here, with the GIL held; below it is released. x is cast as
    // a GEMM's input: the recipe's input blocks, changed by the arguments.
    const emu::Blocking given = {emu::BlockKind::Block, block_argument(block, {1, 1})};
    const bool block_given = !block.is_none();
    if (!emu::recipe_allows(*id, f))
        throw py::value_error("fmt: the " + std::string(recipe_name) + " recipe takes " +
                              emu::allowed_formats_text(*id) + ", not " + std::string(f.name));
    recipe.formats = {&f, &f, &f};
    if (recipe.rule == emu::ScaleRule::Nvfp4) {
        if (block_given) throw py::value_error("block: NVFP4's blocks are 1 x 16 (weight_tiles: 16 x 16)");
        if (hadamard && cols % 16 != 0)
            throw py::value_error("hadamard: the transform needs the last axis in groups of 16");
        if (weight_tiles) recipe.blocks.input = recipe.blocks.weight;
        recipe.rounding.input = stochastic ? emu::RoundingMode::Stochastic : emu::RoundingMode::NearestEven;
        recipe.hadamard_wgrad = hadamard;
    } else {
        if (block_given) {
            if (recipe.blocks.input.kind != emu::BlockKind::Block)
                throw py::value_error("block: the " + std::string(recipe_name) + " recipe's scales are " +
                                      recipe.blocks.input.text() + "; block does not apply");
            const bool mx = recipe.rule == emu::ScaleRule::MxFloor || recipe.rule == emu::ScaleRule::MxRceil;
            if (mx && given.block.rows != 1) throw py::value_error("block: MX blocks are one row of columns");
            recipe.blocks.input = given;
        }
        if (power_of_two) {
            if (recipe.rule != emu::ScaleRule::Current)
                throw py::value_error("power_of_two: the " + std::string(recipe_name) + " recipe's scales are " +
                                      std::string(recipe.scale_type_text()));
            recipe.scale_type = emu::ScaleType::Float32PowerOfTwo;
        }
        recipe.rounding = {options.rounding, options.rounding, options.rounding};
        recipe.saturation = options.saturation;
    }
    const emu::Operand operand{"x", emu::TensorRole::Input, hadamard_seed, options.seed, hadamard};
    emu::QuantizedTensor q;
    {
        py::gil_scoped_release release;
        emu::RecipeState state;
        q = emu::quantize(values, rows, cols, recipe, operand, state);
    }
    const std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
    const std::vector<py::ssize_t> grid = {py::ssize_t(q.block_grid_rows()), py::ssize_t(q.block_grid_cols())};
    py::dict out;
    out["codes"] = array_of(q.codes, shape);
    out["dequantized"] = array_of(q.dequantize(), shape);
    out["scale_inv"] = array_of(q.block_scale_inv, grid);
    out["block_amax"] = array_of(q.block_amax, grid);
    out["block"] = py::make_tuple(q.block.rows, q.block.cols);
    out["format"] = py::cast(q.format, py::return_value_policy::reference);
    if (q.scale_format) {
        out["scale_codes"] = array_of(q.scale_codes, grid);
        out["scale_format"] = py::cast(q.scale_format, py::return_value_policy::reference);
    }
    if (recipe.scale_type == emu::ScaleType::E4M3TimesFloat32) out["tensor_scale_inv"] = q.tensor_scale_inv;
    py::dict counts;
    counts["elements"] = q.counts.elements;
    counts["nan"] = q.counts.nan_inputs;
    counts["inf"] = q.counts.inf_inputs;
    counts["overflowed"] = q.counts.overflowed;
    counts["flushed_to_zero"] = q.counts.flushed_to_zero;
    counts["subnormal"] = q.counts.subnormal;
    out["counts"] = counts;
    return out;
}

}  // namespace

void add_recipes(py::module_& m) {
    // The recipe table: each recipe's name and its default element format (of the input).
    py::dict table;
    for (const emu::Recipe& r : emu::recipes())
        table[py::str(std::string(emu::fp8_recipe_name(r.id)))] = std::string(r.formats.input->name);
    m.attr("recipes") = table;
    m.def(
        "current_scale",
        [](float amax, const py::object& fmt, bool power_of_two) {
            // amax is a magnitude: a negative one is a caller's mistake, not a negative scale.
            if (amax < 0) throw py::value_error("amax: a magnitude (max |x|), not " + std::to_string(amax));
            const emu::ScalePair s = emu::current_scale(amax, format_argument(fmt, "fmt"), power_of_two);
            return py::make_tuple(s.scale, s.scale_inv);
        },
        py::arg("amax"), py::arg("fmt"), py::arg("power_of_two") = false,
        "(scale, scale_inv) of current scaling: max / amax in float32, 1 for amax 0/Inf/NaN, FLT_MAX for an "
        "infinite quotient");

    py::class_<emu::DelayedScaling>(m, "DelayedScaling",
                                    "Transformer Engine's delayed scaling of one tensor: record each step's amax, "
                                    "then update() computes the scale the next step uses")
        .def(py::init([](const py::object& fmt, int history, const std::string& algorithm, int margin) {
                 const std::optional<emu::AmaxAlgorithm> a = parse_enum<emu::AmaxAlgorithm>(algorithm);
                 if (!a)
                     throw py::value_error("algorithm: " + emu::quoted_input(algorithm) + " is not " +
                                           enum_choices<emu::AmaxAlgorithm>());
                 const emu::DelayedScalingConfig config{history, *a, margin};
                 try {
                     emu::validate(config);
                 } catch (const std::invalid_argument& e) {
                     throw py::value_error(e.what());
                 }
                 return emu::DelayedScaling(format_argument(fmt, "fmt"), config);
             }),
             py::arg("fmt") = "e4m3", py::arg("history") = 1024, py::arg("algorithm") = "max", py::arg("margin") = 0)
        .def_property_readonly("scale", [](const emu::DelayedScaling& d) { return d.scale().scale; })
        .def_property_readonly("scale_inv", [](const emu::DelayedScaling& d) { return d.scale().scale_inv; })
        .def_property_readonly(
            "history",
            [](const emu::DelayedScaling& d) { return array_of(d.history(), {py::ssize_t(d.history().size())}); },
            "The amax history, newest first")
        .def("record", &emu::DelayedScaling::record_amax, py::arg("amax"), "This step's amax (history[0])")
        .def("update", &emu::DelayedScaling::update, "End the step: roll the history and compute the next scale")
        .def(
            "step",
            [](emu::DelayedScaling& d, float amax) {
                const emu::ScalePair used = d.scale();
                d.record_amax(amax);
                d.update();
                return py::make_tuple(used.scale, used.scale_inv);
            },
            py::arg("amax"), "record(amax) and update(); returns the (scale, scale_inv) this step used");

    m.def("quantize", &quantize, py::arg("x"), py::arg("recipe"), py::arg("fmt") = "e4m3",
          py::arg("block") = py::none(), py::arg("power_of_two") = false, py::arg("rounding") = "nearest-even",
          py::arg("saturate") = true, py::arg("seed") = 0, py::arg("weight_tiles") = false,
          py::arg("stochastic") = false, py::arg("hadamard") = false, py::arg("hadamard_seed") = 0,
          "Quantise float32 x as a GEMM's input with a recipe: current, mx-floor, mx-rceil, blockwise, nvfp4 (fmt "
          "e2m1) or rowwise (one scale per row). Blocks run along the last axis; block is a column count or (rows, "
          "cols). Returns a dict: codes, dequantized, "
          "scale_inv and block_amax per block, scale_codes and scale_format (E8M0 for MX, E4M3 for NVFP4), "
          "tensor_scale_inv (NVFP4) and the range counts.");
}

}  // namespace fp8lab::python
