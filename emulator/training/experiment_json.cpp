// SPDX-License-Identifier: Apache-2.0
// The experiment's JSON form: written with every field named, read back strictly (unknown
// or mistyped fields and newer versions are refused with file:line and the field's name).
#include <charconv>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>

#include "emulator/base/quoted_input.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/base/bounds.hpp"
#include "emulator/io/json_reader.hpp"
#include "emulator/io/json_writer.hpp"

namespace fp8lab::emu {
namespace {

constexpr const char* kVersionKey = "fp8lab_experiment";

void write_roles(json::JsonWriter& w, const char* key, const PerRole<const Format*>& f) {
    w.key(key).begin_object().key("input").value(f.input->name).key("weight").value(f.weight->name);
    w.key("gradient").value(f.gradient->name).end_object();
}
void write_roles(json::JsonWriter& w, const char* key, const PerRole<RoundingMode>& r) {
    w.key(key).begin_object().key("input").value(enum_name(r.input)).key("weight").value(enum_name(r.weight));
    w.key("gradient").value(enum_name(r.gradient)).end_object();
}

// Reads one JSON object into fields: each known key has a reader; the rest are errors.
class ObjectReader {
  public:
    ObjectReader(const json::Value& v, std::string path, std::string_view source)
        : v_(v), path_(std::move(path)), source_(source) {
        if (v.kind != json::Value::Kind::Object) fail(v, path_.empty() ? "the file" : path_, "must be an object");
    }

    [[noreturn]] void fail(const json::Value& at, const std::string& field, const std::string& why) const {
        throw std::runtime_error(std::string(source_) + ":" + std::to_string(at.line) + ": " + field + ": " + why);
    }
    std::string field(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

    template <class Fn>
    void on(std::string_view key, Fn&& read) {
        known_.emplace_back(key);
        if (const json::Value* m = v_.find(key)) {
            try {
                read(*m, field(key));
            } catch (const std::invalid_argument& e) {
                fail(*m, field(key), e.what());
            }
        }
    }
    void integer(std::string_view key, long long& out, IntegerBounds b) {
        on(key, [&](const json::Value& m, const std::string& f) { out = read_integer(m, f, b); });
    }
    void integer(std::string_view key, int& out, IntegerBounds b) {
        long long v = out;
        integer(key, v, b);
        out = int(v);
    }
    void seed(std::string_view key, std::uint64_t& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::Number);
            std::uint64_t v = 0;
            const char* end = m.text.data() + m.text.size();
            const auto r = std::from_chars(m.text.data(), end, v);
            if (r.ec != std::errc() || r.ptr != end)
                fail(m, f, "must be a whole number from 0 to 18446744073709551615, not " + m.text);
            out = v;
        });
    }
    void number(std::string_view key, float& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::Number);
            const double d = std::strtod(m.text.c_str(), nullptr);
            if (!std::isfinite(d) || std::fabs(d) > 3.4028234663852886e38)
                fail(m, f, "is out of float32's range: " + m.text);
            out = float(d);
        });
    }
    void text(std::string_view key, std::string& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::String);
            out = m.text;
        });
    }
    void boolean(std::string_view key, bool& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::Bool);
            out = m.boolean;
        });
    }
    template <class E>
    void choice(std::string_view key, E& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::String);
            const std::optional<E> v = parse_enum<E>(m.text);
            if (!v) fail(m, f, quoted_input(m.text) + " is not " + enum_choices<E>());
            out = *v;
        });
    }
    void format(std::string_view key, const Format*& out) {
        on(key, [&](const json::Value& m, const std::string& f) {
            expect(m, f, json::Value::Kind::String);
            const Format* found = find_format(m.text);
            if (!found) fail(m, f, quoted_input(m.text) + " is not a format (" + format_names_list() + ")");
            out = found;
        });
    }
    void object(std::string_view key, const std::function<void(ObjectReader&)>& read) {
        on(key, [&](const json::Value& m, const std::string& f) {
            ObjectReader inner(m, f, source_);
            read(inner);
            inner.finish();
        });
    }
    // Every key of the object must have been asked for.
    void finish() const {
        for (const auto& [k, m] : v_.members) {
            bool known = false;
            for (const std::string& name : known_) known = known || name == k;
            if (!known) fail(m, field(k), "unknown field");
        }
    }

  private:
    void expect(const json::Value& m, const std::string& f, json::Value::Kind kind) const {
        if (m.kind != kind)
            fail(m, f,
                 "must be " + std::string(json::kind_name(kind)) + ", not " + std::string(json::kind_name(m.kind)));
    }
    long long read_integer(const json::Value& m, const std::string& f, IntegerBounds b) const {
        expect(m, f, json::Value::Kind::Number);
        long long v = 0;
        const char* end = m.text.data() + m.text.size();
        const auto r = std::from_chars(m.text.data(), end, v);
        if (r.ec != std::errc() || r.ptr != end || !contains(b, v))
            fail(m, f, "must be a whole number from " + describe(b) + ", not " + quoted_input(m.text));
        return v;
    }

    const json::Value& v_;
    std::string path_;
    std::string_view source_;
    std::vector<std::string> known_;
};

