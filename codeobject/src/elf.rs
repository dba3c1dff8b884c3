//! ELF-level reading of AMDGPU code objects: header checks, `e_flags`
//! decoding, the metadata note and kernel-descriptor symbols. All parsing
//! of ELF structures goes through the `object` crate.

use std::collections::HashMap;

use object::LittleEndian;
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, NoteIterator, ProgramHeader, SectionHeader, SectionTable, Sym};

use crate::error::CodeObjectError;
use crate::target::{Feature, FeatureState, Processor, TargetId};

pub(crate) const EM_AMDGPU: u16 = 0xe0;
const ELFOSABI_AMDGPU_HSA: u8 = 64;
const NT_AMDGPU_METADATA: u32 = 32;
const NOTE_OWNER_AMDGPU: &[u8] = b"AMDGPU";
const EF_AMDGPU_MACH: u32 = 0xff;
const EF_AMDGPU_FEATURE_XNACK: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC: u32 = 0xc00;
const EF_AMDGPU_GENERIC_VERSION_SHIFT: u32 = 24;
/// Size of an `amd_kernel_code_t`-successor kernel descriptor.
pub const KERNEL_DESCRIPTOR_SIZE: u64 = 64;

type Header = FileHeader64<LittleEndian>;

/// The HSA code-object format version, from ELF `EI_ABIVERSION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AbiVersion {
    /// Code-object v4 (`EI_ABIVERSION` 2).
    V4,
    /// Code-object v5 (`EI_ABIVERSION` 3).
    V5,
    /// Code-object v6 (`EI_ABIVERSION` 4).
    V6,
}

impl AbiVersion {
    /// Code-object version number (4, 5 or 6).
    pub fn code_object_version(self) -> u32 {
        match self {
            AbiVersion::V4 => 4,
            AbiVersion::V5 => 5,
            AbiVersion::V6 => 6,
        }
    }

    /// The raw `EI_ABIVERSION` byte.
    pub fn elf_abi_version(self) -> u8 {
        match self {
            AbiVersion::V4 => 2,
            AbiVersion::V5 => 3,
            AbiVersion::V6 => 4,
        }
    }
}

/// Where a kernel's 64-byte descriptor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDescriptorSymbol {
    /// Symbol value: the descriptor's virtual address in the loaded image.
    pub address: u64,
    /// Byte offset of the descriptor in the code-object file.
    pub file_offset: u64,
}

/// One `PT_LOAD` program header: bytes a loader maps at `vaddr` (relative to the load base),
/// `file_size` of them from the file and the rest of `memory_size` zeroed (ELF gABI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// `p_vaddr`: where the segment starts, relative to the load base.
    pub vaddr: u64,
    /// `p_offset`: where its bytes start in the file.
    pub file_offset: u64,
    /// `p_filesz`: bytes copied from the file.
    pub file_size: u64,
    /// `p_memsz`: bytes mapped; those past `file_size` are zero.
    pub memory_size: u64,
    /// `p_flags`: PF_X 1, PF_W 2, PF_R 4.
    pub flags: u32,
}

impl LoadSegment {
    /// Whether `[address, address + size)` lies in the file-backed part of this segment.
    pub fn holds(&self, address: u64, size: u64) -> bool {
        address >= self.vaddr
            && address.checked_add(size).is_some_and(|end| end <= self.vaddr.saturating_add(self.file_size))
    }
}

/// A validated AMDGPU ELF image.
pub(crate) struct AmdgpuElf<'a> {
    data: &'a [u8],
    header: &'a Header,
    sections: SectionTable<'a, Header, &'a [u8]>,
    pub(crate) target: TargetId,
    pub(crate) abi_version: AbiVersion,
}

fn malformed(error: object::read::Error) -> CodeObjectError {
    CodeObjectError::MalformedElf(error.to_string())
}

/// Quick check used by format auto-detection.
pub(crate) fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(&elf::ELFMAG)
}

/// `e_machine` of an ELF64 little-endian file, if it is one.
pub(crate) fn elf64_machine(bytes: &[u8]) -> Option<u16> {
    let header = Header::parse(bytes).ok()?;
    if header.e_ident().class != elf::ELFCLASS64 || header.e_ident().data != elf::ELFDATA2LSB {
        return None;
    }
    Some(header.e_machine(LittleEndian).0)
}

