//! The drop-in's agent and ISA queries beyond the engine's: caches, exception policies, ISA lookup
//! by name and compatibility, the deprecated `hsa_isa_get_info`, round methods and wavefronts,
//! each with ROCr 5.2.3's answers (`hsa.cpp`, `isa.cpp`).

// Each keeps the C function's contract of `hsa.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};

use super::runtime::{Runtime, Tag};
use aqueduct_hsa::sys::*;

/// `hsa_profile_t`: BASE 0 or FULL 1; anything else is INVALID_ARGUMENT (`IS_BAD_PROFILE`).
fn valid_profile(profile: hsa_profile_t) -> bool {
    profile <= enums::PROFILE_FULL
}

/// `hsa_agent_get_exception_policies`: no policy is supported, mask 0 (`hsa.cpp` writes 0 for
/// every agent) after checking the pointer, the profile and the agent, in that order.
pub unsafe fn hsa_agent_get_exception_policies(
    agent: hsa_agent_t,
    profile: hsa_profile_t,
    mask: *mut u16,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if mask.is_null() || !valid_profile(profile) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if runtime.agent(agent.handle).is_none() {
        return status::ERROR_INVALID_AGENT;
    }
    // SAFETY: non-null output pointer.
    unsafe { mask.write(0) };
    status::SUCCESS
}

/// `hsa_isa_get_exception_policies`: as for agents, mask 0.
pub unsafe fn hsa_isa_get_exception_policies(isa: hsa_isa_t, profile: hsa_profile_t, mask: *mut u16) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if mask.is_null() || !valid_profile(profile) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if isa_agent(&runtime, isa).is_none() {
        return status::ERROR_INVALID_ISA;
    }
    // SAFETY: non-null output pointer.
    unsafe { mask.write(0) };
    status::SUCCESS
}

/// The agent index an ISA handle stands for (the soft runtime's ISAs are its GPUs').
fn isa_agent(runtime: &Runtime, isa: hsa_isa_t) -> Option<usize> {
    let index = runtime.index_of(Tag::Isa, isa.handle)? as usize;
    runtime.gpu(index).map(|_| index)
}

type CacheCallback = Option<unsafe extern "C" fn(hsa_cache_t, *mut c_void) -> hsa_status_t>;

/// `hsa_agent_iterate_caches`: one cache per level the agent reports in `CACHE_SIZE`, L1 first
/// (ROCr lists KFD's caches the same way).
pub unsafe fn hsa_agent_iterate_caches(agent: hsa_agent_t, callback: CacheCallback, data: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((index, found)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    let levels = super::entry::cache_sizes(found).iter().take_while(|&&size| size != 0).count();
    let handles: Vec<u64> = (0..levels).map(|level| runtime.handle(Tag::Cache, (index * 4 + level) as u64)).collect();
    drop(runtime);
    for handle in handles {
        // SAFETY: the client's callback with the client's data.
        let result = unsafe { callback(hsa_cache_t { handle }, data) };
        if result != status::SUCCESS {
            return result;
        }
    }
    status::SUCCESS
}

/// `hsa_cache_get_info`: NAME_LENGTH, NAME (`L1`...), LEVEL and SIZE in bytes.
pub unsafe fn hsa_cache_get_info(cache: hsa_cache_t, attribute: u32, value: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(index) = runtime.index_of(Tag::Cache, cache.handle) else { return status::ERROR_INVALID_CACHE };
    let (agent_index, level) = (index as usize / 4, index as usize % 4);
    let Some(agent) = runtime.agents.get(agent_index) else { return status::ERROR_INVALID_CACHE };
    let size = super::entry::cache_sizes(agent)[level];
    if size == 0 {
        return status::ERROR_INVALID_CACHE;
    }
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let name = format!("L{}", level + 1);
    // SAFETY (all arms): `value` points to storage of the attribute's type; NAME was sized from
    // NAME_LENGTH.
    unsafe {
        match attribute {
            0 => value.cast::<u32>().write(name.len() as u32),
            1 => core::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len()),
            2 => value.cast::<u8>().write(level as u8 + 1),
            3 => value.cast::<u32>().write(size),
            _ => return status::ERROR_INVALID_ARGUMENT,
        }
    }
    status::SUCCESS
}

/// `hsa_isa_from_name`: the ISA of the GPU whose ISA name this is. ROCr's registry knows every
/// target it supports, present or not; the soft runtime's ISAs are its GPUs', so another name is
/// INVALID_ISA_NAME, as ROCr answers for a name it does not know.
pub unsafe fn hsa_isa_from_name(name: *const c_char, isa: *mut hsa_isa_t) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if name.is_null() || isa.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API passes a NUL-terminated name.
    let name = unsafe { core::ffi::CStr::from_ptr(name) }.to_string_lossy();
    let found = (0..runtime.agents.len()).find(|&index| runtime.gpu(index).is_some_and(|gpu| gpu.isa_name == name));
    let Some(index) = found else { return status::ERROR_INVALID_ISA_NAME };
    // SAFETY: non-null output pointer.
    unsafe { isa.write(hsa_isa_t { handle: runtime.handle(Tag::Isa, index as u64) }) };
    status::SUCCESS
}

