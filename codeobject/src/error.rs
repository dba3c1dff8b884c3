//! [`CodeObjectError`]: why bytes were rejected as an AMDGPU code object.
//!
//! Its own module, below both the ELF reader (`elf`) and the code-object parser (`code_object`),
//! so each reports the same error type while the parser alone depends on the reader.

use crate::metadata::MetadataError;
use crate::target::{Feature, Processor, TargetError, TargetId};

/// Why bytes were rejected as an AMDGPU code object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    /// The bytes do not start with the ELF magic (`\x7fELF`).
    #[error("not an ELF file")]
    NotElf,
    #[error("not a 64-bit ELF file (EI_CLASS {class})")]
    /// The ELF file is not 64-bit.
    NotElf64 {
        /// The `EI_CLASS` byte found.
        class: u8,
    },
    /// The ELF file is not little-endian (`EI_DATA` is not `ELFDATA2LSB`).
    #[error("not a little-endian ELF file")]
    NotLittleEndian,
    /// The `object` crate could not read an ELF structure (header, section
    /// table, program headers, notes or symbols); holds its message.
    #[error("malformed ELF: {0}")]
    MalformedElf(String),
    #[error("ELF machine {machine:#x} is not AMDGPU (0xe0)")]
    /// `e_machine` is not `EM_AMDGPU`.
    WrongMachine {
        /// The `e_machine` value found.
        machine: u16,
    },
    #[error("ELF OS ABI {os_abi} is not AMDGPU_HSA (64)")]
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA`.
    WrongOsAbi {
        /// The `EI_OSABI` byte found.
        os_abi: u8,
    },
    #[error(
        "unsupported code object version (EI_ABIVERSION {abi_version}; \
         only v4, v5 and v6 = ABI versions 2, 3 and 4 are supported)"
    )]
    /// `EI_ABIVERSION` names a code-object version other than v4, v5 or v6.
    UnsupportedVersion {
        /// The `EI_ABIVERSION` byte found.
        abi_version: u8,
    },
    #[error("unknown EF_AMDGPU_MACH value {mach:#x}")]
    /// The `EF_AMDGPU_MACH` bits of `e_flags` name no processor in the table.
    UnknownMach {
        /// The `EF_AMDGPU_MACH` value found.
        mach: u32,
    },
    #[error("e_flags set {feature} for processor {processor}, which does not support it")]
    /// `e_flags` sets a feature (xnack or sramecc) for a processor that lacks it.
    UnsupportedFeatureFlag {
        /// The processor from `EF_AMDGPU_MACH`.
        processor: Processor,
        /// The feature set in `e_flags`.
        feature: Feature,
    },
    #[error("generic processor {processor} needs code object v6")]
    /// `e_flags` names a generic processor in a code object older than v6.
    GenericNeedsV6 {
        /// The generic processor.
        processor: Processor,
    },
    #[error("generic processor {processor} without EF_AMDGPU_GENERIC_VERSION")]
    /// `e_flags` names a generic processor but its generic version bits are 0.
    MissingGenericVersion {
        /// The generic processor.
        processor: Processor,
    },
    /// Neither a PT_NOTE segment nor a SHT_NOTE section holds an
    /// `AMDGPU` note of type NT_AMDGPU_METADATA.
    #[error("no NT_AMDGPU_METADATA note")]
    MissingMetadata,
    /// The NT_AMDGPU_METADATA note could not be decoded.
    #[error("bad metadata: {0}")]
    Metadata(#[from] MetadataError),
    #[error("amdhsa.target `{target}` is invalid: {source}")]
    /// The metadata's `amdhsa.target` is not a valid target ID.
    InvalidTargetString {
        /// The `amdhsa.target` string as written.
        target: String,
        /// Why it was rejected.
        source: TargetError,
    },
    #[error("amdhsa.target `{metadata}` disagrees with ELF header target {elf}")]
    /// The metadata's `amdhsa.target` names a different processor or
    /// feature states than the ELF header's `e_flags`.
    TargetMismatch {
        /// The `amdhsa.target` string as written.
        metadata: String,
        /// The target decoded from the ELF header.
        elf: TargetId,
    },
    #[error("kernel `{kernel}`: symbol `{symbol}` is not defined in the symbol table")]
    /// A kernel's `.symbol` (its `*.kd` descriptor symbol) is not defined
    /// in the symbol table.
    MissingKernelDescriptor {
        /// The kernel's `.name`.
        kernel: String,
        /// The kernel's `.symbol`.
        symbol: String,
    },
    #[error("kernel `{kernel}`: symbol `{symbol}` has size {size}, expected 64")]
    /// A kernel's descriptor symbol does not have the descriptor size (64 bytes).
    KernelDescriptorSize {
        /// The kernel's `.name`.
        kernel: String,
        /// The kernel's `.symbol`.
        symbol: String,
        /// The symbol's `st_size`.
        size: u64,
    },
    #[error("kernel `{kernel}`: descriptor `{symbol}` lies outside its section's file data")]
    /// A kernel's 64-byte descriptor does not lie inside the file data of
    /// its symbol's section (e.g. the section is `SHT_NOBITS`).
    KernelDescriptorOutOfBounds {
        /// The kernel's `.name`.
        kernel: String,
        /// The kernel's `.symbol`.
        symbol: String,
    },
}
