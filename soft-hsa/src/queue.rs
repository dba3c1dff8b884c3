//! A soft AQL queue: real ring memory, an `amd_queue_t`, a DOORBELL signal, the faults armed for
//! its packets, and the handle of the one processor thread that plays the command processor
//! (`processor::start` starts it). Nothing here knows the runtime or the processor: they use the
//! queue, so imports go one way.

use std::alloc::Layout;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use aqueduct_abi::queue::queue_feature;
use aqueduct_abi::{AmdQueue, PacketHeader, QueueProperties, SignalKind};
use hashbrown::HashMap;

use super::config::ExecutionMode;
use super::scheduling::QueueScheduling;
use super::signals::{self, SignalSlot};
use aqueduct_hsa::sys::{hsa_queue_error_callback_t, hsa_status_t};

/// Owned, 64-byte-aligned ring memory.
struct Ring {
    base: *mut u8,
    layout: Layout,
}

/// The next `hsa_queue_t::id`: unique among every queue of the process, hardware or host.
pub(crate) fn next_queue_id() -> u64 {
    static NEXT_QUEUE_ID: AtomicU64 = AtomicU64::new(1);
    NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed)
}

pub(crate) use super::queue_slots::{DOORBELL_NEVER_RUNG, DoorbellWord};

/// A fault armed for one packet id of a queue ([`crate::inject_fault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The packet faults as a kernel would: the queue enters the error state and its error
    /// callback receives `status`.
    KernelFault { status: hsa_status_t },
    /// The packet does not start until [`crate::release_stall`] is called (or the queue is destroyed).
    Stall,
    /// The packet takes at least this long.
    Slow(Duration),
    /// The packet touches `address`, which its agent may not access: a GPU memory fault,
    /// raised to the system event handlers (not the queue callback), as ROCr raises one.
    MemoryFault { address: u64 },
}

pub(crate) struct QueueError {
    pub status: hsa_status_t,
    pub detail: String,
}

pub(crate) struct SoftQueue {
    /// Its `amd_queue_t`, in type-stable memory (`queue_slots.rs`).
    amd: &'static super::queue_slots::QueueSlot,
    ring: Ring,
    pub size: u32,
    pub doorbell_signal: &'static SignalSlot,
    /// The memory fault the processor found in the packet it is failing: (address, reason).
    pub memory_fault: Mutex<Option<(u64, u32)>>,
    pub agent_index: usize,
    pub stop: AtomicBool,
    mode: AtomicU8,
    pub error: Mutex<Option<QueueError>>,
    /// Set once `error` holds a value, so the processor's poll loop never takes the mutex.
    pub faulted: AtomicBool,
    pub faults: Mutex<HashMap<u64, Fault>>,
    pub has_faults: AtomicBool,
    /// Bumped by `release_stall`; a stalled packet waits for it to change.
    pub stall_releases: AtomicU64,
    pub callback: hsa_queue_error_callback_t,
    pub callback_data: usize,
    /// Priority and CU mask (`scheduling.rs`).
    pub scheduling: QueueScheduling,
    processor: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for SoftQueue {
    fn drop(&mut self) {
        // The processor thread is joined (`shut_down`) or was never started: nothing reads the
        // `amd_queue_t` any more but stale client pointers, which the slot's memory keeps harmless.
        super::queue_slots::give_back(self.amd);
    }
}

// SAFETY: the raw pointers are the ring and the doorbell pointer inside signal memory, both owned
// by this queue until `shut_down` joins the processor; all shared mutation goes through atomics
// or mutexes.
unsafe impl Send for SoftQueue {}
// SAFETY: as above.
unsafe impl Sync for SoftQueue {}

impl SoftQueue {
    /// A queue whose processor is not running yet: `processor::start` starts it. Its doorbell
    /// signal is of USER kind when `intercepted_doorbells` (see `SoftConfig`), else DOORBELL.
    pub fn create(
        intercepted_doorbells: bool,
        agent_index: usize,
        size: u32,
        queue_type: u32,
        mode: ExecutionMode,
        callback: hsa_queue_error_callback_t,
        callback_data: usize,
    ) -> Result<Arc<Self>, hsa_status_t> {
        let ring_bytes = (size as usize).checked_mul(64).ok_or(aqueduct_hsa::sys::status::ERROR_INVALID_ARGUMENT)?;
        let layout =
            Layout::from_size_align(ring_bytes, 4096).map_err(|_| aqueduct_hsa::sys::status::ERROR_INVALID_ARGUMENT)?;
        // SAFETY: the layout is non-zero (size >= 1 packet).
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            return Err(aqueduct_hsa::sys::status::ERROR_OUT_OF_RESOURCES);
        }
        let ring = Ring { base, layout };
        for index in 0..size as usize {
            // SAFETY: each slot is inside the ring allocation and 64-byte aligned.
            unsafe { base.add(index * 64).cast::<u16>().write(PacketHeader::INVALID.0) };
        }
        let Some(slot) = super::queue_slots::take() else {
            return Err(aqueduct_hsa::sys::status::ERROR_OUT_OF_RESOURCES);
        };
        let doorbell = slot.doorbell();
        // A hardware queue's doorbell signal is of DOORBELL kind and its `hardware_doorbell_ptr`
        // names the doorbell word. A queue wrapped by a tool (ROCr's `InterceptQueue`, used by
        // rocprofiler) hands out an ordinary USER signal instead, which must be rung through
        // `hsa_signal_store_*`; its value field is the doorbell then.
        let (doorbell_kind, initial) = if intercepted_doorbells {
            (SignalKind::USER, DOORBELL_NEVER_RUNG as i64)
        } else {
            (SignalKind::DOORBELL, doorbell.0.as_ptr() as i64)
        };
        let Some(doorbell_signal) = signals::create(doorbell_kind, initial, false) else {
            super::queue_slots::give_back(slot);
            return Err(aqueduct_hsa::sys::status::ERROR_OUT_OF_RESOURCES);
        };
        // SAFETY: the slot was just taken for this queue and is not live, so nothing else reads
        // or writes it.
        let amd = unsafe { &mut *slot.amd_ptr() };
        amd.hsa_queue.type_ = queue_type;
        amd.hsa_queue.features = queue_feature::KERNEL_DISPATCH;
        amd.hsa_queue.base_address = base as u64;
        amd.hsa_queue.doorbell_signal = doorbell_signal.handle();
        amd.hsa_queue.size = size;
        amd.hsa_queue.id = next_queue_id();
        amd.queue_properties = QueueProperties::IS_PTR64;
        // SAFETY: the doorbell slot was just created for this queue and is not shared yet.
        unsafe { (*doorbell_signal.amd_ptr()).queue_ptr = slot.amd_ptr() as u64 };
        super::queue_slots::publish(slot);
        let queue = Arc::new(Self {
            amd: slot,
            ring,
            size,
            doorbell_signal,
            memory_fault: Mutex::new(None),
            agent_index,
            stop: AtomicBool::new(false),
            mode: AtomicU8::new(mode as u8),
            error: Mutex::new(None),
            faulted: AtomicBool::new(false),
            faults: Mutex::new(HashMap::new()),
            has_faults: AtomicBool::new(false),
            stall_releases: AtomicU64::new(0),
            callback,
            callback_data,
            scheduling: QueueScheduling::new(),
            processor: Mutex::new(None),
        });
        Ok(queue)
    }

