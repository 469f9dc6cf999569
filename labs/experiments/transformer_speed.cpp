// SPDX-License-Identifier: Apache-2.0
// The transformer's speed table: measured on the GPU through its training step, kept as CSV.
#include "labs/experiments/transformer_speed.hpp"

#include <algorithm>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {
// Version 1 measured BF16 and current scaling, its FP8 rows named "fp8"; version 2 files
// before 2026-11-27 have no blockwise or rowwise rows. Both measured attention through
// memory only (no attention column); version 3 names the attention of each row.
const char* kTransformerSpeedMagicV1 = "# fp8lab transformer speed v1";
const char* kTransformerSpeedMagicV2 = "# fp8lab transformer speed v2";
const char* kTransformerSpeedMagic = "# fp8lab transformer speed v3";
const char* kTransformerSpeedColumnsV2 = "preset,precision,qkv,ms,tokens_per_s,model_tflops,peak_mib";
const char* kTransformerSpeedColumns = "preset,precision,qkv,attention,ms,tokens_per_s,model_tflops,peak_mib";

struct SpeedVariant {
    std::string name;
    emu::Precision precision;
    emu::Fp8Recipe recipe;
};
const std::vector<SpeedVariant>& speed_variants() {
    // The recipes the GPU runs on its FP8 tensor cores (MX and NVFP4 run emulated on Hopper:
    // their time is the emulation's, not a speed to compare).
    static const std::vector<SpeedVariant> variants = {
        {"bf16", emu::Precision::Bf16, emu::Fp8Recipe::Current},
        {"fp8-current", emu::Precision::Fp8, emu::Fp8Recipe::Current},
        {"fp8-delayed", emu::Precision::Fp8, emu::Fp8Recipe::Delayed},
        {"fp8-blockwise", emu::Precision::Fp8, emu::Fp8Recipe::Blockwise},
        {"fp8-rowwise", emu::Precision::Fp8, emu::Fp8Recipe::Rowwise}};
    return variants;
}
}  // namespace

const std::vector<std::string>& transformer_speed_variants() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const SpeedVariant& v : speed_variants()) out.push_back(v.name);
        return out;
    }();
    return names;
}

const TransformerSpeedRow& TransformerSpeed::at(const std::string& preset, const std::string& precision, bool fused,
                                                bool fused_attention) const {
    for (const TransformerSpeedRow& r : rows)
        if (r.preset == preset && r.precision == precision && r.fused_qkv == fused &&
            r.fused_attention == fused_attention)
            return r;
    throw std::runtime_error("the transformer speed recording has no row for " + preset + ", " + precision + ", " +
                             (fused ? "fused" : "separate") + " QKV, " +
                             (fused_attention ? "fused attention" : "attention through memory"));
}

TransformerSpeed measure_transformer_speed(int steps, const std::function<bool(int, int)>& progress) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw gpu::GpuUnavailable(probe.reason);
    TransformerSpeed speed;
    speed.header = {{"source", "fp8lab transformer speed (labs/experiments/transformer_speed.cpp)"},
                    {"device", gpu::describe(probe)},
                    {"date", utc_now_text()},
                    {"configuration",
                     "BF16, FP8 current and delayed scaling (hybrid), blockwise and rowwise (E4M3), "
                     "CUDA graphs, " +
                         std::to_string(steps) + " steps per run, median of the timed steps"}};
    const std::vector<gpu::TransformerPreset>& presets = gpu::transformer_presets();
    // Every variant with fused attention, both QKV layouts; BF16 and the seed's recipe again
    // with attention through memory, to show what keeping S and P on chip saves.
    struct Run {
        const SpeedVariant* variant;
        bool fused_qkv, fused_attention;
    };
    std::vector<Run> runs;
    for (const bool fused : {true, false})
        for (const SpeedVariant& v : speed_variants()) runs.push_back({&v, fused, true});
    for (const SpeedVariant& v : speed_variants())
        if (v.name == "bf16" || v.name == "fp8-delayed") runs.push_back({&v, true, false});
    const int total = int(presets.size() * runs.size());
    int done = 0;
    for (const gpu::TransformerPreset& p : presets)
        for (const Run& x : runs) {
            const SpeedVariant& v = *x.variant;
            gpu::GpuRun run{gpu::transformer_preset_experiment(p, v.precision, x.fused_qkv, steps, v.recipe)};
            run.warmup_steps = std::max(1, steps / 5);
            run.record_trace = false;
            run.text_report = false;
            run.attention = x.fused_attention ? gpu::AttentionKernel::Fused : gpu::AttentionKernel::Gemms;
            const gpu::GpuTrainResult r = gpu::train_transformer_on_gpu(run);
            if (r.attention != run.attention)
                throw std::runtime_error("the " + p.name + " preset's attention ran as " +
                                         std::string(gpu::attention_kernel_name(r.attention)) + ", not as asked");
            speed.rows.push_back({p.name, v.name, x.fused_qkv, x.fused_attention, r.median_step_ms, r.tokens_per_second,
                                  r.model_tflops, double(r.peak_memory_bytes) / (1024.0 * 1024.0)});
            if (progress && !progress(++done, total)) throw RunCancelled();
        }
    return speed;
}

