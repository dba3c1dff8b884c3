//! Soft signals: `amd_signal_t` memory in type-stable slabs, with blocking waits.
//!
//! A handle is the address of the slot's `amd_signal_t`, as on ROCr, so anything that reads signal
//! memory directly works the same on both providers. Slots are never returned to the allocator: a
//! destroyed slot goes on a free list. So a stale handle still points at valid slot memory, and a
//! garbage handle is rejected by the range check in [`slot`] before it is ever dereferenced.
//!
//! A thread may use a handle while another destroys it and a third creates a signal in the same
//! slot (`tests/c/hostile.c` does). So a slot keeps its kind for life (each kind has its own free
//! list), every field a stale user may read is written atomically, and what a value may point at
//! outside the slot (a doorbell word, an IPC signal's page) stays mapped for the process.
//!
//! Waiters spin briefly, then register their thread on the slot and park; a value change made
//! through this module unparks those whose condition it meets, or every waiter that registered
//! none (the protocol is in [`super::waiters`]). Parking is capped at a short interval, so a
//! change made by a plain store elsewhere is still seen soon.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aqueduct_abi::{AmdSignal, SignalCondition, SignalKind};

use super::waiters::{self, Waiters, WakeWhen};

const SLOTS_PER_CHUNK: usize = 1024;
const MAX_CHUNKS: usize = 4096;
/// How long an ACTIVE waiter spins before parking: long enough to catch a packet that is about to
/// retire, short enough that an idle waiter does not burn a core. BLOCKED waiters park at once.
pub(crate) const SPIN_BEFORE_PARK: Duration = Duration::from_micros(20);
/// Upper bound on one park, so changes made without a wake-up are still noticed.
const MAX_PARK: Duration = Duration::from_millis(2);

#[repr(C, align(64))]
pub(crate) struct SignalSlot {
    /// Must stay the first field: the handle is the slot's address.
    pub(crate) amd: AmdSignal,
    live: AtomicBool,
    /// Threads parked on the slot (the wait and wake protocol, model-checked in `loom-models/`).
    waiters: Waiters,
    /// The `amd_signal_t` whose value this signal reads and writes when it is not its own: an IPC
    /// signal's, in memory shared between processes (`ipc.rs`); 0 for every other signal.
    remote: AtomicUsize,
    /// What the runtime itself knows of the signal, kept here and never read back from `amd`,
    /// which agents may write (ROCr's host-side `Signal` object keeps its type the same way):
    /// a kernel that rewrote its completion signal's kind and value would otherwise have had
    /// the packet processor decrement whatever address it wrote. The kind, written once by
    /// [`grow`].
    kind: i64,
    /// A DOORBELL signal's doorbell word (its `amd.value` holds the same address, for readers
    /// of signal memory, but updates go here); 0 for other kinds.
    doorbell: AtomicUsize,
    /// Whether the signal holds one of the process's interrupt events ([`EVENT_LIMIT`]).
    has_event: AtomicBool,
}

struct Chunk {
    base: AtomicUsize,
}

static CHUNKS: [Chunk; MAX_CHUNKS] = [const { Chunk { base: AtomicUsize::new(0) } }; MAX_CHUNKS];
static CHUNK_COUNT: AtomicUsize = AtomicUsize::new(0);
/// Free slots, one queue per kind ([`free_list`]): a slot reused for another kind would change
/// what a stale user's update writes through (a DOORBELL slot's value is a pointer). First in,
/// first out, so a destroyed slot is the last one reused: a stale handle (a use-after-destroy,
/// undefined in HSA) keeps naming a dead slot for as long as possible instead of the next
/// signal anyone creates.
static FREE_SLOTS: Mutex<[VecDeque<usize>; 2]> = Mutex::new([VecDeque::new(), VecDeque::new()]);

fn free_list(kind: i64) -> usize {
    usize::from(kind == SignalKind::DOORBELL)
}

