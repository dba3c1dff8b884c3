//! Queues and their operations. Each operation validates its input completely before anything is
//! staged, then hands the queue's submission driver a closure that fills in the payload.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use aqueduct_components::device_entities::QueueEntity;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_signal_t;
use bevy_ecs::entity::Entity;

use crate::device::DeviceShared;
use crate::dispatch::Dispatch;
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};
use crate::operations::{self, Immediate};
use crate::semaphore::SemaphorePoint;
use crate::submit::{ErrorSink, QueueShared, queue_error_callback};

/// Largest `update`: bigger writes belong in a staging buffer and a copy.
pub const MAX_UPDATE_BYTES: usize = 64 * 1024;

pub(crate) struct QueueHandle {
    pub shared: Arc<QueueShared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    kernarg_memory: u64,
    entity: Entity,
}

/// A queue on one agent of the device. Operations run in submission order; each waits for its
/// wait semaphores and, when done, raises its signal semaphores. Cloning shares the queue.
#[derive(Clone)]
pub struct Queue(pub(crate) Arc<QueueHandle>);

/// A dispatch whose kernarg bytes the caller builds (kernels outside the HAL layout). Buffers the
/// kernargs point into are listed in `retain` so they outlive the dispatch.
#[derive(Clone, Copy, Debug)]
pub struct RawDispatch<'a> {
    pub grid: [u32; 3],
    pub workgroup: Option<[u16; 3]>,
    pub kernargs: &'a [u8],
    pub retain: &'a [&'a Buffer],
}

