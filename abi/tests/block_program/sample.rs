//! A valid four-block program that uses every command kind, every kernarg strategy and every
//! terminator, shared by the block-program test binaries.
//!
//! ```text
//! block 0 (cond branch): patched-template dispatch, fill, copy, update, barrier, marker, cond branch -> 1 | 2
//! block 1 (fallthrough): pointer-scatter dispatch, prepublished dispatch
//! block 2 (branch):      indirect dispatch, branch -> 3
//! block 3 (return):      fill, return
//! ```

use aqueduct_abi::block_program::{
    BarrierCommand, BindingSource, BlockBuf, BlockProgramBuf, BranchCommand, CommandFlags, CommandRecord, CompareOp,
    CondBranchCommand, CopyCommand, DispatchCommand, FillCommand, KernargStrategy, PatchRecord, ProfileMarkerCommand,
    ReturnCommand, TerminatorKind, UpdateCommand,
};
use aqueduct_abi::packet::FenceScope;

pub const KERNEL_0: u64 = 0x7000_0040;
pub const KERNEL_1: u64 = 0x7000_0080;
pub const KERNEL_2: u64 = 0x7000_00c0;
pub const KERNEL_3: u64 = 0x7000_0100;

/// Block 0's kernarg template: 64 bytes, byte i = i.
pub fn template0() -> Vec<u8> {
    (0..64).collect()
}

pub const UPDATE_PAYLOAD: [u8; 12] = *b"hello, block";
pub const CONSTANTS: [u32; 2] = [5, 9];

pub fn sample() -> BlockProgramBuf {
    let mut program = BlockProgramBuf::new();

    let mut block = BlockBuf::new(TerminatorKind::CondBranch);
    let s0 = block.push_source(BindingSource::fixed(0x1_0000_0000));
    let s1 = block.push_source(BindingSource::dynamic(0, 0));
    let s2 = block.push_source(BindingSource::dynamic(2, 256));
    let s3 = block.push_source(BindingSource::fixed(0x1_0000_1000));
    let template = block.push_rodata(&template0(), 16);
    let payload = block.push_rodata(&UPDATE_PAYLOAD, 4);
    let p0 = block.push_patch(PatchRecord::new(8, s1));
    block.push_patch(PatchRecord::new(16, s2));
    let mut dispatch = DispatchCommand::new(KernargStrategy::PatchedTemplate, KERNEL_0, [256, 4, 1], [64, 1, 1]);
    dispatch.kernarg_size = 64;
    dispatch.template_offset = template;
    dispatch.template_length = 64;
    dispatch.first_source = s0;
    dispatch.source_count = 3;
    dispatch.first_patch = p0;
    dispatch.patch_count = 2;
    dispatch.implicit_args_offset = 40;
    dispatch.group_segment_size = 128;
    dispatch.private_segment_size = 16;
    block.push_command(dispatch.with_flags(CommandFlags::new(true, FenceScope::System, FenceScope::None)));
    block.push_command(FillCommand::new(s0, 1024, 0xAB, 1).with_flags(CommandFlags::new(
        false,
        FenceScope::None,
        FenceScope::Agent,
    )));
    block.push_command(CopyCommand::new(s0, s1, 4096));
    block.push_command(UpdateCommand::new(s2, payload, UPDATE_PAYLOAD.len() as u32));
    block.push_command(BarrierCommand::new(FenceScope::Agent, FenceScope::System));
    block.push_command(ProfileMarkerCommand::new(0, 7));
    block.push_command(CondBranchCommand::new(s3, 4, CompareOp::Ne, 0, 1, 2));
    program.push_block(block);

    let mut block = BlockBuf::new(TerminatorKind::Fallthrough);
    let s0 = block.push_source(BindingSource::dynamic(1, 64));
    block.push_source(BindingSource::dynamic(0, 128));
    let constants = block.push_rodata(bytemuck::cast_slice(&CONSTANTS), 4);
    let prepublished = block.push_rodata(&[0x5A; 32], 16);
    let mut scatter = DispatchCommand::new(KernargStrategy::PointerScatter, KERNEL_1, [1024, 1, 1], [256, 1, 1]);
    scatter.kernarg_size = 24;
    scatter.first_source = s0;
    scatter.source_count = 2;
    scatter.constants_offset = constants;
    scatter.constant_count = 2;
    block.push_command(scatter);
    let mut baked = DispatchCommand::new(KernargStrategy::Prepublished, KERNEL_2, [64, 64, 2], [8, 8, 1]);
    baked.kernarg_size = 32;
    baked.template_offset = prepublished;
    baked.template_length = 32;
    block.push_command(baked);
    program.push_block(block);

    let mut block = BlockBuf::new(TerminatorKind::Branch);
    let args = block.push_source(BindingSource::dynamic(2, 0));
    let grid = block.push_source(BindingSource::fixed(0x1_0000_2000));
    let template = block.push_rodata(&[0x11; 48], 16);
    let patch = block.push_patch(PatchRecord::new(0, args));
    let mut indirect = DispatchCommand::new(KernargStrategy::Indirect, KERNEL_3, [1, 1, 1], [64, 1, 1]);
    indirect.kernarg_size = 48;
    indirect.template_offset = template;
    indirect.template_length = 48;
    indirect.first_source = args;
    indirect.source_count = 1;
    indirect.first_patch = patch;
    indirect.patch_count = 1;
    indirect.implicit_args_offset = 16;
    indirect.indirect_source = grid;
    block.push_command(indirect);
    block.push_command(BranchCommand::new(3));
    program.push_block(block);

    let mut block = BlockBuf::new(TerminatorKind::Return);
    let target = block.push_source(BindingSource::fixed(0x1_0000_3000));
    block.push_command(FillCommand::new(target, 64, 0xDEAD_BEEF, 4));
    block.push_command(ReturnCommand::new());
    program.push_block(block);

    program
}
