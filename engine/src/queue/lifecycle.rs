//! A queue's life: creation (signals, kernarg ring, HSA queue, queue state, completion thread),
//! the last handle's drop (the work goes on; the completion thread destroys the queue once it
//! has drained), cancellation, and destruction (the HSA queue first, then failing what was left
//! in flight).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use aqueduct_components::device_entities::Shared;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_signal_t;

use super::Queue;
use super::capture_observer::CaptureObserver;
use super::completion::CompletionWorker;
use super::error_sink::{ErrorSink, queue_error_callback};
use super::pass_driver::{DriverParts, PassDriver};
use crate::config::{QueueConfig, QueuePriority};
use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::profile::DeviceQueue;

impl Queue {
    pub(crate) fn create(device: &Arc<DeviceShared>, settings: &QueueConfig) -> EngineResult<Self> {
        let agent = settings.agent;
        let state = device.agent(agent)?;
        settings.validate(state.info.compute_units)?;
        let config = &device.config;
        let (min, max) = (state.info.queue_min_packets, state.info.queue_max_packets);
        if !(min..=max).contains(&config.queue_packets) {
            return Err(EngineError::InvalidArgument {
                what: "queue_packets",
                reason: format!("{} is outside the agent's queue sizes {min}..={max}", config.queue_packets),
            });
        }
        // The completion thread's fallback wait, in the provider's timestamp ticks (what its
        // signal waits take): asked before anything is made, so a failure changes nothing.
        let fallback_ns = u64::try_from(config.completion_fallback.as_nanos()).unwrap_or(u64::MAX);
        let timeout = crate::clock::ns_to_ticks(fallback_ns, device.hsa.timestamp_frequency()?);
        let index = device
            .queues
            .directory
            .reserve_index()
            .ok_or(EngineError::LimitReached { what: "queues per device", limit: aqueduct_components::MAX_QUEUES })?;
        let hsa = &device.hsa;
        let mut signals = Vec::new();
        let mut create_signal = |initial, gpu_only: bool| -> EngineResult<u64> {
            // Only the device waits on these (the host sleeps on the control signal and, under
            // BarrierValue, the epoch signal): no KFD event each, of which a process has 4096.
            let signal =
                if gpu_only { hsa.signal_create_gpu_only(initial)? } else { hsa.signal_create(initial)? }.handle;
            signals.push(signal);
            Ok(signal)
        };
        let created = (|| -> EngineResult<_> {
            let epoch_signal = create_signal(EPOCH_BASE, false)?;
            let control_signal = create_signal(0, false)?;
            let slots = match device.strategy {
                CrossQueueWait::BarrierValue => Vec::new(),
                CrossQueueWait::BarrierAnd => {
                    (0..config.epochs_in_flight).map(|_| create_signal(0, true)).collect::<EngineResult<Vec<_>>>()?
                }
            };
            Ok((epoch_signal, control_signal, slots))
        })();
        let (epoch_signal, control_signal, slots) = match created {
            Ok(created) => created,
            Err(error) => {
                signals.into_iter().for_each(|signal| drop(hsa.signal_destroy(hsa_signal_t { handle: signal })));
                return Err(error);
            }
        };
        let endpoint =
            Arc::new(QueueEndpoint::new(index, epoch_signal, control_signal, slots.into_boxed_slice()).with_rings(
                agent,
                config.queue_packets,
                config.kernarg_ring_bytes,
            ));
        // From here the device owns the signals (destroyed when it drops).
        device.queues.directory.register(endpoint.clone());
        let kernarg_memory = device.allocate_granted(state.kernarg_pool, config.kernarg_ring_bytes as usize)? as u64;
        let error_sink = Arc::new(ErrorSink {
            status: AtomicU32::new(0),
            control: control_signal,
            api: hsa.api(),
            description: Default::default(),
        });
        super::memory_faults::route(state.info.agent.handle, &error_sink);
        let sink_pointer = (&*error_sink as *const ErrorSink).cast_mut().cast();
        // SAFETY: the sink is shared by the queue's parts and outlives the HSA queue, which the
        // queue's teardown destroys before the sink.
        let hsa_queue = match unsafe {
            hsa.queue_create(state.info.agent, config.queue_packets, Some(queue_error_callback), sink_pointer)
        } {
            Ok(queue) => queue,
            Err(error) => {
                // SAFETY: nothing uses the kernarg ring yet.
                let _ = unsafe { hsa.free(kernarg_memory as *mut u8) };
                return Err(error.into());
            }
        };
        if let Err(error) = apply_scheduling(device, hsa_queue, settings) {
            // SAFETY: nothing was published to the queue; the kernarg ring is unused.
            unsafe {
                let _ = hsa.queue_destroy(hsa_queue);
                let _ = hsa.free(kernarg_memory as *mut u8);
            }
            return Err(error);
        }
        // SAFETY: the queue lives until its teardown destroys it, after the last ring use.
        let ring = unsafe { AqlRing::new(hsa_queue, hsa.api()) };
        let entity = device.world().spawn(Shared(endpoint.clone())).id();
        endpoint.handles.store(1, Ordering::Relaxed);
        let parts = DriverParts {
            index,
            agent,
            endpoint,
            hsa_queue,
            ring,
            error_sink,
            priority: settings.priority,
            kernarg_memory,
            entity,
        };
        // The handle first: if the thread cannot start, its drop tears the queue down.
        let handle = Queue { driver: Arc::new(PassDriver::new(device, parts)) };
        let observer = Arc::new(CaptureObserver::new(handle.driver.clone()));
        let worker = CompletionWorker::new(observer.clone(), timeout);
        let thread = std::thread::Builder::new()
            .name(format!("aqueduct-completion-{index}"))
            .spawn(move || worker.run())
            .map_err(|error| EngineError::NoDevice { reason: format!("cannot start a completion thread: {error}") })?;
        // Registered under the capture slot's lock, so a capture that begins or ends meanwhile
        // sees the queue either way.
        let session = device.profile.lock().unwrap_or_else(|poison| poison.into_inner());
        let profiled: Arc<dyn DeviceQueue> = observer;
        device.queues.register(index, &profiled, thread);
        if let Some(session) = session.as_ref() {
            profiled.attach_capture(session)?;
        }
        Ok(handle)
    }
}

