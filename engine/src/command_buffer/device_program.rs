//! The device program of a finished command buffer (`aqueduct_abi::device_program`): what the
//! device library's block processor reads when an execution is processed on the device, built
//! from the same block steps the host's block processor writes from, and how an execution picks
//! between the two ([`BlockProcessing`](crate::BlockProcessing)).

use aqueduct_abi::ImplicitKernargs;
use aqueduct_abi::block_program::{
    Block, BlockProgram, CommandFlags, DecodedCommand, DispatchCommand, KernargStrategy, NO_IMPLICIT_ARGS, SourceKind,
    TerminatorKind,
};
use aqueduct_abi::device_program::{
    BlockEnd, DeviceProgramBuilder, NO_TARGET_IMPLICIT_ARGS, PACKET_HEADER_LEFT_TO_DEVICE, PACKET_PATCHES_NEXT,
};
use aqueduct_abi::{BarrierAndPacket, KernelDispatchPacket, PacketHeader, PacketType};
use aqueduct_builtins::{Builtin, PatchIndirectArgs};
use aqueduct_components::program::{ProgramImage, StepKind};

/// Packets from which [`BlockProcessing::Auto`](crate::BlockProcessing::Auto) picks the device for a straight-line program:
/// the measured crossover of the host's CPU per execution, between 128 packets (the host writes
/// them for less) and 256 (the device path costs the host a fraction); end to end neither path
/// wins clearly (docs/BENCHMARKS.md, "Issue 47: where host and device block processing cross").
pub const DEVICE_MIN_PACKETS: u32 = 256;

/// Builds the device program of `image`, or says why it has none: the device processor writes
/// every dispatch strategy, transfers and barriers (what the host's writes, written the same
/// way); an image the recorder did not build has no block steps and no device program.
pub(crate) fn build(image: &ProgramImage) -> Result<(Vec<u8>, DeviceProgramCounts), &'static str> {
    let view = image.view().ok_or("the program image cannot be read")?;
    let mut builder = DeviceProgramBuilder::new();
    let mut counts = DeviceProgramCounts::default();
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
                StepKind::Interpret => {
                    let decoded = block.command(index as u32).and_then(|command| command.decode());
                    let flags = block.command(index as u32).map(|command| command.flags());
                    match (decoded, flags) {
                        (Some(DecodedCommand::Barrier(_)), Some(flags)) => {
                            let header = PacketType::BarrierAnd as u16 | flags.packet_header_bits();
                            let packet = BarrierAndPacket { header: PacketHeader(header), ..Default::default() };
                            builder.push_baked(bytemuck::cast(packet), command);
                        }
                        (
                            Some(DecodedCommand::Branch(_) | DecodedCommand::CondBranch(_) | DecodedCommand::Return(_)),
                            _,
                        )
                        | (None, _) => {}
                        (Some(DecodedCommand::Dispatch(dispatch)), Some(flags))
                            if dispatch.strategy() == Some(KernargStrategy::Indirect) =>
                        {
                            indirect(&mut builder, image, &block, &dispatch, flags, command)?;
                        }
                        (Some(DecodedCommand::Dispatch(dispatch)), _) => {
                            let (body, template, patches) = pointer_scatter(&block, &dispatch)?;
                            builder.push_template(body, &template, &patches, command);
                        }
                        (Some(decoded), Some(flags)) => {
                            let transfer = Transfer { image, block: &block, rodata: facts.rodata_address };
                            let (body, template, patches) = transfer.packet(&decoded, flags)?;
                            counts.dynamic_transfers += u32::from(!patches.is_empty());
                            builder.push_template(body, &template, &patches, command);
                        }
                        (Some(_), None) => return Err("a command cannot be read"),
                    }
                }
            }
        }
        let end = block_end(&view, ordinal, facts.header.terminator_kind())?;
        counts.conditional_branches += u32::from(matches!(end, BlockEnd::CondBranch { .. }));
        builder.end_block(end);
    }
    Ok((builder.finish(), counts))
}

/// What the cost model weighs besides the packet count.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceProgramCounts {
    pub conditional_branches: u32,
    /// Transfers with a dynamic side, which the device writes with kernels planned for any
    /// alignment (byte-wise or unaligned): slower than the host's, which sees the addresses.
    pub dynamic_transfers: u32,
}

/// A packet body with its header word, its kernarg template, and a patch `(kernarg_offset, slot,
/// offset)` per dynamic binding.
type TemplatePacket = ([u8; 64], Vec<u8>, Vec<Patch>);

