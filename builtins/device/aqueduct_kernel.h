// aqueduct's work-item shim: one kernel source for two targets.
//
// A kernel written against this header compiles unchanged
// - for AMDGPU (clang-19, `__AMDGPU__`), where every call below is the clang builtin it names, and
// - for the host (the `cc` crate at build time, gcc or clang), where the same calls read a
//   per-thread context that the host entry of the kernel sets up, and the soft HSA runtime runs
//   that entry once per workgroup.
//
// Kernels use only what this header offers: `__builtin_amdgcn_*` does not exist on the host, so
// the host build refuses a kernel that calls one directly (-Werror=implicit-function-declaration).
//
// Host model and its limits:
// - The host entry runs a workgroup's work-items one after another, x fastest. There is no
//   barrier: work-items that waited on each other would deadlock, so `aq_barrier()` is declared
//   with an error attribute and any kernel that calls it fails to build, on both targets, rather
//   than behave differently on the two. (Concurrent workgroups run on different threads.)
// - Memory is the host's, little-endian like a GPU's (asserted below); kernels may reinterpret
//   device memory (a packet as u16 and u32 words), so the host build uses -fno-strict-aliasing.
// - A host build reads its arguments from a C struct whose fields are the kernel's parameters
//   in order: AMDGPU lays explicit kernel arguments out in order at natural alignment, as x86-64
//   lays out a struct, and the table built with AQ_HOST_KERNEL exports each field's offset and
//   size so the soft runtime can compare them with the code object's metadata before it runs
//   anything.

#ifndef AQUEDUCT_KERNEL_H
#define AQUEDUCT_KERNEL_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
// A 16-byte vector; `vector_size` is understood by clang and gcc alike.
typedef u32 u32x4 __attribute__((vector_size(16)));

// hsa_kernel_dispatch_packet_t, as the command processor reads it.
typedef struct aq_dispatch_packet {
  u16 header;
  u16 setup;
  u16 workgroup_size_x, workgroup_size_y, workgroup_size_z;
  u16 reserved0;
  u32 grid_size_x, grid_size_y, grid_size_z;
  u32 private_segment_size;
  u32 group_segment_size;
  u64 kernel_object;
  u64 kernarg_address;
  u64 reserved2;
  u64 completion_signal;
} aq_dispatch_packet;
_Static_assert(sizeof(aq_dispatch_packet) == 64, "hsa_kernel_dispatch_packet_t is 64 bytes");

// Work-items may not wait for each other (see above). Calling this is a build error.
void aq_barrier(void) __attribute__((error(
    "aq_barrier: the soft runtime runs a workgroup's work-items one after another, so aqueduct "
    "kernels cannot use barriers")));

#ifdef __AMDGPU__

#define AQ_KERNEL __attribute__((amdgpu_kernel, visibility("default")))
// The constant address space, where the dispatch packet and kernarg segment live.
#define AQ_CONSTANT __attribute__((address_space(4)))
// The group (LDS) address space.
#define AQ_GROUP __attribute__((address_space(3)))

static inline u32 aq_workitem_id_x(void) { return __builtin_amdgcn_workitem_id_x(); }
static inline u32 aq_workitem_id_y(void) { return __builtin_amdgcn_workitem_id_y(); }
static inline u32 aq_workitem_id_z(void) { return __builtin_amdgcn_workitem_id_z(); }
static inline u32 aq_workgroup_id_x(void) { return __builtin_amdgcn_workgroup_id_x(); }
static inline u32 aq_workgroup_id_y(void) { return __builtin_amdgcn_workgroup_id_y(); }
static inline u32 aq_workgroup_id_z(void) { return __builtin_amdgcn_workgroup_id_z(); }

static inline const AQ_CONSTANT aq_dispatch_packet *aq_dispatch(void) {
  return (const AQ_CONSTANT aq_dispatch_packet *)__builtin_amdgcn_dispatch_ptr();
}

// The hidden arguments; a kernel that calls this gets them listed in its metadata.
static inline const AQ_CONSTANT u8 *aq_implicit_args(void) {
  return (const AQ_CONSTANT u8 *)__builtin_amdgcn_implicitarg_ptr();
}

// Dynamic group memory starts after the kernel's static LDS.
static inline AQ_GROUP u8 *aq_group_memory(void) {
  return (AQ_GROUP u8 *)__builtin_amdgcn_groupstaticsize();
}

// The constant-rate counter (s_memrealtime / SHADER_CYCLES_REALTIME).
static inline u64 aq_steady_counter(void) { return __builtin_readsteadycounter(); }

