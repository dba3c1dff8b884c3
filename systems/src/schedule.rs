//! The stages as bevy systems in a chained schedule: the batch path, and the other side of the
//! `ecs_stages` benchmark that compares a schedule run with the direct calls the hot path makes.

use aqueduct_components::queue_state::QueueRings;
use aqueduct_components::submission::{AdmissionPlan, StagedSubmission, Verdict};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::EpochRows;

pub fn admission_system(mut rings: ResMut<QueueRings>, staged: Res<StagedSubmission>, mut plan: ResMut<AdmissionPlan>) {
    crate::admission::admit(&mut rings, &staged, &mut plan);
}

pub fn kernarg_system(staged: Res<StagedSubmission>, plan: Res<AdmissionPlan>) {
    if plan.verdict == Verdict::Admitted {
        crate::kernarg::patch_kernargs(&staged, &plan);
    }
}

pub fn publication_system(
    mut rings: ResMut<QueueRings>,
    mut staged: ResMut<StagedSubmission>,
    mut plan: ResMut<AdmissionPlan>,
    mut rows: EpochRows,
) {
    if plan.verdict == Verdict::Admitted {
        // A fault is recorded in the epoch row (its signals fail at reclaim); batch callers read
        // the outcome from the semaphores.
        let _ = crate::publication::publish(&mut rings, &mut staged, &mut plan, &mut rows);
    }
}

pub fn reclaim_system(mut rings: ResMut<QueueRings>, mut rows: EpochRows) {
    let retired = rings.endpoint.device_retired();
    crate::reclaim::drain(&mut rings, &mut rows, retired);
}

/// admission → kernarg patching → AQL publication → epoch reclaim, on the single-threaded
/// executor (the stages share one queue's state, so there is nothing to run in parallel).
pub fn submission_schedule() -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((admission_system, kernarg_system, publication_system, reclaim_system).chain());
    schedule
}
