// SPDX-License-Identifier: Apache-2.0
// The CSV files that hold GPU measurements for machines without one: a magic first line,
// "# key: value" header lines (device, date, configuration), a column line, then rows.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "emulator/base/bounds.hpp"

namespace fp8lab::labs {

using RecordedHeader = std::vector<std::pair<std::string, std::string>>;

// The header's value for `key`, or "unknown".
std::string header_value(const RecordedHeader& header, const std::string& key);

// What a step says under a GPU measurement: "Measured now on DEVICE; CONFIGURATION." or
// "Recorded on DEVICE (DATE, assets/FILE); CONFIGURATION."
std::string measurement_note(bool measured_now, const RecordedHeader& header, const std::string& asset_file);

// The current time as "2026-11-22 06:13 UTC", for a recording's header.
std::string utc_now_text();

// A whole recording: the magic line, the header, the column line, then each row's fields
// joined by commas (the readers below take it back).
using RecordedRow = std::vector<std::string>;
void write_recorded_csv(std::ostream& out, const std::string& magic, const RecordedHeader& header,
                        const std::string& columns, const std::vector<RecordedRow>& rows);

// Reads the magic line, the header and the column line, then hands every data line to
// `row`, which reports a bad one through `fail(why)`. Errors throw std::runtime_error as
// "source:line: why"; a file without data rows is an error too. Lines may end in CRLF and
// trailing blanks (a file edited on another system).
using RowReader = std::function<void(const std::string& line, const std::function<void(const std::string&)>& fail)>;
RecordedHeader read_recorded_csv(std::istream& in, const std::string& source, const std::string& magic,
                                 const std::string& columns, const RowReader& row);

// A data line's fields, split at commas and trimmed of blanks; `fail` unless there are
// exactly `count` (the last takes the rest of the line when `last_takes_rest`).
using FailFn = std::function<void(const std::string&)>;
std::vector<std::string> split_fields(const std::string& line, std::size_t count, const FailFn& fail,
                                      bool last_takes_rest = false);
// A field that must be a whole number / a finite real within bounds; `fail` names it.
long long integer_field(const std::string& text, const char* name, emu::IntegerBounds bounds, const FailFn& fail);
double real_field(const std::string& text, const char* name, emu::RealBounds bounds, const FailFn& fail);

}  // namespace fp8lab::labs
