//! ABI conformance: aqueduct's Rust layouts and constants against ROCr's real C headers.
//!
//! `tests/conformance/layout.c` is compiled against `/usr/include/hsa` and prints one fact per line
//! (sizes, alignments, field offsets and widths, enum values). Every printed fact must match a Rust
//! expectation below and every Rust expectation must have a printed fact, so neither side can drift
//! or silently shrink. A source scan of `src/sys.rs` also requires every constant there to be listed.
//!
//! The 64-byte AMDHSA kernel descriptor (`<kernel>.kd`) is not in these headers (they only carry the
//! legacy 256-byte `amd_kernel_code_t`, checked here as a sanity line); its layout is checked against
//! compiled code objects by the code-object tests instead.
//!
//! Without headers or a C compiler the test prints `SKIPPED: ...` (outside the libtest capture, so
//! it shows in logs) unless `AQUEDUCT_REQUIRE_HSA_HEADERS=1`, in which case it fails.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use aqueduct_abi::packet::{DISPATCH_SETUP_DIMENSIONS_SHIFT, DISPATCH_SETUP_DIMENSIONS_WIDTH, amd_format, header_bits};
use aqueduct_abi::queue::queue_feature;
use aqueduct_abi::{
    AgentDispatchPacket, AmdQueue, AmdSignal, BarrierAndPacket, BarrierOrPacket, BarrierValuePacket, FenceScope,
    HsaQueue, KernelDispatchPacket, PacketHeader, PacketType, QueueProperties, QueueType, SignalCondition, SignalKind,
    VendorPacketHeader,
};
use aqueduct_hsa::sys;

const HSA_HEADER: &str = "/usr/include/hsa/hsa.h";
const REQUIRE_VARIABLE: &str = "AQUEDUCT_REQUIRE_HSA_HEADERS";

/// Modules of `src/sys.rs` whose every `pub const` must appear in the expectation list.
const SYS_CONSTANT_MODULES: &[&str] = &[
    "status",
    "system_info",
    "agent_info",
    "device_type",
    "agent_pool_info",
    "amd_event",
    "agent_feature",
    "isa_info",
    "pool_info",
    "enums",
    "symbol_info",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    Equal,
    /// Rust deliberately over-aligns AQL packets to their 64-byte ring slot; C only promises 8.
    /// Rust's alignment must still be a multiple of C's so a C-placed packet is never misaligned
    /// for the narrower requirement.
    MultipleOf,
}

#[derive(Debug)]
struct Expectation {
    key: String,
    value: i64,
    /// The Rust item that produced the value, for error messages and the sys.rs coverage scan.
    source: String,
    compare: Compare,
}

fn field_size<T, F>(_project: impl for<'a> Fn(&'a T) -> &'a F) -> usize {
    size_of::<F>()
}

/// size, alignment, and every field's offset and width of one C struct.
macro_rules! layout {
    ($out:ident, $c:literal => $ty:ty, align $cmp:ident, { $($cf:literal => $rf:ident),* $(,)? }) => {{
        $out.push(Expectation {
            key: concat!("sizeof ", $c).to_string(),
            value: size_of::<$ty>() as i64,
            source: concat!("size_of::<", stringify!($ty), ">()").to_string(),
            compare: Compare::Equal,
        });
        $out.push(Expectation {
            key: concat!("alignof ", $c).to_string(),
            value: align_of::<$ty>() as i64,
            source: concat!("align_of::<", stringify!($ty), ">()").to_string(),
            compare: Compare::$cmp,
        });
        $(
            $out.push(Expectation {
                key: concat!("offsetof ", $c, " ", $cf).to_string(),
                value: offset_of!($ty, $rf) as i64,
                source: concat!("offset_of!(", stringify!($ty), ", ", stringify!($rf), ")").to_string(),
                compare: Compare::Equal,
            });
            $out.push(Expectation {
                key: concat!("fieldsize ", $c, " ", $cf).to_string(),
                value: field_size(|value: &$ty| &value.$rf) as i64,
                source: concat!("size of ", stringify!($ty), "::", stringify!($rf)).to_string(),
                compare: Compare::Equal,
            });
        )*
    }};
}

/// Enum values; several Rust items may mirror one C name and all must match.
macro_rules! enums {
    ($out:ident, { $($c:literal => $r:expr),* $(,)? }) => {
        $(
            $out.push(Expectation {
                key: concat!("enum ", $c).to_string(),
                value: ($r) as i64,
                source: stringify!($r).to_string(),
                compare: Compare::Equal,
            });
        )*
    };
}

/// Width and lowest position of the header bits that make `PacketHeader::barrier` true: derived
/// from behaviour because the accessor masks the bit inline rather than via a named width.
fn barrier_bits() -> (i64, i64) {
    let bits: Vec<u16> = (0..16).filter(|bit| PacketHeader(1 << bit).barrier()).collect();
    (bits.len() as i64, bits.first().map_or(-1, |&bit| bit as i64))
}

