//! The drop-in's entry points beyond the engine's table (`sys::with_hsa_entry_points!`): what
//! ROCr 5.2.3 exports that the engine never calls. [`crate::with_drop_in_entry_points`] lists
//! them; `exports` guards each and the drop-in (`soft-hsa/`) exports it. The memory-order
//! variants are in [`crate::orders`]; the rest, each with ROCr's semantics for an agent like the
//! soft one (`hsa.cpp` of rocm-5.2.3, cited per function), are here.

// Each keeps the C function's contract of `hsa.h`, as every entry point does (`entry.rs`).
#![allow(clippy::missing_safety_doc)]
// The C signatures of `hsa_ext_amd.h` fix the argument counts.
#![allow(clippy::too_many_arguments)]

use core::ffi::{c_char, c_void};

pub use super::agent_details::*;
pub use super::copies::*;
pub use super::executable_api::*;
pub use super::extensions::*;
pub use super::host_memory::*;
pub use super::host_queue::*;
pub use super::ipc::*;
pub use super::orders::*;
pub use super::regions::*;
use aqueduct_hsa::sys::*;

/// `hsa_memory_free`: `hsa_amd_memory_pool_free` is this very function in ROCr (`hsa.cpp`).
pub unsafe fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { super::entry::hsa_amd_memory_pool_free(ptr) }
}

/// `hsa_memory_copy`: a blocking copy of `size` bytes; null pointers are INVALID_ARGUMENT and
/// an empty copy succeeds (`hsa.cpp`). The soft agent's memory is the host's, so it is a
/// `memcpy` (ROCr copies with its blit kernel or the host, the same bytes), after a locked
/// range's agent addresses become its host ones.
pub unsafe fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if dst.is_null() || src.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let (dst, src) = match runtime.allocations.host_addresses(dst as usize, src as usize, size) {
        Ok(addresses) => addresses,
        Err(status) => return status,
    };
    if size > 0 {
        // SAFETY: the caller passes `size` readable bytes at `src` and writable ones at `dst`
        // (`hsa.h`), host memory after translation; `copy` allows the ranges to overlap, which
        // `hsa.h` leaves undefined.
        unsafe { core::ptr::copy(src as *const u8, dst as *mut u8, size) };
    }
    status::SUCCESS
}

/// `hsa_memory_assign_agent`: checks its arguments and changes nothing (`hsa.cpp`: a null
/// pointer or an access outside RO (1) to RW (3) is INVALID_ARGUMENT, an unknown agent
/// INVALID_AGENT, else SUCCESS).
pub unsafe fn hsa_memory_assign_agent(ptr: *mut c_void, agent: hsa_agent_t, access: u32) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() || !(1..=3).contains(&access) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if runtime.agent(agent.handle).is_none() {
        return status::ERROR_INVALID_AGENT;
    }
    status::SUCCESS
}

/// `hsa_memory_register`: nothing to pin on the soft agent, whose memory is the host's; ROCr
/// checks only that a non-null range is not empty (`hsa.cpp`).
pub unsafe fn hsa_memory_register(address: *mut c_void, size: usize) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if size == 0 && !address.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    status::SUCCESS
}

/// `hsa_memory_deregister`: always success once initialized (`hsa.cpp`).
pub unsafe fn hsa_memory_deregister(_address: *mut c_void, _size: usize) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    status::SUCCESS
}

/// `hsa_amd_signal_value_pointer`: where the signal's value lives, for clients that poll it
/// directly (`amd_signal_t.value`, byte 8 of the signal: the handle is its address).
pub unsafe fn hsa_amd_signal_value_pointer(
    signal: hsa_signal_t,
    value_ptr: *mut *mut hsa_signal_value_t,
) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if value_ptr.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(slot) = super::signals::slot(signal.handle) else { return status::ERROR_INVALID_SIGNAL };
    // SAFETY: `value_ptr` is non-null and points to a pointer to fill; the value is the slot's,
    // which lives for the process.
    unsafe { value_ptr.write(slot.value().as_ptr()) };
    status::SUCCESS
}

/// `hsa_executable_get_symbol` (deprecated): the agent's symbol of that name; the module name
/// and call convention do not select among a code object's kernels (`hsa.cpp` forwards to the
/// executable's lookup by name and agent).
pub unsafe fn hsa_executable_get_symbol(
    executable: hsa_executable_t,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: hsa_agent_t,
    _call_convention: i32,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    // SAFETY: forwarded; the agent is passed by pointer to a local that outlives the call.
    unsafe { super::entry::hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol) }
}

