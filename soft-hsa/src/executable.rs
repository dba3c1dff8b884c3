//! Code-object readers, executables and symbols, and the registry of host builds.
//!
//! Loading parses the real code object (target, metadata, kernel descriptors) and copies its
//! `PT_LOAD` segments to a page-aligned image the runtime owns, as ROCr's loader maps them; a
//! kernel's descriptor address in that image is the `kernel_object` a dispatch packet carries, as
//! on hardware. The processor maps that address back to the kernel
//! and its host build, found by the code object's identity (a content hash of its bytes) and the
//! descriptor's symbol (`name.kd`): two code objects that both define `saxpy.kd` never share an
//! implementation by accident. A kernel without a host build still loads, with its metadata;
//! dispatching it puts the queue in error with a message naming the kernel and the code object.
//!
//! A host build that declares its argument layout (every C kernel built with the work-item shim
//! does, and every Rust one made with `HostBuild::of`) is compared with the metadata's explicit
//! arguments when it is bound ([`check_host_build`]); a mismatch leaves the kernel without a host
//! build and the dispatch error says what differs. The engine runs the same check earlier, when
//! a host build is registered and when a code object loads, and returns it as an error.

use core::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use aqueduct_abi::{HostArg, HostBuild, HostBuildFn, KernelDescriptor};
use aqueduct_codeobject::{ArgLayoutMismatch, ArgPlacement, CodeObject, CodeObjectId, KernelMetadata, ValueKind};
use hashbrown::HashMap;

/// Code object → descriptor symbol → host build.
type Registry = HashMap<CodeObjectId, HashMap<&'static str, HostBuild>>;

static HOST_KERNELS: RwLock<Option<Registry>> = RwLock::new(None);

/// Bumped by every change to what [`Executables::kernel`] may answer (a load, a destroy, a
/// clear, a host-build registration), so a cached answer is known current by one load of a line
/// nobody writes in the steady state.
static KERNELS_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The last kernel a thread was answered, with what it was answered under.
struct CachedKernel {
    /// The `Executables` asked (its address) and the kernel object asked for.
    executables: usize,
    kernel_object: u64,
    generation: u64,
    kernel: Arc<LoadedKernel>,
}

thread_local! {
    /// One entry per thread: a packet processor dispatches the same kernel again and again, and
    /// without it each dispatch took the device-wide read lock and the kernel's reference count,
    /// two lines every queue's processor writes (issue 46).
    static LAST_KERNEL: core::cell::Cell<Option<CachedKernel>> = const { core::cell::Cell::new(None) };
}

/// A kernel lent from the calling thread's cache ([`Executables::lease`]): it goes back there
/// when dropped, so a steady stream of dispatches touches no shared line to find its kernel.
pub(crate) struct KernelLease(Option<CachedKernel>);

impl core::ops::Deref for KernelLease {
    type Target = LoadedKernel;

    fn deref(&self) -> &LoadedKernel {
        match &self.0 {
            Some(cached) => &cached.kernel,
            None => unreachable!("a lease holds its kernel until it drops"),
        }
    }
}

impl Drop for KernelLease {
    fn drop(&mut self) {
        // `try_with`: during thread teardown the cache may be gone; the kernel is dropped then.
        let _ = LAST_KERNEL.try_with(|cache| cache.set(self.0.take()));
    }
}

/// Registers host implementations of kernels of the code object `code_object` (its
/// [`CodeObjectId::of`] its bytes), keyed by descriptor symbol. This is the one entry point for
/// every host build: the device library's C host builds (once per embedded code object), the demo
/// and bench kernels, and tests' Rust kernels.
///
/// A later registration of the same (code object, symbol) replaces the earlier one; kernels
/// loaded already keep what they were bound to unless they had none. Registration is
/// process-wide and survives re-initialization.
pub fn register_kernels(code_object: CodeObjectId, kernels: &[HostBuild]) {
    let mut registry = HOST_KERNELS.write().unwrap_or_else(|poison| poison.into_inner());
    let registry = registry.get_or_insert_with(HashMap::new);
    let symbols = registry.entry(code_object).or_default();
    for kernel in kernels {
        symbols.insert(kernel.symbol, *kernel);
    }
    KERNELS_GENERATION.fetch_add(1, Ordering::Release);
}

