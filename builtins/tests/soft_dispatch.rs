//! End to end on the soft HSA runtime: the device library selected for the default soft agent
//! (gfx1100) is loaded, the host build of its C source is registered for it, and host plans run as
//! real dispatch packets. Every byte of each buffer is checked against a Rust reference, including
//! the guard bytes around the range, which must keep the sentinel.

mod common;

use aqueduct_builtins::{
    Builtin, CopyArgs, DispatchPlan, FillArgs, Kernargs, MAX_GRID_SIZE, PatchIndirectArgs, TimestampArgs,
    UPDATE_INLINE_MAX_BYTES, plan_copy, plan_fill, plan_patch_indirect, plan_timestamp, plan_update_copied,
    plan_update_inline,
};
use common::{Client, SENTINEL, source_byte};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

const SIZES: [usize; 11] = [0, 1, 3, 4, 15, 16, 17, 255, 256, 1000, 4099];
const MAX_OFFSET: usize = 16;
/// Untouchable bytes on each side of every range.
const GUARD: usize = 32;

fn slot_size(max_length: usize) -> usize {
    (GUARD + MAX_OFFSET + max_length + GUARD).next_multiple_of(64)
}

/// Checks one slot: `range` holds `expected(k)` for its k-th byte; everything else the sentinel.
fn check_slot(slot: &[u8], range: core::ops::Range<usize>, expected: impl Fn(usize) -> u8, what: &str) {
    for (index, byte) in slot.iter().enumerate() {
        let want = if range.contains(&index) { expected(index - range.start) } else { SENTINEL };
        assert_eq!(*byte, want, "{what}: byte {index} (range {range:?})");
    }
}

#[test]
fn the_soft_agent_gets_the_gfx11_generic_library() {
    let client = Client::new();
    assert_eq!(client.isa, "amdgcn-amd-amdhsa--gfx1100");
    assert_eq!(client.library.target, "gfx1100");
    for builtin in Builtin::ALL {
        assert!(client.kernel(builtin).kernarg_segment_size as usize >= builtin.kernarg_size(), "{builtin}");
    }
}

#[test]
fn fills_across_sizes_offsets_and_pattern_widths() {
    let client = Client::new();
    let mut kernels_seen = std::collections::BTreeSet::new();
    for width in [1usize, 2, 4, 8] {
        // Pattern bytes 01 02 .. 08: never the sentinel, and each byte says its phase.
        let pattern = (0..width).fold(0u64, |pattern, k| pattern | ((k as u64 + 1) << (8 * k)));
        let slot = slot_size(SIZES[SIZES.len() - 1] * width);
        let cases: Vec<(usize, usize)> =
            SIZES.iter().flat_map(|&size| (0..=MAX_OFFSET).map(move |offset| (size * width, offset))).collect();
        let arena = client.alloc(slot * cases.len());
        assert_eq!(arena.as_ptr() as usize % 64, 0, "arena alignment");
        arena.fill(SENTINEL);
        let plans: Vec<DispatchPlan> = cases
            .iter()
            .enumerate()
            .map(|(case, &(length, offset))| {
                let target = arena[case * slot + GUARD + offset..].as_ptr() as u64;
                plan_fill(target, length as u64, pattern, width as u8).expect("valid fill")
            })
            .collect();
        run_recording_kernels(&client, &plans, &mut kernels_seen);
        for (case, &(length, offset)) in cases.iter().enumerate() {
            let start = GUARD + offset;
            check_slot(
                &arena[case * slot..][..slot],
                start..start + length,
                |k| (k % width) as u8 + 1,
                &format!("fill width {width} length {length} offset {offset} via {}", plans[case].kernel),
            );
        }
    }
    let fills = [Builtin::FillX1, Builtin::FillX2, Builtin::FillX4, Builtin::FillX8, Builtin::FillBlockX16];
    assert_eq!(kernels_seen, fills.into_iter().collect(), "every fill kernel ran");
}

