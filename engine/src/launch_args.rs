//! Typed launch arguments: each is checked, as it is added, against what the kernel's metadata
//! declares at that position (a buffer pointer or a 4-byte value, in the HAL layout), and the
//! first mismatch, or a missing argument, is [`EngineError::KernelArgument`] before anything is
//! enqueued or recorded. cudarc's launch builder is the model. The queue's launch
//! (`queue/launch.rs`) and the command buffer's (`command_buffer/recording.rs`) share it.

use bytemuck::Pod;
use smallvec::SmallVec;

use crate::dispatch::Dispatch;
use crate::error::{EngineError, EngineResult};
use crate::executable::Kernel;
use crate::memory::{Binding, Buffer};

/// One argument of a typed launch: a buffer range, bound as a pointer, or a plain value. `B`
/// is how a buffer is named: a [`Binding`] for a queue's launch, a `BufferRef` (a range or a
/// binding-table slot) for a command buffer's.
#[derive(Clone, Copy, Debug)]
pub enum KernelArgument<B> {
    /// A buffer range; the kernel receives its device address.
    Buffer(B),
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

/// What a launch's `.arg(..)` accepts: buffers, bindings (and, in a command buffer, buffer
/// references) and plain numbers.
pub trait IntoKernelArgument<B> {
    /// The argument as the launch passes it.
    fn into_kernel_argument(self) -> KernelArgument<B>;
}

impl<'a, T: Pod> IntoKernelArgument<Binding<'a>> for &'a Buffer<T> {
    fn into_kernel_argument(self) -> KernelArgument<Binding<'a>> {
        KernelArgument::Buffer(self.whole())
    }
}

impl<'a> IntoKernelArgument<Binding<'a>> for Binding<'a> {
    fn into_kernel_argument(self) -> KernelArgument<Binding<'a>> {
        KernelArgument::Buffer(self)
    }
}

macro_rules! value_arguments {
    ($($ty:ty),*) => {$(
        impl<B> IntoKernelArgument<B> for $ty {
            fn into_kernel_argument(self) -> KernelArgument<B> {
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

/// The arguments of a typed launch (`Queue::launch`, `CommandBuffer::launch`): the kernel, its
/// grid, and the arguments so far, each checked as it is added.
pub struct LaunchOp<'a, B = Binding<'a>> {
    pub(crate) kernel: &'a Kernel,
    pub(crate) grid: [u32; 3],
    pub(crate) workgroup: Option<[u16; 3]>,
    bindings: SmallVec<[B; INLINE_BINDINGS]>,
    constants: SmallVec<[u32; INLINE_CONSTANTS]>,
    /// The first mismatch: (argument index, what is wrong).
    mismatch: Option<(usize, String)>,
}

impl<'a, B: Copy> LaunchOp<'a, B> {
    pub(crate) fn new(kernel: &'a Kernel) -> Self {
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
    pub(crate) fn push(&mut self, argument: KernelArgument<B>) {
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
    pub(crate) fn checked(&self) -> EngineResult<Dispatch<'_, B>> {
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
