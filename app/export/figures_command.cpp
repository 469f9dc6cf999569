// SPDX-License-Identifier: Apache-2.0
// `fp8lab figures`: runs every selected step and writes its figures, their CSV, a
// manifest and an HTML gallery. Deterministic: the same inputs write the same SVG and CSV.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "emulator/base/quoted_input.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "emulator/io/json_writer.hpp"
#include "app/cli/lab_selection.hpp"
#include "app/cli/step_output_text.hpp"
#include "app/files/atomic_file.hpp"
#include "app/files/folder_lock.hpp"
#include "app/options/number_text.hpp"
#include "app/options/usage_error.hpp"
#include "app/export/cairo_figure.hpp"
#include "app/export/export_folder.hpp"
#include "app/export/export_settings.hpp"
#include "app/export/figure_csv.hpp"
#include "gpu/probe.hpp"

namespace fp8lab::cli {
using files::FolderLock;
using options::decimal_float;
using options::pixel_size_option;
using options::PixelSize;
using options::real_in;
using options::seed_value;
using options::UsageError;
namespace {

namespace fs = std::filesystem;
using exporter::ImageFormat;

struct FiguresOptions {
    std::string out;
    std::string formats = "svg,png";
    std::string lab;
    bool lab_given = false;  // --lab, even empty (an error then), as against every step
    std::vector<std::string> sets;
    std::string backend = "cpu";
    std::string size = "1280x800";
    std::string theme = "light";
    double font_scale = 1.0;
    double png_scale = 1.0;
    std::uint64_t seed = 1;
    bool slides = false;  // --slides: exporter::ExportSettings::slides() unless given otherwise
};

std::vector<ImageFormat> parse_formats(const std::string& text) {
    std::vector<ImageFormat> formats;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string name = text.substr(start, comma - start);
        if (name == "svg")
            formats.push_back(ImageFormat::Svg);
        else if (name == "png")
            formats.push_back(ImageFormat::Png);
        else if (name == "pdf")
            formats.push_back(ImageFormat::Pdf);
        else
            throw UsageError("--format: " + emu::quoted_input(name) + " is not svg, png or pdf");
        start = comma + 1;
    }
    return formats;
}

void write_file(const fs::path& path, const std::string& content) {
    files::write_file_atomically(path.string(), content);
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '&')
            out += "&amp;";
        else if (c == '"')
            out += "&quot;";
        else
            out += c;
    }
    return out;
}

// What one run has written and what it could not: the manifest lists exactly the former.
struct ExportLog {
    std::vector<std::string> written;   // "lab/file", relative to --out
    std::vector<std::string> failures;  // "lab/step[/file]: reason"

    // Runs one part of the export; a failure is reported and logged, and the export goes on.
    bool attempt(const std::string& what, const std::function<void()>& part) {
        try {
            part();
            return true;
        } catch (const std::exception& e) {
            failures.push_back(what + ": " + e.what());
            std::fprintf(stderr, "error: %s\n", failures.back().c_str());
            return false;
        }
    }
    bool write(const std::string& name, const std::function<void()>& write_file) {
        const bool ok = attempt(name, write_file);
        if (ok) written.push_back(name);
        return ok;
    }
};

// Where a step's figure and table files go, relative to --out: LAB/STEP-ID.EXTENSION for a
// figure, LAB/STEP-table-ID.EXTENSION for a table (a step may give a figure and a table one id).
std::string step_file(const SelectedStep& s, const std::string& id, const std::string& extension) {
    return s.lab->id + "/" + s.step->logic.id + "-" + id + "." + extension;
}
std::string table_file(const SelectedStep& s, const labs::Table& t, const std::string& extension) {
    return step_file(s, "table-" + t.id, extension);
}

// A step's output, or why it has none, and how long it took to compute.
struct ComputedStep {
    labs::StepOutput output;
    std::string error;
    double seconds = 0;
};

