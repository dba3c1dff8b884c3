//! HSA extensions on the soft runtime: which it supports, the AMD loader extension's table
//! (`hsa_ven_amd_loader.h` 1.00 to 1.03), and the image and finalizer entry points, which answer
//! as ROCr's do when their extension library is absent.
//!
//! - Supported: `HSA_EXTENSION_AMD_LOADER` (1.0 to 1.3, the table below) and
//!   `HSA_EXTENSION_AMD_PROFILER` (1.0: the `hsa_amd_profiling_*` entry points, which have no
//!   table). ROCr's agent `EXTENSIONS` mask always carries the profiler bit (`GpuAgent::GetInfo`).
//! - Not supported: images, the finalizer, performance counters, profiling events and
//!   aqlprofile. The soft agent has no image hardware and no HSAIL finalizer. ROCr's
//!   `hsa_system_extension_supported` answers from the version number alone (`hsa.cpp`), so it
//!   says yes to images even where its image library is missing; the soft runtime answers from
//!   what it implements, so a client learns here, not from a failed call, that images are absent.
//! - Their entry points still exist (ROCr exports them whatever is loaded), and each returns
//!   HSA_STATUS_ERROR_NOT_INITIALIZED without reading its arguments: ROCr's `hsa_ext_null`, what
//!   every image and finalizer function returns while its library is not loaded
//!   (`core/runtime/hsa_ext_interface.cpp`, `ExtensionEntryPoints::InitTable`).

// Each keeps the C function's contract of its header, as every entry point does (`entry.rs`).
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

use core::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use super::executable::{LoadedCodeObject, ReaderOrigin};
use super::runtime::{Runtime, Tag};
use aqueduct_hsa::sys::*;

/// The extension numbers `hsa.h` 5.2.3 defines: 0 to `HSA_EXTENSION_STD_LAST` (3) and
/// `HSA_AMD_FIRST_EXTENSION` (0x200) to `HSA_AMD_LAST_EXTENSION` (0x202), with their names
/// (`hsa_extension_get_name` in `hsa.cpp`).
const EXTENSIONS: [(u16, &core::ffi::CStr); 7] = [
    (0, c"HSA_EXTENSION_FINALIZER"),
    (1, c"HSA_EXTENSION_IMAGES"),
    (2, c"HSA_EXTENSION_PERFORMANCE_COUNTERS"),
    (3, c"HSA_EXTENSION_PROFILING_EVENTS"),
    (0x200, c"HSA_EXTENSION_AMD_PROFILER"),
    (0x201, c"HSA_EXTENSION_AMD_LOADER"),
    (0x202, c"HSA_EXTENSION_AMD_AQLPROFILE"),
];

const AMD_PROFILER: u16 = 0x200;
const AMD_LOADER: u16 = 0x201;

/// The newest loader table, `hsa_ven_amd_loader_1_03_pfn_t`: its minor version and its
/// functions in header order (1.00 is the first three, 1.01 five, 1.02 six).
const LOADER_MINOR: u16 = 3;
const LOADER_FUNCTIONS_BY_MINOR: [usize; 4] = [3, 5, 6, 7];

fn known_extension(extension: u16) -> bool {
    EXTENSIONS.iter().any(|(number, _)| *number == extension)
}

/// The highest minor version of major 1 the soft runtime implements, if it implements the
/// extension at all.
fn supported_minor(extension: u16) -> Option<u16> {
    match extension {
        AMD_LOADER => Some(LOADER_MINOR),
        AMD_PROFILER => Some(0),
        _ => None,
    }
}

/// The 128-byte mask of `HSA_SYSTEM_INFO_EXTENSIONS` (bit N for extension N): every supported
/// extension.
pub(crate) fn system_extension_mask() -> [u8; 128] {
    let mut mask = [0u8; 128];
    for extension in [AMD_PROFILER, AMD_LOADER] {
        mask[usize::from(extension / 8)] |= 1 << (extension % 8);
    }
    mask
}

