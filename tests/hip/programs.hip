// HIP programs as a user builds them with Debian's hipcc (`hipcc --offload-arch=gfx1030`), run
// unmodified on the drop-in: tests/soft_drop_in.rs builds this file and module.hip, runs the
// program under scripts/with-soft-gpu.sh with no soft-runtime variable, and checks every line.
// - `<<<>>>` launches and hipLaunchKernelGGL;
// - device math (expf, sqrtf, sinf through the device libraries);
// - a reduction through static shared memory and __syncthreads, finished with atomicAdd;
// - dynamic shared memory (extern __shared__, sized at launch);
// - hipModuleLoad / hipModuleLaunchKernel on a code object built by `hipcc --genco`;
// - registered host memory (hipHostRegister): a device address of its own, which a kernel and
//   hipMemcpy use, then hipHostUnregister, twice over.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t status_ = (call);                                                       \
        if (status_ != hipSuccess) {                                                       \
            std::printf("FAIL %s: %s (%d)\n", #call, hipGetErrorString(status_), status_); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

__global__ void math(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sqrtf(x[i]) + expf(-x[i]) + sinf(x[i]);
}

__global__ void sum(const float *x, float *total, int n) {
    __shared__ float part[256];
    int t = threadIdx.x;
    float s = 0.0f;
    for (int i = blockIdx.x * 256 + t; i < n; i += gridDim.x * 256) s += x[i];
    part[t] = s;
    __syncthreads();
    for (int width = 128; width > 0; width /= 2) {
        if (t < width) part[t] += part[t + width];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, part[0]);
}

// Each block reverses its slice through dynamic shared memory.
__global__ void reverse(const int *x, int *y) {
    extern __shared__ int slice[];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    slice[t] = x[base + t];
    __syncthreads();
    y[base + t] = slice[blockDim.x - 1 - t];
}

__global__ void twice(float *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= 2.0f;
}

// Registers `host`, doubles it through its device pointer with a kernel, copies it to `device`
// and back from the device pointer, and unregisters it; 0 when every value is right.
static int registered_round(std::vector<float> &host, float *device, float scale) {
    const int n = (int)host.size();
    const size_t bytes = host.size() * sizeof(float);
    for (int i = 0; i < n; ++i) host[i] = (float)i * scale;
    CHECK(hipHostRegister(host.data(), bytes, hipHostRegisterDefault));
    float *mapped = nullptr;
    CHECK(hipHostGetDevicePointer((void **)&mapped, host.data(), 0));
    if (mapped == nullptr || mapped == host.data()) {
        std::printf("registered device pointer %p for host %p\n", (void *)mapped, (void *)host.data());
        return 1;
    }
    twice<<<(n + 255) / 256, 256>>>(mapped, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(device, host.data(), bytes, hipMemcpyHostToDevice));
    std::vector<float> back(n, -1.0f);
    CHECK(hipMemcpy(back.data(), mapped, bytes, hipMemcpyDeviceToHost));
    CHECK(hipHostUnregister(host.data()));
    std::vector<float> copied(n, -1.0f);
    CHECK(hipMemcpy(copied.data(), device, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        float want = (float)i * scale * 2.0f;
        if (host[i] != want || back[i] != want || copied[i] != want) {
            std::printf("registered item %d: host %g, back %g, copied %g, want %g\n", i, host[i], back[i], copied[i], want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::printf("usage: programs MODULE.co\n");
        return 2;
    }
    const int n = 100003;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = (float)(i % 1000) / 100.0f;
    float *dx, *dy, *dtotal;
    CHECK(hipMalloc(&dx, n * sizeof(float)));
    CHECK(hipMalloc(&dy, n * sizeof(float)));
    CHECK(hipMalloc(&dtotal, sizeof(float)));
    CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));

    math<<<(n + 255) / 256, 256>>>(dx, dy, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    bool math_ok = true;
    for (int i = 0; i < n && math_ok; ++i) {
        double want = std::sqrt((double)x[i]) + std::exp(-(double)x[i]) + std::sin((double)x[i]);
        math_ok = std::fabs(y[i] - want) <= 4e-6 * (1.0 + std::fabs(want));
    }
    std::printf("math %s\n", math_ok ? "ok" : "MISMATCH");

    CHECK(hipMemset(dtotal, 0, sizeof(float)));
    hipLaunchKernelGGL(sum, dim3(64), dim3(256), 0, 0, dx, dtotal, n);
    CHECK(hipGetLastError());
    float total = 0.0f;
    CHECK(hipMemcpy(&total, dtotal, sizeof(float), hipMemcpyDeviceToHost));
    double want_total = 0.0;
    for (float v : x) want_total += v;
    std::printf("sum %s\n", std::fabs(total - want_total) <= 1e-5 * want_total ? "ok" : "MISMATCH");

    const int blocks = 40, width = 128;
    std::vector<int> in(blocks * width), out(blocks * width, -1);
    for (int i = 0; i < blocks * width; ++i) in[i] = i * 7;
    int *din, *dout;
    CHECK(hipMalloc(&din, in.size() * sizeof(int)));
    CHECK(hipMalloc(&dout, out.size() * sizeof(int)));
    CHECK(hipMemcpy(din, in.data(), in.size() * sizeof(int), hipMemcpyHostToDevice));
    reverse<<<blocks, width, width * sizeof(int)>>>(din, dout);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, out.size() * sizeof(int), hipMemcpyDeviceToHost));
    bool reverse_ok = true;
    for (int b = 0; b < blocks && reverse_ok; ++b)
        for (int t = 0; t < width && reverse_ok; ++t) reverse_ok = out[b * width + t] == in[b * width + width - 1 - t];
    std::printf("dynamic shared %s\n", reverse_ok ? "ok" : "MISMATCH");

    // module.hip's `scale`, from its own code object: y[i] = x[i] * factor.
    hipModule_t module;
    hipFunction_t scale;
    CHECK(hipModuleLoad(&module, argv[1]));
    CHECK(hipModuleGetFunction(&scale, module, "scale"));
    struct {
        float *y;
        const float *x;
        float factor;
        int n;
    } args = {dy, dx, 2.5f, n};
    size_t size = sizeof(args);
    void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(scale, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, nullptr, config));
    CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    bool module_ok = true;
    for (int i = 0; i < n && module_ok; ++i) module_ok = y[i] == x[i] * 2.5f;
    std::printf("module launch %s\n", module_ok ? "ok" : "MISMATCH");
    CHECK(hipModuleUnload(module));

    std::vector<float> host(5000);
    bool registered_ok = registered_round(host, dy, 1.0f) == 0 && registered_round(host, dy, 3.0f) == 0;
    std::printf("registered %s\n", registered_ok ? "ok" : "MISMATCH");

    for (void *p : {(void *)dx, (void *)dy, (void *)dtotal, (void *)din, (void *)dout}) CHECK(hipFree(p));
    std::printf("done\n");
    return 0;
}
