//! The queue operations, written once: each validates its input completely before anything is
//! enqueued, then hands a [`Submitter`] a closure that fills in the submission row. [`Queue`]
//! publishes on return (the immediate path); [`Batch`] enqueues and publishes at its flush.
//!
//! [`Queue`]: crate::Queue
//! [`Batch`]: crate::Batch

use aqueduct_abi::ImplicitKernargs;
use aqueduct_builtins::{
    DispatchPlan, UPDATE_INLINE_MAX_BYTES, plan_copy, plan_fill, plan_update_copied, plan_update_inline,
};
use aqueduct_components::submission::{DispatchTemplate, RowWriter};
use aqueduct_vocabulary::OperationKind;

use super::RawDispatch;
use super::pass_driver::PassDriver;
use crate::dispatch::{Dispatch, GridSource, validate_dispatch};
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::MAX_UPDATE_BYTES;
use crate::memory::{Binding, Buffer};
use crate::semaphore::SemaphorePoint;

/// Where a validated operation goes.
pub(crate) trait Submitter {
    /// The queue's pass driver.
    fn driver(&self) -> &PassDriver;

    /// Enqueues the operation: waits, signals, then what `stage` fills in.
    fn submit(
        &mut self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        fill: impl FnOnce(&mut RowWriter),
    ) -> EngineResult<()>;

    /// Runs `f` on the queue and its state behind its lock (a batch holds it already).
    fn with_state<R>(&mut self, f: impl FnOnce(&PassDriver, &mut aqueduct_systems::QueueState) -> R) -> R;
}

/// The immediate path: each operation is published before the call returns.
pub(crate) struct Immediate<'q>(pub &'q PassDriver);

impl Submitter for Immediate<'_> {
    fn driver(&self) -> &PassDriver {
        self.0
    }

    #[inline]
    fn submit(
        &mut self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        fill: impl FnOnce(&mut RowWriter),
    ) -> EngineResult<()> {
        self.0.submit(waits, signals, fill)
    }

    fn with_state<R>(&mut self, f: impl FnOnce(&PassDriver, &mut aqueduct_systems::QueueState) -> R) -> R {
        f(self.0, &mut self.0.lock())
    }
}

fn check_buffer(to: &impl Submitter, buffer: &Buffer) -> EngineResult<()> {
    buffer.belongs_to(&to.driver().device)
}

pub(crate) fn barrier(
    to: &mut impl Submitter,
    kind: OperationKind,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    to.submit(waits, signals, |row| row.set_operation(kind))
}

pub(crate) fn fill(
    to: &mut impl Submitter,
    kind: OperationKind,
    target: Binding,
    pattern: &[u8],
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    check_buffer(to, target.buffer)?;
    let address = target.buffer.check_range("fill target", target.offset, target.length)?;
    let mut word = [0u8; 8];
    let width = pattern.len();
    if !matches!(width, 1 | 2 | 4 | 8) {
        return Err(aqueduct_builtins::PlanError::UnsupportedPatternWidth { width: width.min(255) as u8 }.into());
    }
    word[..width].copy_from_slice(pattern);
    let plan = plan_fill(address, target.length, u64::from_le_bytes(word), width as u8)?;
    submit_plan(to, kind, plan, waits, signals)
}

pub(crate) fn copy(
    to: &mut impl Submitter,
    kind: OperationKind,
    source: Binding,
    target: Binding,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    check_buffer(to, source.buffer)?;
    check_buffer(to, target.buffer)?;
    let from = source.buffer.check_range("copy source", source.offset, source.length)?;
    let into = target.buffer.check_range("copy target", target.offset, target.length)?;
    if source.length != target.length {
        return Err(EngineError::InvalidArgument {
            what: "copy",
            reason: format!("source is {} bytes, target {}", source.length, target.length),
        });
    }
    let plan = plan_copy(from, into, source.length)?;
    submit_plan(to, kind, plan, waits, signals)
}

