//! The device program: the form of a finished command buffer that the device library's
//! `block_processor` kernel reads when an execution is processed on the device
//! (`builtins/device/block_processor.h` holds the same records in C, with the same offsets
//! asserted there).
//!
//! ```text
//! program   DeviceProgramHeader (64 B)
//!           blocks     block_count × DeviceBlock (64 B), in ordinal order
//!           packets    packet_count × DevicePacket (128 B), each block's from its first_packet
//!           patches    patch_count × DevicePatch (16 B)
//!           templates  kernarg templates, each 64-byte aligned
//! ```
//!
//! Every packet is written as the host's block processor writes a baked or template step: the
//! body as finishing built it (header word included, recorded flags folded in), a template's
//! kernargs copied into the execution's kernarg area with each patch's binding written into the
//! copy. Offsets are from the image's start; the image sits 64-byte aligned in memory the
//! device reads. Execution state (where a step starts, the block budget, the binding table, the
//! target queue) travels in [`ProcessorArgs`].

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

/// `"AQDP"`: the first word of a device program.
pub const DEVICE_PROGRAM_MAGIC: u32 = u32::from_le_bytes(*b"AQDP");
pub const DEVICE_PROGRAM_VERSION: u32 = 1;

/// Kernarg bytes of the processor's own dispatch before the binding table: [`ProcessorArgs`].
pub const PROCESSOR_ARGS_BYTES: u32 = 88;
/// Bytes at the start of a target queue's state kept for the processor's continuation
/// arguments: two slots, so a step writes the next step's arguments beside its own.
pub const PROCESSOR_STATE_SLOT_BYTES: u64 = 128;
pub const PROCESSOR_STATE_RESERVED_BYTES: u64 = 2 * PROCESSOR_STATE_SLOT_BYTES;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DeviceProgramHeader {
    pub magic: u32,
    pub version: u32,
    pub block_count: u32,
    pub packet_count: u32,
    pub patch_count: u32,
    /// Binding-table slots the program's patches and branch sources may name.
    pub binding_slot_count: u32,
    pub blocks_offset: u32,
    pub packets_offset: u32,
    pub patches_offset: u32,
    pub templates_offset: u32,
    pub total_length: u32,
    /// The most packets and kernarg bytes one block takes: an execution whose target ring or
    /// kernarg area cannot hold them is refused before it starts.
    pub max_block_packets: u32,
    pub max_block_kernarg_bytes: u32,
    pub reserved: [u32; 3],
}
assert_layout!(DeviceProgramHeader, size = 64, align = 4);
assert_offset!(DeviceProgramHeader, block_count, 8);
assert_offset!(DeviceProgramHeader, blocks_offset, 24);
assert_offset!(DeviceProgramHeader, templates_offset, 36);
assert_offset!(DeviceProgramHeader, total_length, 40);
assert_offset!(DeviceProgramHeader, max_block_kernarg_bytes, 48);

/// How a block ends.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceTerminator {
    Return = 0,
    /// An unconditional branch or a fallthrough: `next_block` follows.
    Next = 1,
    /// A conditional branch: evaluated once the block's packets have completed.
    CondBranch = 2,
}

/// Where a conditional branch's value lives.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSourceKind {
    /// `cond_value` is the address.
    Static = 0,
    /// Binding-table slot `cond_slot`'s base plus `cond_value`.
    Dynamic = 1,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DeviceBlock {
    pub first_packet: u32,
    pub packet_count: u32,
    /// Kernarg bytes its template packets take, each rounded to 64.
    pub kernarg_bytes: u32,
    /// A [`DeviceTerminator`].
    pub terminator: u8,
    /// Conditional branch: 4 or 8.
    pub cond_width: u8,
    /// Conditional branch: a `CompareOp`.
    pub cond_compare: u8,
    /// Conditional branch: a [`DeviceSourceKind`].
    pub cond_source_kind: u8,
    /// `Next`: the block that follows; `CondBranch`: the block when the comparison holds.
    pub next_block: u32,
    /// `CondBranch`: the block when it does not.
    pub not_taken_block: u32,
    pub cond_slot: u32,
    /// The recording index of the block's first command (named in failures).
    pub first_command: u32,
    pub cond_value: u64,
    pub cond_operand: u64,
    pub reserved: [u64; 2],
}
assert_layout!(DeviceBlock, size = 64, align = 8);
assert_offset!(DeviceBlock, terminator, 12);
assert_offset!(DeviceBlock, next_block, 16);
assert_offset!(DeviceBlock, cond_slot, 24);
assert_offset!(DeviceBlock, first_command, 28);
assert_offset!(DeviceBlock, cond_value, 32);
assert_offset!(DeviceBlock, cond_operand, 40);