/// `(kernarg_offset, slot, offset)`: write slot `slot`'s base plus `offset` at the kernarg byte.
type Patch = (u32, u32, u64);

/// A pointer-scatter dispatch as a template: its constants (and implicit block) in place, a
/// patch for each dynamic binding, static bindings written in.
fn pointer_scatter(block: &Block<'_>, dispatch: &DispatchCommand) -> Result<TemplatePacket, &'static str> {
    let constants = block.constants(dispatch).ok_or("a dispatch's constants are missing")?;
    let mut template = vec![0u8; usize::from(dispatch.kernarg_size)];
    let mut patches = Vec::new();
    let pointers = block.dispatch_sources(dispatch).enumerate().map(|(index, source)| match source.source_kind() {
        Some(SourceKind::Static) => Ok(source.value),
        Some(SourceKind::Dynamic) => {
            patches.push((8 * index as u32, source.slot, source.value));
            Ok(0)
        }
        None => Err("a binding source is malformed"),
    });
    let implicit = (dispatch.implicit_args_offset != NO_IMPLICIT_ARGS).then(|| {
        (
            u32::from(dispatch.implicit_args_offset),
            ImplicitKernargs::for_grid(dispatch.grid_size, dispatch.workgroup_size),
        )
    });
    let implicit = implicit.as_ref().map(|(offset, block)| (*offset, block));
    aqueduct_abi::try_write_hal_kernargs(&mut template, pointers, constants, implicit)?;
    let body = bytemuck::cast(dispatch.template().packet(0, 0));
    Ok((with_header(body, dispatch.header_word()), template, patches))
}

/// An indirect dispatch as two packets, as the host writes it: a `patch_indirect` builtin
/// packet that reads the workgroup counts, writes the grid (and the implicit block counts) into
/// the dispatch's slot and then stores its header; and the dispatch itself, whose header the
/// processor leaves INVALID. The processor fills in the patch's target slot and implicit
/// arguments' address, which exist only once it has placed them.
fn indirect(
    builder: &mut DeviceProgramBuilder,
    image: &ProgramImage,
    block: &Block<'_>,
    dispatch: &DispatchCommand,
    flags: CommandFlags,
    command: u32,
) -> Result<(), &'static str> {
    let patch_kernel = image
        .builtins
        .get(Builtin::PatchIndirect as usize)
        .copied()
        .filter(|kernel| kernel.kernel_object != 0)
        .ok_or("the device library lacks patch_indirect")?;
    let counts = block.source(u32::from(dispatch.indirect_source)).ok_or("an indirect count source is missing")?;
    let (counts_address, patch_patches) = match counts.source_kind() {
        Some(SourceKind::Static) => (counts.value, vec![]),
        Some(SourceKind::Dynamic) => (0, vec![(8, counts.slot, counts.value)]),
        None => return Err("an indirect count source is malformed"),
    };
    let args = PatchIndirectArgs {
        packet: 0,
        counts: counts_address,
        implicit_args: 0,
        header: dispatch.header_word(),
        reserved: 0,
    };
    let patch = patch_kernel.template(1, 1);
    let word =
        PacketType::KernelDispatch as u32 | u32::from(flags.packet_header_bits()) | u32::from(patch.dimensions) << 16;
    let target_implicit = if dispatch.implicit_args_offset == NO_IMPLICIT_ARGS {
        NO_TARGET_IMPLICIT_ARGS
    } else {
        u32::from(dispatch.implicit_args_offset)
    };
    builder.push_template_with(
        with_header(bytemuck::cast(patch.packet(0, 0)), word),
        bytemuck::bytes_of(&args),
        &patch_patches,
        command,
        PACKET_PATCHES_NEXT,
        target_implicit,
    );
    // The dispatch: its template (static pointers, constants, implicit block) and its patches.
    let template = block.template(dispatch).ok_or("an indirect dispatch's template is missing")?;
    let mut kernargs = vec![0u8; usize::from(dispatch.kernarg_size)];
    let length = template.len().min(kernargs.len());
    kernargs[..length].copy_from_slice(&template[..length]);
    let mut patches = Vec::new();
    for record in block.dispatch_patches(dispatch) {
        let source = block.source(u32::from(record.source_index)).ok_or("a binding source is missing")?;
        match source.source_kind() {
            Some(SourceKind::Dynamic) => patches.push((record.kernarg_offset, source.slot, source.value)),
            Some(SourceKind::Static) => {
                let at = record.kernarg_offset as usize;
                kernargs
                    .get_mut(at..at + 8)
                    .ok_or("a patch lies outside the kernargs")?
                    .copy_from_slice(&source.value.to_le_bytes());
            }
            None => return Err("a binding source is malformed"),
        }
    }
    let body = with_header(bytemuck::cast(dispatch.template().packet(0, 0)), dispatch.header_word());
    builder.push_template_with(
        body,
        &kernargs,
        &patches,
        command,
        PACKET_HEADER_LEFT_TO_DEVICE,
        NO_TARGET_IMPLICIT_ARGS,
    );
    Ok(())
}

