// SPDX-License-Identifier: Apache-2.0
// A developer's tool, not part of fp8lab: a CUPTI injection library that records when each
// kernel ran (graph replays included, where Nsight Compute serialises and times each kernel
// alone) and writes one CSV line per kernel to $FP8LAB_TIMELINE when the program exits.
// Run a program under it with CUDA_INJECTION64_PATH=<this library>; scripts/kernel_timeline.py
// turns the file into the mean timeline of a step.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kAlign = 8;

struct KernelRecord {
    std::uint64_t start, end;
    std::uint32_t stream;
    std::string name;
};

std::mutex records_mutex;
std::vector<KernelRecord> records;

void report(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    std::fprintf(stderr, "kernel_timeline: %s failed: %s\n", what, text ? text : "unknown error");
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
    CUpti_Activity* record = nullptr;
    std::vector<KernelRecord> got;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        got.push_back({k->start, k->end, k->streamId, k->name ? k->name : "?"});
    }
    std::size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
    if (dropped) std::fprintf(stderr, "kernel_timeline: %zu records dropped\n", dropped);
    std::free(buffer);
    const std::lock_guard<std::mutex> lock(records_mutex);
    records.insert(records.end(), got.begin(), got.end());
}

// Written to a temporary file and renamed, as every file fp8lab writes.
void write_records() {
    report(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    const char* path = std::getenv("FP8LAB_TIMELINE");
    if (!path) return;
    const std::string temporary = std::string(path) + ".tmp";
    std::FILE* f = std::fopen(temporary.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "kernel_timeline: cannot write %s\n", temporary.c_str());
        return;
    }
    const std::lock_guard<std::mutex> lock(records_mutex);
    bool ok = std::fprintf(f, "start_ns,end_ns,stream,name\n") > 0;
    for (const KernelRecord& r : records)
        ok = ok && std::fprintf(f, "%llu,%llu,%u,\"%s\"\n", static_cast<unsigned long long>(r.start),
                                static_cast<unsigned long long>(r.end), r.stream, r.name.c_str()) > 0;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(temporary.c_str(), path) != 0) {
        std::fprintf(stderr, "kernel_timeline: writing %s failed\n", path);
        std::remove(temporary.c_str());
        return;
    }
    std::fprintf(stderr, "kernel_timeline: %zu kernels written to %s\n", records.size(), path);
}

}  // namespace

// Called by the CUDA driver when it loads this library through CUDA_INJECTION64_PATH.
extern "C" int InitializeInjection() {
    report(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    report(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
    std::atexit(write_records);
    return 1;
}
