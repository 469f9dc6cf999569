// SPDX-License-Identifier: Apache-2.0
// The list of labs in code, in curriculum order, and the catalog they make with their text.
#include "labs/logic/curriculum.hpp"

#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {

std::vector<LabLogic> all_lab_logic() {
    return {formats_lab(),         values_lab(),        rounding_lab(),     why_scale_lab(),
            delayed_scaling_lab(), block_scaling_lab(), loss_scaling_lab(), training_lab(),
            inference_lab(),       accumulation_lab(),  transformer_lab()};
}

Catalog load_curriculum(const std::string& directory) { return load_catalog(all_lab_logic(), directory); }

}  // namespace fp8lab::labs
