//! A workgroup saved between its rounds ([`Interrupt::Save`]) and resumed on another thread
//! computes what it computes run straight through, on either tier: the soft runtime saves
//! workgroups to share the pool's threads among queues (`soft-hsa/src/isa_exec.rs`).

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, InterruptFn, Regions, StandaloneImage};
use aqueduct_isa::native::Tier;
use aqueduct_isa::{Interrupt, Ran, Rounds, RunFrom, run_or_save, run_workgroup};

/// Kernels that misbehave on purpose, among them `uneven_barriers` (source beside it).
const HOSTILE_KERNELS: &[u8] = include_bytes!("../../soft-hsa/tests/fixtures/hostile_kernels_gfx1100.hsaco");

const WORKGROUP: u32 = 128;
const GROUPS: u32 = 2;
const ROUNDS: u32 = 3;

/// Runs `uneven_barriers` (two workgroups of four waves; wave w passes w × 3 barriers) on `tier`,
/// each workgroup saved after every round when `save` and resumed on a new thread; returns what
/// the work-items stored and the saves.
fn run_uneven_barriers(tier: Tier, save: bool) -> (Vec<u32>, u32) {
    let image = StandaloneImage::load(HOSTILE_KERNELS).expect("the fixture loads");
    let kernel_object = image.kernel_object("uneven_barriers.kd").expect("the kernel");
    let mut out = vec![u32::MAX; (WORKGROUP * GROUPS) as usize];
    let mut kernargs = (out.as_mut_ptr() as u64).to_le_bytes().to_vec();
    kernargs.extend_from_slice(&ROUNDS.to_le_bytes());
    kernargs.resize(16, 0);
    let packet = KernelDispatchPacket::default();
    let memory = Regions(vec![
        image.range(),
        (out.as_ptr() as u64, 4 * out.len() as u64),
        (kernargs.as_ptr() as u64, kernargs.len() as u64),
        (&packet as *const KernelDispatchPacket as u64, 64),
    ]);
    let kernel = DecodedKernel::load(&memory, kernel_object).expect("kernel");
    let interrupt = |_: &Rounds| save.then_some(Interrupt::Save);
    let mut dispatch = uneven_barriers(&kernel, &kernargs, GROUPS, &interrupt, tier);
    dispatch.packet_address = &packet as *const KernelDispatchPacket as u64;
    let mut saves = 0;
    for group in 0..GROUPS {
        let mut from = RunFrom::Begin([group, 0, 0]);
        loop {
            // Each run on a thread of its own: what a saved workgroup holds moves with it.
            let ran = std::thread::scope(|scope| {
                scope.spawn(|| run_or_save(&dispatch, &memory, from, &mut Vec::new())).join().expect("no panic")
            })
            .expect("the workgroup runs");
            match ran {
                Ran::Ended(_) => break,
                Ran::Saved(saved) => {
                    assert_eq!(saved.workgroup_id(), [group, 0, 0]);
                    saves += 1;
                    from = RunFrom::Resume(saved);
                }
            }
        }
    }
    (out, saves)
}

/// A dispatch of `uneven_barriers` over `groups` workgroups, asking `interrupt` between rounds.
fn uneven_barriers<'a>(
    kernel: &'a DecodedKernel,
    kernargs: &[u8],
    groups: u32,
    interrupt: &'a InterruptFn<'a>,
    tier: Tier,
) -> Dispatch<'a> {
    Dispatch {
        kernel,
        packet_address: 0,
        queue_address: 0,
        kernarg_address: kernargs.as_ptr() as u64,
        dispatch_id: 0,
        grid: [WORKGROUP * groups, 1, 1],
        workgroup: [WORKGROUP as u16, 1, 1],
        group_segment_size: 0,
        private_segment_size: 0,
        instruction_limit: 1 << 24,
        topology: Default::default(),
        realtime: || 0,
        serial: 0,
        interrupt: Some(interrupt),
        tier,
    }
}

fn tiers() -> Vec<Tier> {
    let mut tiers = vec![Tier::Interpreter];
    if aqueduct_isa::native::unavailable().is_none() {
        tiers.push(Tier::Native);
    }
    tiers
}

#[test]
fn a_workgroup_saved_after_every_round_and_resumed_elsewhere_computes_what_it_computes_straight_through() {
    let expected: Vec<u32> = (0..WORKGROUP * GROUPS).map(|item| (item % WORKGROUP) / 32 * ROUNDS).collect();
    for tier in tiers() {
        let (straight, saves) = run_uneven_barriers(tier, false);
        assert_eq!(saves, 0, "{tier:?}: nothing asked to save");
        assert_eq!(straight, expected, "{tier:?}: wave w passes w × {ROUNDS} barriers");
        let (resumed, saves) = run_uneven_barriers(tier, true);
        // Wave 3 passes 9 barriers, each a round of its own at least.
        assert!(saves >= 2 * 9, "{tier:?}: saved {saves} times");
        assert_eq!(resumed, expected, "{tier:?}: saved and resumed");
    }
}

#[test]
fn run_workgroup_resumes_a_saved_workgroup_at_once() {
    // `run_workgroup` is for callers that do not move workgroups: it runs through any save.
    let image = StandaloneImage::load(HOSTILE_KERNELS).expect("the fixture loads");
    let kernel_object = image.kernel_object("uneven_barriers.kd").expect("the kernel");
    let mut out = vec![u32::MAX; WORKGROUP as usize];
    let mut kernargs = (out.as_mut_ptr() as u64).to_le_bytes().to_vec();
    kernargs.extend_from_slice(&ROUNDS.to_le_bytes());
    kernargs.resize(16, 0);
    let memory = Regions(vec![
        image.range(),
        (out.as_ptr() as u64, 4 * out.len() as u64),
        (kernargs.as_ptr() as u64, kernargs.len() as u64),
    ]);
    let kernel = DecodedKernel::load(&memory, kernel_object).expect("kernel");
    let asked = std::sync::atomic::AtomicU32::new(0);
    let interrupt = |_: &Rounds| {
        asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Interrupt::Save)
    };
    for tier in tiers() {
        out.fill(u32::MAX);
        let dispatch = uneven_barriers(&kernel, &kernargs, 1, &interrupt, tier);
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new()).expect("runs");
        let expected: Vec<u32> = (0..WORKGROUP).map(|item| item / 32 * ROUNDS).collect();
        assert_eq!(out, expected, "{tier:?}");
    }
    assert!(asked.into_inner() > 0, "the interrupt was asked");
}
