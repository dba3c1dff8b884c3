// Matrix-core kernels for the gfx9 CDNA processors (gfx908, gfx90a, gfx942; wave64): one MFMA
// per wave from operands each lane loads, its accumulator stored back, as a user's tile loop does
// it. Each kernel reads its lane's A, B and C from `in` and writes D to `out`; the layouts are
// those of AMD's CDNA ISA guides ("Matrix Arithmetic Instructions"). Built by
// isa/gen/test_kernels.sh for gfx908, gfx90a and gfx942 only; the packed-f32 kernel needs gfx90a.

typedef float float4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
typedef float float2 __attribute__((ext_vector_type(2)));
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef int int4 __attribute__((ext_vector_type(4)));

#define KERNEL __attribute__((amdgpu_kernel))

static unsigned lane(void) { return __builtin_amdgcn_workitem_id_x(); }

// v_mfma_f32_16x16x4f32 (gfx942: v_mfma_f32_16x16x4_f32): 4 blocks of 16x16 += 16x1 * 1x16.
KERNEL void mfma_f32_16x16x4f32(const float *in, float4 *out) {
    unsigned i = lane();
    float4 c = {in[128 + 4 * i], in[129 + 4 * i], in[130 + 4 * i], in[131 + 4 * i]};
    out[i] = __builtin_amdgcn_mfma_f32_16x16x4f32(in[i], in[64 + i], c, 0, 0, 0);
}

// v_mfma_f32_32x32x8f16 (gfx942: v_mfma_f32_32x32x8_f16): 32x32 += 32x8 * 8x32 in f16.
KERNEL void mfma_f32_32x32x8f16(const half4 *a, const half4 *b, const float16 *c, float16 *out) {
    unsigned i = lane();
    out[i] = __builtin_amdgcn_mfma_f32_32x32x8f16(a[i], b[i], c[i], 0, 0, 0);
}

// v_mfma_i32_16x16x16i8 (gfx908, gfx90a): 16x16 += 16x16 * 16x16 in i8, four per dword.
#if !defined(__gfx942__)
KERNEL void mfma_i32_16x16x16i8(const int *in, int4 *out) {
    unsigned i = lane();
    int4 c = {in[128 + 4 * i], in[129 + 4 * i], in[130 + 4 * i], in[131 + 4 * i]};
    out[i] = __builtin_amdgcn_mfma_i32_16x16x16i8(in[i], in[64 + i], c, 0, 0, 0);
}
#endif

// The CDNA2 additions: bf16 with four per lane (the `_1k` forms), f64 MFMA and packed f32.
#if defined(__gfx90a__) || defined(__gfx942__)
KERNEL void mfma_f32_16x16x16bf16_1k(const short4 *a, const short4 *b, const float4 *c, float4 *out) {
    unsigned i = lane();
    out[i] = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a[i], b[i], c[i], 0, 0, 0);
}

KERNEL void mfma_f64_16x16x4f64(const double *in, double *out) {
    unsigned i = lane();
    typedef double double4 __attribute__((ext_vector_type(4)));
    double4 c = {in[128 + 4 * i], in[129 + 4 * i], in[130 + 4 * i], in[131 + 4 * i]};
    double4 d = __builtin_amdgcn_mfma_f64_16x16x4f64(in[i], in[64 + i], c, 0, 0, 0);
    for (int k = 0; k < 4; k++) {
        out[4 * i + k] = d[k];
    }
}

// v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32: two f32 lanes per operation.
KERNEL void packed_f32(const float2 *a, const float2 *b, const float2 *c, float2 *out) {
    unsigned i = lane();
    float2 x = a[i] * b[i] + c[i];
    out[i] = x * x + a[i];
}
#endif

// gfx942's xf32 and fp8 forms.
#if defined(__gfx942__)
KERNEL void mfma_f32_16x16x8_xf32(const float2 *a, const float2 *b, const float4 *c, float4 *out) {
    unsigned i = lane();
    out[i] = __builtin_amdgcn_mfma_f32_16x16x8_xf32(a[i], b[i], c[i], 0, 0, 0);
}

KERNEL void mfma_f32_16x16x32_fp8_fp8(const long *a, const long *b, const float4 *c, float4 *out) {
    unsigned i = lane();
    out[i] = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a[i], b[i], c[i], 0, 0, 0);
}
#endif