/// The host build registered for (code object, descriptor symbol), if any: what a load will
/// bind, for callers that check it first (the engine compares it with the metadata when it
/// loads a code object, so a mismatch is an error there rather than a fault at dispatch).
pub fn registered_kernel(code_object: CodeObjectId, symbol: &str) -> Option<HostBuild> {
    let registry = HOST_KERNELS.read().unwrap_or_else(|poison| poison.into_inner());
    registry.as_ref()?.get(&code_object)?.get(symbol).copied()
}

/// The steady counter host builds read (`aq_steady_counter()`, `__builtin_readsteadycounter` on a
/// GPU): the device clock, the domain of completion-signal timestamps too (see `soft::clock`).
pub(crate) unsafe extern "C" fn steady_counter() -> u64 {
    super::clock::device_ticks()
}

/// Which code object a kernel came from, for error messages.
#[derive(Clone, Debug)]
pub(crate) struct CodeObjectLabel {
    pub id: CodeObjectId,
    pub target: String,
}

impl core::fmt::Display for CodeObjectLabel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "code object {} ({})", self.id, self.target)
    }
}

/// A host build bound to one loaded kernel, with what the runner needs per dispatch.
#[derive(Clone, Debug)]
pub(crate) struct HostBinding {
    pub function: HostBuildFn,
    /// (kernarg offset, argument name) of every pointer argument that must not be null.
    pub required_pointers: Vec<(usize, String)>,
    /// Offset of the hidden arguments in the kernarg segment, if the kernel has any.
    pub implicit_offset: Option<usize>,
    /// The kernel has explicit arguments, so its kernarg segment must not be null.
    pub reads_kernargs: bool,
}

/// Whether a loaded kernel can run on the soft runtime.
#[derive(Clone, Debug)]
pub(crate) enum HostBuildState {
    Ready(HostBinding),
    /// Nothing registered for (code object, symbol).
    Missing,
    /// Registered, but its argument layout disagrees with the metadata: why.
    Mismatch(String),
}

impl HostBuildState {
    fn resolve(code_object: CodeObjectId, metadata: &KernelMetadata) -> HostBuildState {
        let Some(kernel) = registered_kernel(code_object, &metadata.symbol) else {
            return HostBuildState::Missing;
        };
        bind(kernel, metadata).map_or_else(HostBuildState::Mismatch, HostBuildState::Ready)
    }
}

/// Compares a host build's declared argument layout with the metadata's explicit arguments, as
/// binding does when a code object loads (the engine calls it when a host build is registered,
/// so a mismatch fails there, loudly). A host build that declares no layout (`args: None`) is
/// not compared.
pub fn check_host_build(kernel: &HostBuild, metadata: &KernelMetadata) -> Result<(), ArgLayoutMismatch> {
    let Some(args) = kernel.args else {
        return Ok(());
    };
    metadata.check_declared_args(
        args.iter()
            .map(|arg| (ArgPlacement { offset: arg.offset, size: arg.size, pointer: arg.is_pointer() }, arg.name())),
    )
}

