//! Host builds written in Rust: the CPU implementation the soft HSA runtime runs for a kernel of
//! a code object built by clang or hipcc.
//!
//! A GPU runs the code object's machine code; the soft runtime cannot, so it runs a *host build*
//! registered for that code object and kernel-descriptor symbol instead. In Rust a host build is
//! three things:
//!
//! - the kernel's explicit arguments as a struct, declared with [`kernel_args!`](crate::kernel_args)
//!   (fields in parameter order, [`DevicePtr`] for pointers), which also declares each
//!   argument's offset, size and kind so the soft runtime compares them with the code object's
//!   metadata before the kernel can run (a mismatch is an error naming the kernel and argument);
//! - a type implementing [`HostKernel`]: the descriptor symbol, the argument struct, and the
//!   body, a function over one [`Workgroup`] that usually loops over its
//!   [`work_items`](Workgroup::work_items);
//! - [`HostBuild::of`], which turns that type into the [`HostBuild`] the engine registers
//!   (`Device::register_host_builds(code_object, &[HostBuild::of::<MyKernel>()])`).
//!
//! ```
//! use aqueduct_abi::host_build::{DevicePtr, HostKernel, Workgroup};
//! use aqueduct_abi::{HostBuild, kernel_args};
//!
//! kernel_args! {
//!     /// `saxpy(float *y, const float *x, float a, u32 count)`
//!     pub struct SaxpyArgs {
//!         pub y: DevicePtr<f32>,
//!         pub x: DevicePtr<f32>,
//!         pub a: f32,
//!         pub count: u32,
//!     }
//! }
//!
//! /// y[i] = a * x[i] + y[i]
//! pub struct Saxpy;
//!
//! impl HostKernel for Saxpy {
//!     const SYMBOL: &'static str = "saxpy.kd";
//!     type Args = SaxpyArgs;
//!
//!     fn workgroup(group: &mut Workgroup<'_, SaxpyArgs>) {
//!         let SaxpyArgs { y, x, a, count } = *group.args();
//!         for item in group.work_items() {
//!             let i = item.global_id()[0];
//!             if i < count {
//!                 let i = i as usize;
//!                 // SAFETY: the launch binds `x` and `y` to buffers of at least `count` floats.
//!                 unsafe { y.write(i, a * x.read(i) + y.read(i)) };
//!             }
//!         }
//!     }
//! }
//!
//! const SAXPY: HostBuild = HostBuild::of::<Saxpy>();
//! assert_eq!(SAXPY.symbol, "saxpy.kd");
//! assert_eq!(SAXPY.args.map(<[_]>::len), Some(4));
//! ```
//!
//! The execution model is the soft runtime's: each call runs one workgroup, workgroups run
//! concurrently on a thread pool, and a workgroup's work-items run one after another on its
//! thread, so work-items cannot wait for each other (there is no barrier). Two work-items that
//! write the same memory race, exactly as in C. A panic in a host build cannot unwind through the
//! C calling convention the runtime uses: the trampoline catches it and marks the workgroup
//! trapped ([`WorkgroupContext::trapped`](crate::WorkgroupContext::trapped)), and the runtime
//! fails the dispatch's queue with HSA_STATUS_ERROR_EXCEPTION, as a trap does on a GPU.
//!
//! `unsafe` stays where the kernel touches device memory: a [`DevicePtr`] is an address the
//! launch supplied, and nothing on the host knows how large its buffer is, just as on a GPU.

use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::host_build_abi::{HostArg, HostBuild, HostBuildFn, WorkgroupContext};

/// A type a field of a [`KernelArgs`] struct may have: a plain number or a device address,
/// copied out of kernarg bytes, with the flags its [`HostArg`] declaration carries.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self` (arguments are copied
/// out of bytes the launch wrote), and `FLAGS` must be 0 for a value and [`HostArg::POINTER`]
/// (optionally with [`HostArg::NULLABLE`]) only for an 8-byte device address.
pub unsafe trait KernargValue: Copy + Send + Sync + 'static {
    /// [`HostArg`] flags for an argument of this type.
    const FLAGS: u32;
}

