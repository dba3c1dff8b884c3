//! Executables loaded on every agent of the device, and kernels with their HAL kernarg layout
//! worked out once from the code object's metadata.

use std::sync::Arc;

use aqueduct_abi::HostBuild;
use aqueduct_codeobject::{
    BUNDLE_MAGIC, BundleError, COMPRESSED_BUNDLE_MAGIC, CodeObject, CodeObjectId, KernelArg, TargetId, UnknownKernel,
    ValueKind, choose_target, parse_bundle, parse_bundles,
};
use aqueduct_components::device_entities::ExecutableEntity;
use aqueduct_components::submission::DispatchTemplate;
use aqueduct_hsa::{DispatchDescriptor, Executable as HsaExecutable, ExecutableError, ProviderKind};
use bevy_ecs::entity::Entity;

use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};

/// How a kernel's kernarg segment follows the HAL layout: binding pointers, then 32-bit
/// constants, then the implicit block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HalLayout {
    /// Leading 8-byte buffer pointers.
    pub bindings: usize,
    /// 4-byte constants after them.
    pub constants: usize,
    /// Where the implicit arguments start, when the kernel reads any.
    pub implicit_offset: Option<u32>,
}

impl HalLayout {
    /// Derives the layout from the metadata's argument list, or says why it does not fit.
    pub fn from_args(args: &[KernelArg]) -> Result<Self, String> {
        let explicit: Vec<&KernelArg> = args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
        let bindings = explicit.iter().take_while(|arg| arg.value_kind == ValueKind::GlobalBuffer).count();
        for (index, arg) in explicit.iter().enumerate() {
            let (expected_offset, expected_size, kind) = if index < bindings {
                (8 * index as u32, 8, "binding pointer")
            } else {
                (8 * bindings as u32 + 4 * (index - bindings) as u32, 4, "32-bit constant")
            };
            if index >= bindings && arg.value_kind != ValueKind::ByValue {
                return Err(format!(
                    "argument {index} is {} after the binding pointers; only 32-bit constants may follow them",
                    arg.value_kind.as_str()
                ));
            }
            if arg.offset != expected_offset || arg.size != expected_size {
                return Err(format!(
                    "argument {index} ({kind}) is {} bytes at offset {}, the HAL layout puts {expected_size} bytes at {expected_offset}",
                    arg.size, arg.offset
                ));
            }
        }
        let implicit_offset = args.iter().filter(|arg| arg.value_kind.is_hidden()).map(|arg| arg.offset).min();
        Ok(Self { bindings, constants: explicit.len() - bindings, implicit_offset })
    }
}

/// One kernel as a dispatch needs it, on each agent of the device.
pub(crate) struct KernelInfo {
    pub name: String,
    /// Per agent, in the device's agent order.
    pub kernel_objects: Vec<u64>,
    pub kernarg_size: u32,
    /// End of the last explicit (non-hidden) argument.
    pub explicit_size: u32,
    pub kernarg_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub required_workgroup_size: Option<[u32; 3]>,
    pub max_workgroup_size: u32,
    pub default_workgroup_size: [u32; 3],
    pub layout: Result<HalLayout, String>,
    /// The explicit arguments' source names (`.name`), where the metadata gives them.
    pub argument_names: Vec<Option<String>>,
}

pub(crate) struct ExecutableInner {
    pub device: Arc<DeviceShared>,
    pub kernels: Vec<KernelInfo>,
    /// The device World's record, with the loaded handles to destroy once released.
    entity: Entity,
    /// Its id in the replay capture (0: not captured).
    pub replay_id: crate::replay_capture::ReplayId,
}

impl Drop for ExecutableInner {
    fn drop(&mut self) {
        // Queued packets may still name its kernel objects: destroyed once those rows settle.
        self.device.defer_release(self.entity);
    }
}

/// A code object loaded and frozen on every agent of the device.
#[derive(Clone)]
pub struct Executable(pub(crate) Arc<ExecutableInner>);

/// A kernel of an executable; it keeps the executable alive.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) executable: Arc<ExecutableInner>,
    pub(crate) index: usize,
}

