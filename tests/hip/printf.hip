// Device printf as HIP 5.2.3 routes it: the kernel writes its format and arguments into ROCclr's
// hostcall buffer (the `hidden_hostcall_buffer` kernarg) and rings the listener's signal; the
// listener thread prints. tests/soft_drop_in.rs builds it with hipcc for gfx1030, runs it on the
// drop-in and checks every line (the kernel's lines in any order).
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void hello(int base, float scale) {
    int lane = (int)threadIdx.x;
    printf("lane %d: %d %.2f %s\n", lane, base + lane, scale * (float)lane, lane % 2 ? "odd" : "even");
}

int main() {
    hipLaunchKernelGGL(hello, dim3(1), dim3(4), 0, 0, 40, 0.5f);
    hipError_t status = hipDeviceSynchronize();
    std::printf("sync %s\n", status == hipSuccess ? "ok" : hipGetErrorString(status));
    return status == hipSuccess ? 0 : 1;
}
