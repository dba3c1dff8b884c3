//! The words the engine, the data its stages run over and the files it writes share.
//!
//! [`OperationKind`] is the one table of the operations a queue offers. The queue's rows carry a
//! kind (`aqueduct-components`), the engine's operations name theirs (`engine/src/queue/ops.rs`),
//! and the profile bundle and the replay capture write it (`aqueduct-profile`). It lives here, below
//! all three, so that the file formats name the engine's kinds rather than the engine naming the
//! format's. Adding a kind starts with one entry here; the checklist is in docs/ARCHITECTURE.md.

use serde::{Deserialize, Serialize};

/// Declares [`OperationKind`] from its one list: each kind's variant, its name in profiles,
/// captures and the CLI (and a name older files used, still read), and what it is.
macro_rules! operation_kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal $(alias $alias:literal)?,)*) => {
        /// The operation a submission carried, as the user called it (a fill is a builtin
        /// dispatch to the stages, but a fill here). The queue's rows carry it, the profile
        /// records it, and a replay capture's operations are of one kind each.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum OperationKind {
            #[default]
            $($(#[$doc])* #[serde(rename = $name $(, alias = $alias)?)] $kind,)*
        }

        impl OperationKind {
            /// Every kind, in the list's order.
            pub const ALL: &[OperationKind] = &[$(OperationKind::$kind),*];

            /// The kind's name, as profiles, captures and the CLI spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $(OperationKind::$kind => $name,)*
                }
            }
        }
    };
}

operation_kinds! {
    Barrier = "barrier",
    Fill = "fill",
    Copy = "copy",
    Update = "update",
    Dispatch = "dispatch",
    RawDispatch = "raw-dispatch",
    /// Running a command buffer (`Queue::execute`); profiles before this name said
    /// `command-buffer-execution`.
    Execute = "execute" alias "command-buffer-execution",
    /// Queue-ordered allocation from a pool (a barrier when it must order anything).
    Alloca = "alloca",
    /// Queue-ordered return of an alloca's memory.
    Dealloca = "dealloca",
    /// A host function run in queue order.
    HostCall = "host-call",
    /// A file read in queue order (`Queue::read_file`).
    ReadFile = "read-file",
    /// A file write in queue order (`Queue::write_file`).
    WriteFile = "write-file",
}

#[cfg(test)]
mod tests {
    use super::OperationKind;

    #[test]
    fn every_kind_has_its_own_name() {
        let mut names: Vec<&str> = OperationKind::ALL.iter().map(|kind| kind.name()).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "two kinds share a name");
        assert!(names.iter().all(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')));
    }
}
