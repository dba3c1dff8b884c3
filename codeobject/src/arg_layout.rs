//! A kernel's explicit arguments as a host build declares them, compared with its metadata.
//!
//! A CPU build of a kernel (the soft runtime's host builds, C or Rust) reads its arguments out of
//! the kernarg segment at offsets it was written for; the code object's metadata says where the
//! compiler put them. The two must agree argument by argument, or the host build reads the wrong
//! bytes. The comparison lives here, beside the metadata, so the soft runtime (which binds host
//! builds as code objects load) and the engine (which checks them when they are registered) give
//! the same answer and the same error.

use std::fmt;

use crate::metadata::{KernelMetadata, ValueKind};

/// Where one explicit argument lies in the kernarg segment, and whether it is a device address
/// (metadata value kind `global_buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgPlacement {
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Byte size.
    pub size: u32,
    /// A device address (`global_buffer`), as opposed to a value passed by value.
    pub pointer: bool,
}

impl fmt::Display for ArgPlacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.pointer { "pointer" } else { "value" };
        write!(f, "a {}-byte {kind} at offset {}", self.size, self.offset)
    }
}

/// A host build's declared arguments disagree with the code object's metadata: the first
/// argument where they differ.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ArgLayoutMismatch {
    /// The kernel's descriptor symbol (`name.kd`).
    pub symbol: String,
    /// The argument's position among the explicit arguments.
    pub index: usize,
    /// The argument's name, from the metadata or else from the host build's declaration.
    pub name: Option<String>,
    /// What the host build declares there; `None` when it declares fewer arguments.
    pub declared: Option<ArgPlacement>,
    /// What the metadata declares there; `None` when it declares fewer arguments.
    pub metadata: Option<ArgPlacement>,
}

impl fmt::Display for ArgLayoutMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "host build of `{}`, argument {}", self.symbol, self.index)?;
        if let Some(name) = &self.name {
            write!(f, " `{name}`")?;
        }
        match self.declared {
            Some(declared) => write!(f, ": it declares {declared}")?,
            None => f.write_str(": it declares no such argument")?,
        }
        match self.metadata {
            Some(metadata) => write!(f, " but the metadata declares {metadata}"),
            None => f.write_str(" but the metadata declares no such argument"),
        }
    }
}

impl KernelMetadata {
    /// The explicit (not hidden) arguments' placements, in order.
    pub fn explicit_placements(&self) -> Vec<ArgPlacement> {
        self.args
            .iter()
            .filter(|arg| !arg.value_kind.is_hidden())
            .map(|arg| ArgPlacement {
                offset: arg.offset,
                size: arg.size,
                pointer: arg.value_kind == ValueKind::GlobalBuffer,
            })
            .collect()
    }

    /// Compares what a host build declares about each explicit argument it reads (placement and
    /// optional name, in order) with the metadata, and reports the first that differs. Every
    /// explicit argument must be declared, even one the host build ignores: a declaration that
    /// stops early is as likely a stale one as a deliberate one.
    pub fn check_declared_args<'a>(
        &self,
        declared: impl IntoIterator<Item = (ArgPlacement, Option<&'a str>)>,
    ) -> Result<(), ArgLayoutMismatch> {
        let explicit: Vec<_> = self.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
        let metadata = self.explicit_placements();
        let mut declared = declared.into_iter();
        let mut index = 0;
        loop {
            let host = declared.next();
            let expected = metadata.get(index).copied();
            if host.is_none() && expected.is_none() {
                return Ok(());
            }
            if host.map(|(placement, _)| placement) != expected {
                let name = explicit
                    .get(index)
                    .and_then(|arg| arg.name.clone())
                    .or_else(|| host.and_then(|(_, name)| name).map(str::to_string));
                return Err(ArgLayoutMismatch {
                    symbol: self.symbol.clone(),
                    index,
                    name,
                    declared: host.map(|(placement, _)| placement),
                    metadata: expected,
                });
            }
            index += 1;
        }
    }
}
