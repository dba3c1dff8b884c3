//! The device program of a finished command buffer (`aqueduct_abi::device_program`): what the
//! device library's block processor reads when an execution is processed on the device, built
//! from the same block steps the host's block processor writes from, and how an execution picks
//! between the two ([`BlockProcessing`]).

use aqueduct_abi::block_program::{BlockProgram, DecodedCommand, SourceKind, TerminatorKind};
use aqueduct_abi::device_program::{BlockEnd, DeviceProgramBuilder};
use aqueduct_abi::{BarrierAndPacket, KernelDispatchPacket, PacketHeader, PacketType};
use aqueduct_components::program::{ProgramImage, StepKind};

/// Where a command-buffer execution's blocks are turned into packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlockProcessing {
    /// The engine picks, per execution, by a measured cost model: the device for programs with a
    /// conditional branch (a branch on the host costs a round trip: the queue drains, the host
    /// reads the value) or with at least [`DEVICE_MIN_PACKETS`] packets, the host otherwise, and
    /// the host whenever the program has commands only the host processes.
    #[default]
    Auto,
    /// The host writes every packet of every execution (the queue's own stages).
    Host,
    /// The device library's block processor writes them: the host publishes one dispatch and a
    /// barrier, and uploads the binding table. A program the device cannot process is refused
    /// with a typed error that says why.
    Device,
}

/// Packets from which [`BlockProcessing::Auto`] picks the device for a straight-line program:
/// below it, the host writes the packets in less time than the device processor's own dispatch
/// and barrier take to run (docs/BENCHMARKS.md, "Block processing on the device").
pub const DEVICE_MIN_PACKETS: u32 = 256;

/// Builds the device program of `image`, or says why it has none: the device processor writes
/// baked and template dispatches and barriers; transfers, pointer-scatter and indirect
/// dispatches are written by the host's.
pub(crate) fn build(image: &ProgramImage) -> Result<(Vec<u8>, u32), &'static str> {
    let view = image.view().ok_or("the program image cannot be read")?;
    let mut builder = DeviceProgramBuilder::new();
    let mut conditional_branches = 0;
    for ordinal in 0..image.blocks.len() as u32 {
        let (facts, commands, patches) = image.blocks.get(ordinal).ok_or("a block is missing")?;
        builder.begin_block(facts.first_command);
        let block = view.block(ordinal).ok_or("a block cannot be read")?;
        for (index, (step, packet)) in commands.steps.iter().zip(&commands.packets).enumerate() {
            let command = facts.first_command + index as u32;
            match step.kind {
                StepKind::Baked => builder.push_baked(body(packet, step.header, packet.kernarg_address), command),
                StepKind::Template => {
                    let start = step.template as usize;
                    let template = image
                        .bytes
                        .get(start..start + step.kernarg_bytes as usize)
                        .ok_or("a kernarg template is missing")?;
                    let first = step.first_patch as usize;
                    let patches: Vec<(u32, u32, u64)> = patches
                        .0
                        .get(first..first + step.patch_count as usize)
                        .ok_or("a template's patches are missing")?
                        .iter()
                        .map(|patch| (u32::from(patch.kernarg_offset), patch.slot, patch.offset))
                        .collect();
                    builder.push_template(body(packet, step.header, 0), template, &patches, command);
                }
                StepKind::Interpret => match block.command(index as u32).and_then(|command| command.decode()) {
                    Some(DecodedCommand::Barrier(barrier)) => {
                        let header = PacketType::BarrierAnd as u16 | barrier.header.flags.packet_header_bits();
                        let packet = BarrierAndPacket { header: PacketHeader(header), ..Default::default() };
                        builder.push_baked(bytemuck::cast(packet), command);
                    }
                    Some(DecodedCommand::Branch(_) | DecodedCommand::CondBranch(_) | DecodedCommand::Return(_))
                    | None => {}
                    Some(_) => {
                        return Err(
                            "it has transfers, pointer-scatter or indirect dispatches, which the host's block processor writes",
                        );
                    }
                },
            }
        }
        let end = block_end(&view, ordinal, facts.header.terminator_kind())?;
        conditional_branches += u32::from(matches!(end, BlockEnd::CondBranch { .. }));
        builder.end_block(end);
    }
    Ok((builder.finish(), conditional_branches))
}

/// A finalized packet with its header word (`header | setup << 16`), kernarg address and no
/// completion signal, as the 64 bytes the processor copies.
fn body(packet: &KernelDispatchPacket, word: u32, kernarg_address: u64) -> [u8; 64] {
    let packet = KernelDispatchPacket {
        header: PacketHeader(word as u16),
        setup: (word >> 16) as u16,
        kernarg_address,
        completion_signal: 0,
        ..*packet
    };
    bytemuck::cast(packet)
}

/// How block `ordinal` ends.
fn block_end(view: &BlockProgram<'_>, ordinal: u32, kind: Option<TerminatorKind>) -> Result<BlockEnd, &'static str> {
    let closing = || {
        let block = view.block(ordinal)?;
        block.command(block.command_count().checked_sub(1)?)?.decode()
    };
    Ok(match kind {
        Some(TerminatorKind::Return) | None => BlockEnd::Return,
        Some(TerminatorKind::Fallthrough) => BlockEnd::Next(ordinal + 1),
        Some(TerminatorKind::Branch) => match closing() {
            Some(DecodedCommand::Branch(branch)) => BlockEnd::Next(branch.target_block),
            _ => return Err("a branch cannot be read"),
        },
        Some(TerminatorKind::CondBranch) => {
            let Some(DecodedCommand::CondBranch(branch)) = closing() else {
                return Err("a conditional branch cannot be read");
            };
            let source = view
                .block(ordinal)
                .and_then(|block| block.source(u32::from(branch.source)))
                .ok_or("a conditional branch's source cannot be read")?;
            let slot = match source.source_kind() {
                Some(SourceKind::Static) => None,
                Some(SourceKind::Dynamic) => Some(source.slot),
                None => return Err("a conditional branch's source is malformed"),
            };
            BlockEnd::CondBranch {
                width: branch.width,
                compare: branch.compare,
                slot,
                value: source.value,
                operand: branch.operand,
                taken: branch.taken_block,
                not_taken: branch.not_taken_block,
            }
        }
    })
}
