//! Extension support, the AMD loader extension's table, the absent image and finalizer
//! extensions, locked host memory, the coherency type, async signal handlers and async-copy
//! profiling, each through its guarded export (`soft/extensions.rs`, `soft/host_memory.rs`,
//! `soft/async_handlers.rs`), with the statuses of `hsa_ext_amd.h` and `hsa_ven_amd_loader.h`.

mod common;

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_hsa::sys::{
    agent_info, hsa_agent_t, hsa_amd_pointer_info_t, hsa_amd_profiling_dispatch_time_t, hsa_code_object_reader_t,
    hsa_executable_t, hsa_loaded_code_object_t, hsa_signal_t, hsa_signal_value_t, status, system_info,
};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

const IMAGES: u16 = 1;
const AMD_PROFILER: u16 = 0x200;
const AMD_LOADER: u16 = 0x201;

fn bit(mask: &[u8; 128], extension: u16) -> bool {
    mask[usize::from(extension / 8)] & (1 << (extension % 8)) != 0
}

#[test]
fn the_runtime_supports_the_loader_and_profiler_extensions_only() {
    let client = Client::new();
    let (mut supported, mut minor, mut name) = (false, 7u16, core::ptr::null::<c_char>());
    // SAFETY (every call): pointers to fill, static strings read back.
    unsafe {
        assert_eq!(hsa::hsa_extension_get_name(AMD_LOADER, &mut name), status::SUCCESS);
        assert_eq!(CStr::from_ptr(name), c"HSA_EXTENSION_AMD_LOADER");
        assert_eq!(hsa::hsa_extension_get_name(0x100, &mut name), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(CStr::from_ptr(name), c"HSA_EXTENSION_INVALID");

        for (extension, major, minor, expected) in
            [(AMD_LOADER, 1, 3, true), (AMD_LOADER, 1, 4, false), (AMD_LOADER, 2, 0, false), (AMD_PROFILER, 1, 0, true)]
        {
            assert_eq!(hsa::hsa_system_extension_supported(extension, major, minor, &mut supported), status::SUCCESS);
            assert_eq!(supported, expected, "extension {extension:#x} {major}.{minor}");
        }
        assert_eq!(hsa::hsa_system_extension_supported(IMAGES, 1, 0, &mut supported), status::SUCCESS);
        assert!(!supported, "the soft agent has no image support");
        assert_eq!(
            hsa::hsa_system_major_extension_supported(AMD_LOADER, 1, &mut minor, &mut supported),
            status::SUCCESS
        );
        assert_eq!((supported, minor), (true, 3));
        assert_eq!(hsa::hsa_system_major_extension_supported(IMAGES, 1, &mut minor, &mut supported), status::SUCCESS);
        assert_eq!((supported, minor), (false, 0));
        assert_eq!(hsa::hsa_system_extension_supported(4, 1, 0, &mut supported), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_system_extension_supported(1, 1, 0, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);

        assert_eq!(hsa::hsa_agent_extension_supported(AMD_LOADER, client.agent, 1, 0, &mut supported), status::SUCCESS);
        assert!(supported, "a GPU agent supports what the system does");
        let cpu = client.hsa.cpu_agents().expect("agents")[0].agent;
        assert_eq!(hsa::hsa_agent_extension_supported(AMD_LOADER, cpu, 1, 0, &mut supported), status::SUCCESS);
        assert!(!supported, "ROCr's CPU agent supports no extension");
        assert_eq!(
            hsa::hsa_agent_major_extension_supported(1, hsa_agent_t { handle: 7 }, 1, &mut minor, &mut supported),
            status::ERROR_INVALID_AGENT
        );

        let mut mask = [0u8; 128];
        assert_eq!(hsa::hsa_system_get_info(system_info::EXTENSIONS, mask.as_mut_ptr().cast()), status::SUCCESS);
        assert!(bit(&mask, AMD_LOADER) && bit(&mask, AMD_PROFILER) && !bit(&mask, IMAGES));
        assert_eq!(
            hsa::hsa_agent_get_info(client.agent, agent_info::EXTENSIONS, mask.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert!(bit(&mask, AMD_PROFILER) && !bit(&mask, AMD_LOADER), "ROCr's agent mask never carries the loader");
    }
}

#[test]
fn extension_tables_are_copied_to_the_callers_length() {
    let _client = Client::new();
    // SAFETY (every call): tables of the given lengths.
    unsafe {
        let mut table = [0usize; 8];
        assert_eq!(
            hsa::hsa_system_get_major_extension_table(AMD_LOADER, 1, 7 * 8, table.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert!(table[..7].iter().all(|&function| function != 0), "the 1.03 table: {table:x?}");
        assert_eq!(table[7], 0, "nothing past the caller's length");
        let mut short = [0usize; 7];
        assert_eq!(
            hsa::hsa_system_get_major_extension_table(AMD_LOADER, 1, 3 * 8, short.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert_eq!(&short[..3], &table[..3]);
        assert_eq!(&short[3..], &[0; 4], "a 1.00 table is three functions");
        let mut by_version = [0usize; 7];
        assert_eq!(
            hsa::hsa_system_get_extension_table(AMD_LOADER, 1, 1, by_version.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert_eq!(&by_version[..5], &table[..5]);
        assert_eq!(&by_version[5..], &[0; 2], "1.01 is five functions");
        assert_eq!(
            hsa::hsa_system_get_extension_table(AMD_LOADER, 1, 9, by_version.as_mut_ptr().cast()),
            status::ERROR_INVALID_ARGUMENT,
            "no 1.09 table: length 0"
        );
        assert_eq!(hsa::hsa_system_get_major_extension_table(IMAGES, 1, 64, table.as_mut_ptr().cast()), status::ERROR);
        assert_eq!(
            hsa::hsa_system_get_major_extension_table(AMD_LOADER, 2, 64, table.as_mut_ptr().cast()),
            status::ERROR
        );
        assert_eq!(
            hsa::hsa_system_get_major_extension_table(AMD_LOADER, 1, 0, table.as_mut_ptr().cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_system_get_major_extension_table(AMD_LOADER, 1, 64, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
}

/// `hsa_ven_amd_loader_1_03_pfn_t`.
#[repr(C)]
struct LoaderTable {
    query_host_address: unsafe extern "C" fn(*const c_void, *mut *const c_void) -> u32,
    query_segment_descriptors: unsafe extern "C" fn(*mut SegmentDescriptor, *mut usize) -> u32,
    query_executable: unsafe extern "C" fn(*const c_void, *mut hsa_executable_t) -> u32,
    iterate_loaded_code_objects: unsafe extern "C" fn(
        hsa_executable_t,
        Option<unsafe extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> u32>,
        *mut c_void,
    ) -> u32,
    loaded_code_object_get_info: unsafe extern "C" fn(hsa_loaded_code_object_t, u32, *mut c_void) -> u32,
    reader_from_file: unsafe extern "C" fn(c_int, usize, usize, *mut hsa_code_object_reader_t) -> u32,
    iterate_executables:
        unsafe extern "C" fn(Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> u32>, *mut c_void) -> u32,
}

/// `hsa_ven_amd_loader_segment_descriptor_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
struct SegmentDescriptor {
    agent: hsa_agent_t,
    executable: hsa_executable_t,
    storage_type: u32,
    storage_base: *const c_void,
    storage_size: usize,
    storage_offset: usize,
    segment_base: *const c_void,
    segment_size: usize,
}

fn loader() -> LoaderTable {
    let mut table = core::mem::MaybeUninit::<LoaderTable>::zeroed();
    // SAFETY: a table of the 1.03 length to fill; every entry is written (checked above).
    let status = unsafe {
        hsa::hsa_system_get_major_extension_table(AMD_LOADER, 1, size_of::<LoaderTable>(), table.as_mut_ptr().cast())
    };
    assert_eq!(status, status::SUCCESS);
    // SAFETY: all seven function pointers were written.
    unsafe { table.assume_init() }
}

unsafe extern "C" fn collect_loaded(_: hsa_executable_t, loaded: hsa_loaded_code_object_t, data: *mut c_void) -> u32 {
    // SAFETY: the test passes a Vec<u64>.
    unsafe { (*data.cast::<Vec<u64>>()).push(loaded.handle) };
    status::SUCCESS
}

unsafe extern "C" fn collect_executable(executable: hsa_executable_t, data: *mut c_void) -> u32 {
    // SAFETY: the test passes a Vec<u64>.
    unsafe { (*data.cast::<Vec<u64>>()).push(executable.handle) };
    status::SUCCESS
}

fn loaded_code_objects(table: &LoaderTable, executable: hsa_executable_t) -> Vec<hsa_loaded_code_object_t> {
    let mut handles: Vec<u64> = Vec::new();
    // SAFETY: a live executable; the callback appends to `handles`.
    let status =
        unsafe { (table.iterate_loaded_code_objects)(executable, Some(collect_loaded), (&raw mut handles).cast()) };
    assert_eq!(status, status::SUCCESS);
    handles.into_iter().map(|handle| hsa_loaded_code_object_t { handle }).collect()
}

fn info<T: Default>(table: &LoaderTable, loaded: hsa_loaded_code_object_t, attribute: u32) -> T {
    let mut value = T::default();
    // SAFETY: `value` has the attribute's type.
    let status = unsafe { (table.loaded_code_object_get_info)(loaded, attribute, (&raw mut value).cast()) };
    assert_eq!(status, status::SUCCESS, "attribute {attribute}");
    value
}

fn uri(table: &LoaderTable, loaded: hsa_loaded_code_object_t) -> String {
    let length: u32 = info(table, loaded, 11);
    let mut bytes = vec![0xAAu8; length as usize + 1];
    // SAFETY: room for the URI and its NUL.
    let status = unsafe { (table.loaded_code_object_get_info)(loaded, 12, bytes.as_mut_ptr().cast()) };
    assert_eq!(status, status::SUCCESS);
    assert_eq!(bytes.pop(), Some(0), "NUL-terminated");
    String::from_utf8(bytes).expect("ASCII")
}

#[test]
fn the_loader_extension_describes_each_loaded_code_object() {
    let client = Client::new();
    let table = loader();
    let executable = client.hsa.load_executable(client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let kernel = client.hsa.kernel_symbol(executable, client.agent, "store_value.kd").expect("symbol");
    let loaded = loaded_code_objects(&table, executable);
    assert_eq!(loaded.len(), 1, "one code object loaded");
    let loaded = loaded[0];

    assert_eq!(info::<u64>(&table, loaded, 1), executable.handle);
    assert_eq!(info::<u32>(&table, loaded, 2), 2, "an agent code object");
    assert_eq!(info::<u64>(&table, loaded, 3), client.agent.handle);
    assert_eq!(info::<u32>(&table, loaded, 4), 2, "read from memory");
    assert_eq!(info::<u64>(&table, loaded, 6), TEST_KERNELS_GFX1100.len() as u64);
    let (base, size): (u64, u64) = (info(&table, loaded, 9), info(&table, loaded, 10));
    assert!(base != 0 && base.is_multiple_of(4096), "page-aligned load base {base:#x}");
    assert!((base..base + size).contains(&kernel.kernel_object), "the kernel object lies in the loaded image");
    assert_eq!(info::<i64>(&table, loaded, 8), base as i64, "the code object's segments start at vaddr 0");
    let uri = uri(&table, loaded);
    assert!(uri.starts_with(&format!("memory://{}#offset=0x", std::process::id())), "{uri}");
    assert!(uri.ends_with(&format!("&size={}", TEST_KERNELS_GFX1100.len())), "{uri}");

    // The descriptor a dispatch reads is the code object's own, copied to the image.
    let parsed = aqueduct_codeobject::CodeObject::parse(TEST_KERNELS_GFX1100).expect("parses");
    let index = parsed.kernel_index("store_value.kd").expect("kernel");
    let file_descriptor = parsed.kernel_descriptor_bytes(TEST_KERNELS_GFX1100, index).expect("descriptor");
    // SAFETY: the kernel object addresses 64 loaded bytes while the executable lives.
    let loaded_descriptor = unsafe { core::slice::from_raw_parts(kernel.kernel_object as *const u8, 64) };
    assert_eq!(loaded_descriptor, file_descriptor);

    let stack_value = 5u64;
    let (mut host, mut owner) = (core::ptr::null::<c_void>(), hsa_executable_t::default());
    // SAFETY (every call): addresses to look up, pointers to fill.
    unsafe {
        let device = kernel.kernel_object as *const c_void;
        assert_eq!((table.query_host_address)(device, &mut host), status::SUCCESS);
        assert_eq!(host, device, "the soft agent's memory is the host's");
        assert_eq!((table.query_executable)(device, &mut owner), status::SUCCESS);
        assert_eq!(owner, executable);
        let outside = (&raw const stack_value).cast::<c_void>();
        assert_eq!((table.query_host_address)(outside, &mut host), status::ERROR_INVALID_ARGUMENT);
        assert_eq!((table.query_executable)(outside, &mut owner), status::ERROR_INVALID_ARGUMENT);
        assert_eq!((table.query_host_address)(core::ptr::null(), &mut host), status::ERROR_INVALID_ARGUMENT);

        let bogus = hsa_loaded_code_object_t { handle: loaded.handle ^ 0xFFFF };
        let mut value = 0u64;
        assert_eq!(
            (table.loaded_code_object_get_info)(bogus, 1, (&raw mut value).cast()),
            status::ERROR_INVALID_CODE_OBJECT
        );
        assert_eq!(
            (table.loaded_code_object_get_info)(loaded, 13, (&raw mut value).cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            (table.loaded_code_object_get_info)(loaded, 1, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            (table.iterate_loaded_code_objects)(
                hsa_executable_t { handle: 3 },
                Some(collect_loaded),
                core::ptr::null_mut()
            ),
            status::ERROR_INVALID_EXECUTABLE
        );
        assert_eq!(
            (table.iterate_loaded_code_objects)(executable, None, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );

        let mut executables: Vec<u64> = Vec::new();
        assert_eq!(
            (table.iterate_executables)(Some(collect_executable), (&raw mut executables).cast()),
            status::SUCCESS
        );
        assert!(executables.contains(&executable.handle));
        assert_eq!((table.iterate_executables)(None, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);
    }
}

#[test]
fn segment_descriptors_are_counted_then_listed_exactly() {
    let client = Client::new();
    let table = loader();
    let executable = client.hsa.load_executable(client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let kernel = client.hsa.kernel_symbol(executable, client.agent, "store_value.kd").expect("symbol");
    let mut count = 0usize;
    // SAFETY (every call): a count to read and fill, arrays of the stated length.
    unsafe {
        assert_eq!((table.query_segment_descriptors)(core::ptr::null_mut(), &mut count), status::SUCCESS);
        assert!(count >= 1);
        let mut descriptors = vec![core::mem::zeroed::<SegmentDescriptor>(); count + 1];
        let mut wrong = count + 1;
        assert_eq!(
            (table.query_segment_descriptors)(descriptors.as_mut_ptr(), &mut wrong),
            status::ERROR_INCOMPATIBLE_ARGUMENTS
        );
        assert_eq!(
            (table.query_segment_descriptors)(core::ptr::null_mut(), &mut wrong),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            (table.query_segment_descriptors)(descriptors.as_mut_ptr(), core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        // Other tests in this process load code objects too: retry until the count holds still.
        let listed = loop {
            let mut now = 0usize;
            assert_eq!((table.query_segment_descriptors)(core::ptr::null_mut(), &mut now), status::SUCCESS);
            descriptors.resize(now, core::mem::zeroed());
            if (table.query_segment_descriptors)(descriptors.as_mut_ptr(), &mut now) == status::SUCCESS {
                break descriptors;
            }
        };
        let holding = listed.iter().find(|segment| {
            let start = segment.segment_base as u64;
            (start..start + segment.segment_size as u64).contains(&kernel.kernel_object)
        });
        let segment = holding.expect("a segment holds the kernel descriptor");
        assert_eq!(segment.executable, executable);
        assert_eq!(segment.agent, client.agent);
        assert_eq!(segment.storage_type, 2);
        assert_eq!(segment.storage_size, TEST_KERNELS_GFX1100.len());
    }
}

#[test]
fn a_reader_from_part_of_a_file_loads_and_names_its_file() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let client = Client::new();
    let table = loader();
    let path = std::env::temp_dir().join(format!("aqueduct-offset-reader-{}.bin", std::process::id()));
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&[0xEE; 100]).unwrap();
    file.write_all(TEST_KERNELS_GFX1100).unwrap();
    file.write_all(&[0xEE; 7]).unwrap();
    drop(file);
    let file = std::fs::File::open(&path).unwrap();
    let fd = file.as_raw_fd();
    let size = TEST_KERNELS_GFX1100.len();
    let mut reader = hsa_code_object_reader_t::default();
    // SAFETY (every call): an open descriptor (or -1), a reader to fill.
    unsafe {
        assert_eq!((table.reader_from_file)(fd, 100, size, &mut reader), status::SUCCESS);
        let mut executable = hsa_executable_t::default();
        assert_eq!(hsa::hsa_executable_create_alt(0, 0, core::ptr::null(), &mut executable), status::SUCCESS);
        let status = hsa::hsa_executable_load_agent_code_object(
            executable,
            client.agent,
            reader,
            core::ptr::null(),
            core::ptr::null_mut(),
        );
        assert_eq!(status, status::SUCCESS);
        let loaded = loaded_code_objects(&table, executable);
        assert_eq!(info::<u32>(&table, loaded[0], 4), 1, "read from a file");
        assert_eq!(info::<c_int>(&table, loaded[0], 7), fd);
        let uri = uri(&table, loaded[0]);
        assert!(uri.starts_with("file:///") && uri.ends_with(&format!("#offset=100&size={size}")), "{uri}");

        assert_eq!(
            (table.reader_from_file)(fd, 100, 0, &mut reader),
            status::ERROR_INVALID_CODE_OBJECT,
            "nothing to read"
        );
        assert_eq!(
            (table.reader_from_file)(fd, 1 << 30, 8, &mut reader),
            status::ERROR_INVALID_CODE_OBJECT,
            "past the end"
        );
        assert_eq!(
            (table.reader_from_file)(fd, 0, size + 200, &mut reader),
            status::ERROR_INVALID_CODE_OBJECT,
            "too long"
        );
        assert_eq!(
            (table.reader_from_file)(fd, 0, 100, &mut reader),
            status::ERROR_INVALID_CODE_OBJECT,
            "not a code object"
        );
        assert_eq!((table.reader_from_file)(-1, 0, 8, &mut reader), status::ERROR_INVALID_FILE);
        assert_eq!((table.reader_from_file)(fd, 100, size, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_executable_destroy(executable), status::SUCCESS);
    }
    drop(file);
    let _ = std::fs::remove_file(path);
}

#[test]
fn the_image_and_finalizer_entry_points_answer_as_rocr_without_their_libraries() {
    let client = Client::new();
    let null = core::ptr::null_mut::<c_void>();
    let mut value = [0u32; 4];
    // SAFETY (every call): none reads its arguments.
    unsafe {
        let image = Default::default();
        let statuses = [
            hsa::hsa_ext_image_get_capability(client.agent, 0, null, null.cast()),
            hsa::hsa_ext_image_get_capability_with_layout(client.agent, 0, null, 0, null.cast()),
            hsa::hsa_ext_image_data_get_info(client.agent, null, 1, null),
            hsa::hsa_ext_image_data_get_info_with_layout(client.agent, null, 1, 0, 0, 0, null),
            hsa::hsa_ext_image_create(client.agent, null, null, 1, null.cast()),
            hsa::hsa_ext_image_create_with_layout(client.agent, null, null, 1, 0, 0, 0, null.cast()),
            hsa::hsa_ext_image_destroy(client.agent, image),
            hsa::hsa_ext_image_copy(client.agent, image, null, image, null, null),
            hsa::hsa_ext_image_import(client.agent, null, 0, 0, image, null),
            hsa::hsa_ext_image_export(client.agent, image, null, 0, 0, null),
            hsa::hsa_ext_image_clear(client.agent, image, null, null),
            hsa::hsa_ext_sampler_create(client.agent, null, null.cast()),
            hsa::hsa_ext_sampler_destroy(client.agent, Default::default()),
            hsa::hsa_amd_image_get_info_max_dim(client.agent, 0x3000, value.as_mut_ptr().cast()),
            hsa::hsa_amd_image_create(client.agent, null, null, null, 1, null.cast()),
            hsa::hsa_ext_program_create(1, 0, 0, core::ptr::null(), null.cast()),
            hsa::hsa_ext_program_destroy(Default::default()),
            hsa::hsa_ext_program_add_module(Default::default(), null),
            hsa::hsa_ext_program_iterate_modules(Default::default(), null, null),
            hsa::hsa_ext_program_get_info(Default::default(), 0, null),
            hsa::hsa_ext_program_finalize(
                Default::default(),
                Default::default(),
                0,
                aqueduct_hsa::sys::hsa_ext_control_directives_t([0; 144]),
                core::ptr::null(),
                0,
                null.cast(),
            ),
        ];
        assert_eq!(statuses.len(), 21, "every image, sampler and program entry point");
        assert!(statuses.iter().all(|&status| status == status::ERROR_NOT_INITIALIZED), "{statuses:x?}");
        assert_eq!(
            hsa::hsa_agent_get_info(client.agent, 0x3003, value.as_mut_ptr().cast()),
            status::ERROR_NOT_INITIALIZED
        );
        assert_eq!(hsa::hsa_agent_get_info(client.agent, 0x3009, value.as_mut_ptr().cast()), status::SUCCESS);
        assert_eq!(value[0], 128, "ROCr's fixed read-only image handle count");
        let mut cooperative = true;
        let status =
            hsa::hsa_agent_get_info(client.agent, agent_info::AMD_COOPERATIVE_QUEUES, (&raw mut cooperative).cast());
        assert_eq!(status, status::SUCCESS);
        assert!(!cooperative, "no global wave sync");
        assert_eq!(
            hsa::hsa_agent_get_info(client.agent, agent_info::AMD_MEMORY_WIDTH, value.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert_eq!(value[0], 384);
    }
}

#[test]
fn locked_host_memory_is_reachable_by_its_agents_until_unlocked() {
    let client = Client::new();
    let mut host = vec![0u32; 4];
    let host_ptr = host.as_mut_ptr().cast::<c_void>();
    let mut agent_ptr = core::ptr::null_mut::<c_void>();
    let mut agents = [client.agent];
    // SAFETY (every call): the vector outlives its lock; pointers to fill.
    unsafe {
        assert_eq!(hsa::hsa_amd_memory_lock(host_ptr, 16, agents.as_mut_ptr(), 1, &mut agent_ptr), status::SUCCESS);
        assert!(!agent_ptr.is_null() && agent_ptr != host_ptr, "an agent address of its own, as on a discrete GPU");
        assert_eq!(agent_ptr as usize % 4096, host_ptr as usize % 4096, "the page offset kept");
        // Either address finds the lock, and the report names both.
        for inside in [host_ptr.byte_add(4), agent_ptr.byte_add(4)] {
            let mut info: hsa_amd_pointer_info_t = core::mem::zeroed();
            info.size = size_of::<hsa_amd_pointer_info_t>() as u32;
            let (mut count, mut listed) = (0u32, core::ptr::null_mut::<hsa_agent_t>());
            let status = hsa::hsa_amd_pointer_info(inside, &mut info, Some(libc_malloc), &mut count, &mut listed);
            assert_eq!(status, status::SUCCESS);
            assert_eq!(info.type_, 2, "HSA_EXT_POINTER_TYPE_LOCKED");
            assert_eq!((info.host_base_address, info.agent_base_address), (host_ptr, agent_ptr));
            assert_eq!(info.size_in_bytes, 16);
            assert_eq!(count, 2, "the CPU and the named GPU");
            assert_eq!(*listed.add(1), client.agent);
            libc::free(listed.cast());
        }
        // The same range locked again keeps its agent address (the thunk counts registrations).
        let mut again = core::ptr::null_mut::<c_void>();
        assert_eq!(hsa::hsa_amd_memory_lock(host_ptr, 16, agents.as_mut_ptr(), 1, &mut again), status::SUCCESS);
        assert_eq!(again, agent_ptr);
        assert_eq!(hsa::hsa_amd_memory_unlock(host_ptr), status::SUCCESS);

        // The runtime's copies and fills reach the host memory through the agent address.
        assert_eq!(hsa::hsa_amd_memory_fill(agent_ptr, 3, 4), status::SUCCESS);
        assert_eq!(host, [3, 3, 3, 3]);
        let pool = client.alloc_u32(4);
        pool.copy_from_slice(&[7, 8, 9, 10]);
        assert_eq!(hsa::hsa_memory_copy(agent_ptr, pool.as_ptr().cast(), 16), status::SUCCESS);
        assert_eq!(host, [7, 8, 9, 10]);
        let done = client.signal(1);
        let status = hsa::hsa_amd_memory_async_copy(
            pool.as_mut_ptr().cast(),
            client.agent,
            agent_ptr.byte_add(8),
            client.agent,
            8,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::SUCCESS);
        assert_eq!(client.wait_eq(done, 0, 10_000), 0);
        assert_eq!(pool, [9, 10, 9, 10]);
        // Past the locked range is reserved address space: refused, nothing copied.
        assert_eq!(hsa::hsa_memory_copy(pool.as_mut_ptr().cast(), agent_ptr, 32), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(pool, [9, 10, 9, 10]);
    }
    // A host build dereferences what it is given, and cannot reach an agent address: its
    // dispatch fails, naming why, and nothing is written.
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let refusal = |kernarg: u64| {
        let queue = client.queue(64);
        let done = client.signal(1);
        let id = queue.reserve_spinning();
        queue.publish(id, &dispatch_packet(&store, 4, 4, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
        let deadline = Instant::now() + Duration::from_secs(10);
        let (code, detail) = loop {
            if let Some(error) = aqueduct_soft_hsa::queue_error_detail(queue.raw).expect("queue") {
                break error;
            }
            assert!(Instant::now() < deadline, "the dispatch neither failed nor completed");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(code, status::ERROR_INVALID_CODE_SYMBOL, "{detail}");
        assert!(detail.contains("cannot run as a host build") && detail.contains("agent address"), "{detail}");
        detail
    };
    // A pointer argument that is an agent address.
    let detail = refusal(client.kernargs(&kernargs_store_value(agent_ptr.cast(), 1, 4)));
    assert!(detail.contains("pointer argument"), "{detail}");
    assert_eq!(host, [7, 8, 9, 10]);
    // The kernarg segment itself (272 bytes with the hidden arguments) in locked memory, reached
    // through its agent address.
    #[repr(C, align(16))]
    struct KernargBlock([u8; 512]);
    let out = client.alloc_u32(4);
    let bytes = kernargs_store_value(out.as_mut_ptr(), 1, 4);
    let mut block = Box::new(KernargBlock([0; 512]));
    block.0[..bytes.len()].copy_from_slice(&bytes);
    let block_ptr = block.0.as_mut_ptr().cast::<c_void>();
    let mut kernarg_agent = core::ptr::null_mut::<c_void>();
    // SAFETY: the block outlives its lock; a pointer to fill.
    let locked = unsafe { hsa::hsa_amd_memory_lock(block_ptr, 512, agents.as_mut_ptr(), 1, &mut kernarg_agent) };
    assert_eq!(locked, status::SUCCESS);
    let detail = refusal(kernarg_agent as u64);
    assert!(detail.contains("kernarg segment"), "{detail}");
    assert_eq!(out, [0, 0, 0, 0]);
    // SAFETY: the pointer locked above.
    assert_eq!(unsafe { hsa::hsa_amd_memory_unlock(block_ptr) }, status::SUCCESS);
    // SAFETY (every call): as above; the refused calls change nothing.
    unsafe {
        let mut pool_ptr = core::ptr::null_mut::<c_void>();
        assert_eq!(
            hsa::hsa_amd_memory_lock_to_pool(
                host_ptr,
                16,
                core::ptr::null_mut(),
                0,
                client.device_pool,
                0,
                &mut pool_ptr
            ),
            status::ERROR_INVALID_MEMORY_POOL,
            "a GPU's pool"
        );
        assert_eq!(
            hsa::hsa_amd_memory_lock_to_pool(
                host_ptr,
                16,
                core::ptr::null_mut(),
                0,
                client.kernarg_pool,
                1,
                &mut pool_ptr
            ),
            status::ERROR_INVALID_ARGUMENT,
            "flags must be 0"
        );
        assert_eq!(
            hsa::hsa_amd_memory_lock_to_pool(
                host_ptr,
                16,
                core::ptr::null_mut(),
                0,
                client.kernarg_pool,
                0,
                &mut pool_ptr
            ),
            status::SUCCESS,
            "null agents and 0: every agent"
        );
        assert_eq!(
            hsa::hsa_amd_memory_lock(host_ptr, 0, core::ptr::null_mut(), 0, &mut agent_ptr),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_memory_lock(host_ptr, 16, core::ptr::null_mut(), 1, &mut agent_ptr),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_memory_lock(host_ptr, 16, agents.as_mut_ptr(), 0, &mut agent_ptr),
            status::ERROR_INVALID_ARGUMENT
        );
        let mut bogus = [hsa_agent_t { handle: 9 }];
        assert_eq!(
            hsa::hsa_amd_memory_lock(host_ptr, 16, bogus.as_mut_ptr(), 1, &mut agent_ptr),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!(hsa::hsa_amd_memory_unlock(host_ptr), status::SUCCESS, "the pool lock");
        assert_eq!(hsa::hsa_amd_memory_unlock(host_ptr), status::SUCCESS, "the first lock");
        assert_eq!(hsa::hsa_amd_memory_unlock(host_ptr), status::ERROR_INVALID_ARGUMENT, "nothing left to unlock");
        let mut info: hsa_amd_pointer_info_t = core::mem::zeroed();
        info.size = size_of::<hsa_amd_pointer_info_t>() as u32;
        let status = hsa::hsa_amd_pointer_info(host_ptr, &mut info, None, core::ptr::null_mut(), core::ptr::null_mut());
        assert_eq!((status, info.type_), (status::SUCCESS, 0), "unknown once unlocked");
        assert_eq!(hsa::hsa_amd_memory_pool_free(core::ptr::null_mut()), status::SUCCESS, "ROCr frees null as success");
    }
}

unsafe extern "C" fn libc_malloc(size: usize) -> *mut c_void {
    // SAFETY: malloc of a size; the test frees it.
    unsafe { libc::malloc(size) }
}

#[test]
fn the_coherency_type_is_recorded_per_gpu() {
    let client = Client::new();
    let cpu = client.hsa.cpu_agents().expect("agents")[0].agent;
    let mut kind = 9u32;
    // SAFETY (every call): agents and a value to fill.
    unsafe {
        assert_eq!(hsa::hsa_amd_coherency_set_type(client.agent, 1), status::SUCCESS);
        assert_eq!(hsa::hsa_amd_coherency_get_type(client.agent, &mut kind), status::SUCCESS);
        assert_eq!(kind, 1);
        assert_eq!(hsa::hsa_amd_coherency_set_type(client.agent, 0), status::SUCCESS);
        assert_eq!(hsa::hsa_amd_coherency_get_type(client.agent, &mut kind), status::SUCCESS);
        assert_eq!(kind, 0);
        assert_eq!(hsa::hsa_amd_coherency_set_type(client.agent, 2), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_amd_coherency_set_type(cpu, 0), status::ERROR_INVALID_AGENT);
        assert_eq!(
            hsa::hsa_amd_coherency_get_type(client.agent, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
}

static HANDLER_CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn count_once(value: hsa_signal_value_t, arg: *mut c_void) -> bool {
    assert_eq!(value, 0, "called with the value that met the condition");
    assert_eq!(arg as usize, 0x1234);
    HANDLER_CALLS.fetch_add(1, Ordering::SeqCst);
    false
}

#[test]
fn an_async_handler_runs_once_its_condition_holds() {
    let client = Client::new();
    let signal = client.signal(1);
    // SAFETY (every call): a live signal, the handler above.
    unsafe {
        assert_eq!(
            hsa::hsa_amd_signal_async_handler(signal, 0, 0, Some(count_once), 0x1234 as *mut c_void),
            status::SUCCESS
        );
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(HANDLER_CALLS.load(Ordering::SeqCst), 0, "not before the condition holds");
        hsa::hsa_signal_store_screlease(signal, 0);
        let deadline = Instant::now() + Duration::from_secs(10);
        while HANDLER_CALLS.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(HANDLER_CALLS.load(Ordering::SeqCst), 1, "a handler that returns false runs once");

        let dead = hsa_signal_t { handle: 0x10 };
        assert_eq!(
            hsa::hsa_amd_signal_async_handler(dead, 0, 0, Some(count_once), core::ptr::null_mut()),
            status::ERROR_INVALID_SIGNAL
        );
        assert_eq!(
            hsa::hsa_amd_signal_async_handler(signal, 0, 0, None, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_signal_async_handler(signal, 9, 0, Some(count_once), core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
}

#[test]
fn a_profiled_async_copy_reports_its_interval() {
    let client = Client::new();
    let a = client.hsa.allocate(client.device_pool, 4096).expect("allocation");
    let b = client.hsa.allocate(client.device_pool, 4096).expect("allocation");
    let done = client.signal(1);
    let mut time = hsa_amd_profiling_dispatch_time_t::default();
    // SAFETY (every call): live allocations of 4096 bytes, a live signal, a time to fill.
    unsafe {
        assert_eq!(hsa::hsa_amd_profiling_async_copy_enable(true), status::SUCCESS);
        let status = hsa::hsa_amd_memory_async_copy(
            b.cast(),
            client.agent,
            a.cast(),
            client.agent,
            4096,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::SUCCESS);
        assert_eq!(client.wait_eq(done, 0, 10_000), 0);
        assert_eq!(hsa::hsa_amd_profiling_get_async_copy_time(done, &mut time), status::SUCCESS);
        assert!(time.start != 0 && time.start <= time.end, "{time:?}");
        assert_eq!(
            hsa::hsa_amd_profiling_get_async_copy_time(done, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_profiling_get_async_copy_time(hsa_signal_t { handle: 0x10 }, &mut time),
            status::ERROR_INVALID_SIGNAL
        );
        assert_eq!(hsa::hsa_amd_profiling_async_copy_enable(false), status::SUCCESS);
    }
}

#[test]
fn a_rect_copy_moves_each_row_behind_its_dependency() {
    use aqueduct_hsa::sys::{hsa_dim3_t, hsa_pitched_ptr_t};
    let client = Client::new();
    // Two 64-byte-pitch images of 4 rows in 2 slices (slice pitch 256).
    let (src, dst) = (client.alloc_u32(128), client.alloc_u32(128));
    for (index, word) in src.iter_mut().enumerate() {
        *word = index as u32;
    }
    let pitched = |words: &mut [u32]| hsa_pitched_ptr_t { base: words.as_mut_ptr().cast(), pitch: 64, slice: 256 };
    let (src_ptr, dst_ptr) = (pitched(src), pitched(dst));
    let src_offset = hsa_dim3_t { x: 8, y: 1, z: 0 };
    let dst_offset = hsa_dim3_t { x: 4, y: 0, z: 1 };
    let range = hsa_dim3_t { x: 16, y: 2, z: 1 };
    let gate = client.signal(1);
    let done = client.signal(1);
    // SAFETY (every call): live allocations of 512 bytes each, live signals.
    unsafe {
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &src_offset,
            &range,
            client.agent,
            3,
            1,
            &gate,
            done,
        );
        assert_eq!(status, status::SUCCESS);
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(client.load(done), 1, "held by its dependency");
        hsa::hsa_signal_store_screlease(gate, 0);
        assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    }
    let dst: &[u32] = dst;
    for row in 0..2 {
        // dst word (slice 1, row `row`, bytes 4..20) = src word (slice 0, row 1 + row, bytes 8..24)
        let to = 64 + row * 16 + 1;
        let from = (1 + row) * 16 + 2;
        assert_eq!(&dst[to..to + 4], &src[from..from + 4], "row {row}");
    }
    assert_eq!(dst.iter().filter(|&&word| word != 0).count(), 8, "only the rect was written");
    // SAFETY (every call): refused before anything starts.
    unsafe {
        let odd = hsa_dim3_t { x: 2, ..src_offset };
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &odd,
            &range,
            client.agent,
            3,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::ERROR_INVALID_ARGUMENT, "x offsets are 4-byte aligned");
        let wide = hsa_dim3_t { x: 64, ..range };
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &src_offset,
            &wide,
            client.agent,
            3,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::ERROR_INVALID_ARGUMENT, "a row past its pitch");
        let cpu = client.hsa.cpu_agents().expect("agents")[0].agent;
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &src_offset,
            &range,
            cpu,
            3,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::ERROR_INVALID_AGENT, "CPU agents are not supported");
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &src_offset,
            &range,
            client.agent,
            4,
            0,
            core::ptr::null(),
            done,
        );
        assert_eq!(status, status::ERROR_INVALID_ARGUMENT, "no direction 4");
        let status = hsa::hsa_amd_memory_async_copy_rect(
            &dst_ptr,
            &dst_offset,
            &src_ptr,
            &src_offset,
            &range,
            client.agent,
            3,
            0,
            core::ptr::null(),
            hsa_signal_t { handle: 0x10 },
        );
        assert_eq!(status, status::ERROR_INVALID_SIGNAL);
    }
}

static ASYNC_FUNCTION_CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn add_argument(argument: *mut c_void) {
    ASYNC_FUNCTION_CALLS.fetch_add(argument as u32, Ordering::SeqCst);
}

#[test]
fn an_async_function_runs_once_on_the_runtime_thread() {
    let _client = Client::new();
    // SAFETY: the function above; its argument is a number.
    unsafe {
        assert_eq!(hsa::hsa_amd_async_function(Some(add_argument), 5 as *mut c_void), status::SUCCESS);
        assert_eq!(hsa::hsa_amd_async_function(None, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while ASYNC_FUNCTION_CALLS.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(ASYNC_FUNCTION_CALLS.load(Ordering::SeqCst), 5, "once");
}

#[test]
fn migration_interop_and_svm_fail_as_rocr_fails_them_here() {
    let client = Client::new();
    let mut result = true;
    let bogus_pool = aqueduct_hsa::sys::hsa_amd_memory_pool_t { handle: 9 };
    let mut bytes = [0u8; 64];
    let pointer = bytes.as_mut_ptr().cast::<c_void>();
    let (mut size, mut mapped) = (0usize, core::ptr::null_mut::<c_void>());
    let mut agents = [client.agent];
    // SAFETY (every call): pointers to fill; nothing is read past its checks.
    unsafe {
        assert_eq!(
            hsa::hsa_amd_memory_pool_can_migrate(client.device_pool, client.kernarg_pool, &mut result),
            status::ERROR_OUT_OF_RESOURCES
        );
        assert!(!result, "ROCr 5.2.3 implements no migration");
        assert_eq!(
            hsa::hsa_amd_memory_pool_can_migrate(bogus_pool, client.device_pool, &mut result),
            status::ERROR_INVALID_MEMORY_POOL
        );
        assert_eq!(
            hsa::hsa_amd_memory_pool_can_migrate(client.device_pool, client.device_pool, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(hsa::hsa_amd_memory_migrate(pointer, client.device_pool, 0), status::ERROR_OUT_OF_RESOURCES);
        assert_eq!(hsa::hsa_amd_memory_migrate(pointer, client.device_pool, 1), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_amd_memory_migrate(pointer, bogus_pool, 0), status::ERROR_INVALID_MEMORY_POOL);

        assert_eq!(
            hsa::hsa_amd_interop_map_buffer(
                1,
                agents.as_mut_ptr(),
                3,
                0,
                &mut size,
                &mut mapped,
                core::ptr::null_mut(),
                core::ptr::null_mut()
            ),
            status::ERROR_INVALID_ARGUMENT,
            "no graphics driver knows the handle"
        );
        assert_eq!(
            hsa::hsa_amd_interop_map_buffer(
                0,
                agents.as_mut_ptr(),
                3,
                0,
                &mut size,
                &mut mapped,
                core::ptr::null_mut(),
                core::ptr::null_mut()
            ),
            status::ERROR_INVALID_ARGUMENT
        );
        let mut bogus = [hsa_agent_t { handle: 7 }];
        assert_eq!(
            hsa::hsa_amd_interop_map_buffer(
                1,
                bogus.as_mut_ptr(),
                3,
                0,
                &mut size,
                &mut mapped,
                core::ptr::null_mut(),
                core::ptr::null_mut()
            ),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!(hsa::hsa_amd_interop_unmap_buffer(pointer), status::SUCCESS);

        let mut build = core::ptr::null::<c_char>();
        assert_eq!(hsa::hsa_system_get_info(system_info::AMD_BUILD_VERSION, (&raw mut build).cast()), status::SUCCESS);
        assert!(CStr::from_ptr(build).to_string_lossy().starts_with("aqueduct soft HSA runtime "));
        let mut supported = true;
        assert_eq!(
            hsa::hsa_system_get_info(system_info::AMD_SVM_SUPPORTED, (&raw mut supported).cast()),
            status::SUCCESS
        );
        assert!(!supported);
        assert_eq!(hsa::hsa_amd_svm_attributes_set(pointer, 64, core::ptr::null_mut(), 0), status::ERROR);
        assert_eq!(hsa::hsa_amd_svm_attributes_get(pointer, 64, core::ptr::null_mut(), 0), status::ERROR);
        assert_eq!(
            hsa::hsa_amd_svm_prefetch_async(pointer, 64, client.agent, 0, core::ptr::null(), hsa_signal_t::default()),
            status::ERROR
        );
    }
}
