//! Block-program ABI: record layouts, build -> bytes -> validate -> read-back round trip, and one
//! rejection test per malformed field (each mutates the valid sample's bytes and asserts the exact
//! error, including the field it names).

#[path = "block_program/sample.rs"]
mod sample;

use core::mem::{offset_of, size_of};

use aqueduct_abi::block_program::{
    BLOCK_MAGIC, BarrierCommand, BindingSource, BlockBuf, BlockHeader, BlockProgramBuf, BranchCommand, Command,
    CommandFlags, CommandHeader, CommandKind, CommandRecord, CompareOp, CondBranchCommand, CopyCommand, DecodedCommand,
    DispatchCommand, FillCommand, KernargStrategy, Location, PROGRAM_MAGIC, PROGRAM_VERSION, PatchRecord,
    ProfileMarkerCommand, ProgramError, ProgramHeader, ReturnCommand, Section, TerminatorKind, UpdateCommand, validate,
};
use aqueduct_abi::packet::{FenceScope, PacketHeader, PacketType};
use bytemuck::Pod;
use sample::sample;

// ---------------------------------------------------------------------------------------------
// Layouts

#[test]
fn header_and_record_layouts() {
    assert_eq!(size_of::<ProgramHeader>(), 32);
    assert_eq!(offset_of!(ProgramHeader, magic), 0);
    assert_eq!(offset_of!(ProgramHeader, version), 4);
    assert_eq!(offset_of!(ProgramHeader, reserved0), 6);
    assert_eq!(offset_of!(ProgramHeader, total_length), 8);
    assert_eq!(offset_of!(ProgramHeader, block_count), 12);
    assert_eq!(offset_of!(ProgramHeader, block_table_offset), 16);
    assert_eq!(offset_of!(ProgramHeader, binding_slot_count), 20);
    assert_eq!(offset_of!(ProgramHeader, reserved1), 24);

    assert_eq!(size_of::<BlockHeader>(), 64);
    assert_eq!(offset_of!(BlockHeader, magic), 0);
    assert_eq!(offset_of!(BlockHeader, version), 4);
    assert_eq!(offset_of!(BlockHeader, terminator), 6);
    assert_eq!(offset_of!(BlockHeader, reserved0), 7);
    assert_eq!(offset_of!(BlockHeader, ordinal), 8);
    assert_eq!(offset_of!(BlockHeader, block_length), 12);
    assert_eq!(offset_of!(BlockHeader, command_offset), 16);
    assert_eq!(offset_of!(BlockHeader, command_count), 20);
    assert_eq!(offset_of!(BlockHeader, source_offset), 24);
    assert_eq!(offset_of!(BlockHeader, static_source_count), 28);
    assert_eq!(offset_of!(BlockHeader, dynamic_source_count), 32);
    assert_eq!(offset_of!(BlockHeader, patch_offset), 36);
    assert_eq!(offset_of!(BlockHeader, patch_count), 40);
    assert_eq!(offset_of!(BlockHeader, rodata_offset), 44);
    assert_eq!(offset_of!(BlockHeader, rodata_length), 48);
    assert_eq!(offset_of!(BlockHeader, max_packet_count), 52);
    assert_eq!(offset_of!(BlockHeader, max_kernarg_bytes), 56);
    assert_eq!(offset_of!(BlockHeader, reserved1), 60);

    assert_eq!(size_of::<BindingSource>(), 16);
    assert_eq!(offset_of!(BindingSource, kind), 0);
    assert_eq!(offset_of!(BindingSource, reserved), 1);
    assert_eq!(offset_of!(BindingSource, slot), 4);
    assert_eq!(offset_of!(BindingSource, value), 8);

    assert_eq!(size_of::<PatchRecord>(), 8);
    assert_eq!(offset_of!(PatchRecord, kernarg_offset), 0);
    assert_eq!(offset_of!(PatchRecord, source_index), 4);
    assert_eq!(offset_of!(PatchRecord, reserved), 6);

    assert_eq!(size_of::<CommandHeader>(), 2);
    assert_eq!(offset_of!(CommandHeader, kind), 0);
    assert_eq!(offset_of!(CommandHeader, flags), 1);
    assert_eq!((size_of::<Command>(), align_of::<Command>()), (64, 8));
}

