// SPDX-License-Identifier: Apache-2.0
// Bulk span functions: the float32 kernel in vectorisable loops over parallel chunks.
#include "emulator/formats/bulk.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/bulk_loops.hpp"
#include "emulator/formats/e8m0_float32.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

constexpr std::size_t kChunk = 1 << 16;

detail::LoopParams loop_params(const Format& f, const ConvertOptions& o, float scale, std::uint64_t first_index) {
    return {detail::make_float32_kernel_constants(f, o.saturation), scale, o.seed, o.random_bits, first_index};
}

void check_options(const ConvertOptions& options) {
    if (options.rounding == RoundingMode::Stochastic &&
        (options.random_bits < 1 || options.random_bits > kMaxRandomBits))
        throw std::invalid_argument("stochastic rounding needs 1 to 32 random bits, got " +
                                    std::to_string(options.random_bits));
}

// BF16's layout, float32's upper half (by its fields, so a user-defined 1-8-7 IEEE format
// counts too): detail::round_bf16_nearest_even rounds it.
bool is_bf16_layout(const Format& f) {
    return f.encoding == Encoding::Ieee && f.has_sign && f.exponent_bits == 8 && f.mantissa_bits == 7 &&
           f.bias == 127 && f.has_subnormals && f.has_negative_zero && f.has_inf && f.has_nan;
}

void check_sizes(std::size_t in, std::size_t out, const char* what) {
    if (in != out)
        throw std::invalid_argument(std::string(what) + ": input has " + std::to_string(in) + " elements, output " +
                                    std::to_string(out));
}

}  // namespace

const std::vector<float>& detail::value_table(const Format& f) {
    static std::array<std::vector<float>, 16> tables;
    static std::array<std::once_flag, 16> once;
    const auto formats = all_formats();
    const std::size_t slot = static_cast<std::size_t>(&f - formats.data());
    if (slot >= formats.size() || f.total_bits > 16)
        throw std::invalid_argument("no value table for format " + std::string(f.name));
    std::call_once(once[slot], [&] {
        std::vector<float>& t = tables[slot];
        t.resize(f.code_count());
        for (std::uint32_t c = 0; c < f.code_count(); ++c) t[c] = static_cast<float>(decode(f, c));
    });
    return tables[slot];
}

namespace {

// FNUZ formats: the shared kernel gives a negative value that rounds to zero the code -0
// would have, 0x80, which is their NaN; those codes (from inputs below max: neither NaN
// nor overflow) become +0 here. Kept out of the kernel: any select there halved the
// speed of the block recipes' loops.
bool zero_drops_sign(const Format& f) { return f.has_sign && !f.has_negative_zero; }

}  // namespace

namespace {
// FNUZ formats: the kernel's -0 (a NaN code there) becomes +0 where x * scale is neither NaN
// nor past the largest value. Branch-free, with the constants in locals (a uint8_t store
// may alias anything the loop reads through a reference), so that the loop vectorises.
void zero_for_signed_zero(const Format& f, const float* __restrict x, float scale, std::uint8_t* __restrict codes,
                          std::size_t n) {
    const std::uint8_t nan = static_cast<std::uint8_t>(f.nan_code);
    const float max = float(f.max_finite);
    for (std::size_t i = 0; i < n; ++i) {
        const bool zero = (codes[i] == nan) & (std::fabs(x[i] * scale) < max);  // false for NaN
        codes[i] = zero ? std::uint8_t(0) : codes[i];
    }
}
}  // namespace

void quantize_span(const Format& f, std::span<const float> x, float scale, std::span<std::uint8_t> codes,
                   const ConvertOptions& options, std::uint64_t first_index) {
    check_sizes(x.size(), codes.size(), "quantize");
    check_options(options);
    if (f.total_bits > 8)
        throw std::invalid_argument("quantize: " + std::string(f.name) + " codes do not fit in 8 bits; use round_span");
    if (f.encoding == Encoding::ScaleE8M0 && options.rounding != RoundingMode::Stochastic) {
        parallel_for_chunks(x.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
            detail::e8m0_codes_of_float32(x.data() + b, scale, codes.data() + b, e - b, options.rounding,
                                          options.saturation);
        });
        return;
    }
    if (!detail::float32_kernel_supports(f)) {  // E8M0 with stochastic rounding: the reference encoder
        parallel_for_chunks(x.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                codes[i] = static_cast<std::uint8_t>(encode(f, x[i] * scale, options, first_index + i));
        });
        return;
    }
    const detail::LoopParams p = loop_params(f, options, scale, first_index);
    const bool fix_zero = zero_drops_sign(f);
    parallel_for_chunks(x.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
        detail::LoopParams chunk = p;
        chunk.first_index += b;
        detail::quantize_loop(options.rounding, x.data() + b, codes.data() + b, e - b, chunk);
        if (fix_zero) zero_for_signed_zero(f, x.data() + b, scale, codes.data() + b, e - b);
    });
}

void dequantize_span(const Format& f, std::span<const std::uint8_t> codes, float scale_inv, std::span<float> out) {
    check_sizes(codes.size(), out.size(), "dequantize");
    if (f.total_bits > 8)
        throw std::invalid_argument("dequantize: " + std::string(f.name) + " codes do not fit in 8 bits");
    const float* table = detail::value_table(f).data();
    parallel_for_chunks(codes.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) out[i] = table[codes[i]] * scale_inv;
    });
}

