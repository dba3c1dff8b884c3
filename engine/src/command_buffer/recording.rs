//! The command buffer's recording calls: each is checked and recorded by `recorder.rs`; under a
//! replay capture, a call that succeeded is also described, so the capture can record the
//! command buffer's calls once it finishes and a replay can make it again.

use aqueduct_profile::replay::{Command, CommandRange};

use super::recorder::{BlockLabel, BufferRef};
use super::{CommandBuffer, CompareOp};
use crate::dispatch::Dispatch;
use crate::error::EngineResult;
use crate::executable::Kernel;
use crate::launch_args::{IntoKernelArgument, KernelArgument, LaunchOp};
use crate::memory::{Binding, Buffer};

/// A typed launch being recorded: `cb.launch(&kernel).grid(..).arg(BufferRef::slot(0, 0, n))
/// .arg(2.0f32).record()?`, each argument checked against the kernel's metadata as in
/// `Queue::launch`; a buffer argument may be a binding-table slot.
#[must_use = "nothing is recorded until `.record()`"]
pub struct RecordedLaunch<'r, 'a> {
    command_buffer: &'r mut CommandBuffer,
    operation: LaunchOp<'a, BufferRef<'a>>,
}

impl<'a> RecordedLaunch<'_, 'a> {
    /// The grid, in work-items (default one).
    pub fn grid(mut self, grid: [u32; 3]) -> Self {
        self.operation.grid = grid;
        self
    }

    /// The workgroup size (default: the kernel's required size, or one wavefront).
    pub fn workgroup(mut self, workgroup: [u16; 3]) -> Self {
        self.operation.workgroup = Some(workgroup);
        self
    }

    /// The next argument: a buffer, a range or a [`BufferRef`] (a slot) where the kernel takes a
    /// pointer, or a 4-byte number where it takes a value.
    pub fn arg(mut self, argument: impl IntoKernelArgument<BufferRef<'a>>) -> Self {
        self.operation.push(argument.into_kernel_argument());
        self
    }

    /// Checks the arguments and records the dispatch; a refused one records nothing.
    pub fn record(self) -> EngineResult<()> {
        let dispatch = self.operation.checked()?;
        self.command_buffer.dispatch(self.operation.kernel, &dispatch)
    }
}

impl<'a, T: bytemuck::Pod> IntoKernelArgument<BufferRef<'a>> for &'a Buffer<T> {
    fn into_kernel_argument(self) -> KernelArgument<BufferRef<'a>> {
        KernelArgument::Buffer(BufferRef::Static(self.whole()))
    }
}

impl<'a> IntoKernelArgument<BufferRef<'a>> for Binding<'a> {
    fn into_kernel_argument(self) -> KernelArgument<BufferRef<'a>> {
        KernelArgument::Buffer(BufferRef::Static(self))
    }
}

impl<'a> IntoKernelArgument<BufferRef<'a>> for BufferRef<'a> {
    fn into_kernel_argument(self) -> KernelArgument<BufferRef<'a>> {
        KernelArgument::Buffer(self)
    }
}

/// A buffer reference as the capture names it.
fn command_range(reference: &BufferRef) -> CommandRange {
    match *reference {
        BufferRef::Static(binding) => CommandRange::Static(binding.replay_range()),
        BufferRef::Slot { slot, offset, length } => CommandRange::Slot { slot, offset, length },
    }
}

fn dispatch_parts(dispatch: &Dispatch<'_, BufferRef<'_>>) -> (Vec<CommandRange>, Vec<u32>) {
    (dispatch.bindings.iter().map(command_range).collect(), dispatch.constants.to_vec())
}

impl CommandBuffer {
    /// Under a capture, keeps the description of a call that succeeded.
    fn captured<T>(&mut self, result: EngineResult<T>, describe: impl FnOnce(&T) -> Command) -> EngineResult<T> {
        if let (Ok(value), Some(commands)) = (&result, &mut self.captured) {
            commands.push(describe(value));
        }
        result
    }

