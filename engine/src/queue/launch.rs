//! Typed launches: `queue.launch(&kernel).grid(..).arg(&out).arg(&input).arg(3.0f32).submit()`.
//! Each argument is checked, as it is added, against what the kernel's metadata declares at that
//! position (a buffer pointer or a 4-byte value, in the HAL layout), and the first mismatch, or a
//! missing argument, fails `submit` with [`EngineError::KernelArgument`] before anything is
//! staged. cudarc's launch builder is the model.

use bytemuck::Pod;
use smallvec::SmallVec;

use super::builder::{Submission, captured};
use super::operations::{self, Immediate, Submitter};
use super::replay_records as replay;
use super::{Batch, Queue};
use crate::dispatch::Dispatch;
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};

/// One argument of a typed launch: a buffer range, bound as a pointer, or a plain value.
#[derive(Clone, Copy, Debug)]
pub enum KernelArgument<'a> {
    /// A buffer range; the kernel receives its device address.
    Buffer(Binding<'a>),
    /// A value's bytes (little-endian, as the kernarg segment holds them).
    Value {
        /// The value's bytes; the first `size` count.
        bytes: [u8; 8],
        /// Its size in bytes.
        size: usize,
        /// Its Rust type, for error messages.
        type_name: &'static str,
    },
}

/// What [`Submission::arg`] accepts: buffers, bindings and plain numbers.
pub trait IntoKernelArgument<'a> {
    /// The argument as the launch passes it.
    fn into_kernel_argument(self) -> KernelArgument<'a>;
}

impl<'a, T: Pod> IntoKernelArgument<'a> for &'a Buffer<T> {
    fn into_kernel_argument(self) -> KernelArgument<'a> {
        KernelArgument::Buffer(self.whole())
    }
}

impl<'a> IntoKernelArgument<'a> for Binding<'a> {
    fn into_kernel_argument(self) -> KernelArgument<'a> {
        KernelArgument::Buffer(self)
    }
}

macro_rules! value_arguments {
    ($($ty:ty),*) => {$(
        impl IntoKernelArgument<'_> for $ty {
            fn into_kernel_argument(self) -> KernelArgument<'static> {
                let mut bytes = [0u8; 8];
                bytes[..size_of::<$ty>()].copy_from_slice(&self.to_le_bytes());
                KernelArgument::Value { bytes, size: size_of::<$ty>(), type_name: stringify!($ty) }
            }
        }
    )*};
}
value_arguments!(u32, i32, f32, u64, i64, f64);

/// Constants a launch holds without allocating.
const INLINE_CONSTANTS: usize = 16;
/// Bindings a launch holds without allocating.
const INLINE_BINDINGS: usize = 8;

/// The arguments of [`Queue::launch`]: the kernel, its grid, and the arguments so far.
pub struct LaunchOp<'a> {
    kernel: &'a Kernel,
    grid: [u32; 3],
    workgroup: Option<[u16; 3]>,
    bindings: SmallVec<[Binding<'a>; INLINE_BINDINGS]>,
    constants: SmallVec<[u32; INLINE_CONSTANTS]>,
    /// The first mismatch: (argument index, what is wrong).
    mismatch: Option<(usize, String)>,
}

impl<'a> LaunchOp<'a> {
    fn new(kernel: &'a Kernel) -> Self {
        Self {
            kernel,
            grid: [1, 1, 1],
            workgroup: None,
            bindings: SmallVec::new(),
            constants: SmallVec::new(),
            mismatch: None,
        }
    }

    fn arguments(&self) -> usize {
        self.bindings.len() + self.constants.len()
    }

    fn describe(&self, index: usize) -> String {
        match self.kernel.info().argument_names.get(index) {
            Some(Some(name)) => format!("`{name}`"),
            _ => "it".into(),
        }
    }

    /// Checks `argument` against the metadata at the next position and keeps it.
    fn push(&mut self, argument: KernelArgument<'a>) {
        if self.mismatch.is_some() {
            return;
        }
        let index = self.arguments();
        let (bindings, constants) = match &self.kernel.info().layout {
            Ok(layout) => (layout.bindings, layout.constants),
            Err(reason) => {
                self.mismatch = Some((index, format!("the kernel is not in the HAL layout: {reason}")));
                return;
            }
        };
        let wrong = match argument {
            KernelArgument::Buffer(binding) if index < bindings => {
                self.bindings.push(binding);
                return;
            }
            KernelArgument::Value { bytes, size: 4, .. } if index >= bindings && index < bindings + constants => {
                self.constants.push(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
                return;
            }
            KernelArgument::Buffer(_) => "a buffer".to_string(),
            KernelArgument::Value { size, type_name, .. } => format!("a {size}-byte {type_name}"),
        };
        let declared = if index < bindings {
            format!("the metadata declares {} a global buffer pointer", self.describe(index))
        } else if index < bindings + constants {
            format!("the metadata declares {} a 4-byte value", self.describe(index))
        } else {
            format!("the kernel takes {} arguments", bindings + constants)
        };
        self.mismatch = Some((index, format!("{declared}; got {wrong}")));
    }

    /// The dispatch, once every argument matched and none is missing.
    fn checked(&self) -> EngineResult<Dispatch<'_>> {
        let error =
            |index, reason| EngineError::KernelArgument { kernel: self.kernel.name().to_string(), index, reason };
        if let Some((index, reason)) = &self.mismatch {
            return Err(error(*index, reason.clone()));
        }
        if let Ok(layout) = &self.kernel.info().layout {
            let expected = layout.bindings + layout.constants;
            if self.arguments() < expected {
                let index = self.arguments();
                return Err(error(index, format!("missing: the kernel takes {expected} arguments")));
            }
        }
        let dispatch = Dispatch {
            grid: self.grid,
            workgroup: self.workgroup,
            bindings: &self.bindings,
            constants: &self.constants,
        };
        Ok(dispatch)
    }
}

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
    pub fn arg(mut self, argument: impl IntoKernelArgument<'a>) -> Self {
        self.operation_mut().push(argument.into_kernel_argument());
        self
    }
}

impl<'a> Submission<'a, &'a Queue, LaunchOp<'a>> {
    /// Checks the arguments and publishes the dispatch; a refused one changes nothing.
    pub fn submit(self) -> EngineResult<super::builder::Submitted> {
        let (queue, operation, waits, signals) = self.into_parts();
        let dispatch = operation.checked()?;
        let to = &mut Immediate(queue.shared());
        captured!(
            queue.shared(),
            &waits,
            &signals,
            operations::dispatch(to, operation.kernel, &dispatch, &waits, &signals),
            |_, _| replay::describe_dispatch(operation.kernel, &dispatch)
        )
        .map(|()| queue.shared().submitted())
    }
}

impl<'a, 'q> Submission<'a, &'a mut Batch<'q>, LaunchOp<'a>> {
    /// Checks the arguments and stages the dispatch in the batch; a refused one stages nothing.
    pub fn submit(self) -> EngineResult<()> {
        let (batch, operation, waits, signals) = self.into_parts();
        let dispatch = operation.checked()?;
        captured!(
            Submitter::queue(batch),
            &waits,
            &signals,
            operations::dispatch(batch, operation.kernel, &dispatch, &waits, &signals),
            |_, _| replay::describe_dispatch(operation.kernel, &dispatch)
        )
    }
}