macro_rules! plain_kernarg_values {
    ($($ty:ty),*) => {$(
        // SAFETY: a primitive number: every bit pattern is valid, and it is a value.
        unsafe impl KernargValue for $ty {
            const FLAGS: u32 = 0;
        }
    )*};
}
plain_kernarg_values!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// A device address of `T` elements, as a kernel's pointer parameter receives it (`T *`). The
/// runner refuses a dispatch that passes null for it, so inside a host build it is never null;
/// use [`NullableDevicePtr`] for a parameter the kernel itself tests for null.
#[repr(transparent)]
pub struct DevicePtr<T> {
    address: u64,
    // `fn() -> T`: covariant in `T`, and Send and Sync, as a plain address is.
    element: PhantomData<fn() -> T>,
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevicePtr<T> {}

impl<T> core::fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevicePtr({:#x})", self.address)
    }
}

impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.address == other.address
    }
}

impl<T> Eq for DevicePtr<T> {}

// SAFETY: a `u64` underneath (repr(transparent)), so any bit pattern is valid; an 8-byte device
// address.
unsafe impl<T: 'static> KernargValue for DevicePtr<T> {
    const FLAGS: u32 = HostArg::POINTER;
}

impl<T> DevicePtr<T> {
    /// The address as the kernarg segment holds it.
    pub const fn address(self) -> u64 {
        self.address
    }

    /// The address as a host pointer. On the soft runtime device memory is host memory, and the
    /// engine hands out addresses of pointers it exposed, hence `with_exposed_provenance`.
    pub fn as_ptr(self) -> *mut T {
        core::ptr::with_exposed_provenance_mut(self.address as usize)
    }

    /// Reads element `index`.
    ///
    /// # Safety
    /// Element `index` lies inside the buffer the launch bound here, holds a valid `T`, and no
    /// other work-item writes it concurrently.
    pub unsafe fn read(self, index: usize) -> T {
        // SAFETY: the caller vouches for the element; unaligned reads tolerate any address.
        unsafe { self.as_ptr().add(index).read_unaligned() }
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// Element `index` lies inside the buffer the launch bound here, and no other work-item
    /// reads or writes it concurrently.
    pub unsafe fn write(self, index: usize, value: T) {
        // SAFETY: as for `read`.
        unsafe { self.as_ptr().add(index).write_unaligned(value) }
    }
}

/// A device address the kernel itself tests for null (`T *` declared nullable): the runner lets
/// a null one through.
#[repr(transparent)]
pub struct NullableDevicePtr<T>(DevicePtr<T>);

impl<T> Clone for NullableDevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for NullableDevicePtr<T> {}

impl<T> core::fmt::Debug for NullableDevicePtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "NullableDevicePtr({:#x})", self.0.address)
    }
}

// SAFETY: a `DevicePtr` underneath (repr(transparent)): any bit pattern, an 8-byte address.
unsafe impl<T: 'static> KernargValue for NullableDevicePtr<T> {
    const FLAGS: u32 = HostArg::POINTER | HostArg::NULLABLE;
}

impl<T> NullableDevicePtr<T> {
    /// The address, unless it is null.
    pub fn get(self) -> Option<DevicePtr<T>> {
        (self.0.address != 0).then_some(self.0)
    }
}

/// A kernel's explicit arguments as a `#[repr(C)]` struct whose fields are its parameters in
/// order, with the [`HostArg`] declaration of each. AMDGPU lays explicit arguments out in order
/// at natural alignment, as a `#[repr(C)]` struct does on x86-64 and AArch64, and the soft
/// runtime checks `LAYOUT` against the metadata before the kernel runs, so a struct that
/// disagrees is refused rather than read wrongly. Declare one with
/// [`kernel_args!`](crate::kernel_args), which writes the unsafe implementation for you.
///
/// # Safety
/// `Self` is `#[repr(C)]`, every field is a [`KernargValue`], and `LAYOUT` lists every field in
/// declaration order with its true offset, size and its type's flags.
pub unsafe trait KernelArgs: Copy + Send + Sync + 'static {
    /// Each field's declaration, in order.
    const LAYOUT: &'static [HostArg];
}

// SAFETY: no fields, an empty layout: for kernels without parameters.
unsafe impl KernelArgs for () {
    const LAYOUT: &'static [HostArg] = &[];
}

