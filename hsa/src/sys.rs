//! C-level HSA types, constants and the one function table both providers fill.
//!
//! Names and signatures are exactly those of `hsa.h` and `hsa_ext_amd.h` (ROCr 5.x); the
//! conformance test compiles a C program against the real headers and compares every constant.
#![allow(non_camel_case_types, non_upper_case_globals)]

use core::ffi::{c_char, c_int, c_void};

pub type hsa_status_t = u32;
pub type hsa_signal_value_t = i64;
pub type hsa_system_info_t = u32;
pub type hsa_agent_info_t = u32;
pub type hsa_isa_info_t = u32;
pub type hsa_amd_memory_pool_info_t = u32;
pub type hsa_amd_agent_memory_pool_info_t = u32;
pub type hsa_queue_type32_t = u32;
pub type hsa_amd_queue_priority_t = u32;
pub type hsa_signal_condition_t = u32;
pub type hsa_wait_state_t = u32;
pub type hsa_profile_t = u32;
pub type hsa_default_float_rounding_mode_t = u32;
pub type hsa_executable_symbol_info_t = u32;

macro_rules! handle_type {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name { pub handle: u64 }
    )*};
}
handle_type!(
    hsa_agent_t,
    hsa_signal_t,
    hsa_amd_memory_pool_t,
    hsa_isa_t,
    hsa_code_object_reader_t,
    hsa_executable_t,
    hsa_loaded_code_object_t,
    hsa_executable_symbol_t,
    hsa_signal_group_t,
    hsa_code_object_t,
    hsa_ext_image_t,
    hsa_ext_sampler_t,
    hsa_ext_program_t,
    hsa_cache_t,
    hsa_wavefront_t,
    hsa_region_t,
    hsa_code_symbol_t,
    hsa_callback_data_t,
);

/// `hsa_amd_ipc_memory_t` (and `hsa_amd_ipc_signal_t`): eight `u32`s naming shared memory.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsa_amd_ipc_memory_t {
    pub handle: [u32; 8],
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct hsa_dim3_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_pitched_ptr_t` (`hsa_ext_amd.h`): a 3D region's base, and its row and slice pitches in
/// bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_pitched_ptr_t {
    pub base: *mut core::ffi::c_void,
    pub pitch: usize,
    pub slice: usize,
}

/// `hsa_ext_control_directives_t` (`hsa_ext_finalize.h`), passed by value to
/// `hsa_ext_program_finalize`: 144 bytes, 8-aligned, as the C compiler lays it out. The soft
/// runtime has no finalizer, so its fields are never read.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct hsa_ext_control_directives_t(pub [u8; 144]);

/// The C `hsa_queue_t`; on both providers it is the first member of an `amd_queue_t`.
pub type hsa_queue_t = aqueduct_abi::HsaQueue;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct hsa_amd_profiling_dispatch_time_t {
    pub start: u64,
    pub end: u64,
}

/// `hsa_amd_hdp_flush_t`: the agent's HDP flush registers (null where the memory path needs
/// none).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_snake_case)] // the C field names
pub struct hsa_amd_hdp_flush_t {
    pub HDP_MEM_FLUSH_CNTL: *mut u32,
    pub HDP_REG_FLUSH_CNTL: *mut u32,
}

/// `hsa_amd_memory_pool_link_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct hsa_amd_memory_pool_link_info_t {
    pub min_latency: u32,
    pub max_latency: u32,
    pub min_bandwidth: u32,
    pub max_bandwidth: u32,
    pub atomic_support_32bit: bool,
    pub atomic_support_64bit: bool,
    pub coherent_support: bool,
    pub link_type: u32,
    pub numa_distance: u32,
}

/// `hsa_amd_gpu_memory_fault_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct hsa_amd_gpu_memory_fault_info_t {
    pub agent: hsa_agent_t,
    pub virtual_address: u64,
    pub fault_reason_mask: u32,
}

/// `hsa_amd_event_t` (ROCr 5.2.3: the union holds only the memory fault).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct hsa_amd_event_t {
    pub event_type: u32,
    pub memory_fault: hsa_amd_gpu_memory_fault_info_t,
}

pub type hsa_amd_system_event_callback_t =
    Option<unsafe extern "C" fn(event: *const hsa_amd_event_t, data: *mut c_void) -> hsa_status_t>;
