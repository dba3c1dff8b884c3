//! Finishing: in one pass over the recorded chunks, write the block-program image, bake each
//! command's block step and record every fact execution reads; publish the image to device memory
//! when something reads it there.

use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_abi::block_program::{
    BlockParts, Command, DecodedCommand, DispatchCommand, ImageWriter, ReturnCommand, TerminatorKind,
};
use aqueduct_components::device_entities::CommandBufferEntity;
use aqueduct_components::program::ProgramMemory;
use aqueduct_components::program::{BlockFacts, BlockStep, DeviceProgramRef, ProgramBlocks, ProgramImage, StepKind};
use aqueduct_hsa::sys::hsa_amd_memory_pool_t;

use super::recorder::{Recorder, close};
use super::{CommandBuffer, CommandBufferUsage, FinishedProgram, State};
use crate::device::DeviceShared;
use crate::device::programs::image_class;
use crate::error::{EngineError, EngineResult};

/// The facts finishing recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramFacts {
    /// Blocks after splitting.
    pub blocks: u32,
    /// Commands, control commands included.
    pub commands: u32,
    /// Kernel dispatches, of every kernarg strategy.
    pub dispatches: u32,
    /// Dispatches whose kernargs are published once with the image (every binding static).
    pub prepublished: u32,
    /// Dispatches that execution copies from a kernarg template and patches with slot pointers.
    pub patched_template: u32,
    /// Dispatches whose kernargs execution writes from slot pointers and constants (every binding
    /// dynamic).
    pub pointer_scatter: u32,
    /// Dispatches whose grid execution reads from a buffer.
    pub indirect: u32,
    /// Fills, copies, updates and profile markers.
    pub transfers: u32,
    /// Sum of every block's worst-case packets.
    pub worst_packets: u64,
    /// Sum of every block's worst-case kernarg bytes.
    pub worst_kernarg_bytes: u64,
    /// Slots a binding table must have.
    pub binding_slots: u32,
    /// Size of the block-program image in bytes.
    pub image_bytes: usize,
}