#[test]
fn copies_across_sizes_and_both_alignments() {
    let client = Client::new();
    let slot = slot_size(SIZES[SIZES.len() - 1]);
    let per_size = (MAX_OFFSET + 1) * (MAX_OFFSET + 1);
    let sources = client.alloc(slot * per_size);
    let targets = client.alloc(slot * per_size);
    let mut kernels_seen = std::collections::BTreeSet::new();
    for (size_index, &length) in SIZES.iter().enumerate() {
        for (index, byte) in sources.iter_mut().enumerate() {
            *byte = source_byte(size_index, index);
        }
        targets.fill(SENTINEL);
        let cases: Vec<(usize, usize)> =
            (0..=MAX_OFFSET).flat_map(|from| (0..=MAX_OFFSET).map(move |to| (from, to))).collect();
        let plans: Vec<DispatchPlan> = cases
            .iter()
            .enumerate()
            .map(|(case, &(from, to))| {
                let source = sources[case * slot + GUARD + from..].as_ptr() as u64;
                let target = targets[case * slot + GUARD + to..].as_ptr() as u64;
                plan_copy(source, target, length as u64).expect("valid copy")
            })
            .collect();
        run_recording_kernels(&client, &plans, &mut kernels_seen);
        for (case, &(from, to)) in cases.iter().enumerate() {
            let source = &sources[case * slot + GUARD + from..][..length];
            let start = GUARD + to;
            check_slot(
                &targets[case * slot..][..slot],
                start..start + length,
                |k| source[k],
                &format!("copy length {length} from +{from} to +{to} via {}", plans[case].kernel),
            );
        }
    }
    let copies = [
        Builtin::CopyX1,
        Builtin::CopyBlockX4,
        Builtin::CopyBlockX8,
        Builtin::CopyBlockX16,
        Builtin::CopyBlockUnalignedX16,
    ];
    assert_eq!(kernels_seen, copies.into_iter().collect(), "every copy kernel ran");
}

#[test]
fn capped_grids_still_cover_long_ranges() {
    let client = Client::new();
    // Longer than MAX_GRID_SIZE elements for each kernel, odd offsets and lengths.
    let length = MAX_GRID_SIZE as usize * 16 + 4099;
    let buffer = client.alloc(2 * GUARD + length + 64);
    let source_area = client.alloc(length + 64);
    buffer.fill(SENTINEL);
    for (index, byte) in source_area.iter_mut().enumerate() {
        *byte = source_byte(99, index);
    }
    let target = &buffer[GUARD + 1..];
    let fill = plan_fill(target.as_ptr() as u64, length as u64, 0x5A, 1).expect("valid");
    assert_eq!((fill.kernel, fill.grid_size), (Builtin::FillX1, MAX_GRID_SIZE));
    client.run(&[fill]);
    check_slot(buffer, GUARD + 1..GUARD + 1 + length, |_| 0x5A, "long byte fill");

    let copy =
        plan_copy(source_area[3..].as_ptr() as u64, buffer[GUARD + 1..].as_ptr() as u64, length as u64).expect("valid");
    assert_eq!((copy.kernel, copy.grid_size), (Builtin::CopyBlockUnalignedX16, MAX_GRID_SIZE));
    client.run(&[copy]);
    check_slot(buffer, GUARD + 1..GUARD + 1 + length, |k| source_area[3 + k], "long unaligned copy");

    let aligned = length / 16 * 16;
    let copy = plan_copy(source_area.as_ptr() as u64, buffer[GUARD..].as_ptr() as u64, aligned as u64).expect("valid");
    assert_eq!((copy.kernel, copy.grid_size), (Builtin::CopyBlockX16, MAX_GRID_SIZE));
    buffer.fill(SENTINEL);
    client.run(&[copy]);
    check_slot(buffer, GUARD..GUARD + aligned, |k| source_area[k], "long block copy");
}