fn expectations() -> Vec<Expectation> {
    let mut out = Vec::new();

    layout!(out, "hsa_kernel_dispatch_packet_t" => KernelDispatchPacket, align MultipleOf, {
        "header" => header,
        "setup" => setup,
        "workgroup_size_x" => workgroup_size_x,
        "workgroup_size_y" => workgroup_size_y,
        "workgroup_size_z" => workgroup_size_z,
        "reserved0" => reserved0,
        "grid_size_x" => grid_size_x,
        "grid_size_y" => grid_size_y,
        "grid_size_z" => grid_size_z,
        "private_segment_size" => private_segment_size,
        "group_segment_size" => group_segment_size,
        "kernel_object" => kernel_object,
        "kernarg_address" => kernarg_address,
        "reserved2" => reserved2,
        "completion_signal" => completion_signal,
    });
    layout!(out, "hsa_agent_dispatch_packet_t" => AgentDispatchPacket, align MultipleOf, {
        "header" => header,
        "type" => type_,
        "reserved0" => reserved0,
        "return_address" => return_address,
        "arg" => arg,
        "reserved2" => reserved2,
        "completion_signal" => completion_signal,
    });
    layout!(out, "hsa_barrier_and_packet_t" => BarrierAndPacket, align MultipleOf, {
        "header" => header,
        "reserved0" => reserved0,
        "reserved1" => reserved1,
        "dep_signal" => dep_signal,
        "reserved2" => reserved2,
        "completion_signal" => completion_signal,
    });
    layout!(out, "hsa_barrier_or_packet_t" => BarrierOrPacket, align MultipleOf, {
        "header" => header,
        "reserved0" => reserved0,
        "reserved1" => reserved1,
        "dep_signal" => dep_signal,
        "reserved2" => reserved2,
        "completion_signal" => completion_signal,
    });
    layout!(out, "hsa_amd_vendor_packet_header_t" => VendorPacketHeader, align Equal, {
        "header" => header,
        "AmdFormat" => amd_format,
        "reserved" => reserved,
    });
    layout!(out, "hsa_amd_barrier_value_packet_t" => BarrierValuePacket, align MultipleOf, {
        "header" => header,
        "reserved0" => reserved0,
        "signal" => signal,
        "value" => value,
        "mask" => mask,
        "cond" => cond,
        "reserved1" => reserved1,
        "reserved2" => reserved2,
        "reserved3" => reserved3,
        "completion_signal" => completion_signal,
    });
    layout!(out, "hsa_queue_t" => HsaQueue, align Equal, {
        "type" => type_,
        "features" => features,
        "base_address" => base_address,
        "doorbell_signal" => doorbell_signal,
        "size" => size,
        "reserved1" => reserved1,
        "id" => id,
    });
    layout!(out, "amd_queue_t" => AmdQueue, align Equal, {
        "hsa_queue" => hsa_queue,
        "reserved1" => reserved1,
        "write_dispatch_id" => write_dispatch_id,
        "group_segment_aperture_base_hi" => group_segment_aperture_base_hi,
        "private_segment_aperture_base_hi" => private_segment_aperture_base_hi,
        "max_cu_id" => max_cu_id,
        "max_wave_id" => max_wave_id,
        "max_legacy_doorbell_dispatch_id_plus_1" => max_legacy_doorbell_dispatch_id_plus_1,
        "legacy_doorbell_lock" => legacy_doorbell_lock,
        "reserved2" => reserved2,
        "read_dispatch_id" => read_dispatch_id,
        "read_dispatch_id_field_base_byte_offset" => read_dispatch_id_field_base_byte_offset,
        "compute_tmpring_size" => compute_tmpring_size,
        "scratch_resource_descriptor" => scratch_resource_descriptor,
        "scratch_backing_memory_location" => scratch_backing_memory_location,
        "scratch_backing_memory_byte_size" => scratch_backing_memory_byte_size,
        "scratch_wave64_lane_byte_size" => scratch_wave64_lane_byte_size,
        "queue_properties" => queue_properties,
        "reserved3" => reserved3,
        "queue_inactive_signal" => queue_inactive_signal,
        "reserved4" => reserved4,
    });
    // The two C unions map onto one Rust field each: the doorbell pointer lives in `value`, and
    // `reserved2` aliases `queue_ptr`.
    layout!(out, "amd_signal_t" => AmdSignal, align Equal, {
        "kind" => kind,
        "value" => value,
        "hardware_doorbell_ptr" => value,
        "event_mailbox_ptr" => event_mailbox_ptr,
        "event_id" => event_id,
        "reserved1" => reserved1,
        "start_ts" => start_ts,
        "end_ts" => end_ts,
        "queue_ptr" => queue_ptr,
        "reserved2" => queue_ptr,
        "reserved3" => reserved3,
    });
    // Passed by value to `hsa_ext_program_finalize`; the soft runtime never reads its fields.
    layout!(out, "hsa_ext_control_directives_t" => sys::hsa_ext_control_directives_t, align Equal, {});
    layout!(out, "hsa_amd_hdp_flush_t" => sys::hsa_amd_hdp_flush_t, align Equal, {
        "HDP_MEM_FLUSH_CNTL" => HDP_MEM_FLUSH_CNTL,
        "HDP_REG_FLUSH_CNTL" => HDP_REG_FLUSH_CNTL,
    });
    layout!(out, "hsa_amd_memory_pool_link_info_t" => sys::hsa_amd_memory_pool_link_info_t, align Equal, {
        "min_latency" => min_latency,
        "max_latency" => max_latency,
        "min_bandwidth" => min_bandwidth,
        "max_bandwidth" => max_bandwidth,
        "atomic_support_32bit" => atomic_support_32bit,
        "atomic_support_64bit" => atomic_support_64bit,
        "coherent_support" => coherent_support,
        "link_type" => link_type,
        "numa_distance" => numa_distance,
    });
    layout!(out, "hsa_amd_gpu_memory_fault_info_t" => sys::hsa_amd_gpu_memory_fault_info_t, align Equal, {
        "agent" => agent,
        "virtual_address" => virtual_address,
        "fault_reason_mask" => fault_reason_mask,
    });
    layout!(out, "hsa_amd_event_t" => sys::hsa_amd_event_t, align Equal, {
        "event_type" => event_type,
        "memory_fault" => memory_fault,
    });
    layout!(out, "hsa_amd_profiling_dispatch_time_t" => sys::hsa_amd_profiling_dispatch_time_t, align Equal, {
        "start" => start,
        "end" => end,
    });
    layout!(out, "hsa_agent_t" => sys::hsa_agent_t, align Equal, {});
    layout!(out, "hsa_signal_t" => sys::hsa_signal_t, align Equal, {});
    layout!(out, "hsa_amd_memory_pool_t" => sys::hsa_amd_memory_pool_t, align Equal, {});
    layout!(out, "hsa_isa_t" => sys::hsa_isa_t, align Equal, {});
    layout!(out, "hsa_code_object_reader_t" => sys::hsa_code_object_reader_t, align Equal, {});
    layout!(out, "hsa_executable_t" => sys::hsa_executable_t, align Equal, {});
    layout!(out, "hsa_loaded_code_object_t" => sys::hsa_loaded_code_object_t, align Equal, {});
    layout!(out, "hsa_executable_symbol_t" => sys::hsa_executable_symbol_t, align Equal, {});

    // Sanity only: aqueduct uses the 64-byte `.kd` descriptor, which these headers do not define.
    out.push(Expectation {
        key: "sizeof amd_kernel_code_t".to_string(),
        value: 256,
        source: "legacy amd_kernel_code_t size (AMDGPUUsage)".to_string(),
        compare: Compare::Equal,
    });

    enums!(out, {
        "HSA_STATUS_SUCCESS" => sys::status::SUCCESS,
        "HSA_STATUS_INFO_BREAK" => sys::status::INFO_BREAK,
        "HSA_STATUS_ERROR" => sys::status::ERROR,
        "HSA_STATUS_ERROR_INVALID_ARGUMENT" => sys::status::ERROR_INVALID_ARGUMENT,
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION" => sys::status::ERROR_INVALID_QUEUE_CREATION,
        "HSA_STATUS_ERROR_INVALID_ALLOCATION" => sys::status::ERROR_INVALID_ALLOCATION,
        "HSA_STATUS_ERROR_INVALID_AGENT" => sys::status::ERROR_INVALID_AGENT,
        "HSA_STATUS_ERROR_INVALID_REGION" => sys::status::ERROR_INVALID_REGION,
        "HSA_STATUS_ERROR_INVALID_SIGNAL" => sys::status::ERROR_INVALID_SIGNAL,
        "HSA_STATUS_ERROR_INVALID_QUEUE" => sys::status::ERROR_INVALID_QUEUE,
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES" => sys::status::ERROR_OUT_OF_RESOURCES,
        "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT" => sys::status::ERROR_INVALID_PACKET_FORMAT,
        "HSA_STATUS_ERROR_RESOURCE_FREE" => sys::status::ERROR_RESOURCE_FREE,
        "HSA_STATUS_ERROR_NOT_INITIALIZED" => sys::status::ERROR_NOT_INITIALIZED,
        "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW" => sys::status::ERROR_REFCOUNT_OVERFLOW,
        "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS" => sys::status::ERROR_INCOMPATIBLE_ARGUMENTS,
        "HSA_STATUS_ERROR_INVALID_INDEX" => sys::status::ERROR_INVALID_INDEX,
        "HSA_STATUS_ERROR_INVALID_ISA" => sys::status::ERROR_INVALID_ISA,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT" => sys::status::ERROR_INVALID_CODE_OBJECT,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE" => sys::status::ERROR_INVALID_EXECUTABLE,
        "HSA_STATUS_ERROR_FROZEN_EXECUTABLE" => sys::status::ERROR_FROZEN_EXECUTABLE,
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME" => sys::status::ERROR_INVALID_SYMBOL_NAME,
        "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED" => sys::status::ERROR_VARIABLE_ALREADY_DEFINED,
        "HSA_STATUS_ERROR_VARIABLE_UNDEFINED" => sys::status::ERROR_VARIABLE_UNDEFINED,
        "HSA_STATUS_ERROR_EXCEPTION" => sys::status::ERROR_EXCEPTION,
        "HSA_STATUS_ERROR_INVALID_ISA_NAME" => sys::status::ERROR_INVALID_ISA_NAME,
        "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL" => sys::status::ERROR_INVALID_CODE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL" => sys::status::ERROR_INVALID_EXECUTABLE_SYMBOL,
        "HSA_STATUS_ERROR_INVALID_FILE" => sys::status::ERROR_INVALID_FILE,
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER" => sys::status::ERROR_INVALID_CODE_OBJECT_READER,
        "HSA_STATUS_ERROR_INVALID_CACHE" => sys::status::ERROR_INVALID_CACHE,
        "HSA_STATUS_ERROR_INVALID_WAVEFRONT" => sys::status::ERROR_INVALID_WAVEFRONT,
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP" => sys::status::ERROR_INVALID_SIGNAL_GROUP,
        "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE" => sys::status::ERROR_INVALID_RUNTIME_STATE,
        "HSA_STATUS_ERROR_FATAL" => sys::status::ERROR_FATAL,
        "HSA_STATUS_ERROR_INVALID_MEMORY_POOL" => sys::status::ERROR_INVALID_MEMORY_POOL,
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" => sys::status::ERROR_MEMORY_APERTURE_VIOLATION,
        "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION" => sys::status::ERROR_ILLEGAL_INSTRUCTION,
        "HSA_STATUS_ERROR_MEMORY_FAULT" => sys::status::ERROR_MEMORY_FAULT,
        "HSA_STATUS_CU_MASK_REDUCED" => sys::status::CU_MASK_REDUCED,

        "HSA_PACKET_TYPE_VENDOR_SPECIFIC" => PacketType::VendorSpecific,
        "HSA_PACKET_TYPE_INVALID" => PacketType::Invalid,
        "HSA_PACKET_TYPE_KERNEL_DISPATCH" => PacketType::KernelDispatch,
        "HSA_PACKET_TYPE_BARRIER_AND" => PacketType::BarrierAnd,
        "HSA_PACKET_TYPE_AGENT_DISPATCH" => PacketType::AgentDispatch,
        "HSA_PACKET_TYPE_BARRIER_OR" => PacketType::BarrierOr,
        "HSA_PACKET_TYPE_INVALID" => PacketHeader::INVALID.0,

        "HSA_PACKET_HEADER_TYPE" => header_bits::TYPE_SHIFT,
        "HSA_PACKET_HEADER_BARRIER" => header_bits::BARRIER_SHIFT,
        "HSA_PACKET_HEADER_BARRIER" => barrier_bits().1,
        "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE" => header_bits::ACQUIRE_SHIFT,
        "HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE" => header_bits::ACQUIRE_SHIFT,
        "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE" => header_bits::RELEASE_SHIFT,
        "HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE" => header_bits::RELEASE_SHIFT,
        "HSA_PACKET_HEADER_WIDTH_TYPE" => header_bits::TYPE_WIDTH,
        "HSA_PACKET_HEADER_WIDTH_BARRIER" => barrier_bits().0,
        "HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE" => header_bits::SCOPE_WIDTH,
        "HSA_PACKET_HEADER_WIDTH_ACQUIRE_FENCE_SCOPE" => header_bits::SCOPE_WIDTH,
        "HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE" => header_bits::SCOPE_WIDTH,
        "HSA_PACKET_HEADER_WIDTH_RELEASE_FENCE_SCOPE" => header_bits::SCOPE_WIDTH,
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS" => DISPATCH_SETUP_DIMENSIONS_SHIFT,
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS" => DISPATCH_SETUP_DIMENSIONS_WIDTH,

        "HSA_FENCE_SCOPE_NONE" => FenceScope::None,
        "HSA_FENCE_SCOPE_AGENT" => FenceScope::Agent,
        "HSA_FENCE_SCOPE_SYSTEM" => FenceScope::System,

        "HSA_SIGNAL_CONDITION_EQ" => sys::enums::SIGNAL_CONDITION_EQ,
        "HSA_SIGNAL_CONDITION_NE" => sys::enums::SIGNAL_CONDITION_NE,
        "HSA_SIGNAL_CONDITION_LT" => sys::enums::SIGNAL_CONDITION_LT,
        "HSA_SIGNAL_CONDITION_GTE" => sys::enums::SIGNAL_CONDITION_GTE,
        "HSA_SIGNAL_CONDITION_EQ" => SignalCondition::Eq,
        "HSA_SIGNAL_CONDITION_NE" => SignalCondition::Ne,
        "HSA_SIGNAL_CONDITION_LT" => SignalCondition::Lt,
        "HSA_SIGNAL_CONDITION_GTE" => SignalCondition::Gte,
        "HSA_WAIT_STATE_BLOCKED" => sys::enums::WAIT_STATE_BLOCKED,
        "HSA_WAIT_STATE_ACTIVE" => sys::enums::WAIT_STATE_ACTIVE,

        "HSA_QUEUE_TYPE_MULTI" => sys::enums::QUEUE_TYPE_MULTI,
        "HSA_QUEUE_TYPE_SINGLE" => sys::enums::QUEUE_TYPE_SINGLE,
        "HSA_QUEUE_TYPE_MULTI" => QueueType::Multi,
        "HSA_QUEUE_TYPE_SINGLE" => QueueType::Single,
        "HSA_QUEUE_TYPE_COOPERATIVE" => QueueType::Cooperative,
        "HSA_AMD_QUEUE_PRIORITY_LOW" => sys::enums::QUEUE_PRIORITY_LOW,
        "HSA_AMD_QUEUE_PRIORITY_NORMAL" => sys::enums::QUEUE_PRIORITY_NORMAL,
        "HSA_AMD_QUEUE_PRIORITY_HIGH" => sys::enums::QUEUE_PRIORITY_HIGH,
        "HSA_QUEUE_FEATURE_KERNEL_DISPATCH" => queue_feature::KERNEL_DISPATCH,
        "HSA_QUEUE_FEATURE_AGENT_DISPATCH" => queue_feature::AGENT_DISPATCH,

        "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER" => QueueProperties::ENABLE_TRAP_HANDLER,
        "AMD_QUEUE_PROPERTIES_IS_PTR64" => QueueProperties::IS_PTR64,
        "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS" => QueueProperties::ENABLE_TRAP_HANDLER_DEBUG_SGPRS,
        "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING" => QueueProperties::ENABLE_PROFILING,
        "AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE" => QueueProperties::USE_SCRATCH_ONCE,

        "AMD_SIGNAL_KIND_INVALID" => SignalKind::INVALID,
        "AMD_SIGNAL_KIND_USER" => SignalKind::USER,
        "AMD_SIGNAL_KIND_DOORBELL" => SignalKind::DOORBELL,
        "AMD_SIGNAL_KIND_LEGACY_DOORBELL" => SignalKind::LEGACY_DOORBELL,

        // amd_format::PM4_IB is not in ROCr 5.2.3's public headers, so it has no C line.
        "HSA_AMD_PACKET_TYPE_BARRIER_VALUE" => amd_format::BARRIER_VALUE,

        "HSA_SYSTEM_INFO_VERSION_MAJOR" => sys::system_info::VERSION_MAJOR,
        "HSA_SYSTEM_INFO_VERSION_MINOR" => sys::system_info::VERSION_MINOR,
        "HSA_SYSTEM_INFO_TIMESTAMP" => sys::system_info::TIMESTAMP,
        "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY" => sys::system_info::TIMESTAMP_FREQUENCY,
        "HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT" => sys::system_info::SIGNAL_MAX_WAIT,
        "HSA_SYSTEM_INFO_ENDIANNESS" => sys::system_info::ENDIANNESS,
        "HSA_SYSTEM_INFO_MACHINE_MODEL" => sys::system_info::MACHINE_MODEL,

        "HSA_AGENT_INFO_NAME" => sys::agent_info::NAME,
        "HSA_AGENT_INFO_VENDOR_NAME" => sys::agent_info::VENDOR_NAME,
        "HSA_AGENT_INFO_FEATURE" => sys::agent_info::FEATURE,
        "HSA_AGENT_INFO_PROFILE" => sys::agent_info::PROFILE,
        "HSA_AGENT_INFO_WAVEFRONT_SIZE" => sys::agent_info::WAVEFRONT_SIZE,
        "HSA_AGENT_INFO_WORKGROUP_MAX_DIM" => sys::agent_info::WORKGROUP_MAX_DIM,
        "HSA_AGENT_INFO_WORKGROUP_MAX_SIZE" => sys::agent_info::WORKGROUP_MAX_SIZE,
        "HSA_AGENT_INFO_GRID_MAX_DIM" => sys::agent_info::GRID_MAX_DIM,
        "HSA_AGENT_INFO_GRID_MAX_SIZE" => sys::agent_info::GRID_MAX_SIZE,
        "HSA_AGENT_INFO_QUEUES_MAX" => sys::agent_info::QUEUES_MAX,
        "HSA_AGENT_INFO_QUEUE_MIN_SIZE" => sys::agent_info::QUEUE_MIN_SIZE,
        "HSA_AGENT_INFO_QUEUE_MAX_SIZE" => sys::agent_info::QUEUE_MAX_SIZE,
        "HSA_AGENT_INFO_QUEUE_TYPE" => sys::agent_info::QUEUE_TYPE,
        "HSA_AGENT_INFO_NODE" => sys::agent_info::NODE,
        "HSA_AGENT_INFO_DEVICE" => sys::agent_info::DEVICE,
        "HSA_AGENT_INFO_ISA" => sys::agent_info::ISA,
        "HSA_AMD_AGENT_INFO_CHIP_ID" => sys::agent_info::AMD_CHIP_ID,
        "HSA_AMD_AGENT_INFO_CACHELINE_SIZE" => sys::agent_info::AMD_CACHELINE_SIZE,
        "HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT" => sys::agent_info::AMD_COMPUTE_UNIT_COUNT,
        "HSA_AMD_AGENT_INFO_PRODUCT_NAME" => sys::agent_info::AMD_PRODUCT_NAME,
        "HSA_AMD_AGENT_INFO_UUID" => sys::agent_info::AMD_UUID,
        "HSA_AGENT_INFO_MACHINE_MODEL" => sys::agent_info::MACHINE_MODEL,
        "HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE" => sys::agent_info::DEFAULT_FLOAT_ROUNDING_MODE,
        "HSA_AGENT_INFO_FBARRIER_MAX_SIZE" => sys::agent_info::FBARRIER_MAX_SIZE,
        "HSA_AGENT_INFO_CACHE_SIZE" => sys::agent_info::CACHE_SIZE,
        "HSA_AGENT_INFO_VERSION_MAJOR" => sys::agent_info::VERSION_MAJOR,
        "HSA_AGENT_INFO_VERSION_MINOR" => sys::agent_info::VERSION_MINOR,
        "HSA_AGENT_INFO_FAST_F16_OPERATION" => sys::agent_info::FAST_F16_OPERATION,
        "HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY" => sys::agent_info::AMD_MAX_CLOCK_FREQUENCY,
        "HSA_AMD_AGENT_INFO_DRIVER_NODE_ID" => sys::agent_info::AMD_DRIVER_NODE_ID,
        "HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS" => sys::agent_info::AMD_MAX_ADDRESS_WATCH_POINTS,
        "HSA_AMD_AGENT_INFO_BDFID" => sys::agent_info::AMD_BDFID,
        "HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU" => sys::agent_info::AMD_MAX_WAVES_PER_CU,
        "HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU" => sys::agent_info::AMD_NUM_SIMDS_PER_CU,
        "HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES" => sys::agent_info::AMD_NUM_SHADER_ENGINES,
        "HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE" => sys::agent_info::AMD_NUM_SHADER_ARRAYS_PER_SE,
        "HSA_AMD_AGENT_INFO_ASIC_REVISION" => sys::agent_info::AMD_ASIC_REVISION,
        "HSA_AMD_AGENT_INFO_HDP_FLUSH" => sys::agent_info::AMD_HDP_FLUSH,
        "HSA_SYMBOL_LINKAGE_PROGRAM" => sys::enums::SYMBOL_LINKAGE_PROGRAM,
        "HSA_VARIABLE_ALLOCATION_AGENT" => sys::enums::VARIABLE_ALLOCATION_AGENT,
        "HSA_VARIABLE_ALLOCATION_PROGRAM" => sys::enums::VARIABLE_ALLOCATION_PROGRAM,
        "HSA_VARIABLE_SEGMENT_GLOBAL" => sys::enums::VARIABLE_SEGMENT_GLOBAL,
        "HSA_VARIABLE_SEGMENT_READONLY" => sys::enums::VARIABLE_SEGMENT_READONLY,
        "HSA_EXECUTABLE_STATE_UNFROZEN" => sys::enums::EXECUTABLE_STATE_UNFROZEN,
        "HSA_EXECUTABLE_STATE_FROZEN" => sys::enums::EXECUTABLE_STATE_FROZEN,
        "HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH" => sys::symbol_info::MODULE_NAME_LENGTH,
        "HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME" => sys::symbol_info::MODULE_NAME,
        "HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE" => sys::symbol_info::LINKAGE,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION" => sys::symbol_info::VARIABLE_ALLOCATION,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT" => sys::symbol_info::VARIABLE_SEGMENT,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT" => sys::symbol_info::VARIABLE_ALIGNMENT,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE" => sys::symbol_info::VARIABLE_SIZE,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST" => sys::symbol_info::VARIABLE_IS_CONST,
        "HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION" => sys::symbol_info::IS_DEFINITION,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION" => sys::symbol_info::KERNEL_CALL_CONVENTION,
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS" => sys::symbol_info::VARIABLE_ADDRESS,
        "HSA_SYSTEM_INFO_EXTENSIONS" => sys::system_info::EXTENSIONS,
        "HSA_AMD_SYSTEM_INFO_BUILD_VERSION" => sys::system_info::AMD_BUILD_VERSION,
        "HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED" => sys::system_info::AMD_SVM_SUPPORTED,
        "HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT" => sys::system_info::AMD_SVM_ACCESSIBLE_BY_DEFAULT,
        "HSA_AGENT_INFO_EXTENSIONS" => sys::agent_info::EXTENSIONS,
        "HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES" => sys::agent_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES,
        "HSA_AMD_AGENT_INFO_MEMORY_WIDTH" => sys::agent_info::AMD_MEMORY_WIDTH,
        "HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY" => sys::agent_info::AMD_MEMORY_MAX_FREQUENCY,
        "HSA_AMD_AGENT_INFO_DOMAIN" => sys::agent_info::AMD_DOMAIN,
        "HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES" => sys::agent_info::AMD_COOPERATIVE_QUEUES,
        "HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS" => sys::agent_info::AMD_SVM_DIRECT_HOST_ACCESS,
        "HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT" => sys::agent_info::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT,
        "HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS" => sys::agent_info::EXT_IMAGE_FIRST,

        "HSA_DEVICE_TYPE_CPU" => sys::device_type::CPU,
        "HSA_DEVICE_TYPE_GPU" => sys::device_type::GPU,
        "HSA_DEVICE_TYPE_DSP" => sys::device_type::DSP,
        "HSA_AGENT_FEATURE_KERNEL_DISPATCH" => sys::agent_feature::KERNEL_DISPATCH,
        "HSA_AGENT_FEATURE_AGENT_DISPATCH" => sys::agent_feature::AGENT_DISPATCH,

        "HSA_ISA_INFO_NAME_LENGTH" => sys::isa_info::NAME_LENGTH,
        "HSA_ISA_INFO_NAME" => sys::isa_info::NAME,
        "HSA_ISA_INFO_MACHINE_MODELS" => sys::isa_info::MACHINE_MODELS,
        "HSA_ISA_INFO_PROFILES" => sys::isa_info::PROFILES,
        "HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES" => sys::isa_info::DEFAULT_FLOAT_ROUNDING_MODES,
        "HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES" => sys::isa_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES,
        "HSA_ISA_INFO_FAST_F16_OPERATION" => sys::isa_info::FAST_F16_OPERATION,
        "HSA_ISA_INFO_WORKGROUP_MAX_DIM" => sys::isa_info::WORKGROUP_MAX_DIM,
        "HSA_ISA_INFO_WORKGROUP_MAX_SIZE" => sys::isa_info::WORKGROUP_MAX_SIZE,
        "HSA_ISA_INFO_GRID_MAX_DIM" => sys::isa_info::GRID_MAX_DIM,
        "HSA_ISA_INFO_GRID_MAX_SIZE" => sys::isa_info::GRID_MAX_SIZE,
        "HSA_ISA_INFO_FBARRIER_MAX_SIZE" => sys::isa_info::FBARRIER_MAX_SIZE,

        "HSA_AMD_MEMORY_POOL_INFO_SEGMENT" => sys::pool_info::SEGMENT,
        "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS" => sys::pool_info::GLOBAL_FLAGS,
        "HSA_AMD_MEMORY_POOL_INFO_SIZE" => sys::pool_info::SIZE,
        "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED" => sys::pool_info::RUNTIME_ALLOC_ALLOWED,
        "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE" => sys::pool_info::RUNTIME_ALLOC_GRANULE,
        "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT" => sys::pool_info::RUNTIME_ALLOC_ALIGNMENT,
        "HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL" => sys::pool_info::ACCESSIBLE_BY_ALL,
        "HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE" => sys::pool_info::ALLOC_MAX_SIZE,
        "HSA_AMD_SEGMENT_GLOBAL" => sys::pool_info::SEGMENT_GLOBAL,
        "HSA_AMD_SEGMENT_READONLY" => sys::pool_info::SEGMENT_READONLY,
        "HSA_AMD_SEGMENT_PRIVATE" => sys::pool_info::SEGMENT_PRIVATE,
        "HSA_AMD_SEGMENT_GROUP" => sys::pool_info::SEGMENT_GROUP,
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT" => sys::pool_info::GLOBAL_FLAG_KERNARG_INIT,
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED" => sys::pool_info::GLOBAL_FLAG_FINE_GRAINED,
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED" => sys::pool_info::GLOBAL_FLAG_COARSE_GRAINED,

        "HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS" => sys::agent_pool_info::ACCESS,
        "HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS" => sys::agent_pool_info::NUM_LINK_HOPS,
        "HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO" => sys::agent_pool_info::LINK_INFO,
        "HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED" => sys::agent_pool_info::ACCESS_NEVER_ALLOWED,
        "HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT" => sys::agent_pool_info::ACCESS_ALLOWED_BY_DEFAULT,
        "HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT" => sys::agent_pool_info::ACCESS_DISALLOWED_BY_DEFAULT,
        "HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT" => sys::agent_pool_info::LINK_TYPE_HYPERTRANSPORT,
        "HSA_AMD_LINK_INFO_TYPE_QPI" => sys::agent_pool_info::LINK_TYPE_QPI,
        "HSA_AMD_LINK_INFO_TYPE_PCIE" => sys::agent_pool_info::LINK_TYPE_PCIE,
        "HSA_AMD_LINK_INFO_TYPE_INFINBAND" => sys::agent_pool_info::LINK_TYPE_INFINIBAND,
        "HSA_AMD_LINK_INFO_TYPE_XGMI" => sys::agent_pool_info::LINK_TYPE_XGMI,
        "HSA_AMD_GPU_MEMORY_FAULT_EVENT" => sys::amd_event::GPU_MEMORY_FAULT_EVENT,
        "HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT" => sys::amd_event::FAULT_PAGE_NOT_PRESENT,
        "HSA_AMD_MEMORY_FAULT_READ_ONLY" => sys::amd_event::FAULT_READ_ONLY,
        "HSA_AMD_MEMORY_FAULT_NX" => sys::amd_event::FAULT_NX,
        "HSA_AMD_MEMORY_FAULT_HOST_ONLY" => sys::amd_event::FAULT_HOST_ONLY,
        "HSA_AMD_SIGNAL_AMD_GPU_ONLY" => sys::amd_event::SIGNAL_AMD_GPU_ONLY,
        "HSA_AMD_SIGNAL_IPC" => sys::amd_event::SIGNAL_IPC,

        "HSA_PROFILE_BASE" => sys::enums::PROFILE_BASE,
        "HSA_PROFILE_FULL" => sys::enums::PROFILE_FULL,
        "HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT" => sys::enums::DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        "HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR" => sys::enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR,
        "HSA_MACHINE_MODEL_LARGE" => sys::enums::MACHINE_MODEL_LARGE,
        "HSA_SYMBOL_KIND_VARIABLE" => sys::enums::SYMBOL_KIND_VARIABLE,
        "HSA_SYMBOL_KIND_KERNEL" => sys::enums::SYMBOL_KIND_KERNEL,

        "HSA_EXECUTABLE_SYMBOL_INFO_TYPE" => sys::symbol_info::TYPE,
        "HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH" => sys::symbol_info::NAME_LENGTH,
        "HSA_EXECUTABLE_SYMBOL_INFO_NAME" => sys::symbol_info::NAME,
        "HSA_EXECUTABLE_SYMBOL_INFO_AGENT" => sys::symbol_info::AGENT,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT" => sys::symbol_info::KERNEL_OBJECT,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE" => sys::symbol_info::KERNEL_KERNARG_SEGMENT_SIZE,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT" => sys::symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE" => sys::symbol_info::KERNEL_GROUP_SEGMENT_SIZE,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE" => sys::symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE,
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK" => sys::symbol_info::KERNEL_DYNAMIC_CALLSTACK,
    });

    out
}