    /// The queue's `hsa_queue_t::id`.
    pub fn id(&self) -> u64 {
        // SAFETY: `hsa_queue.id` is written before the slot is published and never after.
        unsafe { (*self.amd.amd_ptr()).hsa_queue.id }
    }

    /// Hands the queue its processor thread, which [`Self::shut_down`] stops and joins.
    pub fn attach_processor(&self, handle: JoinHandle<()>) {
        *self.processor.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(handle);
    }

    /// The last packet id rung, or [`DOORBELL_NEVER_RUNG`].
    pub fn doorbell_value(&self) -> u64 {
        if self.doorbell_signal.kind() == SignalKind::DOORBELL {
            self.amd.doorbell().0.load(Ordering::Acquire)
        } else {
            self.doorbell_signal.value().load(Ordering::Acquire) as u64
        }
    }

    pub fn amd_ptr(&self) -> *const AmdQueue {
        self.amd.amd_ptr()
    }

    /// The `hsa_queue_t*` handed to clients.
    pub fn address(&self) -> usize {
        self.amd_ptr() as usize
    }

    /// Whether `[address, address + length)` lies in memory of this queue that a GPU reaches:
    /// its `amd_queue_t`, its ring or its doorbell word. ROCr allocates all three in memory
    /// mapped for the agents (the packet processor and device-side enqueue use them).
    pub fn device_visible(&self, address: u64, length: u64) -> bool {
        let inside = |start: u64, size: u64| start <= address && address.saturating_add(length) <= start + size;
        inside(self.address() as u64, size_of::<AmdQueue>() as u64)
            || inside(self.ring.base as u64, self.size as u64 * 64)
            || inside(self.amd.doorbell() as *const DoorbellWord as u64, size_of::<DoorbellWord>() as u64)
    }

    pub fn ring_base(&self) -> *mut u8 {
        self.ring.base
    }

    pub fn mode(&self) -> ExecutionMode {
        match self.mode.load(Ordering::Relaxed) {
            0 => ExecutionMode::Strict,
            1 => ExecutionMode::Relaxed,
            2 => ExecutionMode::RetireOnly,
            _ => ExecutionMode::Concurrent,
        }
    }

