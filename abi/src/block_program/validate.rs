//! One pass over an untrusted image that checks everything execution will rely on.
//!
//! Checks run outside-in (program header, block table, block header, sections, records, commands,
//! then whole-block facts), and the first failure is returned. Arithmetic is done in u64 on u32
//! and u16 fields, which cannot overflow, and every read is bounds-checked, so no input panics.

use super::view::{read, read_element, slice};
use super::{
    BINDING_SOURCE_SIZE, BLOCK_ALIGN, BLOCK_HEADER_SIZE, BLOCK_MAGIC, BLOCK_TABLE_ALIGN, BLOCK_TABLE_ENTRY_SIZE,
    BindingSource, BlockHeader, BlockProgram, COMMAND_ALIGN, COMMAND_SIZE, Command, CommandFlags, DecodedCommand,
    DispatchCommand, ExecutionCost, KernargStrategy, Location, MAX_KERNARG_ALIGNMENT, NO_IMPLICIT_ARGS, NO_SOURCE,
    PATCH_ALIGN, PATCH_RECORD_SIZE, PROGRAM_HEADER_SIZE, PROGRAM_MAGIC, PROGRAM_VERSION, PatchRecord, ProgramError,
    ProgramHeader, RODATA_ALIGN, SOURCE_ALIGN, Section, SourceKind,
};

type Result<T> = core::result::Result<T, ProgramError>;

/// Checks `bytes` as a block program image and returns a view over it.
///
/// `bytes` must be exactly the image (`total_length` bytes); it may sit at any address.
pub fn validate(bytes: &[u8]) -> Result<BlockProgram<'_>> {
    let at = Location::Program;
    let available = bytes.len() as u64;
    let header: ProgramHeader = read(bytes, 0).ok_or(ProgramError::Truncated {
        at,
        section: Section::ProgramHeader,
        needed: u64::from(PROGRAM_HEADER_SIZE),
        available,
    })?;
    check_preamble(at, header.magic, PROGRAM_MAGIC, header.version, [header.reserved0.into(), header.reserved1])?;
    let total = u64::from(header.total_length);
    if total > available {
        return Err(ProgramError::Truncated { at, section: Section::Program, needed: total, available });
    }
    if total < available {
        return Err(ProgramError::CountMismatch { at, field: "total_length", declared: total, actual: available });
    }
    if header.block_count == 0 {
        return Err(ProgramError::InvalidField { at, field: "block_count", value: 0 });
    }

    let table_offset = u64::from(header.block_table_offset);
    let table_length = u64::from(header.block_count) * u64::from(BLOCK_TABLE_ENTRY_SIZE);
    if !table_offset.is_multiple_of(u64::from(BLOCK_TABLE_ALIGN)) {
        return Err(ProgramError::MisalignedSection {
            at,
            section: Section::BlockTable,
            offset: table_offset,
            align: BLOCK_TABLE_ALIGN,
        });
    }
    if table_offset < u64::from(PROGRAM_HEADER_SIZE) {
        return Err(ProgramError::OverlappingSections {
            at,
            first: Section::ProgramHeader,
            second: Section::BlockTable,
        });
    }
    if table_offset + table_length > total {
        return Err(ProgramError::SectionOutOfRange {
            at,
            section: Section::BlockTable,
            offset: table_offset,
            length: table_length,
            limit: total,
        });
    }

    let mut previous_end = table_offset + table_length;
    let mut previous = None;
    for ordinal in 0..header.block_count {
        let offset: u32 = read_element(bytes, header.block_table_offset, ordinal).ok_or(ProgramError::Truncated {
            at,
            section: Section::BlockTable,
            needed: table_offset + table_length,
            available,
        })?;
        previous_end = check_block(bytes, &header, ordinal, offset, previous_end, previous)?;
        previous = Some(ordinal);
    }
    Ok(BlockProgram::new(bytes, header))
}

