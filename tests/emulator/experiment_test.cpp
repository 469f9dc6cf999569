// SPDX-License-Identifier: Apache-2.0
// The experiment description: its JSON round trip, its enums' name tables, and the refusal
// of malformed, mistyped, out-of-range and newer-version files with the field named.
#include <doctest/doctest.h>

#include <cmath>

#include <stdexcept>
#include <string>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/inference_quantization.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/base/integer_text.hpp"
#include "emulator/io/json_writer.hpp"
#include "emulator/base/quoted_input.hpp"

using namespace fp8lab;
using namespace fp8lab::emu;

namespace {

template <class E>
void check_table_round_trips() {
    for (const EnumName<E>& n : enum_names<E>()) {
        CHECK(enum_name(n.value) == n.name);
        CHECK(parse_enum<E>(n.name) == n.value);
    }
    CHECK_FALSE(parse_enum<E>("no-such-name"));
}

std::string refusal(const std::string& text) {
    try {
        experiment_from_json(text, "exp.json");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("every enum's name table round-trips") {
    check_table_round_trips<Precision>();
    check_table_round_trips<Fp8Recipe>();
    check_table_round_trips<TaskKind>();
    check_table_round_trips<AmaxAlgorithm>();
    check_table_round_trips<FormatRecipe>();
    check_table_round_trips<RoundingMode>();
    check_table_round_trips<Saturation>();
    check_table_round_trips<WeightQuantization>();
    check_table_round_trips<ActivationQuantization>();
    CHECK(enum_choices<Precision>() == "fp32, bf16 or fp8");
}

TEST_CASE("an experiment round-trips through JSON, every field") {
    Experiment e;
    CHECK(experiment_from_json(to_json(e), "default") == e);
    e.model = ModelSpec::mlp(96, 320, 3, 48, true);
    e.task = {TaskKind::GaussianClusters, 18446744073709551615ull, 7};
    e.task.outlier_scale = 3.5e4f;
    e.tokens = 48;
    e.steps = 77;
    e.init_seed = 9223372036854775808ull;  // 2^63: written as an unsigned number
    e.optimizer = {3e-4f, 0.8f, 0.95f, 1e-6f, 0.1f, 0.5f, {LrScheduleKind::WarmupCosine, 7, 0.25f}};
    e.seeds = 3;
    e.numerics.precision = Precision::Bf16;
    e.numerics.recipe = Fp8Recipe::MxFloor;
    e.numerics.formats = {&e3m2(), &e2m3(), &e5m2()};
    e.numerics.rounding = {RoundingMode::Stochastic, RoundingMode::NearestEven, RoundingMode::Stochastic};
    e.numerics.saturation = Saturation::None;
    e.numerics.scaling = false;
    e.numerics.delayed = {12, AmaxAlgorithm::MostRecent, 3};
    e.numerics.fast_accumulation = {true, false, true};
    e.numerics.edge_layers_bf16 = true;
    e.numerics.loss_scaling = true;
    e.numerics.loss_scaler = {1024.0f, 4.0f, 0.25f, 17};
    e.numerics.nvfp4 = {false, true, false};
    e.inference = {true, &e2m3(), WeightQuantization::Nvfp4, ActivationQuantization::PerToken, 33};
    const std::string text = to_json(e);
    CHECK(text.find("\"init_seed\":9223372036854775808") != std::string::npos);
    const Experiment back = experiment_from_json(text, "memory");
    CHECK(back == e);
    CHECK(back.numerics.formats.weight == &e2m3());
    CHECK(back.optimizer.learning_rate == 3e-4f);
    CHECK(back.task.seed == 18446744073709551615ull);
    CHECK(back.inference.format == &e2m3());
    CHECK(back.inference.calibration_batches == 33);
    // Missing fields keep their defaults.
    CHECK(experiment_from_json("{\"fp8lab_experiment\": 1}", "min") == Experiment{});
}

TEST_CASE("bad experiment files are refused with file:line and the field") {
    CHECK(refusal("{\"fp8lab_experiment\": 3}")
              .find("exp.json:1: fp8lab_experiment: version 3 was written by a "
                    "newer fp8lab") == 0);
    CHECK(refusal("{\"steps\": 3}").find("missing") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1,\n \"stepz\": 3}").find("exp.json:2: stepz: unknown field") == 0);
    CHECK(refusal("{\"fp8lab_experiment\": 1,\n\n \"steps\": \"many\"}").find("exp.json:3: steps: must be a number") ==
          0);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"steps\": 0}").find("steps: must be a whole number from 1") !=
          std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"numerics\": {\"recipe\": \"magic\"}}")
              .find("numerics.recipe: 'magic' is not delayed, current") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"numerics\": {\"formats\": {\"input\": \"bf16\"}}}")
              .find("numerics.formats.input") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"numerics\": {\"recipe\": \"blockwise\"}}")
              .find("numerics.formats.gradient: recipe 'blockwise' takes e4m3 only") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"task\": {\"seed\": -1}}").find("task.seed") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"optimizer\": {\"learning_rate\": 1e39}}")
              .find("optimizer.learning_rate") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1,").find("exp.json:1:") == 0);
    CHECK(refusal("{\"fp8lab_experiment\": 1} x").find("after the JSON value") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"steps\": 1, \"steps\": 2}").find("appears twice") != std::string::npos);
    CHECK(refusal(std::string(100, '[')).find("nesting deeper") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"inference\": {\"weights\": \"per-row\"}}")
              .find("inference.weights: 'per-row' is not none, per-tensor, per-channel, nvfp4 or mxfp4") !=
          std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"inference\": {\"calibration_batches\": 0}}")
              .find("inference.calibration_batches") != std::string::npos);
    CHECK(refusal("{\"fp8lab_experiment\": 1, \"inference\": {\"format\": \"bf16\"}}")
              .find("inference.format: 'bf16' is not e4m3") != std::string::npos);
}