/// How the processor writes one packet.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevicePacketKind {
    /// Copied as it is (a prepublished dispatch, a barrier).
    Baked = 0,
    /// Its kernargs are the template at `template_offset`, copied and patched.
    Template = 1,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct DevicePacket {
    /// The AQL packet, header word included; completion signal 0.
    pub body: [u8; 64],
    /// A [`DevicePacketKind`].
    pub kind: u32,
    pub kernarg_bytes: u32,
    pub template_offset: u32,
    pub first_patch: u32,
    pub patch_count: u32,
    /// The command that recorded it (its recording index), named in failures.
    pub command: u32,
    /// [`PACKET_HEADER_LEFT_TO_DEVICE`], [`PACKET_PATCHES_NEXT`].
    pub flags: u32,
    /// With [`PACKET_PATCHES_NEXT`]: the next packet's implicit arguments' offset in its
    /// kernargs, or [`NO_TARGET_IMPLICIT_ARGS`].
    pub target_implicit_offset: u32,
    pub reserved: [u64; 4],
}
assert_layout!(DevicePacket, size = 128, align = 8);
assert_offset!(DevicePacket, kind, 64);
assert_offset!(DevicePacket, template_offset, 72);
assert_offset!(DevicePacket, command, 84);
assert_offset!(DevicePacket, flags, 88);
assert_offset!(DevicePacket, target_implicit_offset, 92);

/// The processor writes the packet's body but not its header: the `patch_indirect` packet just
/// before it stores the header once the grid is in place (an indirect dispatch).
pub const PACKET_HEADER_LEFT_TO_DEVICE: u32 = 1;
/// A `patch_indirect` packet whose target is the next packet: the processor writes the next
/// packet's slot address at kernarg byte 0 and its implicit arguments' address at byte 16.
pub const PACKET_PATCHES_NEXT: u32 = 2;
pub const NO_TARGET_IMPLICIT_ARGS: u32 = u32::MAX;

impl Default for DevicePacket {
    fn default() -> Self {
        Self::zeroed()
    }
}

/// "Write binding-table slot `slot`'s base plus `offset` at kernarg byte `kernarg_offset`."
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DevicePatch {
    pub kernarg_offset: u32,
    pub slot: u32,
    pub offset: u64,
}
assert_layout!(DevicePatch, size = 16, align = 8);

/// The processor's kernel arguments, in the order of `block_processor`'s parameters (its
/// kernarg segment; the binding table follows them at [`PROCESSOR_ARGS_BYTES`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ProcessorArgs {
    /// The device program.
    pub program: u64,
    /// The binding table: base addresses by slot.
    pub bindings: u64,
    /// The target queue (`hsa_queue_t *`, inside its `amd_queue_t`).
    pub queue: u64,
    /// The target queue's state: two continuation-argument slots, then the kernarg area.
    pub state: u64,
    /// This execution's status record ([`ProcessorStatus`]), zeroed by the host.
    pub status: u64,
    /// The signal the execution's final packet completes.
    pub done_signal: u64,
    /// Bytes of the kernarg area after the state's slots.
    pub kernarg_capacity: u64,
    /// Under a profile capture's dispatch timing, the execution's [`TimingTable`]; 0 otherwise.
    pub timing: u64,
    /// The block this step starts at (or whose conditional branch it evaluates first).
    pub block: u32,
    /// 1: `block` ends in a conditional branch; evaluate it before anything else.
    pub evaluate: u32,
    /// Blocks the execution may still run.
    pub blocks_left: u32,
    pub binding_count: u32,
    /// The step's number from 0 (picks the continuation slot).
    pub step: u32,
    pub reserved: u32,
}
assert_layout!(ProcessorArgs, size = PROCESSOR_ARGS_BYTES as usize, align = 8);
assert_offset!(ProcessorArgs, kernarg_capacity, 48);
assert_offset!(ProcessorArgs, timing, 56);
assert_offset!(ProcessorArgs, block, 64);
assert_offset!(ProcessorArgs, step, 80);

