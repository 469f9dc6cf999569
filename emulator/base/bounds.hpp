// SPDX-License-Identifier: Apache-2.0
// Every numeric setting's accepted range, stated once: the experiment's validation, the
// experiment file reader, the command line's checks and its --help all read these.
#pragma once

#include <string>

namespace fp8lab::emu {

struct IntegerBounds {
    long long min, max;
};

struct RealBounds {
    double min, max;
    bool min_excluded = false;  // (min, max] instead of [min, max]
};

// "1 to 65536", "above 0 to 10": how messages state a range in words.
std::string describe(IntegerBounds b);
std::string describe(RealBounds b);
// "[1, 65536]", "(0, 10]": how --help and field messages state it.
std::string interval(IntegerBounds b);
std::string interval(RealBounds b);
bool contains(IntegerBounds b, long long v);
bool contains(RealBounds b, double v);  // false for NaN and infinities

namespace bounds {
// Sizes bounded so that a typo cannot ask for terabytes; what fits is checked separately
// against the machine's memory (emu::cpu_training_bytes).
inline constexpr IntegerBounds kWidth{1, 65536};  // input, hidden, output
inline constexpr IntegerBounds kHiddenLayers{1, 16};
inline constexpr IntegerBounds kTransformerLayers{1, 96};
inline constexpr IntegerBounds kHeads{1, 256};
inline constexpr IntegerBounds kSequence{2, 1 << 16};
inline constexpr IntegerBounds kEvalSequences{1, 4096};
inline constexpr IntegerBounds kBatches{1, 4096};
// The outlier task's massive channels: from as large as the rest to past what E4M3's
// per-tensor range can hold beside them (BF16 stores them exactly enough either way).
inline constexpr RealBounds kOutlierScale{1.0f, 1e7f};
inline constexpr IntegerBounds kTokens{1, 1 << 20};
inline constexpr IntegerBounds kSteps{1, 1000000};
inline constexpr IntegerBounds kSeeds{1, 64};
inline constexpr IntegerBounds kWarmupSteps{0, 1000000};  // runs of one comparison, each from its own seeds
// Transformer Engine's default history is 1024; 65536 steps is past any run a lab makes,
// and keeps a what-if replay of a long trace to seconds.
inline constexpr IntegerBounds kHistory{1, 65536};
inline constexpr IntegerBounds kMargin{0, 64};  // 2^-64: far below any useful scale
inline constexpr IntegerBounds kGrowthInterval{1, 1000000};
inline constexpr IntegerBounds kCalibrationBatches{1, 1024};

inline constexpr RealBounds kLearningRate{0, 10, true};
inline constexpr RealBounds kBeta{0, 0.999999};
inline constexpr RealBounds kEpsilon{0, 1, true};
inline constexpr RealBounds kWeightDecay{0, 10};
inline constexpr RealBounds kGradClip{0, 1e30};
inline constexpr RealBounds kLrFloor{0, 1};  // of the peak learning rate
inline constexpr RealBounds kInitialLossScale{0, 3.4e38, true};
inline constexpr RealBounds kGrowthFactor{1, 1e6, true};
inline constexpr RealBounds kBackoffFactor{0, 0.999999, true};
}  // namespace bounds

}  // namespace fp8lab::emu
