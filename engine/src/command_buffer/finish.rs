//! Finalization: lay the recorded blocks out as a block program, validate it, publish it to
//! device memory and record, once, every fact replay and execution checks read.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_abi::block_program::{
    BlockBuf, BlockProgramBuf, Command, DecodedCommand, KernargStrategy, ReturnCommand, TerminatorKind, validate,
};
use aqueduct_components::Retained;
use aqueduct_components::program::{BlockFacts, BuiltinObject, ProgramImage};

use super::recorder::{Recorder, close};
use super::{CommandBuffer, CommandBufferUsage, FinishedProgram, State};
use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};

/// The facts finalization recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramFacts {
    /// Blocks after splitting.
    pub blocks: u32,
    /// Commands, control commands included.
    pub commands: u32,
    pub dispatches: u32,
    pub prepublished: u32,
    pub patched_template: u32,
    pub pointer_scatter: u32,
    pub indirect: u32,
    /// Fills, copies, updates and profile markers.
    pub transfers: u32,
    /// Sum of every block's worst-case packets and kernarg bytes.
    pub worst_packets: u64,
    pub worst_kernarg_bytes: u64,
    /// Slots a binding table must have.
    pub binding_slots: u32,
    pub image_bytes: usize,
}

/// The program image copied into kernarg-pool memory, where prepublished kernargs, templates and
/// update payloads are read by the device.
pub(crate) struct PublishedImage {
    device: Arc<DeviceShared>,
    address: u64,
}

impl Drop for PublishedImage {
    fn drop(&mut self) {
        // SAFETY: the allocation is ours; every execution retained the program, so no queued
        // packet still points into it.
        if let Err(error) = unsafe { self.device.hsa.free(self.address as *mut u8) } {
            tracing::warn!(%error, "freeing a command buffer's published image failed");
        }
    }
}

impl CommandBuffer {
    /// Ends recording: lays out and validates the program, publishes it, and records its facts.
    /// On error nothing changes and recording can go on (e.g. to begin a forgotten block).
    pub fn finish(&mut self) -> EngineResult<()> {
        let program = {
            let recorder = self.recorder()?;
            if let Some(index) = recorder.blocks.iter().position(|block| !block.begun) {
                return Err(EngineError::InvalidArgument {
                    what: "command buffer",
                    reason: format!("block {index} was created but never begun"),
                });
            }
            layout(recorder)
        };
        let bytes = program.to_bytes();
        let view = validate(&bytes).map_err(EngineError::InvalidProgram)?;
        if let Some(ordinal) = unconditional_cycle(&program) {
            return Err(EngineError::InvalidArgument {
                what: "command buffer",
                reason: format!("block {ordinal} loops through unconditional branches forever"),
            });
        }
        let agent = self.device.agent(self.agent)?;
        let address = self.device.allocate_granted(agent.kernarg_pool, bytes.len())? as u64;
        let published = PublishedImage { device: self.device.clone(), address };
        // SAFETY: a fresh allocation of `bytes.len()` host-writable bytes.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) };
        let mut blocks = Vec::with_capacity(view.block_count() as usize);
        let (mut baked_headers, mut baked_packets) = (Vec::new(), Vec::new());
        let mut facts = ProgramFacts {
            blocks: view.block_count(),
            image_bytes: bytes.len(),
            binding_slots: view.binding_slot_count(),
            ..Default::default()
        };
        // One pass over the validated image: per-block facts, the program's facts, baked packets.
        for block in view.blocks() {
            let header = *block.header();
            let rodata_address = address + u64::from(block.offset()) + u64::from(header.rodata_offset);
            blocks.push(BlockFacts {
                offset: block.offset(),
                header,
                rodata_address,
                first_command: baked_headers.len() as u32,
            });
            facts.worst_packets += u64::from(header.max_packet_count);
            facts.worst_kernarg_bytes += u64::from(header.max_kernarg_bytes);
            for command in block.commands().filter_map(|command| command.decode()) {
                facts.count(&command);
                let (header, packet) = bake(&command, rodata_address).unwrap_or_default();
                baked_headers.push(header);
                baked_packets.push(packet);
            }
        }
        let builtins = agent
            .builtins
            .iter()
            .map(|kernel| BuiltinObject {
                kernel_object: kernel.kernel_object,
                group_segment_size: kernel.group_segment_size,
                private_segment_size: kernel.private_segment_size,
            })
            .collect();

        let State::Recording(recorder) =
            std::mem::replace(&mut self.state, State::Recording(Box::new(Recorder::new(Default::default()))))
        else {
            unreachable!("checked above")
        };
        let mut retained = recorder.retained;
        retained.extend(recorder.kernels.iter().map(|kernel| kernel.executable.clone() as Retained));
        let image = ProgramImage {
            bytes: bytes.into_boxed_slice(),
            blocks: blocks.into_boxed_slice(),
            builtins,
            baked_headers: baked_headers.into_boxed_slice(),
            baked_packets: baked_packets.into_boxed_slice(),
        };
        self.state = State::Finished(Arc::new(FinishedProgram {
            device: self.device.clone(),
            agent: self.agent,
            image: Arc::new(image),
            facts,
            slot_needs: recorder.slot_needs,
            copy_checks: recorder.copy_checks,
            retained,
            published,
            one_shot: self.usage == CommandBufferUsage::OneShot,
            executed: AtomicBool::new(false),
        }));
        Ok(())
    }
}

