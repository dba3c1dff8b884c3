//! What a dispatch's kernel needs of the packet processor, whichever way it runs (a host build
//! in `processor`, the interpreter in `isa_exec`): its workgroups run under the queue's
//! scheduling, and the addresses it touches outside its allocations are checked the way the
//! agent's page tables would check them.

use std::sync::atomic::Ordering;

use aqueduct_abi::KernelDispatchPacket;

use super::claims;
use super::queue::SoftQueue;
use super::runtime::Runtime;
use super::scheduling::QueueScheduling;
use super::signals;
use aqueduct_hsa::sys::hsa_status_t;

/// A packet's outcome: a status and what went wrong, for the queue's error callback.
pub(crate) type PacketResult = Result<(), (hsa_status_t, String)>;

/// Where the queue's agent touching `[address, address + length)` lands in host memory, outside
/// its allocations: a signal, or a queue's `amd_queue_t`, ring or doorbell (each at its host
/// address); failing those, [`check_access`] (which records a fault for delivery). The
/// interpreter's access check and a host build's pointer arguments both end here, after their
/// allocation lookups.
pub(crate) fn check_beyond_allocations(
    queue: &SoftQueue,
    runtime: &Runtime,
    address: u64,
    length: u64,
) -> Result<u64, String> {
    if signals::device_visible(address, length) {
        return Ok(address);
    }
    let queues = runtime.queues.lock().unwrap_or_else(|poison| poison.into_inner());
    if queues.values().any(|queue| queue.device_visible(address, length)) {
        return Ok(address);
    }
    drop(queues);
    check_access(queue, runtime, address, length)
}

/// Where the queue's agent touching `[address, address + length)` lands in host memory (a locked
/// range's agent addresses are translated); on a fault, records it for delivery as a system
/// event and says why.
pub(crate) fn check_access(queue: &SoftQueue, runtime: &Runtime, address: u64, length: u64) -> Result<u64, String> {
    use super::memory::AccessFault;
    let fault = match runtime.allocations.translate(queue.agent_index, address, length) {
        Ok(host) => return Ok(host),
        Err(fault) => fault,
    };
    let (reason, text) = match fault {
        AccessFault::NotMapped => (aqueduct_hsa::sys::amd_event::FAULT_PAGE_NOT_PRESENT, "not mapped"),
        AccessFault::NotGranted => (
            aqueduct_hsa::sys::amd_event::FAULT_PAGE_NOT_PRESENT,
            "not mapped for this agent (no hsa_amd_agents_allow_access)",
        ),
    };
    *queue.memory_fault.lock().unwrap_or_else(|poison| poison.into_inner()) = Some((address, reason));
    Err(format!("{length} bytes at {address:#x} {text}"))
}

/// Runs `run_one(group memory, workgroup id)` for every workgroup of `packet`, whichever way its
/// kernel executes ([`run_linear`]). `run_one` returns whether a pool thread that ran it may go
/// on to the next workgroup (`false`: it gives the thread back, `claims::run_range`).
pub(crate) fn for_each_workgroup(
    queue: &SoftQueue,
    runtime: &Runtime,
    packet: &KernelDispatchPacket,
    run_one: impl Fn(&mut Vec<u8>, [u32; 3]) -> bool + Sync,
) {
    let (grid, workgroup) = (packet.grid(), packet.workgroup());
    let counts: [u64; 3] = core::array::from_fn(|axis| u64::from(grid[axis]).div_ceil(u64::from(workgroup[axis])));
    let total = counts[0] * counts[1] * counts[2];
    let id_of = |linear: u64| {
        [
            (linear % counts[0]) as u32,
            (linear / counts[0] % counts[1]) as u32,
            (linear / (counts[0] * counts[1])) as u32,
        ]
    };
    if total == 1 {
        run_one(&mut Vec::new(), id_of(0));
        return;
    }
    run_linear(queue, runtime, total, Pace::Kernel(packet.kernel_object), &|memory, linear| {
        run_one(memory, id_of(linear))
    });
}