/// `HSA_AGENT_INFO_EXTENSIONS` of a GPU agent: ROCr's agent mask never carries the loader
/// (`GpuAgent::GetInfo` sets finalizer, images, aqlprofile and the profiler), so the profiler.
pub(crate) fn agent_extension_mask() -> [u8; 128] {
    let mut mask = [0u8; 128];
    mask[usize::from(AMD_PROFILER / 8)] |= 1 << (AMD_PROFILER % 8);
    mask
}

/// `hsa_extension_get_name`: the name `hsa.cpp` gives; an unknown extension is INVALID_ARGUMENT
/// (and named `HSA_EXTENSION_INVALID`, as ROCr names it).
pub unsafe fn hsa_extension_get_name(extension: u16, name: *mut *const c_char) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if name.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let found = EXTENSIONS.iter().find(|(number, _)| *number == extension);
    // SAFETY: `name` is non-null; the strings are static.
    unsafe { name.write(found.map_or(c"HSA_EXTENSION_INVALID", |(_, name)| *name).as_ptr()) };
    if found.is_some() { status::SUCCESS } else { status::ERROR_INVALID_ARGUMENT }
}

/// The checks every support query makes, in ROCr's order: initialization, the extension and the
/// output pointers (INVALID_ARGUMENT), then the agent, if one asks (INVALID_AGENT). `Ok` says
/// whether the asker can support extensions at all: the system and GPU agents can, ROCr's CPU
/// agent cannot (`hsa_agent_extension_supported` in `hsa.cpp` answers only for GPU agents).
fn support_checks(extension: u16, outputs_present: bool, agent: Option<hsa_agent_t>) -> Result<bool, hsa_status_t> {
    let runtime = super::runtime::get().ok_or(status::ERROR_NOT_INITIALIZED)?;
    if !outputs_present || !known_extension(extension) {
        return Err(status::ERROR_INVALID_ARGUMENT);
    }
    match agent {
        None => Ok(true),
        Some(agent) => {
            let (_, found) = runtime.agent(agent.handle).ok_or(status::ERROR_INVALID_AGENT)?;
            Ok(found.gpu().is_some())
        }
    }
}

/// Answers a `major.minor` query (see the module).
unsafe fn version_supported(
    extension: u16,
    agent: Option<hsa_agent_t>,
    major: u16,
    minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    match support_checks(extension, !result.is_null(), agent) {
        Err(status) => status,
        Ok(eligible) => {
            let supported =
                eligible && major == 1 && supported_minor(extension).is_some_and(|highest| minor <= highest);
            // SAFETY: non-null pointer to fill.
            unsafe { result.write(supported) };
            status::SUCCESS
        }
    }
}

/// Answers a `major` query with the highest minor version supported (0 where none is).
unsafe fn major_supported(
    extension: u16,
    agent: Option<hsa_agent_t>,
    major: u16,
    minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    match support_checks(extension, !minor.is_null() && !result.is_null(), agent) {
        Err(status) => status,
        Ok(eligible) => {
            let highest = supported_minor(extension).filter(|_| eligible && major == 1);
            // SAFETY: non-null pointers to fill.
            unsafe {
                minor.write(highest.unwrap_or(0));
                result.write(highest.is_some());
            }
            status::SUCCESS
        }
    }
}

/// `hsa_system_extension_supported`.
pub unsafe fn hsa_system_extension_supported(
    extension: u16,
    major: u16,
    minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { version_supported(extension, None, major, minor, result) }
}

/// `hsa_system_major_extension_supported`.
pub unsafe fn hsa_system_major_extension_supported(
    extension: u16,
    major: u16,
    minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { major_supported(extension, None, major, minor, result) }
}

/// `hsa_agent_extension_supported`.
pub unsafe fn hsa_agent_extension_supported(
    extension: u16,
    agent: hsa_agent_t,
    major: u16,
    minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { version_supported(extension, Some(agent), major, minor, result) }
}

