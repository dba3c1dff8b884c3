//! The drop-in's executable and code-object entry points beyond the engine's: the deprecated
//! executable creation, executable info and validation, symbol iteration, external variable
//! definitions, and the deprecated `hsa_code_object_*` API (version 2 of the HSA loader
//! interface, which HIP still links), each with ROCr 5.2.3's statuses (`hsa.cpp`, the loader's
//! `executable.cpp`).
//!
//! An `hsa_code_object_t` is, in ROCr, the address of the serialized code object in memory. The
//! soft runtime hands out the same (the address of its copy from `hsa_code_object_deserialize`)
//! and accepts only handles it handed out: ROCr would also read an ELF at any address a client
//! casts to a handle, which the soft runtime refuses as INVALID_CODE_OBJECT rather than read
//! memory it cannot check.

// Each keeps the C function's contract of `hsa.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};
use std::sync::Arc;

use super::executable::{ExecutableSymbol, Reader, ReaderOrigin, VariableDefinition};
use super::runtime::{Runtime, Tag};
use aqueduct_hsa::sys::*;

/// `hsa_executable_create` (deprecated): `hsa_executable_create_alt` with the default rounding
/// mode, after ROCr's check of the state (UNFROZEN 0 or FROZEN 1; an executable created frozen
/// can hold nothing, as `hsa.h` says).
pub unsafe fn hsa_executable_create(
    profile: hsa_profile_t,
    executable_state: u32,
    options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if executable_state > enums::EXECUTABLE_STATE_FROZEN {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: forwarded.
    let created = unsafe {
        super::entry::hsa_executable_create_alt(
            profile,
            enums::DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            options,
            executable,
        )
    };
    if created == status::SUCCESS && executable_state == enums::EXECUTABLE_STATE_FROZEN {
        // SAFETY: the executable was just written.
        unsafe { super::entry::hsa_executable_freeze(executable.read(), core::ptr::null()) };
    }
    created
}

/// The executable id of a handle that names a live executable.
fn executable_id(runtime: &Runtime, executable: hsa_executable_t) -> Result<u64, hsa_status_t> {
    let id = runtime.index_of(Tag::Executable, executable.handle).ok_or(status::ERROR_INVALID_EXECUTABLE)?;
    let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
    executables.contains_key(&id).then_some(id).ok_or(status::ERROR_INVALID_EXECUTABLE)
}

/// `hsa_executable_get_info`: PROFILE, STATE and DEFAULT_FLOAT_ROUNDING_MODE
/// (`ExecutableImpl::GetInfo`).
pub unsafe fn hsa_executable_get_info(
    executable: hsa_executable_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let id = match executable_id(&runtime, executable) {
        Ok(id) => id,
        Err(status) => return status,
    };
    let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
    let Some(entry) = executables.get(&id) else { return status::ERROR_INVALID_EXECUTABLE };
    let answer = match attribute {
        1 => entry.profile,
        2 => u32::from(entry.frozen),
        3 => entry.rounding_mode,
        _ => return status::ERROR_INVALID_ARGUMENT,
    };
    // SAFETY: each attribute is a 32-bit enum.
    unsafe { value.cast::<u32>().write(answer) };
    status::SUCCESS
}

/// `hsa_executable_validate` and `_alt`: the soft loader refuses whatever it cannot run at load
/// time, so a live executable validates: result 0 (`hsa.h`: 0 is valid).
pub unsafe fn hsa_executable_validate(executable: hsa_executable_t, result: *mut u32) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if result.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if let Err(status) = executable_id(&runtime, executable) {
        return status;
    }
    // SAFETY: non-null output pointer.
    unsafe { result.write(0) };
    status::SUCCESS
}

/// See [`hsa_executable_validate`]; the options are not read.
pub unsafe fn hsa_executable_validate_alt(
    executable: hsa_executable_t,
    _options: *const c_char,
    result: *mut u32,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { hsa_executable_validate(executable, result) }
}

