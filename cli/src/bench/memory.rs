//! Queue-ordered memory, host calls and file reads:
//! - `alloca/roundtrip`: an alloca, a dispatch that binds the buffer and a dealloca on one
//!   retire-only queue, per round trip; `alloca/baseline` is the same loop on a buffer allocated
//!   once (the dispatch and a barrier in place of the dealloca), so the difference is what the
//!   allocation path costs;
//! - `alloca/cross_queue`: the same, alternating between two executing queues on a one-block pool,
//!   so every alloca takes the memory the other queue's dealloca returned, behind a device wait;
//! - `host_call/e2e`: one host call and a host wait for its signal, one at a time;
//!   `host_call/after_barrier/e2e`: the same behind a barrier on its queue (the device round
//!   trip before the call may run);
//! - `file/read/64MiB`, `file/read_bounced/64MiB`: a 64 MiB file read into host-visible memory, and
//!   into device-local memory through the bounce buffer, per MiB; `file/read_baseline/64MiB` is a
//!   plain `pread` into the same host-visible memory.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use aqueduct_engine::{Buffer, Dispatch, EngineError, MemoryKind, Pool, PoolConfig};

use super::Sample;
use super::shapes::{Rig, SUBMITS, WAIT, mismatch, timed};

/// Bytes per alloca in the alloca shapes.
const ALLOCA_BYTES: u64 = 4096;
/// The file shapes' file, and their unit: operations are MiB.
pub const FILE_MIB: u64 = 64;

/// Pools, buffers and the file of the memory shapes.
pub struct MemoryRig {
    pool: Pool,
    /// One block of one alloca: every alloca reuses the memory the last dealloca returned.
    one_block: Pool,
    fixed: Buffer,
    file_path: PathBuf,
    file: File,
    visible: Buffer,
    device_local: Buffer,
}

impl MemoryRig {
    /// Makes the pools and buffers on `rig`'s device, and writes the file (removed on drop).
    pub fn new(rig: &Rig) -> Result<Self, EngineError> {
        let device = &rig.device;
        let pool = device.create_pool(PoolConfig::new(MemoryKind::HostVisible))?;
        let one_block = device
            .create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(ALLOCA_BYTES).max_size(ALLOCA_BYTES))?;
        let fixed = device.allocate(MemoryKind::HostVisible, ALLOCA_BYTES)?;
        let file_path = std::env::temp_dir().join(format!("aqueduct-bench-{}.bin", std::process::id()));
        let bytes = FILE_MIB << 20;
        let contents: Vec<u8> = (0..bytes).map(|index| (index % 251) as u8).collect();
        let io = |error: std::io::Error| EngineError::File { reason: error.to_string() };
        std::fs::write(&file_path, &contents).map_err(io)?;
        let file = File::open(&file_path).map_err(io)?;
        Ok(Self {
            pool,
            one_block,
            fixed,
            file_path,
            file,
            visible: device.allocate(MemoryKind::HostVisible, bytes)?,
            device_local: device.allocate(MemoryKind::DeviceLocal, bytes)?,
        })
    }
}

impl Drop for MemoryRig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file_path);
    }
}

/// The next point of a semaphore.
struct Counter<'s> {
    semaphore: &'s aqueduct_engine::Semaphore,
    value: u64,
}

impl<'s> Counter<'s> {
    fn next(&mut self) -> aqueduct_engine::SemaphorePoint<'s> {
        self.value += 1;
        self.semaphore.at(self.value)
    }
}

