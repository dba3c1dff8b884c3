//! A host build of HIP's own device-to-device blit kernel, so that HIP's device-to-device
//! `hipMemcpy` runs on the drop-in.
//!
//! HIP (ROCclr) copies between device buffers with its blit kernels, which it compiles from
//! OpenCL C with comgr when a device opens and loads through `hsa_executable_*`. The soft
//! runtime runs a kernel only through a host build registered for its code object, so without
//! these a device-to-device copy faults its queue naming `__amd_rocclr_copyBuffer`.
//!
//! - The code object: what Debian's `libamdhip64-5` 5.2.3 builds (with `libamd-comgr2` 5.2.3)
//!   for gfx1030, the newest target HIP 5.2.3 supports. Its identity is [`ROCCLR_BLITS_GFX1030`];
//!   another HIP or comgr build produces other bytes, and its copies fault loudly as before.
//!   `tests/soft_drop_in.rs` runs a HIP program against the drop-in, which fails if the identity
//!   no longer matches.
//! - The semantics are ROCclr's `__amd_copyBuffer` (ROCm device libraries,
//!   `opencl/src/misc/amdblit.cl`): one element per work-item, indexed by the global id; ROCclr
//!   launches blits with a zero global offset. HIP 5.2.3 copies between device buffers with it,
//!   aligned or not (the HIP test's aligned copy goes through it too).
//! - Each argument struct is compared with the code object's metadata when it binds (the soft
//!   runtime's layout check), so a layout that differs is refused, never misread.
//! - The program's other kernels (the aligned copy, the fills behind `hipMemset`, the rectangle
//!   copies, the stream operations) have no host build: dispatching one faults its queue, naming
//!   the kernel.

use aqueduct_abi::host_build::{DevicePtr, HostKernel, Workgroup};
use aqueduct_abi::{SoftKernel, kernel_args};
use aqueduct_codeobject::CodeObjectId;

/// The identity (`CodeObjectId::of`) of the blit code object Debian's HIP 5.2.3 builds for
/// gfx1030.
pub const ROCCLR_BLITS_GFX1030: CodeObjectId = CodeObjectId(0x38fa_706a_95c7_7fe7);

kernel_args! {
    /// `__amd_rocclr_copyBuffer(uchar *srcI, uchar *dstI, ulong srcOrigin, ulong dstOrigin,
    /// ulong size, uint remain)`
    pub struct CopyBufferArgs {
        pub src: DevicePtr<u8>,
        pub dst: DevicePtr<u8>,
        pub src_origin: u64,
        pub dst_origin: u64,
        pub size: u64,
        pub remain: u32,
    }
}

/// `size` elements from `src + src_origin` to `dst + dst_origin`: bytes when `remain` is 8,
/// otherwise 32-bit words, the last of which carries only `remain` bytes.
pub struct CopyBuffer;

impl HostKernel for CopyBuffer {
    const SYMBOL: &'static str = "__amd_rocclr_copyBuffer.kd";
    type Args = CopyBufferArgs;

    fn workgroup(group: &mut Workgroup<'_, CopyBufferArgs>) {
        let args = *group.args();
        let src = args.src.as_ptr().wrapping_add(args.src_origin as usize);
        let dst = args.dst.as_ptr().wrapping_add(args.dst_origin as usize);
        for item in group.work_items() {
            let id = u64::from(item.global_id()[0]);
            if id >= args.size {
                continue;
            }
            let id = id as usize;
            let (offset, bytes) = match args.remain {
                8 => (id, 1),
                _ if (id as u64) < args.size - 1 => (id * 4, 4),
                remain => (id * 4, remain as usize),
            };
            // SAFETY: ROCclr binds buffers that hold `size` elements past each origin; work-items
            // copy disjoint elements.
            unsafe { core::ptr::copy(src.add(offset), dst.add(offset), bytes) };
        }
    }
}

/// The host builds, for registration under [`ROCCLR_BLITS_GFX1030`].
pub const HOST_BUILDS: [SoftKernel; 1] = [SoftKernel::of::<CopyBuffer>()];