#[test]
fn inline_and_copied_updates() {
    let client = Client::new();
    let slot = slot_size(4099);
    let lengths = [0, 1, 7, 8, 63, 64, 65, 191, UPDATE_INLINE_MAX_BYTES];
    let arena = client.alloc(slot * (lengths.len() * 3 + 1));
    arena.fill(SENTINEL);
    let data: Vec<u8> = (0..4099).map(|index| source_byte(7, index)).collect();
    let mut plans = Vec::new();
    let mut expected = Vec::new();
    for (case, &length) in lengths.iter().enumerate() {
        for (offset_index, offset) in [0usize, 3, 8].into_iter().enumerate() {
            let slot_index = case * 3 + offset_index;
            let target = arena[slot_index * slot + GUARD + offset..].as_ptr() as u64;
            plans.push(plan_update_inline(target, &data[..length]).expect("fits inline"));
            expected.push((slot_index, GUARD + offset, length));
        }
    }
    // A copied update: the bytes already sit in device-visible memory.
    let source_area = client.alloc(4099);
    source_area.copy_from_slice(&data);
    let bounce_slot = lengths.len() * 3;
    let target = arena[bounce_slot * slot + GUARD + 5..].as_ptr() as u64;
    plans.push(plan_update_copied(source_area.as_ptr() as u64, target, 4099).expect("valid"));
    expected.push((bounce_slot, GUARD + 5, 4099));

    client.run(&plans);
    for (slot_index, start, length) in expected {
        check_slot(
            &arena[slot_index * slot..][..slot],
            start..start + length,
            |k| data[k],
            &format!("update of {length} at +{start}"),
        );
    }
}

/// The soft runtime's HSA system timestamp (`HSA_SYSTEM_INFO_TIMESTAMP`).
fn system_timestamp(client: &Client) -> u64 {
    let mut value = 0u64;
    // SAFETY: TIMESTAMP is a u64 attribute and `value` is one.
    let status = unsafe {
        (client.hsa.api().hsa_system_get_info)(
            aqueduct_hsa::sys::system_info::TIMESTAMP,
            (&mut value as *mut u64).cast(),
        )
    };
    assert_eq!(status, aqueduct_hsa::sys::status::SUCCESS);
    value
}

/// The timestamp kernel reads the steady counter the soft runtime passes in, which is its HSA
/// system timestamp clock.
/// One clock: host time (the system domain), a dispatch's signal timestamps and the values the
/// timestamp kernel writes (device ticks, converted through
/// `hsa_amd_profiling_convert_tick_to_system_domain`) fall on one axis, in submission order.
#[test]
fn host_time_signal_times_and_kernel_timestamps_share_one_axis() {
    let client = Client::new();
    // The client's packets carry no barrier bit, so only a strict queue runs them in submission
    // order (the default, concurrent, may run them at once).
    aqueduct_soft_hsa::set_queue_mode(client.queue(), aqueduct_soft_hsa::ExecutionMode::Strict).expect("strict");
    // SAFETY: table call on the client's live queue.
    let enabled = unsafe { (client.hsa.api().hsa_amd_profiling_set_profiler_enabled)(client.queue(), 1) };
    assert_eq!(enabled, 0);
    let stamps = client.alloc(64);
    stamps.fill(SENTINEL);
    let before = client.hsa.system_timestamp().expect("host time");
    let plans: Vec<DispatchPlan> =
        (0..4).map(|index| plan_timestamp(stamps[index * 8..].as_ptr() as u64).expect("valid")).collect();
    let done = client.submit(&plans);
    // SAFETY: table call on a live signal.
    let value = unsafe {
        (client.hsa.api().hsa_signal_wait_scacquire)(
            done,
            aqueduct_hsa::sys::enums::SIGNAL_CONDITION_EQ,
            0,
            60_000_000_000,
            0,
        )
    };
    assert_eq!(value, 0);
    let after = client.hsa.system_timestamp().expect("host time");
    let mut time = aqueduct_hsa::sys::hsa_amd_profiling_dispatch_time_t::default();
    // SAFETY: valid out-pointer; `done` was the last packet's completion signal.
    let status = unsafe { (client.hsa.api().hsa_amd_profiling_get_dispatch_time)(client.agent, done, &mut time) };
    assert_eq!(status, 0);
    let raw: Vec<u64> =
        (0..4).map(|index| u64::from_le_bytes(stamps[index * 8..][..8].try_into().expect("8 bytes"))).collect();
    let kernel: Vec<u64> =
        raw.iter().map(|tick| client.hsa.tick_to_system(client.agent, *tick).expect("converts")).collect();
    // The device clock ticks every 10 ns: a converted value may trail the system clock by one tick.
    let tick = 1_000_000_000 / aqueduct_soft_hsa::clock::DEVICE_FREQUENCY;
    assert!(before <= time.start + tick, "host {before} before the last packet's start {}", time.start);
    assert!(kernel.windows(2).all(|pair| pair[0] <= pair[1]), "{kernel:?}");
    assert!(kernel[3] <= time.end && time.start <= time.end && time.end <= after, "{kernel:?} {time:?} {after}");
    assert!(before <= kernel[0] + tick, "{before} {kernel:?}");
    // Unconverted, the kernel's values are not host times at all.
    assert!(raw[0] > after, "device ticks {raw:?} read as system ticks would be in the future");
    assert!(stamps[32..].iter().all(|byte| *byte == SENTINEL));
    client.hsa.signal_destroy(done).expect("signal destroy");
}

