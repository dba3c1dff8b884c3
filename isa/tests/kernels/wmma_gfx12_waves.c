// RDNA4 (gfx12) WMMA from row-major matrices, one source for wave32 and wave64: each wave
// multiplies its own 16x16 tiles, D = A x B + C (A, B, C, D row-major, 256 elements a tile).
// Unlike wmma_gfx12.c, the kernels place the elements themselves, so the wave32 and the wave64
// build (the _w32_gfx12 or _w64_gfx12 builtins, picked by the wave size) must store the same D.
// The placement is what the sources in isa/src/interp/valu/wmma.rs give:
// - wave32 (llama.cpp's RDNA4 tiles): lane l holds A's row l % 16, K 8 (l / 16) + j, B's column
//   l % 16 at the same K, and C/D rows 8 (l / 16) + j of column l % 16 (j < 8).
// - wave64 (AMD aiter's op_tests/opus/device/test_wmma_gfx1201_w64.cu, run on gfx1201): A's row
//   l % 16 at K 4 (l / 16) + j, B's column likewise, and C/D rows {0, 8, 4, 12}[l / 16] + j of
//   column l % 16 (j < 4).
typedef unsigned int u32;
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef float v4f __attribute__((ext_vector_type(4)));

#define KERNEL __attribute__((amdgpu_kernel))

#if __AMDGCN_WAVEFRONT_SIZE == 64
#define PER 4
typedef v4h vh;
typedef v4s vs;
typedef v4f vf;
#define F32_F16 __builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12
#define F32_BF16 __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64_gfx12
#define F16_F16 __builtin_amdgcn_wmma_f16_16x16x16_f16_w64_gfx12
#define BF16_BF16 __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w64_gfx12
static u32 k_of(u32 lane, u32 j) { return 4 * (lane / 16) + j; }
static u32 row_of(u32 lane, u32 j) { return (u32[]){0, 8, 4, 12}[lane / 16] + j; }
#else
#define PER 8
typedef v8h vh;
typedef v8s vs;
typedef v8f vf;
#define F32_F16 __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12
#define F32_BF16 __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12
#define F16_F16 __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12
#define BF16_BF16 __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32_gfx12
static u32 k_of(u32 lane, u32 j) { return 8 * (lane / 16) + j; }
static u32 row_of(u32 lane, u32 j) { return 8 * (lane / 16) + j; }
#endif

#define WAVE() (__builtin_amdgcn_workitem_id_x() / __AMDGCN_WAVEFRONT_SIZE)
#define LANE() (__builtin_amdgcn_workitem_id_x() % __AMDGCN_WAVEFRONT_SIZE)

// One kernel per form: IN is A's and B's element type (vector VIN), OUT C's and D's (VOUT).
#define FORM(NAME, IN, VIN, OUT, VOUT, BUILTIN)                                     \
  KERNEL void NAME(OUT *d, const IN *a, const IN *b, const OUT *c) {                \
    u32 tile = 256 * WAVE(), lane = LANE(), line = lane % 16;                       \
    VIN va, vb;                                                                     \
    VOUT vc;                                                                        \
    for (u32 j = 0; j < PER; j++) {                                                 \
      va[j] = a[tile + 16 * line + k_of(lane, j)];                                  \
      vb[j] = b[tile + 16 * k_of(lane, j) + line];                                  \
      vc[j] = c[tile + 16 * row_of(lane, j) + line];                                \
    }                                                                               \
    VOUT vd = BUILTIN(va, vb, vc);                                                  \
    for (u32 j = 0; j < PER; j++) d[tile + 16 * row_of(lane, j) + line] = vd[j];    \
  }

FORM(wmma_f32_f16, _Float16, vh, float, vf, F32_F16)
FORM(wmma_f32_bf16, short, vs, float, vf, F32_BF16)
FORM(wmma_f16, _Float16, vh, _Float16, vh, F16_F16)
FORM(wmma_bf16, short, vs, short, vs, BF16_BF16)
