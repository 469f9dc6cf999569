// SPDX-License-Identifier: Apache-2.0
// Per-cast numerics against an independent count over the tensors themselves: zeros
// upstream, flushes, subnormal results, saturation and the relative error.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/training/operand_quantizer.hpp"
#include "emulator/scaling/tensor_numerics.hpp"

using namespace fp8lab::emu;

TEST_CASE("a cast's numerics equal an independent count of the hard cases") {
    // Delayed scaling's first step casts with scale 1: E4M3 saturates past 448, its
    // subnormals run below 2^-6, and values below half its least subnormal (2^-10) flush.
    Numerics n;
    n.precision = Precision::Fp8;
    n.recipe = Fp8Recipe::Delayed;
    OperandQuantizer q(n);
    std::vector<TensorNumerics> log;
    q.log_numerics(&log);
    std::vector<float> x = {0.0f, 0.0f,  -0.0f,  1e-5f,  -3e-4f,  0.004f, -0.01f,   0.3f,
                            1.0f, -7.5f, 447.0f, 480.0f, -900.0f, 1e6f,   0.00195f, 2.5f};
    std::vector<float> out(x.size());
    AmaxTrace trace;
    q.quantize("fc1.input", TensorRole::Input, x, 4, 4, 0, &trace, out);
    REQUIRE(log.size() == 1u);
    const TensorNumerics& r = log[0];
    std::uint64_t zeros = 0, flushed = 0, saturated = 0, subnormal = 0;
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        zeros += x[i] == 0.0f;
        flushed += x[i] != 0.0f && out[i] == 0.0f;
        saturated += std::fabs(x[i]) > 464.0f;  // past 448 by more than half its step (32): rounds past the max
        subnormal += out[i] != 0.0f && std::fabs(out[i]) < 0x1p-6f;
        error += (double(out[i]) - x[i]) * (double(out[i]) - x[i]);
        norm += double(x[i]) * x[i];
    }
    CHECK(r.tensor == "fc1.input");
    CHECK(r.elements == 16u);
    CHECK(r.zeros == 3u);
    CHECK(r.zeros == zeros);
    CHECK(r.flushed == 2u);  // 1e-5 and -3e-4
    CHECK(r.flushed == flushed);
    CHECK(r.saturated == 3u);  // 480, -900, 1e6
    CHECK(r.saturated == saturated);
    CHECK(r.subnormal == subnormal);
    CHECK(r.subnormal == 3u);  // 0.004, -0.01, 0.00195
    CHECK(r.amax == 1e6f);
    CHECK(r.scale == 1.0f);
    CHECK(r.relative_error == doctest::Approx(std::sqrt(error / norm)).epsilon(1e-12));
    // An untraced cast (a block recipe's transposed re-cast) logs nothing.
    q.quantize("fc1.input", TensorRole::Input, x, 4, 4, 0, nullptr, out);
    CHECK(log.size() == 1u);
    std::ostringstream csv;
    write_tensor_numerics(csv, log);
    CHECK(csv.str() ==
          "step,tensor,amax,scale,elements,zeros,flushed,saturated,subnormal,relative_error\n"
          "0,fc1.input,1000000,1,16,3,2,3,3," +
              [&] {
                  char e[32];
                  std::snprintf(e, sizeof e, "%.6g", r.relative_error);
                  return std::string(e);
              }() +
              "\n");
}
