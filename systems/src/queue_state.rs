//! The queue World's hot resource, [`QueueState`], and the device-wide tables it reaches
//! ([`DeviceLink`]).
//!
//! They are defined here rather than in `aqueduct-components` because both hold HSA handles:
//! the producer's view of the queue's AQL ring ([`AqlRing`], whose operations are the hsa crate's
//! producer path, shared with its tests, the builtins' tests and the bench baseline) and the
//! provider's function table. The plain data they gather (kernarg and epoch rings, the endpoint,
//! the frontier, the shared tables) stays in components, which does not depend on hsa.

use std::sync::Arc;

use aqueduct_components::directory::{QueueDirectory, QueueEndpoint};
use aqueduct_components::frontier::QueueFrontier;
use aqueduct_components::queue_state::{EpochRing, KernargRing};
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_components::submission::SubmissionRows;
use aqueduct_hsa::ring::AqlRing;
use bevy_ecs::prelude::*;

/// The device-wide tables every queue reads.
#[derive(Clone)]
pub struct DeviceLink {
    pub api: &'static aqueduct_hsa::HsaApi,
    pub semaphores: Arc<SemaphoreTable>,
    pub directory: Arc<QueueDirectory>,
}

/// The queue's hot state, one resource so the stages fetch it once.
#[derive(Resource)]
pub struct QueueState {
    pub index: u16,
    pub ring: AqlRing,
    /// The consumer's read index as last loaded; it only grows, so a stale value
    /// underestimates free space and is safe.
    pub known_read_index: u64,
    pub kernargs: KernargRing,
    pub epochs: EpochRing,
    pub endpoint: Arc<QueueEndpoint>,
    /// What this queue's published work is known to follow on other queues (its own device
    /// waits, and transitively what their producers followed): a later wait it covers needs no
    /// barrier.
    pub frontier: QueueFrontier,
    pub link: DeviceLink,
    /// The `hsa_signal_t` the last packet of a submission decrements (BarrierValue strategy).
    pub epoch_signal: u64,
    /// Sticky failure (failure-log index), mirrored in the endpoint for other queues.
    pub failure: Option<u32>,
    /// The submission rows in queue order, the free ones, and what the current pass did: held
    /// here rather than as a resource of their own, so a pass (and each staging) fetches one
    /// resource less.
    pub rows: SubmissionRows,
}
