// SPDX-License-Identifier: Apache-2.0
// The CPU reference trainer: gradients, learning, FP8 vs BF16, underflow, determinism.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/models/mlp/inference_quantization.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/gemm/trainer_matrix.hpp"
#include "tests/emulator/thread_counts.hpp"
#include "emulator/base/parallel.hpp"

using namespace fp8lab::emu;

namespace {

// The recipe with the element formats it dictates (blockwise E4M3, NVFP4 E2M1).
void set_recipe_formats(Experiment& c, Fp8Recipe recipe) {
    c.numerics.recipe = recipe;
    if (recipe == Fp8Recipe::Blockwise) c.numerics.formats = {&e4m3(), &e4m3(), &e4m3()};
    if (recipe == Fp8Recipe::Nvfp4) c.numerics.formats = {&e2m1(), &e2m1(), &e2m1()};
}

Experiment small(Precision p, int steps = 40) {
    Experiment c;
    c.numerics.precision = p;
    c.steps = steps;
    c.model.hidden = 32;
    c.tokens = 32;
    c.model.input = 16;
    c.model.output = 4;
    c.model.hidden_layers = 2;
    c.model.biases = true;  // the gradient check covers the biases too
    c.optimizer = {2e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1.0f, {}};
    c.task.batches = 64;
    return c;
}

// The network's loss in float64, written independently of the trainer: GELU (tanh
// approximation) between layers, MSE or softmax cross-entropy at the end.
double loss_in_float64(const std::vector<LayerGradients>& layers, const Batch& batch, const Experiment& task) {
    std::vector<double> x(batch.inputs.begin(), batch.inputs.end());
    int width = task.model.input;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const LayerGradients& layer = layers[l];
        std::vector<double> y(std::size_t(batch.tokens) * layer.outputs);
        for (int t = 0; t < batch.tokens; ++t)
            for (int o = 0; o < layer.outputs; ++o) {
                double z = layer.bias[o];
                for (int i = 0; i < width; ++i)
                    z += double(layer.weight[std::size_t(o) * layer.inputs + i]) * x[std::size_t(t) * width + i];
                if (l + 1 < layers.size())
                    z = 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
                y[std::size_t(t) * layer.outputs + o] = z;
            }
        x = std::move(y);
        width = layer.outputs;
    }
    double loss = 0;
    for (int t = 0; t < batch.tokens; ++t) {
        const double* out = &x[std::size_t(t) * width];
        if (task.task.kind == TaskKind::TeacherRegression) {
            for (int o = 0; o < width; ++o) {
                const double d = out[o] - batch.targets[std::size_t(t) * width + o];
                loss += d * d / (double(batch.tokens) * width);
            }
        } else {
            const double top = *std::max_element(out, out + width);
            double sum = 0;
            for (int o = 0; o < width; ++o) sum += std::exp(out[o] - top);
            loss += (std::log(sum) + top - out[batch.labels[t]]) / batch.tokens;
        }
    }
    return loss;
}

}  // namespace

TEST_CASE("the backward pass matches float64 central differences") {
    for (TaskKind kind : {TaskKind::TeacherRegression, TaskKind::GaussianClusters}) {
        CAPTURE(task_kind_name(kind));
        Experiment c = small(Precision::Fp32);
        c.task.kind = kind;
        c.model.hidden = 24;
        c.tokens = 16;
        const GradientSnapshot snap = first_step_gradients(c);
        const Batch batch = TrainingTask(c).batch(0, c.tokens);
        std::vector<LayerGradients> layers = snap.layers;
        CHECK(loss_in_float64(layers, batch, c) == doctest::Approx(snap.loss).epsilon(1e-5));
        // Every bias and a spread of weights in every layer; h = 1e-4 keeps the float64
        // truncation error (h^2) far below the float32 gradient's own rounding.
        const double h = 1e-4;
        int checked = 0;
        double worst = 0;
        for (std::size_t l = 0; l < layers.size(); ++l) {
            auto check = [&](std::vector<float>& param, const std::vector<float>& grad, std::size_t i) {
                const float saved = param[i];
                param[i] = float(saved + h);
                const double up = loss_in_float64(layers, batch, c);
                const double step_up = double(param[i]) - saved;  // the step float32 could take
                param[i] = float(saved - h);
                const double down = loss_in_float64(layers, batch, c);
                const double step_down = saved - double(param[i]);
                param[i] = saved;
                const double numeric = (up - down) / (step_up + step_down);
                const double error = std::abs(numeric - grad[i]) / (std::abs(numeric) + 1e-4);
                worst = std::max(worst, error);
                ++checked;
            };
            for (std::size_t i = 0; i < layers[l].bias.size(); ++i) check(layers[l].bias, snap.layers[l].bias_grad, i);
            for (std::size_t i = 0; i < layers[l].weight.size(); i += 7)
                check(layers[l].weight, snap.layers[l].weight_grad, i);
        }
        MESSAGE(checked << " gradients checked, worst relative error " << worst);
        CHECK(checked > 100);
        CHECK(worst < 1e-3);
    }
}

