//! The drop-in's asynchronous copies (`hsa_amd_memory_async_copy` and `_rect`): each starts once
//! every dependency signal is 0, runs on a thread of its own (ROCr's blit queue or SDMA engine),
//! records its interval when copy profiling is on, and then decrements its completion signal.
//! Every argument is checked before anything starts.

// Each keeps the C function's contract of `hsa_ext_amd.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

use core::ffi::c_void;
use std::sync::atomic::Ordering;

use super::runtime::Runtime;
use super::signals::{self, SignalSlot};
use aqueduct_hsa::sys::*;

/// The dependency and completion signals of a copy, checked: a dependency list that does not
/// match its count is INVALID_ARGUMENT, a dead signal INVALID_SIGNAL.
unsafe fn copy_signals(
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> Result<(Vec<&'static SignalSlot>, &'static SignalSlot), hsa_status_t> {
    if num_dep_signals > 0 && dep_signals.is_null() {
        return Err(status::ERROR_INVALID_ARGUMENT);
    }
    let deps = if num_dep_signals == 0 {
        Vec::new()
    } else {
        // SAFETY: the API passes `num_dep_signals` signals at `dep_signals` (non-null here).
        let handles = unsafe { core::slice::from_raw_parts(dep_signals, num_dep_signals as usize) };
        handles
            .iter()
            .map(|signal| signals::slot(signal.handle))
            .collect::<Option<Vec<_>>>()
            .ok_or(status::ERROR_INVALID_SIGNAL)?
    };
    let completion = signals::slot(completion_signal.handle).ok_or(status::ERROR_INVALID_SIGNAL)?;
    Ok((deps, completion))
}

/// Runs `copy` on a thread of its own once every dependency is 0 (or dead), then decrements the
/// completion signal.
fn spawn_copy(
    runtime: &Runtime,
    deps: Vec<&'static SignalSlot>,
    completion: &'static SignalSlot,
    copy: impl FnOnce() + Send + 'static,
) -> hsa_status_t {
    let profiled = runtime.copy_profiling.load(Ordering::Acquire);
    let run = move || {
        for dep in &deps {
            // Waits as the copy engine does: until the value reaches 0 (or the signal dies).
            while dep.value().load(Ordering::Acquire) != 0 && dep.is_live() {
                signals::wait_until(
                    core::slice::from_ref(dep),
                    None,
                    |_, value| value == 0,
                    std::time::Instant::now().checked_add(std::time::Duration::from_millis(2)),
                    signals::SPIN_BEFORE_PARK,
                    &|| false,
                );
            }
        }
        let start = super::clock::device_ticks();
        copy();
        if profiled {
            completion.write_timestamps(start, super::clock::device_ticks());
        }
        completion.update(|value| {
            value.fetch_sub(1, Ordering::AcqRel);
        });
    };
    match std::thread::Builder::new().name("soft-async-copy".into()).spawn(run) {
        Ok(_) => status::SUCCESS,
        Err(_) => status::ERROR_OUT_OF_RESOURCES,
    }
}

/// `hsa_amd_memory_async_copy`: `size` bytes. Null pointers, an unknown agent or a dead signal
/// are refused before anything starts.
pub unsafe fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if dst.is_null() || src.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if runtime.agent(dst_agent.handle).is_none() || runtime.agent(src_agent.handle).is_none() {
        return status::ERROR_INVALID_AGENT;
    }
    // SAFETY: forwarded.
    let (deps, completion) = match unsafe { copy_signals(num_dep_signals, dep_signals, completion_signal) } {
        Ok(signals) => signals,
        Err(status) => return status,
    };
    let (dst, src) = match runtime.allocations.host_addresses(dst as usize, src as usize, size) {
        Ok(addresses) => addresses,
        Err(status) => return status,
    };
    spawn_copy(&runtime, deps, completion, move || {
        if size > 0 {
            // SAFETY: the caller keeps `size` bytes readable at `src` and writable at `dst` until
            // the completion signal says the copy is done (`hsa_ext_amd.h`); both are host
            // addresses (a locked range's agent addresses were translated above).
            unsafe { core::ptr::copy(src as *const u8, dst as *mut u8, size) };
        }
    })
}

/// `hsa_amd_memory_async_copy_rect`: `range` (x in bytes, y rows, z slices) from `src` at
/// `src_offset` to `dst` at `dst_offset`. `hsa_ext_amd.h`'s rules are checked first: every
/// pointer present, every base, pitch, slice, x offset and x extent 4-byte aligned, a direction
/// of the enum, a GPU copy agent (CPU agents are not supported), and rows that fit their pitch
/// and rows of slices that fit their slice pitch.
pub unsafe fn hsa_amd_memory_async_copy_rect(
    dst: *const hsa_pitched_ptr_t,
    dst_offset: *const hsa_dim3_t,
    src: *const hsa_pitched_ptr_t,
    src_offset: *const hsa_dim3_t,
    range: *const hsa_dim3_t,
    copy_agent: hsa_agent_t,
    dir: u32,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if dst.is_null() || dst_offset.is_null() || src.is_null() || src_offset.is_null() || range.is_null() || dir > 3 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: all five are non-null and point to the caller's structures.
    let (dst, dst_offset, src, src_offset, range) = unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
    let aligned = |value: usize| value.is_multiple_of(4);
    let fits = |pointer: &hsa_pitched_ptr_t, offset: &hsa_dim3_t| {
        let row_end = offset.x as u64 + range.x as u64;
        let rows_end = (offset.y as u64 + range.y as u64) * pointer.pitch as u64;
        !pointer.base.is_null()
            && aligned(pointer.base as usize)
            && aligned(pointer.pitch)
            && aligned(pointer.slice)
            && aligned(offset.x as usize)
            && row_end <= pointer.pitch as u64
            && (range.z <= 1 && offset.z == 0 || rows_end <= pointer.slice as u64)
    };
    if !aligned(range.x as usize) || !fits(&dst, &dst_offset) || !fits(&src, &src_offset) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    match runtime.agent(copy_agent.handle) {
        Some((_, agent)) if agent.gpu().is_some() => {}
        _ => return status::ERROR_INVALID_AGENT,
    }
    // SAFETY: forwarded.
    let (deps, completion) = match unsafe { copy_signals(num_dep_signals, dep_signals, completion_signal) } {
        Ok(signals) => signals,
        Err(status) => return status,
    };
    let address = |pointer: &hsa_pitched_ptr_t, offset: &hsa_dim3_t, y: u32, z: u32| {
        pointer.base as usize
            + (offset.z + z) as usize * pointer.slice
            + (offset.y + y) as usize * pointer.pitch
            + offset.x as usize
    };
    let width = range.x as usize;
    // (destination, source) of each row, as host addresses.
    let rows: Result<Vec<(usize, usize)>, hsa_status_t> = (0..range.z.max(1))
        .flat_map(|z| (0..range.y.max(1)).map(move |y| (z, y)))
        .map(|(z, y)| {
            let (to, from) = (address(&dst, &dst_offset, y, z), address(&src, &src_offset, y, z));
            runtime.allocations.host_addresses(to, from, width)
        })
        .collect();
    let rows = match rows {
        Ok(rows) => rows,
        Err(status) => return status,
    };
    spawn_copy(&runtime, deps, completion, move || {
        for (to, from) in rows {
            // SAFETY: the caller keeps both regions mapped until completion (`hsa_ext_amd.h`); each
            // row lies inside its pitch, checked above.
            unsafe { core::ptr::copy(from as *const u8, to as *mut u8, width) };
        }
    })
}