/// A field of a slot's `amd_signal_t`, viewed atomically: stale users may read it while
/// [`create`] rewrites it.
///
/// # Safety
/// `field` is a u64 field of a slot's `amd_signal_t` (leaked and aligned, so valid forever), and
/// every concurrent access to it goes through atomics.
unsafe fn atomic_u64<'a>(field: *mut u64) -> &'a AtomicU64 {
    // SAFETY: the caller's contract.
    unsafe { AtomicU64::from_ptr(field) }
}

/// KFD's per-process event limit (`KFD_SIGNAL_EVENT_LIMIT`, Linux
/// `include/uapi/linux/kfd_ioctl.h`). ROCr gives each interrupt signal (what `hsa_signal_create`
/// makes unless told the signal is GPU-only) one event; once KFD refuses, ROCr creates further
/// interrupt signals without an event (`event_id` 0), silently, and their waits poll.
pub const EVENT_LIMIT: u32 = 4096;
static EVENTS_IN_USE: AtomicU32 = AtomicU32::new(0);
static SIGNALS_WITHOUT_EVENT: AtomicUsize = AtomicUsize::new(0);

/// The process's event use: (events held by live interrupt signals, interrupt signals created
/// after the limit was reached, which ROCr would leave without an event).
pub fn interrupt_events() -> (u32, usize) {
    (EVENTS_IN_USE.load(Ordering::Acquire), SIGNALS_WITHOUT_EVENT.load(Ordering::Acquire))
}

/// Takes one event, or reports the overflow and returns 0 (no event), as ROCr does.
fn take_event() -> u32 {
    let taken = EVENTS_IN_USE
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| (used < EVENT_LIMIT).then_some(used + 1));
    match taken {
        Ok(used) => used + 1,
        Err(_) => {
            if SIGNALS_WITHOUT_EVENT.fetch_add(1, Ordering::AcqRel) == 0 {
                tracing::warn!(
                    limit = EVENT_LIMIT,
                    "soft runtime: interrupt signals exceed KFD's event limit; ROCr would create them without events"
                );
            }
            0
        }
    }
}

/// Takes a free slot (growing the slab if needed) and initializes it. An `interrupt` signal
/// takes one of the process's events (see [`EVENT_LIMIT`]).
pub(crate) fn create(kind: i64, value: i64, interrupt: bool) -> Option<&'static SignalSlot> {
    let list = free_list(kind);
    let mut free = FREE_SLOTS.lock().unwrap_or_else(|poison| poison.into_inner());
    if free[list].is_empty() {
        grow(&mut free[list], kind)?;
    }
    let address = free[list].pop_front()?;
    drop(free);
    // SAFETY: addresses on the free lists come from `grow`, which leaks initialized slots.
    let slot = unsafe { &*(address as *const SignalSlot) };
    let amd = core::ptr::addr_of!(slot.amd).cast_mut();
    // The kind is the list's (`grow` set the slot's own record). Every field is written through
    // atomic views, because stale users of the slot's earlier handles may read it now.
    // SAFETY (each field pointer): a field of the slot's `amd_signal_t`.
    unsafe {
        // Written again, though `grow` wrote it: an agent may have overwritten it.
        AtomicI64::from_ptr(core::ptr::addr_of_mut!((*amd).kind)).store(kind, Ordering::Relaxed);
        atomic_u64(core::ptr::addr_of_mut!((*amd).start_ts)).store(0, Ordering::Relaxed);
        atomic_u64(core::ptr::addr_of_mut!((*amd).end_ts)).store(0, Ordering::Relaxed);
        atomic_u64(core::ptr::addr_of_mut!((*amd).queue_ptr)).store(0, Ordering::Relaxed);
        atomic_u64(core::ptr::addr_of_mut!((*amd).event_mailbox_ptr)).store(0, Ordering::Relaxed);
        let event = if interrupt { take_event() } else { 0 };
        slot.has_event.store(event != 0, Ordering::Relaxed);
        AtomicU32::from_ptr(core::ptr::addr_of_mut!((*amd).event_id)).store(event, Ordering::Relaxed);
        AmdSignal::value_atomic(amd).store(value, Ordering::Release);
    }
    let doorbell = if kind == SignalKind::DOORBELL { value as usize } else { 0 };
    slot.doorbell.store(doorbell, Ordering::Release);
    slot.remote.store(0, Ordering::Release);
    slot.live.store(true, Ordering::Release);
    Some(slot)
}

