// SPDX-License-Identifier: Apache-2.0
// The emulated cast of one operand on the device, for the tests (tensor_ops.hpp): the
// kernel the emulated training step runs, with its codes and scales read back.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/kernels/emulated_cast.hpp"
#include "gpu/src/scaling/emulated_recipe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

// One direction's cast of the test tensor: its plan, its buffers on the device and the
// description the kernels take.
struct TestCast {
    detail::OperandCast plan;
    bool columns = false;
    DeviceBuffer<float> scale_inv, factor;
    DeviceBuffer<std::uint8_t> codes;
    DeviceBuffer<__nv_bfloat16> out;
    train::EmulatedCast e;

    TestCast(const detail::OperandCast& p, bool columns_, int rows, int cols)
        : plan(p),
          columns(columns_),
          scale_inv(grid(p, columns_, rows, cols)),
          factor(1),
          codes(std::size_t(rows) * cols),
          out(std::size_t(rows) * cols) {
        const int l_rows = columns ? cols : rows, l_cols = columns ? rows : cols;
        FP8LAB_CUDA_CHECK(cudaMemset(codes.ptr, 0, codes.count));
        e.params = plan.params;
        e.columns = columns;
        e.vector = plan.vector;
        e.block_rows = std::min(plan.block_rows, l_rows);  // one block: the whole tensor
        e.block_cols = std::min(plan.block_cols, l_cols);
        e.out = out.ptr;
        e.tensor_factor = factor.ptr;
        e.codes = codes.ptr;
        e.scale_inv = scale_inv.ptr;
    }
    // Blocks in the emulator's tensor (x, or its transpose with `columns`).
    static std::size_t grid(const detail::OperandCast& p, bool columns, int rows, int cols) {
        const int l_rows = columns ? cols : rows, l_cols = columns ? rows : cols;
        const int block_rows = std::min(p.block_rows, l_rows), block_cols = std::min(p.block_cols, l_cols);
        return std::size_t((l_rows + block_rows - 1) / block_rows) *
               std::size_t((l_cols + block_cols - 1) / block_cols);
    }
};

}  // namespace

EmulatedCastOnGpu emulated_cast_on_gpu(const emu::Numerics& numerics, emu::TensorRole role, const std::string& tensor,
                                       std::span<const float> x, int rows, int cols, bool columns, bool wgrad_operand,
                                       std::uint64_t step, bool paired) {
    if (rows <= 0 || cols <= 0 || rows % 16 || cols % 16 || x.size() != std::size_t(rows) * cols)
        throw std::invalid_argument("emulated_cast_on_gpu: x must hold rows x cols values, both multiples of 16");
    detail::require_gpu();
    const std::size_t n = x.size();
    TestCast cast(detail::plan_operand_cast(numerics, role, false, wgrad_operand, tensor.size()), columns, rows, cols);
    // The pair's other direction as the training step casts it: the rows for the GEMM that
    // contracts over the features, the columns (a wgrad operand) for the one over tokens.
    std::unique_ptr<TestCast> other;
    if (paired)
        other = std::make_unique<TestCast>(detail::plan_operand_cast(numerics, role, false, !columns, tensor.size()),
                                           !columns, rows, cols);
    DeviceBuffer<float> in(n), element_values(256), e4m3_values(256);
    DeviceBuffer<unsigned> amax(1), tensor_amax(2), block_amax(std::max<std::size_t>(n / 16, 1));
    DeviceBuffer<kernels::DeviceScaling> scaling(1);
    DeviceBuffer<int> step_on_device(1);
    upload(in, x.data(), n);
    const int step_value = int(step);
    upload(step_on_device, &step_value, 1);
    const kernels::DeviceScaling unit;
    upload(scaling, &unit, 1);
    const detail::OperandCast& plan = cast.plan;
    const std::vector<float> values = plan.element ? detail::value_table(*plan.element) : std::vector<float>(256, 0.0f);
    const std::vector<float> e4m3 = detail::value_table(emu::e4m3());
    upload(element_values, values.data(), 256);
    upload(e4m3_values, e4m3.data(), 256);

    const cudaStream_t s = nullptr;
    const train::CastSource source{train::Source::F32, in.ptr, nullptr, cols};
    for (TestCast* c : {&cast, other.get()}) {
        if (!c) continue;
        c->e.step = step_on_device.ptr;
        c->e.element_values = element_values.ptr;
        c->e.e4m3_values = e4m3_values.ptr;
        if (c->plan.params.rule == vq::ScaleRule::PerTensor) c->e.tensor_scaling = scaling.ptr;
        if (c->plan.nvfp4) c->e.tensor_amax_bits = tensor_amax.ptr + (c->plan.params.hadamard ? 1 : 0);
    }
    if (plan.params.rule == vq::ScaleRule::PerTensor) {  // current scaling of the tensor
        train::tensor_amax(source, rows, cols, false, 0, nullptr, amax.ptr, s);
        train::current_scale(amax.ptr, static_cast<float>(plan.element->max_finite), scaling.ptr, s);
    }
    if (plan.nvfp4) {  // the plain amax, and the transformed one where a cast needs it, as the step takes them
        const bool hadamard = plan.params.hadamard || (other && other->plan.params.hadamard);
        if (paired && hadamard)
            train::tensor_amax_pair(source, rows, cols, step_on_device.ptr, tensor_amax.ptr, tensor_amax.ptr + 1, s);
        else
            train::tensor_amax(source, rows, cols, hadamard, 0, step_on_device.ptr,
                               tensor_amax.ptr + (hadamard ? 1 : 0), s);
    }
    if (plan.block_amax_pass) {
        train::block_amax(source, rows, cols, columns ? cast.e.block_cols : cast.e.block_rows,
                          columns ? cast.e.block_rows : cast.e.block_cols, block_amax.ptr, s);
        cast.e.block_amax_bits = block_amax.ptr;
    }
    if (paired) {
        const train::EmulatedCast& along = columns ? other->e : cast.e;
        const train::EmulatedCast& down = columns ? cast.e : other->e;
        if (!train::can_cast_pair(rows, cols, along, down))
            throw std::invalid_argument(
                "emulated_cast_on_gpu: no paired cast here (16-element vectors, rows a multiple of 16, cols of 128)");
        train::emulated_cast_pair(source, rows, cols, along, down, s);
    } else {
        train::emulated_cast(source, rows, cols, cast.e, s);
    }
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());

    EmulatedCastOnGpu result;
    result.codes = download(cast.codes);
    result.scale_inv = download(cast.scale_inv);
    const std::vector<__nv_bfloat16> bf16 = download(cast.out);
    result.operand.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, &bf16[i], 2);
        const std::uint32_t u = std::uint32_t(bits) << 16;
        std::memcpy(&result.operand[i], &u, 4);
    }
    result.tensor_factor = download(cast.factor)[0];
    return result;
}

}  // namespace fp8lab::gpu