/// `hsa_agent_major_extension_supported`.
pub unsafe fn hsa_agent_major_extension_supported(
    extension: u16,
    agent: hsa_agent_t,
    major: u16,
    minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { major_supported(extension, Some(agent), major, minor, result) }
}

/// `hsa_system_get_extension_table`: the table of `major.minor`, whose length ROCr takes from the
/// version's `pfn_t` (`get_extension_table_length` in `hsa.cpp`); a version without a table has
/// length 0, which is INVALID_ARGUMENT.
pub unsafe fn hsa_system_get_extension_table(
    extension: u16,
    major: u16,
    minor: u16,
    table: *mut c_void,
) -> hsa_status_t {
    let length = match (extension, major) {
        (AMD_LOADER, 1) => {
            LOADER_FUNCTIONS_BY_MINOR.get(usize::from(minor)).map_or(0, |count| count * size_of::<usize>())
        }
        _ => 0,
    };
    // SAFETY: forwarded.
    unsafe { hsa_system_get_major_extension_table(extension, major, length, table) }
}

/// `hsa_system_get_major_extension_table`: a null table or a zero length is INVALID_ARGUMENT; the
/// loader's major 1 copies as much of the 1.03 table as `table_length` holds (ROCr's `memcpy` of
/// `Min(sizeof(ext_table), table_length)`); any other extension or major is HSA_STATUS_ERROR, as
/// ROCr answers for a table it cannot give (`hsa.cpp`).
pub unsafe fn hsa_system_get_major_extension_table(
    extension: u16,
    major: u16,
    table_length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if table.is_null() || table_length == 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if extension != AMD_LOADER || major != 1 {
        return status::ERROR;
    }
    let functions = loader_table();
    let bytes = table_length.min(size_of_val(&functions));
    // SAFETY: the caller's table holds `table_length` bytes; at most that many are written.
    unsafe { core::ptr::copy_nonoverlapping((&raw const functions).cast::<u8>(), table.cast::<u8>(), bytes) };
    status::SUCCESS
}

/// `hsa_ven_amd_loader_1_03_pfn_t`, in header order.
fn loader_table() -> [*const (); 7] {
    [
        loader::query_host_address as *const (),
        loader::query_segment_descriptors as *const (),
        loader::query_executable as *const (),
        loader::executable_iterate_loaded_code_objects as *const (),
        loader::loaded_code_object_get_info as *const (),
        loader::code_object_reader_create_from_file_with_offset_size as *const (),
        loader::iterate_executables as *const (),
    ]
}

/// `hsa_code_object_reader_create_from_file`: reads the whole file from its start, as from memory;
/// a descriptor that cannot be read is INVALID_FILE.
pub unsafe fn hsa_code_object_reader_create_from_file(
    file: c_int,
    code_object_reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if code_object_reader.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    match read_file(file, 0, None) {
        // SAFETY: non-null output pointer.
        Ok(bytes) => unsafe {
            runtime.add_reader(bytes, ReaderOrigin::File { descriptor: file, offset: 0 }, code_object_reader)
        },
        // `hsa.h` gives this function no status for an empty file but INVALID_FILE.
        Err(_) => status::ERROR_INVALID_FILE,
    }
}

