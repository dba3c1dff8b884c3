// The block processor: runs a command-buffer execution on the device by enqueueing its packets
// itself (device-side enqueue), so the host's cost per execution is one dispatch and its binding
// table, whatever the program's size. Included by blit.c (one translation unit, one host table).
//
// The records are abi/src/device_program.rs's, field for field (offsets asserted below). One
// dispatch of this kernel is one *step* of an execution:
// 1. If the step starts at a conditional branch, it reads the branch's value (the block that
//    wrote it has completed: a step runs behind a barrier) and picks the next block.
// 2. It walks blocks from there, following fallthroughs and branches, while their packets fit the
//    target ring (less two slots) and their kernargs fit the kernarg area, checking every block
//    ordinal, binding slot and the block budget before it reserves anything.
// 3. It reserves the packets by advancing the target queue's write index (one atomic add; after
//    waiting, with a bound, until the ring has the room, so no slot is overwritten), copies and
//    patches each template's kernargs, writes the bodies, then the headers in order with
//    release stores, and rings the doorbell once.
// 4. The step's last packet is either a continuation (this kernel again, with the barrier bit, so
//    it runs once everything before it completed: a conditional branch's value is then final,
//    and the kernarg area is free to reuse) or, after a return, a BARRIER_AND with the barrier
//    bit that completes the execution's done signal.
// A failure (a bad image, a block or slot out of range, the block budget spent, a block too
// large for the target) is written to the execution's status record with the block and command,
// and the done barrier is enqueued alone: the host reads the status when the execution retires
// and fails its signals with it. Only work-item 0 of workgroup 0 acts.

typedef struct aq_device_program {
  u32 magic, version, block_count, packet_count, patch_count, binding_slot_count;
  u32 blocks_offset, packets_offset, patches_offset, templates_offset, total_length;
  u32 max_block_packets, max_block_kernarg_bytes, reserved[3];
} aq_device_program;
_Static_assert(sizeof(aq_device_program) == 64 && __builtin_offsetof(aq_device_program, blocks_offset) == 24 &&
                   __builtin_offsetof(aq_device_program, templates_offset) == 36,
               "aq_device_program must match DeviceProgramHeader");

typedef struct aq_device_block {
  u32 first_packet, packet_count, kernarg_bytes;
  u8 terminator, cond_width, cond_compare, cond_source_kind;
  u32 next_block, not_taken_block, cond_slot, first_command;
  u64 cond_value, cond_operand, reserved[2];
} aq_device_block;
_Static_assert(sizeof(aq_device_block) == 64 && __builtin_offsetof(aq_device_block, terminator) == 12 &&
                   __builtin_offsetof(aq_device_block, cond_slot) == 24 && __builtin_offsetof(aq_device_block, cond_value) == 32,
               "aq_device_block must match DeviceBlock");

typedef struct aq_device_packet {
  u32 body[16];
  u32 kind, kernarg_bytes, template_offset, first_patch, patch_count, command;
  u32 flags, target_implicit_offset;
  u64 reserved[4];
} aq_device_packet;
_Static_assert(sizeof(aq_device_packet) == 128 && __builtin_offsetof(aq_device_packet, kind) == 64 &&
                   __builtin_offsetof(aq_device_packet, command) == 84 &&
                   __builtin_offsetof(aq_device_packet, flags) == 88 &&
                   __builtin_offsetof(aq_device_packet, target_implicit_offset) == 92,
               "aq_device_packet must match DevicePacket");
// Packet flags: the header is stored by the patch_indirect packet before it; a patch_indirect
// packet whose target is the next packet (kernarg 0: its slot, 16: its implicit arguments).
#define AQ_PACKET_HEADER_LEFT_TO_DEVICE 1u
#define AQ_PACKET_PATCHES_NEXT 2u
#define AQ_NO_TARGET_IMPLICIT_ARGS 0xFFFFFFFFu

typedef struct aq_device_patch {
  u32 kernarg_offset, slot;
  u64 offset;
} aq_device_patch;
_Static_assert(sizeof(aq_device_patch) == 16, "aq_device_patch must match DevicePatch");

