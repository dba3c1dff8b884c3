// The aqueduct device library: fill, copy, inline update, timestamp and indirect-dispatch patch
// kernels, and the block processor (block_processor.h).
//
// Written once against the work-item shim (aqueduct_kernel.h) and compiled twice: for every target
// in targets.txt by regen.sh (the checked-in code objects), and for the host by build.rs (what the
// soft HSA runtime runs). The host entries and their argument layouts are at the end of the file;
// the soft runtime checks each layout against the code object's metadata before binding it, and a
// test runs every kernel through the soft runtime against a Rust reference.
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

#include "aqueduct_kernel.h"

static inline u64 grid_stride(void) { return aq_grid_size_x(); }

static inline u64 first_index(void) { return aq_global_id_x(); }

// ---- fill: {target, element_count, pattern64} -------------------------------------------------

AQ_KERNEL void fill_x1(u8 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u8)(pattern >> (8 * (i & 7)));
}

AQ_KERNEL void fill_x2(u16 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u16)(pattern >> (16 * (i & 3)));
}

AQ_KERNEL void fill_x4(u32 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = (u32)(pattern >> (32 * (i & 1)));
}

AQ_KERNEL void fill_x8(u64 *target, u64 element_count, u64 pattern) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = pattern;
}

// target 16-byte aligned; element_count in 16-byte blocks.
AQ_KERNEL void fill_block_x16(u32x4 *target, u64 element_count, u64 pattern) {
  const u32 low = (u32)pattern, high = (u32)(pattern >> 32);
  const u32x4 block = {low, high, low, high};
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = block;
}

// ---- copy: {source, target, element_count}; ranges must not overlap ----------------------------

