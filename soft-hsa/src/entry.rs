//! The soft runtime's `extern "C"` entry points, one per [`aqueduct_hsa::sys::HsaApi`] field.
//!
//! Each validates its arguments and returns the status the HSA specification gives for bad input,
//! changing nothing. Functions that return a value instead of a status (signal loads, queue
//! indices) return 0 for a handle that is not live; ROCr does not check these at all.

#![allow(clippy::missing_safety_doc)]
// The C signatures of `hsa.h` fix the argument counts.
#![allow(clippy::too_many_arguments)]

use core::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aqueduct_abi::{AmdQueue, SignalCondition, SignalKind};

use super::clock::SYSTEM_FREQUENCY;
use super::executable::ExecutableSymbol;
use super::memory::PoolAccess;
use super::queue::SoftQueue;
use super::runtime::{self, Runtime, Tag};
use super::signals;
use aqueduct_hsa::sys::*;

fn with_runtime(f: impl FnOnce(&Runtime) -> hsa_status_t) -> hsa_status_t {
    match runtime::get() {
        Some(runtime) => f(&runtime),
        None => status::ERROR_NOT_INITIALIZED,
    }
}

/// Writes `value` to an attribute output pointer.
///
/// # Safety
/// `out` must be valid for a write of `T` (the HSA contract for the attribute's documented type).
unsafe fn put<T>(out: *mut c_void, value: T) -> hsa_status_t {
    // SAFETY: the caller passes a pointer to storage of the attribute's type; unaligned write
    // tolerates callers that pass byte buffers.
    unsafe { out.cast::<T>().write_unaligned(value) };
    status::SUCCESS
}

/// Writes a NUL-padded fixed-size string attribute (`char[N]`).
unsafe fn put_string<const N: usize>(out: *mut c_void, text: &str) -> hsa_status_t {
    let mut buffer = [0u8; N];
    let length = text.len().min(N - 1);
    buffer[..length].copy_from_slice(&text.as_bytes()[..length]);
    // SAFETY: forwarded contract: `out` holds N bytes.
    unsafe { put(out, buffer) }
}

/// `HSA_AMD_SYSTEM_INFO_BUILD_VERSION`: this runtime and its version.
const BUILD_VERSION: &core::ffi::CStr = match core::ffi::CStr::from_bytes_with_nul(
    concat!("aqueduct soft HSA runtime ", env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
) {
    Ok(name) => name,
    Err(_) => c"aqueduct soft HSA runtime",
};

pub unsafe fn hsa_init() -> hsa_status_t {
    match runtime::init() {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

pub unsafe fn hsa_shut_down() -> hsa_status_t {
    match runtime::shut_down() {
        Ok(()) => status::SUCCESS,
        Err(status) => status,
    }
}

/// The text for each status, as NUL-terminated statics.
fn status_text(code: hsa_status_t) -> Option<&'static core::ffi::CStr> {
    Some(match code {
        status::SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
        status::INFO_BREAK => c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.",
        status::ERROR => c"HSA_STATUS_ERROR: A generic error has occurred.",
        status::ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.",
        status::ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.",
        status::ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
        status::ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
        status::ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.",
        status::ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.",
        status::ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
        status::ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
        status::ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.",
        status::ERROR_RESOURCE_FREE => c"HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.",
        status::ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero.",
        status::ERROR_REFCOUNT_OVERFLOW => c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached.",
        status::ERROR_INCOMPATIBLE_ARGUMENTS => c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a function are not compatible.",
        status::ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
        status::ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
        status::ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.",
        status::ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.",
        status::ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.",
        status::ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.",
        status::ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.",
        status::ERROR_VARIABLE_ALREADY_DEFINED => c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.",
        status::ERROR_VARIABLE_UNDEFINED => c"HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.",
        status::ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.",
        status::ERROR_INVALID_CODE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.",
        status::ERROR_INVALID_EXECUTABLE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.",
        status::ERROR_INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
        status::ERROR_INVALID_CODE_OBJECT_READER => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.",
        status::ERROR_INVALID_CACHE => c"HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.",
        status::ERROR_INVALID_WAVEFRONT => c"HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.",
        status::ERROR_INVALID_SIGNAL_GROUP => c"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.",
        status::ERROR_INVALID_RUNTIME_STATE => c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configuration state.",
        status::ERROR_FATAL => c"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.",
        status::ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.",
        status::ERROR_MEMORY_APERTURE_VIOLATION => c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address.",
        status::ERROR_ILLEGAL_INSTRUCTION => c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent executed an illegal shader instruction.",
        status::ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an inaccessible address.",
        _ => return None,
    })
}

pub unsafe fn hsa_status_string(code: hsa_status_t, string: *mut *const c_char) -> hsa_status_t {
    if string.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(text) = status_text(code) else { return status::ERROR_INVALID_ARGUMENT };
    // SAFETY: `string` is non-null and, per the API, points to a `const char*` to fill.
    unsafe { string.write(text.as_ptr()) };
    status::SUCCESS
}

pub unsafe fn hsa_system_get_info(attribute: hsa_system_info_t, value: *mut c_void) -> hsa_status_t {
    with_runtime(|_| {
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY (all arms): `value` points to storage of the attribute's documented type.
        unsafe {
            match attribute {
                system_info::VERSION_MAJOR => put(value, 1u16),
                system_info::VERSION_MINOR => put(value, 1u16),
                system_info::TIMESTAMP => put(value, super::clock::system_ticks()),
                system_info::TIMESTAMP_FREQUENCY => put(value, SYSTEM_FREQUENCY),
                system_info::SIGNAL_MAX_WAIT => put(value, u64::MAX),
                system_info::ENDIANNESS => put(value, 0u32),
                system_info::MACHINE_MODEL => put(value, 1u32),
                system_info::EXTENSIONS => put(value, super::extensions::system_extension_mask()),
                // A `const char *` naming the build, as ROCr's `STRING(ROCR_BUILD_ID)`.
                system_info::AMD_BUILD_VERSION => put(value, BUILD_VERSION.as_ptr()),
                // No `hsa_amd_svm_*` support: the soft runtime has no SVM ranges to migrate
                // (ROCr reports what KFD's SVM ioctl says, `Runtime::GetSystemInfo`).
                system_info::AMD_SVM_SUPPORTED | system_info::AMD_SVM_ACCESSIBLE_BY_DEFAULT => put(value, false),
                _ => status::ERROR_INVALID_ARGUMENT,
            }
        }
    })
}

pub unsafe fn hsa_iterate_agents(callback: hsa_agent_callback_t, data: *mut c_void) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
        for index in 0..runtime.agents.len() {
            let agent = hsa_agent_t { handle: runtime.handle(Tag::Agent, index as u64) };
            // SAFETY: calling the client's callback with the client's data, as the API defines.
            let result = unsafe { callback(agent, data) };
            if result != status::SUCCESS {
                return result;
            }
        }
        status::SUCCESS
    })
}

