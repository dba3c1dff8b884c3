// HIP's __smid() (HIP 5.2.3's amd_device_functions.h: HW_ID's SE_ID << 4 | CU_ID, read with
// s_getreg_b32) as a user builds it (`hipcc --offload-arch=gfx90a`), run unmodified on the
// drop-in: tests/soft_drop_in.rs builds this file, runs it on a gfx90a soft agent, and checks
// every line. Each thread records its block's __smid(); the program checks that every thread of a
// block (four wave64 waves) reports its block's first thread's value, that every value is below
// the device's multiProcessorCount, and prints how many distinct values the blocks reported.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <set>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t status_ = (call);                                                       \
        if (status_ != hipSuccess) {                                                       \
            std::printf("FAIL %s: %s (%d)\n", #call, hipGetErrorString(status_), status_); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

__global__ void where(unsigned *smid) {
    smid[blockIdx.x * blockDim.x + threadIdx.x] = __smid();
}

int main() {
    const int blocks = 64, threads = 256;
    hipDeviceProp_t properties;
    CHECK(hipGetDeviceProperties(&properties, 0));
    unsigned *device = nullptr;
    CHECK(hipMalloc(&device, blocks * threads * sizeof(unsigned)));
    where<<<blocks, threads>>>(device);
    CHECK(hipGetLastError());
    std::vector<unsigned> smid(blocks * threads);
    CHECK(hipMemcpy(smid.data(), device, smid.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
    CHECK(hipFree(device));
    bool agree = true, in_range = true;
    std::set<unsigned> distinct;
    for (int block = 0; block < blocks; ++block) {
        unsigned first = smid[block * threads];
        distinct.insert(first);
        for (int thread = 0; thread < threads; ++thread) {
            unsigned value = smid[block * threads + thread];
            agree = agree && value == first;
            in_range = in_range && value < unsigned(properties.multiProcessorCount);
        }
    }
    std::printf("compute units %d\n", properties.multiProcessorCount);
    std::printf("%s\n", agree ? "blocks agree" : "FAIL a block's threads disagree");
    std::printf("%s\n", in_range ? "in range" : "FAIL a __smid() at or past the CU count");
    std::printf("distinct %zu\n", distinct.size());
    return agree && in_range ? 0 : 1;
}
