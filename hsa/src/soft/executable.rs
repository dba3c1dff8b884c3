//! Code-object readers, executables and symbols, and the registry of host kernels.
//!
//! Loading parses the real code object (target, metadata, kernel descriptors). Each kernel's
//! 64-byte descriptor is copied into memory the runtime owns; its address is the `kernel_object`
//! a dispatch packet carries, as on hardware. The processor maps that address back to the kernel
//! and its host build, found by the code object's identity (a content hash of its bytes) and the
//! descriptor's symbol (`name.kd`): two code objects that both define `saxpy.kd` never share an
//! implementation by accident. A kernel without a host build still loads, with its metadata;
//! dispatching it puts the queue in error with a message naming the kernel and the code object.
//!
//! A host build that declares its argument layout (every C kernel built with the work-item shim
//! does, and every Rust one made with `SoftKernel::of`) is compared with the metadata's explicit
//! arguments when it is bound ([`check_host_build`]); a mismatch leaves the kernel without a host
//! build and the dispatch error says what differs. The engine runs the same check earlier, when
//! a host build is registered and when a code object loads, and returns it as an error.

use core::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use aqueduct_abi::{HostArg, KernelDescriptor, SoftKernel, SoftKernelFn};
use aqueduct_codeobject::{ArgLayoutMismatch, ArgPlacement, CodeObject, CodeObjectId, KernelMetadata, ValueKind};
use hashbrown::HashMap;

/// Code object → descriptor symbol → host kernel.
type Registry = HashMap<CodeObjectId, HashMap<&'static str, SoftKernel>>;

static HOST_KERNELS: RwLock<Option<Registry>> = RwLock::new(None);

/// Registers host implementations of kernels of the code object `code_object` (its
/// [`CodeObjectId::of`] its bytes), keyed by descriptor symbol. This is the one entry point for
/// every CPU kernel: the device library's C host builds (once per embedded code object), the demo
/// and bench kernels, and tests' Rust kernels.
///
/// A later registration of the same (code object, symbol) replaces the earlier one; kernels
/// loaded already keep what they were bound to unless they had none. Registration is
/// process-wide and survives re-initialization.
pub fn register_kernels(code_object: CodeObjectId, kernels: &[SoftKernel]) {
    let mut registry = HOST_KERNELS.write().unwrap_or_else(|poison| poison.into_inner());
    let registry = registry.get_or_insert_with(HashMap::new);
    let symbols = registry.entry(code_object).or_default();
    for kernel in kernels {
        symbols.insert(kernel.symbol, *kernel);
    }
}

/// The host kernel registered for (code object, descriptor symbol), if any: what a load will
/// bind, for callers that check it first (the engine compares it with the metadata when it
/// loads a code object, so a mismatch is an error there rather than a fault at dispatch).
pub fn registered_kernel(code_object: CodeObjectId, symbol: &str) -> Option<SoftKernel> {
    let registry = HOST_KERNELS.read().unwrap_or_else(|poison| poison.into_inner());
    registry.as_ref()?.get(&code_object)?.get(symbol).copied()
}

/// The steady counter host kernels read (`aq_steady_counter()`, `__builtin_readsteadycounter` on a
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

/// A host kernel bound to one loaded kernel, with what the runner needs per dispatch.
#[derive(Clone, Debug)]
pub(crate) struct HostBinding {
    pub function: SoftKernelFn,
    /// (kernarg offset, argument name) of every pointer argument that must not be null.
    pub required_pointers: Vec<(usize, String)>,
    /// Offset of the hidden arguments in the kernarg segment, if the kernel has any.
    pub implicit_offset: Option<usize>,
    /// The kernel has explicit arguments, so its kernarg segment must not be null.
    pub reads_kernargs: bool,
}

/// Whether a loaded kernel can run on the soft runtime.
#[derive(Clone, Debug)]
pub(crate) enum HostBuild {
    Ready(HostBinding),
    /// Nothing registered for (code object, symbol).
    Missing,
    /// Registered, but its argument layout disagrees with the metadata: why.
    Mismatch(String),
}

impl HostBuild {
    fn resolve(code_object: CodeObjectId, metadata: &KernelMetadata) -> HostBuild {
        let Some(kernel) = registered_kernel(code_object, &metadata.symbol) else {
            return HostBuild::Missing;
        };
        bind(kernel, metadata).map_or_else(HostBuild::Mismatch, HostBuild::Ready)
    }
}

/// Compares a host build's declared argument layout with the metadata's explicit arguments, as
/// binding does when a code object loads (the engine calls it when a host build is registered,
/// so a mismatch fails there, loudly). A host build that declares no layout (`args: None`) is
/// not compared.
pub fn check_host_build(kernel: &SoftKernel, metadata: &KernelMetadata) -> Result<(), ArgLayoutMismatch> {
    let Some(args) = kernel.args else {
        return Ok(());
    };
    metadata.check_declared_args(
        args.iter()
            .map(|arg| (ArgPlacement { offset: arg.offset, size: arg.size, pointer: arg.is_pointer() }, arg.name())),
    )
}