pub unsafe fn hsa_agent_get_info(agent: hsa_agent_t, attribute: hsa_agent_info_t, value: *mut c_void) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((index, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let Some(config) = agent.gpu() else {
            // SAFETY: as below.
            return unsafe { cpu_agent_info(runtime, agent, attribute, value) };
        };
        // Values as ROCr's `GpuAgent::GetInfo` reports them (rocminfo-gfx1100.txt, Agent 2); the
        // hardware facts from the published dump of the agent's model (`gpu_models.rs`).
        let model = super::gpu_models::reported(&config.isa_name);
        // SAFETY (all arms): `value` points to storage of the attribute's documented type.
        unsafe {
            match attribute {
                agent_info::NAME => put_string::<64>(value, &config.name),
                agent_info::VENDOR_NAME => put_string::<64>(value, "AMD"),
                agent_info::FEATURE => put(value, agent_feature::KERNEL_DISPATCH),
                agent_info::PROFILE => put(value, enums::PROFILE_BASE),
                agent_info::WAVEFRONT_SIZE => put(value, config.wavefront_size),
                // Every model's dump: 1024 in all and per dimension (`gpu_models.rs` checks its
                // rows against the processor's limits).
                agent_info::WORKGROUP_MAX_DIM => put(value, [crate::processor::WORKGROUP_MAX_DIM as u16; 3]),
                agent_info::WORKGROUP_MAX_SIZE => put(value, crate::processor::WORKGROUP_MAX_SIZE),
                agent_info::GRID_MAX_DIM => put(value, [u32::MAX; 3]),
                agent_info::GRID_MAX_SIZE => put(value, crate::processor::GRID_MAX_SIZE),
                agent_info::QUEUES_MAX => put(value, 128u32),
                agent_info::QUEUE_MIN_SIZE => put(value, runtime.config.queue_min_packets),
                agent_info::QUEUE_MAX_SIZE => put(value, runtime.config.queue_max_packets),
                agent_info::QUEUE_TYPE => put(value, enums::QUEUE_TYPE_MULTI),
                agent_info::NODE => put(value, agent.node),
                agent_info::DEVICE => put(value, device_type::GPU),
                agent_info::ISA => put(value, hsa_isa_t { handle: runtime.handle(Tag::Isa, index as u64) }),
                agent_info::AMD_CHIP_ID => put(value, model.chip_id),
                agent_info::AMD_CACHELINE_SIZE => put(value, model.cacheline_bytes),
                // The configured count, which the runtime schedules and clips CU masks by, not the
                // model's (docs/DECISIONS.md, "Soft agents report their configured compute units").
                agent_info::AMD_COMPUTE_UNIT_COUNT => put(value, config.compute_units),
                agent_info::AMD_PRODUCT_NAME => {
                    put_string::<64>(value, &format!("aqueduct soft agent ({})", config.name))
                }
                agent_info::AMD_UUID => put_string::<21>(value, &agent.uuid),
                // What rocminfo prints beyond the engine's needs: the agent's model's facts.
                agent_info::MACHINE_MODEL => put(value, enums::MACHINE_MODEL_LARGE),
                agent_info::DEFAULT_FLOAT_ROUNDING_MODE => put(value, enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
                agent_info::FBARRIER_MAX_SIZE => put(value, 32u32),
                // Bytes per level, L1..L4 (rocminfo prints KB).
                agent_info::CACHE_SIZE => put(value, cache_sizes(agent)),
                agent_info::VERSION_MAJOR | agent_info::VERSION_MINOR => put(value, 1u16),
                agent_info::FAST_F16_OPERATION => put(value, true),
                agent_info::AMD_MAX_CLOCK_FREQUENCY => put(value, model.max_clock_mhz),
                agent_info::AMD_DRIVER_NODE_ID => put(value, agent.node),
                agent_info::AMD_MAX_ADDRESS_WATCH_POINTS => put(value, model.watch_points),
                // The dump's bus 3 for the first GPU; each further soft GPU on the next bus.
                agent_info::AMD_BDFID => put(value, (3 + index as u32 - 1) << 8),
                agent_info::AMD_MAX_WAVES_PER_CU => put(value, model.max_waves_per_cu),
                agent_info::AMD_NUM_SIMDS_PER_CU => put(value, model.simds_per_cu),
                agent_info::AMD_NUM_SHADER_ENGINES => put(value, model.shader_engines),
                agent_info::AMD_NUM_SHADER_ARRAYS_PER_SE => put(value, model.shader_arrays_per_engine),
                agent_info::AMD_ASIC_REVISION => put(value, model.asic_revision),
                // A discrete GPU's HDP registers, as `GpuAgent::GetInfo` hands out the ones KFD
                // mapped (hsa_ext_amd.h `HSA_AMD_AGENT_INFO_HDP_FLUSH`).
                agent_info::AMD_HDP_FLUSH => put(
                    value,
                    aqueduct_hsa::sys::hsa_amd_hdp_flush_t {
                        HDP_MEM_FLUSH_CNTL: agent.hdp_registers[0].as_ptr(),
                        HDP_REG_FLUSH_CNTL: agent.hdp_registers[1].as_ptr(),
                    },
                ),
                agent_info::EXTENSIONS => put(value, super::extensions::agent_extension_mask()),
                // ROCr answers both from one arm (`GpuAgent::GetInfo`).
                agent_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                    put(value, enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
                }
                agent_info::AMD_MEMORY_WIDTH => put(value, MEMORY_WIDTH_BITS),
                agent_info::AMD_MEMORY_MAX_FREQUENCY => put(value, MEMORY_MAX_CLOCK_MHZ),
                // PCI domain 0, with the bus of `AMD_BDFID`.
                agent_info::AMD_DOMAIN => put(value, 0u32),
                // No global wave sync (KFD's `NumGws` is 0 on RDNA3; the soft runtime has none on
                // any model), so no cooperative queues (`properties_.NumGws != 0` in
                // `GpuAgent::GetInfo`).
                agent_info::AMD_COOPERATIVE_QUEUES => put(value, false),
                agent_info::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => put(value, config.compute_units),
                // The soft agent's memory is the host's.
                agent_info::AMD_SVM_DIRECT_HOST_ACCESS => put(value, true),
                // The image extension's limits: ROCr forwards the dimension queries to the image
                // library (`hsa_amd_image_get_info_max_dim`, NOT_INITIALIZED when it is absent, as
                // here) and answers the handle counts with fixed OpenCL limits.
                agent_info::EXT_IMAGE_FIRST..=0x3008 => status::ERROR_NOT_INITIALIZED,
                0x3009 => put(value, 128u32),
                0x300A => put(value, 64u32),
                0x300B => put(value, 16u32),
                _ => status::ERROR_INVALID_ARGUMENT,
            }
        }
    })
}