impl CommandBuffer {
    /// Ends recording: lays the program out, bakes its packets, publishes it, and records its
    /// facts, in one pass over the recorded commands. On error nothing changes and recording can
    /// go on (e.g. to begin a forgotten block).
    ///
    /// Every record was checked when it was recorded, so finishing checks only what spans
    /// commands: every block begun, no endless loop of unconditional branches, the image within
    /// the format's limits. Debug builds (every test) also run the ABI validator on the image.
    pub fn finish(&mut self) -> EngineResult<()> {
        let State::Recording(recorder) = &mut self.state else {
            return Err(EngineError::CommandBufferState { reason: "it is finished; record into a new command buffer" });
        };
        let recorder: &mut Recorder = recorder;
        if let Some(index) = recorder.blocks.iter().position(|block| !block.begun) {
            return Err(EngineError::InvalidArgument {
                what: "command buffer",
                reason: format!("block {index} was created but never begun"),
            });
        }
        plan_layout(recorder)?;
        if let Some(ordinal) = unconditional_cycle(recorder) {
            return Err(EngineError::InvalidArgument {
                what: "command buffer",
                reason: format!("block {ordinal} loops through unconditional branches forever"),
            });
        }
        let too_large = || EngineError::InvalidArgument {
            what: "command buffer",
            reason: "the program image would exceed 4 GiB; record it as several command buffers".into(),
        };
        let agent = self.device.agent(self.agent)?;
        let writer =
            ImageWriter::new(&recorder.scratch_headers, recorder.slot_needs.len() as u32).ok_or_else(too_large)?;
        let image_length = writer.image_length();
        let published = if recorder.counts.prepublished > 0 || recorder.counts.updates > 0 {
            Some(publish_memory(&self.device, agent.kernarg_pool, image_length)?)
        } else {
            None
        };

        // Nothing can fail from here on.
        close(recorder);
        let base = published.map_or(0, |image| image.address);
        let mut blocks = self.device.programs.take_blocks();
        let (bytes, command_count) = write_image(recorder, writer, base, &mut blocks);
        debug_assert!(
            aqueduct_abi::block_program::validate(&bytes).is_ok(),
            "finishing wrote an image the ABI validator refuses: {:?}",
            aqueduct_abi::block_program::validate(&bytes).err()
        );
        if let Some(image) = published {
            // SAFETY: the memory holds at least `bytes.len()` host-writable bytes (its size
            // class) and is this program's alone.
            unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), image.address as *mut u8, bytes.len()) };
        }
        let counts = recorder.counts;
        let facts = ProgramFacts {
            blocks: blocks.len() as u32,
            commands: command_count,
            dispatches: counts.dispatches,
            prepublished: counts.prepublished,
            patched_template: counts.patched_template,
            pointer_scatter: counts.pointer_scatter,
            indirect: counts.indirect,
            transfers: counts.transfers,
            worst_packets: recorder.scratch_headers.iter().map(|header| u64::from(header.max_packet_count)).sum(),
            worst_kernarg_bytes: recorder
                .scratch_headers
                .iter()
                .map(|header| u64::from(header.max_kernarg_bytes))
                .sum(),
            binding_slots: recorder.slot_needs.len() as u32,
            image_bytes: bytes.len(),
        };
        let builtins = agent.builtin_objects.clone();
        let id = aqueduct_components::program::next_program_id();
        let image =
            ProgramImage { id, bytes: bytes.into_boxed_slice(), blocks, builtins, device: std::sync::OnceLock::new() };
        let image = Arc::new(image);
        let record = CommandBufferEntity { agent: self.agent, program: image.clone(), image: published };
        let program = FinishedProgram {
            device: self.device.clone(),
            agent: self.agent,
            image: ManuallyDrop::new(image),
            facts,
            slot_needs: std::mem::take(&mut recorder.slot_needs),
            copy_checks: std::mem::take(&mut recorder.copy_checks),
            retained: std::mem::take(&mut recorder.retained),
            entity: self.device.world().spawn(record).id(),
            one_shot: self.usage == CommandBufferUsage::OneShot,
            executed: AtomicBool::new(false),
        };
        if let State::Recording(recorder) = std::mem::replace(&mut self.state, State::Finished(Arc::new(program))) {
            super::pool::give_recorder(&self.device, recorder);
        }
        self.record_finished();
        Ok(())
    }
}

/// Builds and publishes `image`'s device program, or says why it has none. The device program is
/// an alternative: a program that cannot get memory for it is processed on the host.
pub(super) fn publish_device_program(
    device: &Arc<DeviceShared>,
    agent: usize,
    image: &ProgramImage,
) -> Result<DeviceProgramRef, &'static str> {
    let (program, counts) = super::device_program::build(image)?;
    let pool = device.agent(agent).map_err(|_| "its agent is gone")?.kernarg_pool;
    let memory =
        publish_memory(device, pool, program.len()).map_err(|_| "no memory could be had for its device program")?;
    // SAFETY: the memory holds at least `program.len()` host-writable bytes (its size class) and
    // is this program's alone.
    unsafe { core::ptr::copy_nonoverlapping(program.as_ptr(), memory.address as *mut u8, program.len()) };
    let header: aqueduct_abi::device_program::DeviceProgramHeader = bytemuck::pod_read_unaligned(&program[..64]);
    Ok(DeviceProgramRef {
        memory,
        packets: header.packet_count,
        max_block_packets: header.max_block_packets,
        max_block_kernarg_bytes: header.max_block_kernarg_bytes,
        conditional_branches: counts.conditional_branches,
        dynamic_transfers: counts.dynamic_transfers,
    })
}

/// Kernarg-pool memory for an image of `length` bytes: kept memory of its size class, or a fresh
/// allocation mapped for every agent of the device.
fn publish_memory(
    device: &Arc<DeviceShared>,
    pool: hsa_amd_memory_pool_t,
    length: usize,
) -> EngineResult<ProgramMemory> {
    let capacity = image_class(length).ok_or_else(|| EngineError::InvalidArgument {
        what: "command buffer",
        reason: format!("a {length}-byte image has no allocation size"),
    })?;
    match device.programs.take_image(pool, capacity) {
        Some(memory) => Ok(memory),
        None => {
            let address = device.allocate_granted(pool, capacity)? as u64;
            Ok(ProgramMemory { pool: pool.handle, address, capacity })
        }
    }
}

