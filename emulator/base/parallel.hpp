// SPDX-License-Identifier: Apache-2.0
// Deterministic parallel loops: work is cut into fixed chunks, whatever the thread count.
#pragma once

#include <cstddef>
#include <functional>

namespace fp8lab::emu {

// Threads the bulk functions may use (default: the hardware's). 1 makes them serial.
void set_max_threads(int threads);
int max_threads();

// Calls body(chunk, begin, end) for every chunk [chunk*chunk_size, ...) of [0, n).
// Chunk boundaries depend only on n and chunk_size, so per-chunk results combined in
// chunk order are identical for any number of threads.
void parallel_for_chunks(std::size_t n, std::size_t chunk_size,
                         const std::function<void(std::size_t, std::size_t, std::size_t)>& body);

inline std::size_t chunk_count(std::size_t n, std::size_t chunk_size) { return (n + chunk_size - 1) / chunk_size; }

}  // namespace fp8lab::emu
