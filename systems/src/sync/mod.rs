//! The behaviour over the lock-free data in `aqueduct-components`, one file per concern:
//!
//! - [`semaphores`]: the semaphore slot protocol: allocation, the seqlocked producer record
//!   (writers and readers), promises, values and failures ([`SemaphoreSync`]).
//! - [`parking`]: host threads parked until a semaphore advances, and waking them
//!   ([`HostParking`]).
//! - [`signals`]: raw reads of HSA signal values, as the packet processor sees them.
//!
//! The behaviour is attached to the components' types through these traits, so a caller imports
//! the trait (`use aqueduct_systems::sync::SemaphoreSync;`) and calls `table.wait_source(..)`.

pub mod parking;
pub mod semaphores;
pub mod signals;

pub use parking::HostParking;
pub use semaphores::SemaphoreSync;
pub use signals::signal_value;