impl<'a> AmdgpuElf<'a> {
    pub(crate) fn parse(data: &'a [u8]) -> Result<Self, CodeObjectError> {
        if !is_elf(data) {
            return Err(CodeObjectError::NotElf);
        }
        // Look at the identification bytes ourselves first so the common
        // mistakes get specific errors rather than a generic parse failure.
        if let Some(&class) = data.get(4)
            && class != elf::ELFCLASS64.0
        {
            return Err(CodeObjectError::NotElf64 { class });
        }
        if let Some(&encoding) = data.get(5)
            && encoding != elf::ELFDATA2LSB.0
        {
            return Err(CodeObjectError::NotLittleEndian);
        }
        let header = Header::parse(data).map_err(malformed)?;
        let endian = LittleEndian;
        let machine = header.e_machine(endian).0;
        if machine != EM_AMDGPU {
            return Err(CodeObjectError::WrongMachine { machine });
        }
        let ident = header.e_ident();
        if ident.os_abi.0 != ELFOSABI_AMDGPU_HSA {
            return Err(CodeObjectError::WrongOsAbi { os_abi: ident.os_abi.0 });
        }
        let abi_version = match ident.abi_version {
            2 => AbiVersion::V4,
            3 => AbiVersion::V5,
            4 => AbiVersion::V6,
            other => return Err(CodeObjectError::UnsupportedVersion { abi_version: other }),
        };
        let target = decode_flags(header.e_flags(endian).0, abi_version)?;
        let sections = header.sections(endian, data).map_err(malformed)?;
        Ok(AmdgpuElf { data, header, sections, target, abi_version })
    }

    /// The NT_AMDGPU_METADATA descriptor. Linked objects carry the note in
    /// both a PT_NOTE segment and a SHT_NOTE section; segments win, and
    /// sections cover relocatable objects.
    pub(crate) fn metadata_note(&self) -> Result<&'a [u8], CodeObjectError> {
        let endian = LittleEndian;
        for segment in self.header.program_headers(endian, self.data).map_err(malformed)? {
            if let Some(notes) = segment.notes(endian, self.data).map_err(malformed)?
                && let Some(desc) = find_metadata(notes)?
            {
                return Ok(desc);
            }
        }
        for section in self.sections.iter() {
            if let Some(notes) = section.notes(endian, self.data).map_err(malformed)?
                && let Some(desc) = find_metadata(notes)?
            {
                return Ok(desc);
            }
        }
        Err(CodeObjectError::MissingMetadata)
    }

    /// The `PT_DYNAMIC` segment's virtual address, if the image has one (what a loader reports
    /// as `link_map::l_ld`, relocated).
    pub(crate) fn dynamic_vaddr(&self) -> Result<Option<u64>, CodeObjectError> {
        let endian = LittleEndian;
        let headers = self.header.program_headers(endian, self.data).map_err(malformed)?;
        Ok(headers.iter().find(|header| header.p_type(endian) == elf::PT_DYNAMIC).map(|header| header.p_vaddr(endian)))
    }

    /// The `PT_LOAD` segments, each checked to lie inside the file with `p_filesz <= p_memsz`.
    pub(crate) fn load_segments(&self) -> Result<Vec<LoadSegment>, CodeObjectError> {
        let endian = LittleEndian;
        let mut segments = Vec::new();
        for header in self.header.program_headers(endian, self.data).map_err(malformed)? {
            if header.p_type(endian) != elf::PT_LOAD {
                continue;
            }
            let segment = LoadSegment {
                vaddr: header.p_vaddr(endian),
                file_offset: header.p_offset(endian),
                file_size: header.p_filesz(endian),
                memory_size: header.p_memsz(endian),
                flags: header.p_flags(endian).0,
            };
            let file_end = segment.file_offset.checked_add(segment.file_size);
            if file_end.is_none_or(|end| end > self.data.len() as u64)
                || segment.file_size > segment.memory_size
                || segment.vaddr.checked_add(segment.memory_size).is_none()
            {
                return Err(CodeObjectError::MalformedElf(format!(
                    "PT_LOAD segment at vaddr {:#x} ({:#x} bytes from file offset {:#x}, {:#x} in memory) \
                     does not fit the {}-byte file",
                    segment.vaddr,
                    segment.file_size,
                    segment.file_offset,
                    segment.memory_size,
                    self.data.len()
                )));
            }
            segments.push(segment);
        }
        Ok(segments)
    }

    /// Every defined `*.kd` symbol with its size and descriptor location
    /// (or why the location is unusable). Uses `.symtab`, else `.dynsym`.
    pub(crate) fn kernel_descriptor_symbols(&self) -> Result<HashMap<&'a str, KdSymbol>, CodeObjectError> {
        let endian = LittleEndian;
        let mut symbols = self.sections.symbols(endian, self.data, elf::SHT_SYMTAB).map_err(malformed)?;
        if symbols.is_empty() {
            symbols = self.sections.symbols(endian, self.data, elf::SHT_DYNSYM).map_err(malformed)?;
        }
        let mut found = HashMap::new();
        for (index, symbol) in symbols.enumerate() {
            let Ok(name) = symbols.symbol_name(endian, symbol) else {
                continue;
            };
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            if !name.ends_with(".kd") {
                continue;
            }
            let Ok(Some(section_index)) = symbols.symbol_section(endian, symbol, index) else {
                continue; // undefined or absolute: not a usable descriptor
            };
            let size = symbol.st_size(endian);
            let address = symbol.st_value(endian);
            let file_offset = self
                .sections
                .section(section_index)
                .ok()
                .and_then(|section| descriptor_file_offset(section, address, self.data.len()));
            found.insert(name, KdSymbol { size, address, file_offset });
        }
        Ok(found)
    }
}

