// Atomic read-modify-writes, global and LDS, 32 and 64 bits, with and without the returned old
// value: global_atomic_{add,sub,min_i32,max_i32,min_u32,max_u32,and,or,xor,swap,inc,dec,cmpswap}
// (_b32/_u32/_i32 and the _u64/_i64/_b64 forms), global_atomic_add_f32 / min_f32 / max_f32
// (built with -munsafe-fp-atomics so LLVM uses them rather than a compare-swap loop), an f64 add
// as the compare-swap loop gfx11 needs, and the LDS forms ds_{add,sub,min,max,and,or,xor,inc,
// dec}_rtn_{u32,u64}, ds_storexchg_rtn_b32/b64, ds_cmpstore_rtn_b32/b64, ds_add_rtn_f32,
// ds_min_rtn_f32, ds_max_rtn_f32 and the no-return ds_add_u32.
// Every work-item applies op k to the one shared word words[k] and records the old value in
// olds[k * n + i]: the test checks the final value and that the old values chain into it in some
// order (which lane goes first is the hardware's choice).
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

#define KERNEL __attribute__((amdgpu_kernel))
#define LDS __attribute__((address_space(3)))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())
#define R __ATOMIC_RELAXED
#define WORKGROUP 3 /* __HIP_MEMORY_SCOPE_WORKGROUP */
#define AGENT 4     /* __HIP_MEMORY_SCOPE_AGENT */

// The operand each op uses, from the work-item's value v (the test applies the same).
#define AND_MASK(v) ((v) | 0xF0F0FFF0u)
#define OR_MASK(v) ((v) & 0x0F0F000Fu)
#define INC_LIMIT 37u
#define DEC_LIMIT 50u

// Ops 0-13 on `words` (u32 or u64 pointer type T, signed type S), for work-item i of n with
// value v; `cas` holds one word per work-item for an uncontended compare-swap (op 14).
#define RMW_SET(T, S, words, olds, cas, v, i, n, scope, INC, DEC)                                   \
  do {                                                                                              \
    olds[0 * n + i] = __hip_atomic_fetch_add(&words[0], v, R, scope);                               \
    olds[1 * n + i] = __hip_atomic_fetch_sub(&words[1], v, R, scope);                               \
    olds[2 * n + i] = (T)__hip_atomic_fetch_min((S *)&words[2], (S)v, R, scope);                    \
    olds[3 * n + i] = (T)__hip_atomic_fetch_max((S *)&words[3], (S)v, R, scope);                    \
    olds[4 * n + i] = __hip_atomic_fetch_min(&words[4], v, R, scope);                               \
    olds[5 * n + i] = __hip_atomic_fetch_max(&words[5], v, R, scope);                               \
    olds[6 * n + i] = __hip_atomic_fetch_and(&words[6], (T)AND_MASK(v), R, scope);                  \
    olds[7 * n + i] = __hip_atomic_fetch_or(&words[7], (T)OR_MASK(v), R, scope);                    \
    olds[8 * n + i] = __hip_atomic_fetch_xor(&words[8], v, R, scope);                               \
    olds[9 * n + i] = __hip_atomic_exchange(&words[9], v, R, scope);                                \
    olds[10 * n + i] = INC(&words[10], INC_LIMIT, R, scope == AGENT ? "agent" : "workgroup");       \
    olds[11 * n + i] = DEC(&words[11], DEC_LIMIT, R, scope == AGENT ? "agent" : "workgroup");       \
    T expected = i;                                                                                 \
    __hip_atomic_compare_exchange_strong(&words[12], &expected, (T)(i + 1), R, R, scope);           \
    olds[12 * n + i] = expected;                                                                    \
    __hip_atomic_fetch_add(&words[13], v, R, scope); /* no return */                                \
    T mine = (T)i * 3 + (i & 1);                                                                    \
    __hip_atomic_compare_exchange_strong(&cas[i], &mine, (T)(0x1000 + i), R, R, scope);             \
    olds[14 * n + i] = mine;                                                                        \
  } while (0)

