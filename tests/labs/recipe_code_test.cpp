// SPDX-License-Identifier: Apache-2.0
// "From the lab to your code": each library's form carries the experiment's settings, says
// what it cannot express, and the PyTorch script has every value filled in.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "emulator/training/experiment.hpp"
#include "labs/experiments/recipe_code.hpp"

using namespace fp8lab;
using labs::CodeTarget;
using labs::recipe_code;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return contains(l, part); });
}

emu::Experiment with_recipe(emu::Fp8Recipe recipe) {
    emu::Experiment e;
    emu::set_recipe(e, recipe);
    return e;
}

}  // namespace

TEST_CASE("the targets' name table round-trips") {
    for (const EnumName<CodeTarget>& n : enum_names<CodeTarget>()) CHECK(parse_enum<CodeTarget>(n.name) == n.value);
    CHECK(enum_choices<CodeTarget>() == "te, torchao, megatron or pytorch");
}

TEST_CASE("Transformer Engine: the recipe object with the experiment's values") {
    emu::Experiment e = with_recipe(emu::Fp8Recipe::Delayed);
    e.numerics.delayed = {16, emu::AmaxAlgorithm::MostRecent, 2};
    const labs::RecipeCode delayed = recipe_code(e, CodeTarget::TransformerEngine);
    CHECK(delayed.language == "python");
    CHECK(contains(delayed.code, "DelayedScaling("));
    CHECK(contains(delayed.code, "fp8_format=Format.HYBRID"));
    CHECK(contains(delayed.code, "amax_history_len=16"));
    CHECK(contains(delayed.code, "amax_compute_algo=\"most_recent\""));
    CHECK(contains(delayed.code, "margin=2"));
    CHECK(delayed.differences.empty());

    e.numerics.formats.gradient = &emu::e4m3();
    CHECK(contains(recipe_code(e, CodeTarget::TransformerEngine).code, "Format.E4M3"));
    e.numerics.formats.input = &emu::e5m2();  // no TE scheme has E5M2 forward
    CHECK(any_contains(recipe_code(e, CodeTarget::TransformerEngine).differences, "no equivalent"));

    emu::Experiment nvfp4 = with_recipe(emu::Fp8Recipe::Nvfp4);
    nvfp4.numerics.nvfp4 = {false, true, false};  // no weight tiles, stochastic, no Hadamard
    const std::string code = recipe_code(nvfp4, CodeTarget::TransformerEngine).code;
    CHECK(contains(code, "NVFP4BlockScaling("));
    CHECK(contains(code, "disable_rht=True"));
    CHECK(contains(code, "disable_stochastic_rounding=False"));
    CHECK(contains(code, "disable_2d_quantization=True"));

    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::MxFloor), CodeTarget::TransformerEngine).code,
                   "MXFP8BlockScaling("));
    CHECK(any_contains(recipe_code(with_recipe(emu::Fp8Recipe::Rowwise), CodeTarget::TransformerEngine).differences,
                       "no per-row"));
    emu::Experiment bf16;
    bf16.numerics.precision = emu::Precision::Bf16;
    CHECK_FALSE(contains(recipe_code(bf16, CodeTarget::TransformerEngine).code, "fp8_autocast"));
}

TEST_CASE("Megatron-LM: every delayed-scaling flag written, since its defaults are not TE's") {
    const labs::RecipeCode m = recipe_code(emu::Experiment{}, CodeTarget::Megatron);
    CHECK(m.language == "shell");
    CHECK(contains(m.code, "--fp8-recipe delayed"));
    CHECK(contains(m.code, "--fp8-amax-history-len 1024"));
    CHECK(contains(m.code, "--fp8-amax-compute-algo max"));
    CHECK(any_contains(m.differences, "history-len 1"));
    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::Current), CodeTarget::Megatron).code, "tensorwise"));
    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::MxRceil), CodeTarget::Megatron).code, "mxfp8"));
    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::Blockwise), CodeTarget::Megatron).code,
                   "--fp8-recipe blockwise"));
    emu::Experiment nvfp4 = with_recipe(emu::Fp8Recipe::Nvfp4);
    nvfp4.numerics.nvfp4.hadamard_wgrad = false;
    nvfp4.numerics.edge_layers_bf16 = true;
    const std::string code = recipe_code(nvfp4, CodeTarget::Megatron).code;
    CHECK(contains(code, "--fp4-format e2m1 --fp4-recipe nvfp4"));
    CHECK(contains(code, "NVTE_NVFP4_DISABLE_RHT=1"));
    CHECK_FALSE(contains(code, "NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING"));
    CHECK(contains(code, "--first-last-layers-bf16"));
}

TEST_CASE("torchao: the nearest recipe, and the delayed scaling it does not have said so") {
    const labs::RecipeCode delayed = recipe_code(emu::Experiment{}, CodeTarget::Torchao);
    CHECK(contains(delayed.code, "from_recipe_name(\"tensorwise\")"));
    CHECK(any_contains(delayed.differences, "delayed scaling has no equivalent"));
    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::Rowwise), CodeTarget::Torchao).code, "\"rowwise\""));
    CHECK(contains(recipe_code(with_recipe(emu::Fp8Recipe::MxFloor), CodeTarget::Torchao).code, "MXLinearConfig("));
    CHECK_FALSE(recipe_code(with_recipe(emu::Fp8Recipe::Blockwise), CodeTarget::Torchao).differences.empty());
}

TEST_CASE("the PyTorch script carries the experiment's every value") {
    emu::Experiment e;
    e.model = emu::ModelSpec::mlp(96, 320, 2, 48, false);
    e.tokens = 48;
    e.steps = 77;
    e.seeds = 3;
    e.task.batches = 7;
    e.task.seed = 5;
    e.optimizer.learning_rate = 3e-4f;
    e.optimizer.weight_decay = 0.1f;
    e.optimizer.schedule = {emu::LrScheduleKind::WarmupCosine, 12, 0.25f};
    const labs::RecipeCode s = recipe_code(e, CodeTarget::Pytorch);
    CHECK_FALSE(std::regex_search(s.code, std::regex("@[A-Z0-9_]+@")));  // every placeholder filled
    CHECK(contains(s.code, "D_IN, HIDDEN, HIDDEN_LAYERS, D_OUT = 96, 320, 2, 48"));
    CHECK(contains(s.code, "TOKENS, BATCHES, STEPS, SEEDS, FIRST_SEED = 48, 7, 77, 3, 5"));
    CHECK(contains(s.code, "LR, BETAS, EPS, WEIGHT_DECAY = 0.0003, (0.9, 0.999), 1e-08, 0.1"));
    CHECK(contains(s.code, "WARMUP, FLOOR, COSINE = 12, 0.25, True"));
    CHECK(contains(s.code, "torch._scaled_mm"));
    // Not the delayed recipe the experiment names: the script says so.
    CHECK(any_contains(s.differences, "per-tensor current scaling"));
    e.task.kind = emu::TaskKind::GaussianClusters;
    CHECK(any_contains(recipe_code(e, CodeTarget::Pytorch).differences, "'clusters' task"));
}
