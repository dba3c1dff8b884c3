//! HAL dispatches: the [`Dispatch`] description queues and command buffers both take, and the one
//! validation both run before anything is enqueued or recorded.
//!
//! [`validate_dispatch`] checks what does not depend on where the dispatch goes (the kernel's
//! device, its HAL layout, the binding and constant counts, the grid and workgroup) and returns
//! the packet fields and the layout facts. Each caller then checks its own buffer references
//! (bindings for a queue, bindings or binding-table slots for a command buffer) and writes the
//! kernarg segment with `aqueduct_abi::write_hal_kernargs`, filling the implicit block from
//! [`ValidatedDispatch::implicit`], so a direct dispatch and a replay give a kernel the same bytes.

use aqueduct_abi::{DispatchTemplate, ImplicitKernargs};

use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::executable::{HalLayout, Kernel, KernelInfo};
use crate::memory::Binding;

/// A kernel dispatch in the HAL layout: binding pointers, then 32-bit constants. Queues take
/// [`Binding`]s; command buffers take [`crate::BufferRef`]s (a binding or a binding-table slot).
#[derive(Clone, Copy, Debug)]
pub struct Dispatch<'a, B = Binding<'a>> {
    /// The grid, in work-items.
    pub grid: [u32; 3],
    /// `None` uses the kernel's required size, or one wavefront.
    pub workgroup: Option<[u16; 3]>,
    /// The binding pointers, in argument order.
    pub bindings: &'a [B],
    /// The 32-bit constants after them.
    pub constants: &'a [u32],
}

impl<'a, B> Dispatch<'a, B> {
    /// A dispatch of `grid` work-items, with no bindings or constants yet.
    pub fn grid(grid: [u32; 3]) -> Self {
        Self { grid, workgroup: None, bindings: &[], constants: &[] }
    }

    /// With this workgroup size.
    pub fn workgroup(mut self, workgroup: [u16; 3]) -> Self {
        self.workgroup = Some(workgroup);
        self
    }

    /// With these binding pointers, in argument order.
    pub fn bindings(mut self, bindings: &'a [B]) -> Self {
        self.bindings = bindings;
        self
    }

    /// With these 32-bit constants, after the bindings.
    pub fn constants(mut self, constants: &'a [u32]) -> Self {
        self.constants = constants;
        self
    }
}

/// Where a dispatch's grid comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GridSource {
    /// [`Dispatch::grid`].
    Dispatch,
    /// Workgroup counts read from a buffer when the queue reaches the dispatch (a recorded
    /// indirect dispatch): the template carries a one-workgroup placeholder grid.
    Buffer,
}

/// A dispatch that passed [`validate_dispatch`].
#[derive(Clone, Copy)]
pub(crate) struct ValidatedDispatch<'k> {
    pub info: &'k KernelInfo,
    pub layout: &'k HalLayout,
    /// The packet fields (kernel object, grid, workgroup, [`aqueduct_abi::DISPATCH_DIMENSIONS`],
    /// segment sizes).
    pub template: DispatchTemplate,
}

impl ValidatedDispatch<'_> {
    /// The implicit block and its kernarg offset, when the kernel reads implicit arguments.
    pub fn implicit(&self) -> Option<(u32, ImplicitKernargs)> {
        let offset = self.layout.implicit_offset?;
        Some((offset, ImplicitKernargs::for_grid(self.template.grid, self.template.workgroup)))
    }
}

/// Checks a HAL dispatch of `kernel` on `agent` of `device`: the kernel belongs to the device and
/// follows the HAL layout, the dispatch gives as many bindings and constants as it takes, and the
/// grid and workgroup suit it. Buffer references are the caller's to check.
#[inline]
pub(crate) fn validate_dispatch<'k, B>(
    device: &DeviceShared,
    agent: usize,
    kernel: &'k Kernel,
    dispatch: &Dispatch<'_, B>,
    grid: GridSource,
) -> EngineResult<ValidatedDispatch<'k>> {
    if kernel.executable.device.id != device.id {
        return Err(EngineError::ForeignObject { what: "kernel" });
    }
    let info = kernel.info();
    let layout = info.layout.as_ref().map_err(|reason| EngineError::KernargMismatch {
        kernel: info.name.clone(),
        reason: format!("not a HAL-layout kernel ({reason}); a queue takes it through dispatch_raw"),
    })?;
    if dispatch.bindings.len() != layout.bindings || dispatch.constants.len() != layout.constants {
        return Err(EngineError::KernargMismatch {
            kernel: info.name.clone(),
            reason: format!(
                "{} bindings and {} constants given, the kernel takes {} and {}",
                dispatch.bindings.len(),
                dispatch.constants.len(),
                layout.bindings,
                layout.constants
            ),
        });
    }
    let grid = match grid {
        GridSource::Dispatch => dispatch.grid,
        GridSource::Buffer => [1, 1, 1],
    };
    let template = info.template(agent, grid, dispatch.workgroup)?;
    Ok(ValidatedDispatch { info, layout, template })
}
