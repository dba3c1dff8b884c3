//! [`CodeObjectError`]: why bytes were rejected as an AMDGPU code object.
//!
//! Its own module, below both the ELF reader (`elf`) and the code-object parser (`code_object`),
//! so each reports the same error type while the parser alone depends on the reader.

use crate::metadata::MetadataError;
use crate::target::{Feature, Processor, TargetError, TargetId};

/// Why bytes were rejected as an AMDGPU code object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    #[error("not an ELF file")]
    NotElf,
    #[error("not a 64-bit ELF file (EI_CLASS {class})")]
    NotElf64 { class: u8 },
    #[error("not a little-endian ELF file")]
    NotLittleEndian,
    #[error("malformed ELF: {0}")]
    MalformedElf(String),
    #[error("ELF machine {machine:#x} is not AMDGPU (0xe0)")]
    WrongMachine { machine: u16 },
    #[error("ELF OS ABI {os_abi} is not AMDGPU_HSA (64)")]
    WrongOsAbi { os_abi: u8 },
    #[error(
        "unsupported code object version (EI_ABIVERSION {abi_version}; \
         only v4, v5 and v6 = ABI versions 2, 3 and 4 are supported)"
    )]
    UnsupportedVersion { abi_version: u8 },
    #[error("unknown EF_AMDGPU_MACH value {mach:#x}")]
    UnknownMach { mach: u32 },
    #[error("e_flags set {feature} for processor {processor}, which does not support it")]
    UnsupportedFeatureFlag { processor: Processor, feature: Feature },
    #[error("generic processor {processor} needs code object v6")]
    GenericNeedsV6 { processor: Processor },
    #[error("generic processor {processor} without EF_AMDGPU_GENERIC_VERSION")]
    MissingGenericVersion { processor: Processor },
    #[error("no NT_AMDGPU_METADATA note")]
    MissingMetadata,
    #[error("bad metadata: {0}")]
    Metadata(#[from] MetadataError),
    #[error("amdhsa.target `{target}` is invalid: {source}")]
    InvalidTargetString { target: String, source: TargetError },
    #[error("amdhsa.target `{metadata}` disagrees with ELF header target {elf}")]
    TargetMismatch { metadata: String, elf: TargetId },
    #[error("kernel `{kernel}`: symbol `{symbol}` is not defined in the symbol table")]
    MissingKernelDescriptor { kernel: String, symbol: String },
    #[error("kernel `{kernel}`: symbol `{symbol}` has size {size}, expected 64")]
    KernelDescriptorSize { kernel: String, symbol: String, size: u64 },
    #[error("kernel `{kernel}`: descriptor `{symbol}` lies outside its section's file data")]
    KernelDescriptorOutOfBounds { kernel: String, symbol: String },
}
