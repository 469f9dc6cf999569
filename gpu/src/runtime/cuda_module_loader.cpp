// SPDX-License-Identifier: Apache-2.0
// The program's side of the GPU functions in a CUDA build: the first call opens
// libfp8lab_cuda.so (cuda_module.hpp) and every call forwards to it. When the library or
// the CUDA libraries it needs cannot be loaded, probe() says why and every other call
// throws GpuUnavailable with that reason.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu/src/runtime/cuda_module.hpp"

namespace fp8lab::gpu {
namespace {

struct Loaded {
    const detail::CudaModule* module = nullptr;
    std::string reason;  // why not, when module is null
};

// Where the library may be, in order: FP8LAB_CUDA_MODULE; beside an installed program
// (PREFIX/bin/fp8lab, PREFIX/lib/fp8lab/); the build tree it was built in.
std::vector<std::filesystem::path> candidates() {
    std::vector<std::filesystem::path> paths;
    if (const char* chosen = std::getenv("FP8LAB_CUDA_MODULE"); chosen && *chosen) return {chosen};
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) paths.push_back(exe.parent_path().parent_path() / "lib" / "fp8lab" / detail::kCudaModuleFile);
    paths.emplace_back(FP8LAB_CUDA_MODULE_BUILD_PATH);
    return paths;
}

Loaded open_module() {
    std::string looked;
    for (const std::filesystem::path& path : candidates()) {
        std::error_code error;
        if (!std::filesystem::exists(path, error)) {
            looked += (looked.empty() ? "" : ", ") + path.string();
            continue;
        }
        // Never closed: the library's code runs until the program exits.
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) return {nullptr, "fp8lab's GPU part " + path.string() + " cannot be loaded: " + dlerror()};
        using Entry = const detail::CudaModule* (*)();
        const auto entry = reinterpret_cast<Entry>(dlsym(handle, detail::kCudaModuleEntry));
        if (!entry)
            return {nullptr, path.string() + " is not fp8lab's GPU part (it has no " + detail::kCudaModuleEntry + ")"};
        const detail::CudaModule* module = entry();
        if (module->abi != detail::kCudaModuleAbi || std::strcmp(module->version, FP8LAB_VERSION) != 0)
            return {nullptr, path.string() + " is from another build of fp8lab (version " + module->version +
                                 "); this program is " + FP8LAB_VERSION};
        return {module, {}};
    }
    return {nullptr,
            "fp8lab's GPU part (" + std::string(detail::kCudaModuleFile) + ") is not installed; looked for " + looked};
}

const Loaded& loaded() {
    static const Loaded once = open_module();
    return once;
}

const detail::CudaModule& module() {
    const Loaded& l = loaded();
    if (!l.module) throw GpuUnavailable(l.reason);
    return *l.module;
}

}  // namespace

ProbeResult probe() {
    const Loaded& l = loaded();
    if (l.module) return l.module->probe();
    ProbeResult r;
    r.built_with_cuda = true;
    r.reason = l.reason;
    return r;
}

QuantizedOnGpu quantize_per_tensor(const emu::Format& format, std::span<const float> x, float scale) {
    return module().quantize_per_tensor(format, x, scale);
}
QuantizedOnGpu quantize_per_tensor_bf16(const emu::Format& format, std::span<const std::uint16_t> x, float scale) {
    return module().quantize_per_tensor_bf16(format, x, scale);
}
CastTransposedOnGpu cast_transpose_per_tensor(const emu::Format& format, std::span<const float> x, int rows, int cols,
                                              float scale) {
    return module().cast_transpose_per_tensor(format, x, rows, cols, scale);
}
MseGradientCastOnGpu cast_mse_gradient_per_tensor(const emu::Format& format, std::span<const std::uint16_t> y,
                                                  std::span<const std::uint16_t> t, int rows, int cols, float scale) {
    return module().cast_mse_gradient_per_tensor(format, y, t, rows, cols, scale);
}
std::vector<emu::ScalePair> delayed_scaling_on_gpu(const emu::Format& format, emu::DelayedScalingConfig config,
                                                   std::span<const float> amax_per_step) {
    return module().delayed_scaling_on_gpu(format, config, amax_per_step);
}
std::vector<float> fp8_gemm(int m, int n, int k, const emu::Format& a_format, std::span<const std::uint8_t> a,
                            float a_scale_inv, const emu::Format& b_format, std::span<const std::uint8_t> b,
                            float b_scale_inv, bool fast_accumulation, bool float32_output) {
    check_gemm_shape(m, n, k);  // the same refusal with or without the library
    return module().fp8_gemm(m, n, k, a_format, a, a_scale_inv, b_format, b, b_scale_inv, fast_accumulation,
                             float32_output);
}
std::string blockwise_unsupported_reason() {
    const Loaded& l = loaded();
    return l.module ? l.module->blockwise_unsupported_reason() : l.reason;
}
BlockwiseCastOnGpu cast_transpose_blockwise(std::span<const float> x, int rows, int cols, NativeBlocks blocks) {
    return module().cast_transpose_blockwise(x, rows, cols, blocks);
}
std::vector<float> fp8_blockwise_gemm(const emu::QuantizedTensor& a, const emu::QuantizedTensor& b) {
    return module().fp8_blockwise_gemm(a, b);
}
EmulatedCastOnGpu emulated_cast_on_gpu(const emu::Numerics& numerics, emu::TensorRole role, const std::string& tensor,
                                       std::span<const float> x, int rows, int cols, bool columns, bool wgrad_operand,
                                       std::uint64_t step, bool paired) {
    return module().emulated_cast_on_gpu(numerics, role, tensor, x, rows, cols, columns, wgrad_operand, step, paired);
}
AttentionOnGpu attention_on_gpu(AttentionKernel kernel, std::span<const float> qkv, std::span<const float> dout,
                                int sequences, int n, int heads, int kv_heads, int head_size,
                                std::size_t scores_budget) {
    return module().attention_on_gpu(kernel, qkv, dout, sequences, n, heads, kv_heads, head_size, scores_budget);
}
GemmTiming time_forward_gemms(int m, int n, int k, int repetitions) {
    check_gemm_shape(m, n, k);
    return module().time_forward_gemms(m, n, k, repetitions);
}
GpuTrainResult train_mlp_on_gpu(const GpuRun& config, const GpuProgress& progress) {
    validate(config);  // a bad configuration is refused before the GPU is looked for
    return module().train_mlp_on_gpu(config, progress);
}
GpuTrainResult train_transformer_on_gpu(const GpuRun& config, const GpuProgress& progress) {
    validate(config);
    return module().train_transformer_on_gpu(config, progress);
}
GpuInitialState gpu_initial_state(const GpuRun& config) {
    validate(config);
    return module().gpu_initial_state(config);
}
std::vector<InferenceTiming> time_inference(const InferenceModel& model, int tokens) {
    return module().time_inference(model, tokens);
}

}  // namespace fp8lab::gpu
