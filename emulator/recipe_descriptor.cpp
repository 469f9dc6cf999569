// The recipe descriptors (recipe_descriptor.hpp). Defaults follow the libraries: Transformer
// Engine's DelayedScaling (history 1024, max, margin 0) and its block recipes.
#include "emulator/recipe_descriptor.hpp"

#include <array>
#include <cstdio>

#include "emulator/delayed_scaling.hpp"
#include "emulator/format.hpp"

namespace fp8lab::emu {
namespace {

constexpr BlockShape kWhole{0, 0};

// A float's shortest decimal text (448, 6): the formats' maxima in the descriptions.
std::string decimal(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::array<RecipeDescriptor, 6> make_descriptors() {
    const PerRole<const Format*> hybrid{&e4m3(), &e4m3(), &e5m2()};
    const std::string per_tensor_accumulation =
        "FP8 tensor cores; Transformer Engine accumulates the forward GEMM "
        "fast, the backward GEMMs promoted";
    const std::string per_tensor_gpus = "Ada, Hopper, Blackwell";
    const DelayedScalingConfig delayed{};  // the defaults, as Transformer Engine's
    const std::string history = "largest amax of the last " + std::to_string(delayed.history_length) + " steps (" +
                                std::string(amax_algorithm_name(delayed.algorithm)) + ", margin " +
                                std::to_string(delayed.margin) + ")";
    const std::string e4m3_max = decimal(e4m3().max_finite), e2m1_max = decimal(e2m1().max_finite);
    return {{
        {Fp8Recipe::Delayed, "Transformer Engine DelayedScaling", hybrid, false, kWhole, kWhole, "float32", 32, history,
         per_tensor_accumulation, per_tensor_gpus},
        {Fp8Recipe::Current, "Transformer Engine Float8CurrentScaling", hybrid, false, kWhole, kWhole, "float32", 32,
         "this step's amax", per_tensor_accumulation, per_tensor_gpus},
        {Fp8Recipe::MxFloor,
         "OCP MX v1.0 (scale rounded down)",
         hybrid,
         false,
         {1, 32},
         {1, 32},
         "E8M0",
         8,
         "X = 2^(floor(log2 block amax) - the element format's largest exponent)",
         "block-scaled MMA",
         "Blackwell"},
        {Fp8Recipe::MxRceil,
         "MX with the scale rounded up (RCEIL)",
         hybrid,
         false,
         {1, 32},
         {1, 32},
         "E8M0",
         8,
         "X = block amax / the element format's largest value, rounded up to a power of two",
         "block-scaled MMA",
         "Blackwell"},
        {Fp8Recipe::Blockwise,
         "Transformer Engine Float8BlockScaling",
         {&e4m3(), &e4m3(), &e4m3()},
         true,
         {1, 128},
         {128, 128},
         "float32 power of two",
         32,
         e4m3_max + " / block amax, rounded down to a power of two",
         "promoted in every GEMM (cuBLASLt's blockwise modes have no fast accumulation)",
         "Hopper"},
        {Fp8Recipe::Nvfp4,
         "Transformer Engine NVFP4BlockScaling",
         {&e2m1(), &e2m1(), &e2m1()},
         true,
         {1, 16},
         {16, 16},
         "E4M3 x float32 per tensor",
         8,
         "E4M3 block scale: block amax / " + e2m1_max + ", after the float32 tensor scale " + e4m3_max + " x " +
             e2m1_max + " / tensor amax",
         "block-scaled MMA",
         "Blackwell"},
    }};
}

}  // namespace

std::span<const RecipeDescriptor> recipe_descriptors() {
    static const std::array<RecipeDescriptor, 6> descriptors = make_descriptors();
    return descriptors;
}

const RecipeDescriptor& recipe_descriptor(Fp8Recipe recipe) {
    for (const RecipeDescriptor& d : recipe_descriptors())
        if (d.recipe == recipe) return d;
    return recipe_descriptors().front();
}

}  // namespace fp8lab::emu