/// Parses the C program's output into `key -> value`, rejecting malformed, duplicate or truncated
/// output (the program ends with a lone `end` line).
fn parse_facts(output: &str) -> Result<BTreeMap<String, i64>, String> {
    let mut facts = BTreeMap::new();
    let mut ended = false;
    for (number, line) in output.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if ended {
            return Err(format!("line {}: output continues after `end`: {line:?}", number + 1));
        }
        if line == "end" {
            ended = true;
            continue;
        }
        let (key, value) = line.rsplit_once(' ').ok_or_else(|| format!("line {}: no value: {line:?}", number + 1))?;
        let kind = key.split(' ').next().unwrap_or_default();
        let arity = key.split(' ').count();
        let well_formed = matches!((kind, arity), ("sizeof" | "alignof" | "enum", 2) | ("offsetof" | "fieldsize", 3));
        if !well_formed {
            return Err(format!("line {}: unknown fact shape: {line:?}", number + 1));
        }
        let value: i64 =
            value.parse().map_err(|error| format!("line {}: bad value in {line:?}: {error}", number + 1))?;
        if facts.insert(key.to_string(), value).is_some() {
            return Err(format!("line {}: duplicate fact {key:?}", number + 1));
        }
    }
    if !ended {
        return Err("output has no final `end` line: the C program was cut short".to_string());
    }
    Ok(facts)
}

