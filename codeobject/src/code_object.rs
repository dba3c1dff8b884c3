//! [`CodeObject`]: a parsed, validated HSACO with its kernels.

use std::fmt;

use crate::elf::{AbiVersion, AmdgpuElf, KERNEL_DESCRIPTOR_SIZE, KernelDescriptorSymbol, LoadSegment};
use crate::error::CodeObjectError;
use crate::metadata::{KernelMetadata, parse_metadata};
use crate::target::TargetId;

/// A lookup of a kernel that the code object does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownKernel {
    /// The name or symbol that was looked up.
    pub requested: String,
    /// Names of the kernels that do exist.
    pub available: Vec<String>,
}

impl fmt::Display for UnknownKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no kernel `{}` in code object; available: ", self.requested)?;
        if self.available.is_empty() {
            return f.write_str("(none)");
        }
        f.write_str(&self.available.join(", "))
    }
}

/// A parsed AMDGPU code object (HSACO, code-object v4 to v6).
///
/// Holds no reference to the input bytes; keep them around to read kernel
/// descriptors with [`CodeObject::kernel_descriptor_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObject {
    target: TargetId,
    target_string: String,
    code_object_version: (u32, u32),
    abi_version: AbiVersion,
    kernels: Vec<KernelMetadata>,
    /// Parallel to `kernels`.
    descriptors: Vec<KernelDescriptorSymbol>,
    segments: Vec<LoadSegment>,
    dynamic_vaddr: Option<u64>,
}

impl CodeObject {
    /// Parses and validates a code object. Never panics; every problem is a
    /// [`CodeObjectError`].
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, CodeObjectError> {
        let image = AmdgpuElf::parse(bytes)?;
        let metadata = parse_metadata(image.metadata_note()?)?;

        let metadata_target = TargetId::parse(&metadata.target)
            .map_err(|source| CodeObjectError::InvalidTargetString { target: metadata.target.clone(), source })?;
        if !metadata_target.same_target(&image.target) {
            return Err(CodeObjectError::TargetMismatch { metadata: metadata.target, elf: image.target });
        }

        let symbols = image.kernel_descriptor_symbols()?;
        let mut descriptors = Vec::with_capacity(metadata.kernels.len());
        for kernel in &metadata.kernels {
            let Some(symbol) = symbols.get(kernel.symbol.as_str()) else {
                return Err(CodeObjectError::MissingKernelDescriptor {
                    kernel: kernel.name.clone(),
                    symbol: kernel.symbol.clone(),
                });
            };
            if symbol.size != KERNEL_DESCRIPTOR_SIZE {
                return Err(CodeObjectError::KernelDescriptorSize {
                    kernel: kernel.name.clone(),
                    symbol: kernel.symbol.clone(),
                    size: symbol.size,
                });
            }
            let Some(file_offset) = symbol.file_offset else {
                return Err(CodeObjectError::KernelDescriptorOutOfBounds {
                    kernel: kernel.name.clone(),
                    symbol: kernel.symbol.clone(),
                });
            };
            descriptors.push(KernelDescriptorSymbol { address: symbol.address, file_offset });
        }

        let segments = image.load_segments()?;
        let dynamic_vaddr = image.dynamic_vaddr()?;
        Ok(CodeObject {
            segments,
            dynamic_vaddr,
            target: image.target,
            target_string: metadata.target,
            code_object_version: metadata.version,
            abi_version: image.abi_version,
            kernels: metadata.kernels,
            descriptors,
        })
    }

    /// The target from the ELF header (including the generic version).
    pub fn target(&self) -> &TargetId {
        &self.target
    }

    /// The `amdhsa.target` metadata string as written.
    pub fn target_string(&self) -> &str {
        &self.target_string
    }

    /// `amdhsa.version` from the metadata: `(major, minor)`.
    pub fn code_object_version(&self) -> (u32, u32) {
        self.code_object_version
    }

    /// The code-object format version from the ELF header.
    pub fn abi_version(&self) -> AbiVersion {
        self.abi_version
    }

    /// Kernels in metadata order.
    pub fn kernels(&self) -> &[KernelMetadata] {
        &self.kernels
    }

    /// Finds a kernel by `.name` or by `.symbol` (`name.kd`).
    pub fn kernel(&self, name_or_symbol: &str) -> Result<&KernelMetadata, UnknownKernel> {
        self.kernel_index(name_or_symbol).map(|index| &self.kernels[index])
    }

    /// Index of a kernel (by `.name` or `.symbol`) in [`Self::kernels`].
    pub fn kernel_index(&self, name_or_symbol: &str) -> Result<usize, UnknownKernel> {
        self.kernels.iter().position(|k| k.name == name_or_symbol || k.symbol == name_or_symbol).ok_or_else(|| {
            UnknownKernel {
                requested: name_or_symbol.to_owned(),
                available: self.kernels.iter().map(|k| k.name.clone()).collect(),
            }
        })
    }

    /// Where the descriptor of kernel `kernel_index` is.
    pub fn kernel_descriptor(&self, kernel_index: usize) -> Option<KernelDescriptorSymbol> {
        self.descriptors.get(kernel_index).copied()
    }

    /// The `PT_DYNAMIC` segment's virtual address, if any.
    pub fn dynamic_vaddr(&self) -> Option<u64> {
        self.dynamic_vaddr
    }

    /// The `PT_LOAD` segments a loader maps, in program-header order.
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// The 64-byte kernel descriptor of kernel `kernel_index`, read from
    /// `bytes` (the same bytes given to [`CodeObject::parse`]).
    pub fn kernel_descriptor_bytes<'b>(&self, bytes: &'b [u8], kernel_index: usize) -> Option<&'b [u8; 64]> {
        let start = usize::try_from(self.descriptors.get(kernel_index)?.file_offset).ok()?;
        let end = start.checked_add(64)?;
        bytes.get(start..end)?.try_into().ok()
    }
}