TEST_CASE("recipe objects expose what a view plots") {
    DelayedScaling d(e4m3(), {.history_length = 3});
    for (float amax : {2.0f, 8.0f, 4.0f}) {
        d.record_amax(amax);
        d.update();
    }
    const DelayedScalingState s = d.state();
    CHECK(s.amax_per_step == std::vector<float>{2, 8, 4});
    CHECK(s.scale_per_step == std::vector<float>{1, 224, 56});  // 448/2 after step 0, 448/8 after step 1
    CHECK(s.next_scale.scale == 56.0f);                         // max of the window {2, 8, 4}
    CHECK(s.amax_history.size() == 3);

    DynamicLossScaler scaler({.initial_scale = 8, .growth_interval = 2});
    for (bool inf : {false, true, false, false}) scaler.update(inf);
    const LossScalerState ls = scaler.state();
    CHECK(ls.scale_per_step == std::vector<float>{8, 8, 4, 4});
    CHECK(ls.skipped_steps == std::vector<std::size_t>{1});
    CHECK(ls.scale == 8.0f);

    Experiment c = small(Precision::Fp8, 5);
    const TrainerResult r = train_mlp(c);
    REQUIRE(r.scaling.count("fc1.input") == 1);
    CHECK(r.scaling.at("fc1.input").scale_per_step.size() == 5);
    CHECK(r.scaling.at("fc2.grad_output").amax_per_step.size() == 5);
}

TEST_CASE("an update moves downhill, first-order in the learning rate") {
    // loss(step 1) of a run minus that of a frozen run on the same batches is
    // -lr * <g1, adam direction> + O(lr^2): positive, and linear in a small learning rate.
    Experiment c = small(Precision::Fp32, 2);
    c.optimizer.grad_clip = 0;
    c.optimizer.weight_decay = 0;
    c.task.seed = 3;
    double prev_ratio = 0;
    for (float lr : {1e-4f, 5e-5f}) {
        c.optimizer.learning_rate = lr;
        const TrainerResult r = train_mlp(c);
        // Step 1 sees a new batch; compare against a run with lr -> 0 on the same batches.
        Experiment frozen = c;
        frozen.optimizer.learning_rate = 1e-12f;
        const TrainerResult f = train_mlp(frozen);
        const double drop = double(f.loss[1]) - double(r.loss[1]);
        CHECK(drop > 0);  // the update moved downhill
        const double ratio = drop / lr;
        if (prev_ratio != 0) CHECK(ratio == doctest::Approx(prev_ratio).epsilon(0.05));  // linear in lr
        prev_ratio = ratio;
    }
}

TEST_CASE("the loss falls on both tasks") {
    for (TaskKind kind : {TaskKind::TeacherRegression, TaskKind::GaussianClusters}) {
        CAPTURE(task_kind_name(kind));
        Experiment c = small(Precision::Fp32, 150);
        c.task.kind = kind;
        const TrainerResult r = train_mlp(c);
        CHECK(r.loss.back() < 0.5 * r.loss.front());
        if (kind == TaskKind::GaussianClusters) CHECK(r.accuracy.back() > 0.8);
    }
}

TEST_CASE("FP8 (HYBRID, delayed scaling) ends within 2% of BF16 on the default task") {
    Experiment c;  // the lab's default size and task
    c.numerics.precision = Precision::Bf16;
    const TrainerResult bf16 = train_mlp(c);
    c.numerics.precision = Precision::Fp8;
    const TrainerResult fp8 = train_mlp(c);
    MESSAGE("final loss: bf16 " << bf16.loss.back() << ", fp8 " << fp8.loss.back());
    CHECK(std::fabs(fp8.loss.back() - bf16.loss.back()) < 0.02 * bf16.loss.back());
    CHECK(fp8.loss.back() < 0.5 * fp8.loss.front());
}

