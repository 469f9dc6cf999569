// SPDX-License-Identifier: Apache-2.0
// Reading the corpus, its fixed split and the seeded windows.
#include "emulator/models/transformer/text_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlock = 4096;
constexpr std::size_t kValidationEvery = 10;

[[noreturn]] void corpus_error(const std::string& path, const std::string& why) {
    throw std::runtime_error("task.corpus: " + path + ": " + why);
}

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) corpus_error(file.string(), "cannot be opened for reading");
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) corpus_error(file.string(), "could not be read");
    return bytes;
}

}  // namespace

TextCorpus load_corpus(const std::string& path, int sequence) {
    TextCorpus corpus;
    corpus.path = path;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        corpus_error(path,
                     "does not exist (the text task reads Debian's 'fortunes' package by default: "
                     "apt-get install fortunes, or name another file or folder)");
    std::vector<std::uint8_t> text;
    if (fs::is_directory(status)) {
        std::vector<fs::path> files;
        for (const fs::directory_entry& entry : fs::directory_iterator(path, ec))
            if (entry.is_regular_file() && !entry.is_symlink()) files.push_back(entry.path());
        if (ec) corpus_error(path, "cannot be listed: " + ec.message());
        std::sort(files.begin(), files.end());
        int read = 0, skipped = 0;
        for (const fs::path& file : files) {
            const std::vector<std::uint8_t> bytes = read_bytes(file);
            if (std::find(bytes.begin(), bytes.end(), std::uint8_t(0)) != bytes.end()) {
                ++skipped;
                continue;
            }
            text.insert(text.end(), bytes.begin(), bytes.end());
            ++read;
        }
        corpus.description = path + ": " + std::to_string(read) + " text files, " + std::to_string(text.size()) +
                             " bytes" + (skipped ? " (" + std::to_string(skipped) + " binary files skipped)" : "");
    } else {
        text = read_bytes(path);
        corpus.description = path + ": " + std::to_string(text.size()) + " bytes";
    }
    for (std::size_t begin = 0, block = 0; begin < text.size(); begin += kBlock, ++block) {
        const auto first = text.begin() + std::ptrdiff_t(begin);
        const auto last = text.begin() + std::ptrdiff_t(std::min(text.size(), begin + kBlock));
        std::vector<std::uint8_t>& part =
            block % kValidationEvery == kValidationEvery - 1 ? corpus.validation : corpus.train;
        part.insert(part.end(), first, last);
    }
    const std::size_t window = std::size_t(sequence) + 1;
    if (corpus.train.size() < window || corpus.validation.size() < window)
        corpus_error(path, "has " + std::to_string(text.size()) + " bytes: too short for windows of " +
                               std::to_string(window) +
                               " bytes in both the training part and the validation part "
                               "(every 10th block of 4096 bytes)");
    return corpus;
}

namespace {

void copy_window(const std::vector<std::uint8_t>& text, std::size_t start, int sequence, TextBatch& batch) {
    const auto first = text.begin() + std::ptrdiff_t(start);
    batch.inputs.insert(batch.inputs.end(), first, first + sequence);
    batch.targets.insert(batch.targets.end(), first + 1, first + sequence + 1);
}

}  // namespace

TextBatch training_batch(const TextCorpus& corpus, std::uint64_t seed, std::uint64_t step, int sequences,
                         int sequence) {
    TextBatch batch{sequences, sequence, {}, {}};
    const std::uint64_t starts = corpus.train.size() - std::uint64_t(sequence);  // windows of sequence + 1 bytes
    for (int j = 0; j < sequences; ++j) {
        const std::uint64_t z = mix64(mix64(seed ^ 0x7E47ull) + step * 0x9E3779B97F4A7C15ull + std::uint64_t(j));
        copy_window(corpus.train, std::size_t(z % starts), sequence, batch);
    }
    return batch;
}

TextBatch validation_batch(const TextCorpus& corpus, int first, int count, int total, int sequence) {
    TextBatch batch{count, sequence, {}, {}};
    const std::uint64_t last_start = corpus.validation.size() - std::uint64_t(sequence) - 1;
    for (int k = first; k < first + count; ++k)
        copy_window(corpus.validation,
                    std::size_t(last_start * std::uint64_t(k) / std::uint64_t(std::max(1, total - 1))), sequence,
                    batch);
    return batch;
}

}  // namespace fp8lab::emu