/// The CPU agent's attributes as ROCr's `CpuAgent::GetInfo` reports them (rocminfo-gfx1100.txt,
/// Agent 1): no features, full profile, no queues, no ISA.
///
/// # Safety
/// `value` points to storage of the attribute's documented type.
unsafe fn cpu_agent_info(
    runtime: &Runtime,
    agent: &super::runtime::Agent,
    attribute: hsa_agent_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    // SAFETY (all arms): forwarded from the caller.
    unsafe {
        match attribute {
            agent_info::NAME | agent_info::AMD_PRODUCT_NAME => put_string::<64>(value, &runtime.config.cpu_name),
            agent_info::VENDOR_NAME => put_string::<64>(value, "CPU"),
            agent_info::FEATURE => put(value, 0u32),
            agent_info::PROFILE => put(value, enums::PROFILE_FULL),
            agent_info::WAVEFRONT_SIZE | agent_info::WORKGROUP_MAX_SIZE | agent_info::GRID_MAX_SIZE => put(value, 0u32),
            agent_info::WORKGROUP_MAX_DIM => put(value, [0u16; 3]),
            agent_info::GRID_MAX_DIM => put(value, [0u32; 3]),
            agent_info::QUEUES_MAX | agent_info::QUEUE_MIN_SIZE | agent_info::QUEUE_MAX_SIZE => put(value, 0u32),
            agent_info::QUEUE_TYPE => put(value, enums::QUEUE_TYPE_MULTI),
            agent_info::NODE => put(value, agent.node),
            agent_info::DEVICE => put(value, device_type::CPU),
            agent_info::ISA => put(value, hsa_isa_t { handle: 0 }),
            agent_info::AMD_CHIP_ID => put(value, 0u32),
            agent_info::AMD_CACHELINE_SIZE => put(value, 64u32),
            agent_info::AMD_COMPUTE_UNIT_COUNT => {
                put(value, std::thread::available_parallelism().map_or(1, |count| count.get() as u32))
            }
            agent_info::AMD_UUID => put_string::<21>(value, &agent.uuid),
            // As the dump's Agent 1 shows them (the dumped machine's Ryzen 7 7800X3D: its L1 line
            // and clock are reported as they are).
            agent_info::MACHINE_MODEL => put(value, enums::MACHINE_MODEL_LARGE),
            agent_info::DEFAULT_FLOAT_ROUNDING_MODE => put(value, enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
            agent_info::FBARRIER_MAX_SIZE => put(value, 0u32),
            agent_info::CACHE_SIZE => put(value, cache_sizes(agent)),
            agent_info::VERSION_MAJOR | agent_info::VERSION_MINOR => put(value, 1u16),
            agent_info::FAST_F16_OPERATION => put(value, false),
            agent_info::AMD_MAX_CLOCK_FREQUENCY => put(value, 5050u32),
            agent_info::AMD_DRIVER_NODE_ID => put(value, agent.node),
            agent_info::AMD_MAX_ADDRESS_WATCH_POINTS => put(value, 1u32),
            agent_info::AMD_BDFID
            | agent_info::AMD_MAX_WAVES_PER_CU
            | agent_info::AMD_NUM_SIMDS_PER_CU
            | agent_info::AMD_NUM_SHADER_ENGINES
            | agent_info::AMD_NUM_SHADER_ARRAYS_PER_SE
            | agent_info::AMD_ASIC_REVISION => put(value, 0u32),
            _ => status::ERROR_INVALID_ARGUMENT,
        }
    }
}

/// The RX 7900 XTX's memory, which every soft GPU reports whatever its model: a 384-bit bus (AMD's
/// product specification), and KFD's maximum memory clock, 1249 MHz (the card's top
/// `pp_dpm_mclk` level), which `GpuAgent` hands out as is. `rocminfo` prints neither, and no
/// source for them was found for the other models of `gpu_models.rs`, so they keep these.
pub(crate) const MEMORY_WIDTH_BITS: u32 = 384;
pub(crate) const MEMORY_MAX_CLOCK_MHZ: u32 = 1249;

/// Bytes per cache level, L1 to L4, as the dumps' agents show them (rocminfo prints KB): a GPU's
/// model's (`gpu_models.rs`); the CPU's one 32768 KB line (rocminfo-gfx1100.txt, Agent 1).
pub(crate) fn cache_sizes(agent: &super::runtime::Agent) -> [u32; 4] {
    match agent.gpu() {
        Some(config) => super::gpu_models::reported(&config.isa_name).cache_bytes,
        None => [32768 << 10, 0, 0, 0],
    }
}

pub unsafe fn hsa_agent_iterate_isas(
    agent: hsa_agent_t,
    callback: hsa_isa_callback_t,
    data: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((index, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
        let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
        if agent.is_cpu() {
            return status::SUCCESS; // ROCr's CPU agent lists no ISA
        }
        // SAFETY: the client's callback with the client's data.
        unsafe { callback(hsa_isa_t { handle: runtime.handle(Tag::Isa, index as u64) }, data) }
    })
}

pub unsafe fn hsa_isa_get_info_alt(isa: hsa_isa_t, attribute: hsa_isa_info_t, value: *mut c_void) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(agent) = runtime.index_of(Tag::Isa, isa.handle).and_then(|index| runtime.gpu(index as usize)) else {
            return status::ERROR_INVALID_ISA;
        };
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let name = agent.isa_name.as_bytes();
        match attribute {
            // SAFETY: NAME_LENGTH is a u32 attribute.
            isa_info::NAME_LENGTH => unsafe { put(value, name.len() as u32 + 1) },
            isa_info::NAME => {
                // SAFETY: the caller sized the buffer from NAME_LENGTH (name plus NUL).
                unsafe {
                    core::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len());
                    value.cast::<u8>().add(name.len()).write(0);
                }
                status::SUCCESS
            }
            // The rest as the dump's ISA 1 shows it (`hsa_isa_get_info_alt` of ROCr's `Isa`):
            // large model, base profile, round-to-nearest by default, fast f16, and the agent's
            // workgroup and grid limits.
            // SAFETY (all below): `value` points to storage of the attribute's documented type.
            isa_info::MACHINE_MODELS => unsafe { put(value, [false, true]) },
            isa_info::PROFILES => unsafe { put(value, [true, false]) },
            isa_info::DEFAULT_FLOAT_ROUNDING_MODES | isa_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => unsafe {
                put(value, [false, false, true])
            },
            isa_info::FAST_F16_OPERATION => unsafe { put(value, true) },
            isa_info::WORKGROUP_MAX_DIM => unsafe { put(value, [1024u16; 3]) },
            isa_info::WORKGROUP_MAX_SIZE => unsafe { put(value, 1024u32) },
            isa_info::GRID_MAX_DIM => unsafe { put(value, [u32::MAX; 3]) },
            isa_info::GRID_MAX_SIZE => unsafe { put(value, u64::from(u32::MAX)) },
            isa_info::FBARRIER_MAX_SIZE => unsafe { put(value, 32u32) },
            _ => status::ERROR_INVALID_ARGUMENT,
        }
    })
}

