// SPDX-License-Identifier: Apache-2.0
// Seeded task data: a fixed random teacher (target = tanh(x Wt^T)), with or without massive
// input channels, or Gaussian clusters.
#include "emulator/training/training_task.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "emulator/base/fixed_order_dot.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

// Round to BF16, nearest-even (the data are finite and far from BF16's overflow).
float to_bf16(float x) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return std::bit_cast<float>(u & 0xFFFF0000u);
}

}  // namespace

float normal_sample(std::uint64_t seed, std::uint64_t index) {
    const double u1 = (stochastic_bits(seed, 2 * index, 32) + 1.0) * 0x1p-32;
    const double u2 = stochastic_bits(seed, 2 * index + 1, 32) * 0x1p-32;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

std::vector<float> initial_weights(const Experiment& e, int layer) {
    const int in = layer == 0 ? e.model.input : e.model.hidden;
    const int out = layer == e.model.hidden_layers ? e.model.output : e.model.hidden;
    std::vector<float> w(std::size_t(in) * out);
    const float stddev = 1.0f / std::sqrt(float(in));
    const std::uint64_t seed = e.init_seed * 1000 + std::uint64_t(layer);
    parallel_for_chunks(w.size(), 1 << 16, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) w[i] = stddev * normal_sample(seed, i);
    });
    // The outlier task's massive channels start with weights as much smaller, as a trained
    // network's are, so that the massive rows' hidden activations are ordinary ones. No
    // gradient ever reaches these weights (the channels are zero in every scored row).
    if (layer == 0 && e.task.kind == TaskKind::OutlierFeatures)
        for (int j = 0; j < out; ++j)
            for (int c : kOutlierChannels)
                if (c < in) w[std::size_t(j) * in + c] /= e.task.outlier_scale;
    return w;
}

TrainingTask::TrainingTask(const Experiment& e)
    : kind_(e.task.kind),
      seed_(e.task.seed),
      input_(e.model.input),
      output_(e.model.output),
      tokens_(e.tokens),
      batches_(e.task.batches),
      outlier_scale_(e.task.outlier_scale) {
    if (input_ < 1 || output_ < 1 || tokens_ < 1 || batches_ < 1)
        throw std::invalid_argument("task: sizes and batch count must be positive");
    if (kind_ == TaskKind::GaussianClusters && output_ < 2)
        throw std::invalid_argument("model.output: a classification task needs at least 2 classes");
    const std::uint64_t model_seed = mix64(seed_ ^ 0x7EAC4E5ull);
    if (is_regression(kind_)) {
        teacher_.resize(std::size_t(output_) * input_);
        const float stddev = 1.0f / std::sqrt(float(input_));
        for (std::size_t i = 0; i < teacher_.size(); ++i) teacher_[i] = stddev * normal_sample(model_seed, i);
        if (kind_ == TaskKind::OutlierFeatures) {
            if (input_ <= kOutlierChannels.back())
                throw std::invalid_argument("task: the outlier task needs at least " +
                                            std::to_string(kOutlierChannels.back() + 1) + " inputs");
            // Alternating signs, as measured massive activations have either sign.
            for (std::size_t i = 0; i < kOutlierChannels.size(); ++i)
                outliers_.push_back(to_bf16(i % 2 ? -outlier_scale_ : outlier_scale_));
        }
    } else {
        centers_.resize(std::size_t(output_) * input_);
        for (std::size_t i = 0; i < centers_.size(); ++i)
            centers_[i] = 4.5f * normal_sample(model_seed, i) / std::sqrt(float(input_));
    }
}

Batch TrainingTask::batch_of_step(std::uint64_t step) const { return batch(step % std::uint64_t(batches_), tokens_); }

Batch TrainingTask::batch(std::uint64_t index, int tokens) const {
    const int d = input_, o = output_;
    const std::uint64_t data_seed = mix64(seed_ * 31 + index);
    Batch b;
    b.tokens = tokens;
    b.inputs.resize(std::size_t(tokens) * d);
    b.targets.assign(std::size_t(tokens) * o, 0.0f);
    // Rows in chunks of a few, so that both cores share even a short batch (the notebook's 32
    // rows, each 768 normal draws and 768 dot products of 768: 3.8 ms on one core, 1.9 on
    // two): every row is computed alone, so the chunking and the thread count change no bit.
    constexpr std::size_t kRowsPerChunk = 4;
    if (is_regression(kind_)) {
        parallel_for_chunks(std::size_t(tokens), kRowsPerChunk, [&](std::size_t, std::size_t begin, std::size_t end) {
            for (std::size_t t = begin; t < end; ++t) {
                float* x = &b.inputs[t * d];
                for (int k = 0; k < d; ++k) x[k] = to_bf16(normal_sample(data_seed, t * d + k));
                // The massive channels: their values in a massive row, zero in the others.
                for (std::size_t i = 0; i < outliers_.size(); ++i)
                    x[kOutlierChannels[i]] = is_massive_row(int(t)) ? outliers_[i] : 0.0f;
                for (int j = 0; j < o; ++j)
                    b.targets[t * o + j] = to_bf16(std::tanh(dot_fixed_order(&teacher_[std::size_t(j) * d], x, d)));
            }
        });
        if (!outliers_.empty()) {
            b.scored.resize(std::size_t(tokens));
            for (int t = 0; t < tokens; ++t) b.scored[std::size_t(t)] = is_massive_row(t) ? 0 : 1;
        }
    } else {
        b.labels.resize(tokens);
        parallel_for_chunks(std::size_t(tokens), kRowsPerChunk, [&](std::size_t, std::size_t begin, std::size_t end) {
            for (std::size_t t = begin; t < end; ++t) {
                const int label = static_cast<int>(stochastic_bits(data_seed, ~std::uint64_t(t), 32) % o);
                b.labels[t] = label;
                b.targets[t * o + label] = 1.0f;
                for (int k = 0; k < d; ++k)
                    b.inputs[t * d + k] =
                        to_bf16(centers_[std::size_t(label) * d + k] + normal_sample(data_seed, t * d + k));
            }
        });
    }
    return b;
}

}  // namespace fp8lab::emu
