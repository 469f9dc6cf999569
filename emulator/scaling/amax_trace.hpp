// SPDX-License-Identifier: Apache-2.0
// amax traces: per step and tensor, the amax and the scale used, with a log2 histogram and
// the cast's numerics.
//
// File format (text, one record per line):
//   # fp8lab amax trace v3
//   # key: value               header lines: source, device, configuration
//   step,tensor,amax,scale,histogram,elements,zeros,flushed,saturated,subnormal,relative_error
//   0,fc1.input,0x1.8p+1,0x1p+0,-3:12;-2:40;zero:5,57,5,0,0,3,0.0213
//   # records: 1
// amax and scale are C99 hex floats (exact). The histogram counts the tensor's finite
// non-zero elements by floor(log2 |x|) ("e:count", ';'-separated, e in [-149, 127]) and
// its zeros ("zero:count"); it may be empty. The last six fields are the cast's numerics
// (emulator/scaling/tensor_numerics.hpp; the error as %.6g), all six empty where the run did not
// record them. Tensor names end in .input, .weight or .grad_output, once per step; steps
// never decrease. The last line counts the records, so a file cut short is told from a
// whole one (v1 had no count and is not read; v2, without the numerics, is).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/scaling/tensor_numerics.hpp"

namespace fp8lab::emu {

struct AmaxTraceRecord {
    std::uint64_t step = 0;
    std::string tensor;
    float amax = 0;
    float scale = 1;
    std::map<int, std::uint64_t> log2_histogram;  // floor(log2|x|) -> count
    std::uint64_t zeros = 0;
    bool has_histogram = false;
    // The cast's numerics (its step, tensor, amax and scale are the record's), when recorded.
    std::optional<TensorNumerics> numerics;
};

struct AmaxTrace {
    std::vector<std::pair<std::string, std::string>> header;  // key, value
    std::vector<AmaxTraceRecord> records;
};

// The histogram of x for a record.
void fill_histogram(AmaxTraceRecord& record, std::span<const float> x);

void write_amax_trace(std::ostream& out, const AmaxTrace& trace);
// Gives each record the numerics of the same step and tensor, where `numerics` has them.
void attach_numerics(AmaxTrace& trace, const std::vector<TensorNumerics>& numerics);
// Throws std::runtime_error naming file:line and what is wrong with it: every field is
// checked (signs, overflow, ranges, duplicates), and a trace without its count is refused.
AmaxTrace read_amax_trace(std::istream& in, const std::string& source_name);

TensorRole role_of_tensor(const std::string& name);  // by its suffix

// What a delayed-scaling configuration would have done with a recorded trace.
struct ReplayRow {
    std::uint64_t step = 0;
    std::string tensor;
    float amax = 0;
    float scale = 1;              // the scale this configuration would have used
    bool amax_overflows = false;  // amax * scale past the format's max
    // ... and far enough past it that nearest-even rounding does not bring it back to max:
    // only these lose anything to saturation (the rest round to max as they would anyway).
    bool amax_clips = false;
    // From the histogram (binade resolution, so counts are lower bounds: elements whose
    // whole binade lies past max, or rounds to zero); -1 without a histogram.
    std::int64_t overflowed_at_least = -1;
    std::int64_t flushed_at_least = -1;
};
std::vector<ReplayRow> replay_delayed_scaling(const AmaxTrace& trace, FormatRecipe formats,
                                              const DelayedScalingConfig& config);

}  // namespace fp8lab::emu
