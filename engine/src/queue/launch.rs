//! Typed launches on a queue: `queue.launch(&kernel).grid(..).arg(&out).arg(&input).arg(3.0f32)
//! .submit()`, each argument checked against the kernel's metadata (`launch_args.rs`).

use aqueduct_vocabulary::OperationKind;

use super::builder::{Submission, Submitted, captured};
use super::operations::{self, Immediate, Submitter};
use super::replay_records as replay;
use super::{Batch, Queue};
use crate::error::EngineResult;
use crate::executable::Kernel;
use crate::launch_args::{IntoKernelArgument, LaunchOp};
use crate::memory::Binding;

impl Queue {
    /// Launches `kernel` with typed arguments, each checked against the kernel's metadata:
    /// `.grid(..)`, optionally `.workgroup(..)`, one `.arg(..)` per argument in order, then the
    /// usual waits and signals and `.submit()`.
    ///
    /// ```no_run
    /// # fn run(queue: &aqueduct_engine::Queue, iota: &aqueduct_engine::Kernel, done: &aqueduct_engine::Semaphore) -> aqueduct_engine::EngineResult<()> {
    /// use aqueduct_engine::{EngineError, MemoryKind};
    /// // iota(u32 *out, u32 base, u32 count): out[i] = base + i
    /// let out = queue.device().allocate_typed::<u32>(MemoryKind::HostVisible, 256)?;
    /// queue.launch(iota).grid([256, 1, 1]).arg(&out).arg(10u32).arg(256u32).signal(done.at(1)).submit()?;
    ///
    /// // A value where the kernel takes a buffer is refused before anything runs.
    /// let wrong = queue.launch(iota).grid([256, 1, 1]).arg(1.5f32).submit();
    /// assert!(matches!(wrong, Err(EngineError::KernelArgument { index: 0, .. })));
    /// # Ok(())
    /// # }
    /// ```
    pub fn launch<'a>(&'a self, kernel: &'a Kernel) -> Submission<'a, &'a Queue, LaunchOp<'a>> {
        Submission::new(self, LaunchOp::new(kernel))
    }
}

impl<'q> Batch<'q> {
    /// Stages [`Queue::launch`] in the batch.
    pub fn launch<'a>(&'a mut self, kernel: &'a Kernel) -> Submission<'a, &'a mut Batch<'q>, LaunchOp<'a>> {
        Submission::new(self, LaunchOp::new(kernel))
    }
}

impl<'a, T> Submission<'a, T, LaunchOp<'a>> {
    /// The grid, in work-items (default one).
    pub fn grid(mut self, grid: [u32; 3]) -> Self {
        self.operation_mut().grid = grid;
        self
    }

    /// The workgroup size (default: the kernel's required size, or one wavefront).
    pub fn workgroup(mut self, workgroup: [u16; 3]) -> Self {
        self.operation_mut().workgroup = Some(workgroup);
        self
    }

    /// The next argument: a buffer (`&buffer` or a range) where the kernel takes a pointer, or a
    /// 4-byte number (`u32`, `i32`, `f32`) where it takes a value.
    pub fn arg(mut self, argument: impl IntoKernelArgument<Binding<'a>>) -> Self {
        self.operation_mut().push(argument.into_kernel_argument());
        self
    }
}

impl<'a> Submission<'a, &'a Queue, LaunchOp<'a>> {
    /// Checks the arguments and publishes the dispatch; a refused one changes nothing.
    pub fn submit(self) -> EngineResult<super::builder::Submitted> {
        let (queue, operation, waits, signals) = self.into_parts();
        let queue = &*queue.driver;
        let dispatch = operation.checked()?;
        let to = &mut Immediate(queue);
        captured!(
            queue,
            &waits,
            &signals,
            operations::dispatch(to, OperationKind::Dispatch, operation.kernel, &dispatch, &waits, &signals),
            |_, _| replay::describe_dispatch(operation.kernel, &dispatch)
        )
        .map(|()| Submitted::now(queue))
    }
}

impl<'a, 'q> Submission<'a, &'a mut Batch<'q>, LaunchOp<'a>> {
    /// Checks the arguments and enqueues the dispatch in the batch; a refused one enqueues nothing.
    pub fn submit(self) -> EngineResult<()> {
        let (batch, operation, waits, signals) = self.into_parts();
        let dispatch = operation.checked()?;
        captured!(
            Submitter::driver(batch),
            &waits,
            &signals,
            operations::dispatch(batch, OperationKind::Dispatch, operation.kernel, &dispatch, &waits, &signals),
            |_, _| replay::describe_dispatch(operation.kernel, &dispatch)
        )
    }
}
