// SPDX-License-Identifier: Apache-2.0
// What a trained byte model writes: the prompt, greedy and sampled continuations.
#include "emulator/models/transformer/text_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

constexpr int kPromptBytes = 40, kGeneratedBytes = 80, kVocabulary = 256;

}  // namespace

std::string printable_text(const std::vector<std::uint8_t>& bytes) {
    std::string text;
    for (const std::uint8_t b : bytes) text += (b == '\n' || (b >= 0x20 && b < 0x7F)) ? char(b) : b == '\t' ? ' ' : '?';
    return text;
}

std::uint8_t choose_byte(const std::vector<float>& z, bool sample, std::uint64_t seed, std::uint64_t draw) {
    if (z.size() != std::size_t(kVocabulary)) throw std::invalid_argument("choose_byte: not 256 logits");
    if (!sample) return std::uint8_t(std::max_element(z.begin(), z.end()) - z.begin());
    const float top = *std::max_element(z.begin(), z.end());
    double total = 0;
    for (const float v : z) total += std::exp(double(v - top));
    double u = (stochastic_bits(seed ^ 0x5A3Bull, draw, 32) + 0.5) * 0x1p-32 * total;
    for (int c = 0; c < kVocabulary; ++c)
        if ((u -= std::exp(double(z[std::size_t(c)] - top))) <= 0) return std::uint8_t(c);
    return std::uint8_t(kVocabulary - 1);
}

void write_samples(const TextCorpus& corpus, std::uint64_t seed, int sequence, const NextByteLogits& logits,
                   TextReport& report) {
    const std::vector<std::uint8_t>& text = corpus.validation;
    std::size_t start = std::find(text.begin() + std::ptrdiff_t(text.size() / 3), text.end(), '\n') - text.begin();
    start = start + 1 + kPromptBytes <= text.size() ? start + 1 : 0;
    const std::size_t length = std::min<std::size_t>(kPromptBytes, text.size() - start);
    const std::vector<std::uint8_t> prompt(text.begin() + std::ptrdiff_t(start),
                                           text.begin() + std::ptrdiff_t(start + length));
    report.prompt = printable_text(prompt);
    for (const bool sample : {false, true}) {
        std::vector<std::uint8_t> context = prompt;
        for (int i = 0; i < kGeneratedBytes; ++i) {
            const std::size_t n = std::min(context.size(), std::size_t(sequence));
            const std::vector<std::uint8_t> window(context.end() - std::ptrdiff_t(n), context.end());
            context.push_back(choose_byte(logits(window), sample, seed, std::uint64_t(i)));
        }
        const std::vector<std::uint8_t> written(context.begin() + std::ptrdiff_t(prompt.size()), context.end());
        (sample ? report.sampled : report.greedy) = printable_text(written);
    }
}

}  // namespace fp8lab::emu
