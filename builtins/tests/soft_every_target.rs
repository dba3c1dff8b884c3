//! Every prebuilt code object is selected for, loads on, and runs (its host build, registered for
//! that code object's bytes) on a soft agent of a matching ISA. The soft runtime's agent list is
//! process-wide, so this file is its own test binary.

mod common;

use aqueduct_builtins::{plan_copy, plan_fill, plan_timestamp, plan_update_inline};
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig, configure};
use common::{Client, SENTINEL, source_byte};

/// (agent ISA, wavefront size, the embedded target it must get).
const AGENTS: [(&str, u32, &str); 10] = [
    ("amdgcn-amd-amdhsa--gfx900:xnack-", 64, "gfx9-generic"),
    ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", 64, "gfx90a"),
    ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack+", 64, "gfx942"),
    ("amdgcn-amd-amdhsa--gfx1010:xnack-", 32, "gfx10-1-generic"),
    ("amdgcn-amd-amdhsa--gfx1030", 32, "gfx1030"),
    ("amdgcn-amd-amdhsa--gfx1031", 32, "gfx10-3-generic"),
    ("amdgcn-amd-amdhsa--gfx1100", 32, "gfx1100"),
    ("amdgcn-amd-amdhsa--gfx1103", 32, "gfx11-generic"),
    ("amdgcn-amd-amdhsa--gfx1151", 32, "gfx11-generic"),
    ("amdgcn-amd-amdhsa--gfx1201", 32, "gfx12-generic"),
];

#[test]
fn each_embedded_target_runs_on_a_matching_soft_agent() {
    configure(SoftConfig {
        agents: AGENTS.iter().map(|(isa, wave, _)| SoftAgentConfig::with_isa(isa, *wave)).collect(),
        // Host builds run every target; the interpreter runs gfx11 only (soft_dispatch.rs runs
        // the gfx1100 library through it when AQUEDUCT_SOFT_EXEC=isa).
        kernel_execution: aqueduct_soft_hsa::KernelExecution::Host,
        ..SoftConfig::default()
    });
    for (index, (isa, _, expected)) in AGENTS.into_iter().enumerate() {
        let client = Client::for_agent(index);
        assert_eq!(client.isa, isa);
        assert_eq!(client.library.target, expected, "{isa}");

        let length = 1000;
        let buffer = client.alloc(4 * length);
        buffer.fill(SENTINEL);
        let (fill_area, rest) = buffer.split_at_mut(length);
        let (copy_area, rest) = rest.split_at_mut(length);
        let (update_area, stamp_area) = rest.split_at_mut(length);
        let source: Vec<u8> = (0..length).map(|k| source_byte(index, k)).collect();
        let source_area = client.alloc(length);
        source_area.copy_from_slice(&source);
        client.run(&[
            plan_fill(fill_area[1..].as_ptr() as u64, 996, 0x0102, 2).expect("valid"),
            plan_copy(source_area[3..].as_ptr() as u64, copy_area[5..].as_ptr() as u64, 990).expect("valid"),
            plan_update_inline(update_area[7..].as_ptr() as u64, &source[..150]).expect("valid"),
            plan_timestamp(stamp_area.as_ptr() as u64).expect("valid"),
        ]);
        for (k, byte) in fill_area.iter().enumerate() {
            let want = if (1..997).contains(&k) { [0x02, 0x01][(k - 1) % 2] } else { SENTINEL };
            assert_eq!(*byte, want, "{isa}: fill byte {k}");
        }
        for (k, byte) in copy_area.iter().enumerate() {
            let want = if (5..995).contains(&k) { source[k - 5 + 3] } else { SENTINEL };
            assert_eq!(*byte, want, "{isa}: copy byte {k}");
        }
        for (k, byte) in update_area.iter().enumerate() {
            let want = if (7..157).contains(&k) { source[k - 7] } else { SENTINEL };
            assert_eq!(*byte, want, "{isa}: update byte {k}");
        }
        assert_ne!(&stamp_area[..8], &[SENTINEL; 8], "{isa}: timestamp written");
        assert!(stamp_area[8..].iter().all(|byte| *byte == SENTINEL), "{isa}: timestamp stays in its 8 bytes");
    }
}