void round_span(const Format& f, std::span<const float> x, std::span<float> out, const ConvertOptions& options,
                std::uint64_t first_index) {
    check_sizes(x.size(), out.size(), "round");
    check_options(options);
    if (!detail::float32_kernel_supports(f)) {
        parallel_for_chunks(x.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                out[i] = static_cast<float>(round_to_format(f, x[i], options, first_index + i));
        });
        return;
    }
    const detail::LoopParams p = loop_params(f, options, 1.0f, first_index);
    const float* table = detail::value_table(f).data();
    const bool bf16_nearest_even = is_bf16_layout(f) && options.rounding == RoundingMode::NearestEven;
    parallel_for_chunks(x.size(), kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
        if (bf16_nearest_even) {
            if (detail::round_bf16_nearest_even(x.data() + b, out.data() + b, e - b) != 0)
                for (std::size_t i = b; i < e; ++i)  // Inf, NaN, overflow: copied, now rounded
                    if ((std::bit_cast<std::uint32_t>(out[i]) & 0x7FFFFFFFu) >= detail::kBf16Past) {
                        detail::LoopParams one = p;
                        one.first_index += i;
                        detail::round_loop(options.rounding, &out[i], &out[i], 1, table, one);
                    }
            return;
        }
        detail::LoopParams chunk = p;
        chunk.first_index += b;
        detail::round_loop(options.rounding, x.data() + b, out.data() + b, e - b, table, chunk);
        if (zero_drops_sign(f))
            for (std::size_t i = b; i < e; ++i)
                if (std::isnan(out[i]) && std::fabs(x[i]) < float(f.max_finite))
                    out[i] = 0.0f;  // not NaN, not overflow
    });
}

float amax(std::span<const float> x) {
    std::vector<float> partial(chunk_count(x.size(), kChunk), 0.0f);
    parallel_for_chunks(x.size(), kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
        detail::row_block_amax(x.data() + b, e - b, e - b, &partial[c]);  // one block: the chunk
    });
    float m = 0.0f;
    for (float p : partial) m = p > m ? p : m;
    return m;
}

RangeCounts count_range(const Format& f, std::span<const float> x, float scale, const ConvertOptions& options,
                        std::uint64_t first_index) {
    check_options(options);
    std::vector<RangeCounts> partial(chunk_count(x.size(), kChunk));
    if (!detail::float32_kernel_supports(f)) {
        // E8M0 (no zero, no subnormals) and FP32: only NaN/Inf inputs and overflow apply.
        ConvertOptions unsaturated = options;
        unsaturated.saturation = Saturation::None;
        parallel_for_chunks(x.size(), kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
            RangeCounts r;
            for (std::size_t i = b; i < e; ++i) {
                const float y = x[i] * scale;
                if (std::isnan(y))
                    ++r.nan_inputs;
                else if (std::isinf(y))
                    ++r.inf_inputs;
                else {
                    const std::uint32_t code = encode(f, y, unsaturated, first_index + i);
                    r.overflowed += f.is_nan_code(code) || f.is_inf_code(code);
                }
            }
            partial[c] = r;
        });
    } else {
        const detail::LoopParams p = loop_params(f, options, scale, first_index);
        const std::uint32_t first_normal = f.has_subnormals ? 1u << f.mantissa_bits : 0u;
        parallel_for_chunks(x.size(), kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
            detail::LoopParams chunk = p;
            chunk.first_index += b;
            const detail::RangeTally t = detail::range_loop(options.rounding, x.data() + b, e - b, first_normal, chunk);
            partial[c] = {0, t.nan, t.inf, t.overflowed, t.flushed, t.subnormal};
        });
    }
    RangeCounts total;
    for (const RangeCounts& r : partial) total += r;
    total.elements = x.size();
    return total;
}

ErrorStats error_stats(std::span<const float> reference, std::span<const float> approx) {
    check_sizes(reference.size(), approx.size(), "error_stats");
    struct Partial {
        std::size_t n = 0, non_finite = 0;
        double sum_sq_err = 0, sum_sq_ref = 0, max_abs = 0, max_rel = 0;
    };
    std::vector<Partial> partial(chunk_count(reference.size(), kChunk));
    parallel_for_chunks(reference.size(), kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
        Partial p;
        for (std::size_t i = b; i < e; ++i) {
            const double r = reference[i], a = approx[i];
            if (!std::isfinite(r) || !std::isfinite(a)) {
                ++p.non_finite;
                continue;
            }
            const double err = std::fabs(a - r);
            ++p.n;
            p.sum_sq_err += err * err;
            p.sum_sq_ref += r * r;
            p.max_abs = std::max(p.max_abs, err);
            if (r != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
        }
        partial[c] = p;
    });
    Partial total;
    for (const Partial& p : partial) {
        total.n += p.n;
        total.non_finite += p.non_finite;
        total.sum_sq_err += p.sum_sq_err;
        total.sum_sq_ref += p.sum_sq_ref;
        total.max_abs = std::max(total.max_abs, p.max_abs);
        total.max_rel = std::max(total.max_rel, p.max_rel);
    }
    ErrorStats s;
    s.elements = reference.size();
    s.non_finite = total.non_finite;
    s.mean_squared_error = total.n ? total.sum_sq_err / double(total.n) : 0.0;
    s.max_abs_error = total.max_abs;
    s.max_rel_error = total.max_rel;
    s.rel_frobenius_error = total.sum_sq_ref > 0 ? std::sqrt(total.sum_sq_err / total.sum_sq_ref) : 0.0;
    return s;
}

}  // namespace fp8lab::emu
