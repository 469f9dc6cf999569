// Training tasks generated from a seed: a teacher-network regression and Gaussian clusters.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace fp8lab::emu {

enum class TaskKind { TeacherRegression, GaussianClusters };
std::string_view task_kind_name(TaskKind kind);  // "teacher" / "clusters"

struct TaskConfig {
    TaskKind kind = TaskKind::TeacherRegression;
    int input_dim = 64;
    int output_dim = 16;  // regression outputs, or classes
    std::uint64_t seed = 1;
};

// A batch, row-major: inputs tokens x input_dim; targets tokens x output_dim (one-hot
// for classification) and labels (classification only).
struct Batch {
    int tokens = 0;
    std::vector<float> inputs, targets;
    std::vector<int> labels;
};

class TrainingTask {
public:
    explicit TrainingTask(TaskConfig config);

    // The batch of step `step`: a function of (seed, step) only, so any run, thread
    // count or backend sees the same data.
    Batch batch(std::uint64_t step, int tokens) const;
    const TaskConfig& config() const { return config_; }

private:
    TaskConfig config_;
    std::vector<float> teacher_in_, teacher_out_;  // teacher: d -> 2d (tanh) -> out
    std::vector<float> centers_;                   // clusters: classes x d
};

// Normal(0, 1) from the counter-based generator: a pure function of (seed, index).
float normal_sample(std::uint64_t seed, std::uint64_t index);

}  // namespace fp8lab::emu
