//! User-kernel dispatches: HAL-layout bindings (with offsets) and constants, default and explicit
//! workgroup sizes, grids with a partial last workgroup, multi-dimensional grids, and raw
//! dispatches with hand-built kernargs.

mod common;

use std::time::Duration;

use aqueduct_engine::{Buffer, Dispatch, MemoryKind, RawDispatch, WaitStrategy};
use common::*;

/// Guard word the kernels must never write.
const GUARD: u32 = 0xDEAD_BEEF;

fn guarded(device: &aqueduct_engine::Device, words: usize) -> Buffer {
    host_buffer(device, &GUARD.to_le_bytes().repeat(words))
}

#[test]
fn kernels_follow_the_hal_layout() {
    let engine = engine(WaitStrategy::BarrierValue);
    let kernels = test_kernels(&engine);
    let store = kernels.store_value.hal_layout().unwrap();
    assert_eq!((store.bindings, store.constants), (1, 2));
    let add = kernels.add_from.hal_layout().unwrap();
    assert_eq!((add.bindings, add.constants), (2, 2));
    // One wavefront of the soft gfx1100 agent (wave32) when the kernel has no required size.
    assert_eq!(kernels.store_value.default_workgroup_size(), [32, 1, 1]);
    assert!(kernels.store_value.kernarg_size() >= 16);
    let names: Vec<&str> = kernels.executable.kernel_names().collect();
    assert!(names.contains(&"store_value") && names.contains(&"add_from"), "{names:?}");
    // The descriptor symbol names the same kernel.
    assert_eq!(kernels.executable.kernel("store_value.kd").unwrap().name(), "store_value");
}

#[test]
fn store_value_over_grids_and_workgroup_sizes() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let mut value = 0;
    // (grid, workgroup): single items, partial last workgroups, exact multiples, odd sizes,
    // the largest workgroup, and many workgroups.
    let cases: &[(u32, Option<u16>)] = &[
        (1, None),
        (31, None),
        (32, None),
        (33, None),
        (1000, None),
        (1, Some(1)),
        (7, Some(1)),
        (100, Some(7)),
        (1000, Some(64)),
        (1024, Some(1024)),
        (1025, Some(1024)),
        (4097, Some(256)),
        (65_539, Some(64)),
    ];
    for (case, &(grid, workgroup)) in cases.iter().enumerate() {
        // `count` exceeds the grid, so only the grid bounds the writes: a grid rounded up to a
        // whole workgroup would write past element `grid`.
        let count = grid + 40;
        let offset_words = 3u64 + case as u64;
        let out = guarded(device, count as usize + offset_words as usize + 5);
        let bindings = [out.range(offset_words * 4, u64::from(count) * 4)];
        let base = 1_000_000 * (case as u32 + 1);
        let constants = [base, count];
        let mut dispatch = Dispatch::grid([grid, 1, 1]).bindings(&bindings).constants(&constants);
        if let Some(size) = workgroup {
            dispatch = dispatch.workgroup([size, 1, 1]);
        }
        value += 1;
        queue.dispatch(&kernels.store_value, &dispatch).signal(done.at(value)).submit().unwrap();
        done.wait(value, TIMEOUT).unwrap();
        let words = words(&out.to_vec().unwrap());
        for (index, word) in words.iter().enumerate() {
            let element = index as i64 - offset_words as i64;
            let expected = if (0..i64::from(grid)).contains(&element) { base + element as u32 } else { GUARD };
            assert_eq!(*word, expected, "grid {grid}, workgroup {workgroup:?}: word {index}");
        }
    }
}

#[test]
fn add_from_with_two_bindings_at_offsets() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    const COUNT: u32 = 777;
    let input_words: Vec<u32> = (0..COUNT + 20).map(|index| index * 3 + 11).collect();
    let input = host_buffer(device, &le_bytes(&input_words));
    let out = guarded(device, COUNT as usize + 30);
    // Input from word 5, output from word 9.
    let bindings = [out.range(9 * 4, u64::from(COUNT) * 4), input.range(5 * 4, u64::from(COUNT) * 4)];
    queue
        .dispatch(
            &kernels.add_from,
            &Dispatch::grid([COUNT, 1, 1]).workgroup([128, 1, 1]).bindings(&bindings).constants(&[0x1000_0000, COUNT]),
        )
        .signal(done.at(1))
        .submit()
        .unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let words = words(&out.to_vec().unwrap());
    for (index, word) in words.iter().enumerate() {
        let expected =
            if (9..9 + COUNT as usize).contains(&index) { input_words[index - 9 + 5] + 0x1000_0000 } else { GUARD };
        assert_eq!(*word, expected, "word {index}");
    }
    assert_eq!(&words_of(&input), &input_words, "the input is read, not written");
}