/// Declares a kernel's argument struct: adds `#[repr(C)]` and `#[derive(Clone, Copy)]` and
/// implements [`KernelArgs`](crate::host_build::KernelArgs) with each field's name, offset, size
/// and kind. Field types must be [`KernargValue`](crate::host_build::KernargValue)s (numbers,
/// [`DevicePtr`](crate::host_build::DevicePtr),
/// [`NullableDevicePtr`](crate::host_build::NullableDevicePtr)); anything else does not compile.
///
/// ```
/// aqueduct_abi::kernel_args! {
///     /// `iota(u32 *out, u32 base, u32 count)`
///     #[derive(Debug)]
///     pub struct IotaArgs {
///         pub out: aqueduct_abi::host_build::DevicePtr<u32>,
///         pub base: u32,
///         pub count: u32,
///     }
/// }
/// use aqueduct_abi::host_build::KernelArgs;
/// let offsets: Vec<u32> = IotaArgs::LAYOUT.iter().map(|arg| arg.offset).collect();
/// assert_eq!(offsets, [0, 8, 12]);
/// assert_eq!(IotaArgs::LAYOUT[1].name(), Some("base"));
/// ```
#[macro_export]
macro_rules! kernel_args {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)*
        }

        // SAFETY: `#[repr(C)]` above; `<$ty as KernargValue>::FLAGS` compiles only for
        // KernargValue fields; the layout lists every field in declaration order at its
        // `offset_of` and `size_of` (a kernarg segment is far below 4 GiB, so `as u32` keeps them).
        unsafe impl $crate::host_build::KernelArgs for $name {
            const LAYOUT: &'static [$crate::HostArg] = &[$(
                $crate::HostArg {
                    name: const {
                        match ::core::ffi::CStr::from_bytes_with_nul(concat!(stringify!($field), "\0").as_bytes()) {
                            Ok(name) => name.as_ptr(),
                            Err(_) => panic!("a field name holds no NUL byte"),
                        }
                    },
                    offset: ::core::mem::offset_of!($name, $field) as u32,
                    size: ::core::mem::size_of::<$ty>() as u32,
                    flags: <$ty as $crate::host_build::KernargValue>::FLAGS,
                },
            )*];
        }
    };
}

/// A kernel's host build: which kernel it implements and what one workgroup does. The type
/// itself holds nothing (a unit struct is usual); [`HostBuild::of`] makes it registrable.
pub trait HostKernel: 'static {
    /// The kernel descriptor's symbol in the code object, `name.kd`.
    const SYMBOL: &'static str;
    /// The kernel's explicit arguments ([`kernel_args!`](crate::kernel_args)).
    type Args: KernelArgs;

    /// Runs every work-item of one workgroup ([`Workgroup::work_items`]).
    fn workgroup(group: &mut Workgroup<'_, Self::Args>);
}

impl HostBuild {
    /// The host build `K`, ready for `Device::register_host_builds` (or
    /// `aqueduct_soft_hsa::register_kernels`), with its argument layout declared so the
    /// registration and the code object's load compare it with the metadata.
    pub const fn of<K: HostKernel>() -> HostBuild {
        HostBuild { symbol: K::SYMBOL, function: run_workgroup::<K> as HostBuildFn, args: Some(K::Args::LAYOUT) }
    }
}

/// Bytes of the kernarg segment the layout covers: the end of its last argument.
const fn layout_extent(layout: &[HostArg]) -> usize {
    let mut end = 0;
    let mut index = 0;
    while index < layout.len() {
        let arg_end = layout[index].offset as usize + layout[index].size as usize;
        if arg_end > end {
            end = arg_end;
        }
        index += 1;
    }
    end
}