/// Checks a host build's declared layout against the metadata and records the pointer arguments
/// to check before each dispatch.
fn bind(kernel: HostBuild, metadata: &KernelMetadata) -> Result<HostBinding, String> {
    let explicit: Vec<_> = metadata.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
    // Metadata of C kernels carries no parameter names; the host build's layout does.
    let name = |index: usize| {
        let host = kernel.args.and_then(|args| args.get(index)).and_then(HostArg::name);
        let name = explicit[index].name.as_deref().or(host).map_or_else(String::new, |name| format!(" `{name}`"));
        format!("{index}{name} (kernarg offset {})", explicit[index].offset)
    };
    let nullable = |index: usize| kernel.args.and_then(|args| args.get(index)).is_some_and(HostArg::is_nullable);
    check_host_build(&kernel, metadata).map_err(|mismatch| mismatch.to_string())?;
    Ok(HostBinding {
        function: kernel.function,
        required_pointers: explicit
            .iter()
            .enumerate()
            .filter(|(index, arg)| arg.value_kind == ValueKind::GlobalBuffer && arg.size == 8 && !nullable(*index))
            .map(|(index, arg)| (arg.offset as usize, name(index)))
            .collect(),
        implicit_offset: metadata
            .args
            .iter()
            .filter(|arg| arg.value_kind.is_hidden())
            .map(|arg| arg.offset as usize)
            .min(),
        reads_kernargs: !explicit.is_empty(),
    })
}

pub(crate) struct Reader {
    pub bytes: Vec<u8>,
    pub code_object: CodeObject,
    pub id: CodeObjectId,
    pub origin: ReaderOrigin,
}

/// Where a reader's bytes came from: what the AMD loader extension reports as a loaded code
/// object's storage and URI (`hsa_ven_amd_loader.h`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ReaderOrigin {
    /// `hsa_code_object_reader_create_from_memory`: the client's address.
    Memory { address: usize },
    /// A reader from a file descriptor, at `offset` in the file.
    File { descriptor: i32, offset: u64 },
}

/// Zeroed, page-aligned memory the runtime owns: a loaded code object's segments.
struct ImageMemory {
    base: core::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: the memory is written only while its code object loads, before the image is shared;
// afterwards it is read (descriptors) through raw addresses, as a GPU reads loaded code.
unsafe impl Send for ImageMemory {}
// SAFETY: as above.
unsafe impl Sync for ImageMemory {}

impl ImageMemory {
    /// ROCr maps code-object segments in whole pages.
    const ALIGNMENT: usize = 4096;

    fn zeroed(size: usize) -> Option<Self> {
        let layout = std::alloc::Layout::from_size_align(size.max(1), Self::ALIGNMENT).ok()?;
        // SAFETY: the layout has a non-zero size.
        let base = core::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Self { base, layout })
    }
}

impl Drop for ImageMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

/// One code object loaded into one executable for one agent: its `PT_LOAD` segments copied to
/// memory the runtime owns, as ROCr's loader maps them (`kernel_object` is the load base plus the
/// descriptor's virtual address, less the lowest segment's).
pub(crate) struct LoadedCodeObject {
    pub id: u64,
    pub executable: u64,
    pub agent_index: usize,
    pub reader: Arc<Reader>,
    /// The lowest `PT_LOAD` virtual address, which the load base stands for.
    lowest_vaddr: u64,
    memory: ImageMemory,
}

impl LoadedCodeObject {
    /// The 2 GiB ceiling on one code object's span keeps a hostile header (a segment at a huge
    /// virtual address) from asking for absurd memory.
    const MAX_SPAN: u64 = 2 << 30;