/// Checks a host kernel's declared layout against the metadata and records the pointer arguments
/// to check before each dispatch.
fn bind(kernel: SoftKernel, metadata: &KernelMetadata) -> Result<HostBinding, String> {
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
}

pub(crate) struct LoadedKernel {
    pub symbol: String,
    pub metadata: KernelMetadata,
    pub agent_index: usize,
    pub code_object: CodeObjectLabel,
    pub host: HostBuild,
    /// The memory `kernel_object` points at.
    descriptor: Box<KernelDescriptor>,
}

impl LoadedKernel {
    pub fn kernel_object(&self) -> u64 {
        &*self.descriptor as *const KernelDescriptor as u64
    }

    /// The descriptor's `USES_DYNAMIC_STACK` bit, as ROCr reads it for
    /// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK`.
    pub fn uses_dynamic_stack(&self) -> bool {
        self.descriptor.kernel_code_properties
            & aqueduct_abi::kernel_descriptor::kernel_code_properties::USES_DYNAMIC_STACK
            != 0
    }
}

#[derive(Default)]
pub(crate) struct Executable {
    pub frozen: bool,
    pub kernels: Vec<Arc<LoadedKernel>>,
}

#[derive(Default)]
pub(crate) struct Executables {
    next_id: AtomicU64,
    pub readers: Mutex<HashMap<u64, Arc<Reader>>>,
    pub executables: Mutex<HashMap<u64, Executable>>,
    /// Symbol id → (executable id, kernel).
    pub symbols: Mutex<HashMap<u64, (u64, Arc<LoadedKernel>)>>,
    by_kernel_object: RwLock<HashMap<u64, Arc<LoadedKernel>>>,
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

    pub fn add_reader(&self, bytes: Vec<u8>, code_object: CodeObject) -> u64 {
        let id = self.next_id();
        let reader = Reader { id: CodeObjectId::of(&bytes), bytes, code_object };
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, Arc::new(reader));
        id
    }

    pub fn create_executable(&self) -> u64 {
        let id = self.next_id();
        self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, Executable::default());
        id
    }

    /// Loads every kernel of a reader's code object for one agent. All-or-nothing. Like ROCr's
    /// loader, it refuses a code-object version outside `versions` (`SoftConfig`).
    pub fn load(
        &self,
        executable: u64,
        reader: u64,
        agent_index: usize,
        agent_isa: &str,
        versions: &RangeInclusive<u32>,
    ) -> Result<(), LoadFailure> {
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
        let mut loaded = Vec::with_capacity(reader.code_object.kernels().len());
        for (index, metadata) in reader.code_object.kernels().iter().enumerate() {
            let bytes = reader.code_object.kernel_descriptor_bytes(&reader.bytes, index).ok_or_else(|| {
                LoadFailure::InvalidCodeObject(format!("kernel descriptor `{}` is not in the file", metadata.symbol))
            })?;
            let descriptor: KernelDescriptor = bytemuck::pod_read_unaligned(bytes);
            loaded.push(Arc::new(LoadedKernel {
                symbol: metadata.symbol.clone(),
                metadata: metadata.clone(),
                agent_index,
                code_object: label.clone(),
                host: HostBuild::resolve(reader.id, metadata),
                descriptor: Box::new(descriptor),
            }));
        }
        let mut by_object = self.by_kernel_object.write().unwrap_or_else(|poison| poison.into_inner());
        for kernel in &loaded {
            by_object.insert(kernel.kernel_object(), kernel.clone());
        }
        entry.kernels.extend(loaded);
        Ok(())
    }

    /// The kernel behind a dispatch packet's `kernel_object`.
    pub fn kernel(&self, kernel_object: u64) -> Option<Arc<LoadedKernel>> {
        let kernel =
            self.by_kernel_object.read().unwrap_or_else(|poison| poison.into_inner()).get(&kernel_object).cloned()?;
        if matches!(kernel.host, HostBuild::Ready(_)) {
            return Some(kernel);
        }
        // Registered after loading: resolve now (off the common path).
        let host = HostBuild::resolve(kernel.code_object.id, &kernel.metadata);
        if matches!(host, HostBuild::Missing) {
            return Some(kernel);
        }
        Some(Arc::new(LoadedKernel {
            symbol: kernel.symbol.clone(),
            metadata: kernel.metadata.clone(),
            agent_index: kernel.agent_index,
            code_object: kernel.code_object.clone(),
            host,
            descriptor: kernel.descriptor.clone(),
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
        self.symbols.lock().unwrap_or_else(|poison| poison.into_inner()).retain(|_, (owner, _)| *owner != executable);
        true
    }

    pub fn clear(&self) {
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.symbols.lock().unwrap_or_else(|poison| poison.into_inner()).clear();
        self.by_kernel_object.write().unwrap_or_else(|poison| poison.into_inner()).clear();
    }
}
