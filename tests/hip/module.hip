// A kernel built on its own into a code object (`hipcc --genco --offload-arch=gfx1030`), which
// programs.hip loads with hipModuleLoad and launches with hipModuleLaunchKernel.
#include <hip/hip_runtime.h>

extern "C" __global__ void scale(float *y, const float *x, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * factor;
}
