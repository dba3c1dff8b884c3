//! The calling convention between the soft HSA runtime and host builds of kernels.
//!
//! It lives here, below both `hsa` (which calls kernels) and the crates that build them (the
//! device library, the demo and bench kernels, tests), so none depends on another. A host build
//! is a C-ABI function that runs one whole workgroup per call. Our own kernels are their AMDGPU C
//! source compiled for the host with the work-item shim `builtins/device/aqueduct_kernel.h`,
//! whose `aq_workgroup` and `aq_host_kernel` structs these types mirror field for field (both
//! sides assert the layout).
//!
//! Host builds written in Rust use the safe layer in [`crate::host_build`] on top of these types.
//!
//! The soft runtime keys a host build by its code object's identity
//! (`aqueduct_codeobject::CodeObjectId`) and descriptor symbol, never by symbol alone.

use core::ffi::{CStr, c_char};

use crate::KernelDispatchPacket;

/// What a host build sees for one workgroup (`aq_workgroup` in `aqueduct_kernel.h`).
#[repr(C)]
#[derive(Debug)]
pub struct WorkgroupContext {
    /// The dispatch packet as the packet processor fetched it (what `dispatch_ptr` gives a GPU
    /// kernel).
    pub packet: *const KernelDispatchPacket,
    /// The packet's `kernarg_address`: the kernel reads its arguments at the offsets its code
    /// object's metadata declares.
    pub kernarg: *const u8,
    /// The hidden (implicit) arguments inside the kernarg segment, at the offset of the first
    /// hidden argument the metadata lists; null when the kernel declares none.
    pub implicit_args: *const u8,
    /// Group (LDS) memory private to this workgroup, `group_memory_len` bytes, zeroed on entry.
    pub group_memory: *mut u8,
    pub group_memory_len: u64,
    /// The device's constant-rate counter, what `__builtin_readsteadycounter` reads on a GPU.
    pub steady_counter: unsafe extern "C" fn() -> u64,
    pub workgroup_id: [u32; 3],
    /// The packet's grid size in work-items; the last workgroup on an axis may be partial.
    pub grid_size: [u32; 3],
    /// The packet's workgroup size (work-items per full workgroup).
    pub workgroup_size: [u16; 3],
    /// Set non-zero by a host build that failed this workgroup (a Rust host build's panic,
    /// caught at its C boundary): the runner fails the dispatch, as a trap fails a GPU queue.
    /// A cell, because the kernel holds the context through a shared pointer.
    pub trapped: core::cell::Cell<u16>,
    /// Rings a queue's doorbell (signal handle, packet id), as a kernel's doorbell write reaches
    /// a GPU's command processor: the device library's block processor enqueues packets itself.
    pub ring_doorbell: unsafe extern "C" fn(u64, u64),
}
crate::assert_layout!(WorkgroupContext, size = 88, align = 8);
crate::assert_offset!(WorkgroupContext, ring_doorbell, 80);
crate::assert_offset!(WorkgroupContext, steady_counter, 40);
crate::assert_offset!(WorkgroupContext, workgroup_id, 48);
crate::assert_offset!(WorkgroupContext, grid_size, 60);
crate::assert_offset!(WorkgroupContext, workgroup_size, 72);

/// A `ring_doorbell` for contexts made without a runtime behind them (tests of a single
/// kernel): no queue can be rung there, so a kernel that tries stops the process, loudly.
pub extern "C" fn no_doorbell(signal: u64, packet_id: u64) {
    eprintln!("aqueduct: a kernel rang doorbell {signal:#x} (packet {packet_id}) where no runtime runs queues");
    std::process::abort();
}

impl WorkgroupContext {
    /// Work-items of this workgroup along each axis, clipped at the grid's edge.
    pub fn active_size(&self) -> [u32; 3] {
        core::array::from_fn(|axis| {
            let group = u32::from(self.workgroup_size[axis]);
            let start = self.workgroup_id[axis].saturating_mul(group);
            self.grid_size[axis].saturating_sub(start).min(group)
        })
    }

    /// Reads a little-endian value of type `T` at `offset` in the kernarg segment.
    ///
    /// # Safety
    /// The kernarg segment must hold at least `offset + size_of::<T>()` readable bytes.
    pub unsafe fn kernarg<T: bytemuck::Pod>(&self, offset: usize) -> T {
        // SAFETY: the caller vouches for the extent; `read_unaligned` tolerates any alignment.
        unsafe { self.kernarg.add(offset).cast::<T>().read_unaligned() }
    }
}

std::thread_local! {
    /// What a host build that panicked on this thread said, until the runner takes it: a panic
    /// may not unwind across the C ABI of [`HostBuildFn`], so the Rust trampoline catches it
    /// and leaves it here for the runner to fail the dispatch with.
    static PANICKED: core::cell::RefCell<Option<String>> = const { core::cell::RefCell::new(None) };
}

/// Records that the host build running on this thread panicked, saying `message` (the first
/// since the runner last looked is kept).
pub fn record_host_panic(message: String) {
    PANICKED.with(|panicked| {
        panicked.borrow_mut().get_or_insert(message);
    });
}

/// The panic a host build recorded on this thread since the last call, if any: the runner
/// calls it after each workgroup.
pub fn take_host_panic() -> Option<String> {
    PANICKED.with(|panicked| panicked.borrow_mut().take())
}

/// A host build: runs every work-item of the workgroup `context` describes.
///
/// # Safety
/// The caller passes a context whose kernarg pointer is valid for the kernel's declared kernarg
/// size and whose group memory is valid for `group_memory_len` bytes; the kernel trusts the
/// pointers it finds in its kernargs exactly as GPU code would.
pub type HostBuildFn = unsafe extern "C" fn(context: *const WorkgroupContext);

