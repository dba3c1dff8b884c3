//! The host build of `patch_indirect` (device/blit.c) on host memory: it completes a 64-byte
//! dispatch packet (grid sizes from the workgroup counts, the clamp rule), fills the target's
//! hidden block counts and remainders, publishes the header word last with a release store and
//! acts in work-item 0 only. (The soft runtime refuses null pointers before a kernel runs; that
//! is tested in soft_dispatch.rs.)

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use aqueduct_abi::{FenceScope, PacketHeader, PacketType};
use aqueduct_builtins::{Builtin, DispatchPlan, PatchIndirectArgs, plan_patch_indirect};
use common::{SENTINEL, host_kernel, run_on_cpu, run_workgroup};

/// A dispatch packet slot in a ring: 64 bytes, 64-byte aligned.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Packet([u8; 64]);

/// A hidden-argument block (only its first 24 bytes may change).
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct Implicit([u8; 64]);

/// `header | setup << 16` of a 3-D kernel dispatch with system-scope fences.
fn dispatch_header_word() -> u32 {
    let header = PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::System, FenceScope::System);
    u32::from(header.0) | 3 << 16
}

const INVALID_WORD: u32 = PacketHeader::INVALID.0 as u32;

/// A packet whose header word is INVALID, with the given workgroup sizes, every other byte
/// (including the grid sizes) the sentinel.
fn invalid_packet(workgroup: [u16; 3]) -> Packet {
    let mut bytes = [SENTINEL; 64];
    bytes[0..4].copy_from_slice(&INVALID_WORD.to_le_bytes());
    for (axis, size) in workgroup.into_iter().enumerate() {
        bytes[4 + 2 * axis..][..2].copy_from_slice(&size.to_le_bytes());
    }
    Packet(bytes)
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}

fn u16_at(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes(bytes[offset..offset + 2].try_into().expect("2 bytes"))
}

/// What `patch_indirect` must leave in the packet: `original` with only the header word and the
/// grid sizes changed.
fn expected_packet(original: &Packet, header: u32, grid: [u32; 3]) -> [u8; 64] {
    let mut bytes = original.0;
    bytes[0..4].copy_from_slice(&header.to_le_bytes());
    for (axis, size) in grid.into_iter().enumerate() {
        bytes[12 + 4 * axis..][..4].copy_from_slice(&size.to_le_bytes());
    }
    bytes
}

/// What it must leave in a sentinel-filled hidden-argument block: the block counts at +0..12,
/// zero remainders at +18..24, nothing else changed.
fn expected_implicit(blocks: [u32; 3]) -> [u8; 64] {
    let mut bytes = [SENTINEL; 64];
    for (axis, count) in blocks.into_iter().enumerate() {
        bytes[4 * axis..][..4].copy_from_slice(&count.to_le_bytes());
    }
    bytes[18..24].fill(0);
    bytes
}

/// Runs the planned patch on the host build and returns the packet and hidden arguments after it.
fn patch(workgroup: [u16; 3], counts: [u32; 3], with_implicit: bool) -> (Packet, Implicit) {
    let mut packet = invalid_packet(workgroup);
    let mut implicit = Implicit([SENTINEL; 64]);
    let implicit_address = if with_implicit { implicit.0.as_mut_ptr() as u64 } else { 0 };
    let plan = plan_patch_indirect(
        packet.0.as_mut_ptr() as u64,
        counts.as_ptr() as u64,
        implicit_address,
        dispatch_header_word(),
    )
    .expect("valid patch");
    // SAFETY: the packet, counts and hidden-argument block are live locals of the sizes the plan
    // describes, and nothing else touches them during the call.
    unsafe { run_on_cpu(&plan) };
    (packet, implicit)
}

#[test]
fn grid_is_counts_times_workgroup_and_hidden_args_match() {
    let workgroup = [64, 4, 2];
    let counts = [10, 3, 7];
    let original = invalid_packet(workgroup);
    let (packet, implicit) = patch(workgroup, counts, true);
    let header = dispatch_header_word();
    assert_eq!(u32_at(&packet.0, 0), header, "header word");
    assert_eq!([12, 16, 20].map(|offset| u32_at(&packet.0, offset)), [640, 12, 14], "grid sizes");
    assert_eq!(packet.0, expected_packet(&original, header, [640, 12, 14]));
    assert_eq!([0, 4, 8].map(|offset| u32_at(&implicit.0, offset)), counts, "hidden block counts");
    assert_eq!([18, 20, 22].map(|offset| u16_at(&implicit.0, offset)), [0, 0, 0], "hidden remainders");
    // hidden_group_size (+12..18) and everything past +24 are left alone.
    assert_eq!(implicit.0, expected_implicit(counts));
}