/// Reads `size` bytes (the rest of the file if `None`) at `offset` of the caller's descriptor,
/// leaving it open and its position unchanged (`pread`). An unreadable descriptor is
/// INVALID_FILE; nothing to read, or a range past the end, INVALID_CODE_OBJECT (as
/// `hsa_ven_amd_loader.h` words it for the offset-and-size reader).
fn read_file(file: c_int, offset: u64, size: Option<usize>) -> Result<Vec<u8>, hsa_status_t> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::FileExt;
    if file < 0 {
        return Err(status::ERROR_INVALID_FILE);
    }
    // SAFETY: the descriptor is the caller's and stays open; `ManuallyDrop` keeps this `File`
    // from closing it.
    let handle = core::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(file) });
    let length = handle.metadata().map_err(|_| status::ERROR_INVALID_FILE)?.len();
    if offset >= length {
        return Err(status::ERROR_INVALID_CODE_OBJECT);
    }
    let available = length - offset;
    let wanted = size.map_or(available, |size| size as u64);
    if wanted == 0 || wanted > available {
        return Err(status::ERROR_INVALID_CODE_OBJECT);
    }
    // Fallible: a file too large to hold is OUT_OF_RESOURCES, never an abort of the process.
    let mut bytes = Vec::new();
    let wanted = usize::try_from(wanted).map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
    bytes.try_reserve_exact(wanted).map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
    bytes.resize(wanted, 0);
    handle.read_exact_at(&mut bytes, offset).map_err(|_| status::ERROR_INVALID_FILE)?;
    Ok(bytes)
}

/// The AMD loader extension's functions, reached through the table only (ROCr exports none of
/// them by name). Each runs behind the entry points' panic guard.
mod loader {
    use super::*;
    use crate::exports::guard;

    /// `hsa_ven_amd_loader_segment_descriptor_t`.
    #[repr(C)]
    pub struct SegmentDescriptor {
        pub agent: hsa_agent_t,
        pub executable: hsa_executable_t,
        pub code_object_storage_type: u32,
        pub code_object_storage_base: *const c_void,
        pub code_object_storage_size: usize,
        pub code_object_storage_offset: usize,
        pub segment_base: *const c_void,
        pub segment_size: usize,
    }

    /// `hsa_ven_amd_loader_code_object_storage_type_t`.
    const STORAGE_FILE: u32 = 1;
    const STORAGE_MEMORY: u32 = 2;

    fn storage_type(image: &LoadedCodeObject) -> u32 {
        match image.reader.origin {
            ReaderOrigin::Memory { .. } => STORAGE_MEMORY,
            ReaderOrigin::File { .. } => STORAGE_FILE,
        }
    }

    /// Every loaded code object of every live executable, in load order per executable.
    fn all_loaded(runtime: &Runtime) -> Vec<Arc<LoadedCodeObject>> {
        let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        let mut ids: Vec<_> = executables.keys().copied().collect();
        ids.sort_unstable();
        ids.iter().flat_map(|id| executables[id].code_objects.iter().cloned()).collect()
    }