pub unsafe fn hsa_amd_agent_iterate_memory_pools(
    agent: hsa_agent_t,
    callback: hsa_amd_memory_pool_callback_t,
    data: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((_, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
        let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
        for pool in agent.pools {
            let handle = hsa_amd_memory_pool_t { handle: runtime.handle(Tag::Pool, pool as u64) };
            // SAFETY: the client's callback with the client's data.
            let result = unsafe { callback(handle, data) };
            if result != status::SUCCESS {
                return result;
            }
        }
        status::SUCCESS
    })
}

pub unsafe fn hsa_amd_memory_pool_get_info(
    pool: hsa_amd_memory_pool_t,
    attribute: hsa_amd_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((_, pool)) = runtime.pool(pool.handle) else { return status::ERROR_INVALID_MEMORY_POOL };
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY (all arms): `value` points to storage of the attribute's documented type.
        unsafe {
            match attribute {
                pool_info::SEGMENT => put(value, pool.segment()),
                pool_info::GLOBAL_FLAGS => put(value, pool.global_flags()),
                pool_info::SIZE => put(value, pool.size as usize),
                pool_info::RUNTIME_ALLOC_ALLOWED => put(value, pool.alloc_allowed()),
                pool_info::RUNTIME_ALLOC_GRANULE | pool_info::RUNTIME_ALLOC_ALIGNMENT => put(value, pool.granule()),
                RUNTIME_ALLOC_REC_GRANULE => put(value, pool.recommended_granule()),
                pool_info::ACCESSIBLE_BY_ALL => put(value, pool.accessible_by_all()),
                pool_info::ALLOC_MAX_SIZE => put(value, pool.alloc_max_size() as usize),
                _ => status::ERROR_INVALID_ARGUMENT,
            }
        }
    })
}

/// `HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE` (18): in ROCm 6.x's hsa_ext_amd.h, absent
/// from ROCr 5.2.3's, so it is not in `sys.rs`.
pub const RUNTIME_ALLOC_REC_GRANULE: u32 = 18;

/// What the soft runtime reports for every link between two different agents: one hop over
/// PCIe, as ROCr reports a discrete GPU's link to the host (`Runtime::RegisterLinkInfo` clamps
/// hops to 1). NUMA distance 20 is KFD's value for a remote IO link.
fn link_info() -> hsa_amd_memory_pool_link_info_t {
    hsa_amd_memory_pool_link_info_t {
        link_type: agent_pool_info::LINK_TYPE_PCIE,
        numa_distance: 20,
        atomic_support_32bit: true,
        atomic_support_64bit: true,
        coherent_support: false,
        ..Default::default()
    }
}

pub unsafe fn hsa_amd_agent_memory_pool_get_info(
    agent: hsa_agent_t,
    pool: hsa_amd_memory_pool_t,
    attribute: hsa_amd_agent_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((agent_index, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
        let Some((_, pool)) = runtime.pool(pool.handle) else { return status::ERROR_INVALID_MEMORY_POOL };
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let access = super::memory::access(pool, agent_index, agent.is_cpu());
        // ROCr: no hops to one's own pools or to pools never allowed; one hop otherwise.
        let hops = u32::from(pool.agent_index != agent_index && access != PoolAccess::NeverAllowed);
        // SAFETY (all arms): `value` points to storage of the attribute's documented type; for
        // LINK_INFO, to NUM_LINK_HOPS entries.
        unsafe {
            match attribute {
                agent_pool_info::ACCESS => put(value, access as u32),
                agent_pool_info::NUM_LINK_HOPS => put(value, hops),
                agent_pool_info::LINK_INFO => {
                    if hops > 0 {
                        put(value, link_info())
                    } else {
                        status::SUCCESS
                    }
                }
                _ => status::ERROR_INVALID_ARGUMENT,
            }
        }
    })
}

pub unsafe fn hsa_amd_memory_pool_allocate(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some((index, pool)) = runtime.pool(pool.handle) else { return status::ERROR_INVALID_MEMORY_POOL };
        if ptr.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        match runtime.allocations.allocate(index, pool, size) {
            Ok(memory) => {
                // SAFETY: `ptr` is non-null and points to a `void*` to fill.
                unsafe { ptr.write(memory.cast()) };
                status::SUCCESS
            }
            Err(status) => status,
        }
    })
}

/// ROCr's `hsa_amd_memory_pool_free` is `hsa_memory_free`: a null pointer is success
/// (`hsa_ext_amd.cpp`, `hsa.cpp`); HIP frees null on every device teardown.
pub unsafe fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t {
    with_runtime(|runtime| {
        if ptr.is_null() {
            return status::SUCCESS;
        }
        match runtime.allocations.free(&runtime.pools, ptr.cast()) {
            Ok(()) => status::SUCCESS,
            Err(status) => status,
        }
    })
}

pub unsafe fn hsa_amd_agents_allow_access(
    num_agents: u32,
    agents: *const hsa_agent_t,
    flags: *const u32,
    ptr: *const c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if num_agents == 0 || agents.is_null() || ptr.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: the API passes `num_agents` agents at `agents`.
        let agents = unsafe { core::slice::from_raw_parts(agents, num_agents as usize) };
        let mut mask = 0u64;
        for agent in agents {
            let Some((index, _)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
            mask |= super::memory::owner_bit(index);
        }
        // ROCr requires `flags == NULL`; a pointer that does not start an allocation is refused.
        if !flags.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        match runtime.allocations.allow(ptr as usize, mask) {
            Ok(()) => status::SUCCESS,
            Err(status) => status,
        }
    })
}

