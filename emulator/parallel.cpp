// SPDX-License-Identifier: Apache-2.0
// Deterministic parallel loops over fixed chunks, on plain std::thread.
#include "emulator/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace fp8lab::emu {
namespace {

std::atomic<int> g_max_threads{0};  // 0: not set, use the hardware's count

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
    const std::size_t threads = std::min<std::size_t>(max_threads(), chunks);
    auto run_chunk = [&](std::size_t c) { body(c, c * chunk_size, std::min(n, (c + 1) * chunk_size)); };
    if (threads <= 1) {
        for (std::size_t c = 0; c < chunks; ++c) run_chunk(c);
        return;
    }
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t c = next++; c < chunks; c = next++) run_chunk(c);
    };
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
}

}  // namespace fp8lab::emu
