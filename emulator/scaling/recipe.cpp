// SPDX-License-Identifier: Apache-2.0
// The recipe table (recipe.hpp). Defaults follow the libraries: Transformer Engine's
// DelayedScaling (history 1024, max, margin 0) and block recipes, OCP MX, torchao's rowwise.
#include "emulator/scaling/recipe.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <cstdio>

#include "emulator/formats/format.hpp"

namespace fp8lab {

template <>
std::span<const EnumName<emu::Fp8Recipe>> enum_names<emu::Fp8Recipe>() {
    using emu::Fp8Recipe;
    static constexpr EnumName<Fp8Recipe> table[] = {
        {Fp8Recipe::Delayed, "delayed"},  {Fp8Recipe::Current, "current"},     {Fp8Recipe::MxFloor, "mx-floor"},
        {Fp8Recipe::MxRceil, "mx-rceil"}, {Fp8Recipe::Blockwise, "blockwise"}, {Fp8Recipe::Nvfp4, "nvfp4"},
        {Fp8Recipe::Rowwise, "rowwise"}};
    return table;
}

template <>
std::span<const EnumName<emu::ScaleType>> enum_names<emu::ScaleType>() {
    using emu::ScaleType;
    static constexpr EnumName<ScaleType> table[] = {{ScaleType::Float32, "float32"},
                                                    {ScaleType::Float32PowerOfTwo, "float32 power of two"},
                                                    {ScaleType::E8M0, "E8M0"},
                                                    {ScaleType::E4M3TimesFloat32, "E4M3 x float32 per tensor"}};
    return table;
}

template <>
std::span<const EnumName<emu::ScaleRule>> enum_names<emu::ScaleRule>() {
    using emu::ScaleRule;
    static constexpr EnumName<ScaleRule> table[] = {{ScaleRule::Delayed, "delayed"},  {ScaleRule::Current, "current"},
                                                    {ScaleRule::MxFloor, "mx-floor"}, {ScaleRule::MxRceil, "mx-rceil"},
                                                    {ScaleRule::Nvfp4, "nvfp4"},      {ScaleRule::One, "one"}};
    return table;
}

}  // namespace fp8lab

