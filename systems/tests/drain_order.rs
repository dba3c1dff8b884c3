//! The causal drain order over a real soft queue: an epoch that waited from the device on
//! another queue's epoch drains only after that queue drained it. `Causal` registers on the
//! producer's waiter mask and pokes it; `CausalProbe`, which a drainer uses before it drains the
//! producer itself, only names the producer and leaves no trace on it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aqueduct_components::dependency::{Producer, SignalOp, WaitOp};
use aqueduct_components::directory::{EPOCH_BASE, QueueEndpoint};
use aqueduct_components::drain_order;
use aqueduct_hsa::sys::hsa_signal_t;
use aqueduct_systems::reclaim::{self, DrainOrder};
use aqueduct_systems::strategy::{BarrierValue, CrossQueueStrategy};
use aqueduct_systems::sync::SemaphoreSync;

mod common;
use common::rig;

#[test]
fn a_held_drain_names_its_producer_and_only_causal_registers() {
    let mut rig = rig();
    let api = rig.hsa.api();
    // Queue 1: an endpoint whose epoch 1 will retire without being drained.
    let directory = rig.state.handles.link.directory.clone();
    let index = directory.reserve_index().expect("a queue index");
    let producer = Arc::new(QueueEndpoint::new(
        index,
        rig.hsa.signal_create(EPOCH_BASE).expect("signal").handle,
        rig.hsa.signal_create(0).expect("signal").handle,
        Box::new([]),
    ));
    directory.register(producer.clone());
    let (waited, signalled) =
        (rig.semaphores.allocate(0).expect("semaphore"), rig.semaphores.allocate(0).expect("semaphore"));
    rig.semaphores.record_queued_signal(waited, 1, Producer { queue: index, epoch: 1 });

    // Queue 0 waits for it from the device, then signals.
    let queue = &mut rig.state;
    let row = queue.rows.push();
    let mut writer = queue.rows.writer(row);
    writer.push_wait(WaitOp { semaphore: waited, value: 1 });
    writer.push_signal(SignalOp { semaphore: signalled, value: 1 });
    aqueduct_systems::run_pass::<BarrierValue>(queue);
    assert_eq!(queue.epochs.submitted, 1, "published behind a device wait");
    assert_eq!(queue.rows.pass.device_waits, 1);

    // The producer's epoch runs on the device: the wait passes and queue 0's epoch retires.
    // SAFETY: the signal is live; a subtract is what the producer's last packet does.
    unsafe { (api.hsa_signal_subtract_scacq_screl)(hsa_signal_t { handle: producer.epoch_signal }, 1) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while BarrierValue::device_retired(&queue.handles.endpoint) < 1 {
        assert!(Instant::now() < deadline, "queue 0's epoch never retired");
        std::thread::sleep(Duration::from_millis(1));
    }
    let control = |endpoint: &QueueEndpoint| {
        // SAFETY: the control signal is live.
        unsafe { (api.hsa_signal_load_scacquire)(hsa_signal_t { handle: endpoint.control_signal }) }
    };

    let probe = reclaim::drain::<BarrierValue>(&mut queue.reclaim(), 1, DrainOrder::CausalProbe);
    assert_eq!((probe.epochs, probe.held_on), (0, Some(index)), "held on the producer, which it names");
    assert_eq!(producer.drain_waiters.load(Ordering::SeqCst), 0, "a probe registers nothing");
    assert_eq!(control(&producer), 0, "and pokes no one");
    assert_eq!(rig.semaphores.value(signalled), 0);

    let queue = &mut rig.state;
    let held = reclaim::drain::<BarrierValue>(&mut queue.reclaim(), 1, DrainOrder::Causal);
    assert_eq!((held.epochs, held.held_on), (0, Some(index)));
    assert_eq!(producer.drain_waiters.load(Ordering::SeqCst), 1 << queue.handles.index, "registered on the producer");
    assert_eq!(control(&producer), 1, "whose completion thread was poked, once");
    assert_eq!(rig.semaphores.value(signalled), 0, "nothing published before the producer drains");

    // The producer drains its epoch: queue 0 is the one to wake, and its drain goes through.
    rig.semaphores.signal(waited, 1);
    let wake = drain_order::publish_drained(&producer.drained, &producer.drain_waiters, 1);
    assert_eq!(wake, 1 << rig.state.handles.index);
    let done = reclaim::drain::<BarrierValue>(&mut rig.state.reclaim(), 1, DrainOrder::CausalProbe);
    assert_eq!((done.epochs, done.held_on), (1, None));
    assert_eq!(rig.semaphores.value(signalled), 1, "published once its cause was");
}