#[test]
fn command_layouts() {
    fn record<T: CommandRecord>() {
        assert_eq!((size_of::<T>(), align_of::<T>()), (64, 8), "{:?}", T::KIND);
    }
    record::<DispatchCommand>();
    record::<FillCommand>();
    record::<CopyCommand>();
    record::<UpdateCommand>();
    record::<BarrierCommand>();
    record::<ProfileMarkerCommand>();
    record::<BranchCommand>();
    record::<CondBranchCommand>();
    record::<ReturnCommand>();

    let dispatch = [
        (offset_of!(DispatchCommand, header), 0),
        (offset_of!(DispatchCommand, kernarg_strategy), 2),
        (offset_of!(DispatchCommand, kernarg_alignment), 3),
        (offset_of!(DispatchCommand, workgroup_size), 4),
        (offset_of!(DispatchCommand, kernarg_size), 10),
        (offset_of!(DispatchCommand, grid_size), 12),
        (offset_of!(DispatchCommand, kernel_object), 24),
        (offset_of!(DispatchCommand, private_segment_size), 32),
        (offset_of!(DispatchCommand, group_segment_size), 36),
        (offset_of!(DispatchCommand, template_offset), 40),
        (offset_of!(DispatchCommand, constants_offset), 44),
        (offset_of!(DispatchCommand, template_length), 48),
        (offset_of!(DispatchCommand, constant_count), 50),
        (offset_of!(DispatchCommand, first_source), 52),
        (offset_of!(DispatchCommand, source_count), 54),
        (offset_of!(DispatchCommand, first_patch), 56),
        (offset_of!(DispatchCommand, patch_count), 58),
        (offset_of!(DispatchCommand, implicit_args_offset), 60),
        (offset_of!(DispatchCommand, indirect_source), 62),
    ];
    let fill = [
        (offset_of!(FillCommand, width), 2),
        (offset_of!(FillCommand, reserved0), 3),
        (offset_of!(FillCommand, target), 4),
        (offset_of!(FillCommand, reserved1), 6),
        (offset_of!(FillCommand, length), 8),
        (offset_of!(FillCommand, pattern), 16),
        (offset_of!(FillCommand, reserved2), 24),
    ];
    let copy = [
        (offset_of!(CopyCommand, reserved0), 2),
        (offset_of!(CopyCommand, source), 4),
        (offset_of!(CopyCommand, target), 6),
        (offset_of!(CopyCommand, length), 8),
        (offset_of!(CopyCommand, reserved1), 16),
    ];
    let update = [
        (offset_of!(UpdateCommand, reserved0), 2),
        (offset_of!(UpdateCommand, target), 4),
        (offset_of!(UpdateCommand, reserved1), 6),
        (offset_of!(UpdateCommand, payload_offset), 8),
        (offset_of!(UpdateCommand, length), 12),
        (offset_of!(UpdateCommand, reserved2), 16),
    ];
    let others = [
        (offset_of!(BarrierCommand, reserved0), 2),
        (offset_of!(BarrierCommand, reserved1), 8),
        (offset_of!(ProfileMarkerCommand, target), 2),
        (offset_of!(ProfileMarkerCommand, marker_id), 4),
        (offset_of!(ProfileMarkerCommand, reserved1), 8),
        (offset_of!(BranchCommand, target_block), 4),
        (offset_of!(BranchCommand, reserved1), 8),
        (offset_of!(CondBranchCommand, width), 2),
        (offset_of!(CondBranchCommand, compare), 3),
        (offset_of!(CondBranchCommand, source), 4),
        (offset_of!(CondBranchCommand, reserved0), 6),
        (offset_of!(CondBranchCommand, operand), 8),
        (offset_of!(CondBranchCommand, taken_block), 16),
        (offset_of!(CondBranchCommand, not_taken_block), 20),
        (offset_of!(CondBranchCommand, reserved1), 24),
        (offset_of!(ReturnCommand, reserved0), 2),
        (offset_of!(ReturnCommand, reserved1), 8),
    ];
    for (actual, expected) in dispatch.iter().chain(&fill).chain(&copy).chain(&update).chain(&others) {
        assert_eq!(actual, expected);
    }
}

#[test]
fn kind_and_flags_sit_in_the_first_two_bytes_of_every_kind() {
    let flags = CommandFlags::new(true, FenceScope::Agent, FenceScope::System);
    let commands: [Command; 9] = [
        DispatchCommand::new(KernargStrategy::Prepublished, 64, [1; 3], [1; 3]).with_flags(flags).into(),
        FillCommand::new(0, 0, 0, 1).with_flags(flags).into(),
        CopyCommand::new(0, 0, 0).with_flags(flags).into(),
        UpdateCommand::new(0, 0, 0).with_flags(flags).into(),
        BarrierCommand::new(FenceScope::Agent, FenceScope::System).into(),
        ProfileMarkerCommand::new(0, 1).with_flags(flags).into(),
        BranchCommand::new(0).with_flags(flags).into(),
        CondBranchCommand::new(0, 4, CompareOp::Eq, 0, 0, 0).with_flags(flags).into(),
        ReturnCommand::new().with_flags(flags).into(),
    ];
    for (kind, command) in (1u8..).zip(&commands) {
        assert_eq!(command.bytes[0], kind);
        assert_eq!(command.kind(), CommandKind::from_bits(kind));
        assert_eq!(command.flags(), flags);
        let decoded = command.decode().unwrap();
        assert_eq!(decoded.kind() as u8, kind);
        assert_eq!(&decoded.to_command(), command);
    }
}

#[test]
fn flags_land_on_the_aql_header_bits() {
    for barrier in [false, true] {
        for acquire in [FenceScope::None, FenceScope::Agent, FenceScope::System] {
            for release in [FenceScope::None, FenceScope::Agent, FenceScope::System] {
                let flags = CommandFlags::new(barrier, acquire, release);
                assert_eq!(
                    (flags.barrier(), flags.acquire(), flags.release()),
                    (barrier, Some(acquire), Some(release))
                );
                let header = PacketType::KernelDispatch as u16 | flags.packet_header_bits();
                assert_eq!(header, PacketHeader::new(PacketType::KernelDispatch, barrier, acquire, release).0);
            }
        }
    }
    assert_eq!(CommandFlags(3 << CommandFlags::ACQUIRE_SHIFT).acquire(), None);
    assert_eq!(CommandFlags(3 << CommandFlags::RELEASE_SHIFT).release(), None);
}

// ---------------------------------------------------------------------------------------------
// Round trip