fn grow(free: &mut VecDeque<usize>, kind: i64) -> Option<()> {
    let index = CHUNK_COUNT.load(Ordering::Acquire);
    if index >= MAX_CHUNKS {
        return None;
    }
    let slots: Box<[SignalSlot]> = (0..SLOTS_PER_CHUNK)
        .map(|_| SignalSlot {
            amd: AmdSignal { kind, ..Default::default() },
            live: AtomicBool::new(false),
            waiters: Waiters::new(),
            remote: AtomicUsize::new(0),
            kind,
            doorbell: AtomicUsize::new(0),
            has_event: AtomicBool::new(false),
        })
        .collect();
    // Leaked on purpose: slot memory is type-stable for the life of the process.
    let base = Box::leak(slots).as_ptr() as usize;
    CHUNKS[index].base.store(base, Ordering::Release);
    CHUNK_COUNT.store(index + 1, Ordering::Release);
    free.extend((0..SLOTS_PER_CHUNK).map(|i| base + i * size_of::<SignalSlot>()));
    Some(())
}

/// The slot behind a handle, whether live or not; `None` for addresses that are not slots.
/// Whether `[address, address + length)` lies in the signals' memory, where each signal's
/// `amd_signal_t` lives: ROCr allocates signals in memory the agents reach (a kernel may read or
/// store a signal's value, as the packet processor does).
pub(crate) fn device_visible(address: u64, length: u64) -> bool {
    let count = CHUNK_COUNT.load(Ordering::Acquire);
    let span = (SLOTS_PER_CHUNK * size_of::<SignalSlot>()) as u64;
    CHUNKS[..count].iter().any(|chunk| {
        let base = chunk.base.load(Ordering::Acquire) as u64;
        base <= address && address.saturating_add(length) <= base + span
    })
}

pub(crate) fn slot_any(handle: u64) -> Option<&'static SignalSlot> {
    let address = usize::try_from(handle).ok()?;
    let count = CHUNK_COUNT.load(Ordering::Acquire);
    let span = SLOTS_PER_CHUNK * size_of::<SignalSlot>();
    for chunk in &CHUNKS[..count] {
        let base = chunk.base.load(Ordering::Acquire);
        if address >= base && address < base + span && (address - base) % size_of::<SignalSlot>() == 0 {
            // SAFETY: the address is the start of a slot in a leaked, initialized chunk.
            return Some(unsafe { &*(address as *const SignalSlot) });
        }
    }
    None
}

/// The live slot behind a handle.
pub(crate) fn slot(handle: u64) -> Option<&'static SignalSlot> {
    slot_any(handle).filter(|slot| slot.live.load(Ordering::Acquire))
}

/// A kernel's doorbell write (`WorkgroupContext::ring_doorbell`): stores the packet id as
/// `hsa_signal_store_screlease` on the doorbell signal would, which wakes the queue's packet
/// processor at once. A handle that names no live signal is ignored, as a GPU's write to a
/// stale doorbell would be.
pub(crate) unsafe extern "C" fn ring_doorbell(handle: u64, packet_id: u64) {
    if let Some(slot) = slot(handle) {
        slot.update(|value| value.store(packet_id as i64, Ordering::Release));
    }
}

pub(crate) fn destroy(handle: u64) -> bool {
    let Some(slot) = slot(handle) else { return false };
    if slot.live.swap(false, Ordering::AcqRel) {
        // The runtime's own record, not the `amd_signal_t`'s `event_id`, which agents may write.
        if slot.has_event.swap(false, Ordering::AcqRel) {
            EVENTS_IN_USE.fetch_sub(1, Ordering::AcqRel);
        }
        slot.wake_all();
        FREE_SLOTS.lock().unwrap_or_else(|poison| poison.into_inner())[free_list(slot.kind())]
            .push_back(handle as usize);
        true
    } else {
        false
    }
}

impl SignalSlot {
    pub(crate) fn handle(&self) -> u64 {
        self as *const Self as u64
    }