/// The C entry the soft runtime calls for one workgroup of `K`.
///
/// # Safety
/// [`HostBuildFn`]'s contract: `context` is valid for the call, and its kernarg segment holds
/// the kernel's declared arguments. The entry is only reachable through [`HostBuild::of`], whose
/// `args` make registration and binding compare `K::Args::LAYOUT` with the metadata, so the
/// segment holds at least the bytes the layout covers.
unsafe extern "C" fn run_workgroup<K: HostKernel>(context: *const WorkgroupContext) {
    // SAFETY: the runner passes a context valid for this call.
    let context = unsafe { &*context };
    let extent = layout_extent(K::Args::LAYOUT).min(size_of::<K::Args>());
    let mut args = MaybeUninit::<K::Args>::zeroed();
    if extent > 0 && !context.kernarg.is_null() {
        // SAFETY: the segment holds `extent` bytes (the layout matched the metadata, see above),
        // the destination is `size_of::<K::Args>() >= extent` bytes, and the two never overlap.
        unsafe { core::ptr::copy_nonoverlapping(context.kernarg, args.as_mut_ptr().cast::<u8>(), extent) };
    }
    // SAFETY: `KernelArgs` guarantees every field accepts any bit pattern, so zeroes partly
    // overwritten with kernarg bytes form a valid value.
    let args = unsafe { args.assume_init() };
    // A panic may not unwind out of an `extern "C"` function (it would abort the process): it
    // becomes the dispatch's failure, as a fault of a GPU kernel fails its queue.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| K::workgroup(&mut Workgroup { context, args })));
    if let Err(payload) = ran {
        let said = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-text payload".into());
        crate::host_build_abi::record_host_panic(format!("the Rust host build panicked: {said}"));
        context.trapped.set(1);
    }
}

/// One workgroup of a dispatch, as a Rust host build sees it: the arguments, the workgroup's
/// place in the grid, and its group (LDS) memory.
pub struct Workgroup<'a, A> {
    context: &'a WorkgroupContext,
    args: A,
}

impl<A: KernelArgs> Workgroup<'_, A> {
    /// The kernel's arguments, copied out of the kernarg segment.
    pub fn args(&self) -> &A {
        &self.args
    }

    /// This workgroup's id on each axis.
    pub fn id(&self) -> [u32; 3] {
        self.context.workgroup_id
    }

    /// The dispatch's workgroup size (work-items per full workgroup).
    pub fn size(&self) -> [u32; 3] {
        self.context.workgroup_size.map(u32::from)
    }

    /// The dispatch's grid size in work-items.
    pub fn grid_size(&self) -> [u32; 3] {
        self.context.grid_size
    }

    /// Work-items of this workgroup on each axis: its size, clipped at the grid's edge.
    pub fn active_size(&self) -> [u32; 3] {
        self.context.active_size()
    }

    /// The workgroup's active work-items, x fastest, as a GPU numbers them. The iterator holds
    /// no borrow, so the loop body may use [`Self::group_memory`].
    pub fn work_items(&self) -> WorkItems {
        let active = self.active_size();
        let origin: [u32; 3] =
            core::array::from_fn(|axis| self.context.workgroup_id[axis].saturating_mul(self.size()[axis]));
        let empty = active.contains(&0);
        WorkItems { origin, active, next: (!empty).then_some([0; 3]) }
    }

    /// Group (LDS) memory private to this workgroup, zeroed when it starts: as many bytes as the
    /// kernel's metadata and the dispatch ask for.
    pub fn group_memory(&mut self) -> &mut [u8] {
        let length = usize::try_from(self.context.group_memory_len).unwrap_or(0);
        if self.context.group_memory.is_null() || length == 0 {
            return &mut [];
        }
        // SAFETY: the runner gives each workgroup its own `group_memory_len` writable bytes for
        // the call, which `'_` does not outlive; `&mut self` makes this the only borrow of them.
        unsafe { core::slice::from_raw_parts_mut(self.context.group_memory, length) }
    }

    /// The device's constant-rate counter (what `__builtin_readsteadycounter` reads on a GPU).
    pub fn steady_counter(&self) -> u64 {
        // SAFETY: the runner's counter function takes nothing and has no preconditions.
        unsafe { (self.context.steady_counter)() }
    }

    /// The raw context (packet, kernarg and hidden-argument pointers), for what this type does
    /// not cover.
    pub fn context(&self) -> &WorkgroupContext {
        self.context
    }
}

/// One work-item of a workgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItem {
    local_id: [u32; 3],
    global_id: [u32; 3],
}

impl WorkItem {
    /// Its id within the workgroup on each axis (`threadIdx`).
    pub fn local_id(&self) -> [u32; 3] {
        self.local_id
    }

    /// Its id within the grid on each axis: the workgroup's origin plus [`Self::local_id`].
    pub fn global_id(&self) -> [u32; 3] {
        self.global_id
    }
}

/// [`Workgroup::work_items`]: the active work-items, x fastest.
#[derive(Clone, Debug)]
pub struct WorkItems {
    /// Global id of the workgroup's first work-item.
    origin: [u32; 3],
    active: [u32; 3],
    /// Local id of the next work-item; `None` once every one has been yielded.
    next: Option<[u32; 3]>,
}

