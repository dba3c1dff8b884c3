//! aqueduct-systems: the four stages every submission passes through, as small functions over the
//! data in `aqueduct-components`.
//!
//! 1. [`admission`]: capacity checks that change nothing, wait resolution with frontier elision,
//!    then the reservation (AQL slots by compare-and-swap, kernarg space, an epoch row).
//! 2. [`kernarg`]: binding pointers, constants, implicit arguments and staged bytes written into
//!    the reserved kernarg space.
//! 3. [`publication`]: packet bodies, then each header with one 32-bit release store, then one
//!    doorbell store; the epoch row takes the submission's signals and retained resources.
//!    For a command-buffer execution, [`replay`]'s block processor writes the segment's packets
//!    and kernargs.
//! 4. [`reclaim`]: retired epochs signal their semaphores (coalesced), free kernarg space and
//!    release what they retained; a failed queue fails everything in flight.
//!
//! The hot path calls the stages directly through one cached `SystemState` ([`SubmitParams`]);
//! [`schedule`] wraps the same functions as bevy systems for batch use and for the benchmark that
//! compares both.

pub mod admission;
pub mod kernarg;
pub mod publication;
pub mod reclaim;
pub mod replay;
pub mod schedule;

use aqueduct_components::queue_state::{EpochDeviceWaits, EpochRetained, EpochRow, EpochSignals, QueueRings};
use aqueduct_components::submission::{AdmissionPlan, StagedSubmission};
use bevy_ecs::prelude::*;
use bevy_ecs::system::{SystemParamItem, SystemState};

/// The epoch-row columns publication and reclaim touch.
pub type EpochRows<'w, 's> = Query<
    'w,
    's,
    (&'static mut EpochRow, &'static mut EpochSignals, &'static mut EpochRetained, &'static mut EpochDeviceWaits),
>;

/// Everything one submission's stages borrow from the queue World.
pub type SubmitParamSet = (
    ResMut<'static, QueueRings>,
    ResMut<'static, StagedSubmission>,
    ResMut<'static, AdmissionPlan>,
    EpochRows<'static, 'static>,
);

/// The cached state that fetches [`SubmitParamSet`] once per submission.
pub type SubmitParams = SystemState<SubmitParamSet>;

/// Fetches the stages' parameters. The queue World is built with every resource they name and
/// never loses one, so validation cannot fail.
pub fn stage_params<'a>(state: &'a mut SubmitParams, world: &'a mut World) -> SystemParamItem<'a, 'a, SubmitParamSet> {
    match state.get_mut(world) {
        Ok(params) => params,
        Err(error) => unreachable!("the queue World lost a stage resource: {error}"),
    }
}

/// A span per stage when the `trace` feature is on; nothing otherwise.
#[macro_export]
macro_rules! stage_span {
    ($name:literal) => {
        #[cfg(feature = "trace")]
        let _span = tracing::trace_span!($name).entered();
    };
}

/// Per-epoch-row capacity reserved at queue creation (signals, retained handles, device waits),
/// so even a row's first use allocates nothing for a typical submission.
const ROW_SIGNALS: usize = 2;
const ROW_RETAINED: usize = 6;
const ROW_WAITS: usize = 2;

/// Builds a queue World: its rings, `epochs` recycled epoch rows, the staging resources, and the
/// cached parameter state the stages run through.
pub fn build_queue_world(
    index: u16,
    ring: aqueduct_hsa::ring::AqlRing,
    kernargs: aqueduct_components::queue_state::KernargRing,
    endpoint: std::sync::Arc<aqueduct_components::directory::QueueEndpoint>,
    link: aqueduct_components::queue_state::DeviceLink,
    epochs: usize,
) -> (World, SubmitParams) {
    use aqueduct_components::queue_state::EpochRing;
    let mut world = World::new();
    let rows: Box<[Entity]> = (0..epochs)
        .map(|_| {
            world
                .spawn((
                    EpochRow::default(),
                    EpochSignals(Vec::with_capacity(ROW_SIGNALS)),
                    EpochRetained(Vec::with_capacity(ROW_RETAINED)),
                    EpochDeviceWaits(Vec::with_capacity(ROW_WAITS)),
                ))
                .id()
        })
        .collect();
    world.insert_resource(QueueRings {
        index,
        ring,
        known_read_index: 0,
        kernargs,
        epochs: EpochRing { rows, submitted: 0, reclaimed: 0 },
        strategy: endpoint.strategy,
        epoch_signal: endpoint.epoch_signal,
        endpoint,
        frontier: aqueduct_components::frontier::QueueFrontier::default(),
        link,
        failure: None,
        deferred: std::collections::VecDeque::new(),
    });
    world.insert_resource(StagedSubmission::default());
    world.insert_resource(AdmissionPlan::default());
    let params = SubmitParams::new(&mut world);
    (world, params)
}