#[test]
fn dependent_dispatches_run_in_order() {
    // Each dispatch reads what the previous one wrote; in relaxed mode a missing barrier bit
    // would let them run in reverse.
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    const COUNT: u32 = 300;
    let a = device.allocate(MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
    let b = device.allocate(MemoryKind::DeviceLocal, u64::from(COUNT) * 4).unwrap();
    let grid = Dispatch::grid([COUNT, 1, 1]).workgroup([64, 1, 1]);
    queue.dispatch(&kernels.store_value, &grid.bindings(&[a.whole()]).constants(&[100, COUNT])).submit().unwrap();
    for round in 0..50u32 {
        let (to, from) = if round % 2 == 0 { (&b, &a) } else { (&a, &b) };
        queue
            .dispatch(&kernels.add_from, &grid.bindings(&[to.whole(), from.whole()]).constants(&[round, COUNT]))
            .submit()
            .unwrap();
    }
    queue.barrier().signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let total: u32 = (0..50).sum();
    let values = words(&a.to_vec().unwrap());
    for (index, value) in values.iter().enumerate() {
        assert_eq!(*value, 100 + index as u32 + total, "element {index}");
    }
}

#[test]
fn multi_dimensional_grids() {
    // The kernels index by the x workgroup id only, so every y/z row writes the same values: the
    // result must still cover exactly the x extent.
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let cases: &[([u32; 3], [u16; 3])] =
        &[([50, 3, 1], [16, 2, 1]), ([33, 2, 5], [8, 1, 2]), ([64, 1, 2], [64, 1, 1]), ([5, 4, 3], [1, 3, 2])];
    for (case, &(grid, workgroup)) in cases.iter().enumerate() {
        let count = grid[0] + 10;
        let out = guarded(device, count as usize);
        let value = case as u64 + 1;
        queue
            .dispatch(
                &kernels.store_value,
                &Dispatch::grid(grid).workgroup(workgroup).bindings(&[out.whole()]).constants(&[7, count]),
            )
            .signal(done.at(value))
            .submit()
            .unwrap();
        done.wait(value, TIMEOUT).unwrap();
        for (index, word) in words(&out.to_vec().unwrap()).iter().enumerate() {
            let expected = if index < grid[0] as usize { 7 + index as u32 } else { GUARD };
            assert_eq!(*word, expected, "grid {grid:?} workgroup {workgroup:?} word {index}");
        }
    }
}

#[test]
fn raw_dispatches_with_hand_built_kernargs() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    const COUNT: u32 = 200;
    let out = guarded(device, COUNT as usize + 8);
    // store_value(out, value, count): out@0, value@8, count@12; only the explicit 16 bytes.
    let mut kernargs = Vec::new();
    kernargs.extend_from_slice(&(out.device_address() + 8).to_le_bytes());
    kernargs.extend_from_slice(&500u32.to_le_bytes());
    kernargs.extend_from_slice(&COUNT.to_le_bytes());
    queue
        .dispatch_raw(
            &kernels.store_value,
            &RawDispatch { grid: [COUNT, 1, 1], workgroup: Some([32, 1, 1]), kernargs: &kernargs },
        )
        .signal(done.at(1))
        .submit()
        .unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let stored = words(&out.to_vec().unwrap());
    for (index, word) in stored.iter().enumerate() {
        let expected = if (2..2 + COUNT as usize).contains(&index) { 500 + index as u32 - 2 } else { GUARD };
        assert_eq!(*word, expected, "store_value word {index}");
    }

    // add_from(out, in, addend, count) with the whole kernarg segment given (tail zeroed) and
    // the default workgroup size.
    let result = guarded(device, COUNT as usize);
    let mut kernargs = vec![0u8; kernels.add_from.kernarg_size() as usize];
    kernargs[0..8].copy_from_slice(&result.device_address().to_le_bytes());
    kernargs[8..16].copy_from_slice(&(out.device_address() + 8).to_le_bytes());
    kernargs[16..20].copy_from_slice(&3u32.to_le_bytes());
    kernargs[20..24].copy_from_slice(&COUNT.to_le_bytes());
    queue
        .dispatch_raw(&kernels.add_from, &RawDispatch { grid: [COUNT, 1, 1], workgroup: None, kernargs: &kernargs })
        .signal(done.at(2))
        .submit()
        .unwrap();
    done.wait(2, TIMEOUT).unwrap();
    for (index, word) in words(&result.to_vec().unwrap()).iter().enumerate() {
        assert_eq!(*word, 503 + index as u32, "add_from word {index}");
    }
}

#[test]
fn a_buffer_dropped_under_a_parked_dispatch_is_freed_once_it_settles() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let gate = device.create_semaphore(0).unwrap();
    let (_, _, before) = device.live_objects();
    let target = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    let address = target.device_address();
    let mut kernargs = Vec::new();
    kernargs.extend_from_slice(&address.to_le_bytes());
    kernargs.extend_from_slice(&1u32.to_le_bytes());
    kernargs.extend_from_slice(&16u32.to_le_bytes());
    // Parked on the host's gate; only its kernargs name `target`, and its handle goes now.
    queue
        .dispatch_raw(&kernels.store_value, &RawDispatch { grid: [16, 1, 1], workgroup: None, kernargs: &kernargs })
        .wait(gate.at(1))
        .signal(done.at(1))
        .submit()
        .unwrap();
    drop(target);
    assert_eq!(device.live_objects().2, before + 1, "freed only once the dispatch settles");
    // Had the memory gone back to the provider, this allocation could take it and see the
    // dispatch's stores.
    let fresh = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    assert_ne!(fresh.device_address(), address, "the parked dispatch's memory was handed out again");
    fresh.write(0, &[0xAB; 64]).unwrap();
    gate.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert!(
        eventually(Duration::from_secs(5), || device.live_objects().2 == before + 1),
        "freed once the dispatch settled"
    );
    assert_eq!(fresh.to_vec().unwrap(), vec![0xAB; 64], "the dispatch wrote where it was told, not here");
}

fn le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le_bytes()).collect()
}

fn words_of(buffer: &Buffer) -> Vec<u32> {
    words(&buffer.to_vec().unwrap())
}