/// `hsa_amd_memory_fill`: writes `value` to `count` u32s at `ptr`, which must be 4-byte aligned
/// (`hsa.cpp`: a null pointer or a misaligned one is INVALID_ARGUMENT; nothing to fill is
/// success). ROCr fills with its blit kernel before it returns; the soft agent's memory is the
/// host's, so the fill is done when this returns too, through a locked range's host memory
/// where `ptr` is its agent address.
pub unsafe fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() || !(ptr as usize).is_multiple_of(4) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(bytes) = count.checked_mul(4) else { return status::ERROR_INVALID_ARGUMENT };
    let ptr = match runtime.allocations.host_address(ptr as usize, bytes) {
        Ok(host) => host as *mut u32,
        Err(status) => return status,
    };
    // SAFETY: the caller passes `count` writable, aligned u32s at `ptr` (`hsa_ext_amd.h`), host
    // memory after translation (which keeps the page offset, so the alignment).
    unsafe { core::slice::from_raw_parts_mut(ptr, count) }.fill(value);
    status::SUCCESS
}

/// `hsa_amd_profiling_async_copy_enable`: from now on, async copies record their start and end
/// in their completion signal (ROCr turns on its blit queues' profiling, `GpuAgent::
/// ProfilingEnable`).
pub unsafe fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    runtime.copy_profiling.store(enable, core::sync::atomic::Ordering::Release);
    status::SUCCESS
}

/// `hsa_amd_profiling_get_async_copy_time`: the copy's start and end in the system domain, as
/// ROCr converts them (`GpuAgent::TranslateTime`); 0 for a copy made while profiling was off.
pub unsafe fn hsa_amd_profiling_get_async_copy_time(
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_dispatch_time_t,
) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    let Some(slot) = super::signals::slot(signal.handle) else { return status::ERROR_INVALID_SIGNAL };
    if time.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let (start, end) = slot.timestamps();
    let convert = |tick: u64| if tick == 0 { 0 } else { super::clock::device_to_system(tick) };
    // SAFETY: non-null output pointer (`hsa_amd_profiling_async_copy_time_t` has the same two
    // u64 fields).
    unsafe { time.write(hsa_amd_profiling_dispatch_time_t { start: convert(start), end: convert(end) }) };
    status::SUCCESS
}

