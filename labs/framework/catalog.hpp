// SPDX-License-Identifier: Apache-2.0
// The labs the program offers: logic from code joined with text from labs/content.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/lab.hpp"
#include "labs/framework/lab_text.hpp"

namespace fp8lab::labs {

struct Catalog {
    std::vector<Lab> labs;          // those that loaded without errors, in file order
    std::vector<TextError> errors;  // every problem found, each naming file and line
    const Lab* find(const std::string& id) const;
};

struct SourceText {
    std::string file;  // as errors name it
    std::string content;
};

// Joins texts with logic. A text whose lab has errors is left out; the others load.
// Errors: a step in the text without logic, logic without text, a lab text without
// logic or logic without a text, unknown placeholders, malformed files.
Catalog build_catalog(const std::vector<SourceText>& texts, const std::vector<LabLogic>& logic);

// The lab texts' folder: $FP8LAB_CONTENT_DIR if set, else an installed program's
// PREFIX/share/fp8lab/content, else the source tree's labs/content.
std::string content_directory();

// Reads every *.md in `directory` (sorted by name) and joins them with the labs written
// in code (`logic`; the curriculum's are labs/logic/curriculum.hpp's). A missing
// directory is one error, not an exception.
Catalog load_catalog(const std::vector<LabLogic>& logic, const std::string& directory = content_directory());

}  // namespace fp8lab::labs