    pub(crate) fn amd_ptr(&self) -> *mut AmdSignal {
        core::ptr::addr_of!(self.amd).cast_mut()
    }

    pub(crate) fn value(&self) -> &AtomicI64 {
        let remote = self.remote.load(Ordering::Acquire);
        let amd = if remote == 0 { self.amd_ptr() } else { remote as *mut AmdSignal };
        // SAFETY: the slot is leaked memory, valid forever; a remote `amd_signal_t` stays mapped
        // until the signal is destroyed (`ipc.rs`); the value is only accessed atomically.
        unsafe { AmdSignal::value_atomic(amd) }
    }

    /// The value as the host's `hsa_signal_load_*` and `hsa_signal_wait_*` return it. A DOORBELL
    /// signal reads as 0: ROCr's `DoorbellSignal::LoadRelaxed`/`LoadAcquire`/`Wait*` assert and
    /// return 0 (core/inc/signal.h), where this slot's word holds its doorbell's address.
    pub(crate) fn host_value(&self, order: Ordering) -> i64 {
        if self.kind() == SignalKind::DOORBELL { 0 } else { self.value().load(order) }
    }

    /// Makes the signal's value the one of the `amd_signal_t` at `amd` (an IPC signal's shared
    /// block), which must stay mapped while the signal lives. Set before the handle is handed
    /// out.
    pub(crate) fn use_remote_value(&self, amd: *mut AmdSignal) {
        self.remote.store(amd as usize, Ordering::Release);
    }

    /// Whether the signal still exists (a destroyed slot waits on its free list).
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    /// The signal's kind as the runtime made it, whatever an agent wrote into `amd.kind`.
    pub(crate) fn kind(&self) -> i64 {
        self.kind
    }

    /// Applies a change to the value and wakes waiters. For doorbell signals the change lands on
    /// the doorbell word instead, which is what ROCr does for a store to a doorbell signal.
    pub(crate) fn update(&self, change: impl FnOnce(&AtomicI64)) {
        let changed = if self.kind() == SignalKind::DOORBELL {
            // The doorbell word the runtime recorded at `create` (never the GPU-visible value,
            // which a kernel may overwrite): it lives in its queue's slot, never freed
            // (`queue_slots.rs`), so a stale update lands there.
            let word = self.doorbell.load(Ordering::Acquire) as *mut i64;
            // SAFETY: the doorbell word is an 8-byte aligned AtomicI64-compatible u64, valid for
            // the process.
            unsafe { AtomicI64::from_ptr(word) }
        } else {
            self.value()
        };
        change(changed);
        self.waiters.wake(changed);
    }

    pub(crate) fn wake_all(&self) {
        self.waiters.wake_all();
    }

    pub(crate) fn write_timestamps(&self, start: u64, end: u64) {
        let amd = self.amd_ptr();
        // Written by the queue processor that owns the packet before it decrements the value with
        // release ordering; readers load the value with acquire first.
        // SAFETY (each field pointer): a field of the slot's `amd_signal_t`.
        unsafe {
            atomic_u64(core::ptr::addr_of_mut!((*amd).start_ts)).store(start, Ordering::Relaxed);
            atomic_u64(core::ptr::addr_of_mut!((*amd).end_ts)).store(end, Ordering::Relaxed);
        }
    }

    pub(crate) fn timestamps(&self) -> (u64, u64) {
        let amd = self.amd_ptr();
        // SAFETY (each field pointer): see `write_timestamps`.
        unsafe {
            (
                atomic_u64(core::ptr::addr_of_mut!((*amd).start_ts)).load(Ordering::Relaxed),
                atomic_u64(core::ptr::addr_of_mut!((*amd).end_ts)).load(Ordering::Relaxed),
            )
        }
    }

    /// Registers the calling thread as a waiter, woken by a change after which `wake` holds
    /// (by every change when `None`).
    pub(crate) fn register(&self, wake: Option<WakeWhen>) {
        self.waiters.register(wake);
    }

    /// Removes the calling thread's registration ([`Self::register`]).
    pub(crate) fn unregister(&self) {
        self.waiters.unregister();
    }
}

