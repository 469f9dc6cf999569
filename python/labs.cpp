// SPDX-License-Identifier: Apache-2.0
// The labs from Python: run_step(lab, step, **params) returns what the step shows (tables,
// metrics, figures with their data, notes, the exercise), as the GUI and `fp8lab run` do.
#include <dlfcn.h>
#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "gpu/probe.hpp"
#include "labs/framework/answer_outputs.hpp"
#include "labs/framework/data_directory.hpp"
#include "labs/logic/curriculum.hpp"
#include "python/bindings.hpp"

namespace fp8lab::python {
namespace {

// The lab texts, read once (an instructor's edits need a new interpreter, as in the app).
const labs::Catalog& catalog() {
    static const labs::Catalog c = [] {
        labs::Catalog loaded = labs::load_curriculum();
        if (!loaded.errors.empty()) {
            std::string text = "the lab texts in " + labs::content_directory() + " did not load:";
            for (const labs::TextError& e : loaded.errors) text += "\n  " + e.describe();
            throw std::runtime_error(text);
        }
        return loaded;
    }();
    return c;
}

py::array doubles(const std::vector<double>& v) {
    py::array_t<double> a(py::ssize_t(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

py::object cell_object(const labs::Cell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return py::str(*s);
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return py::int_(*i);
    return py::float_(std::get<double>(cell));
}

py::dict axis_dict(const labs::Axis& a) {
    py::dict d;
    d["label"] = a.label;
    d["scale"] = std::string(enum_name(a.scale));
    d["min"] = a.min ? py::object(py::float_(*a.min)) : py::object(py::none());
    d["max"] = a.max ? py::object(py::float_(*a.max)) : py::object(py::none());
    d["categories"] = a.categories;
    return d;
}

py::dict figure_dict(const labs::Figure& f) {
    py::dict d;
    d["id"] = f.id;
    d["title"] = f.title;
    d["x_axis"] = axis_dict(f.x_axis);
    d["y_axis"] = axis_dict(f.y_axis);
    py::list series;
    for (const labs::Series& s : f.series) {
        py::dict o;
        o["name"] = s.name;
        o["kind"] = std::string(enum_name(s.kind));
        o["x"] = doubles(s.x);
        o["y"] = doubles(s.y);
        if (!s.y_upper.empty()) o["y_upper"] = doubles(s.y_upper);
        if (s.kind == labs::SeriesKind::Bars) o["bar_width"] = s.bar_width;
        if (s.kind == labs::SeriesKind::Heatmap) {
            py::array_t<double> cells({py::ssize_t(s.rows), py::ssize_t(s.columns)});
            std::copy(s.values.begin(), s.values.end(), cells.mutable_data());
            o["values"] = cells;
            o["value_label"] = s.value_label;
        }
        o["dashed"] = s.dashed;
        const labs::Rgb c = labs::palette_colour(s.colour);
        o["colour"] = py::make_tuple(c.r / 255.0, c.g / 255.0, c.b / 255.0);
        series.append(o);
    }
    d["series"] = series;
    py::list annotations;
    for (const labs::Annotation& a : f.annotations) annotations.append(py::make_tuple(a.x, a.y, a.text));
    d["annotations"] = annotations;
    return d;
}

py::dict table_dict(const labs::Table& t) {
    py::dict d;
    d["id"] = t.id;
    d["title"] = t.title;
    py::list columns, units, rows;
    for (const labs::Column& c : t.columns) {
        columns.append(c.name);
        units.append(c.unit);
    }
    for (const auto& row : t.rows) {
        py::list r;
        for (const labs::Cell& cell : row) r.append(cell_object(cell));
        rows.append(r);
    }
    d["columns"] = columns;
    d["units"] = units;
    d["rows"] = rows;
    return d;
}

// A keyword as a parameter name: first_last_bf16 for first-last-bf16, which Python cannot spell.
std::string parameter_name(const labs::Parameters& p, const std::string& keyword) {
    for (const labs::ParameterSpec& spec : p.schema()) {
        std::string spelled = spec.name;
        std::replace(spelled.begin(), spelled.end(), '-', '_');
        if (spec.name == keyword || spelled == keyword) return spec.name;
    }
    std::string known;
    for (const labs::ParameterSpec& spec : p.schema()) known += (known.empty() ? "" : ", ") + spec.name;
    throw py::value_error(emu::quoted_input(keyword) +
                          " is not a parameter of this step; its parameters: " + (known.empty() ? "none" : known));
}

py::dict run_step(const std::string& lab_id, const std::string& step_id, std::uint64_t seed,
                  const std::string& backend_name, bool instructor, const py::object& answer,
                  const py::kwargs& params) {
    const labs::Lab* lab = catalog().find(lab_id);
    if (!lab) {
        std::string ids;
        for (const labs::Lab& l : catalog().labs) ids += (ids.empty() ? "" : ", ") + l.id;
        throw py::value_error("lab: " + emu::quoted_input(lab_id) + " is not a lab; the labs: " + ids);
    }
    const labs::Step* step = lab->find_step(step_id);
    if (!step) {
        std::string ids;
        for (const labs::Step& s : lab->steps) ids += (ids.empty() ? "" : ", ") + s.logic.id;
        throw py::value_error("step: " + emu::quoted_input(step_id) + " is not a step of " + lab_id +
                              "; its steps: " + ids);
    }
    if (backend_name != "cpu" && backend_name != "gpu")
        throw py::value_error("backend: 'cpu' or 'gpu', not " + emu::quoted_input(backend_name));
    const labs::Backend backend = backend_name == "gpu" ? labs::Backend::Gpu : labs::Backend::Cpu;
    if (backend == labs::Backend::Gpu) {
        const gpu::ProbeResult probe = gpu::probe();
        if (!probe.ready) throw py::value_error("backend: no usable GPU: " + probe.reason);
    }
    if (!step->supports(backend))
        throw py::value_error("backend: " + lab_id + "/" + step_id + " does not run on " + backend_name);
    labs::Parameters parameters(step->logic.parameters);
    for (const auto& [key, value] : params) {
        const std::string name = parameter_name(parameters, key.cast<std::string>());
        try {
            if (py::isinstance<py::bool_>(value))
                parameters.set(name, labs::ParameterValue(value.cast<bool>()));
            else
                parameters.set_text(name, py::str(value).cast<std::string>());
        } catch (const labs::ParameterError& e) {
            throw py::value_error(e.what());
        }
    }
    labs::RunContext context(backend, seed);
    labs::StepOutput output;
    {
        py::gil_scoped_release released;  // a training step runs for seconds
        output = step->run(parameters, context);
    }
    std::optional<labs::Feedback> feedback;
    if (!answer.is_none()) {
        if (!step->exercise) throw py::value_error("answer: " + lab_id + "/" + step_id + " has no exercise");
        feedback = step->exercise->check(py::str(answer).cast<std::string>());
    }
    // What gives the exercise's answer away stays hidden until it is answered right, as in the app.
    if (!instructor && !(feedback && feedback->correct)) output = labs::with_answer_hidden(output);

    py::dict d;
    d["lab"] = lab_id;
    d["step"] = step_id;
    d["title"] = step->title;
    py::dict used;
    for (const auto& [name, value] : parameters.values()) used[py::str(name)] = labs::value_text(value);
    d["parameters"] = used;
    py::list tables, figures, listings;
    for (const labs::Table& t : output.tables) tables.append(table_dict(t));
    for (const labs::Figure& f : output.figures) figures.append(figure_dict(f));
    py::dict metrics;
    for (const labs::Metric& m : output.metrics) metrics[py::str(m.name)] = m.value;
    for (const labs::CodeListing& l : output.listings) {
        py::dict o;
        o["id"] = l.id;
        o["title"] = l.title;
        o["language"] = l.language;
        o["code"] = l.code;
        listings.append(o);
    }
    d["tables"] = tables;
    d["figures"] = figures;
    d["metrics"] = metrics;
    d["listings"] = listings;
    d["notes"] = output.notes;
    if (step->exercise) {
        py::dict e;
        e["prompt"] = step->exercise->prompt;
        e["choices"] = step->exercise->choices;
        if (feedback) {
            e["answer"] = py::str(answer);
            e["correct"] = feedback->correct;
            e["hint"] = feedback->hint;
        }
        d["exercise"] = e;
    }
    return d;
}

// Draws one figure of run_step's result with Matplotlib (imported when called).
constexpr const char* kPlotHelper = R"py(
def plot_figure(figure, ax=None):
    """Draw one figure of run_step()'s result on a Matplotlib axes (a new one by default)."""
    import numpy as np
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("plot_figure needs Matplotlib (pip install matplotlib)") from e
    if ax is None:
        ax = plt.figure().add_subplot()
    scales = {"linear": "linear", "log10": "log", "log2": "log", "symlog": "symlog"}
    for s in figure["series"]:
        style = dict(color=s["colour"], label=s["name"] or None)
        if s["kind"] in ("line", "stairs"):
            ax.plot(s["x"], s["y"], linestyle="--" if s["dashed"] else "-",
                    drawstyle="steps-post" if s["kind"] == "stairs" else "default", **style)
        elif s["kind"] == "scatter":
            ax.scatter(s["x"], s["y"], s=12, **style)
        elif s["kind"] == "band":
            ax.fill_between(s["x"], s["y"], s["y_upper"], alpha=0.25, **style)
        elif s["kind"] == "bars":
            ax.bar(s["x"], s["y"], width=s["bar_width"], **style)
        elif s["kind"] == "histogram":
            ax.stairs(s["y"], s["x"], fill=True, alpha=0.6, **style)
        elif s["kind"] == "vertical-lines":
            for x in s["x"]:
                ax.axvline(x, linewidth=0.5, color=s["colour"])
        elif s["kind"] == "heatmap":
            image = ax.imshow(s["values"], aspect="auto", origin="lower")
            ax.figure.colorbar(image, ax=ax, label=s["value_label"])
    for axis, name in ((figure["x_axis"], "x"), (figure["y_axis"], "y")):
        getattr(ax, "set_" + name + "label")(axis["label"])
        if axis["scale"] != "linear":
            base = {"base": 2} if axis["scale"] == "log2" else {}
            getattr(ax, "set_" + name + "scale")(scales[axis["scale"]], **base)
        if axis["categories"]:
            getattr(ax, "set_" + name + "ticks")(np.arange(len(axis["categories"])), axis["categories"])
    for x, y, text in figure["annotations"]:
        ax.annotate(text, (x, y))
    ax.set_title(figure["title"])
    if any(s["name"] for s in figure["series"]):
        ax.legend()
    return ax
)py";

}  // namespace

void add_labs(py::module_& m) {
    // The lab texts and recordings beside the module: a pip-installed package's
    // fp8lab_data/ (setup.py copies them there), or PREFIX/share/fp8lab for a module that
    // cmake --install put in PREFIX/lib/python3.X/dist-packages. Else the usual search.
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&add_labs), &info) && info.dli_fname) {
        const std::filesystem::path here = std::filesystem::path(info.dli_fname).parent_path();
        for (const std::filesystem::path& data :
             {here / "fp8lab_data", here / ".." / ".." / ".." / "share" / "fp8lab"}) {
            std::error_code error;
            if (std::filesystem::is_directory(data / "content", error)) {
                labs::set_data_root(data.lexically_normal().string());
                break;
            }
        }
    }
    m.def(
        "labs",
        [] {
            py::list out;
            for (const labs::Lab& l : catalog().labs) {
                py::list steps;
                for (const labs::Step& s : l.steps) steps.append(py::make_tuple(s.logic.id, s.title));
                py::dict d;
                d["id"] = l.id;
                d["title"] = l.title;
                d["steps"] = steps;
                out.append(d);
            }
            return out;
        },
        "The labs in order: each a dict of id, title and steps (id, title), the names run_step takes");
    m.def("run_step", &run_step, py::arg("lab"), py::arg("step"), py::kw_only(), py::arg("seed") = 1,
          py::arg("backend") = "cpu", py::arg("instructor") = false, py::arg("answer") = py::none(),
          "Run one step of a lab with its parameters given as keywords (first_last_bf16 for first-last-bf16; "
          "the rest at their defaults) and return what it shows: tables (columns, units, rows), metrics by name, "
          "figures with their data (series of x and y arrays; plot_figure draws one), code listings, notes and "
          "the exercise. What gives the exercise's answer away is hidden unless answer= is right or "
          "instructor=True, as in the app");
    py::exec(kPlotHelper, m.attr("__dict__"));
}

}  // namespace fp8lab::python
