//! Code-object readers, executables and symbols, and the registry of CPU kernels.
//!
//! Loading parses the real code object (target, metadata, kernel descriptors). Each kernel's
//! 64-byte descriptor is copied into memory the runtime owns; its address is the `kernel_object`
//! a dispatch packet carries, as on hardware. The processor maps that address back to the kernel
//! and its CPU implementation, found by the descriptor's symbol (`name.kd`). A kernel without one
//! still loads; dispatching it puts the queue in error with a message naming the kernel.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use aqueduct_abi::{KernelDescriptor, SoftKernel, SoftKernelFn};
use aqueduct_codeobject::{CodeObject, KernelMetadata};
use hashbrown::HashMap;

static CPU_KERNELS: RwLock<Option<HashMap<&'static str, SoftKernelFn>>> = RwLock::new(None);

/// Registers CPU implementations, keyed by descriptor symbol. Later registrations of the same
/// symbol replace earlier ones. Registration is process-wide and survives re-initialization.
pub fn register_kernels(kernels: &[SoftKernel]) {
    let mut registry = CPU_KERNELS.write().unwrap_or_else(|poison| poison.into_inner());
    let registry = registry.get_or_insert_with(HashMap::new);
    for kernel in kernels {
        registry.insert(kernel.symbol, kernel.function);
    }
}

fn cpu_kernel(symbol: &str) -> Option<SoftKernelFn> {
    CPU_KERNELS.read().unwrap_or_else(|poison| poison.into_inner()).as_ref()?.get(symbol).copied()
}

pub(crate) struct Reader {
    pub bytes: Vec<u8>,
    pub code_object: CodeObject,
}

pub(crate) struct LoadedKernel {
    pub symbol: String,
    pub metadata: KernelMetadata,
    pub agent_index: usize,
    pub cpu: Option<SoftKernelFn>,
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
        self.descriptor.kernel_code_properties & aqueduct_abi::kernel_descriptor::kernel_code_properties::USES_DYNAMIC_STACK != 0
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
    BadDescriptor(String),
}

impl Executables {
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn add_reader(&self, bytes: Vec<u8>, code_object: CodeObject) -> u64 {
        let id = self.next_id();
        self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, Arc::new(Reader { bytes, code_object }));
        id
    }

    pub fn create_executable(&self) -> u64 {
        let id = self.next_id();
        self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).insert(id, Executable::default());
        id
    }

    /// Loads every kernel of a reader's code object for one agent. All-or-nothing.
    pub fn load(&self, executable: u64, reader: u64, agent_index: usize, agent_isa: &str) -> Result<(), LoadFailure> {
        let reader = self.readers.lock().unwrap_or_else(|poison| poison.into_inner()).get(&reader).cloned();
        let reader = reader.ok_or(LoadFailure::UnknownReader)?;
        let mut executables = self.executables.lock().unwrap_or_else(|poison| poison.into_inner());
        let entry = executables.get_mut(&executable).ok_or(LoadFailure::UnknownExecutable)?;
        if entry.frozen {
            return Err(LoadFailure::Frozen);
        }
        let agent_target = aqueduct_codeobject::TargetId::parse(agent_isa)
            .map_err(|error| LoadFailure::Incompatible(format!("agent ISA {agent_isa}: {error}")))?;
        reader.code_object.target().runs_on(&agent_target).map_err(|error| LoadFailure::Incompatible(error.to_string()))?;
        let mut loaded = Vec::with_capacity(reader.code_object.kernels().len());
        for (index, metadata) in reader.code_object.kernels().iter().enumerate() {
            let bytes = reader.code_object.kernel_descriptor_bytes(&reader.bytes, index).ok_or_else(|| {
                LoadFailure::BadDescriptor(format!("kernel descriptor `{}` is not in the file", metadata.symbol))
            })?;
            let descriptor: KernelDescriptor = bytemuck::pod_read_unaligned(bytes);
            loaded.push(Arc::new(LoadedKernel {
                symbol: metadata.symbol.clone(),
                metadata: metadata.clone(),
                agent_index,
                cpu: cpu_kernel(&metadata.symbol),
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
        let kernel = self.by_kernel_object.read().unwrap_or_else(|poison| poison.into_inner()).get(&kernel_object).cloned()?;
        if kernel.cpu.is_some() {
            return Some(kernel);
        }
        // Registered after loading: resolve now (off the common path).
        Some(match cpu_kernel(&kernel.symbol) {
            Some(function) => Arc::new(LoadedKernel {
                symbol: kernel.symbol.clone(),
                metadata: kernel.metadata.clone(),
                agent_index: kernel.agent_index,
                cpu: Some(function),
                descriptor: kernel.descriptor.clone(),
            }),
            None => kernel,
        })
    }

    pub fn destroy(&self, executable: u64) -> bool {
        let Some(entry) = self.executables.lock().unwrap_or_else(|poison| poison.into_inner()).remove(&executable) else {
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