#[test]
fn round_trip_reads_back_every_record() {
    let built = sample();
    let bytes = built.to_bytes();
    let program = validate(&bytes).expect("the sample validates");
    assert_eq!(BlockProgramBuf::from_program(&program), built);

    let header = program.header();
    assert_eq!((header.magic, header.version), (PROGRAM_MAGIC, PROGRAM_VERSION));
    assert_eq!(header.total_length as usize, bytes.len());
    assert_eq!(program.block_count(), 4);
    assert_eq!(program.binding_slot_count(), 3);

    // Block 0: everything the builder derived.
    let block = program.entry().unwrap();
    let h = *block.header();
    assert_eq!((h.magic, h.version, h.ordinal), (BLOCK_MAGIC, PROGRAM_VERSION, 0));
    assert_eq!(block.terminator(), Some(TerminatorKind::CondBranch));
    assert_eq!((h.command_count, h.static_source_count, h.dynamic_source_count, h.patch_count), (7, 2, 2, 2));
    assert_eq!((h.command_offset, h.source_offset, h.patch_offset, h.rodata_offset), (64, 512, 576, 640));
    assert_eq!(h.rodata_length, 76);
    assert_eq!(h.block_length, 768);
    // dispatch 1+64, fill 1+64, copy 1+64, update 1+64, barrier 1, marker 1+64, cond branch 0.
    assert_eq!((h.max_packet_count, h.max_kernarg_bytes), (6, 320));
    assert_eq!(block.offset() % 64, 0);

    let Some(DecodedCommand::Dispatch(dispatch)) = block.command(0).and_then(|c| c.decode()) else {
        panic!("command 0 is a dispatch")
    };
    assert_eq!(dispatch.strategy(), Some(KernargStrategy::PatchedTemplate));
    assert_eq!(dispatch.kernel_object, sample::KERNEL_0);
    assert_eq!((dispatch.grid_size, dispatch.workgroup_size), ([256, 4, 1], [64, 1, 1]));
    assert_eq!((dispatch.group_segment_size, dispatch.private_segment_size), (128, 16));
    assert_eq!(dispatch.header.flags, CommandFlags::new(true, FenceScope::System, FenceScope::None));
    assert_eq!(block.template(&dispatch), Some(&sample::template0()[..]));
    let patches: Vec<_> = block.dispatch_patches(&dispatch).collect();
    assert_eq!(patches, [PatchRecord::new(8, 1), PatchRecord::new(16, 2)]);

    // Binding sources resolve against a binding table of base pointers.
    let table = [0xA000, 0xB000, 0xC000];
    let resolved: Vec<_> = block.dispatch_sources(&dispatch).map(|s| s.resolve(&table)).collect();
    assert_eq!(resolved, [Some(0x1_0000_0000), Some(0xA000), Some(0xC000 + 256)]);
    assert_eq!(BindingSource::dynamic(3, 0).resolve(&table), None);
    assert_eq!(BindingSource::dynamic(0, u64::MAX).resolve(&table), None);

    let Some(DecodedCommand::Update(update)) = block.command(3).and_then(|c| c.decode()) else { panic!() };
    assert_eq!(block.update_payload(&update), Some(&sample::UPDATE_PAYLOAD[..]));
    let Some(DecodedCommand::Barrier(barrier)) = block.command(4).and_then(|c| c.decode()) else { panic!() };
    assert_eq!((barrier.acquire(), barrier.release()), (Some(FenceScope::Agent), Some(FenceScope::System)));
    let Some(DecodedCommand::CondBranch(branch)) = block.command(6).and_then(|c| c.decode()) else { panic!() };
    assert_eq!((branch.next_block(0), branch.next_block(1), branch.next_block(1 << 32)), (Some(2), Some(1), Some(2)));
    assert_eq!(block.command(7), None);
    assert_eq!(block.source(4), None);
    assert_eq!(block.patch(2), None);

    // Block 1: pointer scatter reads its constants; prepublished points at its template.
    let block = program.block(1).unwrap();
    let Some(DecodedCommand::Dispatch(scatter)) = block.command(0).and_then(|c| c.decode()) else { panic!() };
    assert_eq!(block.constants(&scatter), Some(bytemuck::cast_slice::<u32, u8>(&sample::CONSTANTS)));
    let Some(DecodedCommand::Dispatch(baked)) = block.command(1).and_then(|c| c.decode()) else { panic!() };
    assert_eq!(block.template(&baked), Some(&[0x5A; 32][..]));
    assert_eq!((block.header().max_packet_count, block.header().max_kernarg_bytes), (2, 64));

    // Block 2: an indirect dispatch costs the patch packet and its kernargs too.
    let block = program.block(2).unwrap();
    assert_eq!((block.header().max_packet_count, block.header().max_kernarg_bytes), (2, 128));
    assert_eq!(program.block(4).map(|b| b.ordinal()), None);
    assert_eq!(program.blocks().map(|b| b.ordinal()).collect::<Vec<_>>(), [0, 1, 2, 3]);
}

#[test]
fn validates_at_any_base_address() {
    let bytes = sample().to_bytes();
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    let program = validate(&shifted[1..]).expect("alignment of the slice does not matter");
    assert_eq!(BlockProgramBuf::from_program(&program), sample());
}

#[test]
fn every_strict_prefix_is_rejected() {
    let bytes = sample().to_bytes();
    for length in 0..bytes.len() {
        assert!(validate(&bytes[..length]).is_err(), "prefix of {length} bytes");
    }
}

