// SPDX-License-Identifier: Apache-2.0
// Per-tensor quantisation and delayed scaling on the GPU: host side of the kernels.
#include <cmath>
#include <cstring>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/kernels/kernels.hpp"
#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

bool is_e4m3(const emu::Format& format) {
    if (&format != &emu::e4m3() && &format != &emu::e5m2())
        throw std::invalid_argument("the GPU quantises to e4m3 or e5m2, not " + std::string(format.name));
    return &format == &emu::e4m3();
}

template <class T, class Launch>
QuantizedOnGpu quantize(const emu::Format& format, std::span<const T> x, float scale, Launch launch) {
    detail::require_gpu();
    const bool e4m3 = is_e4m3(format);
    QuantizedOnGpu result;
    result.codes.resize(x.size());
    DeviceBuffer<T> in(x.size());
    DeviceBuffer<std::uint8_t> out(x.size());
    DeviceBuffer<unsigned> amax(1);
    if (!x.empty()) FP8LAB_CUDA_CHECK(cudaMemcpy(in.ptr, x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemset(amax.ptr, 0, sizeof(unsigned)));
    launch(in.ptr, x.size(), scale, e4m3, out.ptr, amax.ptr, cudaStream_t{});
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    unsigned bits = 0;
    if (!x.empty()) FP8LAB_CUDA_CHECK(cudaMemcpy(result.codes.data(), out.ptr, x.size(), cudaMemcpyDeviceToHost));
    FP8LAB_CUDA_CHECK(cudaMemcpy(&bits, amax.ptr, sizeof bits, cudaMemcpyDeviceToHost));
    std::memcpy(&result.amax, &bits, sizeof bits);
    return result;
}

}  // namespace

QuantizedOnGpu quantize_per_tensor(const emu::Format& format, std::span<const float> x, float scale) {
    return quantize(format, x, scale, kernels::quantize_f32);
}

QuantizedOnGpu quantize_per_tensor_bf16(const emu::Format& format, std::span<const std::uint16_t> x, float scale) {
    return quantize(format, x, scale, kernels::quantize_bf16);
}