/// Checks block `ordinal` at `offset` and returns the offset just past it.
fn check_block(
    program: &[u8],
    program_header: &ProgramHeader,
    ordinal: u32,
    offset: u32,
    previous_end: u64,
    previous: Option<u32>,
) -> Result<u64> {
    let at = Location::Block { block: ordinal };
    let total = u64::from(program_header.total_length);
    let start = u64::from(offset);
    let header_size = u64::from(BLOCK_HEADER_SIZE);
    if !start.is_multiple_of(u64::from(BLOCK_ALIGN)) {
        return Err(ProgramError::MisalignedSection { at, section: Section::Block, offset: start, align: BLOCK_ALIGN });
    }
    if start < previous_end {
        return Err(ProgramError::OverlappingBlocks { at, previous });
    }
    if start + header_size > total {
        return Err(ProgramError::SectionOutOfRange {
            at,
            section: Section::BlockHeader,
            offset: start,
            length: header_size,
            limit: total,
        });
    }
    let header: BlockHeader = read(program, start).ok_or(ProgramError::Truncated {
        at,
        section: Section::BlockHeader,
        needed: start + header_size,
        available: program.len() as u64,
    })?;
    check_preamble(at, header.magic, BLOCK_MAGIC, header.version, [header.reserved0.into(), header.reserved1.into()])?;
    if header.ordinal != ordinal {
        return Err(ProgramError::OrdinalMismatch { at, found: header.ordinal });
    }
    let Some(terminator) = header.terminator_kind() else {
        return Err(ProgramError::UnknownTerminator { at, value: header.terminator });
    };
    let length = u64::from(header.block_length);
    if length < header_size {
        return Err(ProgramError::SectionOutOfRange {
            at,
            section: Section::BlockHeader,
            offset: 0,
            length: header_size,
            limit: length,
        });
    }
    if start + length > total {
        return Err(ProgramError::SectionOutOfRange {
            at,
            section: Section::Block,
            offset: start,
            length,
            limit: total,
        });
    }
    let bytes = slice(program, start, length).ok_or(ProgramError::Truncated {
        at,
        section: Section::Block,
        needed: start + length,
        available: program.len() as u64,
    })?;

    let source_count = header.source_count();
    let sections = [
        (
            Section::Commands,
            header.command_offset,
            u64::from(header.command_count) * u64::from(COMMAND_SIZE),
            COMMAND_ALIGN,
        ),
        (Section::Sources, header.source_offset, source_count * u64::from(BINDING_SOURCE_SIZE), SOURCE_ALIGN),
        (
            Section::Patches,
            header.patch_offset,
            u64::from(header.patch_count) * u64::from(PATCH_RECORD_SIZE),
            PATCH_ALIGN,
        ),
        (Section::Rodata, header.rodata_offset, u64::from(header.rodata_length), RODATA_ALIGN),
    ];
    for (section, offset, size, align) in sections {
        if !offset.is_multiple_of(align) {
            return Err(ProgramError::MisalignedSection { at, section, offset: u64::from(offset), align });
        }
        if u64::from(offset) + size > length {
            return Err(ProgramError::SectionOutOfRange {
                at,
                section,
                offset: u64::from(offset),
                length: size,
                limit: length,
            });
        }
        if size > 0 && u64::from(offset) < header_size {
            return Err(ProgramError::OverlappingSections { at, first: Section::BlockHeader, second: section });
        }
    }
    for (i, &(first, first_offset, first_size, _)) in sections.iter().enumerate() {
        for &(second, second_offset, second_size, _) in &sections[i + 1..] {
            let (a, b) = (u64::from(first_offset), u64::from(second_offset));
            if first_size > 0 && second_size > 0 && a < b + second_size && b < a + first_size {
                return Err(ProgramError::OverlappingSections { at, first, second });
            }
        }
    }

    let check = BlockCheck {
        ordinal,
        block_count: program_header.block_count,
        binding_slot_count: program_header.binding_slot_count,
        bytes,
        header,
        source_count,
    };
    check.sources()?;
    check.patches()?;
    let cost = check.commands(terminator)?;
    if cost.packets > u64::from(header.max_packet_count) {
        return Err(ProgramError::WorstCaseTooSmall {
            at,
            field: "max_packet_count",
            declared: header.max_packet_count,
            required: cost.packets,
        });
    }
    if cost.kernarg_bytes > u64::from(header.max_kernarg_bytes) {
        return Err(ProgramError::WorstCaseTooSmall {
            at,
            field: "max_kernarg_bytes",
            declared: header.max_kernarg_bytes,
            required: cost.kernarg_bytes,
        });
    }
    Ok(start + length)
}