namespace fp8lab::emu {
namespace {

// A float's shortest decimal text (448, 6): the formats' maxima in the descriptions.
std::string decimal(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

constexpr std::size_t kRecipeCount = 7;

std::array<Recipe, kRecipeCount> make_recipes() {
    const PerRole<const Format*> hybrid{&e4m3(), &e4m3(), &e5m2()};
    const PerRole<const Format*> all_e4m3{&e4m3(), &e4m3(), &e4m3()};
    const PerRole<Blocking> per_tensor{};
    const PerRole<Blocking> mx_blocks{blocks_of(1, 32), blocks_of(1, 32), blocks_of(1, 32)};
    const std::string per_tensor_accumulation =
        "FP8 tensor cores; Transformer Engine accumulates the forward GEMM fast, the backward GEMMs promoted";
    const DelayedScalingConfig delayed{};  // the defaults, as Transformer Engine's
    const std::string e4m3_max = decimal(e4m3().max_finite), e2m1_max = decimal(e2m1().max_finite);
    std::array<Recipe, kRecipeCount> r;

    r[0].id = Fp8Recipe::Delayed;
    r[0].label = "delayed per tensor";
    r[0].library = "Transformer Engine DelayedScaling";
    r[0].formats = hybrid;
    r[0].blocks = per_tensor;
    r[0].rule = ScaleRule::Delayed;
    r[0].scale_from = "largest amax of the last " + std::to_string(delayed.history_length) + " steps (" +
                      std::string(amax_algorithm_name(delayed.algorithm)) + ", margin " +
                      std::to_string(delayed.margin) + ")";
    r[0].accumulation = per_tensor_accumulation;
    r[0].native = {true, true, true, true, true};
    r[0].scale_mode = "SCALAR_32F (one float per operand)";

    r[1] = r[0];
    r[1].id = Fp8Recipe::Current;
    r[1].label = "per tensor";
    r[1].library = "Transformer Engine Float8CurrentScaling";
    r[1].rule = ScaleRule::Current;
    r[1].scale_from = "this step's amax";

    for (Recipe* mx : {&r[2], &r[3]}) {
        mx->formats = all_e4m3;  // Transformer Engine's MXFP8BlockScaling: E4M3 for every tensor
        mx->blocks = mx_blocks;
        mx->scale_type = ScaleType::E8M0;
        mx->scale_bits = 8;
        mx->accumulation = "block-scaled MMA";
        mx->native = {false, false, true, false, true};
        mx->scale_mode = "VEC32_UE8M0";
    }
    r[2].id = Fp8Recipe::MxFloor;
    r[2].label = "MX floor";
    r[2].library = "OCP MX v1.0 (scale rounded down)";
    r[2].rule = ScaleRule::MxFloor;
    r[2].scale_from = "X = 2^(floor(log2 block amax) - the element format's largest exponent)";
    r[3].id = Fp8Recipe::MxRceil;
    r[3].label = "MX RCEIL";
    r[3].library = "MX with the scale rounded up (RCEIL)";
    r[3].rule = ScaleRule::MxRceil;
    r[3].scale_from = "X = block amax / the element format's largest value, rounded up to a power of two";

    r[4].id = Fp8Recipe::Blockwise;
    r[4].label = "blockwise";
    r[4].library = "Transformer Engine Float8BlockScaling";
    r[4].formats = all_e4m3;
    r[4].formats_fixed = true;
    r[4].blocks = {blocks_of(1, 128), blocks_of(128, 128), blocks_of(1, 128)};
    r[4].scale_type = ScaleType::Float32PowerOfTwo;
    r[4].rule = ScaleRule::Current;
    r[4].scale_from = e4m3_max + " / block amax, rounded down to a power of two";
    r[4].accumulation = "promoted in every GEMM (cuBLASLt's blockwise modes have no fast accumulation)";
    r[4].native = {false, true, false, false, false};
    r[4].scale_mode = "VEC128_32F (inputs, gradients), BLK128x128_32F (weights)";

    r[5].id = Fp8Recipe::Nvfp4;
    r[5].label = "NVFP4";
    r[5].family = "NVFP4";
    r[5].library = "Transformer Engine NVFP4BlockScaling";
    r[5].formats = {&e2m1(), &e2m1(), &e2m1()};
    r[5].formats_fixed = true;
    r[5].blocks = {blocks_of(1, 16), blocks_of(16, 16), blocks_of(1, 16)};
    r[5].scale_type = ScaleType::E4M3TimesFloat32;
    r[5].rule = ScaleRule::Nvfp4;
    r[5].rounding.gradient = RoundingMode::Stochastic;
    r[5].hadamard_wgrad = true;
    r[5].scale_bits = 8;
    r[5].scale_from = "E4M3 block scale: block amax / " + e2m1_max + ", after the float32 tensor scale " + e4m3_max +
                      " x " + e2m1_max + " / tensor amax";
    r[5].accumulation = "block-scaled MMA";
    r[5].native = {false, false, true, false, false};
    r[5].scale_mode = "VEC16_UE4M3 (the float32 tensor scale apart)";

    // torchao Float8LinearConfig.from_recipe_name("rowwise"): axiswise current scaling of
    // the input, the weight and the output gradient along each GEMM's contraction, E4M3
    // throughout, round_scales_to_power_of_2, the amax clamped to torchao's EPS.
    r[6].id = Fp8Recipe::Rowwise;
    r[6].label = "rowwise";
    r[6].library = "torchao Float8LinearConfig rowwise";
    r[6].formats = all_e4m3;
    r[6].formats_fixed = true;
    r[6].blocks = {{BlockKind::Row}, {BlockKind::Row}, {BlockKind::Row}};
    r[6].scale_type = ScaleType::Float32PowerOfTwo;
    r[6].rule = ScaleRule::Current;
    r[6].min_amax = 1e-12f;
    r[6].scale_from = e4m3_max + " / row amax (at least 1e-12), rounded down to a power of two";
    r[6].accumulation = "torchao: the forward GEMM accumulates fast, the backward GEMMs promoted";
    r[6].native = {false, true, true, false, false};
    r[6].scale_mode = "OUTER_VEC_32F (a float per row of each operand)";
    return r;
}

}  // namespace

std::string_view fp8_recipe_name(Fp8Recipe recipe) { return enum_name(recipe); }

BlockShape Blocking::shape(std::size_t rows, std::size_t cols) const {
    rows = std::max<std::size_t>(rows, 1);
    cols = std::max<std::size_t>(cols, 1);
    switch (kind) {
    case BlockKind::Tensor:
        return {rows, cols};
    case BlockKind::Block:
        return block;
    case BlockKind::Row:
        return {1, cols};
    }
    return {rows, cols};
}

std::string Blocking::text() const {
    switch (kind) {
    case BlockKind::Tensor:
        return "per tensor";
    case BlockKind::Block:
        return std::to_string(block.rows) + "x" + std::to_string(block.cols);
    case BlockKind::Row:
        return "per row";
    }
    return "?";
}

std::string NativeOn::text() const {
    std::string t;
    for (auto [on, name] : {std::pair{ada, "Ada"}, std::pair{hopper, "Hopper"}, std::pair{blackwell, "Blackwell"},
                            std::pair{mi300, "AMD MI300 (FNUZ formats)"}, std::pair{mi350, "AMD MI350"}})
        if (on) t += (t.empty() ? "" : ", ") + std::string(name);
    return t.empty() ? "none" : t;
}

bool Recipe::per_tensor() const {
    return blocks.input.kind == BlockKind::Tensor && blocks.weight.kind == BlockKind::Tensor &&
           blocks.gradient.kind == BlockKind::Tensor;
}

bool Recipe::can_cast_transposed(TensorRole role) const {
    return rounding.of(role) != RoundingMode::Stochastic && rule != ScaleRule::Nvfp4;
}

bool Recipe::weight_cast_transposes() const {
    const Blocking& w = blocks.weight;
    const bool square = w.kind == BlockKind::Tensor || (w.kind == BlockKind::Block && w.block.rows == w.block.cols);
    return square && rounding.weight != RoundingMode::Stochastic;
}

bool Recipe::blocked(BlockKind kind) const {
    return blocks.input.kind == kind || blocks.weight.kind == kind || blocks.gradient.kind == kind;
}

std::string_view Recipe::scale_type_text() const { return enum_name(scale_type); }

std::span<const Recipe> recipes() {
    static const std::array<Recipe, kRecipeCount> table = make_recipes();
    return table;
}

const Recipe& recipe(Fp8Recipe id) {
    for (const Recipe& r : recipes())
        if (r.id == id) return r;
    throw std::logic_error("recipe " + std::to_string(int(id)) + " is missing from the table");
}

bool recipe_allows(Fp8Recipe id, const Format& f) {
    const Recipe& r = recipe(id);
    if (r.formats_fixed) return &f == r.formats.input || &f == r.formats.weight || &f == r.formats.gradient;
    return is_element_format(f);
}

bool is_element_format(const Format& f) {
    return &f == &e4m3() || &f == &e5m2() || &f == &e3m2() || &f == &e2m3() || &f == &e2m1();
}

std::string allowed_formats_text(Fp8Recipe id) {
    const Recipe& r = recipe(id);
    if (!r.formats_fixed) return "e4m3, e5m2, e3m2, e2m3 or e2m1";
    if (r.formats.input == &e2m1()) return "e2m1 elements";
    return std::string(r.formats.input->name) + " only";
}

}  // namespace fp8lab::emu
