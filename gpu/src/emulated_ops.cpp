// The emulated cast of one operand on the device, for the tests (tensor_ops.hpp): the
// kernel the emulated training step runs, with its codes and scales read back.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>

#include "gpu/src/cuda_check.hpp"
#include "gpu/src/emulated_cast.hpp"
#include "gpu/src/emulated_recipe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

template <class T>
void upload(DeviceBuffer<T>& to, const T* from, std::size_t n) {
    FP8LAB_CUDA_CHECK(cudaMemcpy(to.ptr, from, n * sizeof(T), cudaMemcpyHostToDevice));
}
template <class T>
std::vector<T> download(const DeviceBuffer<T>& from) {
    std::vector<T> to(from.count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(to.data(), from.ptr, from.count * sizeof(T), cudaMemcpyDeviceToHost));
    return to;
}

}  // namespace

EmulatedCastOnGpu emulated_cast_on_gpu(const emu::Numerics& numerics, emu::TensorRole role, const std::string& tensor,
                                       std::span<const float> x, int rows, int cols, bool columns, bool wgrad_operand,
                                       std::uint64_t step) {
    if (rows <= 0 || cols <= 0 || rows % 16 || cols % 16 || x.size() != std::size_t(rows) * cols)
        throw std::invalid_argument("emulated_cast_on_gpu: x must hold rows x cols values, both multiples of 16");
    detail::require_gpu();
    const detail::OperandCast plan = detail::plan_operand_cast(numerics, role, false, wgrad_operand, tensor.size());
    const std::size_t n = x.size();
    const int l_rows = columns ? cols : rows, l_cols = columns ? rows : cols;
    const std::size_t grid =
        std::size_t((l_rows + std::min(plan.block_rows, l_rows) - 1) / std::min(plan.block_rows, l_rows)) *
        std::size_t((l_cols + std::min(plan.block_cols, l_cols) - 1) / std::min(plan.block_cols, l_cols));
    DeviceBuffer<float> in(n), scale_inv(grid), factor(1), element_values(256), e4m3_values(256);
    DeviceBuffer<std::uint8_t> codes(n);
    DeviceBuffer<__nv_bfloat16> out(n);
    DeviceBuffer<unsigned> amax(1), tensor_amax(1), block_amax(std::max<std::size_t>(n / 16, 1));
    DeviceBuffer<kernels::DeviceScaling> scaling(1);
    DeviceBuffer<int> step_on_device(1);
    upload(in, x.data(), n);
    const int step_value = int(step);
    upload(step_on_device, &step_value, 1);
    const kernels::DeviceScaling unit;
    upload(scaling, &unit, 1);
    FP8LAB_CUDA_CHECK(cudaMemset(codes.ptr, 0, n));
    const std::vector<float> values = plan.element ? detail::value_table(*plan.element) : std::vector<float>(256, 0.0f);
    const std::vector<float> e4m3 = detail::value_table(emu::e4m3());
    upload(element_values, values.data(), 256);
    upload(e4m3_values, e4m3.data(), 256);

    const cudaStream_t s = nullptr;
    const train::CastSource source{train::Source::F32, in.ptr, nullptr, cols};
    train::EmulatedCast e;
    e.params = plan.params;
    e.columns = columns;
    e.vector = plan.vector;
    e.block_rows = std::min(plan.block_rows, l_rows);  // one block: the whole tensor
    e.block_cols = std::min(plan.block_cols, l_cols);
    e.step = step_on_device.ptr;
    e.element_values = element_values.ptr;
    e.e4m3_values = e4m3_values.ptr;
    e.out = out.ptr;
    e.tensor_factor = factor.ptr;
    e.codes = codes.ptr;
    e.scale_inv = scale_inv.ptr;
    if (plan.params.rule == vq::ScaleRule::PerTensor) {  // current scaling of the tensor
        train::tensor_amax(source, rows, cols, false, 0, nullptr, amax.ptr, s);
        train::current_scale(amax.ptr, static_cast<float>(plan.element->max_finite), scaling.ptr, s);
        e.tensor_scaling = scaling.ptr;
    }
    if (plan.nvfp4) {
        train::tensor_amax(source, rows, cols, plan.params.hadamard, 0, step_on_device.ptr, tensor_amax.ptr, s);
        e.tensor_amax_bits = tensor_amax.ptr;
    }
    if (plan.block_amax_pass) {
        train::block_amax(source, rows, cols, columns ? e.block_cols : e.block_rows,
                          columns ? e.block_rows : e.block_cols, block_amax.ptr, s);
        e.block_amax_bits = block_amax.ptr;
    }
    train::emulated_cast(source, rows, cols, e, s);
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());

    EmulatedCastOnGpu result;
    result.codes = download(codes);
    result.scale_inv = download(scale_inv);
    const std::vector<__nv_bfloat16> bf16 = download(out);
    result.operand.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, &bf16[i], 2);
        const std::uint32_t u = std::uint32_t(bits) << 16;
        std::memcpy(&result.operand[i], &u, 4);
    }
    result.tensor_factor = download(factor)[0];
    return result;
}

}  // namespace fp8lab::gpu
