//! AMD's `amd_signal_t`: the memory behind an `hsa_signal_t` handle on ROCr and on the soft runtime.
//!
//! The handle is the address of this struct. A USER signal keeps its value at offset 8; a DOORBELL
//! signal keeps the hardware doorbell pointer there instead, and the producer rings the queue by
//! storing the last packet id through that pointer.

use core::sync::atomic::AtomicI64;

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

/// `amd_signal_kind_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalKind;
impl SignalKind {
    pub const INVALID: i64 = 0;
    pub const USER: i64 = 1;
    pub const DOORBELL: i64 = -1;
    pub const LEGACY_DOORBELL: i64 = -2;
}

/// `amd_signal_t` (64 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct AmdSignal {
    pub kind: i64,
    /// The signal value for USER signals; `hardware_doorbell_ptr` for DOORBELL signals.
    pub value: i64,
    pub event_mailbox_ptr: u64,
    pub event_id: u32,
    pub reserved1: u32,
    pub start_ts: u64,
    pub end_ts: u64,
    /// `amd_queue_t*` for doorbell signals.
    pub queue_ptr: u64,
    pub reserved3: [u32; 2],
}
assert_layout!(AmdSignal, size = 64, align = 64);
assert_offset!(AmdSignal, kind, 0);
assert_offset!(AmdSignal, value, 8);
assert_offset!(AmdSignal, event_mailbox_ptr, 16);
assert_offset!(AmdSignal, event_id, 24);
assert_offset!(AmdSignal, reserved1, 28);
assert_offset!(AmdSignal, start_ts, 32);
assert_offset!(AmdSignal, end_ts, 40);
assert_offset!(AmdSignal, queue_ptr, 48);
assert_offset!(AmdSignal, reserved3, 56);

impl AmdSignal {
    /// The value word, viewed atomically.
    ///
    /// # Safety
    /// `signal` must point to a live `amd_signal_t` that stays valid for `'a`.
    pub unsafe fn value_atomic<'a>(signal: *const AmdSignal) -> &'a AtomicI64 {
        // SAFETY: 8-byte aligned i64 field; the caller guarantees liveness; all concurrent
        // accesses to the value go through atomics.
        unsafe { AtomicI64::from_ptr(core::ptr::addr_of!((*signal).value).cast_mut()) }
    }

    /// For DOORBELL signals: where the producer stores the last published packet id.
    ///
    /// # Safety
    /// `signal` must point to a live DOORBELL `amd_signal_t`.
    pub unsafe fn hardware_doorbell_ptr(signal: *const AmdSignal) -> *mut u64 {
        // SAFETY: reading the pointer-sized word the runtime wrote once at queue creation.
        unsafe { core::ptr::addr_of!((*signal).value).cast::<u64>().read() as *mut u64 }
    }
}
