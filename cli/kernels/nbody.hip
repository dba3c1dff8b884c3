// Gravitational n-body, one step, as a game writes it in HIP: device-only, no HIP headers (the
// few keywords are defined here), built by kernels/regen.sh for gfx11-generic and
// gfx10-3-generic. Used by examples/bevy_frame_compute.rs.
//
// nbody_step(next, velocity, current, n, dt, softening2): each body i (a 128-wide workgroup of
// bodies) sums the pull of every body j, staging 128 bodies at a time through LDS:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + softening2)^(3/2)
// then v_i += dt a_i and p_i += dt v_i (semi-implicit Euler). A body is (x, y, z, mass);
// `current` is read and `next` written, so the host ping-pongs two position buffers.
// v_rsq_f32 gives 1/sqrt (1 ULP, the RDNA3 guide): the host mirror allows for it.
typedef unsigned int u32;
typedef float float4 __attribute__((ext_vector_type(4)));

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device))
#define SHARED __attribute__((shared))
#define TILE 128

static inline DEVICE void barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

KERNEL void nbody_step(float4 *next, float4 *velocity, const float4 *current, u32 n, float dt, float softening2) {
  static SHARED float4 tile[TILE] __attribute__((loader_uninitialized));
  u32 local = __builtin_amdgcn_workitem_id_x();
  u32 i = __builtin_amdgcn_workgroup_id_x() * TILE + local;
  float4 me = i < n ? current[i] : (float4)(0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (u32 base = 0; base < n; base += TILE) {
    // Past the last body the tile holds massless points, which pull nothing.
    tile[local] = base + local < n ? current[base + local] : (float4)(0.0f);
    barrier();
    for (u32 j = 0; j < TILE; ++j) {
      float4 other = tile[j];
      float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
      float inverse = __builtin_amdgcn_rsqf(dx * dx + dy * dy + dz * dz + softening2);
      float pull = other.w * inverse * inverse * inverse;
      ax += dx * pull;
      ay += dy * pull;
      az += dz * pull;
    }
    barrier();
  }
  if (i < n) {
    float4 v = velocity[i];
    v.x += dt * ax;
    v.y += dt * ay;
    v.z += dt * az;
    velocity[i] = v;
    float4 moved = {me.x + dt * v.x, me.y + dt * v.y, me.z + dt * v.z, me.w};
    next[i] = moved;
  }
}