pub unsafe fn hsa_queue_create(
    agent: hsa_agent_t,
    size: u32,
    type_: hsa_queue_type32_t,
    callback: hsa_queue_error_callback_t,
    data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let Some(runtime) = runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((agent_index, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    if agent.is_cpu() {
        return status::ERROR; // ROCr's `CpuAgent::QueueCreate`: no AQL packet processor
    }
    if queue.is_null()
        || !size.is_power_of_two()
        || size < runtime.config.queue_min_packets.max(1)
        || size > runtime.config.queue_max_packets
    {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if type_ != enums::QUEUE_TYPE_MULTI && type_ != enums::QUEUE_TYPE_SINGLE {
        return status::ERROR_INVALID_QUEUE_CREATION;
    }
    let created = SoftQueue::create(
        runtime.config.intercepted_doorbells,
        agent_index,
        size,
        type_,
        runtime.config.default_mode,
        callback,
        data as usize,
    )
    .and_then(|created| match super::processor::start(&created, runtime.clone()) {
        Ok(()) => Ok(created),
        Err(status) => {
            created.shut_down();
            Err(status)
        }
    });
    match created {
        Ok(created) => {
            let address = created.address();
            runtime.queues.lock().unwrap_or_else(|poison| poison.into_inner()).insert(address, created);
            // SAFETY: `queue` is non-null and points to an `hsa_queue_t*` to fill.
            unsafe { queue.write(address as *mut hsa_queue_t) };
            status::SUCCESS
        }
        Err(status) => status,
    }
}

pub unsafe fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
    with_runtime(|runtime| {
        let removed = runtime.queues.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&(queue as usize));
        if let Some(queue) = removed {
            queue.shut_down();
            return status::SUCCESS;
        }
        let host = runtime.host_queues.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&(queue as usize));
        match host {
            Some(queue) => {
                queue.destroy(&runtime.allocations, &runtime.pools);
                status::SUCCESS
            }
            None => status::ERROR_INVALID_QUEUE,
        }
    })
}

/// Runs `f` on the `amd_queue_t` of the live soft queue behind `queue`, or returns 0: without a
/// lock, as ROCr's index operations are one atomic (`queue_slots.rs`).
pub(crate) fn queue_index(queue: *const hsa_queue_t, f: impl FnOnce(*const AmdQueue) -> u64) -> u64 {
    match super::queue_slots::live(queue as usize) {
        Some(slot) => f(slot.amd_ptr()),
        None => 0,
    }
}

pub unsafe fn hsa_queue_load_read_index_scacquire(queue: *const hsa_queue_t) -> u64 {
    // SAFETY (closure): the slot's memory is valid for the process and accessed atomically.
    queue_index(queue, |amd| unsafe { AmdQueue::read_dispatch_id_atomic(amd) }.load(Ordering::Acquire))
}

pub unsafe fn hsa_queue_load_write_index_relaxed(queue: *const hsa_queue_t) -> u64 {
    // SAFETY (closure): as above.
    queue_index(queue, |amd| unsafe { AmdQueue::write_dispatch_id_atomic(amd) }.load(Ordering::Relaxed))
}

pub unsafe fn hsa_queue_add_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> u64 {
    // SAFETY (closure): as above.
    queue_index(queue, |amd| unsafe { AmdQueue::write_dispatch_id_atomic(amd) }.fetch_add(value, Ordering::Relaxed))
}

pub unsafe fn hsa_queue_cas_write_index_scacq_screl(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 {
    queue_index(queue, |amd| {
        // SAFETY: as above.
        let index = unsafe { AmdQueue::write_dispatch_id_atomic(amd) };
        match index.compare_exchange(expected, value, Ordering::AcqRel, Ordering::Acquire) {
            Ok(previous) | Err(previous) => previous,
        }
    })
}

pub unsafe fn hsa_signal_create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    // SAFETY: forwarded: ROCr's `hsa_signal_create` is `hsa_amd_signal_create` with no attributes.
    unsafe { hsa_amd_signal_create(initial_value, num_consumers, consumers, 0, signal) }
}

pub unsafe fn hsa_amd_signal_create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if attributes & !(amd_event::SIGNAL_AMD_GPU_ONLY | amd_event::SIGNAL_IPC) != 0 {
            return status::ERROR_INVALID_ARGUMENT;
        }
        if signal.is_null() || (num_consumers > 0 && consumers.is_null()) {
            return status::ERROR_INVALID_ARGUMENT;
        }
        if num_consumers > 0 {
            // SAFETY: the API passes `num_consumers` agents at `consumers`.
            let consumers = unsafe { core::slice::from_raw_parts(consumers, num_consumers as usize) };
            if consumers.iter().any(|agent| runtime.agent(agent.handle).is_none()) {
                return status::ERROR_INVALID_AGENT;
            }
        }
        // ROCr: an interrupt signal (with a KFD event) unless the caller says only GPUs wait on
        // it (`HSA_AMD_SIGNAL_AMD_GPU_ONLY`), or every listed consumer is a GPU.
        let host_waits = attributes & amd_event::SIGNAL_AMD_GPU_ONLY == 0
            && (num_consumers == 0
                // SAFETY: validated above: `num_consumers` agents at `consumers`.
                || unsafe { core::slice::from_raw_parts(consumers, num_consumers as usize) }
                    .iter()
                    .any(|agent| runtime.agent(agent.handle).is_some_and(|(_, agent)| agent.is_cpu())));
        if attributes & amd_event::SIGNAL_IPC != 0 {
            return match super::ipc::create_signal(initial_value, host_waits) {
                Ok(created) => {
                    // SAFETY: `signal` is non-null and points to an `hsa_signal_t` to fill.
                    unsafe { signal.write(created) };
                    status::SUCCESS
                }
                Err(status) => status,
            };
        }
        match signals::create(SignalKind::USER, initial_value, host_waits) {
            Some(slot) => {
                // SAFETY: `signal` is non-null and points to an `hsa_signal_t` to fill.
                unsafe { signal.write(hsa_signal_t { handle: slot.handle() }) };
                status::SUCCESS
            }
            None => status::ERROR_OUT_OF_RESOURCES,
        }
    })
}

pub unsafe fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
    // Initialization is checked first, as ROCr's `IS_OPEN` does: before `hsa_init`, even a bad
    // handle is NOT_INITIALIZED (tests/c/bad_input.c compares the drop-in with ROCr).
    with_runtime(|_| {
        let user_signal = signals::slot(signal.handle).is_some_and(|slot| slot.kind() == SignalKind::USER);
        if user_signal && signals::destroy(signal.handle) {
            super::ipc::forget_signal(signal.handle);
            status::SUCCESS
        } else {
            status::ERROR_INVALID_SIGNAL
        }
    })
}

pub unsafe fn hsa_signal_load_scacquire(signal: hsa_signal_t) -> hsa_signal_value_t {
    signals::slot(signal.handle).map_or(0, |slot| slot.host_value(Ordering::Acquire))
}

pub unsafe fn hsa_signal_load_relaxed(signal: hsa_signal_t) -> hsa_signal_value_t {
    signals::slot(signal.handle).map_or(0, |slot| slot.host_value(Ordering::Relaxed))
}

