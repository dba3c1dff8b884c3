//! The bench kernels (`kernels/bench.c`) and their CPU twins for the soft runtime.

use aqueduct_abi::{KernelFault, SoftKernel, WorkgroupContext};

/// Built from `kernels/bench.c` by `kernels/regen.sh`.
pub const BENCH_CODE_OBJECT: &[u8] = include_bytes!("../../kernels/bench_gfx11-generic.hsaco");

/// Binding counts with a `bindings_N` kernel (0 uses `noop`).
pub const BINDING_COUNTS: [usize; 5] = [0, 4, 16, 64, 256];

unsafe fn noop(_context: &WorkgroupContext) -> Result<(), KernelFault> {
    Ok(())
}

/// `tiny(u32* out, const u32* in, u32 a, u32 b)`: out[0] = in[0] + a + b.
unsafe fn tiny(context: &WorkgroupContext) -> Result<(), KernelFault> {
    if context.workgroup_id != [0, 0, 0] {
        return Ok(());
    }
    // SAFETY: the dispatcher passes tiny's kernarg segment; both pointers name live u32s.
    unsafe {
        let (out, input) = (context.kernarg::<u64>(0) as *mut u32, context.kernarg::<u64>(8) as *const u32);
        let (a, b) = (context.kernarg::<u32>(16), context.kernarg::<u32>(20));
        out.write(input.read().wrapping_add(a).wrapping_add(b));
    }
    Ok(())
}

/// `bindings_N(u32* p0, …)`: increments the first word of every binding.
unsafe fn bindings<const N: usize>(context: &WorkgroupContext) -> Result<(), KernelFault> {
    if context.workgroup_id != [0, 0, 0] {
        return Ok(());
    }
    for index in 0..N {
        // SAFETY: the kernarg segment holds N binding pointers, each to at least one u32.
        unsafe {
            let pointer = context.kernarg::<u64>(8 * index) as *mut u32;
            pointer.write(pointer.read().wrapping_add(1));
        }
    }
    Ok(())
}

pub const BENCH_CPU_KERNELS: [SoftKernel; 6] = [
    SoftKernel { symbol: "noop.kd", function: noop },
    SoftKernel { symbol: "tiny.kd", function: tiny },
    SoftKernel { symbol: "bindings_4.kd", function: bindings::<4> },
    SoftKernel { symbol: "bindings_16.kd", function: bindings::<16> },
    SoftKernel { symbol: "bindings_64.kd", function: bindings::<64> },
    SoftKernel { symbol: "bindings_256.kd", function: bindings::<256> },
];