/// What the symbol table says about one `*.kd` symbol.
pub(crate) struct KdSymbol {
    pub(crate) size: u64,
    pub(crate) address: u64,
    /// None when the 64 bytes are not inside the file data of the symbol's section.
    pub(crate) file_offset: Option<u64>,
}

fn descriptor_file_offset(section: &elf::SectionHeader64<LittleEndian>, address: u64, file_len: usize) -> Option<u64> {
    let endian = LittleEndian;
    if section.sh_type(endian) == elf::SHT_NOBITS {
        return None;
    }
    let section_start = section.sh_addr(endian);
    let offset_in_section = address.checked_sub(section_start)?;
    let end_in_section = offset_in_section.checked_add(KERNEL_DESCRIPTOR_SIZE)?;
    if end_in_section > section.sh_size(endian) {
        return None;
    }
    let file_offset = section.sh_offset(endian).checked_add(offset_in_section)?;
    let file_end = file_offset.checked_add(KERNEL_DESCRIPTOR_SIZE)?;
    (file_end <= u64::try_from(file_len).ok()?).then_some(file_offset)
}

fn find_metadata<'a>(mut notes: NoteIterator<'a, Header>) -> Result<Option<&'a [u8]>, CodeObjectError> {
    while let Some(note) = notes.next().map_err(malformed)? {
        if note.name() == NOTE_OWNER_AMDGPU && note.n_type(LittleEndian).0 == NT_AMDGPU_METADATA {
            return Ok(Some(note.desc()));
        }
    }
    Ok(None)
}

/// Decodes `e_flags` (code-object v4+ layout) into a target ID.
fn decode_flags(flags: u32, abi_version: AbiVersion) -> Result<TargetId, CodeObjectError> {
    let mach = flags & EF_AMDGPU_MACH;
    let processor = Processor::from_mach(mach).ok_or(CodeObjectError::UnknownMach { mach })?;
    let mut target = TargetId::new(processor);
    for (feature, mask) in [(Feature::Xnack, EF_AMDGPU_FEATURE_XNACK), (Feature::Sramecc, EF_AMDGPU_FEATURE_SRAMECC)] {
        let state = match (flags & mask) >> mask.trailing_zeros() {
            // "Unsupported" on a processor that has the feature is how
            // older producers said "any".
            0 if processor.supports(feature) => FeatureState::Any,
            0 => FeatureState::Unsupported,
            1 => FeatureState::Any,
            2 => FeatureState::Off,
            _ => FeatureState::On,
        };
        target = target
            .with_feature(feature, state)
            .map_err(|_| CodeObjectError::UnsupportedFeatureFlag { processor, feature })?;
    }
    if processor.is_generic() {
        if abi_version < AbiVersion::V6 {
            return Err(CodeObjectError::GenericNeedsV6 { processor });
        }
        let version = flags >> EF_AMDGPU_GENERIC_VERSION_SHIFT;
        if version == 0 {
            return Err(CodeObjectError::MissingGenericVersion { processor });
        }
        target = target.with_generic_version(version);
    }
    Ok(target)
}
