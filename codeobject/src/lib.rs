//! aqueduct-codeobject: everything about AMDGPU code objects in one place.
//!
//! - [`TargetId`]: parse `gfx90a:sramecc+:xnack-` / `gfx11-generic`, and
//!   check whether code for one target runs on an agent ([`TargetId::runs_on`]).
//! - [`choose_target`]: which of several code objects (a fat binary's entries) a device loads,
//!   by [`Fit`], as HIP picks them.
//! - [`CodeObject`]: parse an HSACO (ELF, code-object v4–v6): target from
//!   `e_flags`, kernels from the NT_AMDGPU_METADATA note, and where each
//!   kernel's 64-byte descriptor is.
//! - [`parse_bundle`] / [`parse_bundles`]: clang offload bundles, raw or
//!   inside a host ELF's `.hip_fatbin` section.
//! - [`CodeObjectId`]: a code object's identity (a content hash), which keys the soft
//!   runtime's host builds of kernels.
//! - [`KernelMetadata::check_declared_args`]: whether a host build's declared arguments match
//!   the metadata ([`ArgLayoutMismatch`] names the first that differs).
//! - [`inspect_json`] / [`inspect_text`]: the `aqueduct inspect` report.
//!
//! No function panics on malformed input; every failure is a typed error.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod arg_layout;
mod bundle;
mod code_object;
mod elf;
mod error;
mod identity;
mod inspect;
mod metadata;
mod selection;
mod target;

pub use arg_layout::{ArgLayoutMismatch, ArgPlacement};
pub use bundle::{
    BUNDLE_MAGIC, Bundle, BundleEntry, BundleError, COMPRESSED_BUNDLE_MAGIC, FATBIN_SECTION, parse_bundle,
    parse_bundles,
};
pub use code_object::{CodeObject, UnknownKernel};
pub use elf::{AbiVersion, KERNEL_DESCRIPTOR_SIZE, KernelDescriptorSymbol, LoadSegment};
pub use error::CodeObjectError;
pub use identity::CodeObjectId;
pub use inspect::{InspectError, inspect_json, inspect_text};
pub use metadata::{
    Access, AddressSpace, KernelArg, KernelMetadata, KernelRef, Location, Metadata, MetadataError, ValueKind,
    parse_metadata,
};
pub use selection::{Choice, Fit, Rejection, choose_target};
pub use target::{
    Feature, FeatureState, ISA_PREFIX, Incompatibility, IncompatibilityReason, Processor, TargetError, TargetId,
};