// Runs every step, `workers` at a time (the steps are independent and their results do
// not depend on the order; on the CPU most of them use one core), and reports each as
// it finishes.
std::vector<ComputedStep> compute_steps(const std::vector<SelectedStep>& steps,
                                        const std::vector<labs::Parameters>& parameters, labs::Backend backend,
                                        std::uint64_t seed, unsigned workers) {
    std::vector<ComputedStep> computed(steps.size());
    std::atomic<std::size_t> next{0};
    std::size_t finished = 0;
    std::mutex report;
    const auto work = [&] {
        for (std::size_t i = next++; i < steps.size(); i = next++) {
            const auto start = std::chrono::steady_clock::now();
            try {
                labs::RunContext context(backend, seed);
                computed[i].output = steps[i].step->run(parameters[i], context);
            } catch (const std::exception& e) {
                computed[i].error = e.what();
            }
            computed[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const std::lock_guard<std::mutex> lock(report);
            std::fprintf(stderr, "[%zu/%zu] %s/%s: %s (%.2f s)\n", ++finished, steps.size(), steps[i].lab->id.c_str(),
                         steps[i].step->logic.id.c_str(), computed[i].error.empty() ? "done" : "FAILED",
                         computed[i].seconds);
        }
    };
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    return computed;
}

// One step's figures and tables into DIR; returns its manifest entry and adds to the gallery.
std::string export_step(const SelectedStep& s, const labs::Parameters& params, const ComputedStep& computed,
                        const FiguresOptions& o, const std::vector<ImageFormat>& formats, std::pair<int, int> size,
                        const plot::FigureStyle& style, std::string& html, ExportLog& log) {
    json::JsonWriter entry;
    begin_step_json(entry, *s.lab, *s.step, params);
    const std::string step_name = s.lab->id + "/" + s.step->logic.id;
    if (!log.attempt(step_name, [&] {
            if (!computed.error.empty()) throw std::runtime_error(computed.error);
        }))
        return {};
    const labs::StepOutput& output = computed.output;
    const fs::path dir = fs::path(o.out) / s.lab->id;
    if (!log.attempt(step_name, [&] { fs::create_directories(dir); })) return {};
    html += "<h3>" + html_escape(s.step->title) + "</h3>\n";
    const bool has_svg = std::find(formats.begin(), formats.end(), ImageFormat::Svg) != formats.end();
    const bool has_png = std::find(formats.begin(), formats.end(), ImageFormat::Png) != formats.end();
    const fs::path out(o.out);
    // One figure's or table's images in every format, its CSV and its gallery entry.
    const auto export_item = [&](const std::string& id, const std::string& title,
                                 const std::function<std::string(const std::string&)>& file_name,
                                 const std::function<void(const std::string&, ImageFormat)>& write_image,
                                 const std::function<std::string()>& csv_text) {
        entry.begin_object().key("id").value(id).key("title").value(title).key("files").begin_array();
        std::string shown;  // the image the gallery shows: SVG first, else PNG
        for (ImageFormat format : formats) {
            const std::string name = file_name(exporter::extension(format));
            if (!log.write(name, [&] { write_image((out / name).string(), format); })) continue;
            entry.value(name);
            if ((format == ImageFormat::Svg) || (format == ImageFormat::Png && !has_svg)) shown = name;
        }
        entry.end_array();
        const std::string csv = file_name("csv");
        if (log.write(csv, [&] { write_file(out / csv, csv_text()); })) entry.key("csv").value(csv);
        entry.end_object();
        if ((has_svg || has_png) && !shown.empty())
            html += "<figure><img src=\"" + html_escape(shown) + "\" alt=\"" + html_escape(title) + "\"><figcaption>" +
                    html_escape(title) + " (<a href=\"" + html_escape(csv) + "\">data</a>)</figcaption></figure>\n";
    };
    entry.key("figures").begin_array();
    for (const labs::Figure& f : output.figures)
        export_item(
            f.id, f.title, [&](const std::string& ext) { return step_file(s, f.id, ext); },
            [&](const std::string& path, ImageFormat format) {
                exporter::write_figure(f, path, format, size.first, size.second, style, o.png_scale);
            },
            [&] { return exporter::figure_csv(f); });
    // Tables as slide images too, in the figures' formats and size, with their CSV.
    entry.end_array().key("tables").begin_array();
    for (const labs::Table& t : output.tables)
        export_item(
            t.id, t.title, [&](const std::string& ext) { return table_file(s, t, ext); },
            [&](const std::string& path, ImageFormat format) {
                exporter::write_table(t, path, format, size.first, size.second, style, o.png_scale);
            },
            [&] { return exporter::table_csv(t); });
    entry.end_array().end_object();
    return entry.text();
}

void run_figures(const FiguresOptions& o) {
    const std::vector<ImageFormat> formats = parse_formats(o.formats);
    const PixelSize pixels = pixel_size_option("--size", o.size, {200, 150}, {8000, 8000});
    const std::pair<int, int> size{pixels.width, pixels.height};
    plot::FigureStyle style;
    try {
        style.theme = parse_enum_or_throw<plot::Theme>(o.theme, "--theme");
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    style.font_scale = o.font_scale;
    if (size.first * o.png_scale > 16000 || size.second * o.png_scale > 16000)
        throw UsageError("--png-scale: " + o.size + " at " + decimal_float(o.png_scale) +
                         " pixels per point is past 16000 pixels a side");
    const labs::Catalog& catalog = lab_catalog();
    const std::vector<SelectedStep> steps = o.lab_given ? select_steps(catalog, o.lab) : all_steps(catalog);
    const labs::Backend backend = backend_option(o.backend);
    std::vector<SelectedStep> runnable;
    for (const SelectedStep& s : steps)
        if (s.step->supports(backend)) runnable.push_back(s);
    if (runnable.empty())
        throw UsageError("no selected step runs on the " + std::string(labs::backend_name(backend)) + " backend");
    const std::vector<labs::Parameters> parameters = step_parameters(runnable, o.sets);
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec) throw UsageError("--out " + o.out + ": " + ec.message());
    // One export at a time per folder; the previous run's manifest and gallery go first, so
    // that an interrupted run never leaves them describing files they did not write.
    const FolderLock lock(o.out);
    // Before any work: the folder's manifest and gallery must be an earlier export's.
    const exporter::ExportFolder folder(o.out);

    const std::string device = backend == labs::Backend::Gpu ? gpu::describe(gpu::probe()) : "CPU emulator";
    json::JsonWriter manifest;
    manifest.begin_object()
        .key("program")
        .value("fp8lab")
        .key("version")
        .value(FP8LAB_VERSION)
        .key("seed")
        .value(o.seed)
        .key("backend")
        .value(labs::backend_name(backend))
        .key("device")
        .value(device)
        .key("width")
        .value(size.first)
        .key("height")
        .value(size.second)
        .key("theme")
        .value(o.theme)
        .key("font_scale")
        .value(o.font_scale)
        .key("png_scale")
        .value(o.png_scale)
        .key("steps")
        .begin_array();
    std::string html =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fp8lab figures</title>\n"
        "<style>body{font-family:'DejaVu Sans',sans-serif;max-width:1100px;margin:auto;padding:1em}"
        "img{width:100%;border:1px solid #ccc}figure{margin:1em 0 2em}</style></head><body>\n"
        "<h1>fp8lab figures</h1>\n<p>fp8lab " FP8LAB_VERSION ", backend " +
        html_escape(device) + ", seed " + std::to_string(o.seed) + "</p>\n";
    const auto start = std::chrono::steady_clock::now();
    // On a GPU, steps time their kernels: one at a time, so that none measures another's.
    const unsigned workers = backend == labs::Backend::Gpu ? 1u : std::max(1u, std::thread::hardware_concurrency());
    const std::vector<ComputedStep> computed = compute_steps(runnable, parameters, backend, o.seed, workers);
    // Every file this export will write, checked before the first is written; then a manifest
    // that says the export is unfinished and lists them, so that an interrupted export leaves
    // no manifest describing files it changed, and the next one may still replace them.
    std::vector<std::string> planned = {"index.html"};
    for (std::size_t i = 0; i < runnable.size(); ++i) {
        for (const labs::Figure& f : computed[i].output.figures) {
            for (ImageFormat format : formats)
                planned.push_back(step_file(runnable[i], f.id, exporter::extension(format)));
            planned.push_back(step_file(runnable[i], f.id, "csv"));
        }
        for (const labs::Table& t : computed[i].output.tables) {
            for (ImageFormat format : formats)
                planned.push_back(table_file(runnable[i], t, exporter::extension(format)));
            planned.push_back(table_file(runnable[i], t, "csv"));
        }
    }
    folder.check_writable(planned);
    json::JsonWriter unfinished;
    unfinished.begin_object().key("program").value("fp8lab").key("version").value(FP8LAB_VERSION);
    unfinished.key("finished").value(false).key("steps").begin_array().end_array().key("files").begin_array();
    for (const std::string& file : folder.owned_after(planned)) unfinished.value(file);
    unfinished.end_array().end_object();
    write_file(fs::path(o.out) / "manifest.json", unfinished.text() + "\n");
    ExportLog log;
    const labs::Lab* current_lab = nullptr;
    for (std::size_t i = 0; i < runnable.size(); ++i) {
        const SelectedStep& s = runnable[i];
        if (current_lab != s.lab) {
            html += "<h2>" + html_escape(s.lab->title) + "</h2>\n";
            current_lab = s.lab;
        }
        if (const std::string entry = export_step(s, parameters[i], computed[i], o, formats, size, style, html, log);
            !entry.empty())
            manifest.raw(entry);
    }
    write_file(fs::path(o.out) / "index.html", html + "</body></html>\n");
    log.written.push_back("index.html");
    manifest.end_array().key("failures").begin_array();
    for (const std::string& failure : log.failures) manifest.value(failure);
    // Every file an export wrote into this folder and still there: what a later one may replace.
    manifest.end_array().key("files").begin_array();
    for (const std::string& file : folder.owned_after(log.written)) manifest.value(file);
    manifest.end_array().key("finished").value(true).end_object();
    // The manifest comes last: "finished" says the run finished, and it lists what it wrote.
    write_file(fs::path(o.out) / "manifest.json", manifest.text() + "\n");
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "wrote %zu files to %s in %.2f s (open %s/index.html)\n", log.written.size() + 1,
                 o.out.c_str(), total, o.out.c_str());
    if (!log.failures.empty())
        throw std::runtime_error(std::to_string(log.failures.size()) +
                                 " part(s) of the export failed (listed above and "
                                 "under \"failures\" in manifest.json)");
}

}  // namespace