    fn load(id: u64, executable: u64, agent_index: usize, reader: Arc<Reader>) -> Result<Self, LoadFailure> {
        let segments = reader.code_object.load_segments();
        let lowest_vaddr =
            segments.iter().map(|segment| segment.vaddr).min().ok_or_else(|| {
                LoadFailure::InvalidCodeObject("the code object has no PT_LOAD segment to load".into())
            })?;
        let end = segments.iter().map(|segment| segment.vaddr + segment.memory_size).max().unwrap_or(lowest_vaddr);
        let span = end - lowest_vaddr;
        if span > Self::MAX_SPAN {
            return Err(LoadFailure::InvalidCodeObject(format!(
                "its PT_LOAD segments span {span:#x} bytes, more than the loader maps ({:#x})",
                Self::MAX_SPAN
            )));
        }
        let memory = ImageMemory::zeroed(span as usize)
            .ok_or_else(|| LoadFailure::InvalidCodeObject(format!("{span:#x} bytes for its segments")))?;
        for segment in segments {
            let from = segment.file_offset as usize..(segment.file_offset + segment.file_size) as usize;
            // The code-object parser checked each segment against the file.
            let bytes = &reader.bytes[from];
            // SAFETY: `vaddr - lowest + file_size <= span`, the allocation's size; nothing else
            // holds this memory yet.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    memory.base.as_ptr().add((segment.vaddr - lowest_vaddr) as usize),
                    bytes.len(),
                )
            };
        }
        Ok(Self { id, executable, agent_index, reader, lowest_vaddr, memory })
    }

    pub fn load_base(&self) -> u64 {
        self.memory.base.as_ptr() as u64
    }

    pub fn load_size(&self) -> u64 {
        self.memory.layout.size() as u64
    }

    /// Load base minus the lowest virtual address (`LOAD_DELTA` of `hsa_ven_amd_loader.h`).
    pub fn load_delta(&self) -> i64 {
        self.load_base().wrapping_sub(self.lowest_vaddr) as i64
    }

    pub fn contains(&self, address: u64) -> bool {
        (self.load_base()..self.load_base() + self.load_size()).contains(&address)
    }

    /// Where the code object's virtual address `vaddr` is loaded.
    fn address_of(&self, vaddr: u64) -> u64 {
        self.load_base() + (vaddr - self.lowest_vaddr)
    }

    /// Each loaded segment: (its address, its size in memory, its offset in the code object).
    pub fn segments(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.reader
            .code_object
            .load_segments()
            .iter()
            .map(|segment| (self.address_of(segment.vaddr), segment.memory_size, segment.file_offset))
    }

    /// The code object's URI, in the syntax of `hsa_ven_amd_loader.h`: `file://` for a reader made
    /// from a file (the descriptor's path under `/proc/self/fd`), `memory://` for one from memory.
    pub fn uri(&self) -> String {
        let size = self.reader.bytes.len();
        match self.reader.origin {
            ReaderOrigin::Memory { address } => {
                format!("memory://{}#offset={address:#x}&size={size}", std::process::id())
            }
            ReaderOrigin::File { descriptor, offset } => {
                let path = std::fs::read_link(format!("/proc/self/fd/{descriptor}"))
                    .map(|path| path.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| format!("/proc/self/fd/{descriptor}"));
                let encoded: String = path
                    .bytes()
                    .map(|byte| match byte {
                        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'_' | b'.' | b'~' | b'-' => {
                            (byte as char).to_string()
                        }
                        other => format!("%{other:02X}"),
                    })
                    .collect();
                format!("file://{encoded}#offset={offset}&size={size}")
            }
        }
    }
}

pub(crate) struct LoadedKernel {
    pub symbol: String,
    pub metadata: KernelMetadata,
    pub agent_index: usize,
    pub code_object: CodeObjectLabel,
    pub host: HostBuildState,
    /// The loaded image that holds the descriptor `kernel_object` points at.
    pub image: Arc<LoadedCodeObject>,
    kernel_object: u64,
    /// Its machine code decoded for the interpreter, at its first interpreted dispatch.
    pub isa_kernel: std::sync::OnceLock<Result<Arc<aqueduct_isa::interp::DecodedKernel>, String>>,
}

impl LoadedKernel {
    pub fn kernel_object(&self) -> u64 {
        self.kernel_object
    }

    pub fn descriptor(&self) -> KernelDescriptor {
        // SAFETY: loading checked that the 64 descriptor bytes lie in the image, which this
        // kernel keeps alive.
        let bytes = unsafe { core::slice::from_raw_parts(self.kernel_object as *const u8, 64) };
        bytemuck::pod_read_unaligned(bytes)
    }

    /// The descriptor's `USES_DYNAMIC_STACK` bit, as ROCr reads it for
    /// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK`.
    pub fn uses_dynamic_stack(&self) -> bool {
        self.descriptor().kernel_code_properties
            & aqueduct_abi::kernel_descriptor::kernel_code_properties::USES_DYNAMIC_STACK
            != 0
    }
}

