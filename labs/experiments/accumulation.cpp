// SPDX-License-Identifier: Apache-2.0
// Exact FP8 products, inexact sums: the emulated narrow accumulator and the GPU measurement.
#include "labs/experiments/accumulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/convert.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "labs/experiments/sample_tensors.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/experiments/recorded_csv.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {

float truncate_mantissa(float x, int bits) {
    if (bits >= 23 || !std::isfinite(x)) return x;
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u &= ~((std::uint32_t(1) << (23 - bits)) - 1);
    std::memcpy(&x, &u, 4);
    return x;
}

}  // namespace

DotOperands dot_operands(int rows, int k, bool all_positive, std::uint64_t seed) {
    DotOperands ops;
    ops.rows = rows;
    ops.k = k;
    for (int which = 0; which < 2; ++which) {
        std::vector<float> x = sample_tensor(TensorKind::Weights, std::size_t(rows) * std::size_t(k), seed * 2 + which);
        for (float& v : x) v = (all_positive ? std::fabs(v) : v) * 50.0f;  // N(0, 1) from N(0, 0.02^2)
        const emu::QuantizedTensor q = emu::quantize_per_tensor(x, std::size_t(rows), std::size_t(k), emu::e4m3());
        (which == 0 ? ops.a : ops.b) = q.codes;
        (which == 0 ? ops.a_scale_inv : ops.b_scale_inv) = q.block_scale_inv.at(0);
    }
    return ops;
}

ExactDot exact_dot(const DotOperands& ops, int i, int j) {
    ExactDot d;
    const emu::Format& f = emu::e4m3();
    for (int t = 0; t < ops.k; ++t) {
        const double p =
            emu::decode(f, ops.a[std::size_t(i) * ops.k + t]) * emu::decode(f, ops.b[std::size_t(j) * ops.k + t]);
        d.value += p;
        d.magnitude += std::fabs(p);
    }
    const double s = double(ops.a_scale_inv) * ops.b_scale_inv;
    d.value *= s;
    d.magnitude *= s;
    return d;
}

std::vector<ExactDot> exact_dots(const DotOperands& ops, int outputs) {
    std::vector<ExactDot> exact;
    for (int i = 0; i < outputs; ++i)
        for (int j = 0; j < outputs; ++j) exact.push_back(exact_dot(ops, i, j));
    return exact;
}

DotErrors dot_errors(const std::vector<ExactDot>& exact, const std::function<double(std::size_t)>& result) {
    DotErrors e;
    for (std::size_t o = 0; o < exact.size(); ++o) {
        const double err = std::fabs(result(o) - exact[o].value) / exact[o].magnitude;
        e.mean += err / double(exact.size());
        e.max = std::max(e.max, err);
    }
    return e;
}

double emulated_dot(const DotOperands& ops, int i, int j, int mantissa_bits, int promote_every) {
    const emu::Format& f = emu::e4m3();
    float total = 0, acc = 0;
    for (int t = 0; t < ops.k; ++t) {
        // Two 4-bit significands: the product has at most 8 and is exact in float32.
        const float p = float(emu::decode(f, ops.a[std::size_t(i) * ops.k + t]) *
                              emu::decode(f, ops.b[std::size_t(j) * ops.k + t]));
        acc = truncate_mantissa(acc + p, mantissa_bits);
        if (promote_every > 0 && (t + 1) % promote_every == 0) {
            total += acc;
            acc = 0;
        }
    }
    total += acc;
    return double(total) * ops.a_scale_inv * ops.b_scale_inv;
}

std::vector<int> accumulation_depths() { return {256, 1024, 4096, 16384, 65536}; }

AccumulationSweep measure_tensor_core_accumulation(const std::function<bool(int, int)>& progress) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw gpu::GpuUnavailable(probe.reason);
    AccumulationSweep sweep;
    sweep.header = {{"source", "fp8lab tensor-core accumulation (labs/accumulation.cpp)"},
                    {"device", gpu::describe(probe)},
                    {"date", utc_now_text()},
                    {"configuration",
                     "cuBLASLt E4M3 x E4M3 GEMM, 64 x 64 outputs, float32 output, operands |N(0,1)| "
                     "(positive) and N(0,1) (random-sign) current-scaled, error relative to the sum of |products|"}};
    const int rows = 64, total = int(accumulation_depths().size()) * 4;
    int done = 0;
    for (bool all_positive : {true, false})
        for (int k : accumulation_depths()) {
            const DotOperands ops = dot_operands(rows, k, all_positive, 7);
            const std::vector<ExactDot> exact = exact_dots(ops, rows);
            for (bool fast : {false, true}) {
                const std::vector<float> y = gpu::fp8_gemm(rows, rows, k, emu::e4m3(), ops.a, ops.a_scale_inv,
                                                           emu::e4m3(), ops.b, ops.b_scale_inv, fast, true);
                const DotErrors e = dot_errors(exact, [&](std::size_t o) { return double(y[o]); });
                sweep.points.push_back({all_positive, k, fast, e.mean, e.max});
                if (progress && !progress(++done, total)) throw RunCancelled();
            }
        }
    return sweep;
}

namespace {
// Version 1 measured all-positive operands only; version 2 names the operands on each row.
const char* kAccumulationMagicV1 = "# fp8lab accumulation v1";
const char* kAccumulationColumnsV1 = "k,fast_accumulation,mean_error,max_error";
const char* kAccumulationMagic = "# fp8lab accumulation v2";
const char* kAccumulationColumns = "operands,k,fast_accumulation,mean_error,max_error";
const char* kPositive = "positive";
const char* kRandomSign = "random-sign";
}  // namespace

void write_accumulation_csv(std::ostream& out, const AccumulationSweep& s) {
    std::vector<RecordedRow> rows;
    for (const AccumulationPoint& p : s.points)
        rows.push_back({p.all_positive ? kPositive : kRandomSign, std::to_string(p.k), p.fast_accumulation ? "1" : "0",
                        shortest_text(p.mean_error), shortest_text(p.max_error)});
    write_recorded_csv(out, kAccumulationMagic, s.header, kAccumulationColumns, rows);
}

AccumulationSweep read_accumulation_csv(std::istream& in, const std::string& source) {
    // The magic line says the version: read it all, then parse it as that version.
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const bool v1 = text.starts_with(kAccumulationMagicV1);
    std::istringstream lines(text);
    AccumulationSweep s;
    s.header = read_recorded_csv(
        lines, source, v1 ? kAccumulationMagicV1 : kAccumulationMagic,
        v1 ? kAccumulationColumnsV1 : kAccumulationColumns, [&](const std::string& line, const auto& fail) {
            const std::vector<std::string> f = split_fields(line, v1 ? 4 : 5, fail);
            constexpr emu::RealBounds kRelativeError{0, 1e30};
            AccumulationPoint p;
            std::size_t at = 0;
            if (!v1) {
                if (f[0] != kPositive && f[0] != kRandomSign)
                    fail("operands must be " + std::string(kPositive) + " or " + kRandomSign + ", not '" + f[0] + "'");
                p.all_positive = f[0] == kPositive;
                at = 1;
            }
            p.k = int(integer_field(f[at], "k", {1, 1 << 24}, fail));
            p.fast_accumulation = integer_field(f[at + 1], "fast_accumulation", {0, 1}, fail) == 1;
            p.mean_error = real_field(f[at + 2], "mean_error", kRelativeError, fail);
            p.max_error = real_field(f[at + 3], "max_error", kRelativeError, fail);
            s.points.push_back(p);
        });
    return s;
}

}  // namespace fp8lab::labs