// ProcessorArgs: the kernel's parameters in order, and what a continuation's kernargs hold.
typedef struct aq_processor_args {
  const u8 *program;
  const u64 *bindings;
  u8 *queue;
  u8 *state;
  u32 *status;
  u64 done_signal;
  u64 kernarg_capacity;
  u32 *timing;
  u32 block, evaluate, blocks_left, binding_count, step, reserved;
} aq_processor_args;
_Static_assert(sizeof(aq_processor_args) == 88 && __builtin_offsetof(aq_processor_args, timing) == 56 &&
                   __builtin_offsetof(aq_processor_args, block) == 64 &&
                   __builtin_offsetof(aq_processor_args, step) == 80,
               "aq_processor_args must match ProcessorArgs");

#define AQ_PACKET_KERNEL_DISPATCH_TYPE 2u

// TimingTable: {capacity, used, untimed, reserved}, then capacity u64 signals, then capacity u32
// log entries (the device-program packet index each signal timed).
static inline void aq_time_packet(u32 *timing, u32 *slot, u32 header, u32 packet_index) {
  if (!timing || (header & 0xFFu) != AQ_PACKET_KERNEL_DISPATCH_TYPE)
    return;
  const u32 capacity = timing[0], used = timing[1];
  if (used >= capacity) {
    timing[2] += 1;
    return;
  }
  const u8 *signals = (const u8 *)(timing + 4);
  u32 *log = (u32 *)(signals + 8 * (u64)capacity);
  __builtin_memcpy(slot + 14, signals + 8 * (u64)used, 8); // completion_signal, bytes 56..64
  log[used] = packet_index;
  timing[1] = used + 1;
}

#define AQ_DP_MAGIC 0x50445141u // "AQDP"
#define AQ_DP_VERSION 1u
#define AQ_TERMINATOR_RETURN 0
#define AQ_TERMINATOR_NEXT 1
#define AQ_TERMINATOR_COND 2
#define AQ_PACKET_TEMPLATE 1u
#define AQ_STATE_SLOT_BYTES 128u
#define AQ_STATE_RESERVED_BYTES 256u
#define AQ_FAIL_BAD_IMAGE 1u
#define AQ_FAIL_MISSING_BLOCK 2u
#define AQ_FAIL_UNRESOLVED_BINDING 3u
#define AQ_FAIL_BLOCK_LIMIT 4u
#define AQ_FAIL_TOO_LARGE 5u
#define AQ_FAIL_RING_FULL 6u
#define AQ_NO_COMMAND 0xFFFFFFFFu
// How many times the processor reads the read index while it waits for room.
#define AQ_RING_WAIT_READS (1u << 24)

// hsa_queue_t / amd_queue_t offsets (abi/src/queue.rs).
#define AQ_QUEUE_BASE_ADDRESS 8
#define AQ_QUEUE_DOORBELL_SIGNAL 16
#define AQ_QUEUE_SIZE 24
#define AQ_QUEUE_WRITE_DISPATCH_ID 56
#define AQ_QUEUE_READ_DISPATCH_ID 128

// AQL header bits (hsa.h): type at 0, barrier at 8, acquire scope at 9, release scope at 11.
#define AQ_PACKET_KERNEL_DISPATCH 2u
#define AQ_PACKET_BARRIER_AND 3u
#define AQ_HEADER_BARRIER (1u << 8)
#define AQ_HEADER_ACQUIRE_SYSTEM (2u << 9)
#define AQ_HEADER_RELEASE_SYSTEM (2u << 11)
#define AQ_HEADER_SCOPES (15u << 9)

static inline u64 aq_read_u64(const u8 *at) {
  u64 value;
  __builtin_memcpy(&value, at, 8);
  return value;
}

// CompareOp (abi/src/block_program/command.rs): Eq, Ne, Lt, Le, Gt, Ge on unsigned values.
static inline int aq_compare(u32 op, u64 value, u64 operand) {
  switch (op) {
  case 0: return value == operand;
  case 1: return value != operand;
  case 2: return value < operand;
  case 3: return value <= operand;
  case 4: return value > operand;
  case 5: return value >= operand;
  default: return -1;
  }
}

typedef struct aq_step_plan {
  u32 packets, kernarg_bytes, blocks, end_block, end; // end: 0 return, 1 continue at, 2 evaluate at
  u32 failure, fail_block, fail_command, fail_detail;
} aq_step_plan;

static inline void aq_fail(aq_step_plan *plan, u32 code, u32 block, u32 command, u32 detail) {
  plan->failure = code;
  plan->fail_block = block;
  plan->fail_command = command;
  plan->fail_detail = detail;
}

