// SPDX-License-Identifier: Apache-2.0
// The GEMM shape rule, shared by the CUDA build and the build without CUDA.
#include <string>
#include <utility>

#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {

void check_gemm_shape(int m, int n, int k) {
    for (const auto& [value, name] :
         {std::pair{m, "m (rows of the activations: tokens)"}, std::pair{n, "n (output features)"},
          std::pair{k, "k (input features, the contraction)"}})
        if (value <= 0 || value % 16 != 0)
            throw std::invalid_argument(std::string("cuBLASLt FP8 GEMMs need positive multiples of 16: ") + name +
                                        " is " + std::to_string(value));
}

}  // namespace fp8lab::gpu
