// SPDX-License-Identifier: Apache-2.0
// The worker thread behind every Run button: one run at a time, results handed over under a lock.
#include "app/gui/step_runner.hpp"

#include "app/gui/window.hpp"

#include <atomic>

namespace fp8lab::gui {

struct StepRunner::Run {
    explicit Run(labs::Backend backend, std::uint64_t seed) : context(backend, seed) {}
    labs::RunContext context;
    std::atomic<bool> done{false};
    mutable std::mutex mutex;
    std::shared_ptr<const labs::StepOutput> result;
    std::string error;
};

StepRunner::~StepRunner() {
    cancel();
    join();
}

void StepRunner::join() {
    if (thread_.joinable()) thread_.join();
    if (run_) {
        std::lock_guard lock(run_->mutex);
        if (run_->result) last_output_ = run_->result;
    }
}

void StepRunner::start(Work work, labs::Backend backend, std::uint64_t seed) {
    cancel();
    join();
    run_ = std::make_shared<Run>(backend, seed);
    thread_ = std::thread([run = run_, work = std::move(work)] {
        std::shared_ptr<const labs::StepOutput> result;
        std::string error;
        try {
            result = std::make_shared<labs::StepOutput>(work(run->context));
        } catch (const labs::RunCancelled&) {
            error = "cancelled";
        } catch (const std::exception& e) {
            error = e.what();
        }
        {
            std::lock_guard lock(run->mutex);
            run->result = result;
            run->error = error;
        }
        run->done = true;
        Window::wake();  // the idle loop may be asleep: show the result now
    });
}

void StepRunner::cancel() {
    if (run_) run_->context.request_cancel();
}

bool StepRunner::running() const { return run_ && !run_->done; }
double StepRunner::progress() const { return run_ ? run_->context.progress() : 0; }
std::string StepRunner::progress_text() const { return run_ ? run_->context.progress_text() : std::string(); }

std::shared_ptr<const labs::StepOutput> StepRunner::output() const {
    if (!run_) return last_output_;
    {
        std::lock_guard lock(run_->mutex);
        if (run_->result) return run_->result;
    }
    if (auto partial = run_->context.partial()) return partial;
    return last_output_;
}

std::string StepRunner::error() const {
    if (!run_ || !run_->done) return {};
    std::lock_guard lock(run_->mutex);
    return run_->error;
}

}  // namespace fp8lab::gui