impl Executable {
    pub(crate) fn load(device: &Arc<DeviceShared>, code_object: &[u8]) -> EngineResult<Self> {
        device.release_settled();
        // Parsed once here for the host-build check and the profile's names; the provider's
        // load parses it again, as ROCr would.
        let parsed = parse(code_object)?;
        if device.hsa.kind() == ProviderKind::Soft {
            check_registered_host_builds(code_object, &parsed)?;
        }
        let loaded = device
            .agents
            .iter()
            .map(|agent| HsaExecutable::load(&device.hsa, agent.info.agent, code_object))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(first) = loaded.first() else {
            return Err(EngineError::NoDevice { reason: "the device has no agents".into() });
        };
        let kernels = first
            .kernels()
            .iter()
            .map(|descriptor| kernel_info(descriptor, &loaded))
            .collect::<EngineResult<Vec<_>>>()?;
        register_with_profile(device, code_object, &parsed, &kernels)?;
        let handles = loaded.into_iter().map(|executable| executable.into_handle().handle).collect();
        let entity = device.world().spawn(ExecutableEntity { handles }).id();
        Ok(Self(Arc::new(ExecutableInner { device: device.clone(), kernels, entity, replay_id: Default::default() })))
    }

    /// The kernel named `name` (or its `.kd` symbol); the error lists those that exist.
    pub fn kernel(&self, name: &str) -> EngineResult<Kernel> {
        self.0
            .kernels
            .iter()
            .position(|kernel| kernel.name == name || format!("{}.kd", kernel.name) == name)
            .map(|index| Kernel { executable: self.0.clone(), index })
            .ok_or_else(|| {
                EngineError::UnknownKernel(aqueduct_codeobject::UnknownKernel {
                    requested: name.to_string(),
                    available: self.0.kernels.iter().map(|kernel| kernel.name.clone()).collect(),
                })
            })
    }

    /// The names of the kernels the code object holds.
    pub fn kernel_names(&self) -> impl Iterator<Item = &str> {
        self.0.kernels.iter().map(|kernel| kernel.name.as_str())
    }
}

/// The code object of `code_objects` whose target runs on every agent ISA of `agents` with the
/// best fit, the first of equals ([`aqueduct_codeobject::choose_target`]: the agent's processor
/// before its generic family, named features before "any"), as HIP picks a fat binary's entry
/// ([`Device::select_code_object`](crate::Device::select_code_object)). Pure.
pub(crate) fn select_code_object<'a>(agents: &[String], code_objects: &[&'a [u8]]) -> EngineResult<&'a [u8]> {
    let targets = agents
        .iter()
        .map(|isa| TargetId::parse(isa).map_err(|error| ExecutableError::AgentIsa { isa: isa.clone(), error }.into()))
        .collect::<EngineResult<Vec<_>>>()?;
    let parsed: Vec<Result<TargetId, String>> = code_objects
        .iter()
        .map(|bytes| CodeObject::parse(bytes).map(|parsed| *parsed.target()).map_err(|error| error.to_string()))
        .collect();
    let candidates: Vec<Option<TargetId>> = parsed.iter().map(|target| target.as_ref().ok().copied()).collect();
    match choose_target(&candidates, &targets) {
        Ok(choice) => Ok(code_objects[choice.index]),
        // Nothing ran: one rejection per candidate, in order (`choose_target`'s contract).
        Err(rejections) => Err(EngineError::NoCodeObjectForAgents {
            agents: agents.join(", "),
            rejected: parsed
                .iter()
                .zip(&rejections)
                .map(|(target, rejection)| match (target, rejection) {
                    (Err(error), _) => error.clone(),
                    (Ok(_), rejection) => rejection.to_string(),
                })
                .collect(),
        }),
    }
}