pub(crate) struct Executable {
    pub frozen: bool,
    /// `hsa_profile_t` and `hsa_default_float_rounding_mode_t` given at creation
    /// (`HSA_EXECUTABLE_INFO_PROFILE`, `_DEFAULT_FLOAT_ROUNDING_MODE`).
    pub profile: u32,
    pub rounding_mode: u32,
    pub kernels: Vec<Arc<LoadedKernel>>,
    pub code_objects: Vec<Arc<LoadedCodeObject>>,
    /// External variables the client defined (`hsa_executable_*_variable_define`).
    pub variables: Vec<Arc<VariableDefinition>>,
}

/// A variable the client defined for an executable: a program variable (no agent) or one
/// agent's, read-only or not, at the client's address. The soft loader applies no relocations,
/// so a definition resolves nothing in loaded code; it is a symbol of the executable, as in ROCr.
#[derive(Debug)]
pub(crate) struct VariableDefinition {
    pub name: String,
    pub agent_index: Option<usize>,
    pub address: u64,
    pub read_only: bool,
}

/// A symbol of an executable: a loaded kernel or a defined variable.
#[derive(Clone)]
pub(crate) enum ExecutableSymbol {
    Kernel(Arc<LoadedKernel>),
    Variable(Arc<VariableDefinition>),
}