    /// Records a typed launch of `kernel` (see [`RecordedLaunch`]).
    pub fn launch<'a>(&mut self, kernel: &'a Kernel) -> RecordedLaunch<'_, 'a> {
        RecordedLaunch { command_buffer: self, operation: LaunchOp::new(kernel) }
    }

    /// Records a kernel dispatch (HAL layout).
    pub fn dispatch(&mut self, kernel: &Kernel, dispatch: &Dispatch<'_, BufferRef<'_>>) -> EngineResult<()> {
        let result = self.dispatch_unrecorded(kernel, dispatch);
        self.captured(result, |_| {
            let (bindings, constants) = dispatch_parts(dispatch);
            Command::Dispatch {
                executable: kernel.executable.replay_id.get(),
                kernel: kernel.name().to_string(),
                grid: dispatch.grid,
                workgroup: dispatch.workgroup,
                bindings,
                constants,
            }
        })
    }

    /// Records a dispatch whose workgroup counts (three u32 at `counts`) are read when the queue
    /// reaches it: the grid is counts × workgroup size, and `dispatch.grid` is not used.
    pub fn dispatch_indirect(
        &mut self,
        kernel: &Kernel,
        dispatch: &Dispatch<'_, BufferRef<'_>>,
        counts: BufferRef<'_>,
    ) -> EngineResult<()> {
        let result = self.dispatch_indirect_unrecorded(kernel, dispatch, counts);
        self.captured(result, |_| {
            let (bindings, constants) = dispatch_parts(dispatch);
            Command::DispatchIndirect {
                executable: kernel.executable.replay_id.get(),
                kernel: kernel.name().to_string(),
                grid: command_range(&counts),
                workgroup: dispatch.workgroup,
                bindings,
                constants,
            }
        })
    }

    /// Records a fill of `target` with a 1, 2, 4 or 8-byte `pattern`.
    pub fn fill<'b>(&mut self, target: impl Into<BufferRef<'b>>, pattern: &[u8]) -> EngineResult<()> {
        let target = target.into();
        let result = self.fill_unrecorded(target, pattern);
        self.captured(result, |_| Command::Fill { target: command_range(&target), pattern: pattern.to_vec() })
    }

    /// Records a copy of `source` into `target` (same length, not overlapping).
    pub fn copy<'b>(&mut self, source: impl Into<BufferRef<'b>>, target: impl Into<BufferRef<'b>>) -> EngineResult<()> {
        let (source, target) = (source.into(), target.into());
        let result = self.copy_unrecorded(source, target);
        self.captured(result, |_| Command::Copy { source: command_range(&source), target: command_range(&target) })
    }

    /// Records writing `data` (carried in the program's rodata) into `target`.
    pub fn update<'b>(&mut self, target: impl Into<BufferRef<'b>>, data: &[u8]) -> EngineResult<()> {
        let target = target.into();
        let result = self.update_unrecorded(target, data);
        self.captured(result, |_| Command::Update { target: command_range(&target), data: data.to_vec() })
    }

    /// Orders everything recorded before against everything after (execution and memory, at
    /// agent scope). It costs no packet: it becomes the barrier bit and acquire scope of the
    /// next command and the release scope of the previous one.
    pub fn barrier(&mut self) -> EngineResult<()> {
        let result = self.barrier_unrecorded();
        self.captured(result, |_| Command::Barrier)
    }

    /// Records a device timestamp (one u64, 8-byte aligned) written to `target` when the queue
    /// reaches this point; `marker_id` tags it.
    pub fn profile_marker<'b>(&mut self, target: impl Into<BufferRef<'b>>, marker_id: u32) -> EngineResult<()> {
        let target = target.into();
        let result = self.profile_marker_unrecorded(target, marker_id);
        self.captured(result, |_| Command::ProfileMarker { target: command_range(&target), marker: marker_id })
    }

    /// A new, empty block to branch to; record into it after [`Self::begin`].
    pub fn new_block(&mut self) -> EngineResult<BlockLabel> {
        let result = self.new_block_unrecorded();
        self.captured(result, |_| Command::NewBlock)
    }

    /// Continues recording in `label`. The current block keeps what it has; if it has no
    /// branch or return yet, it returns.
    pub fn begin(&mut self, label: BlockLabel) -> EngineResult<()> {
        let result = self.begin_unrecorded(label);
        self.captured(result, |_| Command::Begin { label: label.0 })
    }

    /// Ends the current block by continuing at `target`.
    pub fn branch(&mut self, target: BlockLabel) -> EngineResult<()> {
        let result = self.branch_unrecorded(target);
        self.captured(result, |_| Command::Branch { label: target.0 })
    }

    /// Ends the current block with a conditional branch: once the queue has run everything
    /// before it, the 4- or 8-byte unsigned value at `value` (host-visible memory, by its
    /// length) is compared with `operand`, and execution continues at `taken` if
    /// `value compare operand` holds, else at `not_taken`.
    pub fn branch_if<'b>(
        &mut self,
        value: impl Into<BufferRef<'b>>,
        compare: CompareOp,
        operand: u64,
        taken: BlockLabel,
        not_taken: BlockLabel,
    ) -> EngineResult<()> {
        let value = value.into();
        let result = self.branch_if_unrecorded(value, compare, operand, taken, not_taken);
        self.captured(result, |_| Command::BranchIf {
            value: command_range(&value),
            compare: crate::replay_capture::names::name(compare),
            operand,
            taken: taken.0,
            not_taken: not_taken.0,
        })
    }

    /// Ends the current block and the program.
    pub fn ret(&mut self) -> EngineResult<()> {
        let result = self.ret_unrecorded();
        self.captured(result, |_| Command::Return)
    }
}