TEST_CASE("validate names the field and describe names every choice") {
    Experiment e;
    e.numerics.rounding.gradient = RoundingMode::TowardZero;
    CHECK_THROWS_WITH_AS(validate(e), doctest::Contains("numerics.rounding.gradient"), std::invalid_argument);
    e = Experiment{};
    e.model.hidden_layers = 17;
    CHECK_THROWS_WITH_AS(validate(e), doctest::Contains("model.hidden_layers"), std::invalid_argument);
    e = Experiment{};
    CHECK(describe(e) == "64-256-64, teacher, 128 tokens, 200 steps, FP8 delayed (hybrid), history 1024 max margin 0");
    CHECK(describe(with_precision(e, Precision::Bf16)).find("BF16") != std::string::npos);
}

TEST_CASE("JSON strings are valid UTF-8 whatever the bytes") {
    using fp8lab::json::json_escape;
    CHECK(json_escape("plain \"q\" \\ \n") == "\"plain \\\"q\\\" \\\\ \\n\"");
    CHECK(json_escape("\x01") == "\"\\u0001\"");
    CHECK(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    // A stray byte, an overlong form, a surrogate, a truncated sequence, past U+10FFFF.
    CHECK(json_escape("a\xff") == "\"a\\ufffd\"");
    CHECK(json_escape("\xc0\x80") == "\"\\ufffd\\ufffd\"");
    CHECK(json_escape("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK(json_escape("\xe2\x82") == "\"\\ufffd\\ufffd\"");
    CHECK(json_escape("\xf4\x90\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

TEST_CASE("integers are read as typed: decimal (leading zeros too) or 0x-hex, never wrapped") {
    using fp8lab::emu::parse_signed;
    using fp8lab::emu::parse_unsigned;
    CHECK(parse_unsigned("010") == 10u);
    CHECK(parse_unsigned("0x10") == 16u);
    CHECK(parse_unsigned("18446744073709551615") == UINT64_MAX);
    CHECK_FALSE(parse_unsigned("18446744073709551616"));
    CHECK_FALSE(parse_unsigned("-1"));
    CHECK_FALSE(parse_unsigned(" 1"));
    CHECK_FALSE(parse_unsigned("1e3"));
    CHECK_FALSE(parse_unsigned("0x"));
    CHECK(parse_signed("-9223372036854775808") == INT64_MIN);
    CHECK_FALSE(parse_signed("9223372036854775808"));
    CHECK_FALSE(parse_signed("-0x1"));
    CHECK(parse_signed("-007") == -7);
}

TEST_CASE("messages quote a short, printable prefix of what they were given") {
    using fp8lab::emu::quoted_input;
    CHECK(quoted_input("abc") == "'abc'");
    CHECK(quoted_input("a\nb\xff") == "'a\\x0ab\\xff'");
    const std::string huge(100 << 20, 'x');
    const std::string q = quoted_input(huge);
    CHECK(q.size() < 80);
    CHECK(q.find("(104857600 bytes)") != std::string::npos);
}

TEST_CASE("the learning-rate schedule: constant, or a linear warm-up then a cosine decay to the floor") {
    Experiment e;
    e.steps = 11;
    e.optimizer.learning_rate = 2e-3f;
    for (float rate : learning_rates(e)) CHECK(rate == 2e-3f);
    e.optimizer.schedule = {LrScheduleKind::WarmupCosine, 4, 0.1f};
    const std::vector<float> r = learning_rates(e);
    REQUIRE(r.size() == 11);
    const double peak = 2e-3f, floor = 0.1f;  // in float64 as the schedule computes
    CHECK(r[0] == float(peak * 1 / 4));       // warm-up: the peak reached at the fourth step
    CHECK(r[3] == 2e-3f);                     // the decay starts at the peak
    CHECK(r[10] == float(peak * floor));      // and ends at the floor
    for (std::size_t s = 4; s + 1 < r.size(); ++s) CHECK(r[s + 1] < r[s]);
    CHECK(r[7] == float(peak * (floor + (1 - floor) * 0.5 * (1 + std::cos(3.141592653589793 * 3 / 6)))));
    e.optimizer.schedule.floor = 1.5f;
    CHECK_THROWS_WITH_AS(validate(e), doctest::Contains("optimizer.schedule.floor"), std::invalid_argument);
}

TEST_CASE("4-bit inference: MXFP4 weights and NVFP4 or MXFP4 activations are the block quantisers' values") {
    LayerWeights layer;
    layer.inputs = 64;
    layer.outputs = 8;
    for (int i = 0; i < layer.inputs * layer.outputs; ++i) layer.weight.push_back(std::sin(0.37f * float(i)));
    const std::vector<LayerWeights> layers = {layer};
    const std::vector<LayerWeights> mx = quantize_weights(layers, e4m3(), WeightQuantization::Mxfp4);
    CHECK(mx[0].weight == quantize_mx(layer.weight, 8, 64, e2m1(), MxScaleRule::Rceil).dequantize());
    // One row of inputs through a layer whose weights are the identity's first 8 columns:
    // the outputs are the quantised inputs themselves.
    LayerWeights pick;
    pick.inputs = 64;
    pick.outputs = 8;
    pick.weight.assign(64 * 8, 0.0f);
    for (int o = 0; o < 8; ++o) pick.weight[std::size_t(o) * 64 + std::size_t(o)] = 1.0f;
    std::vector<float> x(64);
    for (int i = 0; i < 64; ++i) x[std::size_t(i)] = std::cos(0.91f * float(i)) * 3.0f;
    for (const auto& [how, expected] :
         {std::pair{ActivationQuantization::Nvfp4, quantize_nvfp4(x, 1, 64).dequantize()},
          std::pair{ActivationQuantization::Mxfp4, quantize_mx(x, 1, 64, e2m1(), MxScaleRule::Rceil).dequantize()}}) {
        const std::vector<float> y = quantized_forward({pick}, x, 1, e4m3(), how, {});
        for (int o = 0; o < 8; ++o) CHECK(y[std::size_t(o)] == expected[std::size_t(o)]);
    }
    CHECK(parse_enum<ActivationQuantization>("mxfp4") == ActivationQuantization::Mxfp4);
}