/// How [`run_linear`] decides when to call helpers.
pub(crate) enum Pace {
    /// By the pace this kernel (its kernel object) last had on this thread, remembered.
    Kernel(u64),
    /// Saved workgroups, each of which has already run a slice (`scheduling::SAVE_SLICE`): helpers
    /// at once, as many as the dispatch's share of the pool's threads (`Arbiter::share`).
    Saved,
}

/// Runs `run_one(group memory, linear id)` for every linear id below `total`. Priority and CU
/// mask (`scheduling.rs`): the ids run in chunks, each after yielding to higher-priority
/// dispatches, on this thread and at most `lanes − 1` pool threads at once, and no more than the
/// pool's threads beyond the running dispatches (`claims.rs`: this thread starts at once, free
/// pool threads join at once where the pace says the chunk is worth waking them for, once the
/// work left is otherwise); each thread reuses one group-memory buffer.
pub(crate) fn run_linear(
    queue: &SoftQueue,
    runtime: &Runtime,
    total: u64,
    pace_of: Pace,
    run_one: &(dyn Fn(&mut Vec<u8>, u64) -> bool + Sync),
) {
    let mut memory = Vec::new();
    let running = runtime.arbiter.enter(queue.scheduling.priority.load(Ordering::Acquire));
    let compute_units = runtime.compute_units(queue.agent_index);
    let threads = rayon::current_num_threads();
    let lanes = queue.scheduling.lanes(threads, compute_units);
    let chunk = QueueScheduling::chunk(lanes);
    // The kernel's pace on this thread, unless it is due to be measured again.
    let (known, mut pace) = match pace_of {
        Pace::Kernel(kernel) => {
            let known = PACES.with_borrow(|paces| paces.get(&kernel).copied());
            (known, known.and_then(|(pace, uses)| (uses < REMEASURE_AFTER).then_some(pace)))
        }
        Pace::Saved => (None, Some(super::scheduling::SAVE_SLICE)),
    };
    let mut measured = None;
    let mut start = 0;
    while start < total {
        runtime.arbiter.yield_to_higher(&running, || queue.stop.load(Ordering::Acquire));
        let end = (start + chunk).min(total);
        // Helpers only for the pool's threads beyond those the running dispatches' processor
        // threads stand for: with every queue busy, those threads already fill the cores, and
        // waking pool threads too only moved work around (a 16-queue MLP serving run spent a
        // quarter of its time in the scheduler and in rayon's idle rounds). Saved workgroups
        // (long ones, saved because other dispatches wanted threads) take a fair share only.
        let helpers = (lanes - 1).min(match pace_of {
            Pace::Kernel(_) => threads.saturating_sub(runtime.arbiter.running()),
            Pace::Saved => runtime.arbiter.share(threads).saturating_sub(1),
        });
        if let Some(alone) = claims::run_range(start..end, helpers, pace, claims::HELPER_SHARE, &mut memory, run_one) {
            (pace, measured) = (Some(alone), Some(alone));
        }
        start = end;
    }
    let Pace::Kernel(kernel) = pace_of else { return };
    let remembered = measured.map(|pace| (pace, 0)).or(known.map(|(pace, uses)| (pace, uses.saturating_add(1))));
    if let Some(remembered) = remembered {
        PACES.with_borrow_mut(|paces| {
            if paces.len() >= PACED_KERNELS && !paces.contains_key(&kernel) {
                paces.clear();
            }
            paces.insert(kernel, remembered);
        });
    }
}

/// Dispatches of a kernel that go by its remembered pace before one measures it again (a pace
/// is measured only where the processor ran its first workgroup alone, `claims::run_range`).
const REMEASURE_AFTER: u32 = 16;

/// Kernels whose pace a thread remembers; past it the memory starts again (a pace only times
/// when helpers are called).
const PACED_KERNELS: usize = 256;

thread_local! {
    /// The time one workgroup of each kernel (by kernel object) took this thread when last
    /// measured, and the dispatches since: whether the next dispatch's workgroups are worth
    /// waking pool threads for at once. A kernel object reused by another kernel misleads that
    /// choice for a few dispatches at most.
    static PACES: core::cell::RefCell<hashbrown::HashMap<u64, (std::time::Duration, u32)>> =
        core::cell::RefCell::new(hashbrown::HashMap::new());
}