#[test]
fn a_null_implicit_address_writes_only_the_packet() {
    let workgroup = [256, 1, 1];
    let original = invalid_packet(workgroup);
    let (packet, implicit) = patch(workgroup, [5, 1, 1], false);
    assert_eq!(packet.0, expected_packet(&original, dispatch_header_word(), [1280, 1, 1]));
    assert_eq!(implicit.0, [SENTINEL; 64]);
}

#[test]
fn zero_counts_give_an_empty_grid() {
    let (packet, implicit) = patch([64, 1, 1], [0, 1, 1], true);
    assert_eq!([12, 16, 20].map(|offset| u32_at(&packet.0, offset)), [0, 1, 1]);
    assert_eq!(implicit.0, expected_implicit([0, 1, 1]));
    assert_eq!(u32_at(&packet.0, 0), dispatch_header_word());
}

/// Per axis: a count whose grid fits in u32 is kept; one that overflows becomes the largest count
/// whose grid fits (`u32::MAX / group`), so the grid is the largest multiple of the workgroup
/// size in u32 and the hidden block count agrees with it. A zero workgroup size gives grid 0.
#[test]
fn overflowing_counts_clamp_to_the_largest_multiple_that_fits() {
    /// (workgroup sizes, counts, expected grid sizes, expected hidden block counts)
    type Case = ([u16; 3], [u32; 3], [u32; 3], [u32; 3]);
    let cases: [Case; 4] = [
        (
            [64, 0xFFFF, 1],
            [1 << 26, 0x1_0002, u32::MAX],
            [0xFFFF_FFC0, 0xFFFF_FFFF, u32::MAX],
            [(1 << 26) - 1, 0x1_0001, u32::MAX],
        ),
        (
            // Exactly u32::MAX fits and is kept; one workgroup fewer than 2^32 / 64 too.
            [0xFFFF, 64, 3],
            [0x1_0001, (1 << 26) - 1, u32::MAX],
            [0xFFFF_FFFF, 0xFFFF_FFC0, 0xFFFF_FFFF],
            [0x1_0001, (1 << 26) - 1, 0x5555_5555],
        ),
        (
            [1024, 1000, 7],
            [u32::MAX, u32::MAX, u32::MAX],
            [0xFFFF_FC00, 4_294_967_000, 0xFFFF_FFFC],
            [0x3F_FFFF, 4_294_967, 0x2492_4924],
        ),
        (
            // A zero workgroup size never overflows: grid 0, count kept.
            [0, 64, 1],
            [u32::MAX, 2, 3],
            [0, 128, 3],
            [u32::MAX, 2, 3],
        ),
    ];
    for (workgroup, counts, grid, blocks) in cases {
        let original = invalid_packet(workgroup);
        let (packet, implicit) = patch(workgroup, counts, true);
        assert_eq!(packet.0, expected_packet(&original, dispatch_header_word(), grid), "{workgroup:?} x {counts:?}");
        assert_eq!(implicit.0, expected_implicit(blocks), "{workgroup:?} x {counts:?}");
        for axis in 0..3 {
            let group = u64::from(workgroup[axis]);
            assert_eq!(u64::from(grid[axis]), u64::from(blocks[axis]) * group, "exact multiple");
            if group != 0 && blocks[axis] != counts[axis] {
                assert!(u64::from(grid[axis]) + group > u64::from(u32::MAX), "largest");
            }
        }
    }
}

/// Calls the host build for one workgroup with hand-made kernargs and context.
///
/// # Safety
/// The addresses in `args` must be valid for what the kernel does with them.
unsafe fn call(args: PatchIndirectArgs, workgroup_id: [u32; 3], workgroup_size: [u16; 3], grid_size: [u32; 3]) {
    // SAFETY: the kernarg bytes are a full PatchIndirectArgs; the caller vouches for the
    // addresses.
    unsafe {
        run_workgroup(
            host_kernel(Builtin::PatchIndirect),
            bytemuck::bytes_of(&args),
            workgroup_id,
            workgroup_size,
            grid_size,
        )
    }
}

