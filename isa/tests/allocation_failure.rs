//! A dispatch whose waves' scratch or LDS the host cannot allocate fails with
//! [`ExecError::OutOfResources`] on either tier; the process goes on. The allocator of this test
//! binary refuses any one allocation of 1 GiB or more, as a host out of memory would, without
//! the test needing that much.

use std::alloc::{GlobalAlloc, Layout, System};

use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Regions};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

/// The system allocator, refusing (null) any allocation of `REFUSED_FROM` bytes or more.
struct Refusing;

const REFUSED_FROM: usize = 1 << 30;

// SAFETY: every call is the system allocator's, or a null return, which `GlobalAlloc` allows
// for a failed allocation.
unsafe impl GlobalAlloc for Refusing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= REFUSED_FROM {
            return core::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on (every pointer came from `System`).
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if size >= REFUSED_FROM {
            return core::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(pointer, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Refusing = Refusing;

const S_ENDPGM: u32 = 0xBF80_0000 | 48 << 16;
const S_CODE_END: u32 = 0xBF80_0000 | 31 << 16;

fn tiers() -> Vec<Tier> {
    let mut tiers = vec![Tier::Interpreter];
    if native::unavailable().is_none() {
        tiers.push(Tier::Native);
    }
    tiers
}

/// Runs a one-wave `s_endpgm` kernel (wave32, or wave64) asking for `private` bytes of scratch
/// per work-item and `group` bytes of LDS.
fn run_asking(wave32: bool, private: u32, group: u32, tier: Tier) -> Result<u64, ExecError> {
    let mut words = vec![0u32; 16];
    words[4] = 64; // kernel_code_entry_byte_offset, low half
    words[14] = if wave32 { 1 << 10 } else { 0 }; // kernel_code_properties
    words.extend_from_slice(&[S_ENDPGM, S_CODE_END]);
    let memory = Regions(vec![(words.as_ptr() as u64, words.len() as u64 * 4)]);
    let kernel = DecodedKernel::load(&memory, words.as_ptr() as u64).expect("the kernel decodes");
    let lanes = if wave32 { 32 } else { 64 };
    let dispatch = Dispatch {
        group_segment_size: group,
        private_segment_size: private,
        instruction_limit: 1 << 20,
        tier,
        ..Dispatch::new(&kernel, [lanes, 1, 1], [lanes as u16, 1, 1])
    };
    run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new())
}

#[test]
fn scratch_the_host_cannot_allocate_is_out_of_resources() {
    for tier in tiers() {
        for wave32 in [true, false] {
            // 64 MiB a lane: 2 GiB a wave32 wave's half, refused.
            match run_asking(wave32, 64 << 20, 0, tier) {
                Err(ExecError::OutOfResources(reason)) => assert!(reason.contains("scratch"), "{reason}"),
                other => panic!("{tier:?}, wave32 {wave32}: expected OutOfResources, got {other:?}"),
            }
            // The control: 64 KiB a lane (2 MiB a half) runs.
            assert_eq!(run_asking(wave32, 64 << 10, 0, tier).map_err(|error| error.to_string()), Ok(1));
        }
    }
}

#[test]
fn lds_the_host_cannot_allocate_is_out_of_resources() {
    for tier in tiers() {
        match run_asking(true, 0, 1 << 31, tier) {
            Err(ExecError::OutOfResources(reason)) => assert!(reason.contains("LDS"), "{reason}"),
            other => panic!("{tier:?}: expected OutOfResources, got {other:?}"),
        }
        assert_eq!(run_asking(true, 0, 64 << 10, tier).map_err(|error| error.to_string()), Ok(1));
    }
}