/// One explicit argument of a host build (`aq_host_arg`): where it reads it in the kernarg
/// segment. The soft runtime compares these with the code object's metadata before binding.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostArg {
    /// NUL-terminated parameter name (code-object metadata of C kernels carries none).
    pub name: *const c_char,
    pub offset: u32,
    pub size: u32,
    /// [`HostArg::POINTER`], [`HostArg::NULLABLE`].
    pub flags: u32,
}
crate::assert_layout!(HostArg, size = 24, align = 8);

// SAFETY: `name` points at a static, immutable string literal (or is null); nothing writes
// through it, so sharing a HostArg between threads is sound.
unsafe impl Send for HostArg {}
// SAFETY: as above.
unsafe impl Sync for HostArg {}

impl HostArg {
    /// A device address (metadata value kind `global_buffer`).
    pub const POINTER: u32 = 1;
    /// A pointer the kernel itself tests for null, so the runner does not refuse a null one.
    pub const NULLABLE: u32 = 2;

    /// A plain value of `size` bytes at `offset` (metadata value kind `by_value`), unnamed.
    pub const fn value(offset: u32, size: u32) -> Self {
        Self { name: core::ptr::null(), offset, size, flags: 0 }
    }

    /// A device address at `offset` (8 bytes, value kind `global_buffer`), unnamed. The runner
    /// refuses a dispatch that passes null here unless it is [`Self::nullable`].
    pub const fn pointer(offset: u32) -> Self {
        Self { name: core::ptr::null(), offset, size: 8, flags: Self::POINTER }
    }

    /// The same argument with its parameter name, which error messages show (code-object
    /// metadata of C kernels carries no names).
    pub const fn named(self, name: &'static CStr) -> Self {
        Self { name: name.as_ptr(), ..self }
    }

    /// The same pointer argument, marked as one the kernel itself tests for null.
    pub const fn nullable(self) -> Self {
        Self { flags: self.flags | Self::NULLABLE, ..self }
    }

    pub fn is_pointer(&self) -> bool {
        self.flags & Self::POINTER != 0
    }

    pub fn is_nullable(&self) -> bool {
        self.flags & Self::NULLABLE != 0
    }

    /// The parameter name, if the host build recorded one.
    pub fn name(&self) -> Option<&'static str> {
        if self.name.is_null() {
            return None;
        }
        // SAFETY: a non-null `name` is a static NUL-terminated literal (see the Sync impl).
        unsafe { CStr::from_ptr(self.name) }.to_str().ok()
    }
}

/// One entry of a C translation unit's host-build table (`aq_host_kernel`).
#[repr(C)]
#[derive(Debug)]
pub struct HostBuildRecord {
    /// NUL-terminated descriptor symbol, `name.kd`.
    pub symbol: *const c_char,
    pub entry: HostBuildFn,
    pub args: *const HostArg,
    pub arg_count: u32,
    /// `sizeof` the kernel's argument struct: the kernarg bytes the entry copies.
    pub args_size: u32,
}
crate::assert_layout!(HostBuildRecord, size = 32, align = 8);

/// A table accessor as the shim's `AQ_HOST_TABLE` defines it: returns the table and its length.
pub type HostBuildTable = unsafe extern "C" fn(count: *mut u32) -> *const HostBuildRecord;

/// One host implementation of a kernel, keyed (with its code object) by the kernel descriptor's
/// symbol (`name.kd`).
#[derive(Clone, Copy, Debug)]
pub struct HostBuild {
    pub symbol: &'static str,
    pub function: HostBuildFn,
    /// The explicit arguments the host build reads, checked against the metadata when it is
    /// registered with the engine and when a code object loads; `None` declares nothing and is
    /// not checked (tests' hand-written kernels that read raw kernargs). Rust host builds made
    /// with [`HostBuild::of`] always declare theirs.
    pub args: Option<&'static [HostArg]>,
}

impl HostBuild {
    /// The kernels of a C host-build table.
    ///
    /// # Safety
    /// `table` must be an `AQ_HOST_TABLE` accessor from a translation unit linked into this
    /// program: its records, symbols and argument arrays are static and never change.
    pub unsafe fn from_table(table: HostBuildTable) -> Vec<HostBuild> {
        let mut count = 0u32;
        // SAFETY: the accessor writes the count and returns a static array of that many records.
        let records = unsafe {
            let first = table(&mut count);
            if first.is_null() || count == 0 { &[][..] } else { core::slice::from_raw_parts(first, count as usize) }
        };
        records
            .iter()
            .map(|record| {
                // SAFETY: the symbol is a static NUL-terminated string literal.
                let symbol = unsafe { CStr::from_ptr(record.symbol) };
                let symbol = symbol.to_str().expect("host build symbols are ASCII");
                let args = if record.arg_count == 0 {
                    &[][..]
                } else {
                    // SAFETY: `args` is a static array of `arg_count` entries.
                    unsafe { core::slice::from_raw_parts(record.args, record.arg_count as usize) }
                };
                HostBuild { symbol, function: record.entry, args: Some(args) }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn zero() -> u64 {
        0
    }

    #[test]
    fn edge_workgroups_are_clipped() {
        let context = WorkgroupContext {
            packet: core::ptr::null(),
            kernarg: core::ptr::null(),
            implicit_args: core::ptr::null(),
            group_memory: core::ptr::null_mut(),
            group_memory_len: 0,
            steady_counter: zero,
            workgroup_id: [3, 0, 0],
            grid_size: [100, 1, 1],
            workgroup_size: [32, 1, 1],
            trapped: core::cell::Cell::new(0),
            ring_doorbell: no_doorbell,
        };
        assert_eq!(context.active_size(), [4, 1, 1]);
    }
}
