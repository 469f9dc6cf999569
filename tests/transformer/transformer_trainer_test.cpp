// SPDX-License-Identifier: Apache-2.0
// The transformer's CPU trainer: gradients by finite differences, learning, determinism
// for any thread count, its data and the settings it refuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unistd.h>

#include "emulator/models/cpu_training.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/models/transformer/text_corpus.hpp"
#include "tests/emulator/thread_counts.hpp"
#include "emulator/training/training_task.hpp"
#include "emulator/models/transformer/transformer_trainer.hpp"

using namespace fp8lab::emu;
namespace fs = std::filesystem;

namespace {

// A small corpus written by this test: English sentences, long enough for both parts. The
// file lives as long as the test process and is removed when it ends.
struct TestCorpus {
    fs::path file = fs::temp_directory_path() / ("fp8lab-corpus-" + std::to_string(getpid()) + ".txt");
    TestCorpus() {
        std::ofstream out(file);
        const char* lines[] = {"The quick brown fox jumps over the lazy dog.\n",
                               "A stitch in time saves nine, said the tailor to his apprentice.\n",
                               "Every lab step trains the same model with that step's settings.\n",
                               "Numbers have formats; formats have limits; limits have consequences.\n"};
        for (int i = 0; i < 800; ++i) out << lines[i % 4] << (i % 7 == 0 ? "And so it goes.\n" : "");
        out.close();
        if (!out) throw std::runtime_error("cannot write the test corpus " + file.string());
    }
    ~TestCorpus() {
        std::error_code ignored;
        fs::remove(file, ignored);
    }
};

std::string test_corpus() {
    static const TestCorpus corpus;
    return corpus.file.string();
}

Experiment tiny(Precision p, int steps = 3) {
    Experiment e = default_transformer_experiment();
    TransformerSpec& t = e.model.transformer;
    t.width = 16, t.layers = 2, t.heads = 4, t.kv_heads = 2, t.ffn = 24, t.sequence = 8;
    e.tokens = 16;
    e.steps = steps;
    e.optimizer.learning_rate = 3e-3f;  // a tiny model's rate: its loss falls visibly in 60 steps
    e.numerics.precision = p;
    e.task.corpus = test_corpus();
    e.task.eval_sequences = 4;
    return e;
}

}  // namespace

TEST_CASE("every parameter's gradient matches central differences of the loss (FP32)") {
    for (const bool fused : {true, false})
        for (const bool tied : {false, true}) {
            CAPTURE(fused);
            CAPTURE(tied);
            Experiment e = tiny(Precision::Fp32);
            e.model.transformer.fused_qkv = fused;
            e.model.transformer.tied_output = tied;
            CHECK(transformer_first_step_gradients(e).loss ==
                  doctest::Approx(std::log(256.0)).epsilon(0.05));  // near uniform at the start
            // Away from the start, where every path carries gradient (at 0.02 the feed-forward
            // path into the residual is too faint to check): weights of about 0.3, gains about 1.
            std::vector<ParameterGradient> params = transformer_first_step_gradients(e).parameters;
            for (std::size_t p = 0; p < params.size(); ++p)
                for (std::size_t i = 0; i < params[p].value.size(); ++i)
                    params[p].value[i] =
                        params[p].rows == 1 ? 1.0f + 0.3f * normal_sample(77 + p, i) : 0.3f * normal_sample(99 + p, i);
            const TransformerGradients g = transformer_first_step_gradients(e, &params);
            for (std::size_t p = 0; p < params.size(); ++p) {
                CAPTURE(params[p].name);
                // Along the gradient's own direction u the loss changes by |g| per unit step:
                // a wrong magnitude or a wrong direction (g . u_true < |g|) both show, and the
                // change is far above the loss's float32 rounding.
                const std::vector<float>& grad = g.parameters[p].gradient;
                double norm = 0;
                for (const float x : grad) norm += double(x) * x;
                norm = std::sqrt(norm);
                REQUIRE(norm > 0);
                const double h = 1e-2;
                const auto moved = [&](double t) {
                    std::vector<ParameterGradient> q = params;
                    for (std::size_t i = 0; i < grad.size(); ++i) q[p].value[i] += float(t * grad[i] / norm);
                    return transformer_loss(e, q);
                };
                const double numeric = (moved(h) - moved(-h)) / (2 * h);
                CHECK(norm == doctest::Approx(numeric).epsilon(0.02));
            }
        }
}

