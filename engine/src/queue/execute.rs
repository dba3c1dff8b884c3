//! `Queue::execute` (its builder is in `queue/builder.rs`): check the binding table against the program once, then hand the program to
//! the queue's stages, which run it leg by leg.

use std::sync::atomic::Ordering;

use aqueduct_abi::block_program::{BindingSource, SourceKind};
use aqueduct_components::program::ProgramImageRef;

use super::Submitter;
use crate::command_buffer::{BindingTable, CommandBuffer, DEVICE_MIN_PACKETS, FinishedProgram};
use crate::config::BlockProcessing;
use crate::error::{EngineError, EngineResult};
use crate::semaphore::SemaphorePoint;

/// `execute` for a queue or a batch.
pub(crate) fn execute(
    to: &mut impl Submitter,
    kind: aqueduct_vocabulary::OperationKind,
    command_buffer: &CommandBuffer,
    table: &BindingTable,
    processing: Option<BlockProcessing>,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    let program = command_buffer.finished()?;
    let shared = to.driver();
    if program.device.id != shared.device.id {
        return Err(EngineError::ForeignObject { what: "command buffer" });
    }
    if program.agent != shared.agent {
        return Err(EngineError::InvalidArgument {
            what: "command buffer",
            reason: format!("recorded for agent {}, but the queue runs on agent {}", program.agent, shared.agent),
        });
    }
    check_table(program, table, shared.device.id)?;
    let block_limit = shared.device.config.execution_block_limit;
    let processing = processing.unwrap_or(command_buffer.processing());
    let on_device = on_device(shared, processing, program)?;
    // The queue's device target is made at its first device-processed execution, in a hold of
    // the lock of its own; later executions find it made and take the lock once, to enqueue.
    let on_device = on_device
        && (shared.endpoint.has_device_target.load(Ordering::Acquire)
            || match to.with_state(|queue, state| queue.device_target(state).map(drop)) {
                Ok(()) => true,
                Err(_) if processing == BlockProcessing::Auto => false,
                Err(error) => return Err(error),
            });
    // Marked only once nothing before the enqueueing can refuse it (the target's making included).
    if program.one_shot && program.executed.swap(true, Ordering::AcqRel) {
        return Err(EngineError::CommandBufferState { reason: "a one-shot command buffer runs once" });
    }
    let result = to.submit(waits, signals, |row| {
        row.set_operation(kind);
        let run = row.program();
        // SAFETY: the command buffer's entity owns the image until it is released, and that
        // waits for this row (enqueued now, while the caller holds the command buffer) to settle.
        run.image = Some(unsafe { ProgramImageRef::new(&program.image) });
        run.block_limit = block_limit;
        run.on_device = on_device;
        for (slot, need) in program.slot_needs.iter().enumerate() {
            let entry = table.slots[slot].as_ref().filter(|_| need.used);
            run.bindings.push(entry.map_or(0, |entry| entry.buffer.device_address() + entry.offset));
        }
    });
    if result.is_err() && program.one_shot {
        // Refused before it ran (bad points, a full ring): it may be executed again.
        program.executed.store(false, Ordering::Release);
    }
    result
}

