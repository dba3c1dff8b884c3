// Idioms every compiler emits that the interpreter's own kernels did not reach, each from a
// defect kernels written elsewhere found (issue 54, item 0):
// - `abs_uniform`: abs() of a uniform value is the scalar s_abs_i32;
// - `divide_f64`, `divide_f32`: division as the compiler expands it (v_div_scale, v_rcp, FMAs,
//   v_div_fmas, v_div_fixup), over divisors that are subnormal, huge or zero;
// - `generic_shared`, `generic_private`: a __shared__ array and a private array reached through a
//   generic pointer (the compiler cannot tell which, so it emits FLAT accesses in the LDS and
//   private apertures), with a FLAT atomic on the LDS one;
// - `wave_handoff`: wave 0 of a workgroup spins on an LDS flag that the workgroup's last wave
//   sets, and `wave_handoff_sleep` does the same with s_sleep in the loop: both end only if the
//   waves run together, as on the hardware.
typedef unsigned int u32;

#define KERNEL __attribute__((amdgpu_kernel))
#define LDS __attribute__((address_space(3)))

static inline u32 id(void) {
  return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
}

static inline int iabs(int v) { return v < 0 ? -v : v; }

// out[i] = |a| + |a - b| + i, with a and b uniform (kernel arguments): scalar arithmetic.
KERNEL void abs_uniform(int *out, int a, int b) {
  u32 i = id();
  out[i] = iabs(a) + iabs(a - b) + (int)i;
}

KERNEL void divide_f64(double *out, const double *n, const double *d) {
  u32 i = id();
  out[i] = n[i] / d[i];
}

KERNEL void divide_f32(float *out, const float *n, const float *d) {
  u32 i = id();
  out[i] = n[i] / d[i];
}

// Each work-item writes its slot of a __shared__ array through a pointer that is the array or,
// when `to_global` is set, `scratch` in global memory; reads its neighbour's after a barrier; and
// adds 1 to a shared counter through the same kind of pointer. out[i] = neighbour's value,
// out[n + group] = the counter (the workgroup's size).
KERNEL void generic_shared(int *out, int *scratch, u32 to_global) {
  static LDS int tile[256] __attribute__((loader_uninitialized));
  static LDS int counter __attribute__((loader_uninitialized));
  u32 lane = __builtin_amdgcn_workitem_id_x();
  u32 size = __builtin_amdgcn_workgroup_size_x();
  int *base = to_global ? scratch : (int *)tile;
  int *count = to_global ? scratch + 256 : (int *)&counter;
  if (lane == 0)
    *count = 0;
  base[lane] = (int)(id() * 3 + 1);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
  int neighbour = base[(lane + 1) % size];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[id()] = neighbour;
  if (lane == 0)
    out[__builtin_amdgcn_grid_size_x() + __builtin_amdgcn_workgroup_id_x()] = *count;
}

// A private array indexed at run time (the order comes from memory), reached through a generic
// pointer: value k is written as (i ^ k) * k at slot order[k] & 63, and out[i] sums slot s times
// (s + 1) over the 64 slots. 64 ints for each of up to 1024 work-items is more LDS than there
// is, so the array stays private (the compiler moves a smaller one into LDS).
KERNEL void generic_private(int *out, int *scratch, const u32 *order, u32 to_global) {
  int values[64];
  u32 i = id();
  int *p = to_global ? scratch + i * 64 : values;
  for (u32 s = 0; s < 64; s++)
    p[s] = 0;
  for (u32 k = 0; k < 64; k++)
    p[order[k] & 63] = (int)((i ^ k) * k);
  int sum = 0;
  for (u32 s = 0; s < 64; s++)
    sum += p[s] * (int)(s + 1);
  out[i] = sum;
}

// Wave 0 waits for the workgroup's last wave to publish a value in LDS: out[i] = the value + i
// for wave 0's work-items, i for the others.
static inline void handoff(int *out, u32 value, int sleep) {
  static LDS u32 flag __attribute__((loader_uninitialized));
  static LDS u32 payload __attribute__((loader_uninitialized));
  u32 lane = __builtin_amdgcn_workitem_id_x();
  u32 size = __builtin_amdgcn_workgroup_size_x();
  u32 wave = __builtin_amdgcn_wavefrontsize();
  if (lane == 0)
    __atomic_store_n(&flag, 0, __ATOMIC_RELAXED);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  u32 result = id();
  if (lane / wave == 0) {
    while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) == 0) {
      if (sleep)
        __builtin_amdgcn_s_sleep(1);
    }
    result += payload;
  } else if (lane == size - 1) {
    payload = value;
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  }
  out[id()] = (int)result;
}

KERNEL void wave_handoff(int *out, u32 value) { handoff(out, value, 0); }

KERNEL void wave_handoff_sleep(int *out, u32 value) { handoff(out, value, 1); }
