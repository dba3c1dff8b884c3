//! Before a capture runs: a wait that no record can meet refuses the file, naming the record.
//!
//! The replayer issues the records in file order from one thread, and a host wait blocks that
//! thread, so a host wait can be met only by what the records before it do: a semaphore's
//! initial value, host signals, and the signals of queue operations that can run. An operation
//! runs once its waits are met and every earlier operation of its queue has run (a queue runs
//! its work in order). A queue operation's own wait may be met by any record, before or after
//! it (the device waits; the thread goes on), but one that nothing meets would hang the final
//! drain. A failed semaphore, or a cancelled queue's work, ends its waits with an error at once,
//! so neither is a hang. Without this check, such a file (a signal dropped, records deleted or
//! reordered) failed only when a wait timed out, 30 s by default.

use std::collections::{HashMap, HashSet, VecDeque};

use aqueduct_profile::replay::{Point, ReplayRecord};

use crate::error::{EngineError, EngineResult};

/// A queue operation that has not run yet.
struct Pending {
    record: u64,
    waits: Vec<Point>,
    signals: Vec<Point>,
}

/// One pass over the records: what each semaphore is known to reach.
#[derive(Default)]
pub(super) struct WaitCheck {
    /// The highest value each semaphore reaches through the records so far.
    reached: HashMap<u64, u64>,
    /// Semaphores failed by the host or by cancelled work: their waits end at once.
    failed: HashSet<u64>,
    /// Each queue's operations that have not run, in queue order.
    queues: HashMap<u64, VecDeque<Pending>>,
    cancelled: HashSet<u64>,
    /// Queues whose first pending operation waits on a semaphore, by that semaphore.
    blocked_on: HashMap<u64, Vec<u64>>,
}

impl WaitCheck {
    /// Checks every record, in file order; the first wait that can never be met is the error.
    pub(super) fn run(records: impl Iterator<Item = EngineResult<ReplayRecord>>) -> EngineResult<()> {
        let mut check = WaitCheck::default();
        for (index, record) in records.enumerate() {
            check.record(index as u64, record?)?;
        }
        check.finish()
    }