pub unsafe fn hsa_signal_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(slot) = signals::slot(signal.handle) {
        slot.update(|word| word.store(value, Ordering::Relaxed));
    }
}

pub unsafe fn hsa_signal_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(slot) = signals::slot(signal.handle) {
        slot.update(|word| word.store(value, Ordering::Release));
    }
}

pub unsafe fn hsa_signal_add_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(slot) = signals::slot(signal.handle) {
        slot.update(|word| {
            word.fetch_add(value, Ordering::AcqRel);
        });
    }
}

pub unsafe fn hsa_signal_subtract_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(slot) = signals::slot(signal.handle) {
        slot.update(|word| {
            word.fetch_sub(value, Ordering::AcqRel);
        });
    }
}

/// ACTIVE waiters spin before parking; BLOCKED waiters said they may sleep, so they park at once
/// and leave the cores to the threads doing work.
fn spin_for(hint: hsa_wait_state_t) -> Duration {
    if hint == enums::WAIT_STATE_ACTIVE { signals::SPIN_BEFORE_PARK } else { Duration::ZERO }
}

fn deadline_after(timeout_ticks: u64) -> Option<Instant> {
    if timeout_ticks == u64::MAX {
        return None;
    }
    Instant::now().checked_add(Duration::from_nanos(timeout_ticks.saturating_mul(1_000_000_000 / SYSTEM_FREQUENCY)))
}

pub unsafe fn hsa_signal_wait_scacquire(
    signal: hsa_signal_t,
    condition: hsa_signal_condition_t,
    compare_value: hsa_signal_value_t,
    timeout_hint: u64,
    wait_state_hint: hsa_wait_state_t,
) -> hsa_signal_value_t {
    let (Some(slot), Some(condition)) = (signals::slot(signal.handle), SignalCondition::from_bits(condition)) else {
        return 0;
    };
    if slot.kind() == SignalKind::DOORBELL {
        // ROCr's `DoorbellSignal::WaitAcquire` returns 0 at once (core/inc/signal.h).
        return 0;
    }
    let wake = signals::wake_when(condition, compare_value);
    signals::wait_until(
        &[slot],
        Some(&[wake]),
        |_, value| wake.met_by(value),
        deadline_after(timeout_hint),
        spin_for(wait_state_hint),
        &|| false,
    );
    slot.host_value(Ordering::Acquire)
}

pub unsafe fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals_ptr: *mut hsa_signal_t,
    conds: *mut hsa_signal_condition_t,
    values: *mut hsa_signal_value_t,
    timeout_hint: u64,
    wait_hint: hsa_wait_state_t,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    const NONE: u32 = u32::MAX;
    if signal_count == 0 || signals_ptr.is_null() || conds.is_null() || values.is_null() {
        return NONE;
    }
    let count = signal_count as usize;
    // SAFETY: the API passes `signal_count` entries in each array.
    let (handles, conds, values) = unsafe {
        (
            core::slice::from_raw_parts(signals_ptr, count),
            core::slice::from_raw_parts(conds, count),
            core::slice::from_raw_parts(values, count),
        )
    };
    // Fallible: a failed allocation answers as a failed wait, never an abort of the process.
    let (mut slots, mut wakes) = (Vec::new(), Vec::new());
    if slots.try_reserve_exact(count).is_err() || wakes.try_reserve_exact(count).is_err() {
        return NONE;
    }
    for index in 0..count {
        let (Some(slot), Some(condition)) =
            (signals::slot(handles[index].handle), SignalCondition::from_bits(conds[index]))
        else {
            return NONE;
        };
        slots.push(slot);
        wakes.push(signals::wake_when(condition, values[index]));
    }
    let found = signals::wait_until(
        &slots,
        Some(&wakes),
        |index, value| wakes[index].met_by(value),
        deadline_after(timeout_hint),
        spin_for(wait_hint),
        &|| false,
    );
    match found {
        Some(index) => {
            if !satisfying_value.is_null() {
                // SAFETY: non-null output pointer for one value.
                unsafe { satisfying_value.write(slots[index].host_value(Ordering::Acquire)) };
            }
            index as u32
        }
        None => NONE,
    }
}

pub unsafe fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    code_object_reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    with_runtime(|runtime| {
        // A size past isize::MAX cannot describe memory (no slice may be that long); ROCr keeps
        // the pointer unread here and fails later, the soft runtime copies now, so it refuses.
        if code_object.is_null() || size == 0 || size > isize::MAX as usize || code_object_reader.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: the API passes `size` readable bytes at `code_object`, and `size` fits a slice.
        let bytes = unsafe { core::slice::from_raw_parts(code_object.cast::<u8>(), size) }.to_vec();
        let origin = super::executable::ReaderOrigin::Memory { address: code_object as usize };
        // SAFETY: non-null output pointer.
        unsafe { runtime.add_reader(bytes, origin, code_object_reader) }
    })
}

pub unsafe fn hsa_code_object_reader_destroy(code_object_reader: hsa_code_object_reader_t) -> hsa_status_t {
    with_runtime(|runtime| {
        let removed = runtime
            .index_of(Tag::Reader, code_object_reader.handle)
            .and_then(|id| runtime.executables.readers.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&id));
        if removed.is_some() { status::SUCCESS } else { status::ERROR_INVALID_CODE_OBJECT_READER }
    })
}