/// The complete packet of a prepublished dispatch (everything is known once published) and its
/// header word; `None` for commands replay must build.
fn bake(command: &DecodedCommand, rodata_address: u64) -> Option<(u32, KernelDispatchPacket)> {
    let DecodedCommand::Dispatch(dispatch) = command else { return None };
    if dispatch.strategy()? != KernargStrategy::Prepublished {
        return None;
    }
    Some((dispatch.header_word(), dispatch.template().packet(rodata_address + u64::from(dispatch.template_offset), 0)))
}

/// The recorded blocks in ordinal order: each user block's chunks in turn, chunks linked by
/// fallthrough, branch targets turned from labels into ordinals, unterminated blocks returning.
fn layout(recorder: &mut Recorder) -> BlockProgramBuf {
    close(recorder);
    let mut first_ordinal = Vec::with_capacity(recorder.blocks.len());
    let mut next = 0u32;
    for block in &recorder.blocks {
        first_ordinal.push(next);
        next += block.chunks.len() as u32;
    }
    let ordinal = |label: u32| first_ordinal[label as usize];
    let mut program = BlockProgramBuf::new();
    for block in &recorder.blocks {
        let last = block.chunks.len() - 1;
        for (index, chunk) in block.chunks.iter().enumerate() {
            let mut chunk: BlockBuf = chunk.clone();
            if index < last {
                chunk.terminator = TerminatorKind::Fallthrough;
            } else if !block.terminated {
                chunk.push_command(ReturnCommand::new());
                chunk.terminator = TerminatorKind::Return;
            } else if let Some(command) = chunk.commands.last_mut() {
                *command = retarget(command, ordinal);
            }
            program.push_block(chunk);
        }
    }
    program
}

fn retarget(command: &Command, ordinal: impl Fn(u32) -> u32) -> Command {
    match command.decode() {
        Some(DecodedCommand::Branch(mut branch)) => {
            branch.target_block = ordinal(branch.target_block);
            branch.into()
        }
        Some(DecodedCommand::CondBranch(mut branch)) => {
            branch.taken_block = ordinal(branch.taken_block);
            branch.not_taken_block = ordinal(branch.not_taken_block);
            branch.into()
        }
        _ => *command,
    }
}

/// A block from which unconditional branches and fallthroughs never reach a return or a
/// conditional branch (replay would never stop), if any.
fn unconditional_cycle(program: &BlockProgramBuf) -> Option<u32> {
    let successor = |ordinal: usize| -> Option<usize> {
        let block = &program.blocks[ordinal];
        match block.terminator {
            TerminatorKind::Fallthrough => Some(ordinal + 1),
            TerminatorKind::Branch => match block.commands.last()?.decode()? {
                DecodedCommand::Branch(branch) => Some(branch.target_block as usize),
                _ => None,
            },
            TerminatorKind::Return | TerminatorKind::CondBranch => None,
        }
    };
    // 0 = unvisited, 1 = on the current path, 2 = known to stop.
    let mut state = vec![0u8; program.blocks.len()];
    for start in 0..program.blocks.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(ordinal) = at.filter(|&ordinal| ordinal < state.len()) {
            match state[ordinal] {
                2 => break,
                1 => return Some(ordinal as u32),
                _ => {}
            }
            state[ordinal] = 1;
            path.push(ordinal);
            at = successor(ordinal);
        }
        for ordinal in path {
            state[ordinal] = 2;
        }
    }
    None
}

impl ProgramFacts {
    fn count(&mut self, command: &DecodedCommand) {
        self.commands += 1;
        match command {
            DecodedCommand::Dispatch(dispatch) => {
                self.dispatches += 1;
                match dispatch.strategy() {
                    Some(KernargStrategy::Prepublished) => self.prepublished += 1,
                    Some(KernargStrategy::PatchedTemplate) => self.patched_template += 1,
                    Some(KernargStrategy::PointerScatter) => self.pointer_scatter += 1,
                    Some(KernargStrategy::Indirect) => self.indirect += 1,
                    None => {}
                }
            }
            DecodedCommand::Fill(_)
            | DecodedCommand::Copy(_)
            | DecodedCommand::Update(_)
            | DecodedCommand::ProfileMarker(_) => self.transfers += 1,
            _ => {}
        }
    }
}