#[test]
fn only_work_item_zero_of_workgroup_zero_acts() {
    let mut packet = invalid_packet([64, 1, 1]);
    let counts = [2u32, 1, 1];
    let mut implicit = Implicit([SENTINEL; 64]);
    let args = PatchIndirectArgs {
        packet: packet.0.as_mut_ptr() as u64,
        counts: counts.as_ptr() as u64,
        implicit_args: implicit.0.as_mut_ptr() as u64,
        header: dispatch_header_word(),
        reserved: 0,
    };
    let original = packet.0;
    let others = [
        ([1, 0, 0], [64, 1, 1], [256, 1, 1]),
        ([0, 1, 0], [64, 1, 1], [64, 4, 1]),
        ([0, 0, 2], [8, 8, 8], [8, 8, 64]),
        // Workgroup 0 of a grid that is empty on one axis launches no work-items.
        ([0, 0, 0], [64, 1, 1], [64, 0, 1]),
    ];
    for (workgroup_id, workgroup_size, grid_size) in others {
        // SAFETY: every address points into a live local of the right size.
        unsafe { call(args, workgroup_id, workgroup_size, grid_size) };
        assert_eq!(packet.0, original, "{workgroup_id:?} of {grid_size:?} wrote");
        assert_eq!(implicit.0, [SENTINEL; 64], "{workgroup_id:?} of {grid_size:?} wrote");
    }
    // A larger grid: the whole of it patches exactly once, as one small grid would.
    let plan = plan_patch_indirect(args.packet, args.counts, args.implicit_args, args.header).expect("valid");
    let large = DispatchPlan { grid_size: 1000, workgroup_size: 64, ..plan };
    // SAFETY: as above.
    unsafe { run_on_cpu(&large) };
    assert_eq!(packet.0, expected_packet(&invalid_packet([64, 1, 1]), args.header, [128, 1, 1]));
    assert_eq!(implicit.0, expected_implicit(counts));
}

/// An observer that acquires the header word must see every other write of the patch: the header
/// is stored last, with release ordering. Each round races a reader thread against the kernel.
#[test]
fn the_header_word_is_published_last() {
    let header = dispatch_header_word();
    for round in 0..200u32 {
        let workgroup = [32, 2, 1];
        let counts = [round + 1, 3, 5];
        let mut packet = invalid_packet(workgroup);
        let mut implicit = Implicit([SENTINEL; 64]);
        // From here until the threads are joined both buffers are accessed only through these
        // addresses.
        let packet_address = packet.0.as_mut_ptr() as usize;
        let implicit_address = implicit.0.as_mut_ptr() as usize;
        let plan = plan_patch_indirect(packet_address as u64, counts.as_ptr() as u64, implicit_address as u64, header)
            .expect("valid");
        let (seen_packet, seen_implicit) = std::thread::scope(|scope| {
            let observer = scope.spawn(move || {
                // SAFETY: the packet is 64-byte aligned and outlives the scope; its header word
                // is only accessed atomically while both threads run (the kernel stores it with
                // __atomic_store_n).
                let word = unsafe { AtomicU32::from_ptr(packet_address as *mut u32) };
                while word.load(Ordering::Acquire) == INVALID_WORD {
                    std::hint::spin_loop();
                }
                // SAFETY: the acquire load saw the kernel's release store, which follows all its
                // other writes, and nothing writes either buffer after it.
                unsafe { ((packet_address as *const [u8; 64]).read(), (implicit_address as *const [u8; 64]).read()) }
            });
            // SAFETY: the buffers are live locals of the sizes the plan describes.
            unsafe { run_on_cpu(&plan) };
            observer.join().expect("observer")
        });
        let grid = [32 * (round + 1), 6, 5];
        assert_eq!(seen_packet, expected_packet(&invalid_packet(workgroup), header, grid), "round {round}");
        assert_eq!(seen_implicit, expected_implicit(counts), "round {round}");
        assert_eq!(packet.0, seen_packet);
        assert_eq!(implicit.0, seen_implicit);
    }
}
