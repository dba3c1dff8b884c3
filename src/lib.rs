//! aqueduct: submit work to AMD GPUs through HSA user-mode AQL queues.
//!
//! This root crate re-exports the layers below it; its `aqueduct` binary is the aqueduct-cli
//! crate's (the `cli` feature, on by default).
//! The layers, bottom up: [`abi`] (memory layouts), [`codeobject`] (HSACO and target IDs),
//! [`hsa`] (the HSA table and ROCr), [`soft_hsa`] (the soft HSA runtime), then the engine, whose public API is
//! re-exported at the crate root ([`Engine`], [`Device`], [`Queue`], [`Semaphore`], [`Buffer`],
//! [`Executable`]); its documentation explains the model, how to choose a provider and where
//! errors come from. [`profile`] is the profile bundle and its offline tools. The
//! `aqueduct-bevy` crate is the Bevy plugin. See docs/ARCHITECTURE.md.
//!
//! A typed launch of the demo's `saxpy` (y = a * x + y) on the embedded soft runtime, whose
//! kernels run from host builds registered with the device:
//!
//! ```
//! use std::time::Duration;
//! use aqueduct_cli::demo::{DEMO_CODE_OBJECTS, demo_host_builds};
//! use aqueduct::prelude::*;
//!
//! let engine = Engine::new("soft")?;
//! let device = engine.device();
//! // The demo's code object for the agent's ISA (RDNA3 or RDNA2), and its host builds.
//! let code_object = device.select_code_object(&DEMO_CODE_OBJECTS)?;
//! device.register_host_builds(code_object, demo_host_builds())?;
//! let saxpy = device.load_executable(code_object)?.kernel("saxpy")?;
//! let queue = device.create_queue()?;
//! let x = device.buffer_from(MemoryKind::HostVisible, &[1.0f32, 2.0, 3.0, 4.0])?;
//! let y = device.buffer_from(MemoryKind::HostVisible, &[10.0f32; 4])?;
//! let done = device.create_semaphore(0)?;
//! queue.launch(&saxpy).grid([4, 1, 1]).arg(&y).arg(&x).arg(0.5f32).arg(4u32).signal(done.at(1)).submit()?;
//! done.wait(1, Duration::from_secs(5))?;
//! assert_eq!(y.to_vec()?, [10.5, 11.0, 11.5, 12.0]);
//!
//! // An argument the metadata does not declare there is refused before anything is enqueued.
//! let refused = queue.launch(&saxpy).grid([4, 1, 1]).arg(&y).arg(0.5f32).submit();
//! assert!(matches!(refused, Err(EngineError::KernelArgument { index: 1, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub use aqueduct_abi as abi;
pub use aqueduct_codeobject as codeobject;
pub use aqueduct_engine::*;
pub use aqueduct_hsa as hsa;
pub use aqueduct_profile as profile;
pub use aqueduct_soft_hsa as soft_hsa;

/// The README's Rust examples, compiled and run as doctests (`cargo test --doc -p aqueduct`),
/// so what a reader copies builds and does what it says.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme_doctests {}
