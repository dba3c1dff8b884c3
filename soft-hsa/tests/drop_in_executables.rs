//! The drop-in's executable and code-object entry points beyond the engine's
//! (`soft/executable_api.rs`), each through its guarded export, with ROCr 5.2.3's statuses.

mod common;

use core::ffi::c_void;

use aqueduct_hsa::sys::{
    hsa_agent_t, hsa_callback_data_t, hsa_code_object_reader_t, hsa_code_object_t, hsa_code_symbol_t,
    hsa_executable_symbol_t, hsa_executable_t, hsa_status_t, status, symbol_info,
};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

unsafe extern "C" fn collect_symbol(
    _: hsa_executable_t,
    symbol: hsa_executable_symbol_t,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the test passes a Vec<u64>.
    unsafe { (*data.cast::<Vec<u64>>()).push(symbol.handle) };
    status::SUCCESS
}

unsafe extern "C" fn collect_agent_symbol(
    _: hsa_executable_t,
    _: hsa_agent_t,
    symbol: hsa_executable_symbol_t,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the test passes a Vec<u64>.
    unsafe { (*data.cast::<Vec<u64>>()).push(symbol.handle) };
    status::SUCCESS
}

unsafe extern "C" fn collect_code_symbol(
    _: hsa_code_object_t,
    symbol: hsa_code_symbol_t,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the test passes a Vec<u64>.
    unsafe { (*data.cast::<Vec<u64>>()).push(symbol.handle) };
    status::SUCCESS
}

fn name_of(symbol: hsa_executable_symbol_t) -> String {
    let mut length = 0u32;
    // SAFETY: a live symbol; buffers of the stated length.
    unsafe {
        assert_eq!(
            hsa::hsa_executable_symbol_get_info(symbol, symbol_info::NAME_LENGTH, (&raw mut length).cast()),
            status::SUCCESS
        );
        let mut name = vec![0u8; length as usize];
        assert_eq!(
            hsa::hsa_executable_symbol_get_info(symbol, symbol_info::NAME, name.as_mut_ptr().cast()),
            status::SUCCESS
        );
        String::from_utf8(name).unwrap()
    }
}

