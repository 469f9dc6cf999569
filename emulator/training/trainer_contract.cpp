// SPDX-License-Identifier: Apache-2.0
// The trainers' shared definitions (trainer_contract.hpp).
#include "emulator/training/trainer_contract.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/scaling/recipe.hpp"

namespace fp8lab::emu {

double final_loss(const std::vector<float>& loss) {
    const std::size_t n = std::min<std::size_t>(10, loss.size());
    if (n == 0) return 0.0;
    double sum = 0;
    for (std::size_t i = loss.size() - n; i < loss.size(); ++i) sum += loss[i];
    return sum / double(n);
}

void check_cpu_supports(const Experiment& e) {
    validate(e);
    const FastAccumulation& f = e.numerics.fast_accumulation;
    if (e.numerics.precision == Precision::Fp8 && f.any() && !recipe(e.numerics.recipe).per_tensor())
        throw std::invalid_argument(
            std::string("numerics.fast_accumulation.") +
            (f.forward ? "forward"
             : f.dgrad ? "dgrad"
                       : "wgrad") +
            ": fast accumulation is a mode of per-tensor FP8 GEMMs; block-scaled GEMMs promote their partial "
            "sums (cuBLASLt refuses fast accumulation for them, and Transformer Engine's block recipes need the "
            "split accumulator). Turn it off for the " +
            std::string(enum_name(e.numerics.recipe)) + " recipe");
}

}  // namespace fp8lab::emu
