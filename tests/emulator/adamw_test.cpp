// SPDX-License-Identifier: Apache-2.0
// AdamW's update against its formula in double, element by element, and the amax it
// returns against a cast's amax of the weights it wrote.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "emulator/training/adamw.hpp"
#include "emulator/scaling/quantize.hpp"
#include "tests/gpu/hard_tensor.hpp"

using namespace fp8lab::emu;

TEST_CASE("AdamW updates every weight by its formula and returns the new weights' amax as a cast finds it") {
    const AdamStep a{0.9f, 0.95f, 1e-8f, 1e-3f, 0.1f, 0.1f, 0.05f, 0.5f};
    // At least 13 elements: hard_tensor puts its Inf and NaN at 10 to 12.
    for (const std::size_t n : {std::size_t(13), std::size_t(97), std::size_t(200000)}) {  // one chunk and several
        std::vector<float> w = hard_tensor(n, 5), m(n, 0.01f), v(n, 0.02f), g = hard_tensor(n, 9);
        for (float& x : g)
            if (!std::isfinite(x)) x = 1.0f;
        const std::vector<float> w0 = w;
        const float amax = adamw(a, w.data(), m.data(), v.data(), g.data(), n, true);
        // The returned amax is the one a per-tensor cast of the new weights finds.
        RecipeState state;
        const Recipe current = recipe(Fp8Recipe::Current);
        const QuantizedTensor q = quantize(w, 1, n, current, Operand{"w", TensorRole::Weight}, state);
        CAPTURE(n);
        CHECK(std::memcmp(&amax, &q.block_amax[0], sizeof(float)) == 0);
        // Each weight by the formula (float32 steps as the loop takes them).
        int wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const float gi = g[i] * a.clip;
            const float mi = a.beta1 * 0.01f + (1.0f - a.beta1) * gi;
            const float vi = a.beta2 * 0.02f + (1.0f - a.beta2) * gi * gi;
            const float update = (mi / a.bc1) / (std::sqrt(vi / a.bc2) + a.epsilon);
            const float expected = w0[i] - a.learning_rate * (update + a.weight_decay * w0[i]);
            wrong += std::memcmp(&expected, &w[i], sizeof(float)) != 0 && !(std::isnan(expected) && std::isnan(w[i]));
        }
        CHECK(wrong == 0);
    }
}
