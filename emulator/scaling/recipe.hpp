// SPDX-License-Identifier: Apache-2.0
// A training recipe as one value: per role its element format, block shape and rounding,
// the scale's type and the rule that picks it, where it runs natively and its words. The
// recipe table (recipe.cpp) is the one place a recipe is defined.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/formats/quantized_tensor.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

enum class Fp8Recipe { Delayed, Current, MxFloor, MxRceil, Blockwise, Nvfp4, Rowwise };
std::string_view fp8_recipe_name(Fp8Recipe recipe);  // "delayed", "current", "mx-floor", ...

// What each operand of a linear layer is cast to: the input (activation), the weight and
// the gradient of the output.
template <class T>
struct PerRole {
    T input, weight, gradient;
    const T& of(TensorRole role) const {
        return role == TensorRole::Input ? input : role == TensorRole::Weight ? weight : gradient;
    }
    T& of(TensorRole role) {
        return role == TensorRole::Input ? input : role == TensorRole::Weight ? weight : gradient;
    }
    bool operator==(const PerRole&) const = default;
};

// Which elements share a scale, for an operand whose contraction runs along its columns.
enum class BlockKind {
    Tensor,  // one scale for the whole tensor
    Block,   // rows x cols blocks: 1 x 32 along the contraction (MX), 128 x 128 tiles
    Row,     // one scale per row: the whole contraction (torchao's "axiswise")
};
struct Blocking {
    BlockKind kind = BlockKind::Tensor;
    BlockShape block{1, 32};                                     // Block only
    BlockShape shape(std::size_t rows, std::size_t cols) const;  // of an operand's blocks
    std::string text() const;                                    // "per tensor", "1x32", "128x128", "per row"
    bool operator==(const Blocking& o) const {
        return kind == o.kind &&
               (kind != BlockKind::Block || (block.rows == o.block.rows && block.cols == o.block.cols));
    }
};
inline Blocking blocks_of(std::size_t rows, std::size_t cols) { return {BlockKind::Block, {rows, cols}}; }

enum class ScaleType { Float32, Float32PowerOfTwo, E8M0, E4M3TimesFloat32 };
// How a block's scale is picked: Delayed, from the tensor's amax history; Current, from
// this block's amax (max / amax, rounded down to a power of two when the scale type is);
// MxFloor and MxRceil, OCP MX's E8M0 rules; Nvfp4, an E4M3 block scale under a float32
// tensor scale; One, scale 1 (an experiment with scaling off).
enum class ScaleRule { Delayed, Current, MxFloor, MxRceil, Nvfp4, One };

// GPU generations whose tensor (matrix) cores run a recipe's GEMMs with its scales: NVIDIA's
// Ada, Hopper and Blackwell; AMD's MI300 (CDNA 3: FP8 in the FNUZ encodings only, no block
// scales) and MI350 (CDNA 4: OCP FP8, FP6 and FP4 with E8M0 block scales, the MX formats).
struct NativeOn {
    bool ada = false, hopper = false, blackwell = false, mi300 = false, mi350 = false;
    std::string text() const;  // "Ada, Hopper, Blackwell, AMD MI300 (FNUZ formats), AMD MI350"
};

struct Recipe {
    Fp8Recipe id = Fp8Recipe::Delayed;
    std::string family = "FP8";  // what its runs are called: "FP8", or "NVFP4" (not FP8)
    std::string label;           // in a lab's list of recipes: "per tensor", "MX floor", "blockwise 1x128", ...
    std::string library;         // who defines it, in their words
    // The element formats each role gets; `formats_fixed`: the recipe defines them (the
    // experiment cannot choose others), else they are its defaults.
    PerRole<const Format*> formats{&e4m3(), &e4m3(), &e5m2()};
    bool formats_fixed = false;
    PerRole<Blocking> blocks;
    ScaleType scale_type = ScaleType::Float32;
    ScaleRule rule = ScaleRule::Delayed;
    // The amax a scale is computed from is at least this: torchao clamps it to 1e-12, so
    // an all-zero row gets the scale 448 / 1e-12 (rounded); 0 keeps Transformer Engine's
    // rule (an amax of 0 gives scale 1).
    float min_amax = 0.0f;
    // The casts: nearest-even and saturating unless the experiment says otherwise.
    PerRole<RoundingMode> rounding{RoundingMode::NearestEven, RoundingMode::NearestEven, RoundingMode::NearestEven};
    Saturation saturation = Saturation::Finite;
    bool hadamard_wgrad = false;  // both wgrad operands get the random 16-point Hadamard transform
    NativeOn native;
    // How NVIDIA's cuBLASLt takes the recipe's scales where it runs natively (its
    // cublasLtMatmulMatrixScale_t names, per operand kind where they differ).
    std::string scale_mode;
    int scale_bits = 32;  // of one block's scale (a per-tensor float32 beside it not counted)
    std::string scale_from;
    std::string accumulation;

    bool per_tensor() const;             // every role one scale: one cast of a tensor serves both its GEMMs
    bool blocked(BlockKind kind) const;  // some role's blocks are of this kind (rows: rowwise)
    // Whether a role's cast of a transposed operand can be made in place (Operand::transposed):
    // its rounding does not depend on where an element sits (not stochastic) and its
    // blocks can be laid over the transpose (not NVFP4's rows of 16, whose tiles come from
    // its own flag, nor its Hadamard transform).
    bool can_cast_transposed(TensorRole role) const;
    // Whether the weight's cast of W^T is the transpose of its cast of W, so that the
    // backward can use the forward's: one scale for the tensor or square blocks (they
    // transpose onto themselves), and a rounding that does not depend on where an element sits.
    bool weight_cast_transposes() const;
    std::string_view scale_type_text() const;
};

// The table, in Fp8Recipe's order, with the libraries' defaults.
std::span<const Recipe> recipes();
const Recipe& recipe(Fp8Recipe id);

// The element formats a training cast may take: e4m3, e5m2, e3m2, e2m3 and e2m1.
bool is_element_format(const Format& format);
// The element formats a recipe allows, and whether `format` is one of them.
bool recipe_allows(Fp8Recipe recipe, const Format& format);
// "e4m3 only", "e2m1 elements" or "e4m3, e5m2, e3m2, e2m3 or e2m1": what recipe_allows takes.
std::string allowed_formats_text(Fp8Recipe recipe);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::Fp8Recipe>> enum_names<emu::Fp8Recipe>();
template <>
std::span<const EnumName<emu::ScaleType>> enum_names<emu::ScaleType>();
template <>
std::span<const EnumName<emu::ScaleRule>> enum_names<emu::ScaleRule>();
}  // namespace fp8lab
