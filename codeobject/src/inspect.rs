//! `aqueduct inspect`: a stable JSON report and a human-readable rendering
//! of a code object, a raw offload bundle, or a host ELF with `.hip_fatbin`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::bundle::{BUNDLE_MAGIC, BundleError, COMPRESSED_BUNDLE_MAGIC, parse_bundle, parse_bundles};
use crate::code_object::CodeObject;
use crate::elf::{EM_AMDGPU, elf64_machine, is_elf};
use crate::error::CodeObjectError;

/// Why a file could not be inspected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    /// The bytes are neither an ELF file nor an offload bundle.
    #[error("not an AMDGPU code object, offload bundle or ELF file")]
    UnrecognizedFormat,
    /// The file is an AMDGPU ELF but not a valid code object.
    #[error(transparent)]
    CodeObject(#[from] CodeObjectError),
    /// The file is a bundle, or a host ELF, whose bundles could not be parsed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error("bundled code object `{triple}`: {source}")]
    /// A code object inside a bundle is not a valid code object.
    BundledCodeObject {
        /// The triple of the bundle entry that holds it.
        triple: String,
        /// Why it was rejected.
        source: CodeObjectError,
    },
}

/// JSON shape of one code object.
#[derive(Debug, Serialize)]
struct CodeObjectReport<'a> {
    target: &'a str,
    code_object_version: [u32; 2],
    kernels: Vec<KernelReport<'a>>,
}

#[derive(Debug, Serialize)]
struct KernelReport<'a> {
    name: &'a str,
    symbol: &'a str,
    kernarg_segment_size: u32,
    kernarg_segment_align: u32,
    group_segment_fixed_size: u32,
    private_segment_fixed_size: u32,
    wavefront_size: u32,
    args: Vec<ArgReport<'a>>,
}

#[derive(Debug, Serialize)]
struct ArgReport<'a> {
    offset: u32,
    size: u32,
    value_kind: &'a str,
}

/// JSON shape of a bundle file or host object.
#[derive(Debug, Serialize)]
struct BundlesReport<'a> {
    bundles: Vec<BundleEntryReport<'a>>,
}

#[derive(Debug, Serialize)]
struct BundleEntryReport<'a> {
    triple: &'a str,
    /// `null` for entries without an amdgcn code object (e.g. the host entry).
    code_object: Option<CodeObjectReport<'a>>,
}

fn code_object_report(code_object: &CodeObject) -> CodeObjectReport<'_> {
    let (major, minor) = code_object.code_object_version();
    CodeObjectReport {
        target: code_object.target_string(),
        code_object_version: [major, minor],
        kernels: code_object
            .kernels()
            .iter()
            .map(|kernel| KernelReport {
                name: &kernel.name,
                symbol: &kernel.symbol,
                kernarg_segment_size: kernel.kernarg_segment_size,
                kernarg_segment_align: kernel.kernarg_segment_align,
                group_segment_fixed_size: kernel.group_segment_fixed_size,
                private_segment_fixed_size: kernel.private_segment_fixed_size,
                wavefront_size: kernel.wavefront_size,
                args: kernel
                    .args
                    .iter()
                    .map(|arg| ArgReport { offset: arg.offset, size: arg.size, value_kind: arg.value_kind.as_str() })
                    .collect(),
            })
            .collect(),
    }
}

/// What a file turned out to be, fully parsed.
enum Inspected {
    CodeObject(CodeObject),
    /// Every entry of every bundle, in order.
    Bundles(Vec<(String, Option<CodeObject>)>),
}

fn inspect(bytes: &[u8]) -> Result<Inspected, InspectError> {
    let bundles = if bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        vec![parse_bundle(bytes)?]
    } else if is_elf(bytes) {
        if elf64_machine(bytes) == Some(EM_AMDGPU) {
            return Ok(Inspected::CodeObject(CodeObject::parse(bytes)?));
        }
        parse_bundles(bytes)?
    } else {
        return Err(InspectError::UnrecognizedFormat);
    };
    let mut entries = Vec::new();
    for entry in bundles.into_iter().flat_map(|bundle| bundle.entries) {
        let code_object = match entry.code_object {
            Some(data) => Some(
                CodeObject::parse(data)
                    .map_err(|source| InspectError::BundledCodeObject { triple: entry.triple.clone(), source })?,
            ),
            None => None,
        };
        entries.push((entry.triple, code_object));
    }
    Ok(Inspected::Bundles(entries))
}

/// Inspects a plain code object, a raw offload bundle, or a host ELF with a
/// `.hip_fatbin` section, and returns the stable JSON report:
/// `{"target", "code_object_version", "kernels": [...]}` for a code object,
/// `{"bundles": [{"triple", "code_object"}]}` otherwise.
pub fn inspect_json(bytes: &[u8]) -> Result<serde_json::Value, InspectError> {
    Ok(match inspect(bytes)? {
        Inspected::CodeObject(code_object) => to_json(&code_object_report(&code_object)),
        Inspected::Bundles(entries) => to_json(&BundlesReport {
            bundles: entries
                .iter()
                .map(|(triple, code_object)| BundleEntryReport {
                    triple,
                    code_object: code_object.as_ref().map(code_object_report),
                })
                .collect(),
        }),
    })
}

/// Serializing these plain structs cannot fail; yield Null rather than
/// panic should that ever change.
fn to_json<T: Serialize>(report: &T) -> serde_json::Value {
    serde_json::to_value(report).unwrap_or(serde_json::Value::Null)
}

/// The same information as [`inspect_json`], for people.
pub fn inspect_text(bytes: &[u8]) -> Result<String, InspectError> {
    let mut out = String::new();
    match inspect(bytes)? {
        Inspected::CodeObject(code_object) => render_code_object(&mut out, &code_object, ""),
        Inspected::Bundles(entries) => {
            for (triple, code_object) in &entries {
                let _ = writeln!(out, "bundle entry {triple}");
                match code_object {
                    Some(code_object) => render_code_object(&mut out, code_object, "  "),
                    None => {
                        let _ = writeln!(out, "  (no code object)");
                    }
                }
            }
        }
    }
    Ok(out)
}

fn render_code_object(out: &mut String, code_object: &CodeObject, indent: &str) {
    let (major, minor) = code_object.code_object_version();
    let _ = writeln!(
        out,
        "{indent}target {} (code object v{}, metadata v{major}.{minor})",
        code_object.target_string(),
        code_object.abi_version().code_object_version(),
    );
    for kernel in code_object.kernels() {
        let _ = writeln!(out, "{indent}kernel {} ({})", kernel.name, kernel.symbol);
        let _ = writeln!(
            out,
            "{indent}  kernarg {} bytes (align {}), group {} bytes, private {} bytes, wavefront {}",
            kernel.kernarg_segment_size,
            kernel.kernarg_segment_align,
            kernel.group_segment_fixed_size,
            kernel.private_segment_fixed_size,
            kernel.wavefront_size,
        );
        for (index, arg) in kernel.args.iter().enumerate() {
            let _ = writeln!(
                out,
                "{indent}  arg {index:>2}: offset {:>4} size {:>3} {}",
                arg.offset, arg.size, arg.value_kind
            );
        }
    }
}