#[test]
fn errors_display_location_and_field() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.grid_size[2] = 0);
    assert_eq!(error.to_string(), "block 0 command 0: grid_size axis 2 is zero");
    assert_eq!(error.field(), "grid_size");
    assert_eq!(error.location(), Location::Command { block: 0, command: 0 });
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(!boxed.to_string().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Mutation helpers: each starts from the valid sample image, changes one thing, and returns the
// validator's error (panicking if it still validates).

fn image() -> Vec<u8> {
    sample().to_bytes()
}

fn reject(bytes: &[u8]) -> ProgramError {
    match validate(bytes) {
        Ok(_) => panic!("mutated program still validates"),
        Err(error) => error,
    }
}

fn edit<T: Pod>(bytes: &mut [u8], offset: usize, change: impl FnOnce(&mut T)) {
    let range = offset..offset + size_of::<T>();
    let mut value: T = bytemuck::pod_read_unaligned(&bytes[range.clone()]);
    change(&mut value);
    bytes[range].copy_from_slice(bytemuck::bytes_of(&value));
}

/// The block's offset and header in the unmutated image.
fn block_at(bytes: &[u8], block: u32) -> (usize, BlockHeader) {
    let program = validate(bytes).unwrap();
    let block = program.block(block).unwrap();
    (block.offset() as usize, *block.header())
}

fn with_bytes(change: impl FnOnce(&mut Vec<u8>)) -> ProgramError {
    let mut bytes = image();
    change(&mut bytes);
    reject(&bytes)
}

fn with_program_header(change: impl FnOnce(&mut ProgramHeader)) -> ProgramError {
    with_bytes(|bytes| edit(bytes, 0, change))
}

fn with_block_header(block: u32, change: impl FnOnce(&mut BlockHeader)) -> ProgramError {
    with_bytes(|bytes| {
        let (offset, _) = block_at(bytes, block);
        edit(bytes, offset, change)
    })
}

/// Rewrites block `block`'s table entry.
fn with_block_offset(block: u32, change: impl FnOnce(&mut u32)) -> ProgramError {
    with_bytes(|bytes| {
        let table = validate(bytes).unwrap().header().block_table_offset as usize;
        edit(bytes, table + 4 * block as usize, change)
    })
}

fn with_command<T: CommandRecord>(block: u32, command: u32, change: impl FnOnce(&mut T)) -> ProgramError {
    with_bytes(|bytes| {
        let (offset, header) = block_at(bytes, block);
        let at = offset + header.command_offset as usize + 64 * command as usize;
        assert_eq!(bytes[at], T::KIND as u8, "block {block} command {command} is not a {:?}", T::KIND);
        edit(bytes, at, change)
    })
}

fn with_raw_command(block: u32, command: u32, change: impl FnOnce(&mut Command)) -> ProgramError {
    with_bytes(|bytes| {
        let (offset, header) = block_at(bytes, block);
        edit(bytes, offset + header.command_offset as usize + 64 * command as usize, change)
    })
}

fn with_source(block: u32, source: u32, change: impl FnOnce(&mut BindingSource)) -> ProgramError {
    with_bytes(|bytes| {
        let (offset, header) = block_at(bytes, block);
        edit(bytes, offset + header.source_offset as usize + 16 * source as usize, change)
    })
}

fn with_patch(block: u32, patch: u32, change: impl FnOnce(&mut PatchRecord)) -> ProgramError {
    with_bytes(|bytes| {
        let (offset, header) = block_at(bytes, block);
        edit(bytes, offset + header.patch_offset as usize + 8 * patch as usize, change)
    })
}

const PROGRAM: Location = Location::Program;

const fn block(block: u32) -> Location {
    Location::Block { block }
}

const fn command(block: u32, command: u32) -> Location {
    Location::Command { block, command }
}

// ---------------------------------------------------------------------------------------------
// Magic, version, truncation, lengths

#[test]
fn rejects_wrong_program_magic() {
    let error = with_program_header(|h| h.magic = u32::from_le_bytes(*b"AQBX"));
    assert_eq!(error, ProgramError::BadMagic { at: PROGRAM, found: u32::from_le_bytes(*b"AQBX") });
    assert_eq!(error.field(), "magic");
}

#[test]
fn rejects_wrong_block_magic() {
    let error = with_block_header(2, |h| h.magic = 0);
    assert_eq!(error, ProgramError::BadMagic { at: block(2), found: 0 });
    assert_eq!(error.field(), "magic");
}

#[test]
fn rejects_wrong_program_version() {
    let error = with_program_header(|h| h.version = 2);
    assert_eq!(error, ProgramError::UnsupportedVersion { at: PROGRAM, found: 2 });
    assert_eq!(error.field(), "version");
}

#[test]
fn rejects_wrong_block_version() {
    let error = with_block_header(1, |h| h.version = 0);
    assert_eq!(error, ProgramError::UnsupportedVersion { at: block(1), found: 0 });
}

#[test]
fn rejects_truncated_image() {
    let length = image().len() as u64;
    let error = with_bytes(|bytes| {
        bytes.pop();
    });
    assert_eq!(
        error,
        ProgramError::Truncated { at: PROGRAM, section: Section::Program, needed: length, available: length - 1 }
    );
    assert_eq!(error.field(), "total_length");
}

#[test]
fn rejects_image_shorter_than_its_header() {
    let error = reject(&image()[..20]);
    assert_eq!(
        error,
        ProgramError::Truncated { at: PROGRAM, section: Section::ProgramHeader, needed: 32, available: 20 }
    );
}

#[test]
fn rejects_trailing_bytes() {
    let length = image().len() as u64;
    let error = with_bytes(|bytes| bytes.push(0));
    assert_eq!(
        error,
        ProgramError::CountMismatch { at: PROGRAM, field: "total_length", declared: length, actual: length + 1 }
    );
}

#[test]
fn rejects_reserved_header_fields() {
    assert_eq!(
        with_program_header(|h| h.reserved1 = 1),
        ProgramError::ReservedNotZero { at: PROGRAM, field: "reserved1" }
    );
    assert_eq!(
        with_block_header(0, |h| h.reserved0 = 1),
        ProgramError::ReservedNotZero { at: block(0), field: "reserved0" }
    );
}

#[test]
fn rejects_empty_program() {
    let error = with_program_header(|h| h.block_count = 0);
    assert_eq!(error, ProgramError::InvalidField { at: PROGRAM, field: "block_count", value: 0 });
}

// ---------------------------------------------------------------------------------------------
// Alignment, ranges and overlap of the table, blocks and sections

#[test]
fn rejects_misaligned_block_table() {
    let error = with_program_header(|h| h.block_table_offset += 2);
    assert_eq!(
        error,
        ProgramError::MisalignedSection { at: PROGRAM, section: Section::BlockTable, offset: 34, align: 4 }
    );
    assert_eq!(error.field(), "block_table_offset");
}

#[test]
fn rejects_misaligned_block() {
    let mut original = 0;
    let error = with_block_offset(3, |offset| {
        original = *offset;
        *offset += 16;
    });
    assert_eq!(
        error,
        ProgramError::MisalignedSection {
            at: block(3),
            section: Section::Block,
            offset: u64::from(original) + 16,
            align: 64
        }
    );
}

#[test]
fn rejects_misaligned_sections() {
    let (_, h) = block_at(&image(), 0);
    type Case = (fn(&mut BlockHeader), Section, u32, u32);
    let cases: [Case; 4] = [
        (|h| h.command_offset += 8, Section::Commands, h.command_offset + 8, 64),
        (|h| h.source_offset += 8, Section::Sources, h.source_offset + 8, 16),
        (|h| h.patch_offset += 4, Section::Patches, h.patch_offset + 4, 8),
        (|h| h.rodata_offset += 16, Section::Rodata, h.rodata_offset + 16, 64),
    ];
    for (change, section, offset, align) in cases {
        let error = with_block_header(0, change);
        assert_eq!(error, ProgramError::MisalignedSection { at: block(0), section, offset: u64::from(offset), align });
    }
}

#[test]
fn rejects_block_table_out_of_range() {
    let length = image().len() as u64;
    let error = with_program_header(|h| h.block_count = 1 << 30);
    assert_eq!(
        error,
        ProgramError::SectionOutOfRange {
            at: PROGRAM,
            section: Section::BlockTable,
            offset: 32,
            length: 4 << 30,
            limit: length
        }
    );
}

#[test]
fn rejects_block_past_the_end() {
    let bytes = image();
    let (offset, header) = block_at(&bytes, 3);
    let error = with_block_header(3, |h| h.block_length += 64);
    assert_eq!(
        error,
        ProgramError::SectionOutOfRange {
            at: block(3),
            section: Section::Block,
            offset: offset as u64,
            length: u64::from(header.block_length) + 64,
            limit: bytes.len() as u64,
        }
    );
    assert_eq!(error.field(), "block_length");
}

#[test]
fn rejects_block_shorter_than_its_header() {
    let error = with_block_header(1, |h| h.block_length = 32);
    assert_eq!(
        error,
        ProgramError::SectionOutOfRange {
            at: block(1),
            section: Section::BlockHeader,
            offset: 0,
            length: 64,
            limit: 32
        }
    );
}

#[test]
fn rejects_section_out_of_range() {
    let (_, header) = block_at(&image(), 0);
    let error = with_block_header(0, |h| h.rodata_length = 4096);
    assert_eq!(
        error,
        ProgramError::SectionOutOfRange {
            at: block(0),
            section: Section::Rodata,
            offset: u64::from(header.rodata_offset),
            length: 4096,
            limit: u64::from(header.block_length),
        }
    );
    assert_eq!(error.field(), "rodata_offset");

    let error = with_block_header(0, |h| h.command_count = 1000);
    assert!(matches!(error, ProgramError::SectionOutOfRange { at, section: Section::Commands, .. } if at == block(0)));
}

#[test]
fn rejects_overlapping_sections() {
    let error = with_block_header(0, |h| h.patch_offset = h.source_offset);
    assert_eq!(
        error,
        ProgramError::OverlappingSections { at: block(0), first: Section::Sources, second: Section::Patches }
    );
    assert_eq!(error.field(), "patch_offset");

    let error = with_block_header(0, |h| h.command_offset = 0);
    assert_eq!(
        error,
        ProgramError::OverlappingSections { at: block(0), first: Section::BlockHeader, second: Section::Commands }
    );
}

#[test]
fn rejects_block_table_overlapping_the_header() {
    let error = with_program_header(|h| h.block_table_offset = 16);
    assert_eq!(
        error,
        ProgramError::OverlappingSections { at: PROGRAM, first: Section::ProgramHeader, second: Section::BlockTable }
    );
}

#[test]
fn rejects_overlapping_blocks() {
    let bytes = image();
    let (block0, _) = block_at(&bytes, 0);
    let error = with_block_offset(1, |offset| *offset = block0 as u32);
    assert_eq!(error, ProgramError::OverlappingBlocks { at: block(1), previous: Some(0) });

    let error = with_block_offset(0, |offset| *offset = 0);
    assert_eq!(error, ProgramError::OverlappingBlocks { at: block(0), previous: None });
}

#[test]
fn rejects_ordinal_mismatch() {
    let error = with_block_header(2, |h| h.ordinal = 1);
    assert_eq!(error, ProgramError::OrdinalMismatch { at: block(2), found: 1 });
    assert_eq!(error.field(), "ordinal");
}

// ---------------------------------------------------------------------------------------------
// Counts, sources and patches

#[test]
fn rejects_source_counts_that_do_not_match() {
    // Source 0 of block 0 is static; retagging it moves one source from the static to the dynamic count.
    let error = with_source(0, 0, |s| *s = BindingSource::dynamic(0, 0));
    assert_eq!(
        error,
        ProgramError::CountMismatch { at: block(0), field: "static_source_count", declared: 2, actual: 1 }
    );
    let error = with_source(1, 1, |s| *s = BindingSource::fixed(0x1000));
    assert_eq!(
        error,
        ProgramError::CountMismatch { at: block(1), field: "static_source_count", declared: 0, actual: 1 }
    );
}

#[test]
fn rejects_unknown_source_kind() {
    let error = with_source(0, 2, |s| s.kind = 7);
    assert_eq!(
        error,
        ProgramError::InvalidField { at: Location::Source { block: 0, source: 2 }, field: "kind", value: 7 }
    );
}

#[test]
fn rejects_dynamic_slot_past_the_binding_table() {
    let error = with_source(0, 1, |s| s.slot = 3);
    assert_eq!(
        error,
        ProgramError::IndexOutOfRange {
            at: Location::Source { block: 0, source: 1 },
            field: "slot",
            index: 3,
            limit: 3
        }
    );
}

#[test]
fn rejects_patch_source_index_out_of_range() {
    let error = with_patch(0, 1, |p| p.source_index = 4);
    assert_eq!(
        error,
        ProgramError::IndexOutOfRange {
            at: Location::Patch { block: 0, patch: 1 },
            field: "source_index",
            index: 4,
            limit: 4
        }
    );
}

#[test]
fn rejects_command_source_index_out_of_range() {
    let error = with_command::<FillCommand>(0, 1, |f| f.target = 99);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 1), field: "target", index: 99, limit: 4 });
    let error = with_command::<CopyCommand>(0, 2, |c| c.source = 4);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 2), field: "source", index: 4, limit: 4 });
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.source = 10);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 6), field: "source", index: 10, limit: 4 });
    let error = with_command::<DispatchCommand>(2, 0, |d| d.indirect_source = 2);
    assert_eq!(
        error,
        ProgramError::IndexOutOfRange { at: command(2, 0), field: "indirect_source", index: 2, limit: 2 }
    );
}