TEST_CASE("fused and separate QKV start from the same weights") {
    Experiment fused = tiny(Precision::Fp32), separate = tiny(Precision::Fp32);
    separate.model.transformer.fused_qkv = false;
    const TransformerGradients a = transformer_first_step_gradients(fused),
                               b = transformer_first_step_gradients(separate);
    CHECK(a.parameters.size() + 4 == b.parameters.size());  // q, k, v for qkv in each of 2 blocks
    CHECK(a.loss == doctest::Approx(b.loss).epsilon(1e-6));
}

TEST_CASE("the loss falls and the validation loss is reported, in every precision") {
    for (const Precision p : {Precision::Fp32, Precision::Bf16, Precision::Fp8}) {
        CAPTURE(precision_name(p));
        Experiment e = tiny(p, 60);
        e.task.eval_every = 20;
        const TrainerResult r = train_on_cpu(e);
        REQUIRE(r.loss.size() == 60u);
        CHECK(final_loss(r.loss) < 0.75 * r.loss.front());
        REQUIRE(r.text);
        CHECK(r.text->validation.size() == 3u);
        CHECK(r.text->validation.back().step == 59);
        CHECK(r.text->validation.back().bits_per_byte < r.text->validation.front().bits_per_byte);
        CHECK(r.text->corpus.find(test_corpus()) == 0);
        CHECK(r.text->greedy.size() == 80u);
        CHECK(r.text->sampled.size() == 80u);
        CHECK(r.text->parameters == transformer_parameters(e.model.transformer));
    }
}

TEST_CASE("the same bits for any thread count, for each recipe") {
    for (const Fp8Recipe recipe :
         {Fp8Recipe::Delayed, Fp8Recipe::Current, Fp8Recipe::MxFloor, Fp8Recipe::Blockwise, Fp8Recipe::Nvfp4}) {
        CAPTURE(fp8_recipe_name(recipe));
        Experiment e = tiny(Precision::Fp8, 4);
        set_recipe(e, recipe);
        e.model.transformer.width = 32, e.model.transformer.ffn = 64;
        const auto [serial, parallel] = fp8lab::test::on_one_and_two_threads([&] { return train_on_cpu(e).loss; });
        CHECK(serial == parallel);
    }
}

TEST_CASE("fast accumulation's model changes the FP8 GEMMs' sums, the same for any thread count") {
    Experiment e = tiny(Precision::Fp8, 4);
    set_recipe(e, Fp8Recipe::Current);
    const std::vector<float> promoted = train_on_cpu(e).loss;
    e.numerics.fast_accumulation = {true, true, true};
    const auto [serial, parallel] = fp8lab::test::on_one_and_two_threads([&] { return train_on_cpu(e).loss; });
    CHECK(serial == parallel);
    CHECK(serial != promoted);
    CHECK(std::abs(serial.back() - promoted.back()) < 0.05 * promoted.back());  // a few bits, not a new model
}

TEST_CASE("a step's windows are a function of the seed and the step, from the training part") {
    const TextCorpus c = load_corpus(test_corpus(), 8);
    CHECK(c.validation.size() * 8 < c.train.size());
    const TextBatch a = training_batch(c, 1, 5, 3, 8), b = training_batch(c, 1, 5, 3, 8),
                    other = training_batch(c, 2, 5, 3, 8);
    CHECK(a.inputs == b.inputs);
    CHECK(a.inputs != other.inputs);
    REQUIRE(a.inputs.size() == 24u);
    for (int j = 0; j < 3; ++j)  // targets are the inputs shifted by one byte
        for (int i = 0; i + 1 < 8; ++i)
            CHECK(a.targets[std::size_t(j * 8 + i)] == a.inputs[std::size_t(j * 8 + i + 1)]);
    const TextBatch v1 = validation_batch(c, 0, 4, 4, 8), v2 = validation_batch(c, 0, 4, 4, 8);
    CHECK(v1.inputs == v2.inputs);
}