/// Which symbols an iteration visits.
enum Scope {
    All,
    Agent(usize),
    Program,
}

/// The symbols of an executable in `scope`, as ids: kernels in load order, then variables.
fn symbols(runtime: &Runtime, id: u64, scope: &Scope) -> Vec<u64> {
    let found: Vec<ExecutableSymbol> = {
        let executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        let Some(entry) = executables.get(&id) else { return Vec::new() };
        let kernels = entry.kernels.iter().filter(|kernel| match scope {
            Scope::All => true,
            Scope::Agent(index) => kernel.agent_index == *index,
            Scope::Program => false,
        });
        let variables = entry.variables.iter().filter(|variable| match scope {
            Scope::All => true,
            Scope::Agent(index) => variable.agent_index == Some(*index),
            Scope::Program => variable.agent_index.is_none(),
        });
        kernels
            .cloned()
            .map(ExecutableSymbol::Kernel)
            .chain(variables.cloned().map(ExecutableSymbol::Variable))
            .collect()
    };
    found.into_iter().map(|symbol| runtime.executables.symbol_id(id, symbol)).collect()
}

/// Calls `visit` with each symbol handle until it returns other than SUCCESS.
fn visit_symbols(
    runtime: &Runtime,
    id: u64,
    scope: Scope,
    mut visit: impl FnMut(hsa_executable_symbol_t) -> hsa_status_t,
) -> hsa_status_t {
    let handles: Vec<u64> =
        symbols(runtime, id, &scope).into_iter().map(|symbol| runtime.handle(Tag::Symbol, symbol)).collect();
    for handle in handles {
        let result = visit(hsa_executable_symbol_t { handle });
        if result != status::SUCCESS {
            return result;
        }
    }
    status::SUCCESS
}

type SymbolCallback =
    Option<unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>;
type AgentSymbolCallback =
    Option<unsafe extern "C" fn(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>;

/// Calls `callback` with each symbol of `executable` in `scope`.
unsafe fn iterate(
    executable: hsa_executable_t,
    scope: Scope,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let id = match executable_id(&runtime, executable) {
        Ok(id) => id,
        Err(status) => return status,
    };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    // SAFETY: the client's callback with the client's data.
    visit_symbols(&runtime, id, scope, |symbol| unsafe { callback(executable, symbol, data) })
}

/// `hsa_executable_iterate_symbols` (deprecated): every symbol.
pub unsafe fn hsa_executable_iterate_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { iterate(executable, Scope::All, callback, data) }
}

/// `hsa_executable_iterate_program_symbols`: the program variables the client defined (an
/// AMDGPU code object's kernels are all agent symbols).
pub unsafe fn hsa_executable_iterate_program_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { iterate(executable, Scope::Program, callback, data) }
}