#[test]
fn rejects_dispatch_source_range_out_of_range() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.source_count = 5);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 0), field: "source_count", index: 5, limit: 4 });
    let error = with_command::<DispatchCommand>(0, 0, |d| d.first_source = 4);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 0), field: "first_source", index: 4, limit: 4 });
}

#[test]
fn rejects_dispatch_patch_range_out_of_range() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.first_patch = 1);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(0, 0), field: "patch_count", index: 3, limit: 2 });
    let error = with_command::<DispatchCommand>(2, 0, |d| d.first_patch = 1);
    assert_eq!(error, ProgramError::IndexOutOfRange { at: command(2, 0), field: "first_patch", index: 1, limit: 1 });
}

// ---------------------------------------------------------------------------------------------
// Commands

#[test]
fn rejects_unknown_command_kind() {
    let error = with_raw_command(1, 1, |c| c.bytes[0] = 0x42);
    assert_eq!(error, ProgramError::UnknownCommandKind { at: command(1, 1), kind: 0x42 });
    assert_eq!(error.field(), "kind");
    assert_eq!(
        with_raw_command(3, 0, |c| c.bytes[0] = 0),
        ProgramError::UnknownCommandKind { at: command(3, 0), kind: 0 }
    );
}

#[test]
fn rejects_invalid_fence_scopes() {
    let error = with_raw_command(0, 1, |c| c.bytes[1] |= 3 << CommandFlags::ACQUIRE_SHIFT);
    assert_eq!(error, ProgramError::InvalidFenceScope { at: command(0, 1), field: "acquire", value: 3 });
    let error = with_raw_command(0, 4, |c| c.bytes[1] |= 3 << CommandFlags::RELEASE_SHIFT);
    assert_eq!(error, ProgramError::InvalidFenceScope { at: command(0, 4), field: "release", value: 3 });
    let error = with_raw_command(3, 1, |c| c.bytes[1] = 0x80);
    assert_eq!(error, ProgramError::ReservedNotZero { at: command(3, 1), field: "flags" });
}

