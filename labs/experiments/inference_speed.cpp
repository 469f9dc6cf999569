// SPDX-License-Identifier: Apache-2.0
// The inference speed sweep: measured on the GPU through gpu::time_inference, kept as CSV.
#include "labs/experiments/inference_speed.hpp"

#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/table.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {

const std::vector<InferenceShape>& inference_shapes() {
    static const std::vector<InferenceShape> shapes = {{"lab model 64-128-128-16", {64, 128, 128, 16}},
                                                       {"MLP block 4096-16384-4096", {4096, 16384, 4096}}};
    return shapes;
}

const std::vector<int>& inference_batches() {
    static const std::vector<int> batches = {1, 32, 8192};
    return batches;
}

const InferencePoint& InferenceSweep::at(const std::string& model, gpu::InferenceVariant v, int tokens) const {
    for (const InferencePoint& p : points)
        if (p.model == model && p.timing.variant == v && p.timing.tokens == tokens) return p;
    throw std::runtime_error("the inference measurement has no row for " + model + ", " +
                             gpu::inference_variant_name(v).id + ", " + std::to_string(tokens) + " tokens");
}

InferenceSweep measure_inference(const std::function<bool(int, int)>& progress) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw gpu::GpuUnavailable(probe.reason);
    InferenceSweep sweep;
    sweep.header = {{"source", "fp8lab inference sweep (labs/inference_speed.cpp)"},
                    {"device", gpu::describe(probe)},
                    {"date", utc_now_text()},
                    {"configuration",
                     "E4M3 weights and activations, one CUDA graph per forward pass, median over 15 "
                     "batches of replays of about a millisecond each"}};
    const int total = int(inference_shapes().size() * inference_batches().size());
    int done = 0;
    for (const InferenceShape& shape : inference_shapes())
        for (int tokens : inference_batches()) {
            for (gpu::InferenceTiming& t : gpu::time_inference({shape.widths}, tokens))
                sweep.points.push_back({shape.name, std::move(t)});
            if (progress && !progress(++done, total)) throw RunCancelled();
        }
    return sweep;
}

namespace {
const char* kInferenceSpeedMagic = "# fp8lab inference v1";
const char* kInferenceSpeedColumns = "model,variant,tokens,median_us,weight_mib,device_mib,output_error,kernels";
}  // namespace

void write_inference_csv(std::ostream& out, const InferenceSweep& s) {
    std::vector<RecordedRow> rows;
    for (const InferencePoint& p : s.points) {
        std::string kernels = p.timing.kernels;  // free text, last: commas become semicolons
        for (char& c : kernels)
            if (c == ',') c = ';';
        rows.push_back({p.model, std::string(gpu::inference_variant_name(p.timing.variant).id),
                        std::to_string(p.timing.tokens), shortest_text(p.timing.median_us),
                        shortest_text(p.timing.weight_mib), shortest_text(p.timing.device_mib),
                        shortest_text(p.timing.output_error), kernels});
    }
    write_recorded_csv(out, kInferenceSpeedMagic, s.header, kInferenceSpeedColumns, rows);
}

InferenceSweep read_inference_csv(std::istream& in, const std::string& source) {
    InferenceSweep s;
    s.header = read_recorded_csv(
        in, source, kInferenceSpeedMagic, kInferenceSpeedColumns, [&](const std::string& line, const auto& fail) {
            const std::vector<std::string> fields = split_fields(line, 8, fail, true);  // kernels: free text
            InferencePoint p;
            p.model = fields[0];
            bool known_model = false;
            for (const InferenceShape& shape : inference_shapes()) known_model |= shape.name == p.model;
            if (!known_model) fail("unknown model " + emu::quoted_input(p.model));
            try {
                p.timing.variant = gpu::inference_variant_from_id(fields[1]);
            } catch (const std::invalid_argument& e) {
                fail(e.what());
            }
            constexpr emu::RealBounds kMicroseconds{0, 1e9, true}, kMib{0, 1e8}, kError{0, 1e30};
            p.timing.tokens = int(integer_field(fields[2], "tokens", emu::bounds::kTokens, fail));
            p.timing.median_us = real_field(fields[3], "median_us", kMicroseconds, fail);
            p.timing.weight_mib = real_field(fields[4], "weight_mib", kMib, fail);
            p.timing.device_mib = real_field(fields[5], "device_mib", kMib, fail);
            p.timing.output_error = real_field(fields[6], "output_error", kError, fail);
            p.timing.kernels = fields[7];
            s.points.push_back(std::move(p));
        });
    return s;
}

}  // namespace fp8lab::labs