TEST_CASE("FP8 without scaling flushes far more gradients to zero") {
    Experiment c = small(Precision::Fp8, 60);
    const TrainerResult scaled = train_mlp(c);
    c.numerics.scaling = false;
    const TrainerResult unscaled = train_mlp(c);
    MESSAGE("flushed: scaled " << scaled.flushed_fraction() << ", unscaled " << unscaled.flushed_fraction());
    CHECK(unscaled.flushed_fraction() > 0.01);
    CHECK(unscaled.flushed_fraction() > 20 * scaled.flushed_fraction());
    // E4M3 gradients (no E5M2 range) flush more than HYBRID's E5M2 without scaling.
    c.numerics.formats.gradient = &e4m3();
    CHECK(train_mlp(c).flushed_fraction() > unscaled.flushed_fraction());
}

TEST_CASE("the same seed gives the same loss curve bit for bit, whatever the thread count") {
    for (Fp8Recipe recipe : {Fp8Recipe::Delayed, Fp8Recipe::MxRceil, Fp8Recipe::Nvfp4}) {
        CAPTURE(fp8_recipe_name(recipe));
        Experiment c = small(Precision::Fp8, 15);
        set_recipe_formats(c, recipe);
        set_max_threads(1);
        const TrainerResult one = train_mlp(c);
        set_max_threads(2);
        const TrainerResult two = train_mlp(c);
        set_max_threads(0);
        CHECK(one.loss == two.loss);
        c.task.seed = 2;
        CHECK(train_mlp(c).loss != one.loss);
    }
}

TEST_CASE("fast accumulation's model changes FP8 GEMMs only, the same for any thread count") {
    Experiment c = small(Precision::Fp8, 15);
    const std::vector<float> promoted = train_mlp(c).loss;
    for (const FastAccumulation fast : {FastAccumulation{true, false, false}, FastAccumulation{false, true, false},
                                        FastAccumulation{false, false, true}}) {
        CAPTURE(fast.forward);
        CAPTURE(fast.dgrad);
        c.numerics.fast_accumulation = fast;
        const auto [one, two] = fp8lab::test::on_one_and_two_threads([&] { return train_mlp(c).loss; });
        CHECK(one == two);
        CHECK(one != promoted);
    }
    // BF16's GEMMs are not FP8 tensor-core GEMMs: the flags do not touch them.
    Experiment bf16 = small(Precision::Bf16, 15);
    const std::vector<float> plain = train_mlp(bf16).loss;
    bf16.numerics.fast_accumulation = {true, true, true};
    CHECK(train_mlp(bf16).loss == plain);
}

TEST_CASE("cancellation stops the run and keeps the steps done") {
    const TrainerResult r = train_mlp(small(Precision::Fp32, 100), [](int step, float) { return step < 9; });
    CHECK(r.cancelled);
    CHECK(r.loss.size() == 10);
}

TEST_CASE("a step whose gradient is not finite is not applied, and the result says which") {
    // Without biases only the weight gradients' check can see it.
    for (const bool biases : {true, false}) {
        CAPTURE(biases);
        Experiment c = small(Precision::Fp8, 40);
        c.model.biases = biases;
        c.numerics.loss_scaling = true;
        c.numerics.saturation = Saturation::None;         // an overflowing cast gives Inf
        c.numerics.loss_scaler.initial_scale = 0x1p100f;  // overflows until backed off far enough
        const TrainerResult r = train_mlp(c);
        REQUIRE(!r.skipped_steps.empty());
        CHECK(r.skipped_steps.front() == 0);
        for (std::size_t t : r.skipped_steps)  // every skipped step halved the scale
            if (t + 1 < r.loss_scale.size()) CHECK(r.loss_scale[t + 1] == r.loss_scale[t] * 0.5f);
        CHECK(std::isfinite(r.loss.back()));
        CHECK(describe_skipped_steps(r.skipped_steps.size(), r.loss.size(), true)
                  .starts_with(std::to_string(r.skipped_steps.size()) + " of 40 steps not applied"));
    }
    CHECK(describe_skipped_steps(2, 9, false) == "2 of 9 steps not applied: a weight gradient was not finite");
}