/// `hsa_isa_compatible` (deprecated): whether code for `code_object_isa` runs on `agent_isa`
/// (`Isa::IsCompatible`: the same processor, and `sramecc`/`xnack` settings that agree).
pub unsafe fn hsa_isa_compatible(code_object_isa: hsa_isa_t, agent_isa: hsa_isa_t, result: *mut bool) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if result.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let (Some(code), Some(agent)) = (isa_agent(&runtime, code_object_isa), isa_agent(&runtime, agent_isa)) else {
        return status::ERROR_INVALID_ISA;
    };
    let target =
        |index: usize| runtime.gpu(index).and_then(|gpu| aqueduct_codeobject::TargetId::parse(&gpu.isa_name).ok());
    let compatible = match (target(code), target(agent)) {
        (Some(code), Some(agent)) => code.runs_on(&agent).is_ok(),
        _ => false,
    };
    // SAFETY: non-null output pointer.
    unsafe { result.write(compatible) };
    status::SUCCESS
}

/// `hsa_isa_get_info` (deprecated): `hsa_isa_get_info_alt` for index 0 (the only call
/// convention); any other index is INVALID_INDEX. The call-convention attributes give one
/// convention with ROCr's 64-wide wavefronts (see [`hsa_wavefront_get_info`]) and 40 wavefronts
/// per compute unit, as ROCr 5.2.3's `Isa::GetInfo` does.
pub unsafe fn hsa_isa_get_info(isa: hsa_isa_t, attribute: u32, index: u32, value: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if isa_agent(&runtime, isa).is_none() {
        return status::ERROR_INVALID_ISA;
    }
    if index != 0 {
        return status::ERROR_INVALID_INDEX;
    }
    // SAFETY (the arms): `value` points to a u32.
    match attribute {
        2 => unsafe { value.cast::<u32>().write(1) },
        3 => unsafe { value.cast::<u32>().write(ROCR_WAVEFRONT_SIZE) },
        4 => unsafe { value.cast::<u32>().write(40) },
        // SAFETY: forwarded.
        _ => return unsafe { super::entry::hsa_isa_get_info_alt(isa, attribute, value) },
    }
    status::SUCCESS
}

/// `hsa_isa_get_round_method`: single rounding for every type and flush mode (`Isa::
/// GetRoundMethod`), after ROCr's checks of the pointer, the type (16, 32 or 64) and the mode
/// (FTZ or NON_FTZ).
pub unsafe fn hsa_isa_get_round_method(
    isa: hsa_isa_t,
    fp_type: u32,
    flush_mode: u32,
    round_method: *mut u32,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if round_method.is_null() || !matches!(fp_type, 1 | 2 | 4) || !matches!(flush_mode, 1 | 2) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if isa_agent(&runtime, isa).is_none() {
        return status::ERROR_INVALID_ISA;
    }
    // SAFETY: non-null output pointer; HSA_ROUND_METHOD_SINGLE.
    unsafe { round_method.write(1) };
    status::SUCCESS
}

/// The wavefront size ROCr 5.2.3 reports for every ISA (`Wavefront::GetInfo` in `isa.cpp` writes
/// 64; later ROCr reports the ISA's own). The agent's `WAVEFRONT_SIZE` says 32 on gfx10 and
/// later, as on hardware.
const ROCR_WAVEFRONT_SIZE: u32 = 64;

type WavefrontCallback = Option<unsafe extern "C" fn(hsa_wavefront_t, *mut c_void) -> hsa_status_t>;

/// `hsa_isa_iterate_wavefronts`: the ISA's one wavefront.
pub unsafe fn hsa_isa_iterate_wavefronts(
    isa: hsa_isa_t,
    callback: WavefrontCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(index) = isa_agent(&runtime, isa) else { return status::ERROR_INVALID_ISA };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    let handle = runtime.handle(Tag::Wavefront, index as u64);
    drop(runtime);
    // SAFETY: the client's callback with the client's data.
    unsafe { callback(hsa_wavefront_t { handle }, data) }
}

/// `hsa_wavefront_get_info`: SIZE (0), see `ROCR_WAVEFRONT_SIZE`.
pub unsafe fn hsa_wavefront_get_info(wavefront: hsa_wavefront_t, attribute: u32, value: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let live =
        runtime.index_of(Tag::Wavefront, wavefront.handle).is_some_and(|index| runtime.gpu(index as usize).is_some());
    if !live {
        return status::ERROR_INVALID_WAVEFRONT;
    }
    if value.is_null() || attribute != 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: non-null pointer to a u32.
    unsafe { value.cast::<u32>().write(ROCR_WAVEFRONT_SIZE) };
    status::SUCCESS
}