template <class T, class Read>
void read_roles(ObjectReader& r, std::string_view key, PerRole<T>& roles, Read read) {
    r.object(key, [&](ObjectReader& o) {
        read(o, "input", roles.input);
        read(o, "weight", roles.weight);
        read(o, "gradient", roles.gradient);
    });
}

}  // namespace

std::string to_json(const Experiment& e) {
    json::JsonWriter w;
    w.begin_object().key(kVersionKey).value(Experiment::kVersion);
    w.key("model").begin_object().key("kind").value(enum_name(e.model.kind));
    w.key("input").value(e.model.input).key("hidden").value(e.model.hidden);
    w.key("hidden_layers").value(e.model.hidden_layers).key("output").value(e.model.output);
    w.key("biases").value(e.model.biases);
    const TransformerSpec& t = e.model.transformer;
    w.key("transformer").begin_object().key("width").value(t.width).key("layers").value(t.layers);
    w.key("heads").value(t.heads).key("kv_heads").value(t.kv_heads).key("ffn").value(t.ffn);
    w.key("sequence").value(t.sequence).key("fused_qkv").value(t.fused_qkv).key("tied_output").value(t.tied_output);
    w.key("output_bf16").value(t.output_bf16).end_object().end_object();
    w.key("task").begin_object().key("kind").value(enum_name(e.task.kind)).key("seed").value(e.task.seed);
    w.key("batches").value(e.task.batches).key("corpus").value(e.task.corpus);
    w.key("eval_every").value(e.task.eval_every).key("eval_sequences").value(e.task.eval_sequences);
    w.key("outlier_scale").value(e.task.outlier_scale).end_object();
    w.key("tokens").value(e.tokens).key("steps").value(e.steps).key("init_seed").value(e.init_seed);
    w.key("seeds").value(e.seeds);
    const OptimizerSpec& o = e.optimizer;
    w.key("optimizer").begin_object().key("learning_rate").value(o.learning_rate);
    w.key("beta1").value(o.beta1).key("beta2").value(o.beta2).key("epsilon").value(o.epsilon);
    w.key("weight_decay").value(o.weight_decay).key("grad_clip").value(o.grad_clip);
    w.key("schedule").begin_object().key("kind").value(enum_name(o.schedule.kind));
    w.key("warmup_steps").value(o.schedule.warmup_steps).key("floor").value(o.schedule.floor).end_object();
    w.end_object();
    const Numerics& n = e.numerics;
    w.key("numerics").begin_object().key("precision").value(enum_name(n.precision));
    w.key("recipe").value(enum_name(n.recipe));
    write_roles(w, "formats", n.formats);
    write_roles(w, "rounding", n.rounding);
    w.key("saturation").value(enum_name(n.saturation)).key("scaling").value(n.scaling);
    w.key("delayed").begin_object().key("history").value(n.delayed.history_length);
    w.key("algorithm").value(enum_name(n.delayed.algorithm)).key("margin").value(n.delayed.margin).end_object();
    w.key("fast_accumulation").begin_object().key("forward").value(n.fast_accumulation.forward);
    w.key("dgrad").value(n.fast_accumulation.dgrad).key("wgrad").value(n.fast_accumulation.wgrad).end_object();
    w.key("edge_layers_bf16").value(n.edge_layers_bf16);
    const LossScalerConfig& s = n.loss_scaler;
    w.key("loss_scaling").begin_object().key("enabled").value(n.loss_scaling);
    w.key("initial_scale").value(s.initial_scale).key("growth_factor").value(s.growth_factor);
    w.key("backoff_factor").value(s.backoff_factor).key("growth_interval").value(s.growth_interval).end_object();
    w.key("nvfp4").begin_object().key("weight_tiles").value(n.nvfp4.weight_tiles);
    w.key("stochastic_gradients").value(n.nvfp4.stochastic_gradients);
    w.key("hadamard_wgrad").value(n.nvfp4.hadamard_wgrad).end_object();
    w.end_object();
    const InferenceSpec& i = e.inference;
    w.key("inference").begin_object().key("enabled").value(i.enabled).key("format").value(i.format->name);
    w.key("weights").value(enum_name(i.weights)).key("activations").value(enum_name(i.activations));
    w.key("calibration_batches").value(i.calibration_batches).end_object();
    w.end_object();
    return w.text() + "\n";
}