/// The code object in `bytes` to load on `agents`: `bytes` itself when it is a code object; the
/// best entry ([`select_code_object`]) when it is a clang offload bundle, or a host ELF whose
/// `.hip_fatbin` section holds one bundle (HIP registers each bundle of a host file as its own
/// module, so a file with several is refused, naming their count). Bytes that are neither, an
/// unreadable ELF or one without `.hip_fatbin` among them, are returned as they are, for the
/// code-object parser to refuse by name. Pure.
pub(crate) fn code_object_for_agents<'a>(agents: &[String], bytes: &'a [u8]) -> EngineResult<&'a [u8]> {
    let bundle_error = |error| EngineError::Executable(ExecutableError::Bundle(error));
    let bundle = if bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        parse_bundle(bytes).map_err(bundle_error)?
    } else if bytes.starts_with(b"\x7fELF") {
        match parse_bundles(bytes) {
            Ok(mut bundles) if bundles.len() == 1 => bundles.remove(0),
            Ok(bundles) => return Err(EngineError::Executable(ExecutableError::BundleCount(bundles.len()))),
            // An unreadable ELF, or one without device code (a code object itself, most often):
            // the code-object parser loads it or names what it is not.
            Err(BundleError::MalformedHostElf(_) | BundleError::NoFatbinSection) => return Ok(bytes),
            Err(error) => return Err(bundle_error(error)),
        }
    } else {
        return Ok(bytes);
    };
    let entries: Vec<&[u8]> = bundle.entries.iter().filter_map(|entry| entry.code_object).collect();
    select_code_object(agents, &entries)
}

fn parse(code_object: &[u8]) -> EngineResult<CodeObject> {
    CodeObject::parse(code_object).map_err(|error| EngineError::Executable(ExecutableError::CodeObject(error)))
}

/// Refuses host builds that could never run a kernel of `code_object`: one registered for a
/// descriptor symbol the code object does not define (it would silently never be found), or one
/// whose declared argument layout disagrees with the metadata (it would read the wrong bytes).
/// `Device::register_host_builds` runs it before handing them to any provider.
pub(crate) fn check_host_builds(code_object: &[u8], kernels: &[HostBuild]) -> EngineResult<()> {
    let parsed = parse(code_object)?;
    for kernel in kernels {
        let Some(metadata) = parsed.kernels().iter().find(|metadata| metadata.symbol == kernel.symbol) else {
            return Err(EngineError::UnknownKernel(UnknownKernel {
                requested: kernel.symbol.to_string(),
                available: parsed.kernels().iter().map(|metadata| metadata.symbol.clone()).collect(),
            }));
        };
        aqueduct_soft_hsa::check_host_build(kernel, metadata)?;
    }
    Ok(())
}

/// On the embedded soft runtime, compares the host build registered for each kernel of
/// `code_object` (however it was registered, C or Rust, through the engine or below it) with the
/// metadata before loading, so a mismatch fails the load instead of faulting the first dispatch.
fn check_registered_host_builds(code_object: &[u8], parsed: &CodeObject) -> EngineResult<()> {
    let id = CodeObjectId::of(code_object);
    for metadata in parsed.kernels() {
        if let Some(kernel) = aqueduct_soft_hsa::registered_kernel(id, &metadata.symbol) {
            aqueduct_soft_hsa::check_host_build(&kernel, metadata)?;
        }
    }
    Ok(())
}

/// Registers a loaded executable for the profile's names, and records it in a capture that asks
/// for executable metadata.
fn register_with_profile(
    device: &DeviceShared,
    code_object: &[u8],
    parsed: &CodeObject,
    kernels: &[KernelInfo],
) -> EngineResult<()> {
    let objects = kernels
        .iter()
        .flat_map(|kernel| kernel.kernel_objects.iter().map(move |&object| (kernel.name.as_str(), object)));
    let metadata = device.executables.register(code_object, parsed, objects);
    let session = device.profile.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(session) = session.as_ref()
        && session.config.modes.contains(crate::profile::ProfileModes::EXECUTABLE_METADATA)
    {
        session.push_device(aqueduct_profile::Record::Executable(metadata));
    }
    Ok(())
}