// Step 2: walks from `block`, checking everything the writes will rely on.
static void aq_plan_step(const aq_processor_args *args, const aq_device_program *program, u32 block,
                         u32 room, aq_step_plan *plan) {
  const aq_device_block *blocks = (const aq_device_block *)(args->program + program->blocks_offset);
  const aq_device_packet *packets = (const aq_device_packet *)(args->program + program->packets_offset);
  const aq_device_patch *patches = (const aq_device_patch *)(args->program + program->patches_offset);
  u32 left = args->blocks_left;
  for (;;) {
    if (block >= program->block_count) {
      aq_fail(plan, AQ_FAIL_MISSING_BLOCK, block, AQ_NO_COMMAND, program->block_count);
      return;
    }
    const aq_device_block *at = &blocks[block];
    if (at->packet_count > room || at->kernarg_bytes > args->kernarg_capacity) {
      if (plan->blocks == 0) {
        aq_fail(plan, AQ_FAIL_TOO_LARGE, block, at->first_command, at->packet_count);
        return;
      }
    }
    if (plan->packets + at->packet_count > room ||
        (u64)plan->kernarg_bytes + at->kernarg_bytes > args->kernarg_capacity) {
      plan->end = 1;
      plan->end_block = block;
      return;
    }
    if (left == 0) {
      aq_fail(plan, AQ_FAIL_BLOCK_LIMIT, block, AQ_NO_COMMAND, args->blocks_left);
      return;
    }
    for (u32 p = 0; p < at->packet_count; ++p) {
      const aq_device_packet *packet = &packets[at->first_packet + p];
      for (u32 q = 0; q < packet->patch_count; ++q) {
        const u32 slot = patches[packet->first_patch + q].slot;
        if (slot >= args->binding_count) {
          aq_fail(plan, AQ_FAIL_UNRESOLVED_BINDING, block, packet->command, slot);
          return;
        }
      }
    }
    if (at->terminator == AQ_TERMINATOR_COND && at->cond_source_kind == 1 && at->cond_slot >= args->binding_count) {
      aq_fail(plan, AQ_FAIL_UNRESOLVED_BINDING, block, AQ_NO_COMMAND, at->cond_slot);
      return;
    }
    left -= 1;
    plan->blocks += 1;
    plan->packets += at->packet_count;
    plan->kernarg_bytes += at->kernarg_bytes;
    if (at->terminator == AQ_TERMINATOR_RETURN) {
      plan->end = 0;
      return;
    }
    if (at->terminator == AQ_TERMINATOR_COND) {
      plan->end = 2;
      plan->end_block = block;
      return;
    }
    block = at->next_block;
  }
}

// The packet slot `id` of the target ring.
static inline u32 *aq_slot(u8 *queue, u64 id) {
  u8 *base = (u8 *)aq_read_u64(queue + AQ_QUEUE_BASE_ADDRESS);
  const u32 size = *(const u32 *)(queue + AQ_QUEUE_SIZE);
  return (u32 *)(base + (id & (size - 1)) * 64);
}

// Waits until `count` slots from the write index are free, then takes them; ~0 when the ring
// stayed full. The processor is the target queue's only producer, so nothing moves the write
// index between the wait and the add.
static u64 aq_reserve(u8 *queue, u32 count) {
  u64 *write = (u64 *)(queue + AQ_QUEUE_WRITE_DISPATCH_ID);
  const u64 *read = (const u64 *)(queue + AQ_QUEUE_READ_DISPATCH_ID);
  const u64 size = *(const u32 *)(queue + AQ_QUEUE_SIZE);
  const u64 next = aq_load_acquire_system_u64(write);
  for (u32 reads = 0; next + count - aq_load_acquire_system_u64(read) > size; ++reads) {
    if (reads == AQ_RING_WAIT_READS)
      return ~0ull;
  }
  return aq_fetch_add_system_u64(write, count);
}

// The done barrier at `id`: the execution's last packet.
static void aq_write_done(u8 *queue, u64 id, u64 done_signal) {
  u32 *slot = aq_slot(queue, id);
  for (int word = 1; word < 16; ++word)
    slot[word] = 0;
  slot[14] = (u32)done_signal;
  slot[15] = (u32)(done_signal >> 32);
}

static const u32 aq_done_header =
    AQ_PACKET_BARRIER_AND | AQ_HEADER_BARRIER | AQ_HEADER_ACQUIRE_SYSTEM | AQ_HEADER_RELEASE_SYSTEM;

