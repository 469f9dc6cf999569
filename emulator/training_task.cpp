// Seeded task data: a fixed random teacher network, or Gaussian clusters to classify.
#include "emulator/training_task.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "emulator/stochastic_bits.hpp"

namespace fp8lab::emu {

std::string_view task_kind_name(TaskKind kind) {
    return kind == TaskKind::TeacherRegression ? "teacher" : "clusters";
}

float normal_sample(std::uint64_t seed, std::uint64_t index) {
    const double u1 = (stochastic_bits(seed, 2 * index, 32) + 1.0) * 0x1p-32;
    const double u2 = stochastic_bits(seed, 2 * index + 1, 32) * 0x1p-32;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

TrainingTask::TrainingTask(TaskConfig config) : config_(config) {
    if (config.input_dim < 1 || config.output_dim < 1)
        throw std::invalid_argument("task dimensions must be positive");
    if (config.kind == TaskKind::GaussianClusters && config.output_dim < 2)
        throw std::invalid_argument("a classification task needs at least 2 classes");
    const int d = config.input_dim, h = 2 * d, o = config.output_dim;
    const std::uint64_t model_seed = mix64(config.seed ^ 0x7EAC4E5ull);
    if (config.kind == TaskKind::TeacherRegression) {
        teacher_in_.resize(std::size_t(h) * d);
        teacher_out_.resize(std::size_t(o) * h);
        for (std::size_t i = 0; i < teacher_in_.size(); ++i)
            teacher_in_[i] = normal_sample(model_seed, i) / std::sqrt(float(d));
        for (std::size_t i = 0; i < teacher_out_.size(); ++i)
            teacher_out_[i] = normal_sample(model_seed + 1, i) / std::sqrt(float(h));
    } else {
        centers_.resize(std::size_t(o) * d);
        for (std::size_t i = 0; i < centers_.size(); ++i)
            centers_[i] = 1.5f * normal_sample(model_seed, i) / std::sqrt(float(d)) * 3.0f;
    }
}

Batch TrainingTask::batch(std::uint64_t step, int tokens) const {
    const int d = config_.input_dim, o = config_.output_dim;
    const std::uint64_t data_seed = mix64(config_.seed * 31 + step);
    Batch b;
    b.tokens = tokens;
    b.inputs.resize(std::size_t(tokens) * d);
    b.targets.assign(std::size_t(tokens) * o, 0.0f);
    if (config_.kind == TaskKind::TeacherRegression) {
        for (std::size_t i = 0; i < b.inputs.size(); ++i) b.inputs[i] = normal_sample(data_seed, i);
        const int h = 2 * d;
        std::vector<float> hidden(h);
        for (int t = 0; t < tokens; ++t) {
            const float* x = &b.inputs[std::size_t(t) * d];
            for (int j = 0; j < h; ++j) {
                float s = 0;
                for (int k = 0; k < d; ++k) s += teacher_in_[std::size_t(j) * d + k] * x[k];
                hidden[j] = std::tanh(s);
            }
            for (int j = 0; j < o; ++j) {
                float s = 0;
                for (int k = 0; k < h; ++k) s += teacher_out_[std::size_t(j) * h + k] * hidden[k];
                b.targets[std::size_t(t) * o + j] = s;
            }
        }
    } else {
        b.labels.resize(tokens);
        for (int t = 0; t < tokens; ++t) {
            const int label = static_cast<int>(stochastic_bits(data_seed, ~std::uint64_t(t), 32) % o);
            b.labels[t] = label;
            b.targets[std::size_t(t) * o + label] = 1.0f;
            for (int k = 0; k < d; ++k)
                b.inputs[std::size_t(t) * d + k] =
                    centers_[std::size_t(label) * d + k] + normal_sample(data_seed, std::size_t(t) * d + k);
        }
    }
    return b;
}

}  // namespace fp8lab::emu
