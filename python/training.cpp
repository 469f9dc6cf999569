// SPDX-License-Identifier: Apache-2.0
// The CPU trainer from an experiment description (a dict or JSON text), for notebooks.
#include <pybind11/stl.h>

#include <fstream>
#include <optional>
#include <type_traits>
#include <limits>
#include <sstream>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/base/available_memory.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/models/cpu_training.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/models/run_comparison.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/quoted_input.hpp"
#include "emulator/scaling/recipe.hpp"
#include "emulator/training/paired_comparison.hpp"
#include "emulator/io/user_files.hpp"
#include "python/bindings.hpp"

namespace fp8lab::python {
namespace {

emu::Experiment experiment_argument(const py::object& experiment) {
    std::string text;
    if (py::isinstance<py::str>(experiment))
        text = experiment.cast<std::string>();
    else if (py::isinstance<py::dict>(experiment)) {
        // allow_nan=False: NaN and infinity are no experiment's numbers; say so by name
        // instead of writing them as non-JSON the reader can only call "expected a value".
        try {
            using namespace pybind11::literals;
            text = py::module_::import("json").attr("dumps")(experiment, "allow_nan"_a = false).cast<std::string>();
        } catch (const py::error_already_set& e) {
            if (!e.matches(PyExc_ValueError)) throw;
            throw py::value_error("experiment: every number must be finite (a NaN or an infinity is in it)");
        }
    } else
        throw py::value_error("experiment: must be a dict or JSON text (see fp8lab.default_experiment())");
    try {
        return emu::experiment_from_json(text, "experiment");
    } catch (const std::runtime_error& e) {
        throw py::value_error(e.what());
    }
}

// Every FP8 cast's numerics as equal-length columns (the CSV of `train --stats`).
py::dict numerics_columns(const std::vector<emu::TensorNumerics>& records) {
    std::vector<std::uint64_t> step, elements, zeros, flushed, saturated, subnormal;
    std::vector<std::string> tensor;
    std::vector<float> amax, scale;
    std::vector<double> error;
    for (const emu::TensorNumerics& r : records) {
        step.push_back(r.step);
        tensor.push_back(r.tensor);
        amax.push_back(r.amax);
        scale.push_back(r.scale);
        elements.push_back(r.elements);
        zeros.push_back(r.zeros);
        flushed.push_back(r.flushed);
        saturated.push_back(r.saturated);
        subnormal.push_back(r.subnormal);
        error.push_back(r.relative_error);
    }
    const auto column = [](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        return py::array_t<T>(py::ssize_t(v.size()), v.data());
    };
    py::dict out;
    out["step"] = column(step);
    out["tensor"] = tensor;
    out["amax"] = column(amax);
    out["scale"] = column(scale);
    out["elements"] = column(elements);
    out["zeros"] = column(zeros);
    out["flushed"] = column(flushed);
    out["saturated"] = column(saturated);
    out["subnormal"] = column(subnormal);
    out["relative_error"] = column(error);
    return out;
}

py::dict train(const py::object& experiment_object, int threads, bool numerics) {
    const emu::Experiment e = experiment_argument(experiment_object);
    try {
        emu::check_cpu_supports(e);
    } catch (const std::invalid_argument& err) {
        throw py::value_error(std::string("experiment: ") + err.what());
    }
    if (threads < 0) throw py::value_error("threads: must be 0 (every core) or more, not " + std::to_string(threads));
    // Refused before allocating, as the CLI does: a model that does not fit would swap the machine to a halt.
    if (const std::string shortfall =
            emu::memory_shortfall(emu::cpu_training_bytes(e), "this model and batch on the CPU emulator");
        !shortfall.empty())
        throw py::value_error("experiment: " + shortfall + "; make " + emu::cpu_model(e.model.kind).size_fields +
                              " smaller");
    emu::TrainerResult r;
    std::vector<double> finals;  // every seed's final loss: the first run's, then the others'
    {
        py::gil_scoped_release release;
        if (threads > 0) emu::set_max_threads(threads);
        try {
            r = emu::train_on_cpu(emu::with_seed(e, 0), {}, false, numerics);
            finals.push_back(emu::final_loss(r.loss));
            for (int k = 1; k < e.seeds; ++k)
                finals.push_back(emu::final_loss(emu::train_on_cpu(emu::with_seed(e, k)).loss));
        } catch (const std::runtime_error& err) {  // the text task's corpus, named (no Python object made here)
            throw py::value_error(std::string("experiment: ") + err.what());
        }
    }
    py::dict out;
    if (e.seeds > 1) {  // the spread beside the first seed's curve
        const emu::SeedSpread s = emu::spread_of(finals);
        py::dict spread;
        spread["final_losses"] = finals;
        spread["mean"] = s.mean;
        spread["least"] = s.least;
        spread["largest"] = s.largest;
        out["seeds"] = spread;
    }
    out["loss"] = py::array_t<float>(py::ssize_t(r.loss.size()), r.loss.data());
    if (!r.accuracy.empty()) out["accuracy"] = py::array_t<float>(py::ssize_t(r.accuracy.size()), r.accuracy.data());
    out["final_loss"] = emu::final_loss(r.loss);
    out["description"] = emu::describe(e);
    out["gradients_flushed_fraction"] = r.flushed_fraction();
    out["gradients_zero_fraction"] = r.zero_gradient_fraction();
    out["weight_change"] = r.weight_change;
    if (!r.skipped_steps.empty()) out["skipped_steps"] = r.skipped_steps;
    if (!r.loss_scale.empty()) out["loss_scale"] = r.loss_scale;
    if (numerics) out["numerics"] = numerics_columns(r.numerics);
    if (r.text) {  // the transformer's text task
        py::dict t;
        t["corpus"] = r.text->corpus;
        t["parameters"] = r.text->parameters;
        std::vector<int> steps;
        std::vector<double> bits;
        for (const emu::ValidationPoint& v : r.text->validation) {
            steps.push_back(v.step);
            bits.push_back(v.bits_per_byte);
        }
        t["validation_steps"] = steps;
        t["validation_bits_per_byte"] = bits;
        t["prompt"] = r.text->prompt;
        t["greedy"] = r.text->greedy;
        t["sampled"] = r.text->sampled;
        out["text"] = t;
    }
    if (r.inference) {
        py::dict i;
        i["evaluated_rows"] = r.inference->evaluated_rows;
        i["output_error"] = r.inference->output_error;
        i["reference_loss"] = r.inference->reference_loss;
        i["quantized_loss"] = r.inference->quantized_loss;
        if (e.task.kind == emu::TaskKind::GaussianClusters) {
            i["reference_accuracy"] = r.inference->reference_accuracy;
            i["quantized_accuracy"] = r.inference->quantized_accuracy;
            i["agreement"] = r.inference->agreement;
        }
        out["inference"] = i;
    }
    return out;
}

// An amax trace file (fp8lab's CSV, written by `fp8lab train --trace` or the GPU) as a dict
// of equal-length columns.
py::dict read_trace(const std::string& path) {
    emu::AmaxTrace trace;
    try {
        std::istringstream in(emu::read_user_file("path", path));
        trace = emu::read_amax_trace(in, path);
    } catch (const std::exception& e) {  // the file (a FIFO, a folder, too large) or its contents
        throw py::value_error(e.what());
    }
    std::vector<std::uint64_t> step;
    std::vector<std::string> tensor;
    std::vector<float> amax, scale;
    // The casts' numerics where the trace has them (v3, recorded): shares of the elements,
    // NaN for a record without them.
    std::vector<double> zeros, flushed, saturated, subnormal, relative_error;
    const double none = std::numeric_limits<double>::quiet_NaN();
    for (const emu::AmaxTraceRecord& r : trace.records) {
        step.push_back(r.step);
        tensor.push_back(r.tensor);
        amax.push_back(r.amax);
        scale.push_back(r.scale);
        const emu::TensorNumerics* n = r.numerics ? &*r.numerics : nullptr;
        const double count = n && n->elements ? double(n->elements) : 1.0;
        zeros.push_back(n ? double(n->zeros) / count : none);
        flushed.push_back(n ? double(n->flushed) / count : none);
        saturated.push_back(n ? double(n->saturated) / count : none);
        subnormal.push_back(n ? double(n->subnormal) / count : none);
        relative_error.push_back(n ? n->relative_error : none);
    }
    py::dict out;
    out["header"] = py::dict();
    for (const auto& [k, v] : trace.header) out["header"][py::str(k)] = v;
    out["step"] = py::array_t<std::uint64_t>(py::ssize_t(step.size()), step.data());
    out["tensor"] = tensor;
    out["amax"] = py::array_t<float>(py::ssize_t(amax.size()), amax.data());
    out["scale"] = py::array_t<float>(py::ssize_t(scale.size()), scale.data());
    const auto column = [](const std::vector<double>& v) {
        return py::array_t<double>(py::ssize_t(v.size()), v.data());
    };
    out["zeros"] = column(zeros);
    out["flushed"] = column(flushed);
    out["saturated"] = column(saturated);
    out["subnormal"] = column(subnormal);
    out["relative_error"] = column(relative_error);
    return out;
}

// What delayed scaling with other settings would have done on a recorded trace.
py::dict replay_trace(const std::string& path, int history, const std::string& algorithm, int margin,
                      const std::string& formats) {
    const std::optional<emu::AmaxAlgorithm> a = parse_enum<emu::AmaxAlgorithm>(algorithm);
    if (!a) throw py::value_error("algorithm: '" + algorithm + "' is not " + enum_choices<emu::AmaxAlgorithm>());
    const std::optional<emu::FormatRecipe> f = parse_enum<emu::FormatRecipe>(formats);
    if (!f) throw py::value_error("formats: '" + formats + "' is not " + enum_choices<emu::FormatRecipe>());
    const emu::DelayedScalingConfig config{history, *a, margin};
    std::vector<emu::ReplayRow> rows;
    try {
        emu::validate(config);
        std::istringstream in(emu::read_user_file("path", path));
        rows = emu::replay_delayed_scaling(emu::read_amax_trace(in, path), *f, config);
    } catch (const std::exception& e) {
        throw py::value_error(e.what());
    }
    std::vector<std::uint64_t> step;
    std::vector<std::string> tensor;
    std::vector<float> amax, scale;
    std::vector<bool> overflows;
    std::vector<std::int64_t> overflowed, flushed;
    for (const emu::ReplayRow& r : rows) {
        step.push_back(r.step);
        tensor.push_back(r.tensor);
        amax.push_back(r.amax);
        scale.push_back(r.scale);
        overflows.push_back(r.amax_overflows);
        overflowed.push_back(r.overflowed_at_least);
        flushed.push_back(r.flushed_at_least);
    }
    py::dict out;
    out["step"] = py::array_t<std::uint64_t>(py::ssize_t(step.size()), step.data());
    out["tensor"] = tensor;
    out["amax"] = py::array_t<float>(py::ssize_t(amax.size()), amax.data());
    out["scale"] = py::array_t<float>(py::ssize_t(scale.size()), scale.data());
    out["amax_overflows"] = py::array(py::cast(overflows));
    out["overflowed_at_least"] = py::array_t<std::int64_t>(py::ssize_t(overflowed.size()), overflowed.data());
    out["flushed_at_least"] = py::array_t<std::int64_t>(py::ssize_t(flushed.size()), flushed.data());
    return out;
}

// An experiment as a dict, with `recipe` (a name, or None for the experiment's own) set as
// `fp8lab train --recipe` sets it: the element formats follow the recipe (NVFP4 E2M1, ...).
py::object experiment_with_recipe(emu::Experiment e, const py::object& recipe) {
    if (!recipe.is_none()) {
        if (!py::isinstance<py::str>(recipe))
            throw py::type_error("recipe: a recipe name (" + enum_choices<emu::Fp8Recipe>() + ") or None");
        const std::string name = recipe.cast<std::string>();
        const std::optional<emu::Fp8Recipe> id = parse_enum<emu::Fp8Recipe>(name);
        if (!id)
            throw py::value_error("recipe: " + emu::quoted_input(name) + " is not " + enum_choices<emu::Fp8Recipe>());
        emu::set_recipe(e, *id);
    }
    return py::module_::import("json").attr("loads")(emu::to_json(e));
}

// Variants of one experiment on the same seeds, each compared with the first, paired.
py::dict compare(const py::object& experiment_object, const py::object& variants_object, int seeds, int threads) {
    emu::Experiment e = experiment_argument(experiment_object);
    if (seeds < 0) throw py::value_error("seeds: must be 0 (the experiment's) or more, not " + std::to_string(seeds));
    if (seeds > 0) e.seeds = seeds;
    if (threads < 0) throw py::value_error("threads: must be 0 (every core) or more, not " + std::to_string(threads));
    std::string list;
    if (py::isinstance<py::str>(variants_object)) {
        list = variants_object.cast<std::string>();
    } else {
        for (const py::handle& v : variants_object) list += (list.empty() ? "" : ",") + py::str(v).cast<std::string>();
    }
    std::vector<emu::RunVariant> variants;
    try {
        emu::validate(e);
        variants = emu::variants_from_list(e, list);
        for (const emu::RunVariant& v : variants) emu::check_cpu_supports(v.experiment);
    } catch (const std::invalid_argument& err) {
        throw py::value_error(std::string("compare: ") + err.what());
    }
    emu::RunComparison c;
    {
        py::gil_scoped_release release;
        if (threads > 0) emu::set_max_threads(threads);
        try {
            c = emu::compare_runs(variants, e.seeds);
        } catch (const std::runtime_error& err) {  // the text task's corpus, named
            throw py::value_error(std::string("experiment: ") + err.what());
        }
    }
    py::list rows;
    for (std::size_t i = 0; i < c.variants.size(); ++i) {
        const emu::ComparedVariant& v = c.variants[i];
        const emu::PairedComparison& p = v.against_baseline;
        py::dict row;
        row["name"] = v.name;
        row["finals"] = v.finals;
        row["ratios"] = p.ratios;
        row["mean_ratio"] = p.mean_ratio;
        row["low"] = p.low;
        row["high"] = p.high;
        row["worse"] = p.worse;
        row["better"] = p.better;
        row["differs"] = p.differs();
        row["finding"] = i == 0 ? std::string("baseline") : emu::paired_words(p, v.name, c.variants[0].name);
        rows.append(row);
    }
    py::dict out;
    out["measure"] = c.measure;
    out["seeds"] = c.seeds;
    out["baseline"] = c.variants[0].name;
    out["variants"] = rows;
    out["table"] = emu::comparison_table(c);
    return out;
}

}  // namespace

void add_training(py::module_& m) {
    m.def("read_trace", &read_trace, py::arg("path"),
          "An amax trace (fp8lab train --trace) as columns: step, tensor, amax, scale; the casts' numerics as "
          "shares of each tensor's elements (zeros, flushed, saturated, subnormal) and relative_error, NaN where "
          "the trace has none; and its header");
    m.def("replay_trace", &replay_trace, py::arg("path"), py::arg("history") = 1024, py::arg("algorithm") = "max",
          py::arg("margin") = 0, py::arg("formats") = "hybrid",
          "Delayed scaling with these settings replayed on a recorded trace: the scale of each record and what "
          "would have overflowed or flushed (lower bounds from the trace's histograms)");
    m.def(
        "default_experiment",
        [](const py::object& recipe) { return experiment_with_recipe(emu::Experiment{}, recipe); },
        py::arg("recipe") = py::none(),
        "fp8lab train's default experiment as a dict (a constant learning rate, one seed; the labs add a warm-up "
        "and cosine decay and 4 seeds: set optimizer.schedule and seeds): change fields, then train(it). "
        "recipe='nvfp4' (or any recipe's name) sets the recipe with the element formats it takes, as train --recipe "
        "does");
    m.def(
        "default_transformer_experiment",
        [](const py::object& recipe) { return experiment_with_recipe(emu::default_transformer_experiment(), recipe); },
        py::arg("recipe") = py::none(),
        "The byte-level transformer on text (model.kind 'transformer'): 2 blocks of width 128, sequences of 128 "
        "bytes, 8 a step; change fields, then train(it). recipe= as for default_experiment");
    m.def(
        "describe", [](const py::object& e) { return emu::describe(experiment_argument(e)); }, py::arg("experiment"));
    m.def("train", &train, py::arg("experiment"), py::arg("threads") = 0, py::arg("numerics") = false,
          "Train the experiment on the CPU emulator (bit-exact, deterministic for any thread count); returns a dict "
          "with the loss per step, final_loss (mean of the last 10), the inference evaluation where enabled, and for "
          "the transformer 'text': the corpus read, the validation loss in bits per byte and the text it wrote; "
          "with experiment['seeds'] > 1 the first seed's curve and, under 'seeds', every seed's final loss with "
          "their mean, least and largest (compare() compares runs); with numerics=True, 'numerics': every FP8 cast of "
          "the first seed's run (step, "
          "tensor, amax, scale, elements, zeros, flushed, saturated, subnormal, relative_error), as train --stats "
          "writes them");
    m.def("compare", &compare, py::arg("experiment"), py::arg("variants"), py::arg("seeds") = 0, py::arg("threads") = 0,
          "Train the experiment's variants on the same seeds on the CPU emulator and compare each with the first, "
          "seed by seed, as fp8lab train --compare does: variants 'bf16,delayed,mx-rceil' or a list of those names; "
          "seeds 0 keeps the experiment's. Returns measure, seeds, baseline, variants (each: name, finals and "
          "ratios per seed, mean_ratio with its 95% interval low..high from Student's t on the log-ratios, worse, "
          "better, differs, finding in words) and the table as text");
}

}  // namespace fp8lab::python
