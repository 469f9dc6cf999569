// SPDX-License-Identifier: Apache-2.0
// The names of the inference variants (one table, gpu/inference_timing.hpp), in both builds.
#include <stdexcept>
#include <string>

#include "gpu/inference_timing.hpp"

namespace fp8lab::gpu {

const InferenceVariantName& inference_variant_name(InferenceVariant v) {
    for (const InferenceVariantName& n : kInferenceVariants)
        if (n.variant == v) return n;
    throw std::logic_error("an inference variant without a name");
}

InferenceVariant inference_variant_from_id(std::string_view id) {
    std::string known;
    for (const InferenceVariantName& n : kInferenceVariants) {
        if (id == n.id) return n.variant;
        known += (known.empty() ? "" : ", ") + std::string(n.id);
    }
    throw std::invalid_argument("unknown inference variant '" + std::string(id) + "' (known: " + known + ")");
}

}  // namespace fp8lab::gpu
