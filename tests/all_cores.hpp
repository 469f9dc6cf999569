// SPDX-License-Identifier: Apache-2.0
// The exhaustive sweeps' loop: an index range in blocks over every core, each worker with scratch it keeps.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace fp8lab::test {

// Runs body(begin, end) over [0, n) in blocks of `block`, on every core, blocks handed out
// in order as workers free up.
template <class Body>
void on_all_cores(std::uint64_t n, std::uint64_t block, const Body& body) {
    std::atomic<std::uint64_t> next{0};
    const auto worker = [&] {
        for (std::uint64_t b = next.fetch_add(block); b < n; b = next.fetch_add(block)) body(b, std::min(n, b + block));
    };
    std::vector<std::jthread> pool;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 1; t < cores; ++t) pool.emplace_back(worker);
    worker();
}

// n elements of a worker's scratch (pass a thread_local vector): grown once and never
// cleared, because a fresh zeroed vector for every block of 2^20 inputs (memset and page
// faults) was a tenth of the float32 sweeps' time.
template <class T>
T* scratch(std::vector<T>& store, std::size_t n) {
    if (store.size() < n) store.resize(n);
    return store.data();
}

}  // namespace fp8lab::test
