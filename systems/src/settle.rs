//! How far a queue's submission rows have settled.
//!
//! Each row gets a sequence when it is enqueued (`SubmissionRows::enqueued`, in `QueueState::rows`).
//! A row *settles* when nothing on the queue reads what it referenced any more: its last epoch
//! was drained, or it was failed or refused and released. Rows leave the pending list in order
//! and epochs drain in order, so the settled rows are every row below the oldest one still pending or in flight
//! (or, on a failed queue whose HSA queue lives, still possibly running: `QueueState::unsettled_from`). The
//! queue publishes that mark in its endpoint after each drain or failure; an object released by
//! its last handle is freed once every queue's mark passes the rows it had enqueued by then.
//!
//! **Contract.** The caller holds the queue's lock. `publish_settled` is one release store into the
//! endpoint; the device's deferred release reads every queue's mark without a lock, and frees an
//! object only once each mark passes the rows its snapshot counted.

use core::sync::atomic::Ordering;

use crate::QueueState;

/// The sequence below which every row of the queue has settled: the oldest pending row's, the
/// row of the oldest epoch still in flight, or (neither) every row enqueued.
pub fn settled_rows(queue: &QueueState) -> u64 {
    let mut settled = queue.rows.front;
    if queue.epochs.submitted > queue.epochs.drained {
        settled = settled.min(queue.epochs.row[queue.epochs.slot(queue.epochs.drained + 1)]);
    }
    if let Some(row) = queue.unsettled_from {
        settled = settled.min(row);
    }
    settled
}

/// Publishes [`settled_rows`] with one release store. Call it after a drain (so that its
/// semaphore stores come before any reuse of their slots) and after rows fail or are refused.
pub fn publish_settled(queue: &QueueState) {
    queue.handles.endpoint.settled_rows.store(settled_rows(queue), Ordering::Release);
}