/// A block whose header and section extents have been checked.
struct BlockCheck<'a> {
    ordinal: u32,
    block_count: u32,
    binding_slot_count: u32,
    bytes: &'a [u8],
    header: BlockHeader,
    source_count: u64,
}

impl BlockCheck<'_> {
    fn at(&self) -> Location {
        Location::Block { block: self.ordinal }
    }

    /// A record read that the section checks already guarantee; reported, never unwrapped.
    fn element<T: bytemuck::Pod>(&self, section: Section, base: u32, index: u32) -> Result<T> {
        read_element(self.bytes, base, index).ok_or(ProgramError::Truncated {
            at: self.at(),
            section,
            needed: u64::from(base) + (u64::from(index) + 1) * core::mem::size_of::<T>() as u64,
            available: self.bytes.len() as u64,
        })
    }

    fn sources(&self) -> Result<()> {
        let (mut statics, mut dynamics) = (0u64, 0u64);
        // The section fits in a u32-length block, so the count fits in a u32.
        let count = u32::try_from(self.source_count).unwrap_or(u32::MAX);
        for index in 0..count {
            let at = Location::Source { block: self.ordinal, source: index };
            let source: BindingSource = self.element(Section::Sources, self.header.source_offset, index)?;
            if source.reserved != [0; 3] {
                return Err(ProgramError::ReservedNotZero { at, field: "reserved" });
            }
            match source.source_kind() {
                Some(SourceKind::Static) => {
                    if source.slot != 0 {
                        return Err(ProgramError::ReservedNotZero { at, field: "slot" });
                    }
                    statics += 1;
                }
                Some(SourceKind::Dynamic) => {
                    if source.slot >= self.binding_slot_count {
                        return Err(ProgramError::IndexOutOfRange {
                            at,
                            field: "slot",
                            index: u64::from(source.slot),
                            limit: u64::from(self.binding_slot_count),
                        });
                    }
                    dynamics += 1;
                }
                None => {
                    return Err(ProgramError::InvalidField { at, field: "kind", value: u64::from(source.kind) });
                }
            }
        }
        let at = self.at();
        if statics != u64::from(self.header.static_source_count) {
            return Err(ProgramError::CountMismatch {
                at,
                field: "static_source_count",
                declared: u64::from(self.header.static_source_count),
                actual: statics,
            });
        }
        if dynamics != u64::from(self.header.dynamic_source_count) {
            return Err(ProgramError::CountMismatch {
                at,
                field: "dynamic_source_count",
                declared: u64::from(self.header.dynamic_source_count),
                actual: dynamics,
            });
        }
        Ok(())
    }

    fn patches(&self) -> Result<()> {
        for index in 0..self.header.patch_count {
            let at = Location::Patch { block: self.ordinal, patch: index };
            let patch: PatchRecord = self.element(Section::Patches, self.header.patch_offset, index)?;
            if patch.reserved != 0 {
                return Err(ProgramError::ReservedNotZero { at, field: "reserved" });
            }
            self.source_index(at, "source_index", patch.source_index)?;
        }
        Ok(())
    }

    /// Checks every command and the terminator; returns the block's execution cost.
    fn commands(&self, terminator: super::TerminatorKind) -> Result<ExecutionCost> {
        let count = self.header.command_count;
        let mut cost = ExecutionCost::default();
        let mut last_control = None;
        let mut patch_cursor = 0u64;
        for index in 0..count {
            let at = Location::Command { block: self.ordinal, command: index };
            let command: Command = self.element(Section::Commands, self.header.command_offset, index)?;
            let Some(decoded) = command.decode() else {
                return Err(ProgramError::UnknownCommandKind { at, kind: command.header().kind });
            };
            let flags = command.flags();
            if flags.acquire().is_none() {
                return Err(ProgramError::InvalidFenceScope { at, field: "acquire", value: flags.acquire_bits() });
            }
            if flags.release().is_none() {
                return Err(ProgramError::InvalidFenceScope { at, field: "release", value: flags.release_bits() });
            }
            if flags.0 & CommandFlags::RESERVED_MASK != 0 {
                return Err(ProgramError::ReservedNotZero { at, field: "flags" });
            }
            let kind = decoded.kind();
            if kind.is_control() {
                if index + 1 != count {
                    return Err(ProgramError::MisplacedControl { at, kind });
                }
                last_control = Some(kind);
            }
            self.command(at, &decoded, &mut patch_cursor)?;
            cost = cost.saturating_add(decoded.execution_cost());
        }

        let at = self.at();
        match (terminator.command_kind(), last_control) {
            (Some(expected), Some(found)) if expected == found => {}
            (_, Some(found)) => return Err(ProgramError::TerminatorMismatch { at, terminator, found }),
            (Some(_), None) => return Err(ProgramError::MissingTerminator { at, terminator }),
            (None, None) => {
                if u64::from(self.ordinal) + 1 >= u64::from(self.block_count) {
                    return Err(ProgramError::FallthroughPastEnd { at });
                }
            }
        }
        Ok(cost)
    }

    /// `patch_cursor` is the end of the previous dispatch's patch range in this block.
    fn command(&self, at: Location, decoded: &DecodedCommand, patch_cursor: &mut u64) -> Result<()> {
        let reserved = |zero: bool, field| if zero { Ok(()) } else { Err(ProgramError::ReservedNotZero { at, field }) };
        match decoded {
            DecodedCommand::Dispatch(d) => self.dispatch(at, d, patch_cursor),
            DecodedCommand::Fill(f) => {
                reserved(f.reserved0 == 0, "reserved0")?;
                reserved(f.reserved1 == 0, "reserved1")?;
                reserved(f.reserved2 == [0; 5], "reserved2")?;
                self.source_index(at, "target", f.target)?;
                if !matches!(f.width, 1 | 2 | 4 | 8) {
                    return Err(ProgramError::InvalidFillWidth { at, width: f.width });
                }
                if f.width < 8 && f.pattern >> (8 * u32::from(f.width)) != 0 {
                    return Err(ProgramError::InvalidField { at, field: "pattern", value: f.pattern });
                }
                if !f.length.is_multiple_of(u64::from(f.width)) {
                    return Err(ProgramError::MisalignedField {
                        at,
                        field: "length",
                        value: f.length,
                        align: u64::from(f.width),
                    });
                }
                Ok(())
            }
            DecodedCommand::Copy(c) => {
                reserved(c.reserved0 == 0, "reserved0")?;
                reserved(c.reserved1 == [0; 6], "reserved1")?;
                self.source_index(at, "source", c.source)?;
                self.source_index(at, "target", c.target)
            }
            DecodedCommand::Update(u) => {
                reserved(u.reserved0 == 0, "reserved0")?;
                reserved(u.reserved1 == 0, "reserved1")?;
                reserved(u.reserved2 == [0; 6], "reserved2")?;
                self.source_index(at, "target", u.target)?;
                self.rodata(at, "payload_offset", u.payload_offset, u64::from(u.length))
            }
            DecodedCommand::Barrier(b) => {
                reserved(b.reserved0 == [0; 3], "reserved0")?;
                reserved(b.reserved1 == [0; 7], "reserved1")
            }
            DecodedCommand::ProfileMarker(p) => {
                reserved(p.reserved1 == [0; 7], "reserved1")?;
                self.source_index(at, "target", p.target)
            }
            DecodedCommand::Branch(b) => {
                reserved(b.reserved0 == 0, "reserved0")?;
                reserved(b.reserved1 == [0; 7], "reserved1")?;
                self.block_target(at, "target_block", b.target_block)
            }
            DecodedCommand::CondBranch(c) => {
                reserved(c.reserved0 == 0, "reserved0")?;
                reserved(c.reserved1 == [0; 5], "reserved1")?;
                self.source_index(at, "source", c.source)?;
                if !matches!(c.width, 4 | 8) {
                    return Err(ProgramError::InvalidField { at, field: "width", value: u64::from(c.width) });
                }
                if c.compare_op().is_none() {
                    return Err(ProgramError::InvalidField { at, field: "compare", value: u64::from(c.compare) });
                }
                if c.width == 4 && c.operand > u64::from(u32::MAX) {
                    return Err(ProgramError::InvalidField { at, field: "operand", value: c.operand });
                }
                self.block_target(at, "taken_block", c.taken_block)?;
                self.block_target(at, "not_taken_block", c.not_taken_block)
            }
            DecodedCommand::Return(r) => {
                reserved(r.reserved0 == [0; 3], "reserved0")?;
                reserved(r.reserved1 == [0; 7], "reserved1")
            }
        }
    }

    /// Checks a dispatch command phase by phase, in the order its fields are relied on; the first
    /// failure is returned. `patch_cursor` is as in [`Self::command`] and moves past this
    /// dispatch's patches.
    fn dispatch(&self, at: Location, d: &DispatchCommand, patch_cursor: &mut u64) -> Result<()> {
        let strategy = self.dispatch_packet(at, d)?;
        self.dispatch_ranges(at, d, strategy, patch_cursor)?;
        self.dispatch_kernarg_layout(at, d, strategy)?;
        self.dispatch_offsets(at, d, strategy)?;
        self.dispatch_patches(at, d)
    }

    /// The fields the packet is built from: strategy, grid, workgroup, kernel object and kernarg
    /// alignment. Reads only the command; returns its strategy.
    fn dispatch_packet(&self, at: Location, d: &DispatchCommand) -> Result<KernargStrategy> {
        let Some(strategy) = d.strategy() else {
            return Err(ProgramError::InvalidField {
                at,
                field: "kernarg_strategy",
                value: u64::from(d.kernarg_strategy),
            });
        };
        for (axis, &size) in (0u8..).zip(&d.grid_size) {
            if size == 0 {
                return Err(ProgramError::ZeroDimension { at, field: "grid_size", axis });
            }
        }
        for (axis, &size) in (0u8..).zip(&d.workgroup_size) {
            if size == 0 {
                return Err(ProgramError::ZeroDimension { at, field: "workgroup_size", axis });
            }
        }
        if d.kernel_object == 0 {
            return Err(ProgramError::InvalidField { at, field: "kernel_object", value: 0 });
        }
        if !d.kernel_object.is_multiple_of(64) {
            return Err(ProgramError::MisalignedField {
                at,
                field: "kernel_object",
                value: d.kernel_object,
                align: 64,
            });
        }
        let alignment = d.kernarg_alignment;
        if !alignment.is_power_of_two() || u32::from(alignment) > MAX_KERNARG_ALIGNMENT {
            return Err(ProgramError::InvalidField { at, field: "kernarg_alignment", value: u64::from(alignment) });
        }
        Ok(strategy)
    }

    /// The source and patch ranges lie in the block's sections, and patch ranges ascend without
    /// overlap. Writes only `patch_cursor`, and moves it even when the strategy check after it
    /// fails: a failure rejects the whole image, so the cursor is never read again.
    fn dispatch_ranges(
        &self,
        at: Location,
        d: &DispatchCommand,
        strategy: KernargStrategy,
        patch_cursor: &mut u64,
    ) -> Result<()> {
        self.range(at, ("first_source", "source_count"), d.first_source, d.source_count, self.source_count)?;
        self.range(
            at,
            ("first_patch", "patch_count"),
            d.first_patch,
            d.patch_count,
            u64::from(self.header.patch_count),
        )?;
        if d.patch_count != 0 {
            // Disjoint, ascending patch ranges keep validation and execution linear in the patch count.
            if u64::from(d.first_patch) < *patch_cursor {
                return Err(ProgramError::OverlappingPatchRanges {
                    at,
                    first_patch: d.first_patch,
                    previous_end: *patch_cursor,
                });
            }
            *patch_cursor = u64::from(d.first_patch) + u64::from(d.patch_count);
        }
        if d.patch_count != 0 && matches!(strategy, KernargStrategy::Prepublished | KernargStrategy::PointerScatter) {
            // Prepublished kernargs are immutable; scatter writes its sources, not patches.
            return Err(ProgramError::InvalidField { at, field: "patch_count", value: u64::from(d.patch_count) });
        }
        Ok(())
    }

    /// Where the kernarg segment comes from: a template in rodata that covers it, or (no
    /// template) source pointers then constants that fit in it. Reads only.
    fn dispatch_kernarg_layout(&self, at: Location, d: &DispatchCommand, strategy: KernargStrategy) -> Result<()> {
        let kernarg_size = u64::from(d.kernarg_size);
        if strategy.uses_template() {
            let alignment = d.kernarg_alignment;
            self.rodata(at, "template_offset", d.template_offset, u64::from(d.template_length))?;
            if !d.template_offset.is_multiple_of(u32::from(alignment)) {
                return Err(ProgramError::MisalignedField {
                    at,
                    field: "template_offset",
                    value: u64::from(d.template_offset),
                    align: u64::from(alignment),
                });
            }
            if d.template_length < d.kernarg_size {
                return Err(ProgramError::TemplateTooShort {
                    at,
                    template_length: d.template_length,
                    kernarg_size: d.kernarg_size,
                });
            }
            return Ok(());
        }
        if d.template_offset != 0 {
            return Err(ProgramError::InvalidField {
                at,
                field: "template_offset",
                value: u64::from(d.template_offset),
            });
        }
        if d.template_length != 0 {
            return Err(ProgramError::InvalidField {
                at,
                field: "template_length",
                value: u64::from(d.template_length),
            });
        }
        let pointers = u64::from(d.source_count) * 8;
        let constants = u64::from(d.constant_count) * 4;
        if pointers > kernarg_size {
            return Err(ProgramError::KernargOutOfRange {
                at,
                field: "source_count",
                offset: 0,
                length: pointers,
                kernarg_size: d.kernarg_size,
            });
        }
        if pointers + constants > kernarg_size {
            return Err(ProgramError::KernargOutOfRange {
                at,
                field: "constant_count",
                offset: pointers,
                length: constants,
                kernarg_size: d.kernarg_size,
            });
        }
        Ok(())
    }

    /// The constants in rodata, the implicit-argument pointer in the kernarg segment, and the
    /// indirect counts source (named by indirect dispatches alone). Reads only.
    fn dispatch_offsets(&self, at: Location, d: &DispatchCommand, strategy: KernargStrategy) -> Result<()> {
        let kernarg_size = u64::from(d.kernarg_size);
        // Checked even with no constants, so every range a validated dispatch names is readable.
        if !d.constants_offset.is_multiple_of(4) {
            return Err(ProgramError::MisalignedField {
                at,
                field: "constants_offset",
                value: u64::from(d.constants_offset),
                align: 4,
            });
        }
        self.rodata(at, "constants_offset", d.constants_offset, u64::from(d.constant_count) * 4)?;

        if d.implicit_args_offset != NO_IMPLICIT_ARGS {
            let offset = u64::from(d.implicit_args_offset);
            if !offset.is_multiple_of(8) {
                return Err(ProgramError::MisalignedField {
                    at,
                    field: "implicit_args_offset",
                    value: offset,
                    align: 8,
                });
            }
            if offset + 8 > kernarg_size {
                return Err(ProgramError::KernargOutOfRange {
                    at,
                    field: "implicit_args_offset",
                    offset,
                    length: 8,
                    kernarg_size: d.kernarg_size,
                });
            }
        }

        if strategy == KernargStrategy::Indirect {
            self.source_index(at, "indirect_source", d.indirect_source)?;
        } else if d.indirect_source != NO_SOURCE {
            return Err(ProgramError::InvalidField {
                at,
                field: "indirect_source",
                value: u64::from(d.indirect_source),
            });
        }
        Ok(())
    }

    /// Every patch the dispatch names writes an aligned pointer inside its kernarg segment.
    /// Reads only; the patch range was checked by [`Self::dispatch_ranges`].
    fn dispatch_patches(&self, at: Location, d: &DispatchCommand) -> Result<()> {
        let kernarg_size = u64::from(d.kernarg_size);
        for patch_index in d.patches() {
            let patch: PatchRecord = self.element(Section::Patches, self.header.patch_offset, patch_index)?;
            if !patch.kernarg_offset.is_multiple_of(8) {
                return Err(ProgramError::MisalignedPatch {
                    at,
                    patch: patch_index,
                    kernarg_offset: patch.kernarg_offset,
                });
            }
            if u64::from(patch.kernarg_offset) + 8 > kernarg_size {
                return Err(ProgramError::PatchOutOfRange {
                    at,
                    patch: patch_index,
                    kernarg_offset: patch.kernarg_offset,
                    kernarg_size: d.kernarg_size,
                });
            }
        }
        Ok(())
    }

    fn source_index(&self, at: Location, field: &'static str, index: u16) -> Result<()> {
        if u64::from(index) >= self.source_count {
            return Err(ProgramError::IndexOutOfRange { at, field, index: u64::from(index), limit: self.source_count });
        }
        Ok(())
    }

    /// `first..first + count` within `0..limit`; an empty range is always fine.
    fn range(
        &self,
        at: Location,
        fields: (&'static str, &'static str),
        first: u16,
        count: u16,
        limit: u64,
    ) -> Result<()> {
        let (first, count) = (u64::from(first), u64::from(count));
        if count == 0 {
            return Ok(());
        }
        if first >= limit {
            return Err(ProgramError::IndexOutOfRange { at, field: fields.0, index: first, limit });
        }
        if first + count > limit {
            return Err(ProgramError::IndexOutOfRange { at, field: fields.1, index: first + count, limit });
        }
        Ok(())
    }

    fn rodata(&self, at: Location, field: &'static str, offset: u32, length: u64) -> Result<()> {
        if u64::from(offset) + length > u64::from(self.header.rodata_length) {
            return Err(ProgramError::RodataOutOfRange {
                at,
                field,
                offset: u64::from(offset),
                length,
                rodata_length: self.header.rodata_length,
            });
        }
        Ok(())
    }

    fn block_target(&self, at: Location, field: &'static str, target: u32) -> Result<()> {
        if target >= self.block_count {
            return Err(ProgramError::BranchTargetOutOfRange { at, field, target, block_count: self.block_count });
        }
        Ok(())
    }
}

/// The checks the program header and every block header share: magic, version, zero reserved
/// words.
fn check_preamble(at: Location, magic: u32, expected: u32, version: u16, reserved: [u64; 2]) -> Result<()> {
    if magic != expected {
        return Err(ProgramError::BadMagic { at, found: magic });
    }
    if version != PROGRAM_VERSION {
        return Err(ProgramError::UnsupportedVersion { at, found: version });
    }
    for (value, field) in reserved.into_iter().zip(["reserved0", "reserved1"]) {
        if value != 0 {
            return Err(ProgramError::ReservedNotZero { at, field });
        }
    }
    Ok(())
}