/// A wait's wake-up condition for signal waits (`hsa_signal_wait_*`, `hsa_amd_signal_wait_any`):
/// the waiter is woken only by a value that meets `condition` against `compare`.
pub(crate) fn wake_when(condition: SignalCondition, compare: i64) -> WakeWhen {
    let holds: fn(i64, i64) -> bool = match condition {
        SignalCondition::Eq => |value, compare| SignalCondition::Eq.holds(value, compare),
        SignalCondition::Ne => |value, compare| SignalCondition::Ne.holds(value, compare),
        SignalCondition::Lt => |value, compare| SignalCondition::Lt.holds(value, compare),
        SignalCondition::Gte => |value, compare| SignalCondition::Gte.holds(value, compare),
    };
    WakeWhen { holds, compare }
}

/// Waits until `satisfied` holds for any of `slots`, or the deadline passes, or `cancel` returns
/// true. Returns the index of the satisfied slot. With `wakes` (one per slot, what `satisfied`
/// tests for it), a parked waiter is woken only by a change that meets its slot's; without, by
/// every change.
pub(crate) fn wait_until(
    slots: &[&SignalSlot],
    wakes: Option<&[WakeWhen]>,
    mut satisfied: impl FnMut(usize, i64) -> bool,
    deadline: Option<Instant>,
    spin: Duration,
    cancel: &dyn Fn() -> bool,
) -> Option<usize> {
    let check = |satisfied: &mut dyn FnMut(usize, i64) -> bool| {
        slots
            .iter()
            .enumerate()
            .find_map(|(index, slot)| satisfied(index, slot.value().load(Ordering::Acquire)).then_some(index))
    };
    let spin_until = Instant::now() + spin;
    loop {
        if let Some(index) = check(&mut satisfied) {
            return Some(index);
        }
        let now = Instant::now();
        if now >= spin_until || deadline.is_some_and(|deadline| now >= deadline) {
            break;
        }
        std::hint::spin_loop();
    }
    for (index, slot) in slots.iter().enumerate() {
        slot.register(wakes.map(|wakes| wakes[index]));
    }
    waiters::registered();
    let result = loop {
        if let Some(index) = check(&mut satisfied) {
            break Some(index);
        }
        if cancel() {
            break None;
        }
        let now = Instant::now();
        let park = match deadline {
            Some(deadline) if now >= deadline => break None,
            Some(deadline) => (deadline - now).min(MAX_PARK),
            None => MAX_PARK,
        };
        std::thread::park_timeout(park);
    };
    for slot in slots {
        slot.unregister();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_stale_handles_are_rejected() {
        assert!(slot(0).is_none());
        assert!(slot(8).is_none());
        let created = create(SignalKind::USER, 3, true).expect("slot");
        let handle = created.handle();
        assert!(slot(handle + 8).is_none(), "interior addresses are not handles");
        assert!(destroy(handle));
        assert!(slot(handle).is_none());
        assert!(!destroy(handle), "double destroy is refused");
    }

    #[test]
    fn waiter_wakes_on_update() {
        let signal = create(SignalKind::USER, 1, true).expect("slot");
        let handle = signal.handle();
        let waiter = std::thread::spawn(move || {
            let signal = slot(handle).expect("live");
            wait_until(
                &[signal],
                None,
                |_, value| value == 0,
                Some(Instant::now() + Duration::from_secs(10)),
                SPIN_BEFORE_PARK,
                &|| false,
            )
        });
        std::thread::sleep(Duration::from_millis(20));
        signal.update(|value| {
            value.fetch_sub(1, Ordering::AcqRel);
        });
        assert_eq!(waiter.join().expect("join"), Some(0));
        assert!(destroy(handle));
    }

    #[test]
    fn wait_times_out() {
        let signal = create(SignalKind::USER, 1, true).expect("slot");
        let start = Instant::now();
        let result = wait_until(
            &[signal],
            None,
            |_, value| value == 0,
            Some(start + Duration::from_millis(30)),
            SPIN_BEFORE_PARK,
            &|| false,
        );
        assert_eq!(result, None);
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert!(destroy(signal.handle()));
    }
}