/// `hsa_executable_iterate_agent_symbols`: the agent's kernels and variables.
pub unsafe fn hsa_executable_iterate_agent_symbols(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    callback: AgentSymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let id = match executable_id(&runtime, executable) {
        Ok(id) => id,
        Err(status) => return status,
    };
    let Some((index, _)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    // SAFETY: the client's callback with the client's data.
    visit_symbols(&runtime, id, Scope::Agent(index), |symbol| unsafe { callback(executable, agent, symbol, data) })
}

/// Records a variable definition: a null name is INVALID_ARGUMENT, an unknown agent
/// INVALID_AGENT, a frozen executable FROZEN_EXECUTABLE, and a second definition of the name for
/// the same agent (or program) VARIABLE_ALREADY_DEFINED (the loader's
/// `DefineProgramExternalVariable` and `DefineAgentExternalVariable`).
unsafe fn define_variable(
    executable: hsa_executable_t,
    agent: Option<hsa_agent_t>,
    name: *const c_char,
    address: *mut c_void,
    read_only: bool,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if name.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let id = match executable_id(&runtime, executable) {
        Ok(id) => id,
        Err(status) => return status,
    };
    let agent_index = match agent {
        None => None,
        Some(agent) => match runtime.agent(agent.handle) {
            Some((index, _)) => Some(index),
            None => return status::ERROR_INVALID_AGENT,
        },
    };
    // SAFETY: the API passes a NUL-terminated name.
    let name = unsafe { core::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned();
    let mut executables = runtime.executables.executables.lock().unwrap_or_else(|poison| poison.into_inner());
    let Some(entry) = executables.get_mut(&id) else { return status::ERROR_INVALID_EXECUTABLE };
    if entry.frozen {
        return status::ERROR_FROZEN_EXECUTABLE;
    }
    if entry.variables.iter().any(|variable| variable.name == name && variable.agent_index == agent_index) {
        return status::ERROR_VARIABLE_ALREADY_DEFINED;
    }
    entry.variables.push(Arc::new(VariableDefinition { name, agent_index, address: address as u64, read_only }));
    status::SUCCESS
}

/// `hsa_executable_global_variable_define`: a program variable.
pub unsafe fn hsa_executable_global_variable_define(
    executable: hsa_executable_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { define_variable(executable, None, variable_name, address, false) }
}

/// `hsa_executable_agent_global_variable_define`: one agent's variable.
pub unsafe fn hsa_executable_agent_global_variable_define(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { define_variable(executable, Some(agent), variable_name, address, false) }
}

/// `hsa_executable_readonly_variable_define`: one agent's read-only variable.
pub unsafe fn hsa_executable_readonly_variable_define(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded.
    unsafe { define_variable(executable, Some(agent), variable_name, address, true) }
}

/// `hsa_executable_load_program_code_object`: after the executable's and the reader's checks,
/// INCOMPATIBLE_ARGUMENTS. Every AMDGPU code object holds agent code, and the soft loader loads
/// it for one agent only (`hsa_executable_load_agent_code_object`); ROCr instead maps it with no
/// agent in system memory, which the soft runtime does not model.
pub unsafe fn hsa_executable_load_program_code_object(
    executable: hsa_executable_t,
    code_object_reader: hsa_code_object_reader_t,
    _options: *const c_char,
    _loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let id = match executable_id(&runtime, executable) {
        Ok(id) => id,
        Err(status) => return status,
    };
    if runtime
        .executables
        .executables
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .get(&id)
        .is_some_and(|entry| entry.frozen)
    {
        return status::ERROR_FROZEN_EXECUTABLE;
    }
    let reader = runtime.index_of(Tag::Reader, code_object_reader.handle);
    let known = reader.is_some_and(|id| {
        runtime.executables.readers.lock().unwrap_or_else(|poison| poison.into_inner()).contains_key(&id)
    });
    if !known {
        return status::ERROR_INVALID_CODE_OBJECT_READER;
    }
    status::ERROR_INCOMPATIBLE_ARGUMENTS
}

fn code_object(runtime: &Runtime, handle: hsa_code_object_t) -> Option<Arc<Reader>> {
    let code_objects = runtime.executables.deserialized.lock().unwrap_or_else(|poison| poison.into_inner());
    code_objects.iter().find(|(address, _)| *address == handle.handle).map(|(_, reader)| reader.clone())
}

/// `hsa_code_object_deserialize` (deprecated): copies and parses the bytes; the handle is the
/// copy's address, as in ROCr. Null pointers or no bytes are INVALID_ARGUMENT, bytes that are no
/// code object INVALID_CODE_OBJECT.
pub unsafe fn hsa_code_object_deserialize(
    serialized_code_object: *mut c_void,
    serialized_code_object_size: usize,
    _options: *const c_char,
    code_object: *mut hsa_code_object_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if serialized_code_object.is_null()
        || code_object.is_null()
        || serialized_code_object_size == 0
        || serialized_code_object_size > isize::MAX as usize
    {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API passes `size` readable bytes, and the size fits a slice.
    let bytes =
        unsafe { core::slice::from_raw_parts(serialized_code_object.cast::<u8>(), serialized_code_object_size) }
            .to_vec();
    let Ok(parsed) = aqueduct_codeobject::CodeObject::parse(&bytes) else { return status::ERROR_INVALID_CODE_OBJECT };
    let origin = ReaderOrigin::Memory { address: serialized_code_object as usize };
    let reader =
        Arc::new(Reader { id: aqueduct_codeobject::CodeObjectId::of(&bytes), bytes, code_object: parsed, origin });
    let handle = reader.bytes.as_ptr() as u64;
    runtime.executables.deserialized.lock().unwrap_or_else(|poison| poison.into_inner()).push((handle, reader));
    // SAFETY: non-null output pointer.
    unsafe { code_object.write(hsa_code_object_t { handle }) };
    status::SUCCESS
}

/// `hsa_code_object_destroy` (deprecated): forgets a deserialized code object; executables that
/// loaded it keep their own copy.
pub unsafe fn hsa_code_object_destroy(code_object: hsa_code_object_t) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let mut code_objects = runtime.executables.deserialized.lock().unwrap_or_else(|poison| poison.into_inner());
    match code_objects.iter().position(|(address, _)| *address == code_object.handle) {
        Some(position) => {
            code_objects.remove(position);
            status::SUCCESS
        }
        None => status::ERROR_INVALID_CODE_OBJECT,
    }
}

type AllocCallback = Option<unsafe extern "C" fn(usize, hsa_callback_data_t, *mut *mut c_void) -> hsa_status_t>;

/// `hsa_code_object_serialize` (deprecated): the code object's bytes, in memory from the
/// client's allocator; its failure is returned as is.
pub unsafe fn hsa_code_object_serialize(
    code_object: hsa_code_object_t,
    alloc_callback: AllocCallback,
    callback_data: hsa_callback_data_t,
    _options: *const c_char,
    serialized_code_object: *mut *mut c_void,
    serialized_code_object_size: *mut usize,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(alloc) = alloc_callback else { return status::ERROR_INVALID_ARGUMENT };
    if serialized_code_object.is_null() || serialized_code_object_size.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(reader) = self::code_object(&runtime, code_object) else { return status::ERROR_INVALID_CODE_OBJECT };
    drop(runtime);
    let mut address = core::ptr::null_mut::<c_void>();
    // SAFETY: the client's allocator with its data.
    let allocated = unsafe { alloc(reader.bytes.len(), callback_data, &mut address) };
    if allocated != status::SUCCESS {
        return allocated;
    }
    if address.is_null() {
        return status::ERROR_OUT_OF_RESOURCES;
    }
    // SAFETY: the allocator returned room for the bytes; the outputs are non-null.
    unsafe {
        core::ptr::copy_nonoverlapping(reader.bytes.as_ptr(), address.cast::<u8>(), reader.bytes.len());
        serialized_code_object.write(address);
        serialized_code_object_size.write(reader.bytes.len());
    }
    status::SUCCESS
}

/// `hsa_code_object_get_info` (deprecated): VERSION (the code-object version, `"4"` to `"6"`, in
/// a `char[64]`), TYPE PROGRAM, ISA (the GPU's whose ISA runs it; INVALID_ISA if none does),
/// MACHINE_MODEL LARGE, PROFILE BASE and rounding NEAR, as ROCr reports a code object v3+.
pub unsafe fn hsa_code_object_get_info(
    code_object: hsa_code_object_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(reader) = self::code_object(&runtime, code_object) else { return status::ERROR_INVALID_CODE_OBJECT };
    // SAFETY (all arms): `value` points to storage of the attribute's documented type.
    unsafe {
        match attribute {
            0 => {
                let mut version = [0u8; 64];
                let text = reader.code_object.abi_version().code_object_version().to_string();
                version[..text.len()].copy_from_slice(text.as_bytes());
                value.cast::<[u8; 64]>().write_unaligned(version);
            }
            1 => value.cast::<u32>().write(0),
            2 => {
                let target = reader.code_object.target();
                let runs_on = (0..runtime.agents.len()).find(|&index| {
                    runtime
                        .gpu(index)
                        .and_then(|gpu| aqueduct_codeobject::TargetId::parse(&gpu.isa_name).ok())
                        .is_some_and(|agent| target.runs_on(&agent).is_ok())
                });
                let Some(index) = runs_on else { return status::ERROR_INVALID_ISA };
                value.cast::<hsa_isa_t>().write(hsa_isa_t { handle: runtime.handle(Tag::Isa, index as u64) });
            }
            3 => value.cast::<u32>().write(enums::MACHINE_MODEL_LARGE),
            4 => value.cast::<u32>().write(enums::PROFILE_BASE),
            5 => value.cast::<u32>().write(enums::DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
            _ => return status::ERROR_INVALID_ARGUMENT,
        }
    }
    status::SUCCESS
}

/// A code symbol's handle: the code object's slot among the deserialized ones and the kernel's
/// index.
fn code_symbol_handle(runtime: &Runtime, code_object: hsa_code_object_t, kernel: usize) -> Option<u64> {
    let code_objects = runtime.executables.deserialized.lock().unwrap_or_else(|poison| poison.into_inner());
    let slot = code_objects.iter().position(|(address, _)| *address == code_object.handle)?;
    (slot < 1 << 20 && kernel < 1 << 12).then(|| runtime.handle(Tag::CodeSymbol, (slot << 12 | kernel) as u64))
}

fn code_symbol(runtime: &Runtime, symbol: hsa_code_symbol_t) -> Option<(Arc<Reader>, usize)> {
    let index = runtime.index_of(Tag::CodeSymbol, symbol.handle)? as usize;
    let code_objects = runtime.executables.deserialized.lock().unwrap_or_else(|poison| poison.into_inner());
    let reader = code_objects.get(index >> 12)?.1.clone();
    let kernel = index & 0xFFF;
    (kernel < reader.code_object.kernels().len()).then_some((reader, kernel))
}

/// `hsa_code_object_get_symbol` (deprecated): the kernel of that descriptor symbol name.
pub unsafe fn hsa_code_object_get_symbol(
    code_object: hsa_code_object_t,
    symbol_name: *const c_char,
    symbol: *mut hsa_code_symbol_t,
) -> hsa_status_t {
    // SAFETY: forwarded; the module name is not used by code objects v3+.
    unsafe { hsa_code_object_get_symbol_from_name(code_object, core::ptr::null(), symbol_name, symbol) }
}

/// `hsa_code_object_get_symbol_from_name` (deprecated): code objects v3+ have no modules, so the
/// module name selects nothing.
pub unsafe fn hsa_code_object_get_symbol_from_name(
    code_object: hsa_code_object_t,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    symbol: *mut hsa_code_symbol_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if symbol_name.is_null() || symbol.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some(reader) = self::code_object(&runtime, code_object) else { return status::ERROR_INVALID_CODE_OBJECT };
    // SAFETY: the API passes a NUL-terminated name.
    let name = unsafe { core::ffi::CStr::from_ptr(symbol_name) }.to_string_lossy();
    let Some(kernel) = reader.code_object.kernels().iter().position(|kernel| kernel.symbol == name) else {
        return status::ERROR_INVALID_SYMBOL_NAME;
    };
    let Some(handle) = code_symbol_handle(&runtime, code_object, kernel) else { return status::ERROR_OUT_OF_RESOURCES };
    // SAFETY: non-null output pointer.
    unsafe { symbol.write(hsa_code_symbol_t { handle }) };
    status::SUCCESS
}

type CodeSymbolCallback =
    Option<unsafe extern "C" fn(hsa_code_object_t, hsa_code_symbol_t, *mut c_void) -> hsa_status_t>;

/// `hsa_code_object_iterate_symbols` (deprecated): every kernel, in metadata order.
pub unsafe fn hsa_code_object_iterate_symbols(
    code_object: hsa_code_object_t,
    callback: CodeSymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(reader) = self::code_object(&runtime, code_object) else { return status::ERROR_INVALID_CODE_OBJECT };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    let handles: Option<Vec<u64>> = (0..reader.code_object.kernels().len())
        .map(|kernel| code_symbol_handle(&runtime, code_object, kernel))
        .collect();
    let Some(handles) = handles else { return status::ERROR_OUT_OF_RESOURCES };
    drop(runtime);
    for handle in handles {
        // SAFETY: the client's callback with the client's data.
        let result = unsafe { callback(code_object, hsa_code_symbol_t { handle }, data) };
        if result != status::SUCCESS {
            return result;
        }
    }
    status::SUCCESS
}

/// `hsa_code_symbol_get_info` (deprecated): a kernel's attributes from its metadata, numbered
/// as `hsa_executable_symbol_info_t` numbers the same ones.
pub unsafe fn hsa_code_symbol_get_info(
    code_symbol: hsa_code_symbol_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((reader, kernel)) = self::code_symbol(&runtime, code_symbol) else {
        return status::ERROR_INVALID_CODE_SYMBOL;
    };
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let metadata = &reader.code_object.kernels()[kernel];
    let name = metadata.symbol.as_str();
    // SAFETY (all arms): `value` points to storage of the attribute's documented type; NAME was
    // sized from NAME_LENGTH.
    unsafe {
        match attribute {
            symbol_info::TYPE => value.cast::<u32>().write(enums::SYMBOL_KIND_KERNEL),
            symbol_info::NAME_LENGTH => value.cast::<u32>().write(name.len() as u32),
            symbol_info::NAME => core::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len()),
            symbol_info::MODULE_NAME_LENGTH => value.cast::<u32>().write(0),
            symbol_info::MODULE_NAME => {}
            symbol_info::LINKAGE => value.cast::<u32>().write(enums::SYMBOL_LINKAGE_PROGRAM),
            symbol_info::IS_DEFINITION => value.cast::<bool>().write(true),
            symbol_info::KERNEL_KERNARG_SEGMENT_SIZE => value.cast::<u32>().write(metadata.kernarg_segment_size),
            symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT => value.cast::<u32>().write(16),
            symbol_info::KERNEL_GROUP_SEGMENT_SIZE => value.cast::<u32>().write(metadata.group_segment_fixed_size),
            symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE => value.cast::<u32>().write(metadata.private_segment_fixed_size),
            symbol_info::KERNEL_CALL_CONVENTION => value.cast::<u32>().write(0),
            _ => return status::ERROR_INVALID_ARGUMENT,
        }
    }
    status::SUCCESS
}

/// `hsa_executable_load_code_object` (deprecated): loads a deserialized code object for the
/// agent, as `hsa_executable_load_agent_code_object` loads a reader.
pub unsafe fn hsa_executable_load_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    code_object: hsa_code_object_t,
    options: *const c_char,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some(reader) = self::code_object(&runtime, code_object) else { return status::ERROR_INVALID_CODE_OBJECT };
    let id = runtime.executables.add_shared_reader(reader);
    let handle = hsa_code_object_reader_t { handle: runtime.handle(Tag::Reader, id) };
    drop(runtime);
    // SAFETY: forwarded; the reader stands for the code object for this load only.
    let loaded = unsafe {
        super::entry::hsa_executable_load_agent_code_object(executable, agent, handle, options, core::ptr::null_mut())
    };
    // SAFETY: the reader made above.
    unsafe { super::entry::hsa_code_object_reader_destroy(handle) };
    loaded
}
