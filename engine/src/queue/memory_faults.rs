//! GPU memory faults, routed to the queues of the faulting agent.
//!
//! ROCr does not report a memory fault through the queue's error callback: it raises
//! HSA_AMD_GPU_MEMORY_FAULT_EVENT to the handlers registered with
//! `hsa_amd_register_system_event_handler`, and aborts the process when none returns success
//! (`Runtime::VMFaultHandler`). The engine registers a handler when it opens a device
//! ([`route_memory_faults`]). A fault
//! fails every live queue of the faulting agent the way a queue error does, so the failure
//! reaches their semaphores; the handler then returns success, so the process lives on.
//!
//! HSA cannot unregister a handler, so the handler's state is this process-wide table, and
//! queues are held weakly: a fault on an agent whose queues are gone is reported unhandled.

use std::sync::{Arc, Mutex, Weak};

use aqueduct_hsa::sys::{amd_event, hsa_amd_event_t, hsa_status_t, status};

use super::error_sink::ErrorSink;

/// A live queue's error sink, by the HSA agent handle it runs on.
struct Route {
    agent: u64,
    sink: Weak<ErrorSink>,
}

static ROUTES: Mutex<Vec<Route>> = Mutex::new(Vec::new());

fn routes() -> std::sync::MutexGuard<'static, Vec<Route>> {
    ROUTES.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Routes memory faults on `agent` to `sink` for as long as the sink lives.
pub(crate) fn route(agent: u64, sink: &Arc<ErrorSink>) {
    let mut routes = routes();
    routes.retain(|route| route.sink.strong_count() > 0);
    routes.push(Route { agent, sink: Arc::downgrade(sink) });
}

/// Registers the fault handler with `device`'s provider, once per device opened.
pub(crate) fn route_memory_faults(device: &crate::device::DeviceShared) -> crate::EngineResult<()> {
    // SAFETY: the handler keeps no pointer (its routes are a process-wide table of weak
    // references), so it is safe to call from any runtime thread until shutdown.
    unsafe { device.hsa.register_system_event_handler(Some(system_event_handler), core::ptr::null_mut())? };
    Ok(())
}

/// The system event handler the engine registers with the provider.
///
/// # Safety
/// Called by the provider with a valid event for the duration of the call; `data` is unused.
unsafe extern "C" fn system_event_handler(
    event: *const hsa_amd_event_t,
    _data: *mut core::ffi::c_void,
) -> hsa_status_t {
    // SAFETY: the provider passes a valid event for the duration of the call.
    let Some(event) = (unsafe { event.as_ref() }) else { return status::ERROR_INVALID_ARGUMENT };
    if event.event_type != amd_event::GPU_MEMORY_FAULT_EVENT {
        return status::ERROR;
    }
    let fault = event.memory_fault;
    let description =
        format!("GPU memory fault at {:#x} (reason mask {:#x})", fault.virtual_address, fault.fault_reason_mask);
    let sinks: Vec<Arc<ErrorSink>> = routes()
        .iter()
        .filter(|route| route.agent == fault.agent.handle)
        .filter_map(|route| route.sink.upgrade())
        .collect();
    for sink in &sinks {
        sink.fail(status::ERROR_MEMORY_FAULT, Some(description.clone()));
    }
    if sinks.is_empty() { status::ERROR } else { status::SUCCESS }
}