/// Numbers the chunks (each user block's chunks in turn, in label order) and computes every
/// block's header into the recorder's scratch; refuses an image past the format's limits.
fn plan_layout(recorder: &mut Recorder) -> EngineResult<()> {
    recorder.scratch_ordinals.clear();
    let mut next = 0u32;
    for block in &recorder.blocks {
        recorder.scratch_ordinals.push(next);
        next += block.chunk_count;
    }
    recorder.scratch_headers.clear();
    for label in 0..recorder.blocks.len() {
        for chunk in chunks_of(recorder, label) {
            let ordinal = recorder.scratch_headers.len() as u32;
            let closing = closing(recorder, label, chunk);
            let header = parts(recorder, label, chunk, closing.as_ref()).header(ordinal).ok_or_else(|| {
                EngineError::InvalidArgument {
                    what: "command buffer",
                    reason: format!("block {ordinal} would exceed the block program's 4 GiB offsets"),
                }
            })?;
            recorder.scratch_headers.push(header);
        }
    }
    Ok(())
}

/// The chunk indices of user block `label`.
fn chunks_of(recorder: &Recorder, label: usize) -> std::ops::Range<usize> {
    let block = recorder.blocks[label];
    block.first_chunk as usize..(block.first_chunk + block.chunk_count) as usize
}

/// The command that closes chunk `chunk` of block `label` in the image: the block's own
/// terminator (branch targets as ordinals) on its last chunk, a return when it has none, and
/// nothing (fallthrough) on the others.
fn closing(recorder: &Recorder, label: usize, chunk: usize) -> Option<Command> {
    let block = recorder.blocks[label];
    if chunk + 1 < (block.first_chunk + block.chunk_count) as usize {
        return None;
    }
    let ordinal = |label: u32| recorder.scratch_ordinals.get(label as usize).copied().unwrap_or(u32::MAX);
    Some(match recorder.chunks[chunk].closing {
        None => ReturnCommand::new().into(),
        Some(command) => match command.decode() {
            Some(DecodedCommand::Branch(mut branch)) => {
                branch.target_block = ordinal(branch.target_block);
                branch.into()
            }
            Some(DecodedCommand::CondBranch(mut branch)) => {
                branch.taken_block = ordinal(branch.taken_block);
                branch.not_taken_block = ordinal(branch.not_taken_block);
                branch.into()
            }
            _ => command,
        },
    })
}

fn terminator(recorder: &Recorder, label: usize, chunk: usize) -> TerminatorKind {
    let block = recorder.blocks[label];
    if chunk + 1 < (block.first_chunk + block.chunk_count) as usize {
        TerminatorKind::Fallthrough
    } else if block.terminated {
        recorder.chunks[chunk].terminator
    } else {
        TerminatorKind::Return
    }
}

/// The arena ranges of chunk `index`: up to the next chunk's starts, or the arenas' ends.
fn ranges(recorder: &Recorder, index: usize) -> [std::ops::Range<usize>; 4] {
    let chunk = &recorder.chunks[index];
    let next = recorder.chunks.get(index + 1);
    [
        chunk.command_start..next.map_or(recorder.commands.len(), |next| next.command_start),
        chunk.source_start..next.map_or(recorder.sources.len(), |next| next.source_start),
        chunk.patch_start..next.map_or(recorder.patches.len(), |next| next.patch_start),
        chunk.rodata_start..next.map_or(recorder.rodata.len(), |next| next.rodata_start),
    ]
}

fn parts<'r>(recorder: &'r Recorder, label: usize, index: usize, closing: Option<&'r Command>) -> BlockParts<'r> {
    let [commands, sources, patches, rodata] = ranges(recorder, index);
    BlockParts {
        terminator: terminator(recorder, label, index),
        commands: &recorder.commands[commands],
        closing,
        sources: &recorder.sources[sources],
        static_sources: recorder.chunks[index].static_sources,
        patches: &recorder.patches[patches],
        rodata: &recorder.rodata[rodata],
        cost: recorder.chunks[index].cost,
    }
}