/// The head of an execution's timing table: `capacity` timing signals (u64 handles) follow it,
/// then `capacity` u32 entries of the log. The processor gives the `used`-th dispatch packet it
/// writes signal `used` as its completion signal and logs its packet index (in the device
/// program) there; past `capacity`, it counts the packet in `untimed`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct TimingTable {
    pub capacity: u32,
    pub used: u32,
    pub untimed: u32,
    pub reserved: u32,
}
assert_layout!(TimingTable, size = 16, align = 4);

impl TimingTable {
    /// Bytes of a table of `capacity` entries.
    pub const fn bytes(capacity: u64) -> u64 {
        16 + 12 * capacity
    }
}

/// What the processor reports when it stops an execution: `code` 0 while it runs well.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ProcessorStatus {
    /// A [`ProcessorFailure`] code, or 0.
    pub code: u32,
    pub block: u32,
    /// The recording index of the command, or `u32::MAX` when the failure is the block's.
    pub command: u32,
    /// A detail: the binding slot, the packet count, the block limit.
    pub detail: u32,
}
assert_layout!(ProcessorStatus, size = 16, align = 4);

/// Why the processor stopped an execution (its status `code`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessorFailure {
    /// The image's magic or version is wrong.
    BadImage = 1,
    /// A block ordinal past the program's blocks.
    MissingBlock = 2,
    /// A patch or branch names a slot past the binding table.
    UnresolvedBinding = 3,
    /// The execution ran its block budget out (a loop that never exits).
    BlockLimit = 4,
    /// A block's packets or kernargs do not fit the target queue.
    TooLarge = 5,
    /// The target ring stayed full past the processor's wait.
    RingFull = 6,
}

impl ProcessorFailure {
    pub fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            1 => Self::BadImage,
            2 => Self::MissingBlock,
            3 => Self::UnresolvedBinding,
            4 => Self::BlockLimit,
            5 => Self::TooLarge,
            6 => Self::RingFull,
            _ => return None,
        })
    }
}

/// How a block of a [`DeviceProgramBuilder`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEnd {
    Return,
    Next(u32),
    CondBranch {
        width: u8,
        compare: u8,
        /// `None`: `value` is the address; `Some(slot)`: the slot's base plus `value`.
        slot: Option<u32>,
        value: u64,
        operand: u64,
        taken: u32,
        not_taken: u32,
    },
}

/// Writes a device program: blocks in ordinal order, each a run of packets, then
/// [`Self::finish`] lays the sections out.
#[derive(Debug, Default)]
pub struct DeviceProgramBuilder {
    blocks: Vec<DeviceBlock>,
    packets: Vec<DevicePacket>,
    patches: Vec<DevicePatch>,
    /// Template bytes, each template 64-byte aligned; packets' `template_offset` are relative to
    /// this section until `finish` rebases them.
    templates: Vec<u8>,
    binding_slot_count: u32,
}