    /// `hsa_ven_amd_loader_query_host_address`: the host address of an address in a loaded
    /// segment, which on the soft agent is the address itself (its memory is the host's); an
    /// address in no loaded segment is INVALID_ARGUMENT (ROCr: `FindHostAddress` found none).
    pub unsafe extern "C" fn query_host_address(
        device_address: *const c_void,
        host_address: *mut *const c_void,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_query_host_address", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            if device_address.is_null() || host_address.is_null() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            if runtime.executables.loaded_at(device_address as u64).is_none() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            // SAFETY: non-null output pointer.
            unsafe { host_address.write(device_address) };
            status::SUCCESS
        })
    }

    /// `hsa_ven_amd_loader_query_segment_descriptors`: the count (null array, count 0), or every
    /// loaded segment (an array and the exact count); the header's statuses otherwise.
    pub unsafe extern "C" fn query_segment_descriptors(
        segment_descriptors: *mut SegmentDescriptor,
        num_segment_descriptors: *mut usize,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_query_segment_descriptors", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            if num_segment_descriptors.is_null() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            // SAFETY: non-null pointer to the caller's count.
            let asked = unsafe { num_segment_descriptors.read() };
            if segment_descriptors.is_null() != (asked == 0) {
                return status::ERROR_INVALID_ARGUMENT;
            }
            let mut descriptors = Vec::new();
            for image in all_loaded(&runtime) {
                // The soft loader keeps every code object's bytes in memory, a file's too, so each
                // segment is backed by MEMORY storage: those bytes.
                let (storage_base, storage_size) =
                    (image.reader.bytes.as_ptr().cast::<c_void>(), image.reader.bytes.len());
                for (base, size, offset) in image.segments() {
                    descriptors.push(SegmentDescriptor {
                        agent: hsa_agent_t { handle: runtime.handle(Tag::Agent, image.agent_index as u64) },
                        executable: hsa_executable_t { handle: runtime.handle(Tag::Executable, image.executable) },
                        code_object_storage_type: STORAGE_MEMORY,
                        code_object_storage_base: storage_base,
                        code_object_storage_size: storage_size,
                        code_object_storage_offset: offset as usize,
                        segment_base: base as *const c_void,
                        segment_size: size as usize,
                    });
                }
            }
            if asked == 0 {
                // SAFETY: non-null pointer to the caller's count.
                unsafe { num_segment_descriptors.write(descriptors.len()) };
                return status::SUCCESS;
            }
            if asked != descriptors.len() {
                return status::ERROR_INCOMPATIBLE_ARGUMENTS;
            }
            // SAFETY: the caller's array holds `asked` descriptors, the count written.
            unsafe { core::ptr::copy_nonoverlapping(descriptors.as_ptr(), segment_descriptors, asked) };
            status::SUCCESS
        })
    }

    /// `hsa_ven_amd_loader_query_executable`: the executable whose loaded code holds the address.
    pub unsafe extern "C" fn query_executable(
        device_address: *const c_void,
        executable: *mut hsa_executable_t,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_query_executable", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            if device_address.is_null() || executable.is_null() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            let Some(image) = runtime.executables.loaded_at(device_address as u64) else {
                return status::ERROR_INVALID_ARGUMENT;
            };
            // SAFETY: non-null output pointer.
            unsafe { executable.write(hsa_executable_t { handle: runtime.handle(Tag::Executable, image.executable) }) };
            status::SUCCESS
        })
    }

    type LoadedCodeObjectCallback =
        Option<unsafe extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> hsa_status_t>;

    /// `hsa_ven_amd_loader_executable_iterate_loaded_code_objects`: stops at the first status
    /// other than SUCCESS and returns it.
    pub unsafe extern "C" fn executable_iterate_loaded_code_objects(
        executable: hsa_executable_t,
        callback: LoadedCodeObjectCallback,
        data: *mut c_void,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_executable_iterate_loaded_code_objects", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            let Some(id) = runtime.index_of(Tag::Executable, executable.handle) else {
                return status::ERROR_INVALID_EXECUTABLE;
            };
            let images: Vec<u64> = {
                let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
                let Some(entry) = executables.get(&id) else { return status::ERROR_INVALID_EXECUTABLE };
                entry.code_objects.iter().map(|image| image.id).collect()
            };
            let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
            let handles: Vec<u64> = images.iter().map(|&image| runtime.handle(Tag::LoadedCodeObject, image)).collect();
            drop(runtime);
            for handle in handles {
                // SAFETY: the client's callback with the client's data; no lock is held.
                let result = unsafe { callback(executable, hsa_loaded_code_object_t { handle }, data) };
                if result != status::SUCCESS {
                    return result;
                }
            }
            status::SUCCESS
        })
    }

    /// `hsa_ven_amd_loader_loaded_code_object_get_info`: an unknown loaded code object is
    /// INVALID_CODE_OBJECT, an unknown attribute or a null value INVALID_ARGUMENT.
    pub unsafe extern "C" fn loaded_code_object_get_info(
        loaded_code_object: hsa_loaded_code_object_t,
        attribute: u32,
        value: *mut c_void,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_loaded_code_object_get_info", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            let image = runtime
                .index_of(Tag::LoadedCodeObject, loaded_code_object.handle)
                .and_then(|id| runtime.executables.loaded(id));
            let Some(image) = image else { return status::ERROR_INVALID_CODE_OBJECT };
            if value.is_null() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            let uri = image.uri();
            // SAFETY (all arms): `value` points to storage of the attribute's documented type; for
            // the URI, the caller sized it from URI_LENGTH (plus the NUL).
            unsafe {
                match attribute {
                    1 => value
                        .cast::<hsa_executable_t>()
                        .write(hsa_executable_t { handle: runtime.handle(Tag::Executable, image.executable) }),
                    2 => value.cast::<u32>().write(2), // KIND_AGENT: the soft loader loads agent code objects
                    3 => value
                        .cast::<hsa_agent_t>()
                        .write(hsa_agent_t { handle: runtime.handle(Tag::Agent, image.agent_index as u64) }),
                    4 => value.cast::<u32>().write(storage_type(&image)),
                    5 => value.cast::<u64>().write(match image.reader.origin {
                        ReaderOrigin::Memory { address } => address as u64,
                        ReaderOrigin::File { .. } => 0,
                    }),
                    6 => value.cast::<u64>().write(image.reader.bytes.len() as u64),
                    7 => value.cast::<c_int>().write(match image.reader.origin {
                        ReaderOrigin::File { descriptor, .. } => descriptor,
                        ReaderOrigin::Memory { .. } => -1,
                    }),
                    8 => value.cast::<i64>().write(image.load_delta()),
                    9 => value.cast::<u64>().write(image.load_base()),
                    10 => value.cast::<u64>().write(image.load_size()),
                    11 => value.cast::<u32>().write(uri.len() as u32),
                    12 => {
                        core::ptr::copy_nonoverlapping(uri.as_ptr(), value.cast::<u8>(), uri.len());
                        value.cast::<u8>().add(uri.len()).write(0);
                    }
                    _ => return status::ERROR_INVALID_ARGUMENT,
                }
            }
            status::SUCCESS
        })
    }

    /// `hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size`: `size` bytes at
    /// `offset` of the file, which stays the caller's.
    pub unsafe extern "C" fn code_object_reader_create_from_file_with_offset_size(
        file: c_int,
        offset: usize,
        size: usize,
        code_object_reader: *mut hsa_code_object_reader_t,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            if code_object_reader.is_null() {
                return status::ERROR_INVALID_ARGUMENT;
            }
            match read_file(file, offset as u64, Some(size)) {
                // SAFETY: non-null output pointer.
                Ok(bytes) => unsafe {
                    let origin = ReaderOrigin::File { descriptor: file, offset: offset as u64 };
                    runtime.add_reader(bytes, origin, code_object_reader)
                },
                Err(status) => status,
            }
        })
    }

    /// `hsa_ven_amd_loader_iterate_executables`: every live executable, oldest first.
    pub unsafe extern "C" fn iterate_executables(
        callback: Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>,
        data: *mut c_void,
    ) -> hsa_status_t {
        guard("hsa_ven_amd_loader_iterate_executables", || {
            let Some(runtime) = super::super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
            let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
            let mut ids: Vec<u64> = runtime
                .executables
                .executables
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .keys()
                .copied()
                .collect();
            ids.sort_unstable();
            let handles: Vec<u64> = ids.iter().map(|&id| runtime.handle(Tag::Executable, id)).collect();
            drop(runtime);
            for handle in handles {
                // SAFETY: the client's callback with the client's data; no lock is held.
                let result = unsafe { callback(hsa_executable_t { handle }, data) };
                if result != status::SUCCESS {
                    return result;
                }
            }
            status::SUCCESS
        })
    }
}

