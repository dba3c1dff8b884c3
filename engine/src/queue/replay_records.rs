//! What queue operations record in the replay capture: each operation as the file names it.

use aqueduct_profile::replay::Operation;

use crate::memory::Binding;
use crate::replay_capture::ReplayCapture;

/// A HAL dispatch as the file names it.
pub(crate) fn describe_dispatch(kernel: &crate::Kernel, dispatch: &crate::Dispatch) -> Operation {
    Operation::Dispatch {
        executable: kernel.executable.replay_id.get(),
        kernel: kernel.name().to_string(),
        grid: dispatch.grid,
        workgroup: dispatch.workgroup,
        bindings: dispatch.bindings.iter().map(Binding::replay_range).collect(),
        constants: dispatch.constants.to_vec(),
    }
}

/// A raw dispatch: its kernargs, and where they point into captured buffers.
pub(crate) fn describe_raw_dispatch(
    capture: &ReplayCapture,
    kernel: &crate::Kernel,
    dispatch: &crate::RawDispatch,
) -> Operation {
    Operation::RawDispatch {
        executable: kernel.executable.replay_id.get(),
        kernel: kernel.name().to_string(),
        grid: dispatch.grid,
        workgroup: dispatch.workgroup,
        kernargs: dispatch.kernargs.to_vec(),
        relocations: capture.relocations(dispatch.kernargs),
    }
}

/// An execution: the command buffer and its binding table's slots.
pub(crate) fn describe_execute(command_buffer: &crate::CommandBuffer, table: &crate::BindingTable) -> Operation {
    Operation::Execute {
        command_buffer: command_buffer.replay_id(),
        table: table
            .slots
            .iter()
            .map(|slot| slot.as_ref().map(|slot| slot.buffer.range(slot.offset, slot.length).replay_range()))
            .collect(),
    }
}

/// An alloca: the buffer it returned joins the capture.
pub(crate) fn describe_alloca(
    capture: &ReplayCapture,
    pool: &crate::Pool,
    size: u64,
    buffer: &crate::Buffer,
) -> Operation {
    let id = capture.next_id();
    buffer.0.replay_id.set(id);
    capture.buffer_live(id, buffer.device_address(), buffer.size());
    Operation::Alloca { pool: pool.0.replay_id.get(), size, buffer: id }
}