pub unsafe fn hsa_executable_create_alt(
    profile: hsa_profile_t,
    default_float_rounding_mode: hsa_default_float_rounding_mode_t,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    with_runtime(|runtime| {
        // ROCr checks the pointer, the profile and the rounding mode (DEFAULT, ZERO or NEAR) in
        // that order, each INVALID_ARGUMENT (core/runtime/hsa.cpp: IS_BAD_PTR, IS_BAD_PROFILE,
        // IS_BAD_ROUNDING_MODE).
        if executable.is_null()
            || profile > enums::PROFILE_FULL
            || default_float_rounding_mode > enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR
        {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let id = runtime.executables.create_executable(profile, default_float_rounding_mode);
        // SAFETY: non-null output pointer.
        unsafe { executable.write(hsa_executable_t { handle: runtime.handle(Tag::Executable, id) }) };
        status::SUCCESS
    })
}

pub unsafe fn hsa_executable_load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    code_object_reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    use super::executable::LoadFailure;
    with_runtime(|runtime| {
        let Some(executable_id) = runtime.index_of(Tag::Executable, executable.handle) else {
            return status::ERROR_INVALID_EXECUTABLE;
        };
        let Some((agent_index, agent)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
        let Some(reader_id) = runtime.index_of(Tag::Reader, code_object_reader.handle) else {
            return status::ERROR_INVALID_CODE_OBJECT_READER;
        };
        let Some(gpu) = agent.gpu() else { return status::ERROR_INVALID_AGENT };
        match runtime.executables.load(
            executable_id,
            reader_id,
            agent_index,
            &gpu.isa_name,
            &runtime.config.code_object_versions,
        ) {
            Ok(loaded_id) => {
                if !loaded_code_object.is_null() {
                    let handle = runtime.handle(Tag::LoadedCodeObject, loaded_id);
                    // SAFETY: non-null output pointer.
                    unsafe { loaded_code_object.write(hsa_loaded_code_object_t { handle }) };
                }
                status::SUCCESS
            }
            Err(LoadFailure::UnknownExecutable) => status::ERROR_INVALID_EXECUTABLE,
            Err(LoadFailure::Frozen) => status::ERROR_FROZEN_EXECUTABLE,
            Err(LoadFailure::UnknownReader) => status::ERROR_INVALID_CODE_OBJECT_READER,
            Err(LoadFailure::Incompatible(reason)) => {
                tracing::debug!(%reason, "soft runtime refused an incompatible code object");
                status::ERROR_INCOMPATIBLE_ARGUMENTS
            }
            Err(LoadFailure::AlreadyDefined(symbol)) => {
                tracing::debug!(%symbol, "soft runtime refused a second definition of a symbol");
                status::ERROR_VARIABLE_ALREADY_DEFINED
            }
            Err(LoadFailure::InvalidCodeObject(reason)) => {
                tracing::debug!(%reason, "soft runtime refused a code object");
                status::ERROR_INVALID_CODE_OBJECT
            }
        }
    })
}

pub unsafe fn hsa_executable_freeze(executable: hsa_executable_t, _options: *const c_char) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(id) = runtime.index_of(Tag::Executable, executable.handle) else {
            return status::ERROR_INVALID_EXECUTABLE;
        };
        let mut executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        match executables.get_mut(&id) {
            None => status::ERROR_INVALID_EXECUTABLE,
            Some(entry) if entry.frozen => status::ERROR_FROZEN_EXECUTABLE,
            Some(entry) => {
                entry.frozen = true;
                status::SUCCESS
            }
        }
    })
}

pub unsafe fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    with_runtime(|runtime| {
        let destroyed =
            runtime.index_of(Tag::Executable, executable.handle).is_some_and(|id| runtime.executables.destroy(id));
        if destroyed { status::SUCCESS } else { status::ERROR_INVALID_EXECUTABLE }
    })
}

pub unsafe fn hsa_executable_get_symbol_by_name(
    executable: hsa_executable_t,
    symbol_name: *const c_char,
    agent: *const hsa_agent_t,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if symbol_name.is_null() || symbol.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let Some(executable_id) = runtime.index_of(Tag::Executable, executable.handle) else {
            return status::ERROR_INVALID_EXECUTABLE;
        };
        let agent_index = if agent.is_null() {
            None
        } else {
            // SAFETY: non-null pointer to one agent handle.
            match runtime.agent(unsafe { agent.read() }.handle) {
                Some((index, _)) => Some(index),
                None => return status::ERROR_INVALID_AGENT,
            }
        };
        // SAFETY: the API passes a NUL-terminated name.
        let name = unsafe { core::ffi::CStr::from_ptr(symbol_name) };
        let Ok(name) = name.to_str() else { return status::ERROR_INVALID_SYMBOL_NAME };
        let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        let Some(entry) = executables.get(&executable_id) else { return status::ERROR_INVALID_EXECUTABLE };
        let found = entry
            .kernels
            .iter()
            .find(|kernel| kernel.symbol == name && agent_index.is_none_or(|index| index == kernel.agent_index));
        let found = found.cloned().map(ExecutableSymbol::Kernel).or_else(|| {
            // A defined variable: a program one for a null agent, an agent's for its agent.
            let variable =
                entry.variables.iter().find(|variable| variable.name == name && variable.agent_index == agent_index);
            variable.cloned().map(ExecutableSymbol::Variable)
        });
        let Some(found) = found else { return status::ERROR_INVALID_SYMBOL_NAME };
        drop(executables);
        let id = runtime.executables.symbol_id(executable_id, found);
        // SAFETY: non-null output pointer.
        unsafe { symbol.write(hsa_executable_symbol_t { handle: runtime.handle(Tag::Symbol, id) }) };
        status::SUCCESS
    })
}

pub unsafe fn hsa_executable_symbol_get_info(
    executable_symbol: hsa_executable_symbol_t,
    attribute: hsa_executable_symbol_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let symbol = runtime.index_of(Tag::Symbol, executable_symbol.handle).and_then(|id| {
            runtime
                .executables
                .symbols
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .get(&id)
                .map(|(_, symbol)| symbol.clone())
        });
        let Some(symbol) = symbol else { return status::ERROR_INVALID_EXECUTABLE_SYMBOL };
        if value.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let agent_handle = |index: usize| hsa_agent_t { handle: runtime.handle(Tag::Agent, index as u64) };
        let name = match &symbol {
            ExecutableSymbol::Kernel(kernel) => kernel.symbol.as_str(),
            ExecutableSymbol::Variable(variable) => variable.name.as_str(),
        };
        // SAFETY (all arms): `value` points to storage of the attribute's documented type; for
        // NAME, the caller sized it from NAME_LENGTH.
        unsafe {
            match attribute {
                symbol_info::NAME_LENGTH => return put(value, name.len() as u32),
                symbol_info::NAME => {
                    core::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len());
                    return status::SUCCESS;
                }
                // Code objects v3 and later have no modules (ROCr: an empty module name).
                symbol_info::MODULE_NAME_LENGTH => return put(value, 0u32),
                symbol_info::MODULE_NAME => return status::SUCCESS,
                symbol_info::IS_DEFINITION => return put(value, true),
                _ => {}
            }
            match &symbol {
                ExecutableSymbol::Kernel(kernel) => {
                    let metadata = &kernel.metadata;
                    match attribute {
                        symbol_info::TYPE => put(value, enums::SYMBOL_KIND_KERNEL),
                        symbol_info::AGENT => put(value, agent_handle(kernel.agent_index)),
                        // An agent's kernels link at program scope in ROCr's loader.
                        symbol_info::LINKAGE => put(value, enums::SYMBOL_LINKAGE_PROGRAM),
                        symbol_info::KERNEL_OBJECT => put(value, kernel.kernel_object()),
                        symbol_info::KERNEL_KERNARG_SEGMENT_SIZE => put(value, metadata.kernarg_segment_size),
                        // ROCr: 16 for every code-object v3+ kernel, whatever the metadata says.
                        symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT => put(value, 16u32),
                        symbol_info::KERNEL_GROUP_SEGMENT_SIZE => put(value, metadata.group_segment_fixed_size),
                        symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE => put(value, metadata.private_segment_fixed_size),
                        symbol_info::KERNEL_DYNAMIC_CALLSTACK => put(value, kernel.uses_dynamic_stack()),
                        symbol_info::KERNEL_CALL_CONVENTION => put(value, 0u32),
                        _ => status::ERROR_INVALID_ARGUMENT,
                    }
                }
                ExecutableSymbol::Variable(variable) => match attribute {
                    symbol_info::TYPE => put(value, enums::SYMBOL_KIND_VARIABLE),
                    // A program variable has no agent; ROCr answers INVALID_ARGUMENT.
                    symbol_info::AGENT => match variable.agent_index {
                        Some(index) => put(value, agent_handle(index)),
                        None => status::ERROR_INVALID_ARGUMENT,
                    },
                    symbol_info::LINKAGE => put(value, enums::SYMBOL_LINKAGE_PROGRAM),
                    symbol_info::VARIABLE_ADDRESS => put(value, variable.address),
                    symbol_info::VARIABLE_ALLOCATION => put(
                        value,
                        if variable.agent_index.is_some() {
                            enums::VARIABLE_ALLOCATION_AGENT
                        } else {
                            enums::VARIABLE_ALLOCATION_PROGRAM
                        },
                    ),
                    symbol_info::VARIABLE_SEGMENT => put(
                        value,
                        if variable.read_only {
                            enums::VARIABLE_SEGMENT_READONLY
                        } else {
                            enums::VARIABLE_SEGMENT_GLOBAL
                        },
                    ),
                    // The client owns the memory; its size and alignment are not declared.
                    symbol_info::VARIABLE_ALIGNMENT | symbol_info::VARIABLE_SIZE => put(value, 0u32),
                    symbol_info::VARIABLE_IS_CONST => put(value, variable.read_only),
                    _ => status::ERROR_INVALID_ARGUMENT,
                },
            }
        }
    })
}