fn tiny<'b>(bindings: &'b [aqueduct_engine::Binding<'b>]) -> Dispatch<'b> {
    Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(bindings).constants(&[1, 2])
}

/// [`SUBMITS`] round trips (alloca, dispatch, dealloca) on one retire-only queue, or the same
/// loop on a fixed buffer with a barrier in the dealloca's place (`pooled` false).
pub fn roundtrip(rig: &Rig, memory: &MemoryRig, pooled: bool) -> Result<Sample, EngineError> {
    let queue = &rig.host[0];
    let done = rig.device.create_semaphore(0)?;
    let timeline = rig.device.create_semaphore(0)?;
    let mut stand_in = Counter { semaphore: &timeline, value: 0 };
    let sample = timed(
        || {
            for _ in 0..SUBMITS {
                let buffer =
                    if pooled { queue.alloca(&memory.pool, ALLOCA_BYTES).submit()? } else { memory.fixed.clone() };
                let bindings = [buffer.range(0, 4), buffer.range(64, 4)];
                queue.dispatch(&rig.tiny, &tiny(&bindings)).submit()?;
                // The baseline's barrier signals a semaphore, as a dealloca signals its queue's
                // memory timeline: the rows differ by the allocation path alone.
                if pooled {
                    queue.dealloca(&buffer).submit()?;
                } else {
                    queue.barrier().signal(stand_in.next()).submit()?;
                }
            }
            queue.barrier().signal(done.at(1)).submit()
        },
        || done.wait(1, WAIT),
        false,
    )?;
    let stats = memory.pool.stats();
    if pooled && stats.live_allocations != 0 {
        return Err(mismatch("live allocations after the round trips", 0, stats.live_allocations));
    }
    Ok(sample)
}

/// [`SUBMITS`] round trips alternating between two executing queues on a one-block pool: each
/// alloca takes the memory the other queue's last dealloca returned, behind a device wait.
pub fn cross_queue(rig: &Rig, memory: &MemoryRig) -> Result<Sample, EngineError> {
    let queues = &rig.e2e[..2];
    let (ready, done) = (rig.device.create_semaphore(0)?, rig.device.create_semaphore(0)?);
    let sample = timed(
        || {
            for step in 1..=SUBMITS {
                let queue = &queues[step as usize % 2];
                let buffer = queue.alloca(&memory.one_block, ALLOCA_BYTES).signal(ready.at(step)).submit()?;
                let bindings = [buffer.range(0, 4), buffer.range(64, 4)];
                queue.dispatch(&rig.tiny, &tiny(&bindings)).wait(ready.at(step)).submit()?;
                queue.dealloca(&buffer).signal(done.at(step)).submit()?;
            }
            Ok(())
        },
        || done.wait(SUBMITS, WAIT),
        true,
    )?;
    if memory.one_block.stats().bytes_reserved != ALLOCA_BYTES {
        return Err(mismatch("one-block pool size", ALLOCA_BYTES, memory.one_block.stats().bytes_reserved));
    }
    Ok(sample)
}

/// Host calls per repetition of `host_call/e2e`.
pub const HOST_CALLS: u64 = 64;

/// [`HOST_CALLS`] host calls, each waited for before the next: submit to signal, end to end.
/// With `after_barrier`, each follows a barrier on its queue, so it waits for the device first
/// (the device round trip); without, the queue has already reached it.
pub fn host_calls(rig: &Rig, after_barrier: bool) -> Result<Sample, EngineError> {
    let queue = &rig.e2e[0];
    let done = rig.device.create_semaphore(0)?;
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sample = timed(
        || {
            for value in 1..=HOST_CALLS {
                if after_barrier {
                    queue.barrier().submit()?;
                }
                let ran = ran.clone();
                let call = move || {
                    ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    Ok(())
                };
                queue.host_call(call).signal(done.at(value)).submit()?;
                done.wait(value, WAIT)?;
            }
            Ok(())
        },
        || Ok(()),
        true,
    )?;
    let calls = ran.load(std::sync::atomic::Ordering::Relaxed);
    if calls != HOST_CALLS {
        return Err(mismatch("host calls run", HOST_CALLS, calls));
    }
    Ok(sample)
}

/// The whole file into host-visible memory (`via_device_local` false) or device-local memory through the
/// bounce buffer, waited for.
pub fn read_file(rig: &Rig, memory: &MemoryRig, via_device_local: bool) -> Result<Sample, EngineError> {
    let queue = &rig.e2e[0];
    let done = rig.device.create_semaphore(0)?;
    let target = if via_device_local { &memory.device_local } else { &memory.visible };
    clear_probes(&memory.visible)?;
    let sample = timed(
        || queue.read_file(&memory.file, 0, target.whole()).signal(done.at(1)).submit(),
        || done.wait(1, WAIT),
        true,
    )?;
    if !via_device_local {
        check_file_bytes(&memory.visible)?;
    }
    Ok(sample)
}

/// The baseline: one thread's plain `pread` of the file into the same host-visible memory.
pub fn read_baseline(memory: &MemoryRig) -> Result<Sample, EngineError> {
    clear_probes(&memory.visible)?;
    let sample = timed(
        || {
            let length = memory.visible.size() as usize;
            // SAFETY: host-visible memory is addressable by the host at its device address, the
            // buffer is live and nothing else uses it while the shapes run one at a time.
            let bytes = unsafe { std::slice::from_raw_parts_mut(memory.visible.device_address() as *mut u8, length) };
            memory.file.read_exact_at(bytes, 0).map_err(|error| EngineError::File { reason: error.to_string() })
        },
        || Ok(()),
        true,
    )?;
    check_file_bytes(&memory.visible)?;
    Ok(sample)
}

/// Where [`check_file_bytes`] looks.
fn probes(buffer: &Buffer) -> [u64; 3] {
    [0, 12345, buffer.size() - 1]
}

/// Sets the probed bytes to a value the file never holds (its bytes are 0..=250).
fn clear_probes(buffer: &Buffer) -> Result<(), EngineError> {
    probes(buffer).into_iter().try_for_each(|offset| buffer.write(offset, &[0xFF]))
}

fn check_file_bytes(buffer: &Buffer) -> Result<(), EngineError> {
    let mut probe = [0u8; 1];
    for offset in probes(buffer) {
        buffer.read(offset, &mut probe)?;
        if probe[0] != (offset % 251) as u8 {
            return Err(mismatch("file byte", offset % 251, probe[0]));
        }
    }
    Ok(())
}