#[test]
fn rejects_reserved_command_bytes() {
    let error = with_command::<CopyCommand>(0, 2, |c| c.reserved1[5] = 1);
    assert_eq!(error, ProgramError::ReservedNotZero { at: command(0, 2), field: "reserved1" });
    let error = with_command::<ReturnCommand>(3, 1, |r| r.reserved0[0] = 1);
    assert_eq!(error, ProgramError::ReservedNotZero { at: command(3, 1), field: "reserved0" });
}

#[test]
fn rejects_zero_grid_dimension() {
    let error = with_command::<DispatchCommand>(1, 1, |d| d.grid_size[1] = 0);
    assert_eq!(error, ProgramError::ZeroDimension { at: command(1, 1), field: "grid_size", axis: 1 });
    let error = with_command::<DispatchCommand>(0, 0, |d| d.workgroup_size[0] = 0);
    assert_eq!(error, ProgramError::ZeroDimension { at: command(0, 0), field: "workgroup_size", axis: 0 });
}

#[test]
fn rejects_unknown_kernarg_strategy() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.kernarg_strategy = 0);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 0), field: "kernarg_strategy", value: 0 });
}

#[test]
fn rejects_bad_kernel_object_and_kernarg_alignment() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.kernel_object = 0);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 0), field: "kernel_object", value: 0 });
    let error = with_command::<DispatchCommand>(0, 0, |d| d.kernel_object += 8);
    assert_eq!(
        error,
        ProgramError::MisalignedField {
            at: command(0, 0),
            field: "kernel_object",
            value: sample::KERNEL_0 + 8,
            align: 64
        }
    );
    for alignment in [0, 3, 128] {
        let error = with_command::<DispatchCommand>(0, 0, |d| d.kernarg_alignment = alignment);
        assert_eq!(
            error,
            ProgramError::InvalidField { at: command(0, 0), field: "kernarg_alignment", value: u64::from(alignment) }
        );
    }
}

#[test]
fn rejects_template_shorter_than_kernargs() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.template_length = 56);
    assert_eq!(error, ProgramError::TemplateTooShort { at: command(0, 0), template_length: 56, kernarg_size: 64 });
    assert_eq!(error.field(), "template_length");
    let error = with_command::<DispatchCommand>(1, 1, |d| d.kernarg_size = 48);
    assert_eq!(error, ProgramError::TemplateTooShort { at: command(1, 1), template_length: 32, kernarg_size: 48 });
}