void add_figures_command(CLI::App& app, CommandStatus&) {
    CLI::App* cmd =
        app.add_subcommand("figures", "Run the lab steps and write every figure and table (SVG/PNG/PDF + CSV)");
    auto o = std::make_shared<FiguresOptions>();
    cmd->add_option("--out", o->out, "Output folder")->required();
    cmd->add_option("--format", o->formats, "Comma-separated: svg,png,pdf")->capture_default_str();
    cmd->add_option("--lab", o->lab, "Only these labs or steps: LAB, LAB/STEP, or a comma-separated list of them");
    cmd->add_option("--set", o->sets,
                    "NAME=VALUE: a parameter of the selected steps (repeatable; `fp8lab labs` lists them)");
    cmd->add_option("--backend", o->backend, "cpu or gpu")->capture_default_str();
    cmd->add_option("--size", o->size, "WIDTHxHEIGHT in points (a PNG has --png-scale pixels per point)")
        ->capture_default_str();
    cmd->add_option("--theme", o->theme, "light, dark or projector: the figure's colours, as on the screen")
        ->capture_default_str();
    cmd->add_option("--font-scale", o->font_scale, "Text, lines and margins this many times larger (1.5 for slides)")
        ->capture_default_str()
        ->check(real_in({0.5, 4.0}));
    cmd->add_option("--png-scale", o->png_scale, "PNG pixels per point: 2 draws the same figure twice as sharp")
        ->capture_default_str()
        ->check(real_in({0.5, 8.0}));
    cmd->add_option("--seed", o->seed, "Seed of every random choice")->capture_default_str()->check(seed_value());
    cmd->add_flag("--slides", o->slides,
                  "Slides: " + exporter::ExportSettings::slides().figures_options() +
                      " (what the GUI's export dialog gives in the projector theme at that size); options given "
                      "beside it win");
    cmd->callback([o, cmd] {
        o->lab_given = cmd->get_option("--lab")->count() > 0;
        if (o->slides) {  // the slide settings, each unless its own option was given
            const exporter::ExportSettings s = exporter::ExportSettings::slides();
            const auto unset = [&](const char* option) { return cmd->get_option(option)->count() == 0; };
            if (unset("--format")) o->formats = "png";
            if (unset("--size")) o->size = std::to_string(s.width) + "x" + std::to_string(s.height);
            if (unset("--theme")) o->theme = std::string(enum_name(s.style.theme));
            if (unset("--font-scale")) o->font_scale = s.style.font_scale;
            if (unset("--png-scale")) o->png_scale = s.png_scale;
        }
        run_figures(*o);
    });
}

}  // namespace fp8lab::cli