pub(crate) fn update(
    to: &mut impl Submitter,
    kind: OperationKind,
    target: &Buffer,
    offset: u64,
    data: &[u8],
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    check_buffer(to, target)?;
    let address = target.check_range("update target", offset, data.len() as u64)?;
    if data.len() > MAX_UPDATE_BYTES {
        return Err(EngineError::InvalidArgument {
            what: "update",
            reason: format!(
                "{} bytes exceed the {MAX_UPDATE_BYTES}-byte limit; use a bounce buffer and a copy",
                data.len()
            ),
        });
    }
    if data.len() <= UPDATE_INLINE_MAX_BYTES {
        let plan = plan_update_inline(address, data)?;
        return submit_plan(to, kind, plan, waits, signals);
    }
    // Planned against a stand-in source with the update bytes' 16-byte alignment; the real
    // address is patched in when the kernarg ring space is known.
    const UPDATE_SOURCE_STAND_IN: u64 = 16;
    let plan = plan_update_copied(UPDATE_SOURCE_STAND_IN, address, data.len() as u64)?;
    let queue = to.driver();
    let kernel = queue.device.agents[queue.agent].builtin(plan.kernel);
    to.submit(waits, signals, |row| {
        row.set_operation(kind);
        set_builtin(row, &plan, kernel);
        row.place_update_bytes(data, 0); // CopyArgs::source
    })
}

fn submit_plan(
    to: &mut impl Submitter,
    operation: OperationKind,
    plan: DispatchPlan,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    let queue = to.driver();
    let kernel = queue.device.agents[queue.agent].builtin(plan.kernel);
    to.submit(waits, signals, |row| {
        row.set_operation(operation);
        if !plan.is_noop() {
            set_builtin(row, &plan, kernel);
        }
    })
}

pub(crate) fn dispatch(
    to: &mut impl Submitter,
    kind: OperationKind,
    kernel: &Kernel,
    dispatch: &Dispatch,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    let queue = to.driver();
    let validated = validate_dispatch(&queue.device, queue.agent, kernel, dispatch, GridSource::Dispatch)?;
    for binding in dispatch.bindings {
        check_buffer(to, binding.buffer)?;
        binding.buffer.check_range("binding", binding.offset, binding.length)?;
    }
    let (info, template) = (validated.info, validated.template);
    // Enqueueing serialises the segment once with `aqueduct_abi::write_hal_kernargs`, the writer
    // the recorder's templates use, from these bindings, constants and implicit block; kernarg
    // patching copies it.
    let implicit: Option<(u32, ImplicitKernargs)> = validated.implicit();
    to.submit(waits, signals, |row| {
        row.set_operation(kind);
        row.hal_dispatch(
            template,
            info.kernarg_size,
            info.kernarg_alignment,
            dispatch.bindings.iter().map(|binding| binding.buffer.device_address() + binding.offset),
            dispatch.constants,
            implicit.as_ref().map(|(offset, block)| (*offset, block)),
        );
    })
}

pub(crate) fn dispatch_raw(
    to: &mut impl Submitter,
    kind: OperationKind,
    kernel: &Kernel,
    dispatch: &RawDispatch,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    let info = check_kernel(to, kernel)?;
    let explicit_end = info.explicit_size;
    let length = dispatch.kernargs.len();
    if length < explicit_end as usize || length > info.kernarg_size as usize {
        return Err(EngineError::KernargMismatch {
            kernel: info.name.clone(),
            reason: format!("{length} kernarg bytes given; the kernel needs {explicit_end} to {}", info.kernarg_size),
        });
    }
    let template = template(to, kernel, dispatch.grid, dispatch.workgroup)?;
    to.submit(waits, signals, |row| {
        row.set_operation(kind);
        row.raw_dispatch(template, dispatch.kernargs, info.kernarg_size, info.kernarg_alignment);
    })
}

fn check_kernel<'k>(to: &impl Submitter, kernel: &'k Kernel) -> EngineResult<&'k crate::executable::KernelInfo> {
    if kernel.executable.device.id != to.driver().device.id {
        return Err(EngineError::ForeignObject { what: "kernel" });
    }
    Ok(kernel.info())
}

/// The dispatch packet fields, after checking the grid and workgroup.
fn template(
    to: &impl Submitter,
    kernel: &Kernel,
    grid: [u32; 3],
    workgroup: Option<[u16; 3]>,
) -> EngineResult<DispatchTemplate> {
    kernel.info().template(to.driver().agent, grid, workgroup)
}

/// Stages a device-library dispatch.
fn set_builtin(row: &mut RowWriter, plan: &DispatchPlan, kernel: crate::device::BuiltinKernel) {
    let bytes = plan.kernarg_bytes();
    row.raw_dispatch(kernel.template(plan.grid_size, plan.workgroup_size), bytes, bytes.len() as u32, 16);
}