#[test]
fn rejects_template_outside_rodata() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.template_offset = 64);
    assert_eq!(
        error,
        ProgramError::RodataOutOfRange {
            at: command(0, 0),
            field: "template_offset",
            offset: 64,
            length: 64,
            rodata_length: 76
        }
    );
}

#[test]
fn rejects_misaligned_template() {
    let error = with_command::<DispatchCommand>(1, 1, |d| d.template_offset = 8);
    assert_eq!(
        error,
        ProgramError::MisalignedField { at: command(1, 1), field: "template_offset", value: 8, align: 16 }
    );
}

#[test]
fn rejects_update_payload_outside_rodata() {
    let error = with_command::<UpdateCommand>(0, 3, |u| u.length = 13);
    assert_eq!(
        error,
        ProgramError::RodataOutOfRange {
            at: command(0, 3),
            field: "payload_offset",
            offset: 64,
            length: 13,
            rodata_length: 76
        }
    );
    assert_eq!(error.field(), "payload_offset");
}

#[test]
fn rejects_constants_outside_rodata() {
    let error = with_command::<DispatchCommand>(1, 0, |d| d.constants_offset = 44);
    assert_eq!(
        error,
        ProgramError::RodataOutOfRange {
            at: command(1, 0),
            field: "constants_offset",
            offset: 44,
            length: 8,
            rodata_length: 48
        }
    );
    let error = with_command::<DispatchCommand>(1, 0, |d| d.constants_offset = 2);
    assert_eq!(
        error,
        ProgramError::MisalignedField { at: command(1, 0), field: "constants_offset", value: 2, align: 4 }
    );
}

#[test]
fn rejects_scatter_kernargs_past_kernarg_size() {
    let error = with_command::<DispatchCommand>(1, 0, |d| d.kernarg_size = 20);
    assert_eq!(
        error,
        ProgramError::KernargOutOfRange {
            at: command(1, 0),
            field: "constant_count",
            offset: 16,
            length: 8,
            kernarg_size: 20
        }
    );
    let error = with_command::<DispatchCommand>(1, 0, |d| d.kernarg_size = 8);
    assert_eq!(
        error,
        ProgramError::KernargOutOfRange {
            at: command(1, 0),
            field: "source_count",
            offset: 0,
            length: 16,
            kernarg_size: 8
        }
    );
}

#[test]
fn rejects_implicit_args_outside_kernargs() {
    let error = with_command::<DispatchCommand>(0, 0, |d| d.implicit_args_offset = 60);
    assert_eq!(
        error,
        ProgramError::MisalignedField { at: command(0, 0), field: "implicit_args_offset", value: 60, align: 8 }
    );
    let error = with_command::<DispatchCommand>(0, 0, |d| d.implicit_args_offset = 64);
    assert_eq!(
        error,
        ProgramError::KernargOutOfRange {
            at: command(0, 0),
            field: "implicit_args_offset",
            offset: 64,
            length: 8,
            kernarg_size: 64
        }
    );
}

#[test]
fn rejects_strategy_field_mismatches() {
    let error = with_command::<DispatchCommand>(1, 1, |d| d.indirect_source = 0);
    assert_eq!(error, ProgramError::InvalidField { at: command(1, 1), field: "indirect_source", value: 0 });
    let error = with_command::<DispatchCommand>(1, 0, |d| d.template_length = 8);
    assert_eq!(error, ProgramError::InvalidField { at: command(1, 0), field: "template_length", value: 8 });
    // Prepublished kernargs are immutable: block 0's patched-template dispatch, relabelled
    // prepublished, still names two patches.
    let error = with_command::<DispatchCommand>(0, 0, |d| d.kernarg_strategy = KernargStrategy::Prepublished as u8);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 0), field: "patch_count", value: 2 });
}

#[test]
fn rejects_patch_offset_outside_kernargs() {
    let error = with_patch(0, 1, |p| p.kernarg_offset = 64);
    assert_eq!(
        error,
        ProgramError::PatchOutOfRange { at: command(0, 0), patch: 1, kernarg_offset: 64, kernarg_size: 64 }
    );
    assert_eq!(error.field(), "kernarg_offset");
    let error = with_patch(2, 0, |p| p.kernarg_offset = 44);
    assert_eq!(error, ProgramError::MisalignedPatch { at: command(2, 0), patch: 0, kernarg_offset: 44 });
    let error = with_patch(2, 0, |p| p.kernarg_offset = 48);
    assert_eq!(
        error,
        ProgramError::PatchOutOfRange { at: command(2, 0), patch: 0, kernarg_offset: 48, kernarg_size: 48 }
    );
}

#[test]
fn rejects_dispatches_sharing_patches() {
    // A second patched dispatch in block 0 that reuses patches 0..2 of the first.
    let mut program = sample();
    let block0 = &mut program.blocks[0];
    let first = block0.commands[0];
    block0.commands.insert(6, first);
    let bytes = program.to_bytes();
    let error = reject(&bytes);
    assert_eq!(error, ProgramError::OverlappingPatchRanges { at: command(0, 6), first_patch: 0, previous_end: 2 });
    assert_eq!(error.field(), "first_patch");
}

#[test]
fn rejects_misaligned_patch() {
    let error = with_patch(0, 0, |p| p.kernarg_offset = 12);
    assert_eq!(error, ProgramError::MisalignedPatch { at: command(0, 0), patch: 0, kernarg_offset: 12 });
}

#[test]
fn rejects_invalid_fill_width() {
    let error = with_command::<FillCommand>(0, 1, |f| f.width = 3);
    assert_eq!(error, ProgramError::InvalidFillWidth { at: command(0, 1), width: 3 });
    assert_eq!(error.field(), "width");
    let error = with_command::<FillCommand>(3, 0, |f| f.width = 16);
    assert_eq!(error, ProgramError::InvalidFillWidth { at: command(3, 0), width: 16 });
}