pub type hsa_queue_error_callback_t =
    Option<unsafe extern "C" fn(status: hsa_status_t, source: *mut hsa_queue_t, data: *mut c_void)>;
/// `hsa_amd_pointer_info_t` (`hsa_ext_amd.h` of 5.2.3, with `global_flags`): 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_amd_pointer_info_t {
    pub size: u32,
    /// `hsa_amd_pointer_type_t`: 0 unknown, 1 HSA, 2 locked, 3 graphics, 4 IPC.
    pub type_: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: hsa_agent_t,
    pub global_flags: u32,
}
const _: () = assert!(size_of::<hsa_amd_pointer_info_t>() == 56);

/// `hsa_amd_deallocation_callback_t`: called with the pointer and the registration's data when
/// an allocation is freed.
pub type hsa_amd_deallocation_callback_t = Option<unsafe extern "C" fn(ptr: *mut c_void, user_data: *mut c_void)>;
pub type hsa_agent_callback_t = Option<unsafe extern "C" fn(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t>;
pub type hsa_isa_callback_t = Option<unsafe extern "C" fn(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t>;
pub type hsa_amd_memory_pool_callback_t =
    Option<unsafe extern "C" fn(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t>;

/// `hsa_status_t` values.
pub mod status {
    use super::hsa_status_t;
    pub const SUCCESS: hsa_status_t = 0x0;
    pub const INFO_BREAK: hsa_status_t = 0x1;
    pub const ERROR: hsa_status_t = 0x1000;
    pub const ERROR_INVALID_ARGUMENT: hsa_status_t = 0x1001;
    pub const ERROR_INVALID_QUEUE_CREATION: hsa_status_t = 0x1002;
    pub const ERROR_INVALID_ALLOCATION: hsa_status_t = 0x1003;
    pub const ERROR_INVALID_AGENT: hsa_status_t = 0x1004;
    pub const ERROR_INVALID_REGION: hsa_status_t = 0x1005;
    pub const ERROR_INVALID_SIGNAL: hsa_status_t = 0x1006;
    pub const ERROR_INVALID_QUEUE: hsa_status_t = 0x1007;
    pub const ERROR_OUT_OF_RESOURCES: hsa_status_t = 0x1008;
    pub const ERROR_INVALID_PACKET_FORMAT: hsa_status_t = 0x1009;
    pub const ERROR_RESOURCE_FREE: hsa_status_t = 0x100A;
    pub const ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;
    pub const ERROR_REFCOUNT_OVERFLOW: hsa_status_t = 0x100C;
    pub const ERROR_INCOMPATIBLE_ARGUMENTS: hsa_status_t = 0x100D;
    pub const ERROR_INVALID_INDEX: hsa_status_t = 0x100E;
    pub const ERROR_INVALID_ISA: hsa_status_t = 0x100F;
    pub const ERROR_INVALID_CODE_OBJECT: hsa_status_t = 0x1010;
    pub const ERROR_INVALID_EXECUTABLE: hsa_status_t = 0x1011;
    pub const ERROR_FROZEN_EXECUTABLE: hsa_status_t = 0x1012;
    pub const ERROR_INVALID_SYMBOL_NAME: hsa_status_t = 0x1013;
    pub const ERROR_VARIABLE_ALREADY_DEFINED: hsa_status_t = 0x1014;
    pub const ERROR_VARIABLE_UNDEFINED: hsa_status_t = 0x1015;
    pub const ERROR_EXCEPTION: hsa_status_t = 0x1016;
    pub const ERROR_INVALID_ISA_NAME: hsa_status_t = 0x1017;
    pub const ERROR_INVALID_CODE_SYMBOL: hsa_status_t = 0x1018;
    pub const ERROR_INVALID_EXECUTABLE_SYMBOL: hsa_status_t = 0x1019;
    pub const ERROR_INVALID_FILE: hsa_status_t = 0x1020;
    pub const ERROR_INVALID_CODE_OBJECT_READER: hsa_status_t = 0x1021;
    pub const ERROR_INVALID_CACHE: hsa_status_t = 0x1022;
    pub const ERROR_INVALID_WAVEFRONT: hsa_status_t = 0x1023;
    pub const ERROR_INVALID_SIGNAL_GROUP: hsa_status_t = 0x1024;
    pub const ERROR_INVALID_RUNTIME_STATE: hsa_status_t = 0x1025;
    pub const ERROR_FATAL: hsa_status_t = 0x1026;
    pub const ERROR_INVALID_MEMORY_POOL: hsa_status_t = 40;
    pub const ERROR_MEMORY_APERTURE_VIOLATION: hsa_status_t = 41;
    pub const ERROR_ILLEGAL_INSTRUCTION: hsa_status_t = 42;
    pub const ERROR_MEMORY_FAULT: hsa_status_t = 43;
    /// Not an error: `hsa_amd_queue_cu_set_mask` applied the mask, less what `HSA_CU_MASK` disables.
    pub const CU_MASK_REDUCED: hsa_status_t = 44;
}

/// `hsa_system_info_t` values.
pub mod system_info {
    pub const VERSION_MAJOR: u32 = 0;
    pub const VERSION_MINOR: u32 = 1;
    pub const TIMESTAMP: u32 = 2;
    pub const TIMESTAMP_FREQUENCY: u32 = 3;
    pub const SIGNAL_MAX_WAIT: u32 = 4;
    pub const ENDIANNESS: u32 = 5;
    pub const MACHINE_MODEL: u32 = 6;
    pub const EXTENSIONS: u32 = 7;
    pub const AMD_BUILD_VERSION: u32 = 0x200;
    pub const AMD_SVM_SUPPORTED: u32 = 0x201;
    pub const AMD_SVM_ACCESSIBLE_BY_DEFAULT: u32 = 0x202;
}

/// `hsa_agent_info_t` and `hsa_amd_agent_info_t` values.
pub mod agent_info {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const FEATURE: u32 = 2;
    pub const PROFILE: u32 = 4;
    pub const WAVEFRONT_SIZE: u32 = 6;
    pub const WORKGROUP_MAX_DIM: u32 = 7;
    pub const WORKGROUP_MAX_SIZE: u32 = 8;
    pub const GRID_MAX_DIM: u32 = 9;
    pub const GRID_MAX_SIZE: u32 = 10;
    pub const QUEUES_MAX: u32 = 12;
    pub const QUEUE_MIN_SIZE: u32 = 13;
    pub const QUEUE_MAX_SIZE: u32 = 14;
    pub const QUEUE_TYPE: u32 = 15;
    pub const NODE: u32 = 16;
    pub const DEVICE: u32 = 17;
    pub const ISA: u32 = 19;
    pub const AMD_CHIP_ID: u32 = 0xA000;
    pub const AMD_CACHELINE_SIZE: u32 = 0xA001;
    pub const AMD_COMPUTE_UNIT_COUNT: u32 = 0xA002;
    pub const AMD_PRODUCT_NAME: u32 = 0xA009;
    pub const AMD_UUID: u32 = 0xA011;
    pub const MACHINE_MODEL: u32 = 3;
    pub const DEFAULT_FLOAT_ROUNDING_MODE: u32 = 5;
    pub const FBARRIER_MAX_SIZE: u32 = 11;
    pub const CACHE_SIZE: u32 = 18;
    pub const VERSION_MAJOR: u32 = 21;
    pub const VERSION_MINOR: u32 = 22;
    pub const FAST_F16_OPERATION: u32 = 24;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
    pub const AMD_DRIVER_NODE_ID: u32 = 0xA004;
    pub const AMD_MAX_ADDRESS_WATCH_POINTS: u32 = 0xA005;
    pub const AMD_BDFID: u32 = 0xA006;
    pub const AMD_MAX_WAVES_PER_CU: u32 = 0xA00A;
    pub const AMD_NUM_SIMDS_PER_CU: u32 = 0xA00B;
    pub const AMD_NUM_SHADER_ENGINES: u32 = 0xA00C;
    pub const AMD_NUM_SHADER_ARRAYS_PER_SE: u32 = 0xA00D;
    pub const AMD_ASIC_REVISION: u32 = 0xA012;
    /// The HDP flush registers, `hsa_amd_hdp_flush_t` (hsa_ext_amd.h).
    pub const AMD_HDP_FLUSH: u32 = 0xA00E;
    pub const EXTENSIONS: u32 = 20;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 23;
    pub const AMD_MEMORY_WIDTH: u32 = 0xA007;
    pub const AMD_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
    pub const AMD_DOMAIN: u32 = 0xA00F;
    pub const AMD_COOPERATIVE_QUEUES: u32 = 0xA010;
    pub const AMD_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
    pub const AMD_COOPERATIVE_COMPUTE_UNIT_COUNT: u32 = 0xA014;
    /// `HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS`, the first of `hsa_ext_image.h`'s agent
    /// attributes (0x3000 to 0x300C).
    pub const EXT_IMAGE_FIRST: u32 = 0x3000;
}

/// `hsa_device_type_t`.
pub mod device_type {
    pub const CPU: u32 = 0;
    pub const GPU: u32 = 1;
    pub const DSP: u32 = 2;
}

/// `hsa_agent_feature_t`.
pub mod agent_feature {
    pub const KERNEL_DISPATCH: u32 = 1;
    pub const AGENT_DISPATCH: u32 = 2;
}

/// `hsa_isa_info_t` values.
pub mod isa_info {
    pub const NAME_LENGTH: u32 = 0;
    pub const NAME: u32 = 1;
    pub const MACHINE_MODELS: u32 = 5;
    pub const PROFILES: u32 = 6;
    pub const DEFAULT_FLOAT_ROUNDING_MODES: u32 = 7;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 8;
    pub const FAST_F16_OPERATION: u32 = 9;
    pub const WORKGROUP_MAX_DIM: u32 = 12;
    pub const WORKGROUP_MAX_SIZE: u32 = 13;
    pub const GRID_MAX_DIM: u32 = 14;
    pub const GRID_MAX_SIZE: u32 = 16;
    pub const FBARRIER_MAX_SIZE: u32 = 17;
}

/// `hsa_amd_memory_pool_info_t`, segments and global flags.
pub mod pool_info {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
    pub const ACCESSIBLE_BY_ALL: u32 = 15;
    pub const ALLOC_MAX_SIZE: u32 = 16;

    pub const SEGMENT_GLOBAL: u32 = 0;
    pub const SEGMENT_READONLY: u32 = 1;
    pub const SEGMENT_PRIVATE: u32 = 2;
    pub const SEGMENT_GROUP: u32 = 3;

    pub const GLOBAL_FLAG_KERNARG_INIT: u32 = 1;
    pub const GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
    pub const GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;
}

/// `hsa_amd_agent_memory_pool_info_t` and `hsa_amd_memory_pool_access_t`.
pub mod agent_pool_info {
    pub const ACCESS: u32 = 0;
    pub const NUM_LINK_HOPS: u32 = 1;
    pub const LINK_INFO: u32 = 2;

    pub const ACCESS_NEVER_ALLOWED: u32 = 0;
    pub const ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
    pub const ACCESS_DISALLOWED_BY_DEFAULT: u32 = 2;

    pub const LINK_TYPE_HYPERTRANSPORT: u32 = 0;
    pub const LINK_TYPE_QPI: u32 = 1;
    pub const LINK_TYPE_PCIE: u32 = 2;
    pub const LINK_TYPE_INFINIBAND: u32 = 3;
    pub const LINK_TYPE_XGMI: u32 = 4;
}

/// `hsa_amd_event_type_t`, `hsa_amd_memory_fault_reason_t` and `hsa_amd_signal_attribute_t`.
pub mod amd_event {
    pub const GPU_MEMORY_FAULT_EVENT: u32 = 0;

    pub const FAULT_PAGE_NOT_PRESENT: u32 = 1 << 0;
    pub const FAULT_READ_ONLY: u32 = 1 << 1;
    pub const FAULT_NX: u32 = 1 << 2;
    pub const FAULT_HOST_ONLY: u32 = 1 << 3;

    pub const SIGNAL_AMD_GPU_ONLY: u64 = 1;
    pub const SIGNAL_IPC: u64 = 2;
}

/// `hsa_signal_condition_t`, `hsa_wait_state_t`, `hsa_queue_type_t`, `hsa_amd_queue_priority_t`,
/// `hsa_profile_t`.
pub mod enums {
    pub const SIGNAL_CONDITION_EQ: u32 = 0;
    pub const SIGNAL_CONDITION_NE: u32 = 1;
    pub const SIGNAL_CONDITION_LT: u32 = 2;
    pub const SIGNAL_CONDITION_GTE: u32 = 3;
    pub const WAIT_STATE_BLOCKED: u32 = 0;
    pub const WAIT_STATE_ACTIVE: u32 = 1;
    pub const QUEUE_TYPE_MULTI: u32 = 0;
    pub const QUEUE_TYPE_SINGLE: u32 = 1;
    pub const QUEUE_PRIORITY_LOW: u32 = 0;
    pub const QUEUE_PRIORITY_NORMAL: u32 = 1;
    pub const QUEUE_PRIORITY_HIGH: u32 = 2;
    pub const PROFILE_BASE: u32 = 0;
    pub const PROFILE_FULL: u32 = 1;
    pub const DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT: u32 = 0;
    pub const DEFAULT_FLOAT_ROUNDING_MODE_NEAR: u32 = 2;
    pub const MACHINE_MODEL_LARGE: u32 = 1;
    pub const SYMBOL_KIND_VARIABLE: u32 = 0;
    pub const SYMBOL_KIND_KERNEL: u32 = 1;
    pub const SYMBOL_LINKAGE_PROGRAM: u32 = 1;
    pub const VARIABLE_ALLOCATION_AGENT: u32 = 0;
    pub const VARIABLE_ALLOCATION_PROGRAM: u32 = 1;
    pub const VARIABLE_SEGMENT_GLOBAL: u32 = 0;
    pub const VARIABLE_SEGMENT_READONLY: u32 = 1;
    pub const EXECUTABLE_STATE_UNFROZEN: u32 = 0;
    pub const EXECUTABLE_STATE_FROZEN: u32 = 1;
}

/// `hsa_executable_symbol_info_t` values.
pub mod symbol_info {
    pub const TYPE: u32 = 0;
    pub const NAME_LENGTH: u32 = 1;
    pub const NAME: u32 = 2;
    pub const AGENT: u32 = 20;
    pub const KERNEL_OBJECT: u32 = 22;
    pub const KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
    pub const KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
    pub const KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
    pub const KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
    pub const KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
    pub const MODULE_NAME_LENGTH: u32 = 3;
    pub const MODULE_NAME: u32 = 4;
    pub const LINKAGE: u32 = 5;
    pub const VARIABLE_ALLOCATION: u32 = 6;
    pub const VARIABLE_SEGMENT: u32 = 7;
    pub const VARIABLE_ALIGNMENT: u32 = 8;
    pub const VARIABLE_SIZE: u32 = 9;
    pub const VARIABLE_IS_CONST: u32 = 10;
    pub const IS_DEFINITION: u32 = 17;
    pub const KERNEL_CALL_CONVENTION: u32 = 18;
    pub const VARIABLE_ADDRESS: u32 = 21;
}

/// Declares the table once. Its two fillers come from the same list, each in its provider's
/// module: the ROCr loader (`rocr.rs`) and the soft binding (`soft/exports.rs`).
macro_rules! hsa_api {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        /// Every HSA entry point the engine uses, as C function pointers.
        #[derive(Clone, Copy)]
        pub struct HsaApi {
            $( pub $name: unsafe extern "C" fn($($ty),*) -> $ret, )*
        }

        impl HsaApi {
            /// The exported symbol names, in table order.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($name)),*];
        }
    };
}

/// Calls `$callback!` with every HSA entry point the engine uses, one `fn name(args) -> ret;`
/// each, with the names and C signatures of `hsa.h` and `hsa_ext_amd.h`: the one list behind the
/// function table here and the exports of the soft runtime's shared library (`soft-hsa/`). The
/// caller needs this module's types in scope.
#[macro_export]
macro_rules! with_hsa_entry_points {
    ($callback:ident) => {
        $callback! {
            fn hsa_init() -> hsa_status_t;
            fn hsa_shut_down() -> hsa_status_t;
            fn hsa_status_string(status: hsa_status_t, string: *mut *const c_char) -> hsa_status_t;
            fn hsa_system_get_info(attribute: hsa_system_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_iterate_agents(callback: hsa_agent_callback_t, data: *mut c_void) -> hsa_status_t;
            fn hsa_agent_get_info(agent: hsa_agent_t, attribute: hsa_agent_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_agent_iterate_isas(agent: hsa_agent_t, callback: hsa_isa_callback_t, data: *mut c_void) -> hsa_status_t;
            fn hsa_isa_get_info_alt(isa: hsa_isa_t, attribute: hsa_isa_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_amd_agent_iterate_memory_pools(agent: hsa_agent_t, callback: hsa_amd_memory_pool_callback_t, data: *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_pool_get_info(pool: hsa_amd_memory_pool_t, attribute: hsa_amd_memory_pool_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_amd_agent_memory_pool_get_info(agent: hsa_agent_t, pool: hsa_amd_memory_pool_t, attribute: hsa_amd_agent_memory_pool_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_pool_allocate(pool: hsa_amd_memory_pool_t, size: usize, flags: u32, ptr: *mut *mut c_void) -> hsa_status_t;
            fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t;
            fn hsa_amd_agents_allow_access(num_agents: u32, agents: *const hsa_agent_t, flags: *const u32, ptr: *const c_void) -> hsa_status_t;
            fn hsa_queue_create(agent: hsa_agent_t, size: u32, type_: hsa_queue_type32_t, callback: hsa_queue_error_callback_t, data: *mut c_void, private_segment_size: u32, group_segment_size: u32, queue: *mut *mut hsa_queue_t) -> hsa_status_t;
            fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t;
            fn hsa_queue_load_read_index_scacquire(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_load_write_index_relaxed(queue: *const hsa_queue_t) -> u64;
            fn hsa_queue_add_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> u64;
            fn hsa_queue_cas_write_index_scacq_screl(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
            fn hsa_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, signal: *mut hsa_signal_t) -> hsa_status_t;
            fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t;
            fn hsa_signal_load_scacquire(signal: hsa_signal_t) -> hsa_signal_value_t;
            fn hsa_signal_load_relaxed(signal: hsa_signal_t) -> hsa_signal_value_t;
            fn hsa_signal_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_add_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_subtract_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
            fn hsa_signal_wait_scacquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t;
            fn hsa_amd_signal_wait_any(signal_count: u32, signals: *mut hsa_signal_t, conds: *mut hsa_signal_condition_t, values: *mut hsa_signal_value_t, timeout_hint: u64, wait_hint: hsa_wait_state_t, satisfying_value: *mut hsa_signal_value_t) -> u32;
            fn hsa_code_object_reader_create_from_memory(code_object: *const c_void, size: usize, code_object_reader: *mut hsa_code_object_reader_t) -> hsa_status_t;
            fn hsa_code_object_reader_destroy(code_object_reader: hsa_code_object_reader_t) -> hsa_status_t;
            fn hsa_executable_create_alt(profile: hsa_profile_t, default_float_rounding_mode: hsa_default_float_rounding_mode_t, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t;
            fn hsa_executable_load_agent_code_object(executable: hsa_executable_t, agent: hsa_agent_t, code_object_reader: hsa_code_object_reader_t, options: *const c_char, loaded_code_object: *mut hsa_loaded_code_object_t) -> hsa_status_t;
            fn hsa_executable_freeze(executable: hsa_executable_t, options: *const c_char) -> hsa_status_t;
            fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t;
            fn hsa_executable_get_symbol_by_name(executable: hsa_executable_t, symbol_name: *const c_char, agent: *const hsa_agent_t, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t;
            fn hsa_executable_symbol_get_info(executable_symbol: hsa_executable_symbol_t, attribute: hsa_executable_symbol_info_t, value: *mut c_void) -> hsa_status_t;
            fn hsa_amd_queue_set_priority(queue: *mut hsa_queue_t, priority: hsa_amd_queue_priority_t) -> hsa_status_t;
            fn hsa_amd_queue_cu_set_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *const u32) -> hsa_status_t;
            fn hsa_amd_queue_cu_get_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *mut u32) -> hsa_status_t;
            fn hsa_amd_profiling_set_profiler_enabled(queue: *mut hsa_queue_t, enable: c_int) -> hsa_status_t;
            fn hsa_amd_profiling_get_dispatch_time(agent: hsa_agent_t, signal: hsa_signal_t, time: *mut hsa_amd_profiling_dispatch_time_t) -> hsa_status_t;
            fn hsa_amd_profiling_convert_tick_to_system_domain(agent: hsa_agent_t, agent_tick: u64, system_tick: *mut u64) -> hsa_status_t;
            fn hsa_amd_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, attributes: u64, signal: *mut hsa_signal_t) -> hsa_status_t;
            fn hsa_amd_register_system_event_handler(callback: hsa_amd_system_event_callback_t, data: *mut c_void) -> hsa_status_t;
        }
    };
}

with_hsa_entry_points!(hsa_api);