namespace {

// The step's cast kernel on `source` (already on the device, rows x cols) with `scale`:
// the codes, their transpose and the amax; the loss partials where `loss_partials` is
// given (Source::MseGradBf16).
CastTransposedOnGpu run_step_cast(train::CastSource source, int rows, int cols, bool e4m3, float scale,
                                  std::vector<float>* loss_partials = nullptr) {
    const std::size_t n = std::size_t(rows) * cols;
    DeviceBuffer<std::uint8_t> out(n), out_t(n);
    DeviceBuffer<unsigned> amax(1);
    DeviceBuffer<kernels::DeviceScaling> scaling(1);
    DeviceBuffer<float> partials(std::size_t(train::cast_tiles(rows, cols)));
    DeviceBuffer<train::CastStats> stats(train::kStatsLanes);
    FP8LAB_CUDA_CHECK(cudaMemset(stats.ptr, 0, stats.count * sizeof(train::CastStats)));
    kernels::DeviceScaling host_scaling;
    host_scaling.scale = scale;
    host_scaling.scale_inv = 1.0f / scale;
    FP8LAB_CUDA_CHECK(cudaMemcpy(scaling.ptr, &host_scaling, sizeof host_scaling, cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemset(amax.ptr, 0, sizeof(unsigned)));
    FP8LAB_CUDA_CHECK(cudaMemset(partials.ptr, 0xff, partials.count * sizeof(float)));  // NaN until written
    train::cast_transpose(
        source, rows, cols,
        {scaling.ptr, e4m3, out.ptr, out_t.ptr, rows, amax.ptr, loss_partials ? partials.ptr : nullptr, stats.ptr},
        cudaStream_t{});
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    CastTransposedOnGpu result;
    result.codes.resize(n);
    result.codes_t.resize(n);
    unsigned bits = 0;
    FP8LAB_CUDA_CHECK(cudaMemcpy(result.codes.data(), out.ptr, n, cudaMemcpyDeviceToHost));
    FP8LAB_CUDA_CHECK(cudaMemcpy(result.codes_t.data(), out_t.ptr, n, cudaMemcpyDeviceToHost));
    FP8LAB_CUDA_CHECK(cudaMemcpy(&bits, amax.ptr, sizeof bits, cudaMemcpyDeviceToHost));
    std::memcpy(&result.amax, &bits, sizeof bits);
    std::vector<train::CastStats> lanes(stats.count);
    FP8LAB_CUDA_CHECK(
        cudaMemcpy(lanes.data(), stats.ptr, stats.count * sizeof(train::CastStats), cudaMemcpyDeviceToHost));
    train::CastStats counted;
    for (const train::CastStats& l : lanes) {
        counted.zeros += l.zeros, counted.flushed += l.flushed, counted.saturated += l.saturated;
        counted.subnormal += l.subnormal, counted.error_squares += l.error_squares;
        counted.value_squares += l.value_squares;
    }
    result.numerics.amax = result.amax;
    result.numerics.scale = scale;
    result.numerics.elements = n;
    result.numerics.zeros = counted.zeros;
    result.numerics.flushed = counted.flushed;
    result.numerics.saturated = counted.saturated;
    result.numerics.subnormal = counted.subnormal;
    result.numerics.relative_error =
        counted.value_squares > 0 ? std::sqrt(counted.error_squares / counted.value_squares) : 0.0;
    if (loss_partials) {
        loss_partials->resize(partials.count);
        FP8LAB_CUDA_CHECK(
            cudaMemcpy(loss_partials->data(), partials.ptr, partials.count * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return result;
}

}  // namespace

CastTransposedOnGpu cast_transpose_per_tensor(const emu::Format& format, std::span<const float> x, int rows, int cols,
                                              float scale) {
    detail::require_gpu();
    const bool e4m3 = is_e4m3(format);
    if (rows <= 0 || cols <= 0 || x.size() != std::size_t(rows) * cols)
        throw std::invalid_argument("cast_transpose_per_tensor: x must hold rows x cols values");
    DeviceBuffer<float> in(x.size());
    FP8LAB_CUDA_CHECK(cudaMemcpy(in.ptr, x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
    return run_step_cast({train::Source::F32, in.ptr, nullptr, cols}, rows, cols, e4m3, scale);
}

MseGradientCastOnGpu cast_mse_gradient_per_tensor(const emu::Format& format, std::span<const std::uint16_t> y,
                                                  std::span<const std::uint16_t> t, int rows, int cols, float scale) {
    detail::require_gpu();
    const bool e4m3 = is_e4m3(format);
    const std::size_t n = std::size_t(rows) * cols;
    if (rows <= 0 || cols <= 0 || y.size() != n || t.size() != n)
        throw std::invalid_argument("cast_mse_gradient_per_tensor: y and t must hold rows x cols values each");
    DeviceBuffer<std::uint16_t> y_in(n), t_in(n);
    FP8LAB_CUDA_CHECK(cudaMemcpy(y_in.ptr, y.data(), y.size_bytes(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(t_in.ptr, t.data(), t.size_bytes(), cudaMemcpyHostToDevice));
    MseGradientCastOnGpu result;
    result.cast = run_step_cast({train::Source::MseGradBf16, y_in.ptr, t_in.ptr, cols, 2.0f / float(n)}, rows, cols,
                                e4m3, scale, &result.loss_partials);
    return result;
}

std::vector<emu::ScalePair> delayed_scaling_on_gpu(const emu::Format& format, emu::DelayedScalingConfig config,
                                                   std::span<const float> amax_per_step) {
    detail::require_gpu();
    emu::validate(config);
    const int steps = int(amax_per_step.size());
    DeviceBuffer<float> amaxes(amax_per_step.size()), history(std::size_t(config.history_length));
    DeviceBuffer<kernels::DeviceScaling> state(1), used(amax_per_step.size());
    if (steps)
        FP8LAB_CUDA_CHECK(
            cudaMemcpy(amaxes.ptr, amax_per_step.data(), amax_per_step.size_bytes(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemset(history.ptr, 0, history.count * sizeof(float)));
    const kernels::DeviceScaling initial{};
    FP8LAB_CUDA_CHECK(cudaMemcpy(state.ptr, &initial, sizeof initial, cudaMemcpyHostToDevice));
    // The numerator is formed first, in float32, exactly as the emulator does.
    const float numerator = std::ldexp(static_cast<float>(format.max_finite), -config.margin);
    for (int t = 0; t < steps; ++t) {  // no host synchronisation between steps
        kernels::record_amax(amaxes.ptr, t, history.ptr, state.ptr, used.ptr, cudaStream_t{});
        kernels::delayed_update(history.ptr, config.history_length, config.algorithm == emu::AmaxAlgorithm::Max,
                                numerator, state.ptr, cudaStream_t{});
    }
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    std::vector<kernels::DeviceScaling> host(amax_per_step.size());
    if (steps)
        FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), used.ptr, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
    std::vector<emu::ScalePair> scales;
    for (const kernels::DeviceScaling& s : host) scales.push_back({s.scale, s.scale_inv});
    return scales;
}

}  // namespace fp8lab::gpu
