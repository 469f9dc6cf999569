// SPDX-License-Identifier: Apache-2.0
// Deterministic parallel loops over fixed chunks, on a pool of threads kept for the process.
#include "emulator/base/parallel.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fp8lab::emu {
namespace {

std::atomic<int> g_max_threads{0};  // 0: not set, use the hardware's count

// Waits up to kSpin for `ready` by polling before the caller blocks on a condition
// variable: a step's loops come microseconds apart, and waking a sleeping thread took 3.6 us
// at the median but 65 us at the 90th percentile on a 2-core VM (an empty two-chunk loop).
constexpr std::chrono::microseconds kSpin{100};
template <class Ready>
bool spin_until(Ready&& ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; ++i) {
        if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return false;
    }
}

// Set on a thread while it runs a loop's chunks: a loop started from inside one runs
// serially there (the pool is busy with the outer loop; the chunks give the same results
// on any thread, so only the speed differs).
thread_local bool t_in_loop = false;

// One loop at a time: its caller and up to `helpers` workers take chunks from a shared
// counter. Workers are started when a loop first needs them and then wait for the next
// loop: a training step runs dozens of loops, and starting threads for each cost more
// than the small loops themselves (a VM's thread start and join is tens of microseconds).
class Pool {
  public:
    void run(std::size_t chunks, std::size_t threads, const std::function<void(std::size_t)>& chunk) {
        std::lock_guard<std::mutex> one_loop(run_mutex_);  // callers on several threads take turns
        {
            std::unique_lock<std::mutex> lock(mutex_);
            while (workers_.size() + 1 < threads) {
                const std::size_t id = workers_.size();
                workers_.emplace_back([this, id] { work(id); });
            }
            chunk_ = &chunk;
            chunks_ = chunks;
            helpers_ = threads - 1;
            busy_ = helpers_;
            next_ = 0;
            error_ = nullptr;
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        take_chunks();
        spin_until([this] { return busy_.load(std::memory_order_acquire) == 0; });
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return busy_ == 0; });
        chunk_ = nullptr;
        if (error_) std::rethrow_exception(error_);
    }

  private:
    void work(std::size_t id) {
        std::uint64_t seen = 0;
        for (;;) {
            spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (id >= helpers_) continue;  // this loop wants fewer threads
            }
            take_chunks();
            std::lock_guard<std::mutex> lock(mutex_);
            if (--busy_ == 0) done_.notify_one();
        }
    }

    void take_chunks() {
        t_in_loop = true;
        try {
            for (std::size_t c = next_++; c < chunks_; c = next_++) (*chunk_)(c);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = std::current_exception();
            next_ = chunks_;  // the others stop at their next chunk
        }
        t_in_loop = false;
    }

    std::mutex run_mutex_, mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::jthread> workers_;  // never joined: they wait for loops until the process ends
    const std::function<void(std::size_t)>* chunk_ = nullptr;
    std::size_t chunks_ = 0, helpers_ = 0;
    // Changed under mutex_, also polled without it (spin_until).
    std::atomic<std::size_t> busy_{0};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::size_t> next_{0};
    std::exception_ptr error_;
};

// The process's pool, never destroyed (its workers may still wait when static objects
// are destroyed). A child made by fork() has none of its parent's threads: it starts a
// pool of its own (Python's multiprocessing forks).
Pool* g_pool = nullptr;
std::once_flag g_fork_handler;

Pool& pool() {
    std::call_once(g_fork_handler, [] { pthread_atfork(nullptr, nullptr, [] { g_pool = nullptr; }); });
    static std::mutex creating;
    std::lock_guard<std::mutex> lock(creating);
    if (!g_pool) g_pool = new Pool;  // the old one of a parent process is left behind on purpose
    return *g_pool;
}

}  // namespace

void set_max_threads(int threads) { g_max_threads = std::max(threads, 1); }

int max_threads() {
    const int set = g_max_threads.load();
    if (set > 0) return set;
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void parallel_for_chunks(std::size_t n, std::size_t chunk_size,
                         const std::function<void(std::size_t, std::size_t, std::size_t)>& body) {
    const std::size_t chunks = chunk_count(n, chunk_size);
    const std::size_t threads = t_in_loop ? 1 : std::min<std::size_t>(max_threads(), chunks);
    auto run_chunk = [&](std::size_t c) { body(c, c * chunk_size, std::min(n, (c + 1) * chunk_size)); };
    if (threads <= 1) {
        for (std::size_t c = 0; c < chunks; ++c) run_chunk(c);
        return;
    }
    pool().run(chunks, threads, run_chunk);
}

}  // namespace fp8lab::emu
