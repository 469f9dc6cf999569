// SPDX-License-Identifier: Apache-2.0
// Runs a step (or a training comparison) on a worker thread so the UI never blocks; the
// view reads progress and the growing partial output while it runs.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "labs/framework/run_context.hpp"
#include "labs/framework/step_output.hpp"

namespace fp8lab::gui {

class StepRunner {
  public:
    using Work = std::function<labs::StepOutput(labs::RunContext&)>;
    StepRunner() = default;
    StepRunner(const StepRunner&) = delete;
    StepRunner& operator=(const StepRunner&) = delete;
    ~StepRunner();

    // Cancels and waits for a run in progress, then starts `work`.
    void start(Work work, labs::Backend backend, std::uint64_t seed = 1);
    void cancel();  // asks the run to stop; it ends at its next check
    bool running() const;
    double progress() const;
    std::string progress_text() const;
    // The finished output, else the partial one, else the last finished run's (so the view
    // does not flicker while a new run starts); nullptr before the first.
    std::shared_ptr<const labs::StepOutput> output() const;
    std::string error() const;  // why the last run failed ("cancelled" when it was)

  private:
    struct Run;
    void join();
    std::shared_ptr<Run> run_;
    std::thread thread_;
    std::shared_ptr<const labs::StepOutput> last_output_;
};

}  // namespace fp8lab::gui