/// The kernel `descriptor` (from the first agent's load) on every agent. Every agent loaded the
/// same code object, so a kernel missing from one is an error, never a kernel object 0.
fn kernel_info(descriptor: &DispatchDescriptor, loaded: &[HsaExecutable]) -> EngineResult<KernelInfo> {
    let kernel_objects = loaded
        .iter()
        .map(|executable| executable.kernel(&descriptor.name).map(|kernel| kernel.kernel_object))
        .collect::<Result<_, _>>()?;
    let layout = HalLayout::from_args(&descriptor.args).and_then(|layout| {
        // The HAL writer cuts what passes the segment's end; metadata whose arguments lie outside
        // it (or overlap the implicit block) is no HAL kernel, so nothing is ever cut silently.
        let explicit_end = 8 * layout.bindings as u64 + 4 * layout.constants as u64;
        let implicit_start = layout.implicit_offset.map_or(explicit_end, u64::from);
        if explicit_end > implicit_start || implicit_start.max(explicit_end) > u64::from(descriptor.kernarg_size) {
            return Err(format!(
                "explicit arguments end at {explicit_end}, implicit ones start at {implicit_start}, \
                 the segment is {} bytes",
                descriptor.kernarg_size
            ));
        }
        Ok(layout)
    });
    Ok(KernelInfo {
        name: descriptor.name.clone(),
        kernel_objects,
        kernarg_size: descriptor.kernarg_size,
        explicit_size: descriptor
            .args
            .iter()
            .filter(|arg| !arg.value_kind.is_hidden())
            .map(|arg| arg.offset + arg.size)
            .max()
            .unwrap_or(0),
        kernarg_alignment: descriptor.kernarg_alignment.max(16),
        group_segment_size: descriptor.group_segment_size,
        private_segment_size: descriptor.private_segment_size,
        required_workgroup_size: descriptor.required_workgroup_size,
        max_workgroup_size: descriptor.max_workgroup_size,
        default_workgroup_size: descriptor.default_workgroup_size(),
        layout,
        argument_names: descriptor
            .args
            .iter()
            .filter(|arg| !arg.value_kind.is_hidden())
            .map(|arg| arg.name.clone())
            .collect(),
    })
}

impl KernelInfo {
    /// The dispatch packet fields for `agent` (an index into the device's agents), after checking
    /// the grid and workgroup. Every dispatch says [`aqueduct_abi::DISPATCH_DIMENSIONS`].
    #[inline]
    pub fn template(
        &self,
        agent: usize,
        grid: [u32; 3],
        workgroup: Option<[u16; 3]>,
    ) -> EngineResult<DispatchTemplate> {
        let info = self;
        let workgroup = match workgroup {
            Some(workgroup) => workgroup,
            None => {
                let default = info.default_workgroup_size;
                [default[0].min(1024) as u16, default[1].min(1024) as u16, default[2].min(1024) as u16]
            }
        };
        let invalid = |reason| Err(EngineError::InvalidGrid { grid, workgroup, reason });
        if grid.contains(&0) {
            return invalid("every grid dimension must be at least 1");
        }
        if workgroup.contains(&0) {
            return invalid("every workgroup dimension must be at least 1");
        }
        // Multiplied in u128: three u32 factors can overflow u64 (a panic in debug builds, and a
        // wrapped product that passes the check in release builds).
        if grid.iter().map(|&size| u128::from(size)).product::<u128>() > u128::from(u32::MAX) {
            return invalid("more than 2^32 - 1 work-items in total");
        }
        // Multiplied in u64: three u16 factors can overflow u32 (e.g. 4096 × 4096 × 256 wraps to 0).
        let threads = workgroup.iter().map(|&size| u64::from(size)).product::<u64>();
        let limit = if info.max_workgroup_size == 0 {
            MAX_WORKGROUP_SIZE
        } else {
            info.max_workgroup_size.min(MAX_WORKGROUP_SIZE)
        };
        if threads > u64::from(limit) {
            return invalid("the workgroup exceeds the kernel's maximum size");
        }
        if let Some(required) = info.required_workgroup_size
            && required != [u32::from(workgroup[0]), u32::from(workgroup[1]), u32::from(workgroup[2])]
        {
            return invalid("the kernel requires a different workgroup size");
        }
        let kernel_object = info
            .kernel_objects
            .get(agent)
            .copied()
            .filter(|&object| object != 0)
            .ok_or_else(|| EngineError::NoKernelObject { kernel: info.name.clone(), agent })?;
        Ok(DispatchTemplate {
            kernel_object,
            grid,
            workgroup,
            dimensions: aqueduct_abi::DISPATCH_DIMENSIONS,
            group_segment_size: info.group_segment_size,
            private_segment_size: info.private_segment_size,
        })
    }
}

