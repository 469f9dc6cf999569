// SPDX-License-Identifier: Apache-2.0
// What a trained byte model writes, the same on both backends: the prompt taken from the
// validation text, the next byte (the most likely, or drawn from the softmax), the text
// shown with unprintable bytes as '?'.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/training/trainer_contract.hpp"
#include "emulator/models/transformer/text_corpus.hpp"

namespace fp8lab::emu {

// The logits (256 floats) a model gives for the byte after `context`, which holds at most
// the model's sequence length of bytes (the latest ones).
using NextByteLogits = std::function<std::vector<float>(const std::vector<std::uint8_t>& context)>;

// The prompt: 40 bytes of the validation text from the start of a line a third of the
// way in. Then 80 bytes greedy and 80 sampled (the draws a function of the task's seed).
void write_samples(const TextCorpus& corpus, std::uint64_t seed, int sequence, const NextByteLogits& logits,
                   TextReport& report);

// The byte the logits choose: their largest (the first of equals), or a draw with
// probabilities softmax(logits) from uniform bits of (seed, draw).
std::uint8_t choose_byte(const std::vector<float>& logits, bool sample, std::uint64_t seed, std::uint64_t draw);

std::string printable_text(const std::vector<std::uint8_t>& bytes);

}  // namespace fp8lab::emu