// A failed step: the status record, then the done barrier alone.
static void aq_stop(const aq_processor_args *args, const aq_step_plan *plan) {
  args->status[1] = plan->fail_block;
  args->status[2] = plan->fail_command;
  args->status[3] = plan->fail_detail;
  aq_store_release_system_u32(args->status, plan->failure);
  const u64 id = aq_reserve(args->queue, 1);
  if (id == ~0ull)
    return; // nowhere to write even the done barrier; the host's wait times out
  aq_write_done(args->queue, id, args->done_signal);
  aq_store_release_system_u32(aq_slot(args->queue, id), aq_done_header);
  aq_ring_doorbell(aq_read_u64(args->queue + AQ_QUEUE_DOORBELL_SIGNAL), id);
}

static void aq_process(const aq_processor_args *args) {
  const aq_device_program *program = (const aq_device_program *)args->program;
  aq_step_plan plan = {0};
  if (program->magic != AQ_DP_MAGIC || program->version != AQ_DP_VERSION) {
    aq_fail(&plan, AQ_FAIL_BAD_IMAGE, args->block, AQ_NO_COMMAND, program->magic);
    aq_stop(args, &plan);
    return;
  }
  const aq_device_block *blocks = (const aq_device_block *)(args->program + program->blocks_offset);
  u32 block = args->block;
  // Step 1: the branch this step starts at.
  if (args->evaluate) {
    if (block >= program->block_count) {
      aq_fail(&plan, AQ_FAIL_MISSING_BLOCK, block, AQ_NO_COMMAND, program->block_count);
      aq_stop(args, &plan);
      return;
    }
    const aq_device_block *at = &blocks[block];
    const u64 address = at->cond_source_kind == 1 ? args->bindings[at->cond_slot] + at->cond_value : at->cond_value;
    const u64 value = at->cond_width == 8 ? *(volatile const u64 *)address : *(volatile const u32 *)address;
    const int taken = aq_compare(at->cond_compare, value, at->cond_operand);
    if (taken < 0) {
      aq_fail(&plan, AQ_FAIL_BAD_IMAGE, block, AQ_NO_COMMAND, at->cond_compare);
      aq_stop(args, &plan);
      return;
    }
    block = taken ? at->next_block : at->not_taken_block;
  }
  // Step 2, leaving two slots: the continuation or the done barrier, and room to spare.
  const u32 size = *(const u32 *)(args->queue + AQ_QUEUE_SIZE);
  aq_plan_step(args, program, block, size - 2, &plan);
  if (plan.failure) {
    aq_stop(args, &plan);
    return;
  }
  // Step 3.
  const u32 total = plan.packets + 1;
  const u64 first = aq_reserve(args->queue, total);
  if (first == ~0ull) {
    aq_fail(&plan, AQ_FAIL_RING_FULL, block, AQ_NO_COMMAND, total);
    aq_stop(args, &plan);
    return;
  }
  const aq_device_packet *packets = (const aq_device_packet *)(args->program + program->packets_offset);
  const aq_device_patch *patches = (const aq_device_patch *)(args->program + program->patches_offset);
  u8 *kernargs = args->state + AQ_STATE_RESERVED_BYTES;
  u64 id = first;
  u32 cursor = block;
  for (u32 walked = 0; walked < plan.blocks; ++walked) {
    const aq_device_block *at = &blocks[cursor];
    for (u32 p = 0; p < at->packet_count; ++p, ++id) {
      const aq_device_packet *packet = &packets[at->first_packet + p];
      u32 *slot = aq_slot(args->queue, id);
      for (int word = 1; word < 16; ++word)
        slot[word] = packet->body[word];
      if (packet->kind == AQ_PACKET_TEMPLATE) {
        __builtin_memcpy(kernargs, args->program + packet->template_offset, packet->kernarg_bytes);
        for (u32 q = 0; q < packet->patch_count; ++q) {
          const aq_device_patch *patch = &patches[packet->first_patch + q];
          const u64 pointer = args->bindings[patch->slot] + patch->offset;
          __builtin_memcpy(kernargs + patch->kernarg_offset, &pointer, 8);
        }
        slot[10] = (u32)(u64)kernargs; // kernarg_address, bytes 40..48
        slot[11] = (u32)((u64)kernargs >> 32);
        u8 *next_kernargs = kernargs + ((packet->kernarg_bytes + 63u) & ~63u);
        if (packet->flags & AQ_PACKET_PATCHES_NEXT) {
          // An indirect dispatch's patch: its target is the next slot, whose kernargs come next.
          const u64 target = (u64)aq_slot(args->queue, id + 1);
          const u64 implicit = packet->target_implicit_offset == AQ_NO_TARGET_IMPLICIT_ARGS
                                   ? 0
                                   : (u64)next_kernargs + packet->target_implicit_offset;
          __builtin_memcpy(kernargs, &target, 8);
          __builtin_memcpy(kernargs + 16, &implicit, 8);
        }
        kernargs = next_kernargs;
      }
      aq_time_packet(args->timing, slot, packet->body[0], at->first_packet + p);
    }
    if (at->terminator != AQ_TERMINATOR_NEXT)
      break;
    cursor = at->next_block;
  }
  // Step 4: the tail packet.
  u32 tail_header;
  if (plan.end == 0) {
    aq_write_done(args->queue, id, args->done_signal);
    tail_header = aq_done_header;
  } else {
    aq_processor_args *next = (aq_processor_args *)(args->state + ((args->step + 1) & 1) * AQ_STATE_SLOT_BYTES);
    *next = *args;
    next->block = plan.end_block;
    next->evaluate = plan.end == 2;
    next->blocks_left = args->blocks_left - plan.blocks;
    next->step = args->step + 1;
    // This dispatch's own packet, re-aimed at the next step's arguments.
    const AQ_CONSTANT u32 *self = (const AQ_CONSTANT u32 *)aq_dispatch();
    u32 *slot = aq_slot(args->queue, id);
    for (int word = 1; word < 16; ++word)
      slot[word] = self[word];
    slot[10] = (u32)(u64)next;
    slot[11] = (u32)((u64)next >> 32);
    slot[14] = 0; // no completion signal
    slot[15] = 0;
    tail_header = (AQ_PACKET_KERNEL_DISPATCH | AQ_HEADER_BARRIER | AQ_HEADER_ACQUIRE_SYSTEM |
                   AQ_HEADER_RELEASE_SYSTEM) |
                  (self[0] & 0xFFFF0000u); // setup (dimensions)
  }
  // The headers in order, each with a release store; the step's first packet waits for what
  // came before and acquires the processor's writes.
  cursor = block;
  u64 at = first;
  for (u32 walked = 0; walked < plan.blocks; ++walked) {
    const aq_device_block *blk = &blocks[cursor];
    for (u32 p = 0; p < blk->packet_count; ++p, ++at) {
      if (packets[blk->first_packet + p].flags & AQ_PACKET_HEADER_LEFT_TO_DEVICE)
        continue; // its patch_indirect packet stores it
      u32 header = packets[blk->first_packet + p].body[0];
      if (at == first)
        header = (header & ~AQ_HEADER_SCOPES) | AQ_HEADER_BARRIER | AQ_HEADER_ACQUIRE_SYSTEM |
                 (header & (3u << 11));
      aq_store_release_system_u32(aq_slot(args->queue, at), header);
    }
    if (blk->terminator != AQ_TERMINATOR_NEXT)
      break;
    cursor = blk->next_block;
  }
  aq_store_release_system_u32(aq_slot(args->queue, id), tail_header);
  aq_ring_doorbell(aq_read_u64(args->queue + AQ_QUEUE_DOORBELL_SIGNAL), id);
}

// {program, bindings, queue, state, status, done_signal, kernarg_capacity, timing, block,
// evaluate, blocks_left, binding_count, step, reserved}: one step of an execution (see above).
AQ_KERNEL void block_processor(const u8 *program, const u64 *bindings, u8 *queue, u8 *state, u32 *status,
                               u64 done_signal, u64 kernarg_capacity, u32 *timing, u32 block,
                               u32 evaluate, u32 blocks_left, u32 binding_count, u32 step,
                               u32 reserved) {
  if (aq_workgroup_id_x() | aq_workgroup_id_y() | aq_workgroup_id_z() | aq_workitem_id_x() |
      aq_workitem_id_y() | aq_workitem_id_z())
    return;
  const aq_processor_args args = {program,     bindings,         queue,  state,    status,
                                  done_signal, kernarg_capacity, timing, block,    evaluate,
                                  blocks_left, binding_count,    step,   reserved};
  aq_process(&args);
}
