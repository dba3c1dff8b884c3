/*
 * Prints the sizes, field offsets/sizes and enum values of ROCr's public headers, one fact per
 * line, for hsa/tests/abi_conformance.rs to compare against aqueduct's Rust definitions.
 *
 * Line formats (whitespace separated, values in decimal):
 *   sizeof    <type> <bytes>
 *   alignof   <type> <bytes>
 *   offsetof  <type> <field> <bytes>
 *   fieldsize <type> <field> <bytes>
 *   enum      <NAME> <value>
 *
 * Every line printed here must have a Rust counterpart and vice versa, so add facts in pairs.
 */
#include <stddef.h>
#include <stdio.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_finalize.h>
#include <hsa/hsa_ext_image.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/amd_hsa_kernel_code.h>

/* The Rust side models the 64-bit ("large") model only: pointers are 8-byte fields. */
#ifndef HSA_LARGE_MODEL
#error "aqueduct's ABI assumes HSA_LARGE_MODEL (64-bit pointers)"
#endif

#define TYPE(T)                                                        \
  printf("sizeof %s %zu\n", #T, sizeof(T));                            \
  printf("alignof %s %zu\n", #T, _Alignof(T))

#define FIELD(T, f)                                                    \
  printf("offsetof %s %s %zu\n", #T, #f, offsetof(T, f));              \
  printf("fieldsize %s %s %zu\n", #T, #f, sizeof(((T *)0)->f))

/* Cast through long long: some enums (amd_signal_kind_t) are negative. */
#define ENUM(e) printf("enum %s %lld\n", #e, (long long)(e))

static void packets(void) {
  TYPE(hsa_kernel_dispatch_packet_t);
  FIELD(hsa_kernel_dispatch_packet_t, header);
  FIELD(hsa_kernel_dispatch_packet_t, setup);
  FIELD(hsa_kernel_dispatch_packet_t, workgroup_size_x);
  FIELD(hsa_kernel_dispatch_packet_t, workgroup_size_y);
  FIELD(hsa_kernel_dispatch_packet_t, workgroup_size_z);
  FIELD(hsa_kernel_dispatch_packet_t, reserved0);
  FIELD(hsa_kernel_dispatch_packet_t, grid_size_x);
  FIELD(hsa_kernel_dispatch_packet_t, grid_size_y);
  FIELD(hsa_kernel_dispatch_packet_t, grid_size_z);
  FIELD(hsa_kernel_dispatch_packet_t, private_segment_size);
  FIELD(hsa_kernel_dispatch_packet_t, group_segment_size);
  FIELD(hsa_kernel_dispatch_packet_t, kernel_object);
  FIELD(hsa_kernel_dispatch_packet_t, kernarg_address);
  FIELD(hsa_kernel_dispatch_packet_t, reserved2);
  FIELD(hsa_kernel_dispatch_packet_t, completion_signal);

  TYPE(hsa_agent_dispatch_packet_t);
  FIELD(hsa_agent_dispatch_packet_t, header);
  FIELD(hsa_agent_dispatch_packet_t, type);
  FIELD(hsa_agent_dispatch_packet_t, reserved0);
  FIELD(hsa_agent_dispatch_packet_t, return_address);
  FIELD(hsa_agent_dispatch_packet_t, arg);
  FIELD(hsa_agent_dispatch_packet_t, reserved2);
  FIELD(hsa_agent_dispatch_packet_t, completion_signal);

  TYPE(hsa_barrier_and_packet_t);
  FIELD(hsa_barrier_and_packet_t, header);
  FIELD(hsa_barrier_and_packet_t, reserved0);
  FIELD(hsa_barrier_and_packet_t, reserved1);
  FIELD(hsa_barrier_and_packet_t, dep_signal);
  FIELD(hsa_barrier_and_packet_t, reserved2);
  FIELD(hsa_barrier_and_packet_t, completion_signal);

  TYPE(hsa_barrier_or_packet_t);
  FIELD(hsa_barrier_or_packet_t, header);
  FIELD(hsa_barrier_or_packet_t, reserved0);
  FIELD(hsa_barrier_or_packet_t, reserved1);
  FIELD(hsa_barrier_or_packet_t, dep_signal);
  FIELD(hsa_barrier_or_packet_t, reserved2);
  FIELD(hsa_barrier_or_packet_t, completion_signal);

  TYPE(hsa_amd_vendor_packet_header_t);
  FIELD(hsa_amd_vendor_packet_header_t, header);
  FIELD(hsa_amd_vendor_packet_header_t, AmdFormat);
  FIELD(hsa_amd_vendor_packet_header_t, reserved);

  TYPE(hsa_amd_barrier_value_packet_t);
  FIELD(hsa_amd_barrier_value_packet_t, header);
  FIELD(hsa_amd_barrier_value_packet_t, reserved0);
  FIELD(hsa_amd_barrier_value_packet_t, signal);
  FIELD(hsa_amd_barrier_value_packet_t, value);
  FIELD(hsa_amd_barrier_value_packet_t, mask);
  FIELD(hsa_amd_barrier_value_packet_t, cond);
  FIELD(hsa_amd_barrier_value_packet_t, reserved1);
  FIELD(hsa_amd_barrier_value_packet_t, reserved2);
  FIELD(hsa_amd_barrier_value_packet_t, reserved3);
  FIELD(hsa_amd_barrier_value_packet_t, completion_signal);
}

static void queues_and_signals(void) {
  TYPE(hsa_queue_t);
  FIELD(hsa_queue_t, type);
  FIELD(hsa_queue_t, features);
  FIELD(hsa_queue_t, base_address);
  FIELD(hsa_queue_t, doorbell_signal);
  FIELD(hsa_queue_t, size);
  FIELD(hsa_queue_t, reserved1);
  FIELD(hsa_queue_t, id);

  TYPE(amd_queue_t);
  FIELD(amd_queue_t, hsa_queue);
  FIELD(amd_queue_t, reserved1);
  FIELD(amd_queue_t, write_dispatch_id);
  FIELD(amd_queue_t, group_segment_aperture_base_hi);
  FIELD(amd_queue_t, private_segment_aperture_base_hi);
  FIELD(amd_queue_t, max_cu_id);
  FIELD(amd_queue_t, max_wave_id);
  FIELD(amd_queue_t, max_legacy_doorbell_dispatch_id_plus_1);
  FIELD(amd_queue_t, legacy_doorbell_lock);
  FIELD(amd_queue_t, reserved2);
  FIELD(amd_queue_t, read_dispatch_id);
  FIELD(amd_queue_t, read_dispatch_id_field_base_byte_offset);
  FIELD(amd_queue_t, compute_tmpring_size);
  FIELD(amd_queue_t, scratch_resource_descriptor);
  FIELD(amd_queue_t, scratch_backing_memory_location);
  FIELD(amd_queue_t, scratch_backing_memory_byte_size);
  FIELD(amd_queue_t, scratch_wave64_lane_byte_size);
  FIELD(amd_queue_t, queue_properties);
  FIELD(amd_queue_t, reserved3);
  FIELD(amd_queue_t, queue_inactive_signal);
  FIELD(amd_queue_t, reserved4);

  TYPE(amd_signal_t);
  FIELD(amd_signal_t, kind);
  /* value and hardware_doorbell_ptr share one union slot. */
  FIELD(amd_signal_t, value);
  FIELD(amd_signal_t, hardware_doorbell_ptr);
  FIELD(amd_signal_t, event_mailbox_ptr);
  FIELD(amd_signal_t, event_id);
  FIELD(amd_signal_t, reserved1);
  FIELD(amd_signal_t, start_ts);
  FIELD(amd_signal_t, end_ts);
  /* queue_ptr and reserved2 share one union slot. */
  FIELD(amd_signal_t, queue_ptr);
  FIELD(amd_signal_t, reserved2);
  FIELD(amd_signal_t, reserved3);

  TYPE(hsa_ext_control_directives_t);
  TYPE(hsa_amd_hdp_flush_t);
  FIELD(hsa_amd_hdp_flush_t, HDP_MEM_FLUSH_CNTL);
  FIELD(hsa_amd_hdp_flush_t, HDP_REG_FLUSH_CNTL);
  TYPE(hsa_amd_memory_pool_link_info_t);
  FIELD(hsa_amd_memory_pool_link_info_t, min_latency);
  FIELD(hsa_amd_memory_pool_link_info_t, max_latency);
  FIELD(hsa_amd_memory_pool_link_info_t, min_bandwidth);
  FIELD(hsa_amd_memory_pool_link_info_t, max_bandwidth);
  FIELD(hsa_amd_memory_pool_link_info_t, atomic_support_32bit);
  FIELD(hsa_amd_memory_pool_link_info_t, atomic_support_64bit);
  FIELD(hsa_amd_memory_pool_link_info_t, coherent_support);
  FIELD(hsa_amd_memory_pool_link_info_t, link_type);
  FIELD(hsa_amd_memory_pool_link_info_t, numa_distance);
  TYPE(hsa_amd_gpu_memory_fault_info_t);
  FIELD(hsa_amd_gpu_memory_fault_info_t, agent);
  FIELD(hsa_amd_gpu_memory_fault_info_t, virtual_address);
  FIELD(hsa_amd_gpu_memory_fault_info_t, fault_reason_mask);
  TYPE(hsa_amd_event_t);
  FIELD(hsa_amd_event_t, event_type);
  FIELD(hsa_amd_event_t, memory_fault);
  TYPE(hsa_amd_profiling_dispatch_time_t);
  FIELD(hsa_amd_profiling_dispatch_time_t, start);
  FIELD(hsa_amd_profiling_dispatch_time_t, end);

  /* Handles cross the FFI boundary by value: each is one 64-bit word. */
  TYPE(hsa_agent_t);
  TYPE(hsa_signal_t);
  TYPE(hsa_amd_memory_pool_t);
  TYPE(hsa_isa_t);
  TYPE(hsa_code_object_reader_t);
  TYPE(hsa_executable_t);
  TYPE(hsa_loaded_code_object_t);
  TYPE(hsa_executable_symbol_t);

  /* Only the legacy descriptor is in these headers; the 64-byte `.kd` descriptor is checked
   * against compiled code objects by the code-object tests instead. This is a sanity line. */
  printf("sizeof amd_kernel_code_t %zu\n", sizeof(amd_kernel_code_t));
}

static void enums(void) {
  ENUM(HSA_STATUS_SUCCESS);
  ENUM(HSA_STATUS_INFO_BREAK);
  ENUM(HSA_STATUS_ERROR);
  ENUM(HSA_STATUS_ERROR_INVALID_ARGUMENT);
  ENUM(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  ENUM(HSA_STATUS_ERROR_INVALID_ALLOCATION);
  ENUM(HSA_STATUS_ERROR_INVALID_AGENT);
  ENUM(HSA_STATUS_ERROR_INVALID_REGION);
  ENUM(HSA_STATUS_ERROR_INVALID_SIGNAL);
  ENUM(HSA_STATUS_ERROR_INVALID_QUEUE);
  ENUM(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  ENUM(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  ENUM(HSA_STATUS_ERROR_RESOURCE_FREE);
  ENUM(HSA_STATUS_ERROR_NOT_INITIALIZED);
  ENUM(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW);
  ENUM(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
  ENUM(HSA_STATUS_ERROR_INVALID_INDEX);
  ENUM(HSA_STATUS_ERROR_INVALID_ISA);
  ENUM(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  ENUM(HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  ENUM(HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  ENUM(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  ENUM(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  ENUM(HSA_STATUS_ERROR_VARIABLE_UNDEFINED);
  ENUM(HSA_STATUS_ERROR_EXCEPTION);
  ENUM(HSA_STATUS_ERROR_INVALID_ISA_NAME);
  ENUM(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL);
  ENUM(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL);
  ENUM(HSA_STATUS_ERROR_INVALID_FILE);
  ENUM(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
  ENUM(HSA_STATUS_ERROR_INVALID_CACHE);
  ENUM(HSA_STATUS_ERROR_INVALID_WAVEFRONT);
  ENUM(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
  ENUM(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE);
  ENUM(HSA_STATUS_ERROR_FATAL);
  ENUM(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  ENUM(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
  ENUM(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION);
  ENUM(HSA_STATUS_ERROR_MEMORY_FAULT);
  ENUM(HSA_STATUS_CU_MASK_REDUCED);

  ENUM(HSA_PACKET_TYPE_VENDOR_SPECIFIC);
  ENUM(HSA_PACKET_TYPE_INVALID);
  ENUM(HSA_PACKET_TYPE_KERNEL_DISPATCH);
  ENUM(HSA_PACKET_TYPE_BARRIER_AND);
  ENUM(HSA_PACKET_TYPE_AGENT_DISPATCH);
  ENUM(HSA_PACKET_TYPE_BARRIER_OR);

  ENUM(HSA_PACKET_HEADER_TYPE);
  ENUM(HSA_PACKET_HEADER_BARRIER);
  ENUM(HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_WIDTH_TYPE);
  ENUM(HSA_PACKET_HEADER_WIDTH_BARRIER);
  ENUM(HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_WIDTH_ACQUIRE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE);
  ENUM(HSA_PACKET_HEADER_WIDTH_RELEASE_FENCE_SCOPE);
  ENUM(HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  ENUM(HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS);

  ENUM(HSA_FENCE_SCOPE_NONE);
  ENUM(HSA_FENCE_SCOPE_AGENT);
  ENUM(HSA_FENCE_SCOPE_SYSTEM);

  ENUM(HSA_SIGNAL_CONDITION_EQ);
  ENUM(HSA_SIGNAL_CONDITION_NE);
  ENUM(HSA_SIGNAL_CONDITION_LT);
  ENUM(HSA_SIGNAL_CONDITION_GTE);
  ENUM(HSA_WAIT_STATE_BLOCKED);
  ENUM(HSA_WAIT_STATE_ACTIVE);

  ENUM(HSA_QUEUE_TYPE_MULTI);
  ENUM(HSA_QUEUE_TYPE_SINGLE);
  ENUM(HSA_QUEUE_TYPE_COOPERATIVE);
  ENUM(HSA_AMD_QUEUE_PRIORITY_LOW);
  ENUM(HSA_AMD_QUEUE_PRIORITY_NORMAL);
  ENUM(HSA_AMD_QUEUE_PRIORITY_HIGH);
  ENUM(HSA_QUEUE_FEATURE_KERNEL_DISPATCH);
  ENUM(HSA_QUEUE_FEATURE_AGENT_DISPATCH);

  /* Defined with AMD_HSA_BITS_CREATE_ENUM_ENTRIES: the bare name is the mask. */
  ENUM(AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER);
  ENUM(AMD_QUEUE_PROPERTIES_IS_PTR64);
  ENUM(AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS);
  ENUM(AMD_QUEUE_PROPERTIES_ENABLE_PROFILING);
  ENUM(AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE);

  ENUM(AMD_SIGNAL_KIND_INVALID);
  ENUM(AMD_SIGNAL_KIND_USER);
  ENUM(AMD_SIGNAL_KIND_DOORBELL);
  ENUM(AMD_SIGNAL_KIND_LEGACY_DOORBELL);

  ENUM(HSA_AMD_PACKET_TYPE_BARRIER_VALUE);

  ENUM(HSA_SYSTEM_INFO_VERSION_MAJOR);
  ENUM(HSA_SYSTEM_INFO_VERSION_MINOR);
  ENUM(HSA_SYSTEM_INFO_TIMESTAMP);
  ENUM(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY);
  ENUM(HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT);
  ENUM(HSA_SYSTEM_INFO_ENDIANNESS);
  ENUM(HSA_SYSTEM_INFO_MACHINE_MODEL);

  ENUM(HSA_AGENT_INFO_NAME);
  ENUM(HSA_AGENT_INFO_VENDOR_NAME);
  ENUM(HSA_AGENT_INFO_FEATURE);
  ENUM(HSA_AGENT_INFO_PROFILE);
  ENUM(HSA_AGENT_INFO_WAVEFRONT_SIZE);
  ENUM(HSA_AGENT_INFO_WORKGROUP_MAX_DIM);
  ENUM(HSA_AGENT_INFO_WORKGROUP_MAX_SIZE);
  ENUM(HSA_AGENT_INFO_GRID_MAX_DIM);
  ENUM(HSA_AGENT_INFO_GRID_MAX_SIZE);
  ENUM(HSA_AGENT_INFO_QUEUES_MAX);
  ENUM(HSA_AGENT_INFO_QUEUE_MIN_SIZE);
  ENUM(HSA_AGENT_INFO_QUEUE_MAX_SIZE);
  ENUM(HSA_AGENT_INFO_QUEUE_TYPE);
  ENUM(HSA_AGENT_INFO_NODE);
  ENUM(HSA_AGENT_INFO_DEVICE);
  ENUM(HSA_AGENT_INFO_ISA);
  ENUM(HSA_AMD_AGENT_INFO_CHIP_ID);
  ENUM(HSA_AMD_AGENT_INFO_CACHELINE_SIZE);
  ENUM(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT);
  ENUM(HSA_AMD_AGENT_INFO_PRODUCT_NAME);
  ENUM(HSA_AMD_AGENT_INFO_UUID);
  ENUM(HSA_AGENT_INFO_MACHINE_MODEL);
  ENUM(HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE);
  ENUM(HSA_AGENT_INFO_FBARRIER_MAX_SIZE);
  ENUM(HSA_AGENT_INFO_CACHE_SIZE);
  ENUM(HSA_AGENT_INFO_VERSION_MAJOR);
  ENUM(HSA_AGENT_INFO_VERSION_MINOR);
  ENUM(HSA_AGENT_INFO_FAST_F16_OPERATION);
  ENUM(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY);
  ENUM(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID);
  ENUM(HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS);
  ENUM(HSA_AMD_AGENT_INFO_BDFID);
  ENUM(HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU);
  ENUM(HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU);
  ENUM(HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES);
  ENUM(HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE);
  ENUM(HSA_AMD_AGENT_INFO_ASIC_REVISION);
  ENUM(HSA_AMD_AGENT_INFO_HDP_FLUSH);
  ENUM(HSA_SYMBOL_LINKAGE_PROGRAM);
  ENUM(HSA_VARIABLE_ALLOCATION_AGENT);
  ENUM(HSA_VARIABLE_ALLOCATION_PROGRAM);
  ENUM(HSA_VARIABLE_SEGMENT_GLOBAL);
  ENUM(HSA_VARIABLE_SEGMENT_READONLY);
  ENUM(HSA_EXECUTABLE_STATE_UNFROZEN);
  ENUM(HSA_EXECUTABLE_STATE_FROZEN);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS);
  ENUM(HSA_SYSTEM_INFO_EXTENSIONS);
  ENUM(HSA_AMD_SYSTEM_INFO_BUILD_VERSION);
  ENUM(HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED);
  ENUM(HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT);
  ENUM(HSA_AGENT_INFO_EXTENSIONS);
  ENUM(HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES);
  ENUM(HSA_AMD_AGENT_INFO_MEMORY_WIDTH);
  ENUM(HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY);
  ENUM(HSA_AMD_AGENT_INFO_DOMAIN);
  ENUM(HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES);
  ENUM(HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS);
  ENUM(HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT);
  ENUM(HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS);

  ENUM(HSA_DEVICE_TYPE_CPU);
  ENUM(HSA_DEVICE_TYPE_GPU);
  ENUM(HSA_DEVICE_TYPE_DSP);
  ENUM(HSA_AGENT_FEATURE_KERNEL_DISPATCH);
  ENUM(HSA_AGENT_FEATURE_AGENT_DISPATCH);

  ENUM(HSA_ISA_INFO_NAME_LENGTH);
  ENUM(HSA_ISA_INFO_NAME);
  ENUM(HSA_ISA_INFO_MACHINE_MODELS);
  ENUM(HSA_ISA_INFO_PROFILES);
  ENUM(HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES);
  ENUM(HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES);
  ENUM(HSA_ISA_INFO_FAST_F16_OPERATION);
  ENUM(HSA_ISA_INFO_WORKGROUP_MAX_DIM);
  ENUM(HSA_ISA_INFO_WORKGROUP_MAX_SIZE);
  ENUM(HSA_ISA_INFO_GRID_MAX_DIM);
  ENUM(HSA_ISA_INFO_GRID_MAX_SIZE);
  ENUM(HSA_ISA_INFO_FBARRIER_MAX_SIZE);

  ENUM(HSA_AMD_MEMORY_POOL_INFO_SEGMENT);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_SIZE);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL);
  ENUM(HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE);
  ENUM(HSA_AMD_SEGMENT_GLOBAL);
  ENUM(HSA_AMD_SEGMENT_READONLY);
  ENUM(HSA_AMD_SEGMENT_PRIVATE);
  ENUM(HSA_AMD_SEGMENT_GROUP);
  ENUM(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
  ENUM(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  ENUM(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

  ENUM(HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS);
  ENUM(HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS);
  ENUM(HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO);
  ENUM(HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED);
  ENUM(HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
  ENUM(HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
  ENUM(HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT);
  ENUM(HSA_AMD_LINK_INFO_TYPE_QPI);
  ENUM(HSA_AMD_LINK_INFO_TYPE_PCIE);
  ENUM(HSA_AMD_LINK_INFO_TYPE_INFINBAND);
  ENUM(HSA_AMD_LINK_INFO_TYPE_XGMI);
  ENUM(HSA_AMD_GPU_MEMORY_FAULT_EVENT);
  ENUM(HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT);
  ENUM(HSA_AMD_MEMORY_FAULT_READ_ONLY);
  ENUM(HSA_AMD_MEMORY_FAULT_NX);
  ENUM(HSA_AMD_MEMORY_FAULT_HOST_ONLY);
  ENUM(HSA_AMD_SIGNAL_AMD_GPU_ONLY);
  ENUM(HSA_AMD_SIGNAL_IPC);

  ENUM(HSA_PROFILE_BASE);
  ENUM(HSA_PROFILE_FULL);
  ENUM(HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT);
  ENUM(HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
  ENUM(HSA_MACHINE_MODEL_LARGE);
  ENUM(HSA_SYMBOL_KIND_VARIABLE);
  ENUM(HSA_SYMBOL_KIND_KERNEL);

  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_TYPE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_NAME);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_AGENT);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE);
  ENUM(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK);
}

int main(void) {
  packets();
  queues_and_signals();
  enums();
  /* A truncated run must not look like a short but complete list. */
  printf("end\n");
  return ferror(stdout) ? 1 : 0;
}
