// A plain HIP host program, written against hip_runtime_api.h and nothing of aqueduct's: it finds
// the devices, copies through device memory every way HIP offers, and times an interval with
// events. tests/soft_drop_in.rs builds it with the system C++ compiler, links Debian's
// libamdhip64, and runs it on the drop-in. Each line it prints is checked there.
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t status_ = (call);                                                       \
        if (status_ != hipSuccess) {                                                       \
            std::printf("FAIL %s: %s (%d)\n", #call, hipGetErrorString(status_), status_); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

int main() {
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    std::printf("devices %d\n", count);
    if (count < 1) return 1;
    CHECK(hipSetDevice(0));
    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    std::printf("name %s\n", props.name);
    std::printf("gcnArchName %s\n", props.gcnArchName);
    std::printf("totalGlobalMem %zu\n", props.totalGlobalMem);

    const size_t n = (1 << 20) + 3;  // an odd size: no copy path may assume whole pages
    std::vector<unsigned char> host_in(n), host_out(n, 0), host_back(n, 0);
    for (size_t i = 0; i < n; ++i) host_in[i] = (unsigned char)(i * 2654435761u >> 13);

    void *a = nullptr, *b = nullptr;
    CHECK(hipMalloc(&a, n));
    CHECK(hipMalloc(&b, n));
    CHECK(hipMemcpy(a, host_in.data(), n, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, a, n, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(host_out.data(), b, n, hipMemcpyDeviceToHost));
    std::printf("memcpy %s\n", std::memcmp(host_in.data(), host_out.data(), n) == 0 ? "ok" : "MISMATCH");

    // An aligned device-to-device copy between offsets, over a buffer cleared from the host.
    const size_t aligned = 1 << 16;
    std::vector<unsigned char> zeros(n, 0), shifted(n, 0xFF);
    CHECK(hipMemcpy(b, zeros.data(), n, hipMemcpyHostToDevice));
    CHECK(hipMemcpy((char *)b + 4096, (char *)a + 8192, aligned, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(shifted.data(), b, n, hipMemcpyDeviceToHost));
    bool aligned_ok = std::memcmp(shifted.data() + 4096, host_in.data() + 8192, aligned) == 0 &&
                      std::memcmp(shifted.data(), zeros.data(), 4096) == 0 &&
                      std::memcmp(shifted.data() + 4096 + aligned, zeros.data(), n - 4096 - aligned) == 0;
    std::printf("memcpy aligned %s\n", aligned_ok ? "ok" : "MISMATCH");

    // Fills: ROCclr's own fill kernels (no host build anywhere: the soft runtime runs their
    // gfx1030 machine code). Bytes over an odd length at an odd offset, 32-bit words, a 2D pitch
    // and a 3D extent, each checked from the host with the bytes around it.
    std::vector<unsigned char> filled(n, 0);
    CHECK(hipMemset(a, 0x5A, n));
    CHECK(hipMemset((char *)a + 3, 0xC3, n - 7));
    CHECK(hipMemcpy(filled.data(), a, n, hipMemcpyDeviceToHost));
    bool memset_ok = filled[0] == 0x5A && filled[2] == 0x5A && filled[3] == 0xC3 && filled[n - 5] == 0xC3 &&
                     filled[n - 4] == 0x5A && filled[n - 1] == 0x5A;
    for (size_t i = 3; i < n - 4 && memset_ok; ++i) memset_ok = filled[i] == 0xC3;
    std::printf("memset %s\n", memset_ok ? "ok" : "MISMATCH");
    const size_t words = n / 4 - 5;
    CHECK(hipMemsetD32((hipDeviceptr_t)a, 0xDEADBEEF, words));
    CHECK(hipMemcpy(filled.data(), a, n, hipMemcpyDeviceToHost));
    bool d32_ok = true;
    for (size_t i = 0; i < words && d32_ok; ++i) {
        unsigned int word;
        std::memcpy(&word, filled.data() + 4 * i, 4);
        d32_ok = word == 0xDEADBEEFu;
    }
    d32_ok = d32_ok && filled[4 * words] == 0xC3;  // the byte fill's, just past the words
    std::printf("memsetD32 %s\n", d32_ok ? "ok" : "MISMATCH");
    const size_t pitch = 1024, width = 1000, height = 300;
    CHECK(hipMemset(a, 0, pitch * height));
    CHECK(hipMemset2D(a, pitch, 0x77, width, height));
    CHECK(hipMemcpy(filled.data(), a, pitch * height, hipMemcpyDeviceToHost));
    bool rect_ok = true;
    for (size_t row = 0; row < height && rect_ok; ++row)
        for (size_t column = 0; column < pitch && rect_ok; ++column)
            rect_ok = filled[row * pitch + column] == (column < width ? 0x77 : 0);
    std::printf("memset2D %s\n", rect_ok ? "ok" : "MISMATCH");
    hipPitchedPtr volume = make_hipPitchedPtr(a, 256, 200, 16);
    hipExtent extent = make_hipExtent(200, 16, 8);
    CHECK(hipMemset(a, 0, 256 * 16 * 8));
    CHECK(hipMemset3D(volume, 0x3C, extent));
    CHECK(hipMemcpy(filled.data(), a, 256 * 16 * 8, hipMemcpyDeviceToHost));
    bool volume_ok = true;
    for (size_t i = 0; i < 256 * 16 * 8 && volume_ok; ++i) volume_ok = filled[i] == (i % 256 < 200 ? 0x3C : 0);
    std::printf("memset3D %s\n", volume_ok ? "ok" : "MISMATCH");

    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipEventRecord(start, stream));
    CHECK(hipMemcpyAsync(a, host_out.data() + 1, n - 1, hipMemcpyHostToDevice, stream));
    CHECK(hipMemcpyAsync(host_back.data(), a, n - 1, hipMemcpyDeviceToHost, stream));
    CHECK(hipEventRecord(stop, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipEventSynchronize(stop));
    std::printf("memcpyAsync %s\n",
                std::memcmp(host_in.data() + 1, host_back.data(), n - 1) == 0 ? "ok" : "MISMATCH");
    float ms = -1.0f;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    std::printf("elapsed %s\n", ms >= 0.0f ? "ok" : "NEGATIVE");

    // Pinned host memory, and a second stream that waits for the first through an event.
    void *pinned = nullptr;
    CHECK(hipHostMalloc(&pinned, n, 0));
    hipStream_t second;
    CHECK(hipStreamCreate(&second));
    CHECK(hipMemcpyAsync(b, host_in.data(), n, hipMemcpyHostToDevice, stream));
    CHECK(hipEventRecord(start, stream));
    CHECK(hipStreamWaitEvent(second, start, 0));
    CHECK(hipMemcpyAsync(pinned, b, n, hipMemcpyDeviceToHost, second));
    CHECK(hipDeviceSynchronize());
    std::printf("pinned %s\n", std::memcmp(pinned, host_in.data(), n) == 0 ? "ok" : "MISMATCH");
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
    std::printf("meminfo %s\n", free_bytes > 0 && free_bytes <= total_bytes ? "ok" : "WRONG");
    CHECK(hipStreamDestroy(second));
    CHECK(hipHostFree(pinned));

    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipStreamDestroy(stream));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    std::printf("done\n");
    return 0;
}