TEST_CASE("loss scaling records its scale and every recipe trains") {
    Experiment c = small(Precision::Fp8, 30);
    c.numerics.loss_scaling = true;
    c.numerics.loss_scaler.growth_interval = 10;
    const TrainerResult r = train_mlp(c);
    REQUIRE(r.loss_scale.size() + r.skipped_steps.size() >= 30);
    CHECK(r.loss_scale.front() == 65536.0f);
    for (Fp8Recipe recipe : {Fp8Recipe::Current, Fp8Recipe::MxFloor, Fp8Recipe::Blockwise, Fp8Recipe::Nvfp4}) {
        CAPTURE(fp8_recipe_name(recipe));
        Experiment rc = small(Precision::Fp8, 80);
        set_recipe_formats(rc, recipe);
        const TrainerResult rr = train_mlp(rc);
        CHECK(rr.loss.back() < 0.7 * rr.loss.front());
    }
    CHECK_THROWS_AS(train_mlp(small(Precision::Fp8, 0)), std::invalid_argument);
}

TEST_CASE("amax traces round-trip through text and replay with other settings") {
    Experiment c = small(Precision::Fp8, 12);
    const TrainerResult r = train_mlp(c, {}, true);
    REQUIRE(r.trace.records.size() == 12 * 3 * 3);  // steps x layers x (input, weight, grad)
    std::stringstream text;
    write_amax_trace(text, r.trace);
    const AmaxTrace back = read_amax_trace(text, "memory");
    REQUIRE(back.records.size() == r.trace.records.size());
    for (std::size_t i = 0; i < back.records.size(); ++i) {
        CHECK(back.records[i].amax == r.trace.records[i].amax);
        CHECK(back.records[i].scale == r.trace.records[i].scale);
        CHECK(back.records[i].log2_histogram == r.trace.records[i].log2_histogram);
    }
    // Replaying the run's own settings reproduces the scales it used.
    const auto same = replay_delayed_scaling(back, FormatRecipe::Hybrid, c.numerics.delayed);
    for (std::size_t i = 0; i < same.size(); ++i) CHECK(same[i].scale == back.records[i].scale);
    // A history of 1 follows the amax at once: scales differ somewhere.
    const auto short_history = replay_delayed_scaling(back, FormatRecipe::Hybrid, {1, AmaxAlgorithm::Max, 0});
    bool differs = false;
    for (std::size_t i = 0; i < same.size(); ++i) differs = differs || short_history[i].scale != same[i].scale;
    CHECK(differs);
}

TEST_CASE("a trace carries each cast's numerics (v3); v2 traces without them still read") {
    Experiment c = small(Precision::Fp8, 4);
    TrainerResult r = train_mlp(c, {}, true, true);
    attach_numerics(r.trace, r.numerics);
    REQUIRE(!r.trace.records.empty());
    for (const AmaxTraceRecord& rec : r.trace.records) CHECK(rec.numerics.has_value());
    std::stringstream text;
    write_amax_trace(text, r.trace);
    const AmaxTrace back = read_amax_trace(text, "memory");
    REQUIRE(back.records.size() == r.trace.records.size());
    for (std::size_t i = 0; i < back.records.size(); ++i) {
        REQUIRE(back.records[i].numerics.has_value());
        const TensorNumerics &a = *back.records[i].numerics, &b = *r.trace.records[i].numerics;
        CHECK(a.tensor == b.tensor);
        CHECK(a.elements == b.elements);
        CHECK(a.zeros == b.zeros);
        CHECK(a.flushed == b.flushed);
        CHECK(a.saturated == b.saturated);
        CHECK(a.subnormal == b.subnormal);
        CHECK(a.relative_error == doctest::Approx(b.relative_error).epsilon(1e-5));  // %.6g
    }
    std::stringstream v2(
        "# fp8lab amax trace v2\nstep,tensor,amax,scale,histogram\n0,fc1.input,0x1p+0,0x1p+0,\n# records: 1\n");
    const AmaxTrace old = read_amax_trace(v2, "old.csv");
    REQUIRE(old.records.size() == 1);
    CHECK(!old.records[0].numerics);
    const std::string head =
        "# fp8lab amax trace v3\nstep,tensor,amax,scale,histogram,elements,zeros,flushed,saturated,subnormal,"
        "relative_error\n";
    const auto refused = [&](const std::string& record, const std::string& message) {
        CAPTURE(record);
        std::stringstream in(head + record + "\n# records: 1\n");
        CHECK_THROWS_WITH(read_amax_trace(in, "t.csv"), doctest::Contains(message.c_str()));
    };
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,1,2,0,3", "t.csv:3: expected 11 comma-separated fields");
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,1,,0,3,0.1", "flushed '' is not a count");
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,11,0,0,3,0.1", "zeros 11 is more than the 10 elements");
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,6,6,0,3,0.1", "zeros and flushed add up to more than the 10");
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,1,2,0,3,-1", "relative_error '-1' is not a number");
    refused("0,fc1.input,0x1p+0,0x1p+0,,10,1,2,0,3,inf", "relative_error 'inf'");
}

