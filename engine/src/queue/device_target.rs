//! The queue's device target (`aqueduct_systems::DeviceTarget`): where command-buffer executions
//! processed on the device run. Made at the queue's first such execution, destroyed with the
//! queue.

use std::sync::atomic::Ordering;

use aqueduct_abi::device_program::{PROCESSOR_STATE_RESERVED_BYTES, ProcessorStatus};
use aqueduct_builtins::Builtin;
use aqueduct_components::program::BuiltinObject;
use aqueduct_hsa::sys::hsa_signal_t;
use aqueduct_systems::binding_tables::BindingTables;
use aqueduct_systems::{DeviceTarget, QueueState};

use super::error_sink::{ErrorSink, queue_error_callback};
use super::pass_driver::PassDriver;
use crate::error::{EngineError, EngineResult};

/// A device target's ring (packets) and kernarg area (bytes), which the device's configuration
/// fixes: what an execution's blocks must fit, known before the target is made.
pub(super) fn room(config: &crate::config::EngineConfig) -> (u32, u64) {
    (config.queue_packets, config.kernarg_ring_bytes / 2)
}

/// Bytes of a device target's binding-table ring: a quarter of the queue's kernarg ring (256 KiB
/// by default), so one table may have 16,384 slots. An execution takes 128 kernarg bytes and a
/// new table at least a 64-byte line, so with every table new the table ring holds half the
/// executions the kernarg ring does (4,096 by default, twice the default `epochs_in_flight`).
pub(super) fn binding_ring_bytes(config: &crate::config::EngineConfig) -> u64 {
    config.kernarg_ring_bytes / 4
}

impl PassDriver {
    /// The queue's device target, made now if this is its first execution on the device.
    pub(super) fn device_target<'s>(&self, state: &'s mut QueueState) -> EngineResult<&'s DeviceTarget> {
        if state.device_target.is_none() {
            state.device_target = Some(self.make_device_target()?);
            self.endpoint.has_device_target.store(true, Ordering::Release);
        }
        match &state.device_target {
            Some(target) => Ok(target),
            None => unreachable!("set just above"),
        }
    }

    fn make_device_target(&self) -> EngineResult<DeviceTarget> {
        let device = &self.device;
        let hsa = &device.hsa;
        let agent = device.agent(self.agent)?;
        let kernel = agent.builtins[Builtin::BlockProcessor as usize];
        if kernel.kernel_object == 0 {
            return Err(EngineError::InvalidArgument {
                what: "command buffer",
                reason: format!(
                    "the device library for {} has no block processor, so nothing is processed on the device",
                    agent.library_target
                ),
            });
        }
        let processor = BuiltinObject {
            kernel_object: kernel.kernel_object,
            group_segment_size: kernel.group_segment_size,
            private_segment_size: kernel.private_segment_size,
        };
        let config = &device.config;
        // Half the queue's kernarg ring: a step packs blocks up to it.
        let (ring_packets, kernarg_capacity) = room(config);
        let slots = (config.epochs_in_flight as usize).next_power_of_two();
        let state = device
            .allocate_granted(agent.kernarg_pool, (PROCESSOR_STATE_RESERVED_BYTES + kernarg_capacity) as usize)?;
        let table_bytes = binding_ring_bytes(config);
        let memory =
            device.allocate_granted(agent.kernarg_pool, slots * size_of::<ProcessorStatus>()).and_then(|statuses| {
                match device.allocate_granted(agent.kernarg_pool, table_bytes as usize) {
                    Ok(tables) => Ok((statuses, tables)),
                    Err(error) => {
                        // SAFETY: just allocated, used by nothing.
                        let _ = unsafe { hsa.free(statuses) };
                        Err(error)
                    }
                }
            });
        let (statuses, tables) = match memory {
            Ok(memory) => memory,
            Err(error) => {
                // SAFETY: just allocated, used by nothing.
                let _ = unsafe { hsa.free(state) };
                return Err(error);
            }
        };
        let mut done_signals = Vec::with_capacity(slots);
        let queue = (|| {
            for _ in 0..slots {
                done_signals.push(hsa.signal_create(0)?.handle);
            }
            // A fault on the target fails this queue, as a fault on the queue itself does: the
            // callback reports to the queue's own error sink.
            let sink = (&*self.error_sink as *const ErrorSink).cast_mut().cast();
            // SAFETY: the sink is shared by this queue's parts, which outlive the target queue (its
            // teardown destroys the target first).
            unsafe { hsa.queue_create(agent.info.agent, ring_packets, Some(queue_error_callback), sink) }
        })();
        let queue = match queue {
            Ok(queue) => queue,
            Err(error) => {
                done_signals.into_iter().for_each(|handle| drop(hsa.signal_destroy(hsa_signal_t { handle })));
                // SAFETY: just allocated, used by nothing.
                unsafe {
                    let _ = hsa.free(state);
                    let _ = hsa.free(statuses);
                    let _ = hsa.free(tables);
                }
                return Err(error.into());
            }
        };
        Ok(DeviceTarget {
            queue: queue as u64,
            ring_packets,
            state: state as u64,
            kernarg_capacity,
            done_signals: done_signals.into_boxed_slice(),
            statuses: statuses as u64,
            processor,
            // SAFETY: `tables` is kernarg memory of `table_bytes` allocated above for the target
            // alone (host-accessible, as kernarg memory is), freed only with the target.
            binding_tables: unsafe { BindingTables::new(tables as u64, table_bytes, slots) },
        })
    }

    /// Destroys the target's HSA queue: nothing of an execution runs after this.
    pub(super) fn stop_device_target(&self, target: &DeviceTarget) {
        // SAFETY: the queue's own HSA queue is destroyed, so no processor step enqueues more.
        if let Err(error) = unsafe { self.device.hsa.queue_destroy(target.queue as *mut _) } {
            tracing::warn!(%error, "hsa_queue_destroy of the device target failed");
        }
    }

    /// Frees the target's memory and signals, once its queue is destroyed and every row settled.
    pub(super) fn free_device_target(&self, target: DeviceTarget) {
        let hsa = &self.device.hsa;
        for handle in target.done_signals {
            let _ = hsa.signal_destroy(hsa_signal_t { handle });
        }
        // SAFETY: the target queue is destroyed and its executions settled: nothing reads these.
        unsafe {
            let _ = hsa.free(target.state as *mut u8);
            let _ = hsa.free(target.statuses as *mut u8);
            let _ = hsa.free(target.binding_tables.ring.base as *mut u8);
        }
    }
}
