// `fp8lab figures`: runs every selected step and writes its figures, their CSV, a
// manifest and an HTML gallery. Deterministic: the same inputs write the same SVG and CSV.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "app/cli/commands.hpp"
#include "emulator/json_writer.hpp"
#include "app/cli/lab_selection.hpp"
#include "app/cli/step_output_text.hpp"
#include "app/cli/atomic_file.hpp"
#include "app/cli/usage_error.hpp"
#include "app/export/cairo_figure.hpp"
#include "app/export/figure_csv.hpp"
#include "gpu/probe.hpp"

namespace fp8lab::cli {
namespace {

namespace fs = std::filesystem;
using exporter::ImageFormat;

struct FiguresOptions {
    std::string out;
    std::string formats = "svg,png";
    std::string lab;
    std::string backend = "cpu";
    std::string size = "1280x800";
    std::uint64_t seed = 1;
};

std::vector<ImageFormat> parse_formats(const std::string& text) {
    std::vector<ImageFormat> formats;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string name = text.substr(start, comma - start);
        if (name == "svg") formats.push_back(ImageFormat::Svg);
        else if (name == "png") formats.push_back(ImageFormat::Png);
        else if (name == "pdf") formats.push_back(ImageFormat::Pdf);
        else throw UsageError("--format: '" + name + "' is not svg, png or pdf");
        start = comma + 1;
    }
    return formats;
}

std::pair<int, int> parse_size(const std::string& text) {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 200 || h < 150 ||
        w > 8000 || h > 8000)
        throw UsageError("--size: '" + text + "' is not WIDTHxHEIGHT between 200x150 and 8000x8000");
    return {w, h};
}

void write_file(const fs::path& path, const std::string& content) { cli::write_file_atomically(path.string(), content); }

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

void run_figures(const FiguresOptions& o) {
    const std::vector<ImageFormat> formats = parse_formats(o.formats);
    const auto [width, height] = parse_size(o.size);
    const labs::Catalog& catalog = lab_catalog();
    const std::vector<SelectedStep> steps = select_steps(catalog, o.lab);
    const labs::Backend backend = backend_option(o.backend);
    std::vector<SelectedStep> runnable;
    for (const SelectedStep& s : steps)
        if (s.step->supports(backend)) runnable.push_back(s);
    if (runnable.empty()) throw UsageError("no selected step runs on the " + std::string(labs::backend_name(backend)) + " backend");
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec) throw UsageError("--out " + o.out + ": " + ec.message());

    const std::string device = backend == labs::Backend::Gpu ? gpu::describe(gpu::probe()) : "CPU emulator";
    json::JsonWriter manifest;
    manifest.begin_object().key("program").value("fp8lab").key("version").value(FP8LAB_VERSION)
        .key("seed").value(std::int64_t(o.seed)).key("backend").value(labs::backend_name(backend))
        .key("device").value(device).key("width").value(width).key("height").value(height).key("steps").begin_array();
    std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fp8lab figures</title>\n"
                       "<style>body{font-family:'DejaVu Sans',sans-serif;max-width:1100px;margin:auto;padding:1em}"
                       "img{width:100%;border:1px solid #ccc}figure{margin:1em 0 2em}</style></head><body>\n"
                       "<h1>fp8lab figures</h1>\n<p>fp8lab " FP8LAB_VERSION ", backend " +
                       html_escape(device) + ", seed " + std::to_string(o.seed) + "</p>\n";
    const auto start = std::chrono::steady_clock::now();
    std::size_t files = 0;
    const labs::Lab* current_lab = nullptr;
    for (std::size_t i = 0; i < runnable.size(); ++i) {
        const SelectedStep& s = runnable[i];
        const auto step_start = std::chrono::steady_clock::now();
        const labs::Parameters params(s.step->logic.parameters);
        labs::RunContext context(backend, o.seed);
        const labs::StepOutput output = s.step->logic.run(params, context);
        const fs::path dir = fs::path(o.out) / s.lab->id;
        fs::create_directories(dir);
        if (current_lab != s.lab) {
            html += "<h2>" + html_escape(s.lab->title) + "</h2>\n";
            current_lab = s.lab;
        }
        html += "<h3>" + html_escape(s.step->title) + "</h3>\n";
        manifest.begin_object().key("lab").value(s.lab->id).key("step").value(s.step->logic.id)
            .key("title").value(s.step->title).key("parameters");
        write_parameters_json(manifest, params);
        manifest.key("figures").begin_array();
        for (const labs::Figure& f : output.figures) {
            const std::string stem = s.step->logic.id + "-" + f.id;
            manifest.begin_object().key("id").value(f.id).key("title").value(f.title).key("files").begin_array();
            for (ImageFormat format : formats) {
                const std::string name = stem + "." + exporter::extension(format);
                exporter::write_figure(f, (dir / name).string(), format, width, height);
                manifest.value(s.lab->id + "/" + name);
                ++files;
            }
            write_file(dir / (stem + ".csv"), exporter::figure_csv(f));
            manifest.end_array().key("csv").value(s.lab->id + "/" + stem + ".csv").end_object();
            ++files;
            const bool has_svg = std::find(formats.begin(), formats.end(), ImageFormat::Svg) != formats.end();
            const bool has_png = std::find(formats.begin(), formats.end(), ImageFormat::Png) != formats.end();
            if (has_svg || has_png)
                html += "<figure><img src=\"" + html_escape(s.lab->id + "/" + stem + (has_svg ? ".svg" : ".png")) +
                        "\" alt=\"" + html_escape(f.title) + "\"><figcaption>" + html_escape(f.title) +
                        " (<a href=\"" + html_escape(s.lab->id + "/" + stem) + ".csv\">data</a>)</figcaption></figure>\n";
        }
        manifest.end_array().key("tables").begin_array();
        for (const labs::Table& t : output.tables) {
            const std::string name = s.step->logic.id + "-" + t.id + ".csv";
            write_file(dir / name, exporter::table_csv(t));
            manifest.value(s.lab->id + "/" + name);
            ++files;
        }
        manifest.end_array().end_object();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
        std::fprintf(stderr, "[%zu/%zu] %s/%s: %zu figures, %zu tables (%.2f s)\n", i + 1, runnable.size(),
                     s.lab->id.c_str(), s.step->logic.id.c_str(), output.figures.size(), output.tables.size(), seconds);
    }
    manifest.end_array().end_object();
    write_file(fs::path(o.out) / "manifest.json", manifest.text() + "\n");
    write_file(fs::path(o.out) / "index.html", html + "</body></html>\n");
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "wrote %zu files to %s in %.2f s (open %s/index.html)\n", files + 2, o.out.c_str(), total,
                 o.out.c_str());
}

}  // namespace

void add_figures_command(CLI::App& app, CommandStatus&) {
    CLI::App* cmd = app.add_subcommand("figures", "Run the lab steps and write every figure (SVG/PNG/PDF + CSV)");
    auto o = std::make_shared<FiguresOptions>();
    cmd->add_option("--out", o->out, "Output folder")->required();
    cmd->add_option("--format", o->formats, "Comma-separated: svg,png,pdf")->capture_default_str();
    cmd->add_option("--lab", o->lab, "Only this lab (or LAB/STEP)");
    cmd->add_option("--backend", o->backend, "cpu or gpu")->capture_default_str();
    cmd->add_option("--size", o->size, "WIDTHxHEIGHT in pixels (PNG) or points (SVG, PDF)")->capture_default_str();
    cmd->add_option("--seed", o->seed, "Seed of every random choice")->capture_default_str();
    cmd->callback([o] { run_figures(*o); });
}

}  // namespace fp8lab::cli