pub unsafe fn hsa_amd_profiling_set_profiler_enabled(queue: *mut hsa_queue_t, enable: c_int) -> hsa_status_t {
    with_runtime(|runtime| match runtime.queue(queue as usize) {
        Some(queue) => {
            queue.set_profiling(enable != 0);
            status::SUCCESS
        }
        None => status::ERROR_INVALID_QUEUE,
    })
}

/// `hsa_amd_queue_priority_t` values outside LOW..=HIGH are INVALID_ARGUMENT (`hsa_ext_amd.h`).
pub unsafe fn hsa_amd_queue_set_priority(queue: *mut hsa_queue_t, priority: hsa_amd_queue_priority_t) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(queue) = runtime.queue(queue as usize) else { return status::ERROR_INVALID_QUEUE };
        if priority as usize >= super::scheduling::PRIORITY_LEVELS {
            return status::ERROR_INVALID_ARGUMENT;
        }
        queue.scheduling.priority.store(priority as u8, core::sync::atomic::Ordering::Release);
        status::SUCCESS
    })
}

/// A count that is not a multiple of 32, or a non-zero count with a null mask, is
/// INVALID_ARGUMENT; 0 restores every CU (`hsa_ext_amd.h`). Bits past the agent's CU count are
/// dropped, as `AqlQueue::SetCUMasking` trims them. No `HSA_CU_MASK` is modelled, so the mask is
/// never reduced.
pub unsafe fn hsa_amd_queue_cu_set_mask(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *const u32,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(queue) = runtime.queue(queue as usize) else { return status::ERROR_INVALID_QUEUE };
        if !num_cu_mask_count.is_multiple_of(32) || (num_cu_mask_count != 0 && cu_mask.is_null()) {
            return status::ERROR_INVALID_ARGUMENT;
        }
        let mask: &[u32] = if num_cu_mask_count == 0 {
            &[]
        } else {
            // SAFETY: the caller passes `num_cu_mask_count` bits, whole 32-bit words, at `cu_mask`.
            unsafe { core::slice::from_raw_parts(cu_mask, num_cu_mask_count as usize / 32) }
        };
        let compute_units = runtime.compute_units(queue.agent_index);
        queue.scheduling.set_cu_mask(mask, compute_units);
        status::SUCCESS
    })
}

/// A count of 0 or not a multiple of 32, or a null mask, is INVALID_ARGUMENT (`hsa_ext_amd.h`).
pub unsafe fn hsa_amd_queue_cu_get_mask(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *mut u32,
) -> hsa_status_t {
    with_runtime(|runtime| {
        let Some(queue) = runtime.queue(queue as usize) else { return status::ERROR_INVALID_QUEUE };
        if num_cu_mask_count == 0 || !num_cu_mask_count.is_multiple_of(32) || cu_mask.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: the caller provides room for `num_cu_mask_count` bits, whole words, at `cu_mask`.
        let out = unsafe { core::slice::from_raw_parts_mut(cu_mask, num_cu_mask_count as usize / 32) };
        let compute_units = runtime.compute_units(queue.agent_index);
        queue.scheduling.cu_mask(out, compute_units);
        status::SUCCESS
    })
}

pub unsafe fn hsa_amd_profiling_get_dispatch_time(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_dispatch_time_t,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if runtime.agent(agent.handle).is_none() {
            return status::ERROR_INVALID_AGENT;
        }
        let Some(slot) = signals::slot(signal.handle) else { return status::ERROR_INVALID_SIGNAL };
        if time.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // The signal holds device ticks; ROCr returns them converted to the system domain.
        let (start, end) = slot.timestamps();
        let (start, end) = (super::clock::device_to_system(start), super::clock::device_to_system(end));
        // SAFETY: non-null output pointer.
        unsafe { time.write(hsa_amd_profiling_dispatch_time_t { start, end }) };
        status::SUCCESS
    })
}

pub unsafe fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: hsa_agent_t,
    agent_tick: u64,
    system_tick: *mut u64,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if runtime.agent(agent.handle).is_none() {
            return status::ERROR_INVALID_AGENT;
        }
        if system_tick.is_null() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null output pointer.
        unsafe { system_tick.write(super::clock::device_to_system(agent_tick)) };
        status::SUCCESS
    })
}

pub unsafe fn hsa_amd_register_system_event_handler(
    callback: hsa_amd_system_event_callback_t,
    data: *mut c_void,
) -> hsa_status_t {
    with_runtime(|runtime| {
        if callback.is_none() {
            return status::ERROR_INVALID_ARGUMENT;
        }
        // ROCr keeps every registration (`Runtime::SetCustomSystemEventHandler` appends) and
        // calls them all on an event.
        runtime.event_handlers.lock().unwrap_or_else(|poison| poison.into_inner()).push((callback, data as usize));
        status::SUCCESS
    })
}