    fn record(&mut self, index: u64, record: ReplayRecord) -> EngineResult<()> {
        match record {
            ReplayRecord::Semaphore { id, initial } => {
                self.reached.insert(id, initial);
                self.failed.remove(&id);
            }
            ReplayRecord::HostSignal(point) => self.raise(point.semaphore, point.value),
            ReplayRecord::HostFail { semaphore, .. } => self.fail(semaphore),
            ReplayRecord::HostWait(point) if !self.met(&point) => {
                return Err(EngineError::Replay { record: index, reason: self.host_wait_unmet(&point) });
            }
            ReplayRecord::Operation { queue, waits, signals, .. } => {
                if self.cancelled.contains(&queue) {
                    signals.iter().for_each(|point| self.fail(point.semaphore));
                    return Ok(());
                }
                let pending = self.queues.entry(queue).or_default();
                pending.push_back(Pending { record: index, waits, signals });
                if pending.len() == 1 {
                    self.advance(queue);
                }
            }
            ReplayRecord::QueueCancelled { queue } => {
                self.cancelled.insert(queue);
                for pending in self.queues.remove(&queue).unwrap_or_default() {
                    pending.signals.iter().for_each(|point| self.fail(point.semaphore));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A semaphore the records never made is the replayer's own error when it is named.
    fn met(&self, point: &Point) -> bool {
        self.failed.contains(&point.semaphore)
            || self.reached.get(&point.semaphore).is_none_or(|reached| *reached >= point.value)
    }

    fn reached(&self, semaphore: u64) -> u64 {
        self.reached.get(&semaphore).copied().unwrap_or(0)
    }

    fn raise(&mut self, semaphore: u64, value: u64) {
        let reached = self.reached.entry(semaphore).or_insert(0);
        if value <= *reached {
            return;
        }
        *reached = value;
        self.wake(semaphore);
    }

    fn fail(&mut self, semaphore: u64) {
        if self.failed.insert(semaphore) {
            self.wake(semaphore);
        }
    }

    fn wake(&mut self, semaphore: u64) {
        for queue in self.blocked_on.remove(&semaphore).unwrap_or_default() {
            self.advance(queue);
        }
    }

    /// Runs `queue`'s operations from its first until one waits on a semaphore not yet reached
    /// (registered under that semaphore). Their signals may let other queues run: those are
    /// advanced from a worklist, not by recursion.
    fn advance(&mut self, queue: u64) {
        let mut work = vec![queue];
        while let Some(queue) = work.pop() {
            while let Some(front) = self.queues.get(&queue).and_then(VecDeque::front) {
                if let Some(unmet) = front.waits.iter().find(|point| !self.met(point)) {
                    self.blocked_on.entry(unmet.semaphore).or_default().push(queue);
                    break;
                }
                let ran = self.queues.get_mut(&queue).and_then(VecDeque::pop_front).expect("a front was found");
                for point in ran.signals {
                    let reached = self.reached.entry(point.semaphore).or_insert(0);
                    if point.value > *reached {
                        *reached = point.value;
                        work.extend(self.blocked_on.remove(&point.semaphore).unwrap_or_default());
                    }
                }
            }
        }
    }

    fn host_wait_unmet(&self, point: &Point) -> String {
        let mut reason = format!(
            "the host wait for semaphore {} to reach {} can never be met: the records before it raise it to {} at most",
            point.semaphore,
            point.value,
            self.reached(point.semaphore)
        );
        // An operation that would raise it, held up by a wait of its own, is the likely damage.
        let held = self.queues.iter().flat_map(|(queue, pending)| pending.iter().map(move |op| (*queue, op)));
        let signaller = held
            .filter(|(_, op)| op.signals.iter().any(|s| s.semaphore == point.semaphore && s.value >= point.value))
            .min_by_key(|(_, op)| op.record);
        if let Some((queue, op)) = signaller {
            reason += &format!(" (queue {queue}'s operation at record {} would, but it cannot run first", op.record);
            if let Some(unmet) = self.first_unmet(queue) {
                reason += &format!(
                    ": record {} waits for semaphore {} to reach {}",
                    unmet.0, unmet.1.semaphore, unmet.1.value
                );
            }
            reason += ")";
        }
        reason + "; the file is damaged (a signal dropped, or records deleted or reordered)"
    }

    /// The first operation of `queue` that waits on something not reached, with that wait.
    fn first_unmet(&self, queue: u64) -> Option<(u64, &Point)> {
        let front = self.queues.get(&queue)?.front()?;
        front.waits.iter().find(|point| !self.met(point)).map(|point| (front.record, point))
    }

    /// At the end of the file: any operation still held waits for something no record raises.
    fn finish(&self) -> EngineResult<()> {
        let mut held: Vec<u64> =
            self.queues.iter().filter(|(_, pending)| !pending.is_empty()).map(|(q, _)| *q).collect();
        held.sort_unstable();
        let Some((queue, (record, point))) = held.into_iter().find_map(|queue| Some((queue, self.first_unmet(queue)?)))
        else {
            return Ok(());
        };
        Err(EngineError::Replay {
            record,
            reason: format!(
                "queue {queue}'s operation waits for semaphore {} to reach {}, and no record raises it past {}: \
                 the replay could never drain; the file is damaged (a signal dropped, or records deleted or reordered)",
                point.semaphore,
                point.value,
                self.reached(point.semaphore)
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use aqueduct_profile::replay::Operation;

    use super::*;

    fn semaphore(id: u64) -> ReplayRecord {
        ReplayRecord::Semaphore { id, initial: 0 }
    }

    fn point(semaphore: u64, value: u64) -> Point {
        Point { semaphore, value }
    }

    fn operation(queue: u64, waits: Vec<Point>, signals: Vec<Point>) -> ReplayRecord {
        ReplayRecord::Operation { queue, time_ns: 0, waits, signals, operation: Operation::Barrier }
    }

    fn check(records: Vec<ReplayRecord>) -> Result<(), (u64, String)> {
        WaitCheck::run(records.into_iter().map(Ok)).map_err(|error| match error {
            EngineError::Replay { record, reason } => (record, reason),
            other => panic!("not a replay error: {other}"),
        })
    }

    #[test]
    fn waits_met_by_earlier_records_or_later_ones_on_the_device_pass() {
        let records = vec![
            semaphore(1),
            semaphore(2),
            // Queue 7 waits on a host signal that comes later: the device waits, the thread goes on.
            operation(7, vec![point(1, 1)], vec![point(2, 1)]),
            ReplayRecord::HostSignal(point(1, 1)),
            ReplayRecord::HostWait(point(2, 1)),
        ];
        assert_eq!(check(records), Ok(()));
    }

    #[test]
    fn a_host_wait_before_its_signal_is_refused_naming_the_record() {
        let records = vec![
            semaphore(1),
            semaphore(2),
            operation(7, vec![point(1, 1)], vec![point(2, 1)]),
            ReplayRecord::HostWait(point(2, 1)),
            ReplayRecord::HostSignal(point(1, 1)),
        ];
        let (record, reason) = check(records).unwrap_err();
        assert_eq!(record, 3);
        assert!(reason.contains("semaphore 2 to reach 1"), "{reason}");
        assert!(reason.contains("record 2 waits for semaphore 1 to reach 1"), "{reason}");
    }

    #[test]
    fn work_behind_a_held_operation_on_its_queue_does_not_signal() {
        let records = vec![
            semaphore(1),
            semaphore(2),
            operation(7, vec![point(1, 5)], vec![]),
            operation(7, vec![], vec![point(2, 1)]),
            ReplayRecord::HostWait(point(2, 1)),
        ];
        assert_eq!(check(records).unwrap_err().0, 4);
    }

    #[test]
    fn an_operation_wait_nothing_meets_is_refused_at_the_end() {
        let records =
            vec![semaphore(1), operation(3, vec![], vec![point(1, 1)]), operation(4, vec![point(1, 2)], vec![])];
        let (record, reason) = check(records).unwrap_err();
        assert_eq!(record, 2);
        assert!(reason.contains("queue 4's operation waits for semaphore 1 to reach 2"), "{reason}");
        assert!(reason.contains("past 1"), "{reason}");
    }

    #[test]
    fn failed_semaphores_and_cancelled_queues_end_their_waits() {
        let records = vec![
            semaphore(1),
            semaphore(2),
            ReplayRecord::HostFail { semaphore: 1, message: "gone".into() },
            ReplayRecord::HostWait(point(1, 9)),
            operation(5, vec![point(2, 3)], vec![point(2, 4)]),
            ReplayRecord::QueueCancelled { queue: 5 },
            ReplayRecord::HostWait(point(2, 4)),
        ];
        assert_eq!(check(records), Ok(()));
    }

    #[test]
    fn a_chain_across_queues_runs_from_one_signal() {
        let mut records = vec![semaphore(0)];
        for queue in 1..200u64 {
            records.push(semaphore(queue));
            records.push(operation(queue, vec![point(queue - 1, 1)], vec![point(queue, 1)]));
        }
        records.push(ReplayRecord::HostSignal(point(0, 1)));
        records.push(ReplayRecord::HostWait(point(199, 1)));
        assert_eq!(check(records), Ok(()));
    }
}
