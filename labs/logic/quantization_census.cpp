// Counting the fate of every element under one scale and one format.
#include "labs/logic/quantization_census.hpp"

#include <cmath>

#include "emulator/convert.hpp"

namespace fp8lab::labs {

QuantizationCensus census(const emu::Format& f, std::span<const float> x, float scale) {
    QuantizationCensus c;
    if (x.empty()) return c;
    emu::ConvertOptions overflowing;
    overflowing.saturation = emu::Saturation::None;
    double squared = 0;
    std::size_t nonzero = 0;
    for (float v : x) {
        const float scaled = v * scale;  // float32, as the cast kernels compute it
        const double q = emu::round_to_format(f, scaled);  // saturating
        if (!std::isfinite(emu::round_to_format(f, scaled, overflowing))) ++c.overflow;
        else if (v != 0 && q == 0) ++c.flushed;
        else if (q != 0 && std::fabs(q) < f.min_normal) ++c.subnormal;
        else ++c.normal;
        if (v != 0) {
            const double back = q / double(scale);
            squared += (back - v) * (back - v) / (double(v) * v);
            ++nonzero;
        }
    }
    const double n = double(x.size());
    c.overflow /= n;
    c.flushed /= n;
    c.subnormal /= n;
    c.normal /= n;
    c.rms_relative_error = nonzero ? std::sqrt(squared / double(nonzero)) : 0;
    return c;
}

}  // namespace fp8lab::labs