/// The image and finalizer entry points: HSA_STATUS_ERROR_NOT_INITIALIZED, whatever the
/// arguments, as ROCr's `hsa_ext_null` returns while the extension's library is not loaded.
macro_rules! absent_extension_entry_points {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ); )*) => {$(
        #[doc = concat!("`", stringify!($name), "`: the extension is absent (see the module).")]
        pub unsafe fn $name($(_: $ty),*) -> hsa_status_t {
            status::ERROR_NOT_INITIALIZED
        }
    )*};
}

absent_extension_entry_points! {
    fn hsa_ext_image_get_capability(agent: hsa_agent_t, geometry: u32, image_format: *const c_void, capability_mask: *mut u32);
    fn hsa_ext_image_get_capability_with_layout(agent: hsa_agent_t, geometry: u32, image_format: *const c_void, image_data_layout: u32, capability_mask: *mut u32);
    fn hsa_ext_image_data_get_info(agent: hsa_agent_t, image_descriptor: *const c_void, access_permission: u32, image_data_info: *mut c_void);
    fn hsa_ext_image_data_get_info_with_layout(agent: hsa_agent_t, image_descriptor: *const c_void, access_permission: u32, image_data_layout: u32, image_data_row_pitch: usize, image_data_slice_pitch: usize, image_data_info: *mut c_void);
    fn hsa_ext_image_create(agent: hsa_agent_t, image_descriptor: *const c_void, image_data: *const c_void, access_permission: u32, image: *mut hsa_ext_image_t);
    fn hsa_ext_image_create_with_layout(agent: hsa_agent_t, image_descriptor: *const c_void, image_data: *const c_void, access_permission: u32, image_data_layout: u32, image_data_row_pitch: usize, image_data_slice_pitch: usize, image: *mut hsa_ext_image_t);
    fn hsa_ext_image_destroy(agent: hsa_agent_t, image: hsa_ext_image_t);
    fn hsa_ext_image_copy(agent: hsa_agent_t, src_image: hsa_ext_image_t, src_offset: *const c_void, dst_image: hsa_ext_image_t, dst_offset: *const c_void, range: *const c_void);
    fn hsa_ext_image_import(agent: hsa_agent_t, src_memory: *const c_void, src_row_pitch: usize, src_slice_pitch: usize, dst_image: hsa_ext_image_t, image_region: *const c_void);
    fn hsa_ext_image_export(agent: hsa_agent_t, src_image: hsa_ext_image_t, dst_memory: *mut c_void, dst_row_pitch: usize, dst_slice_pitch: usize, image_region: *const c_void);
    fn hsa_ext_image_clear(agent: hsa_agent_t, image: hsa_ext_image_t, data: *const c_void, image_region: *const c_void);
    fn hsa_ext_sampler_create(agent: hsa_agent_t, sampler_descriptor: *const c_void, sampler: *mut hsa_ext_sampler_t);
    fn hsa_ext_sampler_destroy(agent: hsa_agent_t, sampler: hsa_ext_sampler_t);
    fn hsa_amd_image_get_info_max_dim(agent: hsa_agent_t, attribute: u32, value: *mut c_void);
    fn hsa_amd_image_create(agent: hsa_agent_t, image_descriptor: *const c_void, image_layout: *const c_void, image_data: *const c_void, access_permission: u32, image: *mut hsa_ext_image_t);
    fn hsa_ext_program_create(machine_model: u32, profile: u32, default_float_rounding_mode: u32, options: *const c_char, program: *mut hsa_ext_program_t);
    fn hsa_ext_program_destroy(program: hsa_ext_program_t);
    fn hsa_ext_program_add_module(program: hsa_ext_program_t, module: *mut c_void);
    fn hsa_ext_program_iterate_modules(program: hsa_ext_program_t, callback: *const c_void, data: *mut c_void);
    fn hsa_ext_program_get_info(program: hsa_ext_program_t, attribute: u32, value: *mut c_void);
    fn hsa_ext_program_finalize(program: hsa_ext_program_t, isa: hsa_isa_t, call_convention: i32, control_directives: hsa_ext_control_directives_t, options: *const c_char, code_object_type: u32, code_object: *mut hsa_code_object_t);
}
