// SPDX-License-Identifier: Apache-2.0
// A student's progress: solved exercises per lab, and the small file a student hands in
// and an instructor reads (fp8lab progress FILE...).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "labs/framework/catalog.hpp"

namespace fp8lab::labs {

struct LabProgress {
    const Lab* lab = nullptr;
    int solved = 0;     // exercises of this lab answered right
    int exercises = 0;  // steps of this lab with an exercise
};

// Per lab, in the catalog's order; `solved` holds "lab/step" keys (others are ignored).
std::vector<LabProgress> progress_by_lab(const Catalog& catalog, const std::set<std::string>& solved);

struct ProgressFile {
    std::string student;
    std::set<std::string> solved;  // "lab/step"
};

// "# fp8lab progress v1", "student = NAME", then one "solved = lab/step" per line.
std::string progress_file_text(const ProgressFile& progress);
// Throws std::runtime_error "SOURCE:LINE: reason" for anything else (a step the catalog
// does not know is kept: a newer fp8lab may have it).
ProgressFile read_progress_file(std::string_view text, std::string_view source);

}  // namespace fp8lab::labs