/// Every mismatch between the C facts and the Rust expectations, in both directions.
fn compare(facts: &BTreeMap<String, i64>, expectations: &[Expectation]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut expected_keys = BTreeSet::new();
    for expectation in expectations {
        expected_keys.insert(expectation.key.as_str());
        let Some(&c_value) = facts.get(&expectation.key) else {
            problems.push(format!(
                "no C line for `{}` (Rust: {} = {}); add it to tests/conformance/layout.c",
                expectation.key, expectation.source, expectation.value
            ));
            continue;
        };
        let ok = match expectation.compare {
            Compare::Equal => c_value == expectation.value,
            Compare::MultipleOf => c_value > 0 && expectation.value % c_value == 0,
        };
        if !ok {
            let relation = match expectation.compare {
                Compare::Equal => "must equal",
                Compare::MultipleOf => "must be a multiple of",
            };
            problems.push(format!(
                "`{}`: Rust {} = {} {relation} C's {}",
                expectation.key, expectation.source, expectation.value, c_value
            ));
        }
    }
    for (key, value) in facts {
        if !expected_keys.contains(key.as_str()) {
            problems.push(format!("C line `{key} {value}` has no Rust expectation; add one in abi_conformance.rs"));
        }
    }
    problems
}

/// `sys::<module>::<NAME>` for every `pub const` in the listed modules of `src/sys.rs`.
fn sys_constants(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut module: Option<&str> = None;
    for line in source.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("pub mod ") {
            let name = rest.trim_end_matches('{').trim();
            module = SYS_CONSTANT_MODULES.contains(&name).then_some(name);
        } else if line.starts_with('}') {
            module = None;
        } else if let (Some(module), Some(rest)) = (module, trimmed.strip_prefix("pub const ")) {
            let name = rest.split(':').next().unwrap_or_default().trim();
            found.push(format!("sys::{module}::{name}"));
        }
    }
    found
}