// A release store visible to the whole system (the host and the packet processor).
static inline void aq_store_release_system_u32(u32 *target, u32 value) {
  __scoped_atomic_store_n(target, value, __ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
}

// Atomics on memory the host and the packet processor share (a queue's write index).
static inline u64 aq_fetch_add_system_u64(u64 *target, u64 value) {
  return __scoped_atomic_fetch_add(target, value, __ATOMIC_ACQ_REL, __MEMORY_SCOPE_SYSTEM);
}
static inline u64 aq_load_acquire_system_u64(const u64 *source) {
  return __scoped_atomic_load_n(source, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_SYSTEM);
}

// Rings a queue's doorbell with the id of the last packet written. A hardware queue's doorbell
// signal is an amd_signal_t of DOORBELL kind whose hardware_doorbell_ptr (byte 8) names the
// doorbell, and ROCr rings it with one 64-bit store of the packet id (docs/rocr-facts.md,
// "Doorbell signals"). Device-side enqueue targets such queues only.
static inline void aq_ring_doorbell(u64 doorbell_signal, u64 packet_id) {
  u64 *doorbell = *(u64 *const *)(doorbell_signal + 8);
  __scoped_atomic_store_n(doorbell, packet_id, __ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
}

#else // the host

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "host builds of aqueduct kernels assume a little-endian host, as GPU memory is"
#endif

#include <stddef.h>

#define AQ_KERNEL static
#define AQ_CONSTANT
#define AQ_GROUP

// WorkgroupContext in abi/src/host_build_abi.rs, field for field.
typedef struct aq_workgroup {
  const aq_dispatch_packet *packet;
  const void *kernarg;
  const void *implicit_args;
  void *group_memory;
  u64 group_memory_size;
  u64 (*steady_counter)(void);
  u32 workgroup_id[3];
  u32 grid_size[3];
  u16 workgroup_size[3];
  // Set non-zero by a host build that failed this workgroup (a Rust host build's panic, caught
  // at its C boundary); the runner then fails the dispatch, as a trap fails a GPU queue.
  u16 trapped;
  // Rings a queue's doorbell (signal handle, packet id): the soft runtime's stand-in for the
  // hardware doorbell write, which reaches the command processor without anyone polling.
  void (*ring_doorbell)(u64 doorbell_signal, u64 packet_id);
} aq_workgroup;
_Static_assert(sizeof(aq_workgroup) == 88 && offsetof(aq_workgroup, workgroup_id) == 48 &&
                   offsetof(aq_workgroup, workgroup_size) == 72 &&
                   offsetof(aq_workgroup, ring_doorbell) == 80,
               "aq_workgroup must match WorkgroupContext");

// HostArg in abi/src/host_build_abi.rs.
typedef struct aq_host_arg {
  const char *name;
  u32 offset;
  u32 size;
  u32 flags;
} aq_host_arg;
_Static_assert(sizeof(aq_host_arg) == 24, "aq_host_arg must match HostArg");
#define AQ_ARG_POINTER 1u
#define AQ_ARG_NULLABLE 2u

// HostBuildRecord in abi/src/host_build_abi.rs.
typedef struct aq_host_kernel {
  const char *symbol;
  void (*entry)(const aq_workgroup *);
  const aq_host_arg *args;
  u32 arg_count;
  u32 args_size;
} aq_host_kernel;
_Static_assert(sizeof(aq_host_kernel) == 32, "aq_host_kernel must match HostBuildRecord");

// The work-item this thread is running. Static: each translation unit has its own, used only by
// its own kernels and entries.
static _Thread_local struct {
  const aq_workgroup *group;
  u32 item[3];
  u32 active[3];
  int started;
} aq_self __attribute__((unused));

static inline u32 aq_workitem_id_x(void) { return aq_self.item[0]; }
static inline u32 aq_workitem_id_y(void) { return aq_self.item[1]; }
static inline u32 aq_workitem_id_z(void) { return aq_self.item[2]; }
static inline u32 aq_workgroup_id_x(void) { return aq_self.group->workgroup_id[0]; }
static inline u32 aq_workgroup_id_y(void) { return aq_self.group->workgroup_id[1]; }
static inline u32 aq_workgroup_id_z(void) { return aq_self.group->workgroup_id[2]; }
static inline const aq_dispatch_packet *aq_dispatch(void) { return aq_self.group->packet; }
static inline const u8 *aq_implicit_args(void) { return (const u8 *)aq_self.group->implicit_args; }
static inline u8 *aq_group_memory(void) { return (u8 *)aq_self.group->group_memory; }
static inline u64 aq_steady_counter(void) { return aq_self.group->steady_counter(); }
static inline void aq_store_release_system_u32(u32 *target, u32 value) {
  __atomic_store_n(target, value, __ATOMIC_RELEASE);
}
static inline u64 aq_fetch_add_system_u64(u64 *target, u64 value) {
  return __atomic_fetch_add(target, value, __ATOMIC_ACQ_REL);
}
static inline u64 aq_load_acquire_system_u64(const u64 *source) {
  return __atomic_load_n(source, __ATOMIC_ACQUIRE);
}
static inline void aq_ring_doorbell(u64 doorbell_signal, u64 packet_id) {
  aq_self.group->ring_doorbell(doorbell_signal, packet_id);
}

// Starts a workgroup: no work-item is current until the first aq_host_next().
static inline void aq_host_begin(const aq_workgroup *group) {
  aq_self.group = group;
  for (int axis = 0; axis < 3; ++axis) {
    const u64 start = (u64)group->workgroup_id[axis] * group->workgroup_size[axis];
    const u64 left = group->grid_size[axis] > start ? group->grid_size[axis] - start : 0;
    aq_self.active[axis] = (u32)(left < group->workgroup_size[axis] ? left : group->workgroup_size[axis]);
    aq_self.item[axis] = 0;
  }
  aq_self.started = 0;
}

// Makes the next work-item current (x fastest); 0 once every one has run.
static inline int aq_host_next(void) {
  if (!aq_self.started) {
    aq_self.started = 1;
    return aq_self.active[0] && aq_self.active[1] && aq_self.active[2];
  }
  if (++aq_self.item[0] < aq_self.active[0])
    return 1;
  aq_self.item[0] = 0;
  if (++aq_self.item[1] < aq_self.active[1])
    return 1;
  aq_self.item[1] = 0;
  return ++aq_self.item[2] < aq_self.active[2];
}

// The host entry of `kernel`: copies its arguments out of the kernarg segment (any alignment)
// into `args_type`, whose fields are the kernel's parameters in order, then runs every
// work-item of the workgroup with the call written in `...` (which names the fields `args.x`).
#define AQ_HOST_ENTRY(kernel, args_type, ...)                                                      \
  static void aq_host_##kernel(const aq_workgroup *aq_group) {                                     \
    args_type args;                                                                                \
    __builtin_memcpy(&args, aq_group->kernarg, sizeof args);                                       \
    for (aq_host_begin(aq_group); aq_host_next();)                                                 \
      kernel(__VA_ARGS__);                                                                         \
  }

// The host entry of a kernel without parameters.
#define AQ_HOST_ENTRY_NO_ARGS(kernel)                                                              \
  static void aq_host_##kernel(const aq_workgroup *aq_group) {                                     \
    for (aq_host_begin(aq_group); aq_host_next();)                                                 \
      kernel();                                                                                    \
  }