    pub fn set_mode(&self, mode: ExecutionMode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }

    pub fn profiling_enabled(&self) -> bool {
        // SAFETY: the queue struct lives as long as `self`.
        unsafe { AmdQueue::queue_properties_atomic(self.amd_ptr()) }.load(Ordering::Acquire)
            & QueueProperties::ENABLE_PROFILING
            != 0
    }

    pub fn set_profiling(&self, enabled: bool) {
        // SAFETY: the queue struct lives as long as `self`.
        let properties = unsafe { AmdQueue::queue_properties_atomic(self.amd_ptr()) };
        if enabled {
            properties.fetch_or(QueueProperties::ENABLE_PROFILING, Ordering::AcqRel);
        } else {
            properties.fetch_and(!QueueProperties::ENABLE_PROFILING, Ordering::AcqRel);
        }
    }

    /// `hsa_queue_inactivate`: the processor stops taking packets (those not yet started are
    /// abandoned); the queue lives on until it is destroyed.
    pub fn inactivate(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(handle) = self.processor.lock().unwrap_or_else(|poison| poison.into_inner()).as_ref() {
            handle.thread().unpark();
        }
    }

    /// Stops the processor (abandoning packets not yet executed), joins it and retires the
    /// doorbell. Ring memory is freed when the last reference drops.
    pub fn shut_down(&self) {
        super::queue_slots::retire(self.amd);
        self.stop.store(true, Ordering::Release);
        let handle = self.processor.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        if let Some(handle) = handle {
            handle.thread().unpark();
            let _ = handle.join();
        }
        signals::destroy(self.doorbell_signal.handle());
    }

    /// Records the first error and reports it through the queue's callback.
    pub fn raise_error(&self, status: hsa_status_t, detail: String) {
        if !self.record_error(status, &detail) {
            return;
        }
        if let Some(callback) = self.callback {
            // SAFETY: the client registered this callback and data at queue creation; HSA invokes
            // it with the queue pointer, which stays valid until hsa_queue_destroy returns.
            unsafe { callback(status, self.amd_ptr().cast_mut().cast(), self.callback_data as *mut _) };
        }
    }

    /// A GPU memory fault: ROCr does not call the queue's error callback for it ("Suppress VM
    /// fault reporting", `AqlQueue::ExceptionHandler`); `Runtime::VMFaultHandler` raises
    /// HSA_AMD_GPU_MEMORY_FAULT_EVENT to every registered system event handler, and if none
    /// returns success it prints the fault and aborts the process. The queue stops, as the
    /// faulted hardware queue does.
    /// `handlers` are the runtime's registered system event handlers, (callback, data), in order.
    pub fn raise_memory_fault(
        &self,
        handlers: &[(aqueduct_hsa::sys::hsa_amd_system_event_callback_t, usize)],
        agent: u64,
        address: u64,
        reason: u32,
        detail: String,
    ) {
        if !self.record_error(aqueduct_hsa::sys::status::ERROR_MEMORY_FAULT, &detail) {
            return;
        }
        let event = aqueduct_hsa::sys::hsa_amd_event_t {
            event_type: aqueduct_hsa::sys::amd_event::GPU_MEMORY_FAULT_EVENT,
            memory_fault: aqueduct_hsa::sys::hsa_amd_gpu_memory_fault_info_t {
                agent: aqueduct_hsa::sys::hsa_agent_t { handle: agent },
                virtual_address: address,
                fault_reason_mask: reason,
            },
        };
        let mut handled = false;
        for &(callback, data) in handlers {
            if let Some(callback) = callback {
                // SAFETY: the client registered this handler and data; the event lives for the call.
                handled |= unsafe { callback(&event, data as *mut _) } == aqueduct_hsa::sys::status::SUCCESS;
            }
        }
        if !handled {
            eprintln!(
                "Memory access fault by GPU agent {agent:#x} on address {address:#x}. Reason: {reason:#x} ({detail})."
            );
            std::process::abort();
        }
    }

    /// Records the queue's first error and stops it; false if it already failed or is being
    /// torn down (teardown is not an error the client needs to hear about).
    fn record_error(&self, status: hsa_status_t, detail: &str) -> bool {
        {
            let mut error = self.error.lock().unwrap_or_else(|poison| poison.into_inner());
            if error.is_some() {
                return false;
            }
            tracing::warn!(queue = self.id(), status, %detail, "soft queue error");
            *error = Some(QueueError { status, detail: detail.to_string() });
            self.faulted.store(true, Ordering::Release);
        }
        !self.stop.load(Ordering::Acquire)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: allocated in `SoftQueue::create` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base, self.layout) };
    }
}
