//! What the profile knows of loaded executables: each one's metadata record, and which kernel
//! a kernel object is, so a dispatch record can name its kernel and executable.
//!
//! Every executable the device loads is registered (the device library on each agent too), so
//! a capture that begins later still names them. Registering is on the load path, never on a
//! submission's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use aqueduct_codeobject::CodeObject;
use aqueduct_profile::{CodeObjectHash, ExecutableMetadata, KernelMetadata};

static NEXT_EXECUTABLE_ID: AtomicU64 = AtomicU64::new(1);

/// A kernel as dispatch records name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KernelName {
    pub executable: u64,
    pub symbol: Arc<str>,
}

#[derive(Default)]
pub(crate) struct ExecutableRegistry {
    inner: Mutex<RegistryInner>,
}

#[derive(Default)]
struct RegistryInner {
    executables: Vec<ExecutableMetadata>,
    kernels: HashMap<u64, KernelName>,
}

impl ExecutableRegistry {
    /// Registers a loaded code object and its kernels' kernel objects (on every agent); returns
    /// the metadata record. A kernel object the provider hands out again (after an unload) names
    /// the newest executable.
    pub fn register<'a>(
        &self,
        code_object: &[u8],
        parsed: &CodeObject,
        kernel_objects: impl IntoIterator<Item = (&'a str, u64)>,
    ) -> ExecutableMetadata {
        let executable = NEXT_EXECUTABLE_ID.fetch_add(1, Ordering::Relaxed);
        let metadata = ExecutableMetadata {
            executable,
            code_object_hash: CodeObjectHash::of(code_object),
            target: parsed.target_string().to_string(),
            code_object_version: parsed.abi_version().code_object_version(),
            kernels: parsed
                .kernels()
                .iter()
                .map(|kernel| KernelMetadata {
                    symbol: kernel.name.clone(),
                    kernarg_size: kernel.kernarg_segment_size,
                    group_segment_size: kernel.group_segment_fixed_size,
                    private_segment_size: kernel.private_segment_fixed_size,
                    required_workgroup_size: kernel.reqd_workgroup_size,
                    workgroup_size_hint: kernel.workgroup_size_hint,
                })
                .collect(),
        };
        let mut inner = self.inner.lock().unwrap_or_else(|poison| poison.into_inner());
        for (name, kernel_object) in kernel_objects {
            inner.kernels.insert(kernel_object, KernelName { executable, symbol: Arc::from(name) });
        }
        inner.executables.push(metadata.clone());
        metadata
    }

    /// Every executable registered so far.
    pub fn all(&self) -> Vec<ExecutableMetadata> {
        self.inner.lock().unwrap_or_else(|poison| poison.into_inner()).executables.clone()
    }

    /// The kernel a kernel object belongs to.
    pub fn kernel(&self, kernel_object: u64) -> Option<KernelName> {
        self.inner.lock().unwrap_or_else(|poison| poison.into_inner()).kernels.get(&kernel_object).cloned()
    }
}