// Global, 32-bit: any number of workgroups; n work-items in all.
KERNEL void global_atomics_32(u32 *words, u32 *olds, u32 *cas, const u32 *vals, u32 n) {
  u32 i = global_id();
  u32 v = vals[i];
  RMW_SET(u32, i32, words, olds, cas, v, i, n, AGENT, __builtin_amdgcn_atomic_inc32, __builtin_amdgcn_atomic_dec32);
}

KERNEL void global_atomics_64(u64 *words, u64 *olds, u64 *cas, const u64 *vals, u32 n) {
  u32 i = global_id();
  u64 v = vals[i];
  RMW_SET(u64, i64, words, olds, cas, v, i, n, AGENT, __builtin_amdgcn_atomic_inc64, __builtin_amdgcn_atomic_dec64);
}

// Floats: 0 add, 1 max, 2 min, 3 add without return (f32), and an f64 add (a compare-swap loop).
KERNEL void global_atomics_float(float *words, float *olds, double *word64, double *olds64, const float *vals, u32 n) {
  u32 i = global_id();
  float v = vals[i];
  olds[0 * n + i] = __hip_atomic_fetch_add(&words[0], v, R, AGENT);
  olds[1 * n + i] = __hip_atomic_fetch_max(&words[1], v, R, AGENT);
  olds[2 * n + i] = __hip_atomic_fetch_min(&words[2], v, R, AGENT);
  __hip_atomic_fetch_add(&words[3], v, R, AGENT);
  olds64[i] = __hip_atomic_fetch_add(word64, (double)v * 0.25, R, AGENT);
}

// LDS: one workgroup (of any size up to 1024; n work-items). The words start from `init`, the
// same ops run on LDS copies, and the finals are copied out after a barrier.
KERNEL void lds_atomics(u32 *words32, u32 *olds32, u64 *words64, u64 *olds64, float *wordsf, float *oldsf,
                        const u32 *vals32, const u64 *vals64, const float *valsf, u32 n) {
  static LDS u32 w32[15 + 1024] __attribute__((loader_uninitialized));
  static LDS u64 w64[15 + 1024] __attribute__((loader_uninitialized));
  static LDS float wf[4] __attribute__((loader_uninitialized));
  u32 i = __builtin_amdgcn_workitem_id_x();
  if (i < 15) {
    w32[i] = words32[i];
    w64[i] = words64[i];
  }
  if (i < 4) wf[i] = wordsf[i];
  // The uncontended compare-swap words, after the shared ones.
  w32[15 + i] = words32[15 + i];
  w64[15 + i] = words64[15 + i];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  u32 v = vals32[i];
  RMW_SET(u32, i32, w32, olds32, (w32 + 15), v, i, n, WORKGROUP, __builtin_amdgcn_atomic_inc32, __builtin_amdgcn_atomic_dec32);
  u64 v64 = vals64[i];
  RMW_SET(u64, i64, w64, olds64, (w64 + 15), v64, i, n, WORKGROUP, __builtin_amdgcn_atomic_inc64, __builtin_amdgcn_atomic_dec64);
  float f = valsf[i];
  oldsf[0 * n + i] = __hip_atomic_fetch_add(&wf[0], f, R, WORKGROUP);
  oldsf[1 * n + i] = __hip_atomic_fetch_max(&wf[1], f, R, WORKGROUP);
  oldsf[2 * n + i] = __hip_atomic_fetch_min(&wf[2], f, R, WORKGROUP);
  __hip_atomic_fetch_add(&wf[3], f, R, WORKGROUP);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (i < 15) {
    words32[i] = w32[i];
    words64[i] = w64[i];
  }
  if (i < 4) wordsf[i] = wf[i];
  words32[15 + i] = w32[15 + i];
  words64[15 + i] = w64[15 + i];
}