impl ExecutableSymbol {
    fn same(&self, other: &ExecutableSymbol) -> bool {
        match (self, other) {
            (Self::Kernel(a), Self::Kernel(b)) => Arc::ptr_eq(a, b),
            (Self::Variable(a), Self::Variable(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

#[derive(Default)]
pub(crate) struct Executables {
    next_id: AtomicU64,
    pub readers: Mutex<HashMap<u64, Arc<Reader>>>,
    pub executables: Mutex<HashMap<u64, Executable>>,
    /// Symbol id → (executable id, symbol): one id per symbol, handed out by [`Self::symbol_id`].
    pub symbols: Mutex<HashMap<u64, (u64, ExecutableSymbol)>>,
    by_kernel_object: RwLock<HashMap<u64, Arc<LoadedKernel>>>,
    /// `hsa_code_object_deserialize`'s code objects: (the handle, the address of the copy; its
    /// reader), in creation order.
    pub deserialized: Mutex<Vec<(u64, Arc<Reader>)>>,
}

/// Why a load was refused, mapped to an HSA status by the entry point.
pub(crate) enum LoadFailure {
    UnknownExecutable,
    Frozen,
    UnknownReader,
    Incompatible(String),
    /// ROCr's HSA_STATUS_ERROR_INVALID_CODE_OBJECT: a version the loader does not accept, or a
    /// kernel descriptor missing from the file.
    InvalidCodeObject(String),
    /// ROCr's HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: the executable already defines this
    /// symbol for the agent.
    AlreadyDefined(String),
}

impl Executables {
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn add_reader(&self, bytes: Vec<u8>, code_object: CodeObject, origin: ReaderOrigin) -> u64 {
        let id = self.next_id();
        let reader = Reader { id: CodeObjectId::of(&bytes), bytes, code_object, origin };
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, Arc::new(reader));
        id
    }

    /// Adds an existing reader under a new id (a deserialized code object loading).
    pub fn add_shared_reader(&self, reader: Arc<Reader>) -> u64 {
        let id = self.next_id();
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, reader);
        id
    }

    pub fn create_executable(&self, profile: u32, rounding_mode: u32) -> u64 {
        let id = self.next_id();
        let executable = Executable {
            frozen: false,
            profile,
            rounding_mode,
            kernels: Vec::new(),
            code_objects: Vec::new(),
            variables: Vec::new(),
        };
        self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, executable);
        id
    }

    /// The id of `symbol` of `executable`: the same id each time it is looked up or iterated.
    pub fn symbol_id(&self, executable: u64, symbol: ExecutableSymbol) -> u64 {
        let mut symbols = self.symbols.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some((&id, _)) = symbols.iter().find(|(_, (owner, known))| *owner == executable && known.same(&symbol)) {
            return id;
        }
        let id = self.next_id();
        symbols.insert(id, (executable, symbol));
        id
    }

    /// Loads a reader's code object for one agent: its segments, then every kernel. All-or-nothing.
    /// Like ROCr's loader, it refuses a code-object version outside `versions` (`SoftConfig`).
    /// Returns the loaded code object's id.
    pub fn load(
        &self,
        executable: u64,
        reader: u64,
        agent_index: usize,
        agent_isa: &str,
        versions: &RangeInclusive<u32>,
    ) -> Result<u64, LoadFailure> {
        let reader = self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).get(&reader).cloned();
        let reader = reader.ok_or(LoadFailure::UnknownReader)?;
        let mut executables = self.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        let entry = executables.get_mut(&executable).ok_or(LoadFailure::UnknownExecutable)?;
        if entry.frozen {
            return Err(LoadFailure::Frozen);
        }
        let version = reader.code_object.abi_version().code_object_version();
        if !versions.contains(&version) {
            return Err(LoadFailure::InvalidCodeObject(format!(
                "code object v{version} is not supported by this loader (it accepts v{}..=v{})",
                versions.start(),
                versions.end()
            )));
        }
        let agent_target = aqueduct_codeobject::TargetId::parse(agent_isa)
            .map_err(|error| LoadFailure::Incompatible(format!("agent ISA {agent_isa}: {error}")))?;
        reader
            .code_object
            .target()
            .runs_on(&agent_target)
            .map_err(|error| LoadFailure::Incompatible(error.to_string()))?;
        // ROCr keys an executable's agent symbols by (name, agent) and refuses a second definition
        // (ROCR-Runtime src/loader/executable.cpp, ExecutableImpl::LoadDefinitionSymbol:
        // HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED), so the same reader loads once per agent.
        if let Some(clash) = reader.code_object.kernels().iter().find(|metadata| {
            entry.kernels.iter().any(|kernel| kernel.agent_index == agent_index && kernel.symbol == metadata.symbol)
        }) {
            return Err(LoadFailure::AlreadyDefined(clash.symbol.clone()));
        }
        let label = CodeObjectLabel { id: reader.id, target: reader.code_object.target().to_string() };
        let image = Arc::new(LoadedCodeObject::load(self.next_id(), executable, agent_index, reader.clone())?);
        let mut loaded = Vec::with_capacity(reader.code_object.kernels().len());
        for (index, metadata) in reader.code_object.kernels().iter().enumerate() {
            let vaddr = reader.code_object.kernel_descriptor(index).map(|symbol| symbol.address);
            let loadable = vaddr
                .filter(|&vaddr| reader.code_object.load_segments().iter().any(|segment| segment.holds(vaddr, 64)));
            let Some(vaddr) = loadable else {
                return Err(LoadFailure::InvalidCodeObject(format!(
                    "kernel descriptor `{}` is not in a loaded segment",
                    metadata.symbol
                )));
            };
            loaded.push(Arc::new(LoadedKernel {
                symbol: metadata.symbol.clone(),
                metadata: metadata.clone(),
                agent_index,
                code_object: label.clone(),
                host: HostBuildState::resolve(reader.id, metadata),
                kernel_object: image.address_of(vaddr),
                isa_kernel: std::sync::OnceLock::new(),
                image: image.clone(),
            }));
        }
        let mut by_object = self.by_kernel_object.write().unwrap_or_else(|poison| poison.into_inner());
        for kernel in &loaded {
            by_object.insert(kernel.kernel_object(), kernel.clone());
        }
        KERNELS_GENERATION.fetch_add(1, Ordering::Release);
        entry.kernels.extend(loaded);
        let id = image.id;
        let load_delta = image.load_delta() as u64;
        let dynamic = image.reader.code_object.dynamic_vaddr().map_or(0, |vaddr| load_delta.wrapping_add(vaddr));
        super::debugger::loaded(id, &image.uri(), load_delta, dynamic);
        entry.code_objects.push(image);
        Ok(id)
    }

    /// The loaded code object whose image holds `address`, if any.
    pub fn loaded_at(&self, address: u64) -> Option<Arc<LoadedCodeObject>> {
        let executables = self.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        executables.values().flat_map(|entry| &entry.code_objects).find(|image| image.contains(address)).cloned()
    }

    /// The loaded code object with this id, if its executable lives.
    pub fn loaded(&self, id: u64) -> Option<Arc<LoadedCodeObject>> {
        let executables = self.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        executables.values().flat_map(|entry| &entry.code_objects).find(|image| image.id == id).cloned()
    }

    /// [`Self::kernel`], from the calling thread's cache when its answer is current (the same
    /// `Executables`, kernel object and generation); a nested call on the thread, which finds
    /// the cache lent out, asks the table.
    pub(crate) fn lease(&self, kernel_object: u64) -> Option<KernelLease> {
        // Read before the table: a change racing this lookup bumps it after, so the entry cached
        // below is never newer than its generation says.
        let generation = KERNELS_GENERATION.load(Ordering::Acquire);
        let executables = self as *const Self as usize;
        if let Ok(Some(cached)) = LAST_KERNEL.try_with(|cache| cache.take())
            && cached.executables == executables
            && cached.kernel_object == kernel_object
            && cached.generation == generation
        {
            return Some(KernelLease(Some(cached)));
        }
        let kernel = self.kernel(kernel_object)?;
        Some(KernelLease(Some(CachedKernel { executables, kernel_object, generation, kernel })))
    }

    /// The kernel behind a dispatch packet's `kernel_object`.
    pub fn kernel(&self, kernel_object: u64) -> Option<Arc<LoadedKernel>> {
        let kernel =
            self.by_kernel_object.read().unwrap_or_else(|poison| poison.into_inner()).get(&kernel_object).cloned()?;
        if matches!(kernel.host, HostBuildState::Ready(_)) {
            return Some(kernel);
        }
        // Registered after loading: resolve now (off the common path).
        let host = HostBuildState::resolve(kernel.code_object.id, &kernel.metadata);
        if matches!(host, HostBuildState::Missing) {
            return Some(kernel);
        }
        Some(Arc::new(LoadedKernel {
            symbol: kernel.symbol.clone(),
            metadata: kernel.metadata.clone(),
            agent_index: kernel.agent_index,
            code_object: kernel.code_object.clone(),
            host,
            image: kernel.image.clone(),
            kernel_object: kernel.kernel_object,
            isa_kernel: kernel.isa_kernel.clone(),
        }))
    }

    pub fn destroy(&self, executable: u64) -> bool {
        let Some(entry) = self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&executable)
        else {
            return false;
        };
        let mut by_object = self.by_kernel_object.write().unwrap_or_else(|poison| poison.into_inner());
        for kernel in &entry.kernels {
            by_object.remove(&kernel.kernel_object());
        }
        KERNELS_GENERATION.fetch_add(1, Ordering::Release);
        self.symbols.lock().unwrap_or_else(|poison| poison.into_inner()).retain(|_, (owner, _)| *owner != executable);
        super::debugger::unloaded(&entry.code_objects.iter().map(|image| image.id).collect::<Vec<_>>());
        true
    }

    pub fn clear(&self) {
        let loaded: Vec<u64> = self
            .executables
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .values()
            .flat_map(|entry| entry.code_objects.iter().map(|image| image.id))
            .collect();
        super::debugger::unloaded(&loaded);
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.symbols.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.deserialized.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.by_kernel_object.write().unwrap_or_else(|poison| poison.into_inner()).clear();
        KERNELS_GENERATION.fetch_add(1, Ordering::Release);
    }
}