/// Writes every block into the image (headers from [`plan_layout`]) and, in the same pass, each
/// block's row in `blocks`: its facts and each command's block step. Baked packets get their
/// header words (the flags recording settled on) and kernarg addresses (`published`: the image's
/// device address, 0 when it has none), templates their offsets in the image. Returns the image
/// and the number of commands written.
fn write_image(
    recorder: &Recorder,
    mut writer: ImageWriter,
    published: u64,
    blocks: &mut ProgramBlocks,
) -> (Vec<u8>, u32) {
    blocks.clear();
    let mut command_count = 0;
    for label in 0..recorder.blocks.len() {
        for index in chunks_of(recorder, label) {
            let header = recorder.scratch_headers[blocks.len()];
            let closing = closing(recorder, label, index);
            let offset = writer.next_offset();
            writer.push_block(&parts(recorder, label, index, closing.as_ref()), &header);
            let rodata = offset + header.rodata_offset;
            let rodata_address = if published == 0 { 0 } else { published + u64::from(rodata) };
            let first_command = recorder.chunks[index].first_command;
            let (mut commands, mut patches) = blocks.push(BlockFacts { offset, header, rodata_address, first_command });
            let [recorded_range, _, patch_range, _] = ranges(recorder, index);
            // Recorded patch indices are relative to the chunk's patches, which are the block's.
            patches.0.extend_from_slice(&recorder.slot_patches[patch_range]);
            // Copied in bulk, then the dispatches rebased in place.
            let commands = &mut *commands;
            commands.steps.extend_from_slice(&recorder.steps[recorded_range.clone()]);
            commands.packets.extend_from_slice(&recorder.packets[recorded_range.clone()]);
            let recorded = &recorder.commands[recorded_range];
            for ((command, step), packet) in recorded.iter().zip(&mut commands.steps).zip(&mut commands.packets) {
                if step.kind == StepKind::Interpret {
                    continue;
                }
                step.header = bytemuck::cast_ref::<Command, DispatchCommand>(command).header_word();
                step.template += rodata;
                if step.kind == StepKind::Baked {
                    packet.kernarg_address += rodata_address;
                } else {
                    packet.kernarg_address = 0;
                }
            }
            if closing.is_some() {
                commands.steps.push(BlockStep::default());
                commands.packets.push(KernelDispatchPacket::default());
            }
            command_count += commands.steps.len() as u32;
        }
    }
    (writer.finish(), command_count)
}

/// A block from which unconditional branches and fallthroughs never reach a return or a
/// conditional branch (execution would never stop), if any. Needs [`plan_layout`]'s ordinals.
fn unconditional_cycle(recorder: &Recorder) -> Option<u32> {
    let branches = recorder.blocks.iter().any(|block| {
        block.terminated
            && block.chunk_count > 0
            && recorder.chunks[(block.first_chunk + block.chunk_count - 1) as usize].terminator
                == TerminatorKind::Branch
    });
    if !branches {
        // Without unconditional branches, fallthroughs only go forward to a chunk that ends its block.
        return None;
    }
    let mut successors = Vec::with_capacity(recorder.chunks.len());
    for label in 0..recorder.blocks.len() {
        for index in chunks_of(recorder, label) {
            let ordinal = successors.len();
            successors.push(match terminator(recorder, label, index) {
                TerminatorKind::Fallthrough => Some(ordinal + 1),
                TerminatorKind::Branch => match closing(recorder, label, index).and_then(|command| command.decode()) {
                    Some(DecodedCommand::Branch(branch)) => Some(branch.target_block as usize),
                    _ => None,
                },
                TerminatorKind::Return | TerminatorKind::CondBranch => None,
            });
        }
    }
    // 0 = unvisited, 1 = on the current path, 2 = known to stop.
    let mut state = vec![0u8; successors.len()];
    let mut path = Vec::new();
    for start in 0..successors.len() {
        path.clear();
        let mut at = Some(start);
        while let Some(ordinal) = at.filter(|&ordinal| ordinal < state.len()) {
            match state[ordinal] {
                2 => break,
                1 => return Some(ordinal as u32),
                _ => {}
            }
            state[ordinal] = 1;
            path.push(ordinal);
            at = successors[ordinal];
        }
        for &ordinal in &path {
            state[ordinal] = 2;
        }
    }
    None
}