impl Iterator for WorkItems {
    type Item = WorkItem;

    fn next(&mut self) -> Option<WorkItem> {
        let local_id = self.next?;
        let mut following = local_id;
        self.next = None;
        for axis in 0..3 {
            following[axis] += 1;
            if following[axis] < self.active[axis] {
                self.next = Some(following);
                break;
            }
            following[axis] = 0;
        }
        // Inside the grid, so below `grid_size <= u32::MAX`: the sum cannot wrap.
        let global_id = core::array::from_fn(|axis| self.origin[axis] + local_id[axis]);
        Some(WorkItem { local_id, global_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn zero() -> u64 {
        0
    }

    fn context(kernarg: *const u8, workgroup_id: [u32; 3], grid: [u32; 3], size: [u16; 3]) -> WorkgroupContext {
        WorkgroupContext {
            packet: core::ptr::null(),
            kernarg,
            implicit_args: core::ptr::null(),
            group_memory: core::ptr::null_mut(),
            group_memory_len: 0,
            steady_counter: zero,
            workgroup_id,
            grid_size: grid,
            workgroup_size: size,
            trapped: core::cell::Cell::new(0),
            ring_doorbell: crate::host_build_abi::no_doorbell,
        }
    }

    crate::kernel_args! {
        struct Args {
            out: DevicePtr<u32>,
            scale: u32,
            bias: u32,
        }
    }

    #[test]
    fn the_layout_records_every_field_in_order() {
        let layout: Vec<_> = Args::LAYOUT.iter().map(|arg| (arg.name(), arg.offset, arg.size, arg.flags)).collect();
        assert_eq!(layout, [(Some("out"), 0, 8, HostArg::POINTER), (Some("scale"), 8, 4, 0), (Some("bias"), 12, 4, 0)]);
        assert_eq!(layout_extent(Args::LAYOUT), 16);
    }

    #[test]
    fn work_items_run_x_fastest_and_stop_at_the_grid_edge() {
        let ctx = context(core::ptr::null(), [1, 0, 0], [6, 2, 1], [4, 2, 1]);
        let group = Workgroup { context: &ctx, args: () };
        let items: Vec<_> = group.work_items().map(|item| (item.local_id(), item.global_id())).collect();
        assert_eq!(
            items,
            [([0, 0, 0], [4, 0, 0]), ([1, 0, 0], [5, 0, 0]), ([0, 1, 0], [4, 1, 0]), ([1, 1, 0], [5, 1, 0])]
        );
        let outside = context(core::ptr::null(), [2, 0, 0], [6, 1, 1], [4, 1, 1]);
        assert_eq!(Workgroup { context: &outside, args: () }.work_items().count(), 0);
    }

    /// out[i] = i * scale + bias
    struct Affine;

    impl HostKernel for Affine {
        const SYMBOL: &'static str = "affine.kd";
        type Args = Args;

        fn workgroup(group: &mut Workgroup<'_, Args>) {
            let Args { out, scale, bias } = *group.args();
            for item in group.work_items() {
                let i = item.global_id()[0];
                // SAFETY: the test's buffer holds every work-item's element.
                unsafe { out.write(i as usize, i * scale + bias) };
            }
        }
    }

    #[test]
    fn the_entry_copies_the_arguments_out_and_runs_every_work_item() {
        let mut out = [0u32; 6];
        let mut kernarg = [0u8; 16];
        kernarg[..8].copy_from_slice(&(out.as_mut_ptr().expose_provenance() as u64).to_le_bytes());
        kernarg[8..12].copy_from_slice(&3u32.to_le_bytes());
        kernarg[12..].copy_from_slice(&1u32.to_le_bytes());
        let kernel = HostBuild::of::<Affine>();
        assert_eq!((kernel.symbol, kernel.args.map(<[_]>::len)), ("affine.kd", Some(3)));
        for workgroup in 0..2 {
            let ctx = context(kernarg.as_ptr(), [workgroup, 0, 0], [6, 1, 1], [4, 1, 1]);
            // SAFETY: the context is valid and its kernarg segment holds the declared 16 bytes.
            unsafe { (kernel.function)(&ctx) };
        }
        assert_eq!(out, [1, 4, 7, 10, 13, 16]);
    }
}