/// A fill, copy, update or profile marker as a builtin dispatch with a kernarg template. A
/// dynamic side is planned for any address (the byte-wise fill, the unaligned or byte-wise copy),
/// since its alignment is known only per execution; its pointer is a patch.
struct Transfer<'a, 'b> {
    image: &'a ProgramImage,
    block: &'a Block<'b>,
    /// The device address of the block's rodata (an update's payload).
    rodata: u64,
}

/// Where a planner may put a dynamic side: odd, and far from any other, so the plan fits any
/// alignment and no overlap check fires on it.
const ANY_ALIGNMENT: [u64; 2] = [1, (1 << 40) + 1];

impl Transfer<'_, '_> {
    /// The address to plan with and, for a dynamic side, its patch at `kernarg_offset`.
    fn side(&self, source: u16, kernarg_offset: u32, which: usize) -> Result<(u64, Option<Patch>), &'static str> {
        let source = self.block.source(u32::from(source)).ok_or("a binding source is missing")?;
        match source.source_kind() {
            Some(SourceKind::Static) => Ok((source.value, None)),
            Some(SourceKind::Dynamic) => Ok((ANY_ALIGNMENT[which], Some((kernarg_offset, source.slot, source.value)))),
            None => Err("a binding source is malformed"),
        }
    }

    fn packet(&self, command: &DecodedCommand, flags: CommandFlags) -> Result<TemplatePacket, &'static str> {
        let unplanned = |_| "a transfer has no plan";
        let (plan, patches) = match command {
            DecodedCommand::Fill(fill) => {
                let (target, patch) = self.side(fill.target, 0, 0)?;
                (
                    aqueduct_builtins::plan_fill(target, fill.length, fill.pattern, fill.width).map_err(unplanned)?,
                    vec![patch],
                )
            }
            DecodedCommand::Copy(copy) => {
                let (source, from) = self.side(copy.source, 0, 0)?;
                let (target, to) = self.side(copy.target, 8, 1)?;
                (aqueduct_builtins::plan_copy(source, target, copy.length).map_err(unplanned)?, vec![from, to])
            }
            DecodedCommand::Update(update) => {
                if self.rodata == 0 {
                    return Err("an update's payload is not in device memory");
                }
                let source = self.rodata + u64::from(update.payload_offset);
                let (target, to) = self.side(update.target, 8, 1)?;
                (aqueduct_builtins::plan_copy(source, target, u64::from(update.length)).map_err(unplanned)?, vec![to])
            }
            DecodedCommand::ProfileMarker(marker) => {
                let (target, patch) = self.side(marker.target, 0, 0)?;
                let target = if patch.is_some() { 8 } else { target };
                (aqueduct_builtins::plan_timestamp(target).map_err(unplanned)?, vec![patch])
            }
            _ => return Err("a command the device processor does not write"),
        };
        let kernel = self
            .image
            .builtins
            .get(plan.kernel as usize)
            .copied()
            .filter(|kernel| kernel.kernel_object != 0)
            .ok_or("the device library lacks a transfer kernel")?;
        let mut template = plan.kernarg_bytes().to_vec();
        let patches: Vec<_> = patches.into_iter().flatten().collect();
        for &(offset, _, _) in &patches {
            template[offset as usize..offset as usize + 8].fill(0);
        }
        let dispatch = kernel.template(plan.grid_size, plan.workgroup_size);
        let word = PacketType::KernelDispatch as u32
            | u32::from(flags.packet_header_bits())
            | u32::from(dispatch.dimensions) << 16;
        Ok((with_header(bytemuck::cast(dispatch.packet(0, 0)), word), template, patches))
    }
}

/// `body` with its header word (`header | setup << 16`) in its first four bytes.
fn with_header(mut body: [u8; 64], word: u32) -> [u8; 64] {
    body[..4].copy_from_slice(&word.to_le_bytes());
    body
}

/// A finished packet with its header word (`header | setup << 16`), kernarg address and no
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
