// SPDX-License-Identifier: Apache-2.0
// Step output as text and JSON: tables aligned by column, numbers as the labs format them.
#include "app/cli/step_output_text.hpp"

#include <algorithm>

namespace fp8lab::cli {

std::string table_text(const labs::Table& table) {
    std::vector<std::string> header;
    for (const labs::Column& c : table.columns)
        header.push_back(c.unit.empty() ? c.name : c.name + " (" + c.unit + ")");
    std::vector<std::vector<std::string>> cells = {header};
    for (const auto& row : table.rows) {
        std::vector<std::string> r;
        for (std::size_t i = 0; i < row.size() && i < table.columns.size(); ++i)
            r.push_back(labs::cell_text(table.columns[i], row[i]));
        cells.push_back(std::move(r));
    }
    std::vector<std::size_t> width(header.size(), 0);
    for (const auto& r : cells)
        for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    std::string out = table.title + "\n";
    for (const auto& r : cells) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const bool numeric = table.columns[i].type != labs::ColumnType::Text;
            const std::string pad(width[i] - r[i].size(), ' ');
            line += "  " + (numeric ? pad + r[i] : r[i] + pad);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string step_output_text(const labs::StepOutput& output) {
    std::string out;
    for (const labs::Table& t : output.tables) out += table_text(t) + "\n";
    for (const labs::Metric& m : output.metrics)
        out += m.name + ": " + labs::number_text(m.value) + (m.unit.empty() ? "" : " " + m.unit) + "\n";
    for (const labs::Figure& f : output.figures) {
        std::size_t points = 0;
        for (const labs::Series& s : f.series) points += std::max(s.x.size(), s.values.size());
        out += "figure " + f.id + ": " + f.title + " (" + std::to_string(f.series.size()) + " series, " +
               std::to_string(points) + " points; 'fp8lab figures' draws it)\n";
    }
    for (const labs::CodeListing& l : output.listings)
        out += "listing " + l.id + ": " + l.title + " (" + l.language + ")\n" + l.code +
               (l.code.empty() || l.code.back() == '\n' ? "" : "\n") + "end of listing " + l.id + "\n";
    for (const std::string& n : output.notes) out += "note: " + n + "\n";
    return out;
}

namespace {

void write_cell(json::JsonWriter& json, const labs::Cell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell))
        json.value(*s);
    else if (const auto* i = std::get_if<std::int64_t>(&cell))
        json.value(*i);
    else
        json.value(std::get<double>(cell));
}

}  // namespace

void begin_step_json(json::JsonWriter& json, const labs::Lab& lab, const labs::Step& step,
                     const labs::Parameters& parameters) {
    json.begin_object().key("lab").value(lab.id).key("step").value(step.logic.id).key("title").value(step.title);
    json.key("parameters");
    write_parameters_json(json, parameters);
}

void write_parameters_json(json::JsonWriter& json, const labs::Parameters& parameters) {
    json.begin_object();
    for (const auto& [name, value] : parameters.values()) {
        json.key(name);
        if (const auto* s = std::get_if<std::string>(&value))
            json.value(*s);
        else if (const auto* i = std::get_if<std::int64_t>(&value))
            json.value(*i);
        else if (const auto* d = std::get_if<double>(&value))
            json.value(*d);
        else
            json.value(std::get<bool>(value));
    }
    json.end_object();
}

void write_step_output_json(json::JsonWriter& json, const labs::StepOutput& output) {
    json.key("tables").begin_array();
    for (const labs::Table& t : output.tables) {
        json.begin_object().key("id").value(t.id).key("title").value(t.title).key("columns").begin_array();
        for (const labs::Column& c : t.columns)
            json.begin_object()
                .key("name")
                .value(c.name)
                .key("type")
                .value(enum_name(c.type))
                .key("unit")
                .value(c.unit)
                .end_object();
        json.end_array().key("rows").begin_array();
        for (const auto& row : t.rows) {
            json.begin_array();
            for (const labs::Cell& cell : row) write_cell(json, cell);
            json.end_array();
        }
        json.end_array().end_object();
    }
    json.end_array().key("metrics").begin_array();
    for (const labs::Metric& m : output.metrics)
        json.begin_object()
            .key("name")
            .value(m.name)
            .key("value")
            .value(m.value)
            .key("unit")
            .value(m.unit)
            .end_object();
    json.end_array().key("figures").begin_array();
    for (const labs::Figure& f : output.figures)
        json.begin_object()
            .key("id")
            .value(f.id)
            .key("title")
            .value(f.title)
            .key("series")
            .value(std::int64_t(f.series.size()))
            .end_object();
    json.end_array().key("listings").begin_array();
    for (const labs::CodeListing& l : output.listings)
        json.begin_object()
            .key("id")
            .value(l.id)
            .key("title")
            .value(l.title)
            .key("language")
            .value(l.language)
            .key("code")
            .value(l.code)
            .end_object();
    json.end_array().key("notes").begin_array();
    for (const std::string& n : output.notes) json.value(n);
    json.end_array();
}

}  // namespace fp8lab::cli