TEST_CASE("settings the transformer cannot take are refused before any work, the field named") {
    const auto refused = [](const Experiment& e) {
        try {
            validate(e);
        } catch (const std::invalid_argument& err) {
            return std::string(err.what());
        }
        return std::string();
    };
    Experiment e = tiny(Precision::Fp8);
    e.model.transformer.heads = 3;
    CHECK(refused(e).rfind("model.transformer.heads:", 0) == 0);
    e = tiny(Precision::Fp8);
    e.model.transformer.kv_heads = 3;
    CHECK(refused(e).rfind("model.transformer.kv_heads:", 0) == 0);
    e = tiny(Precision::Fp8);
    e.tokens = 20;
    CHECK(refused(e).rfind("tokens:", 0) == 0);
    e = tiny(Precision::Fp8);
    e.task.kind = TaskKind::TeacherRegression;
    CHECK(refused(e).rfind("task.kind:", 0) == 0);
    e = tiny(Precision::Fp8);
    e.numerics.edge_layers_bf16 = true;
    CHECK(refused(e).rfind("numerics.edge_layers_bf16:", 0) == 0);
    Experiment mlp;
    mlp.task.kind = TaskKind::Text;
    CHECK(refused(mlp).rfind("task.kind:", 0) == 0);

    e = tiny(Precision::Fp8);
    e.task.corpus = "/nonexistent/corpus.txt";
    CHECK_THROWS_WITH_AS(train_on_cpu(e), doctest::Contains("task.corpus: /nonexistent/corpus.txt: does not exist"),
                         std::runtime_error);
    e = tiny(Precision::Fp8);
    e.model.transformer.sequence = 1 << 15;
    e.tokens = 1 << 15;
    CHECK_THROWS_WITH_AS(train_on_cpu(e), doctest::Contains("too short for windows of 32769 bytes"),
                         std::runtime_error);
}

TEST_CASE("the experiment file: version 2 keeps the transformer; version 1 still loads; newer is refused") {
    Experiment e = tiny(Precision::Fp8);
    e.model.transformer.fused_qkv = false;
    e.model.transformer.tied_output = true;
    e.task.eval_every = 7;
    const Experiment back = experiment_from_json(to_json(e), "t.json");
    CHECK(back == e);
    CHECK(back.model.kind == ModelKind::Transformer);
    CHECK(back.task.corpus == test_corpus());
    const Experiment v1 = experiment_from_json(R"({"fp8lab_experiment": 1, "model": {"hidden": 96}})", "v1.json");
    CHECK(v1.model.kind == ModelKind::Mlp);
    CHECK(v1.model.hidden == 96);
    CHECK_THROWS_WITH_AS(experiment_from_json(R"({"fp8lab_experiment": 3})", "v3.json"),
                         doctest::Contains("v3.json:1: fp8lab_experiment: version 3 was written by a newer fp8lab"),
                         std::runtime_error);
}

TEST_CASE("the default transformer learns visibly: at most 3.0 bits per byte, and it writes mostly words") {
    // Debian's American English word list (package wamerican); a machine without it reports
    // the test skipped by name.
    std::ifstream dictionary("/usr/share/dict/american-english");
    if (!dictionary) {
        MESSAGE("skipped: /usr/share/dict/american-english is missing (apt install wamerican)");
        return;
    }
    std::set<std::string> words;
    const auto lower = [](std::string s) {
        for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    for (std::string w; std::getline(dictionary, w);) words.insert(lower(w));
    Experiment e = default_transformer_experiment();
    e.numerics.precision = Precision::Bf16;
    const TrainerResult r = train_on_cpu(e);
    REQUIRE(r.text);
    const double bits = r.text->validation.back().bits_per_byte;
    MESSAGE("validation loss " << bits << " bits per byte; it writes: " << r.text->sampled);
    CHECK(bits <= 3.0);
    // Space-separated tokens, their punctuation at either end taken off.
    std::istringstream sampled(r.text->sampled);
    int tokens = 0, known = 0;
    for (std::string token; sampled >> token;) {
        const std::size_t first = token.find_first_not_of(".,;:!?\"'()-"),
                          last = token.find_last_not_of(".,;:!?\"'()-");
        if (first == std::string::npos) continue;
        ++tokens;
        known += words.count(lower(token.substr(first, last - first + 1)));
    }
    MESSAGE(known << " of " << tokens << " tokens are words");
    CHECK(2 * known >= tokens);
}
