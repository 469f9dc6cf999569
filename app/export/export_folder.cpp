// SPDX-License-Identifier: Apache-2.0
// The files of an export folder that fp8lab may replace: those its manifests listed.
#include "app/export/export_folder.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "app/options/usage_error.hpp"
#include "emulator/io/json_reader.hpp"

namespace fp8lab::exporter {
using options::UsageError;
namespace {

namespace fs = std::filesystem;
using options::UsageError;

// Every string under `key` anywhere in the manifest: "files" (this version's list) and the
// per-step "files", "csv" and "tables" of manifests written before it.
void collect_paths(const json::Value& v, std::set<std::string>& out) {
    for (const json::Member& m : v.members) {
        const bool paths = m.key == "files" || m.key == "csv" || m.key == "tables";
        if (paths && m.value.kind == json::Value::Kind::String) out.insert(m.value.text);
        if (paths && m.value.kind == json::Value::Kind::Array)
            for (const json::Value& item : m.value.items)
                if (item.kind == json::Value::Kind::String) out.insert(item.text);
        if (m.key == "steps" || m.key == "figures" || m.key == "tables")  // tables: objects now, names before
            for (const json::Value& item : m.value.items)
                if (item.kind == json::Value::Kind::Object) collect_paths(item, out);
    }
}

bool is_ours(const json::Value& manifest) {
    const json::Value* program = manifest.find("program");
    return manifest.kind == json::Value::Kind::Object && program && program->text == "fp8lab" && manifest.find("steps");
}

}  // namespace

ExportFolder::ExportFolder(fs::path dir) : dir_(std::move(dir)) {
    const fs::path manifest = dir_ / "manifest.json";
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(manifest, ec);
    if (fs::exists(status)) {
        const std::string refusal = "--out " + dir_.string() +
                                    ": it holds a manifest.json that fp8lab figures did not write; it is left as "
                                    "it is. Choose another folder, or move that file";
        if (!fs::is_regular_file(status)) throw UsageError(refusal);
        std::ifstream in(manifest, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        json::Value parsed;
        try {
            parsed = json::parse(text.str(), manifest.string());
        } catch (const std::runtime_error&) {
            throw UsageError(refusal);
        }
        if (!is_ours(parsed)) throw UsageError(refusal);
        collect_paths(parsed, owned_);
        owned_.insert({"manifest.json", "index.html"});
    }
    check_writable({"index.html"});
}

void ExportFolder::check_writable(const std::vector<std::string>& files) const {
    for (const std::string& file : files) {
        const fs::path relative(file);
        std::error_code ec;
        // Each sub-folder on the way must be a real folder (or not yet exist): a link would
        // send the files outside DIR.
        fs::path folder = dir_;
        for (auto part = relative.begin(); std::next(part) != relative.end(); ++part) {
            folder /= *part;
            const fs::file_status s = fs::symlink_status(folder, ec);
            if (fs::is_symlink(s))
                throw UsageError("--out " + dir_.string() + ": " + (folder.lexically_relative(dir_)).string() +
                                 " is a link; fp8lab writes only inside the folder, so it is left as it is");
            if (fs::exists(s) && !fs::is_directory(s))
                throw UsageError("--out " + dir_.string() + ": " + (folder.lexically_relative(dir_)).string() +
                                 " is not a folder; it is left as it is");
        }
        if (fs::exists(fs::symlink_status(dir_ / relative, ec)) && !owned_.count(file))
            throw UsageError("--out " + dir_.string() + ": " + file +
                             " is there and no fp8lab export wrote it; it is left as it is. Choose another folder, "
                             "or move that file");
    }
}

std::vector<std::string> ExportFolder::owned_after(const std::vector<std::string>& written) const {
    std::set<std::string> all(written.begin(), written.end());
    std::error_code ec;
    for (const std::string& file : owned_)
        if (fs::exists(fs::symlink_status(dir_ / file, ec))) all.insert(file);
    return {all.begin(), all.end()};
}

}  // namespace fp8lab::exporter
