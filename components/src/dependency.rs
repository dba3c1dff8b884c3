//! The plain values a submission's dependencies are made of: a queue position ([`Producer`]), a
//! wait or signal on a timeline semaphore, and a wait that admission resolved ([`DeviceWait`]).
//! The bottom of the crate: the semaphore table, the frontiers, the pending rows and the epochs
//! all speak of them, and this module names nothing of theirs.

/// A queue position: the submission with `epoch` on queue `queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Producer {
    pub queue: u16,
    pub epoch: u64,
}

impl Producer {
    const EPOCH_BITS: u32 = 48;

    /// The record's word: `(queue + 1) << 48 | epoch`, never 0.
    #[inline]
    pub fn pack(self) -> u64 {
        (u64::from(self.queue) + 1) << Self::EPOCH_BITS | (self.epoch & ((1 << Self::EPOCH_BITS) - 1))
    }

    /// The producer a record's word names; `None` for 0 (no record).
    #[inline]
    pub fn unpack(word: u64) -> Option<Self> {
        let queue = word >> Self::EPOCH_BITS;
        (queue != 0).then(|| Self { queue: (queue - 1) as u16, epoch: word & ((1 << Self::EPOCH_BITS) - 1) })
    }
}

/// A wait on a timeline semaphore of this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WaitOp {
    pub semaphore: u32,
    pub value: u64,
}

/// A signal of a timeline semaphore of this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SignalOp {
    pub semaphore: u32,
    pub value: u64,
}

/// A wait admission turned into a device-side barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DeviceWait {
    pub producer: Producer,
    /// The semaphore the wait came from: if it fails, the waiting submission fails with it.
    pub semaphore: u32,
    /// The value waited for.
    pub value: u64,
    /// Whether a barrier packet waits on it; false when queue order or the frontier covers it.
    pub barrier: bool,
    /// A covered wait that holds only if this queue's epoch `via` succeeds (the frontier entry
    /// covering it is still pending on that epoch's barriers); 0 when unconditional.
    pub via: u64,
    /// The device signal a barrier waits on, named at admission so publication needs no lookup:
    /// the producer queue's epoch signal (BarrierValue) or the producer epoch's own signal
    /// (BarrierAnd; 0 when that epoch was drained first, and the packet names nothing).
    pub signal: u64,
    /// BarrierAnd: whether the barrier named the producer's per-epoch signal (and so holds one
    /// of its `slot_users` until this epoch is drained).
    pub slot_named: bool,
}