/// Sets the queue's priority and CU mask where they differ from what a new queue has (NORMAL,
/// every CU), so a provider that lacks the calls is only asked when the caller wants them.
fn apply_scheduling(
    device: &DeviceShared,
    hsa_queue: *mut aqueduct_hsa::sys::hsa_queue_t,
    settings: &QueueConfig,
) -> EngineResult<()> {
    let hsa = &device.hsa;
    if settings.priority != QueuePriority::Normal {
        // SAFETY: the queue was just created and is not destroyed before this returns.
        unsafe { hsa.queue_set_priority(hsa_queue, settings.priority.hsa_value())? };
    }
    if let Some(mask) = &settings.cu_mask {
        // SAFETY: as above.
        if unsafe { hsa.queue_set_cu_mask(hsa_queue, mask)? } {
            tracing::warn!(?mask, "HSA_CU_MASK disabled some of the CUs this queue's mask enables");
        }
    }
    Ok(())
}

impl Clone for Queue {
    fn clone(&self) -> Self {
        // Relaxed, as for an `Arc`: a new handle comes from a live one, which keeps the count up.
        self.driver.endpoint.handles.fetch_add(1, Ordering::Relaxed);
        Queue { driver: self.driver.clone() }
    }
}

impl Drop for Queue {
    /// The last handle's drop lets the queue's work finish (see [`Queue`]): what was submitted
    /// through any handle before it (a `Release`, paired with the last drop's `Acquire`) drains
    /// or fails, and then the queue is destroyed.
    fn drop(&mut self) {
        if self.driver.endpoint.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.driver.last_handle_dropped();
        }
    }
}

impl Queue {
    /// Cancels the queue's work and consumes this handle. Work not yet on the device fails now
    /// with `queue N was cancelled`, and so does every later submission through another handle.
    /// If this was the last handle, the queue is destroyed at once and the work on the device
    /// fails with it, as dropping a queue did before work outlived its handles. Otherwise the
    /// work already on the device finishes, and the last handle's drop destroys the queue.
    pub fn cancel(self) {
        let driver = &self.driver;
        let queue = driver.replay_id();
        if let Some(replay) = driver.device.replay_capture().filter(|_| queue != 0) {
            replay.push(aqueduct_profile::replay::ReplayRecord::QueueCancelled { queue });
        }
        driver.cancel_pending();
    }
}