impl DeviceProgramBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the next block, whose first command has recording index `first_command`.
    pub fn begin_block(&mut self, first_command: u32) {
        self.blocks.push(DeviceBlock {
            first_packet: self.packets.len() as u32,
            first_command,
            ..DeviceBlock::default()
        });
    }

    fn open_block(&mut self) -> &mut DeviceBlock {
        self.blocks.last_mut().expect("begin_block comes first")
    }

    /// A packet copied as it is: `body` with its header word, completion signal 0.
    pub fn push_baked(&mut self, body: [u8; 64], command: u32) {
        self.open_block().packet_count += 1;
        self.packets.push(DevicePacket { body, kind: DevicePacketKind::Baked as u32, command, ..Default::default() });
    }

    /// A dispatch whose kernargs are `template` with each `(kernarg_offset, slot, offset)` patch's
    /// binding written into the copy.
    pub fn push_template(&mut self, body: [u8; 64], template: &[u8], patches: &[(u32, u32, u64)], command: u32) {
        self.push_template_with(body, template, patches, command, 0, NO_TARGET_IMPLICIT_ARGS);
    }

    /// [`Self::push_template`] with packet `flags` ([`PACKET_HEADER_LEFT_TO_DEVICE`],
    /// [`PACKET_PATCHES_NEXT`]) and, for the latter, the target's implicit-argument offset.
    pub fn push_template_with(
        &mut self,
        body: [u8; 64],
        template: &[u8],
        patches: &[(u32, u32, u64)],
        command: u32,
        flags: u32,
        target_implicit_offset: u32,
    ) {
        let template_offset = self.templates.len() as u32;
        self.templates.extend_from_slice(template);
        self.templates.resize(self.templates.len().next_multiple_of(64), 0);
        let first_patch = self.patches.len() as u32;
        for &(kernarg_offset, slot, offset) in patches {
            self.binding_slot_count = self.binding_slot_count.max(slot + 1);
            self.patches.push(DevicePatch { kernarg_offset, slot, offset });
        }
        let block = self.open_block();
        block.packet_count += 1;
        block.kernarg_bytes += (template.len() as u32).next_multiple_of(64);
        self.packets.push(DevicePacket {
            body,
            kind: DevicePacketKind::Template as u32,
            kernarg_bytes: template.len() as u32,
            template_offset,
            first_patch,
            patch_count: patches.len() as u32,
            command,
            flags,
            target_implicit_offset,
            ..Default::default()
        });
    }

    /// Closes the open block.
    pub fn end_block(&mut self, end: BlockEnd) {
        let mut slots = self.binding_slot_count;
        let block = self.open_block();
        match end {
            BlockEnd::Return => block.terminator = DeviceTerminator::Return as u8,
            BlockEnd::Next(next) => {
                block.terminator = DeviceTerminator::Next as u8;
                block.next_block = next;
            }
            BlockEnd::CondBranch { width, compare, slot, value, operand, taken, not_taken } => {
                block.terminator = DeviceTerminator::CondBranch as u8;
                block.cond_width = width;
                block.cond_compare = compare;
                block.cond_source_kind =
                    if slot.is_some() { DeviceSourceKind::Dynamic } else { DeviceSourceKind::Static } as u8;
                block.cond_slot = slot.unwrap_or(0);
                block.cond_value = value;
                block.cond_operand = operand;
                block.next_block = taken;
                block.not_taken_block = not_taken;
                if let Some(slot) = slot {
                    slots = slots.max(slot + 1);
                }
            }
        }
        self.binding_slot_count = slots;
    }

    /// Packets the program holds.
    pub fn packet_count(&self) -> usize {
        self.packets.len()
    }

    /// The image, 64-byte-aligned sections after the header.
    pub fn finish(mut self) -> Vec<u8> {
        let header_bytes = size_of::<DeviceProgramHeader>();
        let blocks_offset = header_bytes;
        let packets_offset = blocks_offset + self.blocks.len() * size_of::<DeviceBlock>();
        let patches_offset = packets_offset + self.packets.len() * size_of::<DevicePacket>();
        let templates_offset = (patches_offset + self.patches.len() * size_of::<DevicePatch>()).next_multiple_of(64);
        let total = templates_offset + self.templates.len();
        for packet in &mut self.packets {
            if packet.kind == DevicePacketKind::Template as u32 {
                packet.template_offset += templates_offset as u32;
            }
        }
        let header = DeviceProgramHeader {
            magic: DEVICE_PROGRAM_MAGIC,
            version: DEVICE_PROGRAM_VERSION,
            block_count: self.blocks.len() as u32,
            packet_count: self.packets.len() as u32,
            patch_count: self.patches.len() as u32,
            binding_slot_count: self.binding_slot_count,
            blocks_offset: blocks_offset as u32,
            packets_offset: packets_offset as u32,
            patches_offset: patches_offset as u32,
            templates_offset: templates_offset as u32,
            total_length: total as u32,
            max_block_packets: self.blocks.iter().map(|block| block.packet_count).max().unwrap_or(0),
            max_block_kernarg_bytes: self.blocks.iter().map(|block| block.kernarg_bytes).max().unwrap_or(0),
            reserved: [0; 3],
        };
        let mut image = Vec::with_capacity(total);
        image.extend_from_slice(bytemuck::bytes_of(&header));
        image.extend_from_slice(bytemuck::cast_slice(&self.blocks));
        image.extend_from_slice(bytemuck::cast_slice(&self.packets));
        image.extend_from_slice(bytemuck::cast_slice(&self.patches));
        image.resize(templates_offset, 0);
        image.extend_from_slice(&self.templates);
        image
    }
}
