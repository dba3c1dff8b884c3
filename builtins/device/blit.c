// The aqueduct device library: fill, copy, inline update, timestamp and indirect-dispatch patch
// kernels.
//
// Written once, compiled for every target in targets.txt by regen.sh. Each kernel has a CPU twin
// in src/cpu.rs that reads the same kernarg layout (src/layout.rs); a test checks both against the
// metadata of every prebuilt code object.
//
// Conventions shared by every kernel:
// - Arguments are plain scalars (and one by-value payload), so the metadata lists each field with
//   its own offset and size. No kernel reads its own hidden arguments: sizes come from the dispatch
//   packet, so the host never has to fill implicit kernargs. (patch_indirect *writes* another
//   dispatch's hidden arguments through a pointer argument; that is ordinary global memory.)
// - One-dimensional grids with grid-stride loops: work-item i handles elements i, i + grid,
//   i + 2*grid, ... so a capped grid still covers any length.
// - `element_count` counts the kernel's own elements (bytes for *_x1, u16 for fill_x2, u32 for
//   *_x4, u64 for *_x8, 16-byte blocks for *_block_x16); copy_block_unaligned_x16 takes a byte
//   length and each work-item moves one 16-byte block (the last one may be partial).
// - Fill patterns arrive widened to 64 bits (the 1/2/4-byte pattern repeated), and byte k of the
//   filled range receives byte (k mod 8) of that word. Any element width that divides 8 can then
//   write any pattern width, so the host picks the widest element the alignment allows.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef u32 u32x4 __attribute__((ext_vector_type(4)));

#define KERNEL __attribute__((amdgpu_kernel, visibility("default")))
#define CONSTANT __attribute__((address_space(4)))

// hsa_kernel_dispatch_packet_t: workgroup_size_x is the u16 at byte 4, grid_size_x the u32 at 12.
static inline u32 workgroup_size_x(void) {
  return ((const CONSTANT u16 *)__builtin_amdgcn_dispatch_ptr())[2];
}

static inline u64 grid_stride(void) {
  return ((const CONSTANT u32 *)__builtin_amdgcn_dispatch_ptr())[3];
}

static inline u64 first_index(void) {
  return (u64)__builtin_amdgcn_workgroup_id_x() * workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
}

// ---- fill: {target, element_count, pattern64} -------------------------------------------------

KERNEL void fill_x1(u8 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u8)(pattern >> (8 * (i & 7)));
}

KERNEL void fill_x2(u16 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u16)(pattern >> (16 * (i & 3)));
}

KERNEL void fill_x4(u32 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u32)(pattern >> (32 * (i & 1)));
}

KERNEL void fill_x8(u64 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = pattern;
}

// target 16-byte aligned; element_count in 16-byte blocks.
KERNEL void fill_block_x16(u32x4 *target, u64 element_count, u64 pattern) {
  const u32 low = (u32)pattern, high = (u32)(pattern >> 32);
  const u32x4 block = {low, high, low, high};
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = block;
}

// ---- copy: {source, target, element_count}; ranges must not overlap ----------------------------

KERNEL void copy_x1(const u8 *source, u8 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

KERNEL void copy_block_x4(const u32 *source, u32 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

KERNEL void copy_block_x8(const u64 *source, u64 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

KERNEL void copy_block_x16(const u32x4 *source, u32x4 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

// Any alignment; element_count is in BYTES. Work-item i moves bytes [16i, 16i + 16) clipped to the
// length, so the tail needs no second dispatch.
KERNEL void copy_block_unaligned_x16(const u8 *source, u8 *target, u64 element_count) {
  const u64 blocks = (element_count + 15) / 16;
  for (u64 i = first_index(), stride = grid_stride(); i < blocks; i += stride) {
    const u64 offset = i * 16;
    if (offset + 16 <= element_count) {
      u32x4 block;
      __builtin_memcpy(&block, source + offset, 16);
      __builtin_memcpy(target + offset, &block, 16);
    } else {
      for (u64 k = offset; k < element_count; ++k)
        target[k] = source[k];
    }
  }
}

// ---- update: host bytes carried in the kernarg segment -----------------------------------------

#define UPDATE_INLINE_MAX_BYTES 192

typedef struct {
  u8 bytes[UPDATE_INLINE_MAX_BYTES];
} inline_payload;

// {target, byte_length (<= 192), reserved, payload}: byte i of the payload goes to target[i].
KERNEL void update_inline(u8 *target, u32 byte_length, u32 reserved, inline_payload payload) {
  (void)reserved;
  for (u64 i = first_index(), stride = grid_stride(); i < byte_length; i += stride)
    target[i] = payload.bytes[i];
}

// ---- timestamp ---------------------------------------------------------------------------------

// Writes the device's constant-rate counter (s_memrealtime / SHADER_CYCLES_REALTIME) once.
KERNEL void timestamp(u64 *target) {
  if (first_index() == 0)
    *target = __builtin_readsteadycounter();
}

// ---- patch_indirect: finish an indirect dispatch packet ----------------------------------------

// The clamp rule, identical in src/cpu.rs: a workgroup count whose grid (count * group) fits in
// u32 is kept; otherwise it becomes the largest count that fits, 0xFFFFFFFF / group. No error is
// raised. A zero workgroup size never overflows (grid 0, count kept), so there is no division by 0.
static inline u32 effective_count(u32 count, u32 group) {
  return (u64)count * group > 0xFFFFFFFFu ? 0xFFFFFFFFu / group : count;
}

// {packet, counts, implicit_args, header, reserved}. `packet` is a 64-byte-aligned
// hsa_kernel_dispatch_packet_t whose header word (bytes 0..4) is still INVALID and whose
// workgroup_size_{x,y,z} (u16 at bytes 4, 6, 8) are written. Per axis it stores
// grid_size = effective_count(counts[axis], workgroup_size) (u32 at bytes 12, 16, 20); if
// implicit_args is not null it stores the effective counts as hidden_block_count_{x,y,z} (u32 at
// +0, +4, +8) and zero hidden_remainder_{x,y,z} (u16 at +18, +20, +22; the grid is an exact
// multiple). Last, `header` (header | setup << 16) goes to bytes 0..4 with a release store at
// system scope, which makes the other writes visible to the packet processor before the packet is
// valid. Only work-item 0 of workgroup 0 acts, whatever the grid.
KERNEL void patch_indirect(u32 *packet, const u32 *counts, u32 *implicit_args, u32 header,
                           u32 reserved) {
  (void)reserved;
  if (__builtin_amdgcn_workgroup_id_x() | __builtin_amdgcn_workgroup_id_y() |
      __builtin_amdgcn_workgroup_id_z() | __builtin_amdgcn_workitem_id_x() |
      __builtin_amdgcn_workitem_id_y() | __builtin_amdgcn_workitem_id_z())
    return;
  const u16 *workgroup_size = (const u16 *)packet + 2; // bytes 4, 6, 8
  u32 *grid_size = packet + 3;                          // bytes 12, 16, 20
  u32 blocks[3];
  for (int axis = 0; axis < 3; ++axis) {
    const u32 group = workgroup_size[axis];
    blocks[axis] = effective_count(counts[axis], group);
    grid_size[axis] = blocks[axis] * group;
  }
  if (implicit_args) {
    u16 *remainder = (u16 *)implicit_args + 9; // bytes 18, 20, 22
    for (int axis = 0; axis < 3; ++axis) {
      implicit_args[axis] = blocks[axis];
      remainder[axis] = 0;
    }
  }
  __scoped_atomic_store_n(packet, header, __ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
}