/// `patch_indirect` as a real dispatch: the code object's symbol resolves to its host build,
/// which completes a packet in device memory (not in a ring: the soft runtime only runs it).
#[test]
fn patch_indirect_completes_a_packet_in_device_memory() {
    let client = Client::new();
    let arena = client.alloc(256);
    assert_eq!(arena.as_ptr() as usize % 64, 0, "arena alignment");
    arena.fill(SENTINEL);
    let (packet, rest) = arena.split_at_mut(64);
    let (counts, implicit) = rest.split_at_mut(64);
    let invalid = u32::from(aqueduct_abi::PacketHeader::INVALID.0);
    packet[0..4].copy_from_slice(&invalid.to_le_bytes());
    for (axis, size) in [64u16, 2, 1].into_iter().enumerate() {
        packet[4 + 2 * axis..][..2].copy_from_slice(&size.to_le_bytes());
    }
    for (axis, count) in [9u32, 1 << 31, 4].into_iter().enumerate() {
        counts[4 * axis..][..4].copy_from_slice(&count.to_le_bytes());
    }
    let header = 0x0003_1602;
    let plan = plan_patch_indirect(packet.as_ptr() as u64, counts.as_ptr() as u64, implicit.as_ptr() as u64, header)
        .expect("valid");
    client.run(&[plan]);
    let word = |bytes: &[u8], offset: usize| u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"));
    assert_eq!(word(packet, 0), header);
    // 2^31 workgroups of 2 overflow u32: clamped to u32::MAX / 2 of them.
    let clamped = u32::MAX / 2;
    assert_eq!([12, 16, 20].map(|offset| word(packet, offset)), [576, clamped * 2, 4]);
    assert!(packet[10..12].iter().chain(&packet[24..]).all(|byte| *byte == SENTINEL));
    assert_eq!([0, 4, 8].map(|offset| word(implicit, offset)), [9, clamped, 4]);
    assert!(implicit[12..18].iter().all(|byte| *byte == SENTINEL));
    assert_eq!(&implicit[18..24], &[0; 6]);
    assert!(implicit[24..].iter().all(|byte| *byte == SENTINEL));
}