impl Queue {
    pub(crate) fn create(device: &Arc<DeviceShared>, agent: usize) -> EngineResult<Self> {
        let state = device.agent(agent)?;
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
        let endpoint = Arc::new(QueueEndpoint::new(
            index,
            device.strategy,
            epoch_signal,
            control_signal,
            slots.into_boxed_slice(),
        ));
        // From here the device owns the signals (destroyed when it drops).
        device.directory.register(endpoint.clone());
        let kernarg_memory = device.allocate_granted(state.kernarg_pool, config.kernarg_ring_bytes as usize)? as u64;
        let error_sink = Arc::new(ErrorSink {
            status: AtomicU32::new(0),
            control: control_signal,
            api: hsa.api(),
            description: Default::default(),
        });
        crate::faults::route(state.info.agent.handle, &error_sink);
        let sink_pointer = (&*error_sink as *const ErrorSink).cast_mut().cast();
        // SAFETY: the sink is boxed inside QueueShared and outlives the HSA queue, which is
        // destroyed in QueueHandle::drop before the sink.
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
        // SAFETY: the queue lives until QueueHandle::drop destroys it, after the last ring use.
        let ring = unsafe { AqlRing::new(hsa_queue, hsa.api()) };
        let core = QueueShared::build_world(device, index, ring, kernarg_memory, endpoint.clone());
        let shared = Arc::new(QueueShared {
            index,
            agent,
            device: device.clone(),
            endpoint,
            hsa_queue,
            core: Mutex::new(core),
            error_sink,
            shutdown: AtomicBool::new(false),
            batch_owner: AtomicU64::new(0),
            counters: Default::default(),
        });
        let entity = device
            .world()
            .spawn(QueueEntity {
                index,
                agent,
                ring_packets: config.queue_packets,
                kernarg_bytes: config.kernarg_ring_bytes,
            })
            .id();
        let ticks_per_ns = hsa.timestamp_frequency().unwrap_or(1_000_000_000) as f64 / 1e9;
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("aqueduct-completion-{index}"))
                .spawn(move || crate::completion::run(shared, ticks_per_ns))
                .map_err(|error| EngineError::NoDevice {
                    reason: format!("cannot start a completion thread: {error}"),
                })?
        };
        Ok(Self(Arc::new(QueueHandle { shared, thread: Mutex::new(Some(thread)), kernarg_memory, entity })))
    }

    fn shared(&self) -> &QueueShared {
        &self.0.shared
    }

    /// The queue's index on its device.
    pub fn index(&self) -> u16 {
        self.shared().index
    }

    /// The agent (within the device) the queue runs on.
    pub fn agent(&self) -> usize {
        self.shared().agent
    }

    /// Submissions, AQL packets, parked submissions and device-side wait barriers so far.
    pub fn stats(&self) -> QueueStats {
        let counters = &self.shared().counters;
        let (submitted, reclaimed) = self.shared().epochs();
        QueueStats {
            submissions: counters.submissions.load(Ordering::Relaxed),
            packets: counters.packets.load(Ordering::Relaxed),
            deferred: counters.deferred.load(Ordering::Relaxed),
            device_waits: counters.device_waits.load(Ordering::Relaxed),
            epochs_submitted: submitted,
            epochs_retired: reclaimed,
        }
    }

    /// The raw HSA queue, for provider-specific control (fault injection on the soft runtime).
    pub fn hsa_queue(&self) -> *mut aqueduct_hsa::sys::hsa_queue_t {
        self.shared().hsa_queue
    }

    /// Orders nothing but the queue: signals once the waits are met and earlier work is done.
    pub fn barrier(&self, waits: &[SemaphorePoint], signals: &[SemaphorePoint]) -> EngineResult<()> {
        operations::barrier(&mut Immediate(self.shared()), waits, signals)
    }

    /// Fills `target` with a repeated `pattern` of 1, 2, 4 or 8 bytes.
    pub fn fill(
        &self,
        target: Binding,
        pattern: &[u8],
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        operations::fill(&mut Immediate(self.shared()), target, pattern, waits, signals)
    }

    /// Copies `source` to `target`; the ranges must have equal lengths and must not overlap.
    pub fn copy(
        &self,
        source: Binding,
        target: Binding,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        operations::copy(&mut Immediate(self.shared()), source, target, waits, signals)
    }

    /// Writes `data` into `target` at `offset` when the queue reaches it. Up to
    /// [`UPDATE_INLINE_MAX_BYTES`](aqueduct_builtins::UPDATE_INLINE_MAX_BYTES) travel inside the
    /// kernargs; larger updates (up to [`MAX_UPDATE_BYTES`]) are staged in the kernarg ring and
    /// copied.
    pub fn update(
        &self,
        target: &Buffer,
        offset: u64,
        data: &[u8],
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        operations::update(&mut Immediate(self.shared()), target, offset, data, waits, signals)
    }

    /// Dispatches `kernel` with HAL-layout kernargs.
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        operations::dispatch(&mut Immediate(self.shared()), kernel, dispatch, waits, signals)
    }

    /// Dispatches `kernel` with caller-built kernarg bytes, at least the explicit arguments and
    /// at most the kernel's kernarg segment (the rest is zeroed).
    pub fn dispatch_raw(
        &self,
        kernel: &Kernel,
        dispatch: &RawDispatch,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        operations::dispatch_raw(&mut Immediate(self.shared()), kernel, dispatch, waits, signals)
    }
}

/// What a queue has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub submissions: u64,
    pub packets: u64,
    pub deferred: u64,
    pub device_waits: u64,
    pub epochs_submitted: u64,
    pub epochs_retired: u64,
}

impl Drop for QueueHandle {
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.shutdown.store(true, Ordering::Release);
        shared.device.poke(shared.endpoint.control_signal);
        if let Some(thread) = self.thread.lock().unwrap_or_else(|poison| poison.into_inner()).take() {
            let _ = thread.join();
        }
        // Destroy the HSA queue first: afterwards no packet touches memory, so failing the work
        // still in flight can release what it retained.
        // SAFETY: the completion thread is gone and no Queue handle is left to submit.
        if let Err(error) = unsafe { shared.device.hsa.queue_destroy(shared.hsa_queue) } {
            tracing::warn!(%error, "hsa_queue_destroy failed");
        }
        {
            let mut core = shared.lock();
            shared.abandon(&mut core);
        }
        // SAFETY: the queue is destroyed, so nothing reads the kernarg ring any more.
        let _ = unsafe { shared.device.hsa.free(self.kernarg_memory as *mut u8) };
        shared.device.world().despawn(self.entity);
    }
}
