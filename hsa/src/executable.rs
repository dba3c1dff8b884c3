//! Loading code objects through the HSA table, with the checks that make failures explicit.
//!
//! The code object is parsed and its target checked against the agent's ISA *before* anything
//! reaches the provider, so an incompatible object fails with both targets named instead of an
//! opaque status. Each kernel gets a [`DispatchDescriptor`]: everything a dispatch packet and its
//! kernargs need, recorded once at load.

use aqueduct_codeobject::{
    BundleError, CodeObject, CodeObjectError, Incompatibility, KernelArg, TargetError, TargetId, UnknownKernel,
};

use crate::sys::{hsa_agent_t, hsa_executable_t};
use crate::{Hsa, HsaApi, HsaError};

/// What a dispatch of one kernel needs, recorded once when the executable loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchDescriptor {
    pub name: String,
    pub symbol: String,
    /// The value for the dispatch packet's `kernel_object`.
    pub kernel_object: u64,
    pub kernarg_size: u32,
    pub kernarg_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub wavefront_size: u32,
    /// The workgroup size the kernel was compiled for, when it requires one.
    pub required_workgroup_size: Option<[u32; 3]>,
    /// The largest workgroup (x·y·z) the kernel supports.
    pub max_workgroup_size: u32,
    /// The kernel's arguments in kernarg order, hidden ones included.
    pub args: Vec<KernelArg>,
}

impl DispatchDescriptor {
    /// The workgroup size to use when the caller has no preference: the required size if the
    /// kernel has one, else one wavefront.
    pub fn default_workgroup_size(&self) -> [u32; 3] {
        self.required_workgroup_size.unwrap_or([self.wavefront_size.max(1), 1, 1])
    }
}

#[derive(Debug)]
pub enum ExecutableError {
    /// The bytes are not a usable code object.
    CodeObject(CodeObjectError),
    /// The agent's ISA name does not parse as a target ID.
    AgentIsa { isa: String, error: TargetError },
    /// The code object was built for a target the agent cannot run; names both.
    Incompatible(Incompatibility),
    /// The provider refused a step.
    Hsa(HsaError),
    /// The bytes are a fat binary (a clang offload bundle, or a host ELF's `.hip_fatbin`) that
    /// could not be read.
    Bundle(BundleError),
    /// A host ELF's `.hip_fatbin` holds this many bundles, not one: each is its own module.
    BundleCount(usize),
}

impl std::fmt::Display for ExecutableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CodeObject(error) => write!(f, "invalid code object: {error}"),
            Self::AgentIsa { isa, error } => write!(f, "agent ISA `{isa}` is not a target ID: {error}"),
            Self::Incompatible(error) => error.fmt(f),
            Self::Hsa(error) => error.fmt(f),
            Self::Bundle(error) => write!(f, "invalid fat binary: {error}"),
            Self::BundleCount(count) => {
                write!(f, "the host file's .hip_fatbin holds {count} bundles; load one bundle at a time")
            }
        }
    }
}

impl std::error::Error for ExecutableError {}

impl From<HsaError> for ExecutableError {
    fn from(error: HsaError) -> Self {
        Self::Hsa(error)
    }
}

/// Per-work-item stack given to a kernel with a dynamic call stack: its reported private
/// segment size is only the minimum (AMDGPUUsage, code object v5: "the runtime is expected to
/// adjust this if the amdhsa_uses_dynamic_stack bit is set"). 1024 bytes is HIP's default
/// (`stack_size_` in rocclr's `device.hpp`, applied in `rocvirtual.cpp`'s dispatch).
pub const DYNAMIC_STACK_BYTES: u32 = 1024;

/// The private segment size a dispatch of `symbol` must request.
pub fn private_segment_size(symbol: &crate::KernelSymbol) -> u32 {
    if symbol.dynamic_callstack {
        symbol.private_segment_size.max(DYNAMIC_STACK_BYTES)
    } else {
        symbol.private_segment_size
    }
}

/// A frozen executable on one agent. Destroyed on drop.
pub struct Executable {
    api: &'static HsaApi,
    handle: hsa_executable_t,
    agent: hsa_agent_t,
    target: TargetId,
    kernels: Vec<DispatchDescriptor>,
}

impl Executable {
    /// Parses `bytes`, checks its target against the agent's first ISA, then loads and freezes it
    /// through the HSA table and resolves every kernel symbol.
    pub fn load(hsa: &Hsa, agent: hsa_agent_t, bytes: &[u8]) -> Result<Self, ExecutableError> {
        let code_object = CodeObject::parse(bytes).map_err(ExecutableError::CodeObject)?;
        let isa = hsa.isa_names(agent)?.into_iter().next().unwrap_or_default();
        let agent_target =
            TargetId::parse(&isa).map_err(|error| ExecutableError::AgentIsa { isa: isa.clone(), error })?;
        code_object.target().runs_on(&agent_target).map_err(ExecutableError::Incompatible)?;
        let handle = hsa.load_executable(agent, bytes)?;
        let mut executable = Self { api: hsa.api(), handle, agent, target: *code_object.target(), kernels: Vec::new() };
        for kernel in code_object.kernels() {
            let symbol = hsa.kernel_symbol(handle, agent, &kernel.symbol)?;
            executable.kernels.push(DispatchDescriptor {
                name: kernel.name.clone(),
                symbol: kernel.symbol.clone(),
                kernel_object: symbol.kernel_object,
                kernarg_size: symbol.kernarg_segment_size,
                // ROCr reports 16 for every code-object v3+ symbol, whatever the kernel needs;
                // the metadata's `.kernarg_segment_align` is the kernel's real requirement.
                kernarg_alignment: kernel.kernarg_segment_align,
                group_segment_size: symbol.group_segment_size,
                private_segment_size: private_segment_size(&symbol),
                wavefront_size: kernel.wavefront_size,
                required_workgroup_size: kernel.reqd_workgroup_size,
                max_workgroup_size: kernel.max_flat_workgroup_size,
                args: kernel.args.clone(),
            });
        }
        Ok(executable)
    }

    /// The kernel named `name` (or its `.kd` symbol); the error lists the kernels that exist.
    pub fn kernel(&self, name: &str) -> Result<&DispatchDescriptor, UnknownKernel> {
        self.kernels.iter().find(|kernel| kernel.name == name || kernel.symbol == name).ok_or_else(|| UnknownKernel {
            requested: name.to_string(),
            available: self.kernels.iter().map(|kernel| kernel.name.clone()).collect(),
        })
    }

    pub fn kernels(&self) -> &[DispatchDescriptor] {
        &self.kernels
    }

    pub fn target(&self) -> &TargetId {
        &self.target
    }

    pub fn agent(&self) -> hsa_agent_t {
        self.agent
    }

    pub fn handle(&self) -> hsa_executable_t {
        self.handle
    }

    /// Gives up the executable without destroying it: the caller destroys the handle
    /// (`hsa_executable_destroy`) once nothing can run its kernels any more.
    pub fn into_handle(mut self) -> hsa_executable_t {
        let handle = self.handle;
        drop(std::mem::take(&mut self.kernels));
        // Everything left is plain data (the table reference, handles, a `Copy` target), so
        // skipping the destructor leaks nothing.
        std::mem::forget(self);
        handle
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        // SAFETY: this executable owns the handle and destroys it once.
        unsafe { (self.api.hsa_executable_destroy)(self.handle) };
    }
}
