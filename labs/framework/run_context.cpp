// SPDX-License-Identifier: Apache-2.0
// RunContext: a mutex guards progress and the partial output; cancellation is atomic.
#include "labs/framework/run_context.hpp"

namespace fp8lab::labs {

std::string_view backend_name(Backend b) { return b == Backend::Cpu ? "cpu" : "gpu"; }

void RunContext::report_progress(double fraction, std::string what) {
    {
        std::lock_guard lock(mutex_);
        progress_ = fraction;
        progress_text_ = what;
    }
    if (on_progress) on_progress(fraction, what);
}

void RunContext::publish(StepOutput partial) {
    auto shared = std::make_shared<const StepOutput>(std::move(partial));
    std::lock_guard lock(mutex_);
    partial_ = std::move(shared);
}

double RunContext::progress() const {
    std::lock_guard lock(mutex_);
    return progress_;
}

std::string RunContext::progress_text() const {
    std::lock_guard lock(mutex_);
    return progress_text_;
}

std::shared_ptr<const StepOutput> RunContext::partial() const {
    std::lock_guard lock(mutex_);
    return partial_;
}

}  // namespace fp8lab::labs
