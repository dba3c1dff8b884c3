//! The batch path: `QueueState::run_schedule` runs the four stages as systems over the state's
//! parts, moved into the queue World for the run. It must do to the rows what the immediate
//! path's direct calls do (`run_pass`), leave every part back in the state afterwards (the
//! World holds only empty ones between runs), and let either path run next.

use std::time::{Duration, Instant};

use aqueduct_components::submission::Verdict;
use aqueduct_systems::strategy::{BarrierValue, CrossQueueStrategy};
use aqueduct_systems::{QueueState, reclaim, run_pass};

mod common;
use common::rig;

/// Stages `count` barrier rows (a pushed row is a barrier until a writer makes it more).
fn stage_barriers(queue: &mut QueueState, count: u64) {
    for _ in 0..count {
        queue.rows.push();
    }
}

/// Waits (up to 5 s) until the device retired `epoch`, then drains through it.
fn drain_through(queue: &mut QueueState, epoch: u64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while BarrierValue::device_retired(&queue.handles.endpoint) < epoch {
        assert!(Instant::now() < deadline, "epoch {epoch} never retired");
        std::thread::sleep(Duration::from_millis(1));
    }
    let retired = BarrierValue::device_retired(&queue.handles.endpoint);
    reclaim::drain::<BarrierValue>(&mut queue.reclaim(), retired, reclaim::DrainOrder::Causal);
    assert_eq!(queue.epochs.drained, epoch, "drained through epoch {epoch}");
}

/// What a pass left in the state, to compare the two paths by.
fn outcome(queue: &QueueState) -> (u64, u64, u64, bool, Option<u32>) {
    (
        queue.epochs.submitted,
        queue.handles.ring.write_index_now(),
        queue.kernargs.head(),
        queue.rows.is_empty(),
        queue.failure,
    )
}

#[test]
fn the_schedule_does_what_the_direct_pass_does_and_gives_every_part_back() {
    const ROWS: u64 = 12; // under the rig's 16 epochs in flight and 64 ring packets
    let mut scheduled = rig();
    let mut direct = rig();
    let kernarg_base = scheduled.state.kernargs.base;
    let kernarg_capacity = scheduled.state.kernargs.capacity;

    stage_barriers(&mut scheduled.state, ROWS);
    stage_barriers(&mut direct.state, ROWS);
    scheduled.state.run_schedule();
    run_pass::<BarrierValue>(&mut direct.state);

    let after = outcome(&scheduled.state);
    assert_eq!(after, outcome(&direct.state), "both paths published the same rows alike");
    assert_eq!(after, (ROWS, ROWS, 0, true, None), "every row was published, one epoch and packet each");
    assert_eq!(scheduled.state.rows.pass.admitted(), 0..ROWS, "the pass the systems ran is the state's");
    assert!(scheduled.state.rows.pass.stop.is_none());
    // The parts came back: the state's own kernarg ring, and the read index admission loaded.
    assert_eq!((scheduled.state.kernargs.base, scheduled.state.kernargs.capacity), (kernarg_base, kernarg_capacity));
    assert!(scheduled.state.known_read_index <= ROWS);

    drain_through(&mut scheduled.state, ROWS);

    // Either path runs next, on the parts the other left.
    stage_barriers(&mut scheduled.state, 2);
    run_pass::<BarrierValue>(&mut scheduled.state);
    stage_barriers(&mut scheduled.state, 3);
    scheduled.state.run_schedule();
    assert_eq!(scheduled.state.epochs.submitted, ROWS + 5);
    assert!(scheduled.state.rows.is_empty());
    drain_through(&mut scheduled.state, ROWS + 5);
    drain_through(&mut direct.state, ROWS);
}

#[test]
fn a_failed_queue_refuses_on_the_schedule_as_on_the_direct_pass() {
    let mut scheduled = rig();
    let mut direct = rig();
    for queue in [&mut scheduled.state, &mut direct.state] {
        queue.failure = Some(7);
        stage_barriers(queue, 2);
    }
    scheduled.state.run_schedule();
    run_pass::<BarrierValue>(&mut direct.state);
    for queue in [&scheduled.state, &direct.state] {
        // Admission reads the failure the systems were given as a resource.
        assert_eq!(queue.rows.pass.stop, Some((0, Verdict::QueueFailed(7))), "the first row stopped the pass");
        assert_eq!(queue.epochs.submitted, 0, "nothing reserved");
        assert_eq!(queue.failure, Some(7), "the failure is still the state's");
    }
}