#[test]
fn executables_report_their_state_and_iterate_their_symbols_stably() {
    let client = Client::new();
    let mut executable = hsa_executable_t::default();
    let mut variable = 0u64;
    // SAFETY (every call): live handles, callbacks over the vectors, values to fill.
    unsafe {
        assert_eq!(hsa::hsa_executable_create(1, 0, core::ptr::null(), &mut executable), status::SUCCESS);
        assert_eq!(
            hsa::hsa_executable_create(1, 2, core::ptr::null(), &mut executable),
            status::ERROR_INVALID_ARGUMENT,
            "no state 2"
        );
        let mut value = 9u32;
        assert_eq!(hsa::hsa_executable_get_info(executable, 1, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 1, "FULL profile, as created");
        assert_eq!(hsa::hsa_executable_get_info(executable, 2, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 0, "UNFROZEN");
        assert_eq!(
            hsa::hsa_executable_get_info(executable, 9, (&raw mut value).cast()),
            status::ERROR_INVALID_ARGUMENT
        );

        let mut reader = hsa_code_object_reader_t::default();
        let bytes = TEST_KERNELS_GFX1100;
        assert_eq!(
            hsa::hsa_code_object_reader_create_from_memory(bytes.as_ptr().cast(), bytes.len(), &mut reader),
            status::SUCCESS
        );
        let status = hsa::hsa_executable_load_agent_code_object(
            executable,
            client.agent,
            reader,
            core::ptr::null(),
            core::ptr::null_mut(),
        );
        assert_eq!(status, status::SUCCESS);
        assert_eq!(
            hsa::hsa_executable_load_program_code_object(executable, reader, core::ptr::null(), core::ptr::null_mut()),
            status::ERROR_INCOMPATIBLE_ARGUMENTS,
            "an AMDGPU code object holds agent code"
        );

        let name = c"external_counter";
        assert_eq!(
            hsa::hsa_executable_global_variable_define(executable, name.as_ptr(), (&raw mut variable).cast()),
            status::SUCCESS
        );
        assert_eq!(
            hsa::hsa_executable_global_variable_define(executable, name.as_ptr(), (&raw mut variable).cast()),
            status::ERROR_VARIABLE_ALREADY_DEFINED
        );
        assert_eq!(
            hsa::hsa_executable_agent_global_variable_define(
                executable,
                client.agent,
                name.as_ptr(),
                (&raw mut variable).cast()
            ),
            status::SUCCESS,
            "the agent's variable is another symbol"
        );
        assert_eq!(
            hsa::hsa_executable_readonly_variable_define(
                executable,
                hsa_agent_t { handle: 7 },
                name.as_ptr(),
                (&raw mut variable).cast()
            ),
            status::ERROR_INVALID_AGENT
        );

        let (mut all, mut agent, mut program) = (Vec::<u64>::new(), Vec::<u64>::new(), Vec::<u64>::new());
        assert_eq!(
            hsa::hsa_executable_iterate_symbols(executable, Some(collect_symbol), (&raw mut all).cast()),
            status::SUCCESS
        );
        assert_eq!(
            hsa::hsa_executable_iterate_agent_symbols(
                executable,
                client.agent,
                Some(collect_agent_symbol),
                (&raw mut agent).cast()
            ),
            status::SUCCESS
        );
        assert_eq!(
            hsa::hsa_executable_iterate_program_symbols(executable, Some(collect_symbol), (&raw mut program).cast()),
            status::SUCCESS
        );
        let kernels = aqueduct_codeobject::CodeObject::parse(bytes).unwrap().kernels().len();
        assert_eq!(all.len(), kernels + 2, "every kernel and both variables");
        assert_eq!(agent.len(), kernels + 1, "the agent's kernels and its variable");
        assert_eq!(program.len(), 1, "the program variable");
        let mut again = Vec::<u64>::new();
        assert_eq!(
            hsa::hsa_executable_iterate_symbols(executable, Some(collect_symbol), (&raw mut again).cast()),
            status::SUCCESS
        );
        assert_eq!(again, all, "a symbol keeps its handle");

        let program_symbol = hsa_executable_symbol_t { handle: program[0] };
        assert_eq!(name_of(program_symbol), "external_counter");
        let mut kind = 9u32;
        assert_eq!(
            hsa::hsa_executable_symbol_get_info(program_symbol, symbol_info::TYPE, (&raw mut kind).cast()),
            status::SUCCESS
        );
        assert_eq!(kind, 0, "a VARIABLE");
        let mut address = 0u64;
        assert_eq!(
            hsa::hsa_executable_symbol_get_info(
                program_symbol,
                symbol_info::VARIABLE_ADDRESS,
                (&raw mut address).cast()
            ),
            status::SUCCESS
        );
        assert_eq!(address, &raw mut variable as u64);
        let mut by_name = hsa_executable_symbol_t::default();
        let status = hsa::hsa_executable_get_symbol_by_name(executable, name.as_ptr(), core::ptr::null(), &mut by_name);
        assert_eq!((status, by_name), (status::SUCCESS, program_symbol), "found by name as a program symbol");
        let mut defined = false;
        assert_eq!(
            hsa::hsa_executable_symbol_get_info(
                hsa_executable_symbol_t { handle: agent[0] },
                symbol_info::IS_DEFINITION,
                (&raw mut defined).cast()
            ),
            status::SUCCESS
        );
        assert!(defined);

        let mut valid = 9u32;
        assert_eq!(hsa::hsa_executable_validate(executable, &mut valid), status::SUCCESS);
        assert_eq!(valid, 0);
        assert_eq!(hsa::hsa_executable_validate_alt(executable, core::ptr::null(), &mut valid), status::SUCCESS);
        assert_eq!(hsa::hsa_executable_freeze(executable, core::ptr::null()), status::SUCCESS);
        assert_eq!(hsa::hsa_executable_get_info(executable, 2, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 1, "FROZEN");
        assert_eq!(
            hsa::hsa_executable_global_variable_define(executable, c"late".as_ptr(), (&raw mut variable).cast()),
            status::ERROR_FROZEN_EXECUTABLE
        );
        assert_eq!(hsa::hsa_executable_destroy(executable), status::SUCCESS);
        assert_eq!(hsa::hsa_executable_validate(executable, &mut valid), status::ERROR_INVALID_EXECUTABLE);
        assert_eq!(
            hsa::hsa_executable_iterate_symbols(executable, Some(collect_symbol), core::ptr::null_mut()),
            status::ERROR_INVALID_EXECUTABLE
        );
    }
}

unsafe extern "C" fn allocate(size: usize, _: hsa_callback_data_t, address: *mut *mut c_void) -> hsa_status_t {
    // SAFETY: the runtime passes a pointer to fill; the test frees the buffer.
    unsafe { address.write(libc::malloc(size)) };
    status::SUCCESS
}

#[test]
fn deprecated_code_objects_round_trip_and_load() {
    let client = Client::new();
    let bytes = TEST_KERNELS_GFX1100.to_vec();
    let mut code_object = hsa_code_object_t::default();
    // SAFETY (every call): live handles, buffers of the stated lengths, values to fill.
    unsafe {
        let status = hsa::hsa_code_object_deserialize(
            bytes.as_ptr().cast_mut().cast(),
            bytes.len(),
            core::ptr::null(),
            &mut code_object,
        );
        assert_eq!(status, status::SUCCESS);
        let (mut out, mut size) = (core::ptr::null_mut::<c_void>(), 0usize);
        let status = hsa::hsa_code_object_serialize(
            code_object,
            Some(allocate),
            hsa_callback_data_t::default(),
            core::ptr::null(),
            &mut out,
            &mut size,
        );
        assert_eq!(status, status::SUCCESS);
        assert_eq!(core::slice::from_raw_parts(out.cast::<u8>(), size), &bytes[..], "the same bytes back");
        libc::free(out);

        let mut version = [0u8; 64];
        assert_eq!(hsa::hsa_code_object_get_info(code_object, 0, version.as_mut_ptr().cast()), status::SUCCESS);
        assert!(matches!(version[0], b'4'..=b'6') && version[1] == 0, "{version:?}");
        let mut isa = aqueduct_hsa::sys::hsa_isa_t::default();
        assert_eq!(hsa::hsa_code_object_get_info(code_object, 2, (&raw mut isa).cast()), status::SUCCESS);
        let mut agent_isa = aqueduct_hsa::sys::hsa_isa_t::default();
        assert_eq!(
            hsa::hsa_agent_get_info(client.agent, aqueduct_hsa::sys::agent_info::ISA, (&raw mut agent_isa).cast()),
            status::SUCCESS
        );
        assert_eq!(isa, agent_isa, "the ISA of the GPU it runs on");

        let mut symbols = Vec::<u64>::new();
        assert_eq!(
            hsa::hsa_code_object_iterate_symbols(code_object, Some(collect_code_symbol), (&raw mut symbols).cast()),
            status::SUCCESS
        );
        assert!(!symbols.is_empty());
        let mut symbol = hsa_code_symbol_t::default();
        assert_eq!(
            hsa::hsa_code_object_get_symbol(code_object, c"store_value.kd".as_ptr(), &mut symbol),
            status::SUCCESS
        );
        assert!(symbols.contains(&symbol.handle));
        let mut kernarg_size = 0u32;
        assert_eq!(
            hsa::hsa_code_symbol_get_info(
                symbol,
                symbol_info::KERNEL_KERNARG_SEGMENT_SIZE,
                (&raw mut kernarg_size).cast()
            ),
            status::SUCCESS
        );
        assert!(kernarg_size > 0);
        assert_eq!(
            hsa::hsa_code_object_get_symbol(code_object, c"nope.kd".as_ptr(), &mut symbol),
            status::ERROR_INVALID_SYMBOL_NAME
        );
        assert_eq!(
            hsa::hsa_code_symbol_get_info(hsa_code_symbol_t { handle: 5 }, 0, (&raw mut kernarg_size).cast()),
            status::ERROR_INVALID_CODE_SYMBOL
        );

        let mut executable = hsa_executable_t::default();
        assert_eq!(hsa::hsa_executable_create_alt(0, 0, core::ptr::null(), &mut executable), status::SUCCESS);
        assert_eq!(
            hsa::hsa_executable_load_code_object(executable, client.agent, code_object, core::ptr::null()),
            status::SUCCESS
        );
        let mut by_name = hsa_executable_symbol_t::default();
        let status =
            hsa::hsa_executable_get_symbol_by_name(executable, c"store_value.kd".as_ptr(), &client.agent, &mut by_name);
        assert_eq!(status, status::SUCCESS, "the deprecated load made the kernels symbols");

        assert_eq!(hsa::hsa_code_object_destroy(code_object), status::SUCCESS);
        assert_eq!(hsa::hsa_code_object_destroy(code_object), status::ERROR_INVALID_CODE_OBJECT);
        let raw = hsa_code_object_t { handle: bytes.as_ptr() as u64 };
        assert_eq!(
            hsa::hsa_executable_load_code_object(executable, client.agent, raw, core::ptr::null()),
            status::ERROR_INVALID_CODE_OBJECT,
            "only handles the runtime handed out"
        );
        let mut junk = [0u8; 16];
        assert_eq!(
            hsa::hsa_code_object_deserialize(junk.as_mut_ptr().cast(), junk.len(), core::ptr::null(), &mut code_object),
            status::ERROR_INVALID_CODE_OBJECT
        );
        assert_eq!(
            hsa::hsa_code_object_deserialize(junk.as_mut_ptr().cast(), 0, core::ptr::null(), &mut code_object),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(hsa::hsa_executable_destroy(executable), status::SUCCESS);
    }
}

#[test]
fn the_debugger_list_follows_loads_and_destroys() {
    let client = Client::new();
    let bytes = TEST_KERNELS_GFX1100.to_vec();
    let uri = format!("memory://{}#offset={:#x}&size={}", std::process::id(), bytes.as_ptr() as usize, bytes.len());
    let executable = client.hsa.load_executable(client.agent, &bytes).expect("loads");
    assert!(aqueduct_soft_hsa::debugger::listed().contains(&uri), "listed once loaded: {uri}");
    // SAFETY: a live executable.
    unsafe { assert_eq!(hsa::hsa_executable_destroy(executable), status::SUCCESS) };
    assert!(!aqueduct_soft_hsa::debugger::listed().contains(&uri), "unlisted once destroyed");
}

/// `TEST_KERNELS_GFX1100` with `change` applied to each `PT_LOAD` program header (56 bytes).
fn with_load_headers(change: impl Fn(&mut [u8])) -> Vec<u8> {
    let mut bytes = TEST_KERNELS_GFX1100.to_vec();
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) =
        (u16::from_le_bytes([bytes[0x36], bytes[0x37]]) as usize, u16::from_le_bytes([bytes[0x38], bytes[0x39]]));
    for index in 0..count as usize {
        let header = &mut bytes[phoff + index * size..phoff + (index + 1) * size];
        if u32::from_le_bytes(header[..4].try_into().unwrap()) == 1 {
            change(header);
        }
    }
    bytes
}

#[test]
fn a_code_object_the_loader_cannot_map_is_refused_at_load() {
    let client = Client::new();
    // Segments spanning more than the loader maps (p_memsz 3 GiB), and segments that hold no
    // kernel descriptor (p_filesz and p_memsz 0): both parse, neither loads.
    let huge = with_load_headers(|header| header[0x28..0x30].copy_from_slice(&(3u64 << 30).to_le_bytes()));
    let empty = with_load_headers(|header| {
        header[0x20..0x30].fill(0);
    });
    for (bytes, what) in [(huge, "a 3 GiB span"), (empty, "no descriptor in a loaded segment")] {
        let mut reader = hsa_code_object_reader_t::default();
        let mut executable = hsa_executable_t::default();
        // SAFETY (every call): buffers of the stated lengths, handles to fill.
        unsafe {
            let status =
                hsa::hsa_code_object_reader_create_from_memory(bytes.as_ptr().cast(), bytes.len(), &mut reader);
            assert_eq!(status, status::SUCCESS, "{what}: it parses");
            assert_eq!(hsa::hsa_executable_create_alt(0, 0, core::ptr::null(), &mut executable), status::SUCCESS);
            let status = hsa::hsa_executable_load_agent_code_object(
                executable,
                client.agent,
                reader,
                core::ptr::null(),
                core::ptr::null_mut(),
            );
            assert_eq!(status, status::ERROR_INVALID_CODE_OBJECT, "{what}");
            let mut symbols = Vec::<u64>::new();
            assert_eq!(
                hsa::hsa_executable_iterate_symbols(executable, Some(collect_symbol), (&raw mut symbols).cast()),
                status::SUCCESS
            );
            assert!(symbols.is_empty(), "{what}: nothing loaded");
            assert_eq!(hsa::hsa_executable_destroy(executable), status::SUCCESS);
            assert_eq!(hsa::hsa_code_object_reader_destroy(reader), status::SUCCESS);
        }
    }
}