#[test]
fn rejects_fill_pattern_and_length_that_do_not_fit_the_width() {
    let error = with_command::<FillCommand>(3, 0, |f| f.pattern = 0x1_0000_0000);
    assert_eq!(error, ProgramError::InvalidField { at: command(3, 0), field: "pattern", value: 0x1_0000_0000 });
    let error = with_command::<FillCommand>(3, 0, |f| f.length = 62);
    assert_eq!(error, ProgramError::MisalignedField { at: command(3, 0), field: "length", value: 62, align: 4 });
}

#[test]
fn rejects_bad_conditional_branch_fields() {
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.width = 2);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 6), field: "width", value: 2 });
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.compare = 6);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 6), field: "compare", value: 6 });
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.operand = 1 << 32);
    assert_eq!(error, ProgramError::InvalidField { at: command(0, 6), field: "operand", value: 1 << 32 });
}

#[test]
fn rejects_branch_target_out_of_range() {
    let error = with_command::<BranchCommand>(2, 1, |b| b.target_block = 4);
    assert_eq!(
        error,
        ProgramError::BranchTargetOutOfRange { at: command(2, 1), field: "target_block", target: 4, block_count: 4 }
    );
    assert_eq!(error.field(), "target_block");
}

#[test]
fn rejects_conditional_branch_targets_out_of_range() {
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.taken_block = 9);
    assert_eq!(
        error,
        ProgramError::BranchTargetOutOfRange { at: command(0, 6), field: "taken_block", target: 9, block_count: 4 }
    );
    let error = with_command::<CondBranchCommand>(0, 6, |c| c.not_taken_block = u32::MAX);
    assert_eq!(
        error,
        ProgramError::BranchTargetOutOfRange {
            at: command(0, 6),
            field: "not_taken_block",
            target: u32::MAX,
            block_count: 4
        }
    );
}

#[test]
fn backward_branches_are_valid() {
    let mut program = sample();
    let mut branch = BranchCommand::new(0);
    branch.header.flags = CommandFlags::new(true, FenceScope::None, FenceScope::None);
    program.blocks[2].commands[1] = branch.into();
    let bytes = program.to_bytes();
    assert!(validate(&bytes).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Worst cases and terminators

#[test]
fn rejects_worst_case_packet_count_too_small() {
    let error = with_block_header(0, |h| h.max_packet_count -= 1);
    assert_eq!(
        error,
        ProgramError::WorstCaseTooSmall { at: block(0), field: "max_packet_count", declared: 5, required: 6 }
    );
}

#[test]
fn rejects_worst_case_kernarg_bytes_too_small() {
    let error = with_block_header(2, |h| h.max_kernarg_bytes = 64);
    assert_eq!(
        error,
        ProgramError::WorstCaseTooSmall { at: block(2), field: "max_kernarg_bytes", declared: 64, required: 128 }
    );
    // Growing a dispatch's kernargs past the recorded worst case is caught the same way.
    let error = with_command::<DispatchCommand>(1, 0, |d| d.kernarg_size = 72);
    assert_eq!(
        error,
        ProgramError::WorstCaseTooSmall { at: block(1), field: "max_kernarg_bytes", declared: 64, required: 128 }
    );
}

#[test]
fn rejects_block_without_its_terminator() {
    // Block 3 says Return, but its last command becomes a profile marker.
    let error = with_raw_command(3, 1, |c| *c = ProfileMarkerCommand::new(0, 1).into());
    assert_eq!(error, ProgramError::MissingTerminator { at: block(3), terminator: TerminatorKind::Return });
    assert_eq!(error.field(), "terminator");
}

#[test]
fn rejects_block_ending_with_the_wrong_control_command() {
    let error = with_block_header(3, |h| h.terminator = TerminatorKind::Branch as u8);
    assert_eq!(
        error,
        ProgramError::TerminatorMismatch {
            at: block(3),
            terminator: TerminatorKind::Branch,
            found: CommandKind::Return
        }
    );
    let error = with_block_header(2, |h| h.terminator = TerminatorKind::Fallthrough as u8);
    assert_eq!(
        error,
        ProgramError::TerminatorMismatch {
            at: block(2),
            terminator: TerminatorKind::Fallthrough,
            found: CommandKind::Branch
        }
    );
}

#[test]
fn rejects_last_block_falling_through() {
    let mut bytes = image();
    let (offset, header) = block_at(&bytes, 3);
    edit(&mut bytes, offset, |h: &mut BlockHeader| h.terminator = TerminatorKind::Fallthrough as u8);
    let last = offset + header.command_offset as usize + 64;
    edit(&mut bytes, last, |c: &mut Command| *c = BarrierCommand::new(FenceScope::None, FenceScope::System).into());
    assert_eq!(reject(&bytes), ProgramError::FallthroughPastEnd { at: block(3) });
}

#[test]
fn rejects_control_command_before_the_end() {
    let error = with_raw_command(1, 0, |c| *c = ReturnCommand::new().into());
    assert_eq!(error, ProgramError::MisplacedControl { at: command(1, 0), kind: CommandKind::Return });
}

#[test]
fn rejects_empty_block_that_needs_a_terminator() {
    let mut program = sample();
    program.blocks.push(BlockBuf::new(TerminatorKind::Return));
    let bytes = program.to_bytes();
    assert_eq!(reject(&bytes), ProgramError::MissingTerminator { at: block(4), terminator: TerminatorKind::Return });
}

#[test]
fn rejects_unknown_terminator() {
    for value in [0, 5, 0xFF] {
        let error = with_block_header(1, |h| h.terminator = value);
        assert_eq!(error, ProgramError::UnknownTerminator { at: block(1), value });
    }
}
