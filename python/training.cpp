// The CPU trainer from an experiment description (a dict or JSON text), for notebooks.
#include <pybind11/stl.h>

#include "emulator/experiment.hpp"
#include "emulator/mlp_trainer.hpp"
#include "emulator/parallel.hpp"
#include "python/bindings.hpp"

namespace fp8lab::python {
namespace {

emu::Experiment experiment_argument(const py::object& experiment) {
    std::string text;
    if (py::isinstance<py::str>(experiment)) text = experiment.cast<std::string>();
    else if (py::isinstance<py::dict>(experiment)) text = py::module_::import("json").attr("dumps")(experiment).cast<std::string>();
    else throw py::value_error("experiment: must be a dict or JSON text (see fp8lab.default_experiment())");
    try {
        return emu::experiment_from_json(text, "experiment");
    } catch (const std::runtime_error& e) {
        throw py::value_error(e.what());
    }
}

py::dict train(const py::object& experiment_object, int threads) {
    const emu::Experiment e = experiment_argument(experiment_object);
    try {
        emu::check_cpu_supports(e);
    } catch (const std::invalid_argument& err) {
        throw py::value_error(std::string("experiment: ") + err.what());
    }
    emu::TrainerResult r;
    {
        py::gil_scoped_release release;
        if (threads > 0) emu::set_max_threads(threads);
        r = emu::train_mlp(e);
    }
    py::dict out;
    out["loss"] = py::array_t<float>(py::ssize_t(r.loss.size()), r.loss.data());
    if (!r.accuracy.empty()) out["accuracy"] = py::array_t<float>(py::ssize_t(r.accuracy.size()), r.accuracy.data());
    out["final_loss"] = emu::final_loss(r.loss);
    out["description"] = emu::describe(e);
    out["gradients_flushed_fraction"] = r.flushed_fraction();
    if (!r.skipped_steps.empty()) out["skipped_steps"] = r.skipped_steps;
    if (!r.loss_scale.empty()) out["loss_scale"] = r.loss_scale;
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

}  // namespace

void add_training(py::module_& m) {
    m.def("default_experiment", [] { return py::module_::import("json").attr("loads")(emu::to_json(emu::Experiment{})); },
          "The labs' default experiment as a dict: change fields, then train(it)");
    m.def("describe", [](const py::object& e) { return emu::describe(experiment_argument(e)); }, py::arg("experiment"));
    m.def("train", &train, py::arg("experiment"), py::arg("threads") = 0,
          "Train the experiment on the CPU emulator (bit-exact, deterministic for any thread count); returns a dict "
          "with the loss per step, final_loss (mean of the last 10), and the inference evaluation where enabled");
}

}  // namespace fp8lab::python