Experiment experiment_from_json(std::string_view text, std::string_view source) {
    const json::Value doc = json::parse(text, source);
    Experiment e;
    ObjectReader top(doc, "", source);
    const json::Value* version = doc.find(kVersionKey);
    if (!version)
        top.fail(doc, kVersionKey,
                 "missing: this is not an fp8lab experiment file (it needs \"fp8lab_experiment\": 1)");
    long long v = 0;
    top.integer(kVersionKey, v, IntegerBounds{1, 1000000});
    if (v > Experiment::kVersion)
        top.fail(*version, kVersionKey,
                 "version " + std::to_string(v) + " was written by a newer fp8lab; this one reads version " +
                     std::to_string(Experiment::kVersion));
    top.object("model", [&](ObjectReader& m) {
        m.choice("kind", e.model.kind);
        m.object("transformer", [&](ObjectReader& t) {
            TransformerSpec& s = e.model.transformer;
            t.integer("width", s.width, bounds::kWidth);
            t.integer("layers", s.layers, bounds::kTransformerLayers);
            t.integer("heads", s.heads, bounds::kHeads);
            t.integer("kv_heads", s.kv_heads, bounds::kHeads);
            t.integer("ffn", s.ffn, bounds::kWidth);
            t.integer("sequence", s.sequence, bounds::kSequence);
            t.boolean("fused_qkv", s.fused_qkv);
            t.boolean("tied_output", s.tied_output);
            t.boolean("output_bf16", s.output_bf16);
        });
        m.integer("input", e.model.input, bounds::kWidth);
        m.integer("hidden", e.model.hidden, bounds::kWidth);
        m.integer("hidden_layers", e.model.hidden_layers, bounds::kHiddenLayers);
        m.integer("output", e.model.output, bounds::kWidth);
        m.boolean("biases", e.model.biases);
    });
    top.object("task", [&](ObjectReader& t) {
        t.choice("kind", e.task.kind);
        t.seed("seed", e.task.seed);
        t.integer("batches", e.task.batches, bounds::kBatches);
        t.text("corpus", e.task.corpus);
        t.integer("eval_every", e.task.eval_every, bounds::kSteps);
        t.integer("eval_sequences", e.task.eval_sequences, bounds::kEvalSequences);
        t.number("outlier_scale", e.task.outlier_scale);
    });
    top.integer("tokens", e.tokens, bounds::kTokens);
    top.integer("steps", e.steps, bounds::kSteps);
    top.seed("init_seed", e.init_seed);
    top.integer("seeds", e.seeds, bounds::kSeeds);
    top.object("optimizer", [&](ObjectReader& o) {
        o.number("learning_rate", e.optimizer.learning_rate);
        o.number("beta1", e.optimizer.beta1);
        o.number("beta2", e.optimizer.beta2);
        o.number("epsilon", e.optimizer.epsilon);
        o.number("weight_decay", e.optimizer.weight_decay);
        o.number("grad_clip", e.optimizer.grad_clip);
        o.object("schedule", [&](ObjectReader& s) {
            s.choice("kind", e.optimizer.schedule.kind);
            s.integer("warmup_steps", e.optimizer.schedule.warmup_steps, bounds::kWarmupSteps);
            s.number("floor", e.optimizer.schedule.floor);
        });
    });
    Numerics& n = e.numerics;
    top.object("numerics", [&](ObjectReader& r) {
        r.choice("precision", n.precision);
        r.choice("recipe", n.recipe);
        read_roles(r, "formats", n.formats, [](ObjectReader& o, const char* k, const Format*& f) { o.format(k, f); });
        read_roles(r, "rounding", n.rounding, [](ObjectReader& o, const char* k, RoundingMode& m) { o.choice(k, m); });
        r.choice("saturation", n.saturation);
        r.boolean("scaling", n.scaling);
        r.object("delayed", [&](ObjectReader& d) {
            d.integer("history", n.delayed.history_length, bounds::kHistory);
            d.choice("algorithm", n.delayed.algorithm);
            d.integer("margin", n.delayed.margin, bounds::kMargin);
        });
        r.object("fast_accumulation", [&](ObjectReader& f) {
            f.boolean("forward", n.fast_accumulation.forward);
            f.boolean("dgrad", n.fast_accumulation.dgrad);
            f.boolean("wgrad", n.fast_accumulation.wgrad);
        });
        r.boolean("edge_layers_bf16", n.edge_layers_bf16);
        r.object("loss_scaling", [&](ObjectReader& s) {
            s.boolean("enabled", n.loss_scaling);
            s.number("initial_scale", n.loss_scaler.initial_scale);
            s.number("growth_factor", n.loss_scaler.growth_factor);
            s.number("backoff_factor", n.loss_scaler.backoff_factor);
            s.integer("growth_interval", n.loss_scaler.growth_interval, bounds::kGrowthInterval);
        });
        r.object("nvfp4", [&](ObjectReader& f) {
            f.boolean("weight_tiles", n.nvfp4.weight_tiles);
            f.boolean("stochastic_gradients", n.nvfp4.stochastic_gradients);
            f.boolean("hadamard_wgrad", n.nvfp4.hadamard_wgrad);
        });
    });
    top.object("inference", [&](ObjectReader& r) {
        r.boolean("enabled", e.inference.enabled);
        r.format("format", e.inference.format);
        r.choice("weights", e.inference.weights);
        r.choice("activations", e.inference.activations);
        r.integer("calibration_batches", e.inference.calibration_batches, bounds::kCalibrationBatches);
    });
    top.finish();
    try {
        validate(e);
    } catch (const std::invalid_argument& err) {
        throw std::runtime_error(std::string(source) + ": " + err.what());
    }
    return e;
}

}  // namespace fp8lab::emu