TEST_CASE("a malformed trace is refused naming the line") {
    const std::string head = "# fp8lab amax trace v2\nstep,tensor,amax,scale,histogram\n";
    const auto refused = [&](const std::string& body, const std::string& message) {
        CAPTURE(body);
        std::stringstream in(head + body);
        CHECK_THROWS_WITH(read_amax_trace(in, "t.csv"), doctest::Contains(message.c_str()));
    };
    refused("0,fc1.input,abc,1,\n# records: 1\n", "t.csv:3: amax 'abc'");
    refused("-1,fc1.input,1,1,\n# records: 1\n", "t.csv:3: step '-1' is not a count");
    refused("18446744073709551616,fc1.input,1,1,\n# records: 1\n", "t.csv:3: step");
    refused("3,fc1.input,1,1,\n2,fc1.input,1,1,\n# records: 2\n", "t.csv:4: step 2 comes after step 3");
    refused("0,fc1.input,1,1,\n0,fc1.input,2,1,\n# records: 2\n", "t.csv:4: tensor 'fc1.input' appears twice");
    refused("0,fc1.bias,1,1,\n# records: 1\n", "does not end in .input");
    refused("0,fc1.input,-1,1,\n# records: 1\n", "amax '-1'");
    refused("0,fc1.input,1e39,1,\n# records: 1\n", "amax '1e39'");
    refused("0,fc1.input,1,0,\n# records: 1\n", "scale '0'");
    refused("0,fc1.input,1,inf,\n# records: 1\n", "scale 'inf'");
    refused("0,fc1.input,1,1,3:-2;zero:0\n# records: 1\n", "histogram count in '3:-2'");
    refused("0,fc1.input,1,1,3:18446744073709551616\n# records: 1\n", "histogram count");
    refused("0,fc1.input,1,1,4294967299:1\n# records: 1\n", "histogram exponent in '4294967299:1'");
    refused("0,fc1.input,1,1,128:1\n# records: 1\n", "[-149, 127]");
    refused("0,fc1.input,1,1,3:1;3:2\n# records: 1\n", "exponent 3 twice");
    refused("0,fc1.input,1,1,zero:1;zero:2\n# records: 1\n", "two zero bins");
    // Counts past any tensor's size would wrap the replay's sums to negative numbers.
    refused("0,fc1.input,1,1,3:18446744073709551615\n# records: 1\n", "add up past 2^62 elements");
    refused("0,fc1.input,1,1,3:4611686018427387904;zero:1\n# records: 1\n", "add up past 2^62 elements");
    refused("0,fc1.input,1,1,\n", "t.csv:3: the trace ends without its '# records: N' line: the file is truncated");
    refused("0,fc1.input,1,1,\n# records: 2\n", "t.csv:4: the trace declares 2 records but holds 1");
    refused("0,fc1.input,1,1,\n# records: 1\n1,fc1.input,1,1,\n", "t.csv:5: text after");
    std::stringstream fine(head + "0,fc1.input,inf,1,-149:1;127:2;zero:3\r\n0,fc1.weight,nan,0x1p-3,\n# records: 2\n");
    const AmaxTrace ok = read_amax_trace(fine, "ok");
    REQUIRE(ok.records.size() == 2);
    CHECK(ok.records[0].log2_histogram.at(-149) == 1);
    CHECK(ok.records[0].zeros == 3);
    CHECK(std::isnan(ok.records[1].amax));
    // "#(records: 4" is a comment, not a header "records" (the fuzzer's find: written back
    // as "# records: 4" it read as the closing line before the columns).
    std::stringstream odd_header(head + "0,fc1.input,1,1,\n# records: 1\n");
    std::string odd = odd_header.str();
    odd.insert(odd.find('\n') + 1, "#(records: 4\n");
    std::stringstream odd_in(odd);
    const AmaxTrace read_odd = read_amax_trace(odd_in, "odd");
    CHECK(read_odd.header.empty());
    std::stringstream written;
    write_amax_trace(written, read_odd);
    CHECK(read_amax_trace(written, "again").records.size() == 1);
    std::stringstream v1("# fp8lab amax trace v1\nstep,tensor,amax,scale,histogram\n");
    CHECK_THROWS_WITH(read_amax_trace(v1, "old"), doctest::Contains("old:1: a v1 trace carries no record count"));
    std::stringstream not_trace("hello\n");
    CHECK_THROWS_WITH(read_amax_trace(not_trace, "x"), doctest::Contains("x:1: not an fp8lab amax trace"));
}

