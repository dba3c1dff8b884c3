//! Queues and their operations. Each operation validates its input completely before anything is
//! staged, then hands the queue's submission driver a closure that fills in the payload.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use aqueduct_abi::ImplicitKernargs;
use aqueduct_builtins::{
    DispatchPlan, UPDATE_INLINE_MAX_BYTES, plan_copy, plan_fill, plan_update_inline, plan_update_staged,
};
use aqueduct_components::Retained;
use aqueduct_components::device_entities::QueueEntity;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_components::submission::{DispatchTemplate, KernargLayout, Payload, StagedSubmission};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_signal_t;
use bevy_ecs::entity::Entity;
use bytemuck::Zeroable;

use crate::device::DeviceShared;
use crate::dispatch::{Dispatch, GridSource, validate_dispatch};
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};
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
        let endpoint = Arc::new(QueueEndpoint {
            index,
            strategy: device.strategy,
            epoch_signal,
            control_signal,
            slot_users: slots.iter().map(|_| AtomicU32::new(0)).collect(),
            epoch_slots: slots.into_boxed_slice(),
            submitted: AtomicU64::new(0),
            reclaimed: AtomicU64::new(0),
            failure: AtomicU32::new(0),
        });
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

    fn check_buffer(&self, buffer: &Buffer) -> EngineResult<()> {
        buffer.belongs_to(&self.shared().device)
    }

    /// Orders nothing but the queue: signals once the waits are met and earlier work is done.
    pub fn barrier(&self, waits: &[SemaphorePoint], signals: &[SemaphorePoint]) -> EngineResult<()> {
        self.shared().submit(waits, signals, |_| {})
    }

    /// Fills `target` with a repeated `pattern` of 1, 2, 4 or 8 bytes.
    pub fn fill(
        &self,
        target: Binding,
        pattern: &[u8],
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        self.check_buffer(target.buffer)?;
        let address = target.buffer.check_range("fill target", target.offset, target.length)?;
        let mut word = [0u8; 8];
        let width = pattern.len();
        if !matches!(width, 1 | 2 | 4 | 8) {
            return Err(aqueduct_builtins::PlanError::UnsupportedPatternWidth { width: width.min(255) as u8 }.into());
        }
        word[..width].copy_from_slice(pattern);
        let plan = plan_fill(address, target.length, u64::from_le_bytes(word), width as u8)?;
        let retained = target.buffer.0.clone() as Retained;
        self.submit_plan(plan, retained, None, waits, signals)
    }

    /// Copies `source` to `target`; the ranges must have equal lengths and must not overlap.
    pub fn copy(
        &self,
        source: Binding,
        target: Binding,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        self.check_buffer(source.buffer)?;
        self.check_buffer(target.buffer)?;
        let from = source.buffer.check_range("copy source", source.offset, source.length)?;
        let to = target.buffer.check_range("copy target", target.offset, target.length)?;
        if source.length != target.length {
            return Err(EngineError::InvalidArgument {
                what: "copy",
                reason: format!("source is {} bytes, target {}", source.length, target.length),
            });
        }
        let plan = plan_copy(from, to, source.length)?;
        let source_buffer = source.buffer.0.clone() as Retained;
        let target_buffer = target.buffer.0.clone() as Retained;
        self.submit_plan(plan, source_buffer, Some(target_buffer), waits, signals)
    }

    /// Writes `data` into `target` at `offset` when the queue reaches it. Up to
    /// [`UPDATE_INLINE_MAX_BYTES`] travel inside the kernargs; larger updates (up to
    /// [`MAX_UPDATE_BYTES`]) are staged in the kernarg ring and copied.
    pub fn update(
        &self,
        target: &Buffer,
        offset: u64,
        data: &[u8],
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        self.check_buffer(target)?;
        let address = target.check_range("update target", offset, data.len() as u64)?;
        if data.len() > MAX_UPDATE_BYTES {
            return Err(EngineError::InvalidArgument {
                what: "update",
                reason: format!(
                    "{} bytes exceed the {MAX_UPDATE_BYTES}-byte limit; use a staging buffer and a copy",
                    data.len()
                ),
            });
        }
        let retained = target.0.clone() as Retained;
        if data.len() <= UPDATE_INLINE_MAX_BYTES {
            let plan = plan_update_inline(address, data)?;
            return self.submit_plan(plan, retained, None, waits, signals);
        }
        // Planned against a stand-in source with the staging area's 16-byte alignment; the real
        // address is patched in when the kernarg ring space is known.
        const STAGING_STAND_IN: u64 = 16;
        let plan = plan_update_staged(STAGING_STAND_IN, address, data.len() as u64)?;
        let agent = self.shared().device.agents[self.shared().agent].builtin(plan.kernel);
        self.shared().submit(waits, signals, |staged| {
            stage_builtin(staged, &plan, agent);
            staged.staging.extend_from_slice(data);
            staged.staging_pointer_offset = Some(0); // CopyArgs::source
            staged.retained.push(retained);
        })
    }

    fn submit_plan(
        &self,
        plan: DispatchPlan,
        first: Retained,
        second: Option<Retained>,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        let agent = self.shared().device.agents[self.shared().agent].builtin(plan.kernel);
        self.shared().submit(waits, signals, |staged| {
            if !plan.is_noop() {
                stage_builtin(staged, &plan, agent);
            }
            staged.retained.push(first);
            staged.retained.extend(second);
        })
    }

    /// Dispatches `kernel` with HAL-layout kernargs.
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        let shared = self.shared();
        let validated = validate_dispatch(&shared.device, shared.agent, kernel, dispatch, GridSource::Dispatch)?;
        for binding in dispatch.bindings {
            self.check_buffer(binding.buffer)?;
            binding.buffer.check_range("binding", binding.offset, binding.length)?;
        }
        let (info, template) = (validated.info, validated.template);
        // Publication writes the segment with `aqueduct_abi::write_hal_kernargs`, the writer the
        // recorder's templates use, from these bindings, constants and implicit block.
        let (implicit_offset, implicit) = match validated.implicit() {
            Some((offset, block)) => (Some(offset), block),
            None => (None, ImplicitKernargs::zeroed()),
        };
        shared.submit(waits, signals, |staged| {
            staged.payload = Payload::Dispatch(template);
            staged.layout = KernargLayout::Hal { implicit_offset, implicit };
            let mut previous: Option<&Buffer> = None;
            for binding in dispatch.bindings {
                staged.bindings.push(binding.buffer.device_address() + binding.offset);
                // Bindings into one buffer are usually adjacent; retain each run once.
                if !previous.is_some_and(|previous| Arc::ptr_eq(&previous.0, &binding.buffer.0)) {
                    staged.retained.push(binding.buffer.0.clone() as Retained);
                }
                previous = Some(binding.buffer);
            }
            staged.constants.extend_from_slice(dispatch.constants);
            staged.kernarg_size = info.kernarg_size;
            staged.kernarg_alignment = info.kernarg_alignment;
            staged.retained.push(kernel.executable.clone() as Retained);
        })
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
        let info = self.check_kernel(kernel)?;
        let explicit_end = info.explicit_size;
        let length = dispatch.kernargs.len();
        if length < explicit_end as usize || length > info.kernarg_size as usize {
            return Err(EngineError::KernargMismatch {
                kernel: info.name.clone(),
                reason: format!(
                    "{length} kernarg bytes given; the kernel needs {explicit_end} to {}",
                    info.kernarg_size
                ),
            });
        }
        for buffer in dispatch.retain {
            self.check_buffer(buffer)?;
        }
        let template = self.template(kernel, dispatch.grid, dispatch.workgroup)?;
        self.shared().submit(waits, signals, |staged| {
            staged.payload = Payload::Dispatch(template);
            staged.layout = KernargLayout::Raw;
            staged.raw.extend_from_slice(dispatch.kernargs);
            staged.raw.resize(info.kernarg_size as usize, 0);
            staged.kernarg_size = info.kernarg_size;
            staged.kernarg_alignment = info.kernarg_alignment;
            staged.retained.extend(dispatch.retain.iter().map(|buffer| buffer.0.clone() as Retained));
            staged.retained.push(kernel.executable.clone() as Retained);
        })
    }

    fn check_kernel<'k>(&self, kernel: &'k Kernel) -> EngineResult<&'k crate::executable::KernelInfo> {
        if kernel.executable.device.id != self.shared().device.id {
            return Err(EngineError::ForeignObject { what: "kernel" });
        }
        Ok(kernel.info())
    }

    /// The dispatch packet fields, after checking the grid and workgroup.
    fn template(&self, kernel: &Kernel, grid: [u32; 3], workgroup: Option<[u16; 3]>) -> EngineResult<DispatchTemplate> {
        kernel.info().template(self.shared().agent, grid, workgroup)
    }
}

/// Stages a device-library dispatch.
fn stage_builtin(staged: &mut StagedSubmission, plan: &DispatchPlan, kernel: crate::device::BuiltinKernel) {
    staged.payload = Payload::Dispatch(kernel.template(plan.grid_size, plan.workgroup_size));
    staged.layout = KernargLayout::Raw;
    staged.raw.extend_from_slice(plan.kernarg_bytes());
    staged.kernarg_size = plan.kernarg_bytes().len() as u32;
    staged.kernarg_alignment = 16;
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
