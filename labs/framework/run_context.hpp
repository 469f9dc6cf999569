// SPDX-License-Identifier: Apache-2.0
// What a running step can use: backend, seed, progress, cancellation, partial results.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "labs/framework/step_output.hpp"

namespace fp8lab::labs {

enum class Backend { Cpu, Gpu };
std::string_view backend_name(Backend b);  // "cpu", "gpu"

// Shared between the thread running a step and whoever shows it: progress and partial
// results are published here and can be read at any time while the run continues.
class RunContext {
  public:
    explicit RunContext(Backend backend = Backend::Cpu, std::uint64_t seed = 1) : backend_(backend), seed_(seed) {}

    Backend backend() const { return backend_; }
    std::uint64_t seed() const { return seed_; }

    // Called by the step.
    void report_progress(double fraction, std::string what);
    void publish(StepOutput partial);  // replaces the previous partial output
    bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }

    // Called by the viewer, from any thread.
    void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }
    double progress() const;
    std::string progress_text() const;
    std::shared_ptr<const StepOutput> partial() const;  // nullptr until something is published

    // Optional listener, e.g. the terminal's progress line (called on the step's thread).
    std::function<void(double fraction, const std::string& what)> on_progress;

  private:
    Backend backend_;
    std::uint64_t seed_;
    std::atomic<bool> cancel_{false};
    mutable std::mutex mutex_;
    double progress_ = 0;
    std::string progress_text_;
    std::shared_ptr<const StepOutput> partial_;
};

// A step that stopped because its RunContext was cancelled.
struct RunCancelled : std::exception {
    const char* what() const noexcept override { return "cancelled"; }
};

}  // namespace fp8lab::labs
