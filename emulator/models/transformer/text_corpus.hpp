// SPDX-License-Identifier: Apache-2.0
// The text task's data: a plain-text corpus read from disk, split into training and
// validation bytes, and the windows each step trains on, the same bytes on every backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/training/experiment.hpp"

namespace fp8lab::emu {

struct TextCorpus {
    std::string path;         // what was asked for
    std::string description;  // what was read: "/usr/share/games/fortunes: 47 files, 2612345 bytes"
    std::vector<std::uint8_t> train, validation;
};

// A file, or every regular file in a folder (sorted by name; links and binary files, those
// with a NUL byte, skipped). The split is fixed: the bytes are cut into 4 KiB blocks and
// every 10th block is validation. Throws std::runtime_error naming the path when it is
// missing, unreadable or too short for a window of `sequence` + 1 bytes in either part.
TextCorpus load_corpus(const std::string& path, int sequence);

// The bytes one step sees: `sequences` windows of sequence + 1 bytes, flattened; inputs are
// each window's first `sequence` bytes, targets its last `sequence`.
struct TextBatch {
    int sequences = 0, sequence = 0;
    std::vector<std::uint8_t> inputs, targets;
};

// Step s's training windows: their starts a function of (seed, s, window) only.
TextBatch training_batch(const TextCorpus& corpus, std::uint64_t seed, std::uint64_t step, int sequences, int sequence);
// Validation windows first to first + count - 1 of `total` evenly spaced over the
// validation bytes (the same windows at every evaluation and in every run).
TextBatch validation_batch(const TextCorpus& corpus, int first, int count, int total, int sequence);

}  // namespace fp8lab::emu