/// Random fills and copies on the soft runtime against a reference computed on the host.
#[test]
fn random_fill_then_copy_matches_reference() {
    let client = Client::new();
    let mut runner = TestRunner::new(ProptestConfig { cases: 64, ..ProptestConfig::default() });
    let inputs = (0usize..64, 0u32..4, 0usize..3000, any::<u64>(), 0usize..64, 0usize..64, 0usize..6000);
    let outcome =
        runner.run(&inputs, |(fill_offset, width_log2, elements, pattern, copy_from, copy_to, copy_length)| {
            let width = 1usize << width_log2;
            let pattern = if width == 8 { pattern } else { pattern & ((1u64 << (8 * width)) - 1) };
            let fill_length = elements * width;
            let size = 2 * GUARD + 64 + fill_length.max(copy_length);
            let device = client.alloc(size);
            let source_area = client.alloc(size);
            device.fill(SENTINEL);
            for (index, byte) in source_area.iter_mut().enumerate() {
                *byte = source_byte(copy_length, index);
            }
            let mut reference = device.to_vec();
            let start = GUARD + fill_offset;
            for k in 0..fill_length {
                reference[start + k] = pattern.to_le_bytes()[k % width];
            }
            let fill = plan_fill(device[start..].as_ptr() as u64, fill_length as u64, pattern, width as u8)
                .map_err(|error| TestCaseError::fail(error.to_string()))?;
            client.run(&[fill]);
            prop_assert_eq!(&device[..], &reference[..], "fill via {}", fill.kernel);

            let target_start = GUARD + copy_to;
            let copy_length = copy_length.min(size - target_start).min(size - copy_from);
            reference[target_start..target_start + copy_length]
                .copy_from_slice(&source_area[copy_from..copy_from + copy_length]);
            let source = source_area[copy_from..].as_ptr() as u64;
            let copy = plan_copy(source, device[target_start..].as_ptr() as u64, copy_length as u64)
                .map_err(|error| TestCaseError::fail(error.to_string()))?;
            client.run(&[copy]);
            prop_assert_eq!(&device[..], &reference[..], "copy via {}", copy.kernel);
            Ok(())
        });
    outcome.unwrap_or_else(|failure| panic!("{failure}"));
}

/// Runs `plans` and records which kernels actually dispatched work, so a test can assert that
/// every kernel variant it meant to cover really ran.
fn run_recording_kernels(client: &Client, plans: &[DispatchPlan], seen: &mut std::collections::BTreeSet<Builtin>) {
    seen.extend(plans.iter().filter(|plan| !plan.is_noop()).map(|plan| plan.kernel));
    client.run(plans);
}