void write_transformer_speed_csv(std::ostream& out, const TransformerSpeed& s) {
    std::vector<RecordedRow> rows;
    for (const TransformerSpeedRow& r : s.rows)
        rows.push_back({r.preset, r.precision, r.fused_qkv ? "fused" : "separate",
                        std::string(gpu::attention_kernel_name(r.fused_attention ? gpu::AttentionKernel::Fused
                                                                                 : gpu::AttentionKernel::Gemms)),
                        shortest_text(r.ms), shortest_text(r.tokens_per_s), shortest_text(r.model_tflops),
                        shortest_text(r.peak_mib)});
    write_recorded_csv(out, kTransformerSpeedMagic, s.header, kTransformerSpeedColumns, rows);
}

TransformerSpeed read_transformer_speed_csv(std::istream& in, const std::string& source) {
    // The magic line says the version: read it all, then parse it as that version.
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const int version = text.starts_with(kTransformerSpeedMagicV1)   ? 1
                        : text.starts_with(kTransformerSpeedMagicV2) ? 2
                                                                     : 3;
    const bool v1 = version == 1;
    std::istringstream lines(text);
    TransformerSpeed s;
    s.header = read_recorded_csv(
        lines, source,
        version == 1   ? kTransformerSpeedMagicV1
        : version == 2 ? kTransformerSpeedMagicV2
                       : kTransformerSpeedMagic,
        version < 3 ? kTransformerSpeedColumnsV2 : kTransformerSpeedColumns,
        [&](const std::string& line, const auto& fail) {
            std::vector<std::string> f = split_fields(line, version < 3 ? 7 : 8, fail);
            if (version < 3) f.insert(f.begin() + 3, "gemms");  // attention through memory, then the only one
            constexpr emu::RealBounds kTimeMs{0, 1e7, true}, kRate{0, 1e12, true}, kTflops{0, 1e6}, kMib{0, 1e8};
            TransformerSpeedRow r;
            r.preset = f[0];
            bool known = false;
            for (const gpu::TransformerPreset& p : gpu::transformer_presets()) known = known || p.name == r.preset;
            if (!known) fail("preset: '" + r.preset + "' is none of the transformer's presets");
            const std::vector<std::string>& names = transformer_speed_variants();
            r.precision = v1 && f[1] == "fp8" ? "fp8-current" : f[1];
            if (v1 ? f[1] != "bf16" && f[1] != "fp8" : std::find(names.begin(), names.end(), f[1]) == names.end()) {
                std::string choices;
                for (std::size_t i = 0; i < names.size(); ++i)
                    choices += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
                fail("precision: '" + f[1] + "' is not " + (v1 ? std::string("bf16 or fp8") : choices));
            }
            if (f[2] != "fused" && f[2] != "separate") fail("qkv: '" + f[2] + "' is not fused or separate");
            r.fused_qkv = f[2] == "fused";
            if (f[3] != "fused" && f[3] != "gemms") fail("attention: '" + f[3] + "' is not fused or gemms");
            r.fused_attention = f[3] == "fused";
            r.ms = real_field(f[4], "ms", kTimeMs, fail);
            r.tokens_per_s = real_field(f[5], "tokens_per_s", kRate, fail);
            r.model_tflops = real_field(f[6], "model_tflops", kTflops, fail);
            r.peak_mib = real_field(f[7], "peak_mib", kMib, fail);
            s.rows.push_back(r);
        });
    return s;
}

}  // namespace fp8lab::labs