/// Whether this execution is processed on the device ([`BlockProcessing`]): forced, a program
/// the device cannot process (or whose blocks do not fit the queue's device target) is refused;
/// picked by the cost model, it goes to the device only if it can. While a profile capture runs,
/// the model picks the host, whose executions the capture records dispatch by dispatch. Decided
/// without the queue's lock: the target's room is the device's configuration.
fn on_device(
    queue: &super::pass_driver::PassDriver,
    processing: BlockProcessing,
    program: &FinishedProgram,
) -> EngineResult<bool> {
    let refused = |reason: String| EngineError::InvalidArgument { what: "command buffer", reason };
    // Host processing never asks for the device program, so it is never built for it.
    let device_program = match processing {
        BlockProcessing::Host => return Ok(false),
        BlockProcessing::Device => *program
            .device_program()
            .map_err(|reason| refused(format!("it cannot be processed on the device: {reason}")))?,
        BlockProcessing::Auto => {
            let Ok(device_program) = program.device_program() else { return Ok(false) };
            let worth_it = device_program.conditional_branches > 0
                || (device_program.packets >= DEVICE_MIN_PACKETS && device_program.dynamic_transfers == 0);
            if !worth_it || queue.endpoint.capturing.load(Ordering::Acquire) {
                return Ok(false);
            }
            *device_program
        }
    };
    let (ring_packets, kernarg_capacity) = super::device_target::room(&queue.device.config);
    let table_bytes = 8 * program.slot_needs.len() as u64;
    let largest_table = aqueduct_systems::binding_tables::BindingTables::largest_table_bytes(
        super::device_target::binding_ring_bytes(&queue.device.config),
    );
    if u64::from(device_program.max_block_packets) + 2 > u64::from(ring_packets)
        || u64::from(device_program.max_block_kernarg_bytes) > kernarg_capacity
        || table_bytes > largest_table
    {
        if processing == BlockProcessing::Auto {
            return Ok(false);
        }
        return Err(EngineError::SubmissionTooLarge {
            reason: format!(
                "a block of {} packets and {} kernarg bytes and a {table_bytes}-byte binding table, for the device \
                 target's {}-packet ring, {}-byte kernarg area and {largest_table}-byte tables",
                device_program.max_block_packets,
                device_program.max_block_kernarg_bytes,
                ring_packets,
                kernarg_capacity
            ),
        });
    }
    Ok(true)
}

/// The table covers every slot the program names, with buffers of this device that are long
/// enough, aligned, and host-visible where a branch reads them; copies with a dynamic side do not
/// overlap.
fn check_table(program: &FinishedProgram, table: &BindingTable, device: u64) -> EngineResult<()> {
    let needed = program.slot_needs.len();
    if table.slots.len() < needed {
        return Err(EngineError::BindingTable {
            slot: table.slots.len() as u32,
            reason: format!("the table has {} slots; the program names {needed}", table.slots.len()),
        });
    }
    for (slot, need) in program.slot_needs.iter().enumerate().filter(|(_, need)| need.used) {
        let slot = slot as u32;
        let Some(entry) = &table.slots[slot as usize] else {
            return Err(EngineError::BindingTable { slot, reason: "empty, and the program uses it".into() });
        };
        if entry.buffer.0.device.id != device {
            return Err(EngineError::ForeignObject { what: "binding table buffer" });
        }
        // An alloca's buffer may have gone back to its pool since the table was built.
        entry.buffer.check_live()?;
        if entry.length < need.length {
            return Err(EngineError::BindingTable {
                slot,
                reason: format!("{} bytes; the program uses {}", entry.length, need.length),
            });
        }
        if need.host_visible && !entry.buffer.kind().host_accessible() {
            return Err(EngineError::BindingTable {
                slot,
                reason: "a conditional branch reads it on the host, so it must be host-visible".into(),
            });
        }
        let base = entry.buffer.device_address() + entry.offset;
        if need.align > 1 && !base.is_multiple_of(need.align) {
            return Err(EngineError::BindingTable {
                slot,
                reason: format!("base address {base:#x} is not {}-byte aligned", need.align),
            });
        }
    }
    let resolve = |source: &BindingSource| match source.source_kind() {
        Some(SourceKind::Static) => source.value,
        _ => table.slots[source.slot as usize]
            .as_ref()
            .map_or(0, |entry| entry.buffer.device_address() + entry.offset + source.value),
    };
    for copy in &program.copy_checks {
        aqueduct_builtins::plan_copy(resolve(&copy.source), resolve(&copy.target), copy.length)?;
    }
    Ok(())
}

impl CommandBuffer {
    /// Whether `table` satisfies this command buffer (what `execute` checks first).
    pub fn check_binding_table(&self, table: &BindingTable) -> EngineResult<()> {
        check_table(self.finished()?, table, self.device.id)
    }
}
