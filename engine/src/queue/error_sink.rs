//! The queue's error sink: where the provider's asynchronous queue-error callback and the
//! memory-fault handler report a queue's first error. The sink outlives the HSA queue (the
//! callback holds a raw pointer to it); what is done about the error, failing the queue's rows
//! and epochs, is the pass driver's (`failure.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_hsa::HsaApi;
use aqueduct_hsa::sys::{hsa_queue_t, hsa_signal_t, hsa_status_t};

/// Where the provider's queue-error callback and the memory-fault handler report. Kept alive
/// until the HSA queue is destroyed, because the callback holds a raw pointer to it.
pub(crate) struct ErrorSink {
    pub status: AtomicU32,
    pub control: u64,
    pub api: &'static HsaApi,
    /// What the provider said beyond the status (a memory fault's address), if anything.
    pub description: std::sync::Mutex<Option<String>>,
}

/// The provider's asynchronous queue-error callback.
pub(crate) unsafe extern "C" fn queue_error_callback(
    status: hsa_status_t,
    _queue: *mut hsa_queue_t,
    data: *mut core::ffi::c_void,
) {
    // SAFETY: `data` is the ErrorSink registered with this queue, alive until hsa_queue_destroy
    // returns, and the provider calls back only before that.
    let sink = unsafe { &*data.cast::<ErrorSink>() };
    sink.fail(status, None);
}

impl ErrorSink {
    /// Records the queue's first error and wakes its completion thread.
    pub(crate) fn fail(&self, code: hsa_status_t, description: Option<String>) {
        if self.status.compare_exchange(0, code.max(1), Ordering::AcqRel, Ordering::Acquire).is_ok() {
            *self.description.lock().unwrap_or_else(|poison| poison.into_inner()) = description;
            // SAFETY: the control signal lives as long as the device.
            unsafe { (self.api.hsa_signal_add_scacq_screl)(hsa_signal_t { handle: self.control }, 1) };
        }
    }
}

pub(super) fn unknown_failure() -> Arc<FailureRecord> {
    Arc::new(FailureRecord { status: None, message: "unknown failure".into() })
}