fn headers_required() -> bool {
    std::env::var(REQUIRE_VARIABLE).is_ok_and(|value| value == "1")
}

/// Written to the real stdout, past libtest's capture, so a skip is visible in every log.
fn skip(reason: &str) {
    assert!(!headers_required(), "{REQUIRE_VARIABLE}=1 but {reason}");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "SKIPPED: {reason}").expect("stdout is writable");
}

/// Compiles and runs layout.c; `None` when the toolchain is missing and the skip was reported.
fn c_facts() -> Option<String> {
    if !Path::new(HSA_HEADER).exists() {
        skip("ROCr headers not found at /usr/include/hsa; install libhsa-runtime-dev");
        return None;
    }
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/layout.c");
    let binary = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aqueduct-abi-layout-{}", std::process::id()));
    let compiled =
        Command::new(&compiler).args(["-std=c11", "-Wall", "-Wextra", "-O0", "-o"]).arg(&binary).arg(&source).output();
    let compiled = match compiled {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            skip(&format!("C compiler `{compiler}` not found; install gcc"));
            return None;
        }
        Err(error) => panic!("could not run C compiler `{compiler}`: {error}"),
    };
    // With headers and a compiler present, a build failure is a real conformance failure.
    assert!(
        compiled.status.success(),
        "{compiler} failed to build {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&binary).output().expect("run the layout program");
    assert!(
        run.status.success(),
        "layout program exited with {}:\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    Some(String::from_utf8(run.stdout).expect("layout program prints ASCII"))
}

#[test]
fn rust_abi_matches_rocr_headers() {
    let Some(output) = c_facts() else { return };
    let facts = parse_facts(&output).unwrap_or_else(|error| panic!("unparsable layout output: {error}"));
    let expectations = expectations();
    let problems = compare(&facts, &expectations);
    assert!(
        problems.is_empty(),
        "{} ABI mismatch(es) against /usr/include/hsa:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
    // Guards against a run that matched trivially (e.g. an empty list on both sides).
    assert!(facts.len() >= 300, "only {} C facts; the layout program lost lines", facts.len());
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "abi_conformance: {} C facts matched {} Rust expectations", facts.len(), expectations.len())
        .expect("stdout is writable");
}

/// Needs no headers: a constant added to sys.rs without a conformance line fails here.
#[test]
fn every_sys_constant_is_checked() {
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sys.rs")).expect("read src/sys.rs");
    let constants = sys_constants(&source);
    assert!(constants.len() >= 100, "scan found only {} constants; did sys.rs change shape?", constants.len());
    let covered: BTreeSet<String> =
        expectations().iter().map(|expectation| expectation.source.split_whitespace().collect::<String>()).collect();
    let unchecked: Vec<&String> = constants.iter().filter(|name| !covered.contains(*name)).collect();
    assert!(unchecked.is_empty(), "constants in src/sys.rs with no C conformance line: {unchecked:?}");
}

/// The comparison itself must catch each kind of drift, or the main test proves nothing.
#[test]
fn comparison_reports_every_kind_of_drift() {
    let expectation = |key: &str, value: i64, compare: Compare| Expectation {
        key: key.to_string(),
        value,
        source: "test".to_string(),
        compare,
    };
    let facts = parse_facts("sizeof a 64\nalignof a 8\nenum B 3\nenum EXTRA 1\nend\n").unwrap();
    let problems = compare(
        &facts,
        &[
            expectation("sizeof a", 64, Compare::Equal),
            expectation("alignof a", 64, Compare::MultipleOf),
            expectation("enum B", 4, Compare::Equal),
            expectation("enum MISSING", 0, Compare::Equal),
        ],
    );
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems.iter().any(|problem| problem.contains("`enum B`")));
    assert!(problems.iter().any(|problem| problem.contains("no C line for `enum MISSING`")));
    assert!(problems.iter().any(|problem| problem.contains("`enum EXTRA 1` has no Rust expectation")));
    // Rust 4 is not a multiple of C's 8: under-alignment is drift too.
    let under_aligned = compare(&facts, &[expectation("alignof a", 4, Compare::MultipleOf)]);
    assert!(under_aligned.iter().any(|problem| problem.starts_with("`alignof a`")), "{under_aligned:#?}");

    assert!(parse_facts("sizeof a 64\n").unwrap_err().contains("end"));
    assert!(parse_facts("sizeof a 64\nsizeof a 64\nend\n").unwrap_err().contains("duplicate"));
    assert!(parse_facts("offsetof a 1\nend\n").unwrap_err().contains("shape"));
}