/// The required sweep: every device-library kernel, from its C source, through the soft runtime,
/// over odd sizes, misaligned offsets and multi-workgroup and capped grids, each checked byte for
/// byte (guards included) against a plain Rust reference.
#[test]
fn every_device_library_kernel_runs_from_its_c_source_against_a_rust_reference() {
    let client = Client::new();
    let mut seen = std::collections::BTreeSet::new();
    // (kernel, element bytes): element counts and byte offsets below respect each kernel's
    // alignment rule; the unaligned and byte kernels get odd offsets.
    let fills = [
        (Builtin::FillX1, 1usize),
        (Builtin::FillX2, 2),
        (Builtin::FillX4, 4),
        (Builtin::FillX8, 8),
        (Builtin::FillBlockX16, 16),
    ];
    let copies = [
        (Builtin::CopyX1, 1usize),
        (Builtin::CopyBlockX4, 4),
        (Builtin::CopyBlockX8, 8),
        (Builtin::CopyBlockX16, 16),
        (Builtin::CopyBlockUnalignedX16, 1),
    ];
    let counts = [1usize, 3, 63, 64, 65, 1001];
    let pattern = 0x8877_6655_4433_2211u64;
    let slot = slot_size(1001 * 16);
    for &(kernel, width) in &fills {
        let offsets: &[usize] = if width == 1 { &[0, 1, 7] } else { &[0, width] };
        let cases: Vec<(usize, usize)> =
            counts.iter().flat_map(|&count| offsets.iter().map(move |&offset| (count, offset))).collect();
        let arena = client.alloc(slot * cases.len());
        arena.fill(SENTINEL);
        let plans: Vec<DispatchPlan> = cases
            .iter()
            .enumerate()
            .map(|(case, &(count, offset))| {
                let target = arena[case * slot + GUARD + offset..].as_ptr() as u64;
                let args = FillArgs { target, element_count: count as u64, pattern };
                hand_plan(kernel, Kernargs::Fill(args), count)
            })
            .collect();
        run_recording_kernels(&client, &plans, &mut seen);
        for (case, &(count, offset)) in cases.iter().enumerate() {
            let start = GUARD + offset;
            check_slot(
                &arena[case * slot..][..slot],
                start..start + count * width,
                |k| pattern.to_le_bytes()[k % 8],
                &format!("{kernel}: {count} elements at +{offset}"),
            );
        }
    }
    for &(kernel, width) in &copies {
        let offsets: &[(usize, usize)] =
            if width == 1 { &[(0, 0), (1, 5), (7, 2)] } else { &[(0, 0), (width, 2 * width)] };
        let cases: Vec<(usize, (usize, usize))> =
            counts.iter().flat_map(|&count| offsets.iter().map(move |&offsets| (count, offsets))).collect();
        let sources = client.alloc(slot * cases.len());
        let targets = client.alloc(slot * cases.len());
        for (index, byte) in sources.iter_mut().enumerate() {
            *byte = source_byte(width, index);
        }
        targets.fill(SENTINEL);
        // copy_block_unaligned_x16 counts bytes and runs one work-item per 16-byte block.
        let work_items = |count: usize| {
            if kernel == Builtin::CopyBlockUnalignedX16 { count.div_ceil(16) } else { count }
        };
        let plans: Vec<DispatchPlan> = cases
            .iter()
            .enumerate()
            .map(|(case, &(count, (from, to)))| {
                let args = CopyArgs {
                    source: sources[case * slot + GUARD + from..].as_ptr() as u64,
                    target: targets[case * slot + GUARD + to..].as_ptr() as u64,
                    element_count: count as u64,
                };
                hand_plan(kernel, Kernargs::Copy(args), work_items(count))
            })
            .collect();
        run_recording_kernels(&client, &plans, &mut seen);
        for (case, &(count, (from, to))) in cases.iter().enumerate() {
            let source = &sources[case * slot + GUARD + from..][..count * width];
            let start = GUARD + to;
            check_slot(
                &targets[case * slot..][..slot],
                start..start + count * width,
                |k| source[k],
                &format!("{kernel}: {count} elements +{from} -> +{to}"),
            );
        }
    }
    // update_inline at odd offsets and lengths, including the full payload.
    let data: Vec<u8> = (0..UPDATE_INLINE_MAX_BYTES).map(|k| source_byte(3, k)).collect();
    let lengths = [1usize, 5, 64, 65, UPDATE_INLINE_MAX_BYTES];
    let arena = client.alloc(slot * lengths.len());
    arena.fill(SENTINEL);
    let plans: Vec<DispatchPlan> = lengths
        .iter()
        .enumerate()
        .map(|(case, &length)| {
            let target = arena[case * slot + GUARD + case * 3 + 1..].as_ptr() as u64;
            plan_update_inline(target, &data[..length]).expect("fits inline")
        })
        .collect();
    run_recording_kernels(&client, &plans, &mut seen);
    for (case, &length) in lengths.iter().enumerate() {
        let start = GUARD + case * 3 + 1;
        check_slot(&arena[case * slot..][..slot], start..start + length, |k| data[k], "update");
    }
    // timestamp at an odd address, from a grid of several workgroups: one 8-byte write.
    let stamps = client.alloc(64);
    stamps.fill(SENTINEL);
    let target = stamps[GUARD - 13..].as_ptr() as u64;
    let before = system_timestamp(&client);
    run_recording_kernels(
        &client,
        &[hand_plan(Builtin::Timestamp, Kernargs::Timestamp(TimestampArgs { target }), 200)],
        &mut seen,
    );
    // The kernel writes device ticks; on the host's axis through the provider's conversion.
    let raw = u64::from_le_bytes(stamps[GUARD - 13..][..8].try_into().expect("8 bytes"));
    let stamp = client.hsa.tick_to_system(client.agent, raw).expect("converts");
    let tick = 1_000_000_000 / aqueduct_soft_hsa::clock::DEVICE_FREQUENCY;
    assert!(before <= stamp + tick && stamp <= system_timestamp(&client), "{before} {stamp}");
    assert!(stamps[..GUARD - 13].iter().chain(&stamps[GUARD - 5..]).all(|byte| *byte == SENTINEL));
    // patch_indirect without hidden arguments (its one nullable pointer), grid of 3 workgroups.
    let arena = client.alloc(128);
    arena.fill(SENTINEL);
    let (packet, counts) = arena.split_at_mut(64);
    packet[0..4].copy_from_slice(&u32::from(aqueduct_abi::PacketHeader::INVALID.0).to_le_bytes());
    packet[4..10].copy_from_slice(&[3, 0, 1, 0, 1, 0]);
    counts[..12].copy_from_slice(&[5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    let args = PatchIndirectArgs {
        packet: packet.as_ptr() as u64,
        counts: counts.as_ptr() as u64,
        implicit_args: 0,
        header: 0x0001_1602,
        reserved: 0,
    };
    let mut patch = hand_plan(Builtin::PatchIndirect, Kernargs::PatchIndirect(args), 192);
    patch.workgroup_size = 64;
    run_recording_kernels(&client, &[patch], &mut seen);
    let word = |offset: usize| u32::from_le_bytes(packet[offset..offset + 4].try_into().expect("4"));
    assert_eq!([word(0), word(12), word(16), word(20)], [0x0001_1602, 15, 1, 1]);
    assert!(packet[10..12].iter().chain(&packet[24..]).all(|byte| *byte == SENTINEL));

    // The block processor has its own suite (tests/block_processor.rs): its reference is the
    // packets it enqueues on another queue, not bytes of one buffer.
    let swept = Builtin::ALL.into_iter().filter(|builtin| *builtin != Builtin::BlockProcessor).collect();
    assert_eq!(seen, swept, "every device-library kernel ran");
}

/// A plan made by hand (not by the planner), so the sweep can pick each kernel and grid itself:
/// `work_items` is capped at MAX_GRID_SIZE, in workgroups of 64 (the kernels grid-stride).
fn hand_plan(kernel: Builtin, kernargs: Kernargs, work_items: usize) -> DispatchPlan {
    DispatchPlan { kernel, kernargs, grid_size: work_items.clamp(1, MAX_GRID_SIZE as usize) as u32, workgroup_size: 64 }
}

/// The runner refuses a null `global_buffer` argument with HSA_STATUS_ERROR_MEMORY_APERTURE_
/// VIOLATION (what a GPU reports) before the C kernel could crash the process, naming the kernel,
/// the code object and the argument.
#[test]
fn a_null_pointer_argument_faults_the_queue_naming_kernel_and_argument() {
    // The interpreter (`AQUEDUCT_SOFT_EXEC=isa`) stores through the null pointer as a GPU does:
    // a memory fault, which without a system event handler ends the process, as ROCr's does.
    // This refusal belongs to host builds.
    if aqueduct_soft_hsa::KernelExecution::from_env() == aqueduct_soft_hsa::KernelExecution::Isa {
        return;
    }
    let cases = [
        (Builtin::FillX1, Kernargs::Fill(FillArgs { target: 0, element_count: 4, pattern: 1 }), "target"),
        (Builtin::CopyBlockX8, Kernargs::Copy(CopyArgs { source: 0x1000, target: 0, element_count: 1 }), "target"),
        (Builtin::Timestamp, Kernargs::Timestamp(TimestampArgs { target: 0 }), "target"),
        (
            Builtin::PatchIndirect,
            Kernargs::PatchIndirect(PatchIndirectArgs {
                packet: 0x1000,
                counts: 0,
                implicit_args: 0,
                header: 0,
                reserved: 0,
            }),
            "counts",
        ),
    ];
    for (kernel, kernargs, argument) in cases {
        // Each fault kills its queue: a fresh client per case.
        let client = Client::new();
        let (status, detail) = client.run_faulting(&hand_plan(kernel, kernargs, 1));
        assert_eq!(status, aqueduct_hsa::sys::status::ERROR_MEMORY_APERTURE_VIOLATION, "{detail}");
        for part in [kernel.symbol(), "gfx1100", &format!("`{argument}`"), "null"] {
            assert!(detail.contains(part), "{kernel}: `{part}` missing from: {detail}");
        }
    }
}