AQ_KERNEL void copy_x1(const u8 *source, u8 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

AQ_KERNEL void copy_block_x4(const u32 *source, u32 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

AQ_KERNEL void copy_block_x8(const u64 *source, u64 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

AQ_KERNEL void copy_block_x16(const u32x4 *source, u32x4 *target, u64 element_count) {
  for (u64 i = first_index(), stride = grid_stride(); i < element_count; i += stride)
    target[i] = source[i];
}

// Any alignment; element_count is in BYTES. Work-item i moves bytes [16i, 16i + 16) clipped to the
// length, so the tail needs no second dispatch.
AQ_KERNEL void copy_block_unaligned_x16(const u8 *source, u8 *target, u64 element_count) {
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
AQ_KERNEL void update_inline(u8 *target, u32 byte_length, u32 reserved, inline_payload payload) {
  (void)reserved;
  // A longer length would read past the payload (past the kernarg segment): clamp instead.
  if (byte_length > UPDATE_INLINE_MAX_BYTES)
    byte_length = UPDATE_INLINE_MAX_BYTES;
  for (u64 i = first_index(), stride = grid_stride(); i < byte_length; i += stride)
    target[i] = payload.bytes[i];
}

// ---- timestamp ---------------------------------------------------------------------------------

// Writes the device's constant-rate counter (s_memrealtime / SHADER_CYCLES_REALTIME) once.
AQ_KERNEL void timestamp(u64 *target) {
  if (first_index() == 0)
    *target = aq_steady_counter();
}

// ---- patch_indirect: finish an indirect dispatch packet ----------------------------------------

// The clamp rule: a workgroup count whose grid (count * group) fits in
// u32 is kept; otherwise it becomes the largest count that fits, 0xFFFFFFFF / group. No error is
// raised. A zero workgroup size never overflows (grid 0, count kept), so there is no division by 0.
//
// The divisor passes through `opaque_u32`: clang-19 turns `0xFFFFFFFFu / group`, with `group` known
// to fit 16 bits, into its 24-bit float division masked to 16 bits, so 0xFFFFFFFF / 2 came out 0
// instead of 0x7FFFFFFF on every GPU target (found by running this code object's gfx1100 machine
// code through the soft runtime's interpreter; the host build was right). Hiding the range keeps
// the exact 32-bit expansion.
static inline u32 opaque_u32(u32 value) {
#ifdef __AMDGPU__
  __asm__("" : "+v"(value));
#endif
  return value;
}

static inline u32 effective_count(u32 count, u32 group) {
  return (u64)count * group > 0xFFFFFFFFu ? 0xFFFFFFFFu / opaque_u32(group) : count;
}

// {packet, counts, implicit_args (nullable), header, reserved}. `packet` is a 64-byte-aligned
// hsa_kernel_dispatch_packet_t whose header word (bytes 0..4) is still INVALID and whose
// workgroup_size_{x,y,z} (u16 at bytes 4, 6, 8) are written. Per axis it stores
// grid_size = effective_count(counts[axis], workgroup_size) (u32 at bytes 12, 16, 20); if
// implicit_args is not null it stores the effective counts as hidden_block_count_{x,y,z} (u32 at
// +0, +4, +8) and zero hidden_remainder_{x,y,z} (u16 at +18, +20, +22; the grid is an exact
// multiple). Last, `header` (header | setup << 16) goes to bytes 0..4 with a release store at
// system scope, which makes the other writes visible to the packet processor before the packet is
// valid. Only work-item 0 of workgroup 0 acts, whatever the grid.
AQ_KERNEL void patch_indirect(u32 *packet, const u32 *counts, u32 *implicit_args, u32 header,
                           u32 reserved) {
  (void)reserved;
  if (aq_workgroup_id_x() | aq_workgroup_id_y() | aq_workgroup_id_z() | aq_workitem_id_x() |
      aq_workitem_id_y() | aq_workitem_id_z())
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
  aq_store_release_system_u32(packet, header);
}

// ---- block_processor: device-side enqueue of a command-buffer execution ------------------------

#include "block_processor.h"

// ---- host entries -------------------------------------------------------------------------------
// One argument struct per parameter list (fields are the parameters, in order), one entry per
// kernel, and the table the soft runtime registers for every embedded code object.

#ifndef __AMDGPU__

typedef struct {
  void *target;
  u64 element_count;
  u64 pattern;
} fill_args;
static const aq_host_arg fill_layout[] = {
    AQ_ARG(fill_args, target, AQ_ARG_POINTER),
    AQ_ARG(fill_args, element_count, 0),
    AQ_ARG(fill_args, pattern, 0),
};
AQ_HOST_ENTRY(fill_x1, fill_args, args.target, args.element_count, args.pattern)
AQ_HOST_ENTRY(fill_x2, fill_args, args.target, args.element_count, args.pattern)
AQ_HOST_ENTRY(fill_x4, fill_args, args.target, args.element_count, args.pattern)
AQ_HOST_ENTRY(fill_x8, fill_args, args.target, args.element_count, args.pattern)
AQ_HOST_ENTRY(fill_block_x16, fill_args, args.target, args.element_count, args.pattern)

typedef struct {
  const void *source;
  void *target;
  u64 element_count;
} copy_args;
static const aq_host_arg copy_layout[] = {
    AQ_ARG(copy_args, source, AQ_ARG_POINTER),
    AQ_ARG(copy_args, target, AQ_ARG_POINTER),
    AQ_ARG(copy_args, element_count, 0),
};
AQ_HOST_ENTRY(copy_x1, copy_args, args.source, args.target, args.element_count)
AQ_HOST_ENTRY(copy_block_x4, copy_args, args.source, args.target, args.element_count)
AQ_HOST_ENTRY(copy_block_x8, copy_args, args.source, args.target, args.element_count)
AQ_HOST_ENTRY(copy_block_x16, copy_args, args.source, args.target, args.element_count)
AQ_HOST_ENTRY(copy_block_unaligned_x16, copy_args, args.source, args.target, args.element_count)

typedef struct {
  u8 *target;
  u32 byte_length;
  u32 reserved;
  inline_payload payload;
} update_inline_args;
static const aq_host_arg update_inline_layout[] = {
    AQ_ARG(update_inline_args, target, AQ_ARG_POINTER),
    AQ_ARG(update_inline_args, byte_length, 0),
    AQ_ARG(update_inline_args, reserved, 0),
    AQ_ARG(update_inline_args, payload, 0),
};
AQ_HOST_ENTRY(update_inline, update_inline_args, args.target, args.byte_length, args.reserved,
              args.payload)

typedef struct {
  u64 *target;
} timestamp_args;
static const aq_host_arg timestamp_layout[] = {AQ_ARG(timestamp_args, target, AQ_ARG_POINTER)};
AQ_HOST_ENTRY(timestamp, timestamp_args, args.target)

typedef struct {
  u32 *packet;
  const u32 *counts;
  u32 *implicit_args;
  u32 header;
  u32 reserved;
} patch_indirect_args;
static const aq_host_arg patch_indirect_layout[] = {
    AQ_ARG(patch_indirect_args, packet, AQ_ARG_POINTER),
    AQ_ARG(patch_indirect_args, counts, AQ_ARG_POINTER),
    AQ_ARG(patch_indirect_args, implicit_args, AQ_ARG_POINTER | AQ_ARG_NULLABLE),
    AQ_ARG(patch_indirect_args, header, 0),
    AQ_ARG(patch_indirect_args, reserved, 0),
};
AQ_HOST_ENTRY(patch_indirect, patch_indirect_args, args.packet, args.counts, args.implicit_args,
              args.header, args.reserved)

static const aq_host_arg block_processor_layout[] = {
    AQ_ARG(aq_processor_args, program, AQ_ARG_POINTER),
    AQ_ARG(aq_processor_args, bindings, AQ_ARG_POINTER | AQ_ARG_NULLABLE),
    AQ_ARG(aq_processor_args, queue, AQ_ARG_POINTER),
    AQ_ARG(aq_processor_args, state, AQ_ARG_POINTER),
    AQ_ARG(aq_processor_args, status, AQ_ARG_POINTER),
    AQ_ARG(aq_processor_args, done_signal, 0),
    AQ_ARG(aq_processor_args, kernarg_capacity, 0),
    AQ_ARG(aq_processor_args, timing, AQ_ARG_POINTER | AQ_ARG_NULLABLE),
    AQ_ARG(aq_processor_args, block, 0),
    AQ_ARG(aq_processor_args, evaluate, 0),
    AQ_ARG(aq_processor_args, blocks_left, 0),
    AQ_ARG(aq_processor_args, binding_count, 0),
    AQ_ARG(aq_processor_args, step, 0),
    AQ_ARG(aq_processor_args, reserved, 0),
};
AQ_HOST_ENTRY(block_processor, aq_processor_args, args.program, args.bindings, args.queue, args.state,
              args.status, args.done_signal, args.kernarg_capacity, args.timing, args.block, args.evaluate,
              args.blocks_left, args.binding_count, args.step, args.reserved)

AQ_HOST_TABLE(aq_blit_kernels,
              AQ_HOST_KERNEL(fill_x1, fill_args, fill_layout),
              AQ_HOST_KERNEL(fill_x2, fill_args, fill_layout),
              AQ_HOST_KERNEL(fill_x4, fill_args, fill_layout),
              AQ_HOST_KERNEL(fill_x8, fill_args, fill_layout),
              AQ_HOST_KERNEL(fill_block_x16, fill_args, fill_layout),
              AQ_HOST_KERNEL(copy_x1, copy_args, copy_layout),
              AQ_HOST_KERNEL(copy_block_x4, copy_args, copy_layout),
              AQ_HOST_KERNEL(copy_block_x8, copy_args, copy_layout),
              AQ_HOST_KERNEL(copy_block_x16, copy_args, copy_layout),
              AQ_HOST_KERNEL(copy_block_unaligned_x16, copy_args, copy_layout),
              AQ_HOST_KERNEL(update_inline, update_inline_args, update_inline_layout),
              AQ_HOST_KERNEL(timestamp, timestamp_args, timestamp_layout),
              AQ_HOST_KERNEL(patch_indirect, patch_indirect_args, patch_indirect_layout),
              AQ_HOST_KERNEL(block_processor, aq_processor_args, block_processor_layout))

#endif // !__AMDGPU__