/// `hsa_amd_signal_async_handler`: runs `handler(value, arg)` on the runtime's handler thread once
/// the signal meets the condition (see `async_handlers.rs`). A dead signal is INVALID_SIGNAL, a
/// null handler or an unknown condition INVALID_ARGUMENT.
pub unsafe fn hsa_amd_signal_async_handler(
    signal: hsa_signal_t,
    condition: hsa_signal_condition_t,
    value: hsa_signal_value_t,
    handler: Option<super::async_handlers::SignalHandler>,
    arg: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(slot) = super::signals::slot(signal.handle) else { return status::ERROR_INVALID_SIGNAL };
    let (Some(handler), Some(condition)) = (handler, aqueduct_abi::SignalCondition::from_bits(condition)) else {
        return status::ERROR_INVALID_ARGUMENT;
    };
    match runtime.async_handlers.register(slot, condition, value, handler, arg as usize) {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// `hsa_amd_async_function`: runs `callback(arg)` once on the runtime's handler thread; a null
/// callback is INVALID_ARGUMENT (`IS_BAD_PTR`).
pub unsafe fn hsa_amd_async_function(
    callback: Option<unsafe extern "C" fn(*mut c_void)>,
    arg: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    match runtime.async_handlers.call(callback, arg as usize) {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// `hsa_queue_inactivate`: the queue processes nothing more (ROCr destroys its hardware queue
/// but keeps the queue object until `hsa_queue_destroy`); its memory and indices stay.
pub unsafe fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if queue.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    match runtime.queue(queue as usize) {
        Some(soft) => {
            soft.inactivate();
            status::SUCCESS
        }
        None => status::ERROR_INVALID_QUEUE,
    }
}

/// `hsa_signal_group_create`: a group of live signals (none twice) for `wait_any` (`hsa.cpp`: no
/// signals, or a missing pointer, is INVALID_ARGUMENT; a dead signal INVALID_SIGNAL). Consumers
/// are checked and otherwise unused: every soft agent can wait on every signal.
pub unsafe fn hsa_signal_group_create(
    num_signals: u32,
    signals: *const hsa_signal_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal_group: *mut hsa_signal_group_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if num_signals == 0 || signals.is_null() || signal_group.is_null() || (num_consumers > 0 && consumers.is_null()) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API passes `num_signals` signals and `num_consumers` agents.
    let (handles, agents) = unsafe {
        (
            core::slice::from_raw_parts(signals, num_signals as usize),
            if num_consumers == 0 { &[][..] } else { core::slice::from_raw_parts(consumers, num_consumers as usize) },
        )
    };
    if handles.iter().any(|signal| super::signals::slot(signal.handle).is_none()) {
        return status::ERROR_INVALID_SIGNAL;
    }
    if agents.iter().any(|agent| runtime.agent(agent.handle).is_none()) {
        return status::ERROR_INVALID_AGENT;
    }
    let mut groups = runtime.signal_groups.lock().unwrap_or_else(|poison| poison.into_inner());
    let members: Box<[u64]> = handles.iter().map(|signal| signal.handle).collect();
    let index = match groups.iter().position(Option::is_none) {
        Some(free) => {
            groups[free] = Some(members);
            free
        }
        None => {
            groups.push(Some(members));
            groups.len() - 1
        }
    };
    let handle = runtime.handle(super::runtime::Tag::SignalGroup, index as u64);
    // SAFETY: non-null pointer to the group to fill.
    unsafe { signal_group.write(hsa_signal_group_t { handle }) };
    status::SUCCESS
}

/// `hsa_signal_group_destroy`: an unknown group is INVALID_SIGNAL_GROUP.
pub unsafe fn hsa_signal_group_destroy(signal_group: hsa_signal_group_t) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(index) = runtime.index_of(super::runtime::Tag::SignalGroup, signal_group.handle) else {
        return status::ERROR_INVALID_SIGNAL_GROUP;
    };
    let mut groups = runtime.signal_groups.lock().unwrap_or_else(|poison| poison.into_inner());
    match groups.get_mut(index as usize).and_then(Option::take) {
        Some(_) => status::SUCCESS,
        None => status::ERROR_INVALID_SIGNAL_GROUP,
    }
}

/// `hsa_signal_group_wait_any_scacquire` and `_relaxed`: blocks until one member meets its
/// condition (the HSA API gives this wait no timeout); writes that signal and its value.
unsafe fn group_wait_any(
    signal_group: hsa_signal_group_t,
    conditions: *const hsa_signal_condition_t,
    compare_values: *const hsa_signal_value_t,
    wait_state_hint: hsa_wait_state_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if conditions.is_null() || compare_values.is_null() || signal.is_null() || value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(index) = runtime.index_of(super::runtime::Tag::SignalGroup, signal_group.handle) else {
        return status::ERROR_INVALID_SIGNAL_GROUP;
    };
    let members = {
        let groups = runtime.signal_groups.lock().unwrap_or_else(|poison| poison.into_inner());
        match groups.get(index as usize) {
            Some(Some(members)) => members.clone(),
            _ => return status::ERROR_INVALID_SIGNAL_GROUP,
        }
    };
    drop(runtime);
    let mut handles: Vec<hsa_signal_t> = members.iter().map(|&handle| hsa_signal_t { handle }).collect();
    let count = handles.len();
    // SAFETY: the API passes a condition and a compare value per member.
    let (mut conditions, mut compare_values) = unsafe {
        (
            core::slice::from_raw_parts(conditions, count).to_vec(),
            core::slice::from_raw_parts(compare_values, count).to_vec(),
        )
    };
    let mut satisfied = 0;
    // SAFETY: the arrays hold `count` entries each; the wait reads them only.
    let found = unsafe {
        super::entry::hsa_amd_signal_wait_any(
            count as u32,
            handles.as_mut_ptr(),
            conditions.as_mut_ptr(),
            compare_values.as_mut_ptr(),
            u64::MAX,
            wait_state_hint,
            &mut satisfied,
        )
    };
    let Some(&member) = handles.get(found as usize) else { return status::ERROR_INVALID_SIGNAL };
    // SAFETY: non-null pointers to fill.
    unsafe {
        signal.write(member);
        value.write(satisfied);
    }
    status::SUCCESS
}

pub unsafe fn hsa_signal_group_wait_any_scacquire(
    signal_group: hsa_signal_group_t,
    conditions: *const hsa_signal_condition_t,
    compare_values: *const hsa_signal_value_t,
    wait_state_hint: hsa_wait_state_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { group_wait_any(signal_group, conditions, compare_values, wait_state_hint, signal, value) }
}

pub unsafe fn hsa_signal_group_wait_any_relaxed(
    signal_group: hsa_signal_group_t,
    conditions: *const hsa_signal_condition_t,
    compare_values: *const hsa_signal_value_t,
    wait_state_hint: hsa_wait_state_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { group_wait_any(signal_group, conditions, compare_values, wait_state_hint, signal, value) }
}

/// `hsa_amd_register_deallocation_callback`: `callback(ptr, user_data)` runs when the allocation
/// `ptr` lies in is freed, before its memory goes (ROCr's `RegisterReleaseNotifier`: a pointer in
/// no allocation is INVALID_ALLOCATION; a null callback is INVALID_ARGUMENT, `hsa_ext_amd.cpp`'s
/// argument check).
pub unsafe fn hsa_amd_register_deallocation_callback(
    ptr: *mut c_void,
    callback: hsa_amd_deallocation_callback_t,
    user_data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    match runtime.allocations.register_callback(ptr as usize, callback, user_data as usize) {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// `hsa_amd_deregister_deallocation_callback`: removes the registrations of `callback` with
/// exactly `ptr`; none is INVALID_ARGUMENT (ROCr's `DeregisterReleaseNotifier`).
pub unsafe fn hsa_amd_deregister_deallocation_callback(
    ptr: *mut c_void,
    callback: hsa_amd_deallocation_callback_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    match runtime.allocations.deregister_callback(ptr as usize, callback) {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// `hsa_amd_pointer_info`: what allocation `ptr` lies in, as much of `hsa_amd_pointer_info_t` as
/// the caller's `size` says it holds (`hsa_ext_amd.h`: members past the returned size are not
/// written); a pointer in no allocation is type UNKNOWN. With `alloc`, `num_agents_accessible`
/// and `accessible`, the agents that may access it, in an array from `alloc`.
pub unsafe fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut hsa_amd_pointer_info_t,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut hsa_agent_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() || info.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: `info` is non-null; the caller sets `size` to what its structure holds.
    let caller_size = unsafe { (*info).size } as usize;
    let full = size_of::<hsa_amd_pointer_info_t>();
    let mut report = hsa_amd_pointer_info_t {
        size: caller_size.min(full) as u32,
        type_: 0,
        agent_base_address: core::ptr::null_mut(),
        host_base_address: core::ptr::null_mut(),
        size_in_bytes: 0,
        user_data: core::ptr::null_mut(),
        agent_owner: hsa_agent_t::default(),
        global_flags: 0,
    };
    let found = runtime.allocations.info(ptr as usize);
    let mut agents = Vec::new();
    let mapped = if found.is_none() { runtime.allocations.mapped_at(ptr as usize) } else { None };
    if let Some(range) = &mapped {
        let pool = &runtime.pools[range.pool_index];
        // HSA_EXT_POINTER_TYPE_LOCKED or _IPC.
        report.type_ = if range.kind == super::memory::MappingKind::Locked { 2 } else { 4 };
        report.agent_base_address = range.agent_base as *mut c_void;
        report.host_base_address = range.host_base as *mut c_void;
        report.size_in_bytes = range.size;
        report.agent_owner =
            hsa_agent_t { handle: runtime.handle(super::runtime::Tag::Agent, pool.agent_index as u64) };
        report.global_flags = pool.global_flags();
        agents = agents_in(&runtime, range.agents);
    }
    if let Some(allocation) = &found {
        let pool = &runtime.pools[allocation.pool_index];
        let host_reads = allocation.agents & super::memory::owner_bit(0) != 0;
        report.type_ = 1; // HSA_EXT_POINTER_TYPE_HSA
        report.agent_base_address = allocation.base as *mut c_void;
        report.host_base_address = if host_reads { allocation.base as *mut c_void } else { core::ptr::null_mut() };
        report.size_in_bytes = allocation.size;
        report.user_data = allocation.user_data as *mut c_void;
        report.agent_owner =
            hsa_agent_t { handle: runtime.handle(super::runtime::Tag::Agent, pool.agent_index as u64) };
        report.global_flags = pool.global_flags();
        agents = agents_in(&runtime, allocation.agents);
    }
    // SAFETY: the caller's structure holds `caller_size` bytes; at most that many are written.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&report as *const hsa_amd_pointer_info_t).cast::<u8>(),
            info.cast::<u8>(),
            caller_size.min(full),
        )
    };
    // The list only with all three of `alloc`, the count and the array pointer, as ROCr's
    // `Runtime::PtrInfo` returns it (`returnListData`): memory allocated for a caller with nowhere
    // to receive it would leak.
    if let (Some(alloc), false, false) = (alloc, num_agents_accessible.is_null(), accessible.is_null()) {
        let bytes = agents.len() * size_of::<hsa_agent_t>();
        // SAFETY: the client's allocator; it returns `bytes` writable bytes or null.
        let array = unsafe { alloc(bytes.max(1)) }.cast::<hsa_agent_t>();
        if array.is_null() {
            return status::ERROR_OUT_OF_RESOURCES;
        }
        // SAFETY: `array` holds `agents.len()` agents; the count and array pointers are the
        // caller's to fill, both non-null.
        unsafe {
            core::ptr::copy_nonoverlapping(agents.as_ptr(), array, agents.len());
            num_agents_accessible.write(agents.len() as u32);
            accessible.write(array);
        }
    }
    status::SUCCESS
}

/// The agents whose bits `mask` sets.
fn agents_in(runtime: &super::runtime::Runtime, mask: u64) -> Vec<hsa_agent_t> {
    (0..runtime.agents.len())
        .filter(|&index| mask & super::memory::owner_bit(index) != 0)
        .map(|index| hsa_agent_t { handle: runtime.handle(super::runtime::Tag::Agent, index as u64) })
        .collect()
}

/// `hsa_amd_pointer_info_set_userdata`: `ptr` must start an allocation the runtime made.
pub unsafe fn hsa_amd_pointer_info_set_userdata(ptr: *const c_void, userdata: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    match runtime.allocations.set_user_data(ptr as usize, userdata as usize) {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// The drop-in's entry points beyond the engine's table (`sys::with_hsa_entry_points!`), in the
/// same form: `exports` guards each, and the drop-in exports it.
#[macro_export]
macro_rules! with_drop_in_entry_points {
    ($callback:ident) => {
        $callback! {
            fn hsa_signal_add_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_and_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_or_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_xor_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_exchange_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_exchange_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_relaxed(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_scacquire(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_acquire(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_screlease(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_release(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_scacq_screl(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_cas_acq_rel(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
            fn hsa_signal_load_acquire(signal: hsa_signal_t) -> hsa_signal_value_t;
            fn hsa_signal_store_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_silent_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_silent_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_wait_relaxed(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t;
            fn hsa_signal_wait_acquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t;
            fn hsa_queue_load_read_index_relaxed(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_load_read_index_acquire(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_load_write_index_scacquire(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_load_write_index_acquire(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_store_read_index_relaxed(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_store_read_index_screlease(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_store_read_index_release(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_store_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_store_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_store_write_index_release(queue: *const hsa_queue_t, value: u64) -> ();
            fn hsa_queue_add_write_index_scacquire(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_add_write_index_acquire(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_add_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_add_write_index_release(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_add_write_index_scacq_screl(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_add_write_index_acq_rel(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_cas_write_index_relaxed(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_queue_cas_write_index_scacquire(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_queue_cas_write_index_acquire(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_queue_cas_write_index_screlease(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_queue_cas_write_index_release(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_queue_cas_write_index_acq_rel(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t;
            fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t;
            fn hsa_memory_assign_agent(ptr: *mut c_void, agent: hsa_agent_t, access: u32) -> hsa_status_t;
            fn hsa_memory_register(address: *mut c_void, size: usize) -> hsa_status_t;
            fn hsa_memory_deregister(address: *mut c_void, size: usize) -> hsa_status_t;
            fn hsa_amd_signal_value_pointer(signal: hsa_signal_t, value_ptr: *mut *mut hsa_signal_value_t) -> hsa_status_t;
            fn hsa_executable_get_symbol(executable: hsa_executable_t, module_name: *const c_char, symbol_name: *const c_char, agent: hsa_agent_t, call_convention: i32, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t;
            fn hsa_code_object_reader_create_from_file(file: c_int, code_object_reader: *mut hsa_code_object_reader_t) -> hsa_status_t;
            fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t;
            fn hsa_amd_memory_async_copy(dst: *mut c_void, dst_agent: hsa_agent_t, src: *const c_void, src_agent: hsa_agent_t, size: usize, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
            fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t;
            fn hsa_signal_group_create(num_signals: u32, signals: *const hsa_signal_t, num_consumers: u32, consumers: *const hsa_agent_t, signal_group: *mut hsa_signal_group_t) -> hsa_status_t;
            fn hsa_signal_group_destroy(signal_group: hsa_signal_group_t) -> hsa_status_t;
            fn hsa_amd_register_deallocation_callback(ptr: *mut c_void, callback: hsa_amd_deallocation_callback_t, user_data: *mut c_void) -> hsa_status_t;
            fn hsa_amd_deregister_deallocation_callback(ptr: *mut c_void, callback: hsa_amd_deallocation_callback_t) -> hsa_status_t;
            fn hsa_amd_pointer_info(ptr: *const c_void, info: *mut hsa_amd_pointer_info_t, alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>, num_agents_accessible: *mut u32, accessible: *mut *mut hsa_agent_t) -> hsa_status_t;
            fn hsa_amd_pointer_info_set_userdata(ptr: *const c_void, userdata: *mut c_void) -> hsa_status_t;
            fn hsa_extension_get_name(extension: u16, name: *mut *const c_char) -> hsa_status_t;
            fn hsa_system_extension_supported(extension: u16, major: u16, minor: u16, result: *mut bool) -> hsa_status_t;
            fn hsa_system_major_extension_supported(extension: u16, major: u16, minor: *mut u16, result: *mut bool) -> hsa_status_t;
            fn hsa_agent_extension_supported(extension: u16, agent: hsa_agent_t, major: u16, minor: u16, result: *mut bool) -> hsa_status_t;
            fn hsa_agent_major_extension_supported(extension: u16, agent: hsa_agent_t, major: u16, minor: *mut u16, result: *mut bool) -> hsa_status_t;
            fn hsa_system_get_extension_table(extension: u16, major: u16, minor: u16, table: *mut c_void) -> hsa_status_t;
            fn hsa_system_get_major_extension_table(extension: u16, major: u16, table_length: usize, table: *mut c_void) -> hsa_status_t;
            fn hsa_signal_group_wait_any_scacquire(signal_group: hsa_signal_group_t, conditions: *const hsa_signal_condition_t, compare_values: *const hsa_signal_value_t, wait_state_hint: hsa_wait_state_t, signal: *mut hsa_signal_t, value: *mut hsa_signal_value_t) -> hsa_status_t;
            fn hsa_ext_image_get_capability(agent: hsa_agent_t, geometry: u32, image_format: *const c_void, capability_mask: *mut u32) -> hsa_status_t;
            fn hsa_ext_image_get_capability_with_layout(agent: hsa_agent_t, geometry: u32, image_format: *const c_void, image_data_layout: u32, capability_mask: *mut u32) -> hsa_status_t;
            fn hsa_ext_image_data_get_info(agent: hsa_agent_t, image_descriptor: *const c_void, access_permission: u32, image_data_info: *mut c_void) -> hsa_status_t;
            fn hsa_ext_image_data_get_info_with_layout(agent: hsa_agent_t, image_descriptor: *const c_void, access_permission: u32, image_data_layout: u32, image_data_row_pitch: usize, image_data_slice_pitch: usize, image_data_info: *mut c_void) -> hsa_status_t;
            fn hsa_ext_image_create(agent: hsa_agent_t, image_descriptor: *const c_void, image_data: *const c_void, access_permission: u32, image: *mut hsa_ext_image_t) -> hsa_status_t;
            fn hsa_ext_image_create_with_layout(agent: hsa_agent_t, image_descriptor: *const c_void, image_data: *const c_void, access_permission: u32, image_data_layout: u32, image_data_row_pitch: usize, image_data_slice_pitch: usize, image: *mut hsa_ext_image_t) -> hsa_status_t;
            fn hsa_ext_image_destroy(agent: hsa_agent_t, image: hsa_ext_image_t) -> hsa_status_t;
            fn hsa_ext_image_copy(agent: hsa_agent_t, src_image: hsa_ext_image_t, src_offset: *const c_void, dst_image: hsa_ext_image_t, dst_offset: *const c_void, range: *const c_void) -> hsa_status_t;
            fn hsa_ext_image_import(agent: hsa_agent_t, src_memory: *const c_void, src_row_pitch: usize, src_slice_pitch: usize, dst_image: hsa_ext_image_t, image_region: *const c_void) -> hsa_status_t;
            fn hsa_ext_image_export(agent: hsa_agent_t, src_image: hsa_ext_image_t, dst_memory: *mut c_void, dst_row_pitch: usize, dst_slice_pitch: usize, image_region: *const c_void) -> hsa_status_t;
            fn hsa_ext_image_clear(agent: hsa_agent_t, image: hsa_ext_image_t, data: *const c_void, image_region: *const c_void) -> hsa_status_t;
            fn hsa_ext_sampler_create(agent: hsa_agent_t, sampler_descriptor: *const c_void, sampler: *mut hsa_ext_sampler_t) -> hsa_status_t;
            fn hsa_ext_sampler_destroy(agent: hsa_agent_t, sampler: hsa_ext_sampler_t) -> hsa_status_t;
            fn hsa_amd_image_get_info_max_dim(agent: hsa_agent_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_amd_image_create(agent: hsa_agent_t, image_descriptor: *const c_void, image_layout: *const c_void, image_data: *const c_void, access_permission: u32, image: *mut hsa_ext_image_t) -> hsa_status_t;
            fn hsa_ext_program_create(machine_model: u32, profile: u32, default_float_rounding_mode: u32, options: *const c_char, program: *mut hsa_ext_program_t) -> hsa_status_t;
            fn hsa_ext_program_destroy(program: hsa_ext_program_t) -> hsa_status_t;
            fn hsa_ext_program_add_module(program: hsa_ext_program_t, module: *mut c_void) -> hsa_status_t;
            fn hsa_ext_program_iterate_modules(program: hsa_ext_program_t, callback: *const c_void, data: *mut c_void) -> hsa_status_t;
            fn hsa_ext_program_get_info(program: hsa_ext_program_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_ext_program_finalize(program: hsa_ext_program_t, isa: hsa_isa_t, call_convention: i32, control_directives: hsa_ext_control_directives_t, options: *const c_char, code_object_type: u32, code_object: *mut hsa_code_object_t) -> hsa_status_t;
            fn hsa_amd_memory_lock(host_ptr: *mut c_void, size: usize, agents: *mut hsa_agent_t, num_agent: i32, agent_ptr: *mut *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_lock_to_pool(host_ptr: *mut c_void, size: usize, agents: *mut hsa_agent_t, num_agent: i32, pool: hsa_amd_memory_pool_t, flags: u32, agent_ptr: *mut *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t;
            fn hsa_amd_coherency_get_type(agent: hsa_agent_t, kind: *mut u32) -> hsa_status_t;
            fn hsa_amd_coherency_set_type(agent: hsa_agent_t, kind: u32) -> hsa_status_t;
            fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t;
            fn hsa_amd_profiling_get_async_copy_time(signal: hsa_signal_t, time: *mut hsa_amd_profiling_dispatch_time_t) -> hsa_status_t;
            fn hsa_amd_signal_async_handler(signal: hsa_signal_t, condition: hsa_signal_condition_t, value: hsa_signal_value_t, handler: Option<unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool>, arg: *mut c_void) -> hsa_status_t;
            fn hsa_agent_get_exception_policies(agent: hsa_agent_t, profile: hsa_profile_t, mask: *mut u16) -> hsa_status_t;
            fn hsa_isa_get_exception_policies(isa: hsa_isa_t, profile: hsa_profile_t, mask: *mut u16) -> hsa_status_t;
            fn hsa_agent_iterate_caches(agent: hsa_agent_t, callback: Option<unsafe extern "C" fn(hsa_cache_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_cache_get_info(cache: hsa_cache_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_isa_from_name(name: *const c_char, isa: *mut hsa_isa_t) -> hsa_status_t;
            fn hsa_isa_compatible(code_object_isa: hsa_isa_t, agent_isa: hsa_isa_t, result: *mut bool) -> hsa_status_t;
            fn hsa_isa_get_info(isa: hsa_isa_t, attribute: u32, index: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_isa_get_round_method(isa: hsa_isa_t, fp_type: u32, flush_mode: u32, round_method: *mut u32) -> hsa_status_t;
            fn hsa_isa_iterate_wavefronts(isa: hsa_isa_t, callback: Option<unsafe extern "C" fn(hsa_wavefront_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_wavefront_get_info(wavefront: hsa_wavefront_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_agent_iterate_regions(agent: hsa_agent_t, callback: Option<unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_region_get_info(region: hsa_region_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_memory_allocate(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_async_copy_rect(dst: *const hsa_pitched_ptr_t, dst_offset: *const hsa_dim3_t, src: *const hsa_pitched_ptr_t, src_offset: *const hsa_dim3_t, range: *const hsa_dim3_t, copy_agent: hsa_agent_t, dir: u32, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
            fn hsa_amd_async_function(callback: Option<unsafe extern "C" fn(*mut c_void)>, arg: *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_pool_can_migrate(src_memory_pool: hsa_amd_memory_pool_t, dst_memory_pool: hsa_amd_memory_pool_t, result: *mut bool) -> hsa_status_t;
            fn hsa_amd_memory_migrate(ptr: *const c_void, memory_pool: hsa_amd_memory_pool_t, flags: u32) -> hsa_status_t;
            fn hsa_amd_interop_map_buffer(num_agents: u32, agents: *mut hsa_agent_t, interop_handle: c_int, flags: u32, size: *mut usize, ptr: *mut *mut c_void, metadata_size: *mut usize, metadata: *mut *const c_void) -> hsa_status_t;
            fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> hsa_status_t;
            fn hsa_amd_svm_attributes_set(ptr: *mut c_void, size: usize, attribute_list: *mut c_void, attribute_count: usize) -> hsa_status_t;
            fn hsa_amd_svm_attributes_get(ptr: *mut c_void, size: usize, attribute_list: *mut c_void, attribute_count: usize) -> hsa_status_t;
            fn hsa_amd_svm_prefetch_async(ptr: *mut c_void, size: usize, agent: hsa_agent_t, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
            fn hsa_executable_create(profile: hsa_profile_t, executable_state: u32, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t;
            fn hsa_executable_get_info(executable: hsa_executable_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_executable_validate(executable: hsa_executable_t, result: *mut u32) -> hsa_status_t;
            fn hsa_executable_validate_alt(executable: hsa_executable_t, options: *const c_char, result: *mut u32) -> hsa_status_t;
            fn hsa_executable_iterate_symbols(executable: hsa_executable_t, callback: Option<unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_executable_iterate_program_symbols(executable: hsa_executable_t, callback: Option<unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_executable_iterate_agent_symbols(executable: hsa_executable_t, agent: hsa_agent_t, callback: Option<unsafe extern "C" fn(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_executable_global_variable_define(executable: hsa_executable_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
            fn hsa_executable_agent_global_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
            fn hsa_executable_readonly_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
            fn hsa_executable_load_program_code_object(executable: hsa_executable_t, code_object_reader: hsa_code_object_reader_t, options: *const c_char, loaded_code_object: *mut hsa_loaded_code_object_t) -> hsa_status_t;
            fn hsa_executable_load_code_object(executable: hsa_executable_t, agent: hsa_agent_t, code_object: hsa_code_object_t, options: *const c_char) -> hsa_status_t;
            fn hsa_code_object_deserialize(serialized_code_object: *mut c_void, serialized_code_object_size: usize, options: *const c_char, code_object: *mut hsa_code_object_t) -> hsa_status_t;
            fn hsa_code_object_serialize(code_object: hsa_code_object_t, alloc_callback: Option<unsafe extern "C" fn(usize, hsa_callback_data_t, *mut *mut c_void) -> hsa_status_t>, callback_data: hsa_callback_data_t, options: *const c_char, serialized_code_object: *mut *mut c_void, serialized_code_object_size: *mut usize) -> hsa_status_t;
            fn hsa_code_object_destroy(code_object: hsa_code_object_t) -> hsa_status_t;
            fn hsa_code_object_get_info(code_object: hsa_code_object_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_code_object_get_symbol(code_object: hsa_code_object_t, symbol_name: *const c_char, symbol: *mut hsa_code_symbol_t) -> hsa_status_t;
            fn hsa_code_object_get_symbol_from_name(code_object: hsa_code_object_t, module_name: *const c_char, symbol_name: *const c_char, symbol: *mut hsa_code_symbol_t) -> hsa_status_t;
            fn hsa_code_object_iterate_symbols(code_object: hsa_code_object_t, callback: Option<unsafe extern "C" fn(hsa_code_object_t, hsa_code_symbol_t, *mut c_void) -> hsa_status_t>, data: *mut c_void) -> hsa_status_t;
            fn hsa_code_symbol_get_info(code_symbol: hsa_code_symbol_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
            fn hsa_soft_queue_create(region: hsa_region_t, size: u32, queue_type: u32, features: u32, doorbell_signal: hsa_signal_t, queue: *mut *mut hsa_queue_t) -> hsa_status_t;
            fn hsa_amd_ipc_memory_create(ptr: *mut c_void, len: usize, handle: *mut hsa_amd_ipc_memory_t) -> hsa_status_t;
            fn hsa_amd_ipc_memory_attach(handle: *const hsa_amd_ipc_memory_t, len: usize, num_agents: u32, mapping_agents: *const hsa_agent_t, mapped_ptr: *mut *mut c_void) -> hsa_status_t;
            fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> hsa_status_t;
            fn hsa_amd_ipc_signal_create(signal: hsa_signal_t, handle: *mut hsa_amd_ipc_memory_t) -> hsa_status_t;
            fn hsa_amd_ipc_signal_attach(handle: *const hsa_amd_ipc_memory_t, signal: *mut hsa_signal_t) -> hsa_status_t;
            fn hsa_signal_group_wait_any_relaxed(signal_group: hsa_signal_group_t, conditions: *const hsa_signal_condition_t, compare_values: *const hsa_signal_value_t, wait_state_hint: hsa_wait_state_t, signal: *mut hsa_signal_t, value: *mut hsa_signal_value_t) -> hsa_status_t;
        }
    };
}

macro_rules! drop_in_symbols {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        /// The names of the drop-in's own entry points ([`crate::with_drop_in_entry_points`]).
        pub const DROP_IN_SYMBOLS: &[&str] = &[$(stringify!($name)),*];
    };
}

crate::with_drop_in_entry_points!(drop_in_symbols);
