// Each training recipe as data: its element formats and block shapes per role, its scales
// and where they come from, and where it runs natively. set_recipe and the CPU trainer's
// quantiser read the formats and blocks from here; lab 7's recipe map draws the table.
#pragma once

#include <span>
#include <string>

#include "emulator/experiment.hpp"
#include "emulator/quantized_tensor.hpp"

namespace fp8lab::emu {

struct RecipeDescriptor {
    Fp8Recipe recipe;
    std::string library;  // who defines it, in their words
    // The element formats set_recipe gives each role; `formats_fixed`: the recipe defines
    // them (the experiment cannot choose others), else they are its defaults.
    PerRole<const Format*> formats;
    bool formats_fixed;
    // Blocks along each GEMM's contraction dimension; {0, 0}: one scale for the whole tensor.
    BlockShape activation_blocks, weight_blocks;
    std::string scale_type;  // "float32", "float32 power of two", "E8M0", "E4M3 x float32 per tensor"
    int scale_bits;          // of one block's scale (a per-tensor float32 beside it not counted)
    std::string scale_from;  // how a scale is chosen
    std::string accumulation;
    std::string native_on;  // GPUs with tensor cores for it
};

const RecipeDescriptor& recipe_descriptor(Fp8Recipe recipe);
std::span<const RecipeDescriptor> recipe_descriptors();  // in Fp8Recipe's order

}  // namespace fp8lab::emu
