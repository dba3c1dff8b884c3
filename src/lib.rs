//! aqueduct: submit work to AMD GPUs through HSA user-mode AQL queues.
//!
//! This root crate re-exports the layers below it and provides the `aqueduct` command-line tool.
//! The layers, bottom up: [`abi`] (memory layouts), [`codeobject`] (HSACO and target IDs),
//! [`hsa`] (the HSA table, ROCr and the soft runtime), then the engine, whose public API is
//! re-exported at the crate root ([`Engine`], [`Device`], [`Queue`], [`Semaphore`], [`Buffer`],
//! [`Executable`]). [`profile`] is the profile bundle and its offline tools. See
//! docs/ARCHITECTURE.md.

pub use aqueduct_abi as abi;
pub use aqueduct_codeobject as codeobject;
pub use aqueduct_engine::*;
pub use aqueduct_hsa as hsa;
pub use aqueduct_profile as profile;

pub mod bench;
pub mod demo;
pub mod info;
pub mod stress;
