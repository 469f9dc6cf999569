// The crossover sweep: measured on the GPU through the training step, kept as CSV.
#include "labs/crossover.hpp"

#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/run_context.hpp"
#include "labs/recorded_csv.hpp"
#include "labs/table.hpp"

namespace fp8lab::labs {

std::vector<CrossoverPoint> crossover_shapes() {
    std::vector<CrossoverPoint> shapes;
    for (int tokens : {32, 128, 512, 2048, 8192, 16384, 32768}) shapes.push_back({1024, 4096, tokens});
    for (int tokens : {128, 512, 2048, 8192, 16384}) shapes.push_back({4096, 16384, tokens});
    for (CrossoverPoint& p : shapes) {
        gpu::GpuTrainConfig c;
        c.input_dim = p.d;
        c.hidden_dim = p.h;
        c.tokens = p.tokens;
        p.model_gflops = gpu::model_flops_per_step(c) / 1e9;
    }
    return shapes;
}

CrossoverSweep measure_crossover(int steps, const std::function<bool(int, int)>& progress) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw gpu::GpuUnavailable(probe.reason);
    CrossoverSweep sweep;
    sweep.header = {{"source", "fp8lab crossover sweep (labs/crossover.cpp)"},
                    {"device", gpu::describe(probe)},
                    {"date", utc_now_text()},
                    {"configuration", "delayed scaling, hybrid formats, history 16, CUDA graphs, " +
                                          std::to_string(steps) + " steps per run, median of the timed steps"}};
    sweep.points = crossover_shapes();
    const int total = int(sweep.points.size()) * 2;
    int done = 0;
    for (CrossoverPoint& p : sweep.points) {
        for (gpu::GpuPrecision precision : {gpu::GpuPrecision::Bf16, gpu::GpuPrecision::Fp8}) {
            gpu::GpuTrainConfig c;
            c.input_dim = p.d;
            c.hidden_dim = p.h;
            c.tokens = p.tokens;
            c.precision = precision;
            c.steps = steps;
            c.warmup_steps = std::max(1, steps / 5);
            c.record_trace = false;
            const gpu::GpuTrainResult r = gpu::train_mlp_on_gpu(c);
            const double mib = double(r.peak_memory_bytes) / (1024.0 * 1024.0);
            if (precision == gpu::GpuPrecision::Bf16) {
                p.bf16_ms = r.median_step_ms;
                p.bf16_mib = mib;
                p.bf16_loss = r.final_loss();
            } else {
                p.fp8_ms = r.median_step_ms;
                p.fp8_mib = mib;
                p.fp8_loss = r.final_loss();
            }
            if (progress && !progress(++done, total)) throw RunCancelled();
        }
    }
    return sweep;
}

namespace {
const char* kMagic = "# fp8lab crossover v1";
const char* kColumns = "d,h,tokens,model_gflops,bf16_ms,fp8_ms,bf16_mib,fp8_mib,bf16_loss,fp8_loss";
}  // namespace

void write_crossover_csv(std::ostream& out, const CrossoverSweep& s) {
    write_recorded_header(out, kMagic, s.header, kColumns);
    for (const CrossoverPoint& p : s.points)
        out << p.d << ',' << p.h << ',' << p.tokens << ',' << shortest_text(p.model_gflops) << ','
            << shortest_text(p.bf16_ms) << ',' << shortest_text(p.fp8_ms) << ',' << shortest_text(p.bf16_mib) << ','
            << shortest_text(p.fp8_mib) << ',' << shortest_text(p.bf16_loss) << ',' << shortest_text(p.fp8_loss) << "\n";
}

CrossoverSweep read_crossover_csv(std::istream& in, const std::string& source) {
    CrossoverSweep s;
    s.header = read_recorded_csv(in, source, kMagic, kColumns, [&](const std::string& line, const auto& fail) {
        std::istringstream fields(line);
        CrossoverPoint p;
        char c[9];
        if (!(fields >> p.d >> c[0] >> p.h >> c[1] >> p.tokens >> c[2] >> p.model_gflops >> c[3] >> p.bf16_ms >> c[4] >>
              p.fp8_ms >> c[5] >> p.bf16_mib >> c[6] >> p.fp8_mib >> c[7] >> p.bf16_loss >> c[8] >> p.fp8_loss))
            fail("expected ten comma-separated numbers");
        for (char comma : c)
            if (comma != ',') fail("expected ten comma-separated numbers");
        if (p.bf16_ms <= 0 || p.fp8_ms <= 0) fail("step times must be positive");
        s.points.push_back(p);
    });
    return s;
}

}  // namespace fp8lab::labs