// One entry of an argument layout: a field of an argument struct. `flags` is 0 for plain
// bytes, AQ_ARG_POINTER for a device address, AQ_ARG_POINTER | AQ_ARG_NULLABLE for an address
// the kernel itself tests for null.
#define AQ_ARG(args_type, field, flags)                                                            \
  { #field, offsetof(args_type, field), sizeof(((args_type *)0)->field), (flags) }

// A table entry: the kernel's symbol, host entry, argument layout and argument struct size.
#define AQ_HOST_KERNEL(kernel, args_type, layout)                                                  \
  { #kernel ".kd", aq_host_##kernel, layout, sizeof(layout) / sizeof((layout)[0]), sizeof(args_type) }
#define AQ_HOST_KERNEL_NO_ARGS(kernel) { #kernel ".kd", aq_host_##kernel, 0, 0, 0 }

// The translation unit's table, read by the Rust side (`HostBuild::from_table`):
// `const aq_host_kernel *name(u32 *count)`.
#define AQ_HOST_TABLE(name, ...)                                                                   \
  static const aq_host_kernel name##_records[] = {__VA_ARGS__};                                    \
  const aq_host_kernel *name(u32 *count) {                                                         \
    *count = sizeof(name##_records) / sizeof(name##_records[0]);                                   \
    return name##_records;                                                                         \
  }

#endif // __AMDGPU__

// Sizes come from the dispatch packet on both targets, so kernels need no hidden arguments.
static inline u32 aq_workgroup_size_x(void) { return aq_dispatch()->workgroup_size_x; }
static inline u32 aq_workgroup_size_y(void) { return aq_dispatch()->workgroup_size_y; }
static inline u32 aq_workgroup_size_z(void) { return aq_dispatch()->workgroup_size_z; }
static inline u32 aq_grid_size_x(void) { return aq_dispatch()->grid_size_x; }
static inline u32 aq_grid_size_y(void) { return aq_dispatch()->grid_size_y; }
static inline u32 aq_grid_size_z(void) { return aq_dispatch()->grid_size_z; }

// This work-item's index in the grid along x (a full workgroup's size times its id, plus the
// work-item id; the last workgroup may be partial).
static inline u64 aq_global_id_x(void) {
  return (u64)aq_workgroup_id_x() * aq_workgroup_size_x() + aq_workitem_id_x();
}

#endif // AQUEDUCT_KERNEL_H