/// The workgroup-size limit of every AMD GPU.
const MAX_WORKGROUP_SIZE: u32 = 1024;

impl Kernel {
    pub(crate) fn info(&self) -> &KernelInfo {
        &self.executable.kernels[self.index]
    }

    /// The kernel's symbol name.
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The HAL layout, or why the kernel does not follow it (use a raw-kernarg dispatch then).
    pub fn hal_layout(&self) -> Result<&HalLayout, &str> {
        self.info().layout.as_ref().map_err(String::as_str)
    }

    /// The size of its kernarg segment, implicit arguments included.
    pub fn kernarg_size(&self) -> u32 {
        self.info().kernarg_size
    }

    /// The workgroup size used when a dispatch does not give one.
    pub fn default_workgroup_size(&self) -> [u32; 3] {
        self.info().default_workgroup_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(kernel_objects: Vec<u64>) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            kernel_objects,
            kernarg_size: 16,
            explicit_size: 16,
            kernarg_alignment: 16,
            group_segment_size: 0,
            private_segment_size: 0,
            required_workgroup_size: None,
            max_workgroup_size: 1024,
            default_workgroup_size: [32, 1, 1],
            layout: Ok(HalLayout { bindings: 1, constants: 2, implicit_offset: None }),
            argument_names: Vec::new(),
        }
    }

    /// The first code object that runs on every agent wins; one that runs on only some agents,
    /// bytes that are no code object, and a bad agent ISA are passed over or refused by name.
    #[test]
    fn select_code_object_takes_the_first_that_runs_on_every_agent() {
        let library = |target| aqueduct_builtins::DeviceLibrary::code_object(target).expect("embedded");
        let (gfx11, gfx10_3) = (library("gfx11-generic"), library("gfx10-3-generic"));
        let agents = |isas: &[&str]| isas.iter().map(|isa| format!("amdgcn-amd-amdhsa--{isa}")).collect::<Vec<_>>();
        let offered: [&[u8]; 3] = [b"not a code object", gfx11, gfx10_3];
        assert_eq!(select_code_object(&agents(&["gfx1100"]), &offered).unwrap(), gfx11);
        assert_eq!(select_code_object(&agents(&["gfx1030"]), &offered).unwrap(), gfx10_3);
        match select_code_object(&agents(&["gfx1100", "gfx1030"]), &offered) {
            Err(EngineError::NoCodeObjectForAgents { agents, rejected }) => {
                assert!(agents.contains("gfx1100") && agents.contains("gfx1030"), "{agents}");
                assert_eq!(rejected.len(), 3, "{rejected:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            select_code_object(&agents(&["gfx1100"]), &[]),
            Err(EngineError::NoCodeObjectForAgents { rejected, .. }) if rejected.is_empty()
        ));
        assert!(matches!(
            select_code_object(&["gfx".to_owned()], &offered),
            Err(EngineError::Executable(ExecutableError::AgentIsa { .. }))
        ));
    }

    #[test]
    fn a_template_never_names_kernel_object_0() {
        let kernel = info(vec![0x1000, 0]);
        let template = kernel.template(0, [64, 1, 1], None).unwrap();
        assert_eq!(template.kernel_object, 0x1000);
        assert_eq!(template.dimensions, aqueduct_abi::DISPATCH_DIMENSIONS);
        // A provider that reported 0, and an agent index past the loads: typed errors.
        for agent in [1, 2] {
            match kernel.template(agent, [64, 1, 1], None) {
                Err(EngineError::NoKernelObject { kernel, agent: at }) => {
                    assert_eq!((kernel.as_str(), at), ("k", agent))
                }
                other => panic!("agent {agent}: {other:?}"),
            }
        }
    }
}