TEST_CASE("the trained model quantised for inference: exact without quantisation, coarser formats err more") {
    Experiment e;
    e.model = ModelSpec::mlp(32, 64, 1, 8, true);
    e.task = {TaskKind::GaussianClusters, 3, 8};
    e.tokens = 64;
    e.steps = 30;
    e.numerics.precision = Precision::Fp32;
    e.inference.enabled = true;
    const TrainerResult trained = train_mlp(e);
    REQUIRE(trained.inference);
    CHECK(trained.inference->evaluated_rows == 8 * 64);

    Experiment none = e;
    none.inference.weights = WeightQuantization::None;
    none.inference.activations = ActivationQuantization::None;
    const InferenceResult exact = evaluate_inference(none, trained.final_layers);
    CHECK(exact.output_error == 0.0);
    CHECK(exact.quantized_loss == exact.reference_loss);
    CHECK(exact.agreement == 100.0);

    const InferenceResult e4m3_static = evaluate_inference(e, trained.final_layers);
    Experiment fp4 = e;
    fp4.inference.format = &e2m1();
    const InferenceResult e2m1_static = evaluate_inference(fp4, trained.final_layers);
    CHECK(e4m3_static.output_error > 0.0);
    CHECK(e4m3_static.output_error < 0.1);
    CHECK(e2m1_static.output_error > 2 * e4m3_static.output_error);
    CHECK(e4m3_static.reference_loss == exact.reference_loss);
    // Each granularity is a different computation.
    for (ActivationQuantization a : {ActivationQuantization::Dynamic, ActivationQuantization::PerToken}) {
        Experiment other = e;
        other.inference.activations = a;
        CHECK(evaluate_inference(other, trained.final_layers).output_error != e4m3_static.output_error);
    }
    // A cancelled run evaluates nothing.
    CHECK_FALSE(train_mlp(e, [](int, float) { return false; }).inference);
}

TEST_CASE("a weight gradient is known finite from its GEMM's operands only where no sum can overflow") {
    Matrix a = Matrix::Constant(32, 8, 0.5f), b = Matrix::Constant(32, 16, -2.0f);
    CHECK(product_certainly_finite(a, b, 32));
    // Finite operands whose product overflows: 32 sums of 1e19 x 1e19 each.
    Matrix big_a = Matrix::Constant(32, 8, 1e19f), big_b = Matrix::Constant(32, 16, 1e19f);
    const Matrix product = big_a.transpose() * big_b;
    REQUIRE(!all_finite(product.data(), std::size_t(product.size())));
    CHECK(!product_certainly_finite(big_a, big_b, 32));
    // The bound's edge: 32 x 2^60 x 2^60 = 2^125, a quarter of float32's largest is under 2^126.
    big_a.setConstant(0x1p60f);
    big_b.setConstant(0x1p60f);
    CHECK(product_certainly_finite(big_a, big_b, 32));
    big_b(31, 15) = 0x1p61f;  // 2^126: past it
    CHECK(!product_certainly_finite(big_a, big_b, 32));
    // Any Inf or NaN in an operand, or longer sums than the bound allows for.
    Matrix inf = a, nan = b;
    inf(31, 7) = std::numeric_limits<float>::infinity();
    nan(0, 0) = std::numeric_limits<float>::quiet_NaN();
    CHECK(!product_certainly_finite(inf, b, 32));
    CHECK(!product_certainly_finite(a, nan, 32));
    CHECK(!product_certainly_finite(Matrix::Zero(4097, 2), Matrix::Zero(4097, 2), 4097));
    CHECK(product_certainly_finite(Matrix::Zero(4096, 2), Matrix::Zero(4096, 2), 4096));
}
