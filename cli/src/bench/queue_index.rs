//! `queue_index/cas_handoff/4`: four threads pass a compare-and-swap of an HSA queue's write
//! index round-robin (thread `i` moves it from `k` to `k + 1` when `k % 4 == i`), per hand-off.
//! What the drop-in's clients see of `hsa_queue_cas_write_index_*`, which ROCr does as one atomic
//! on the `amd_queue_t`: the soft runtime looks the queue up without a lock
//! (`soft-hsa/src/queue_slots.rs`). A raw queue of the soft runtime whose doorbell is never rung,
//! so moving its index enqueues nothing.

use std::time::Instant;

use aqueduct_engine::EngineError;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_soft_hsa::exports as hsa;

use super::Sample;
use super::shapes::mismatch;

/// Threads passing the index.
pub const THREADS: u64 = 4;
/// Hand-offs per repetition.
pub const HANDOFFS: u64 = 4_000;

/// A soft queue for the shape (created once; the process ends with it).
pub struct QueueIndexRig {
    queue: usize,
}

impl QueueIndexRig {
    /// A queue of the soft runtime the process already runs.
    pub fn new() -> Result<Self, EngineError> {
        let provider = |error: aqueduct_hsa::HsaError| EngineError::from(error);
        let hsa = aqueduct_soft_hsa::open_current().map_err(provider)?;
        let agent = hsa.gpu_agents().map_err(provider)?[0].agent;
        // SAFETY: no callback, so the null data pointer is never used; the queue is never
        // destroyed while the rig lives (nor after: the process ends first).
        let queue = unsafe { hsa.queue_create(agent, 64, None, core::ptr::null_mut()) }.map_err(provider)?;
        Ok(Self { queue: queue as usize })
    }
}

/// One repetition: [`HANDOFFS`] hand-offs among [`THREADS`] threads.
pub fn cas_handoff(rig: &QueueIndexRig) -> Result<Sample, EngineError> {
    let queue = rig.queue as *const hsa_queue_t;
    // SAFETY: a live soft queue.
    let start = unsafe { hsa::hsa_queue_load_write_index_relaxed(queue) };
    let began = Instant::now();
    let cpu = aqueduct_engine::thread_cpu_time();
    std::thread::scope(|scope| {
        for lane in 0..THREADS {
            let address = rig.queue;
            scope.spawn(move || {
                let queue = address as *const hsa_queue_t;
                let mut mine = start + lane;
                while mine < start + HANDOFFS {
                    // SAFETY: a live soft queue.
                    let seen = unsafe { hsa::hsa_queue_cas_write_index_scacq_screl(queue, mine, mine + 1) };
                    if seen == mine {
                        mine += THREADS;
                    } else {
                        std::hint::spin_loop();
                    }
                }
            });
        }
    });
    let sample = Sample { wall: began.elapsed(), host_cpu: aqueduct_engine::thread_cpu_time() - cpu };
    // SAFETY: as above.
    let end = unsafe { hsa::hsa_queue_load_write_index_relaxed(queue) };
    if end - start != HANDOFFS {
        return Err(mismatch("write index after the hand-offs", start + HANDOFFS, end));
    }
    Ok(sample)
}
