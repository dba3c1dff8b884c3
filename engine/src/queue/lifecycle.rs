//! A queue's life: creation (signals, kernarg ring, HSA queue, queue World, completion thread)
//! and destruction, when the last `Queue` handle drops (the HSA queue first, then failing what
//! was left in flight).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aqueduct_components::device_entities::QueueEntity;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_signal_t;

use super::Queue;
use super::core::QueueShared;
use super::failure::{ErrorSink, queue_error_callback};
use crate::config::{QueueConfig, QueuePriority};
use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::profile::ProfiledQueue;

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
        let index = device
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
        let endpoint = Arc::new(QueueEndpoint::new(index, epoch_signal, control_signal, slots.into_boxed_slice()));
        // From here the device owns the signals (destroyed when it drops).
        device.directory.register(endpoint.clone());
        let kernarg_memory = device.allocate_granted(state.kernarg_pool, config.kernarg_ring_bytes as usize)? as u64;
        let error_sink = Arc::new(ErrorSink {
            status: AtomicU32::new(0),
            control: control_signal,
            api: hsa.api(),
            description: Default::default(),
        });
        super::memory_faults::route(state.info.agent.handle, &error_sink);
        let sink_pointer = (&*error_sink as *const ErrorSink).cast_mut().cast();
        // SAFETY: the sink is boxed inside QueueShared and outlives the HSA queue, which is
        // destroyed when the last Queue handle drops, before the sink.
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
        // SAFETY: the queue lives until the last Queue handle's drop destroys it, after the last
        // ring use.
        let ring = unsafe { AqlRing::new(hsa_queue, hsa.api()) };
        let (core, stages) = QueueShared::build_world(device, index, ring, kernarg_memory, endpoint.clone(), agent);
        let entity = device
            .world()
            .spawn(QueueEntity {
                index,
                agent,
                ring_packets: config.queue_packets,
                kernarg_bytes: config.kernarg_ring_bytes,
            })
            .id();
        let shared = Arc::new(QueueShared {
            index,
            agent,
            device: device.clone(),
            endpoint,
            stages,
            hsa_queue,
            core: Mutex::new(core),
            error_sink,
            shutdown: AtomicBool::new(false),
            batch_owner: AtomicU64::new(0),
            counters: Default::default(),
            capturing: AtomicBool::new(false),
            memory_timeline: Default::default(),
            host_calls: Default::default(),
            file_staging: Default::default(),
            priority: settings.priority,
            replay_id: Default::default(),
            handles: AtomicUsize::new(1),
            thread: Mutex::new(None),
            kernarg_memory,
            entity,
        });
        // The handle first: if the thread cannot start, its drop tears the queue down.
        let handle = Self(shared.clone());
        let ticks_per_ns = hsa.timestamp_frequency().unwrap_or(1_000_000_000) as f64 / 1e9;
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("aqueduct-completion-{index}"))
                .spawn(move || super::completion::run(shared, ticks_per_ns))
                .map_err(|error| EngineError::NoDevice {
                    reason: format!("cannot start a completion thread: {error}"),
                })?
        };
        *shared.thread.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(thread);
        // Registered under the capture slot's lock, so a capture that begins or ends meanwhile
        // sees the queue either way.
        let session = device.profile.lock().unwrap_or_else(|poison| poison.into_inner());
        let profiled: Arc<dyn ProfiledQueue> = shared.clone();
        device.queues.lock().unwrap_or_else(|poison| poison.into_inner()).push(Arc::downgrade(&profiled));
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
        self.0.handles.fetch_add(1, Ordering::Relaxed);
        Self(self.0.clone())
    }
}

impl Drop for Queue {
    /// The last handle's drop destroys the queue: what was submitted through any handle before
    /// it (a `Release`, paired with the last drop's `Acquire`) is done with or failed.
    fn drop(&mut self) {
        if self.0.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.destroy();
        }
    }
}

impl QueueShared {
    /// Destroys the queue: stops the completion thread, destroys the HSA queue, fails what was
    /// left in flight, then frees the kernarg ring and the device-World entity.
    fn destroy(&self) {
        // Before anything it cancels: the replay drops its queue at the same place in the stream.
        let queue = self.replay_id.get();
        if let Some(replay) = self.device.replay_capture().filter(|_| queue != 0) {
            replay.push(aqueduct_profile::replay::ReplayRecord::QueueDropped { queue });
        }
        self.shutdown.store(true, Ordering::Release);
        self.device.poke(self.endpoint.control_signal);
        if let Some(thread) = self.thread.lock().unwrap_or_else(|poison| poison.into_inner()).take() {
            let _ = thread.join();
        }
        // Destroy the HSA queue first: afterwards no packet touches memory, so the work still in
        // flight can be failed and its rows settled.
        // SAFETY: the completion thread is gone and no Queue handle is left to submit.
        if let Err(error) = unsafe { self.device.hsa.queue_destroy(self.hsa_queue) } {
            tracing::warn!(%error, "hsa_queue_destroy failed");
        }
        {
            let mut core = self.lock();
            self.abandon(&mut core);
        }
        // Its host calls' *ready* timeline failed with the rows: the host-call thread ends.
        self.stop_host_calls();
        // SAFETY: the queue is destroyed, so nothing reads the kernarg ring any more.
        let _ = unsafe { self.device.hsa.free(self.kernarg_memory as *mut u8) };
        self.device.world().despawn(self.entity);
        self.device.release_settled();
    }
}
