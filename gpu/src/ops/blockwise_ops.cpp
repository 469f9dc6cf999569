// SPDX-License-Identifier: Apache-2.0
// Blockwise FP8 on the device for the tests and the support check: the training step's
// blockwise cast kernel and one block-scaled cuBLASLt GEMM, with the scales moved between
// the emulator's block order and cuBLASLt's layouts.
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "gpu/src/gemm/block_scale_layout.hpp"
#include "gpu/src/kernels/blockwise_cast.hpp"
#include "gpu/src/kernels/rowwise_cast.hpp"
#include "emulator/scaling/recipe.hpp"
#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"

namespace fp8lab::gpu {
namespace {

using detail::BlockScaleLayout;
using detail::DeviceBuffer;

// emu::QuantizedTensor orders block scales row-major over its block grid, which is the
// layout's outer_blocks() x inner_blocks().
std::vector<float> emulator_order(const BlockScaleLayout& layout, const std::vector<float>& device) {
    std::vector<float> out(layout.outer_blocks() * layout.inner_blocks());
    for (std::size_t o = 0; o < layout.outer_blocks(); ++o)
        for (std::size_t i = 0; i < layout.inner_blocks(); ++i)
            out[o * layout.inner_blocks() + i] = device[layout.index(o, i)];
    return out;
}

std::vector<float> device_order(const BlockScaleLayout& layout, const std::vector<float>& emulator) {
    std::vector<float> out(layout.count(), 1.0f);
    for (std::size_t o = 0; o < layout.outer_blocks(); ++o)
        for (std::size_t i = 0; i < layout.inner_blocks(); ++i)
            out[layout.index(o, i)] = emulator[o * layout.inner_blocks() + i];
    return out;
}

bool is_block(const emu::BlockShape& b, std::size_t rows, std::size_t cols) { return b.rows == rows && b.cols == cols; }

// The rowwise cast kernel with torchao's amax floor (the rowwise recipe's).
BlockwiseCastOnGpu cast_transpose_rowwise(std::span<const float> x, int rows, int cols) {
    DeviceBuffer<float> in{x.size()}, scales{std::size_t(rows)}, scales_t{std::size_t(cols)},
        scratch{std::size_t(rows + cols)};
    DeviceBuffer<std::uint8_t> codes(x.size()), codes_t(x.size());
    DeviceBuffer<unsigned> amax(1);
    FP8LAB_CUDA_CHECK(cudaMemcpy(in.ptr, x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
    const train::RowwiseTarget target{
        codes.ptr,    scales.ptr,  codes_t.ptr, rows,
        scales_t.ptr, scratch.ptr, amax.ptr,    emu::recipe(emu::Fp8Recipe::Rowwise).min_amax};
    train::rowwise_cast({train::Source::F32, in.ptr, nullptr, cols}, rows, cols, target, cudaStream_t{});
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    BlockwiseCastOnGpu result;
    result.codes = download(codes);
    result.codes_t = download(codes_t);
    result.scale_inv = download(scales);
    result.scale_inv_t = download(scales_t);
    const unsigned bits = download(amax)[0];
    std::memcpy(&result.amax, &bits, sizeof bits);
    return result;
}

}  // namespace

std::string blockwise_unsupported_reason() {
    const ProbeResult p = probe();
    if (!p.ready) return p.reason;
    if (p.compute_major != 9 || p.compute_minor != 0)
        return p.device_name + " has compute capability " + std::to_string(p.compute_major) + "." +
               std::to_string(p.compute_minor) +
               "; cuBLASLt's block-scaled FP8 GEMMs (1 x 128 and 128 x 128 scales) run on Hopper (9.0) only";
#if CUBLAS_VERSION < 120900
    return "this fp8lab was built with cuBLASLt " + std::to_string(CUBLAS_VERSION) +
           ", older than 12.9, which added block-scaled FP8 GEMMs";
#else
    const std::size_t version = cublasLtGetVersion();
    if (version < 120900)
        return "the installed cuBLASLt (" + std::to_string(version) +
               ") is older than 12.9, which added block-scaled FP8 GEMMs";
    return {};
#endif
}

BlockwiseCastOnGpu cast_transpose_blockwise(std::span<const float> x, int rows, int cols, NativeBlocks blocks) {
    if (rows <= 0 || cols <= 0 || rows % 16 || cols % 16 || x.size() != std::size_t(rows) * cols)
        throw std::invalid_argument("cast_transpose_blockwise: x must hold rows x cols values, both multiples of 16");
    detail::require_gpu();
    if (blocks == NativeBlocks::Rows) return cast_transpose_rowwise(x, rows, cols);
    const bool weight_tiles = blocks == NativeBlocks::Tiles128x128;
    const BlockScaleLayout layout{weight_tiles, rows, cols}, layout_t{weight_tiles, cols, rows};
    DeviceBuffer<float> in(x.size()), scales(layout.count()), scales_t(layout_t.count());
    DeviceBuffer<std::uint8_t> codes(x.size()), codes_t(x.size());
    DeviceBuffer<unsigned> amax(1);
    FP8LAB_CUDA_CHECK(cudaMemcpy(in.ptr, x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemset(amax.ptr, 0, sizeof(unsigned)));
    const train::BlockwiseTarget target{weight_tiles, codes.ptr,    scales.ptr,      layout.line(), codes_t.ptr,
                                        rows,         scales_t.ptr, layout_t.line(), amax.ptr};
    train::blockwise_cast({train::Source::F32, in.ptr, nullptr, cols}, rows, cols, target, cudaStream_t{});
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    BlockwiseCastOnGpu result;
    result.codes = download(codes);
    result.codes_t = download(codes_t);
    result.scale_inv = emulator_order(layout, download(scales));
    result.scale_inv_t = emulator_order(layout_t, download(scales_t));
    const unsigned bits = download(amax)[0];
    std::memcpy(&result.amax, &bits, sizeof bits);
    return result;
}

std::vector<float> fp8_blockwise_gemm(const emu::QuantizedTensor& a, const emu::QuantizedTensor& b) {
    if (a.format != &emu::e4m3() || b.format != &emu::e4m3())
        throw std::invalid_argument(
            "fp8_blockwise_gemm: both operands must be e4m3 (as emu::quantize_blockwise makes)");
    if (!is_block(a.block, 1, 128) || !(is_block(b.block, 1, 128) || is_block(b.block, 128, 128)))
        throw std::invalid_argument("fp8_blockwise_gemm: A needs 1 x 128 blocks, B 1 x 128 blocks or 128 x 128 tiles");
    if (a.cols != b.cols) throw std::invalid_argument("fp8_blockwise_gemm: A and B have different k");
    const int m = int(a.rows), n = int(b.rows), k = int(a.cols);
    check_gemm_shape(m, n, k);
    if (const std::string why = blockwise_unsupported_reason(); !why.empty()) throw GpuUnavailable(why);
    const bool b_tiles = b.block.rows == 128;
    const BlockScaleLayout a_layout{false, m, k}, b_layout{b_tiles, n, k};
    DeviceBuffer<std::uint8_t> da(a.codes.size()), db(b.codes.size());
    DeviceBuffer<float> sa(a_layout.count()), sb(b_layout.count()), out(std::size_t(m) * n);
    DeviceBuffer<char> workspace(detail::kMatmulWorkspaceBytes);
    upload(da, a.codes);
    upload(db, b.codes);
    upload(sa, device_order(a_layout, a.block_scale_inv));
    upload(sb, device_order(b_layout, b.block_scale_inv));
    using detail::ScaleMode;
    using detail::Stored;
    detail::LtHandle handle;
    detail::LtMatmul gemm(
        handle.h, m, n, k, {CUDA_R_8F_E4M3, Stored::AsIs, sa.ptr, ScaleMode::Blocks1x128},
        {CUDA_R_8F_E4M3, Stored::Transposed, sb.ptr, b_tiles ? ScaleMode::Tiles128x128 : ScaleMode::Blocks1x128},
        CUDA_R_32F, false);
    gemm.run(da.ptr, db.ptr, out.ptr, workspace.ptr, nullptr);
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    return download(out);
}

}  // namespace fp8lab::gpu
