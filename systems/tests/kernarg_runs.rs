//! Kernarg patching copies a range of rows in runs (one `memcpy` per run of rows that lie in the
//! ring as they lie in the arena): every row's segment, with its update bytes and the pointer to
//! them, must land at its own reservation, across the ring's wrap and around program-less gaps.

use aqueduct_abi::DispatchTemplate;
use aqueduct_components::directory::CrossQueueWait;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::submission::KERNARG_GRANULE;
use aqueduct_systems::strategy::BarrierValue;
use aqueduct_systems::{QueueState, admission, kernarg};

mod common;

/// A row's bytes as update: its segment (`len` bytes, each `seed + offset`) and, when `update`
/// is set, that many update bytes whose address goes in at offset 8 of the segment.
struct RowBytes {
    segment: Vec<u8>,
    update: Vec<u8>,
}

fn template() -> DispatchTemplate {
    DispatchTemplate {
        kernel_object: 0x1000,
        grid: [1, 1, 1],
        workgroup: [1, 1, 1],
        dimensions: 3,
        group_segment_size: 0,
        private_segment_size: 0,
    }
}

/// Stages a raw dispatch (and, for some, update bytes) or a barrier per entry of `shapes`:
/// `(segment length, update length)`, `None` for a barrier.
fn stage(queue: &mut QueueState, shapes: &[Option<(usize, usize)>]) -> Vec<Option<RowBytes>> {
    let mut enqueued_rows = Vec::new();
    for (index, shape) in shapes.iter().enumerate() {
        let row = queue.rows.push();
        let mut writer = queue.rows.writer(row);
        let Some((len, update_len)) = *shape else {
            enqueued_rows.push(None);
            continue;
        };
        let seed = (index as u8).wrapping_mul(37).wrapping_add(1);
        let segment: Vec<u8> = (0..len).map(|offset| seed.wrapping_add(offset as u8)).collect();
        writer.raw_dispatch(template(), &segment, len as u32, 16);
        let update: Vec<u8> = (0..update_len).map(|offset| seed ^ (offset as u8)).collect();
        if !update.is_empty() {
            writer.place_update_bytes(&update, 8);
        }
        enqueued_rows.push(Some(RowBytes { segment, update }));
    }
    enqueued_rows
}

/// Admits and patches the pending rows; checks every admitted row's bytes at its reservation.
fn patch_and_check(queue: &mut QueueState, expected: &[Option<RowBytes>]) -> usize {
    let first = queue.rows.front;
    admission::admit_pending::<BarrierValue>(&mut queue.admission());
    kernarg::patch_admitted(&mut queue.rows);
    let admitted = (queue.rows.pass.admitted_end - first) as usize;
    for (row, bytes) in (first..).zip(&expected[..admitted]) {
        let Some(bytes) = bytes else { continue };
        let slot = queue.rows.slot(row);
        let address = queue.rows.columns.reservation[slot].kernarg_address;
        let recipe = queue.rows.columns.kernargs[slot];
        assert_eq!(address % KERNARG_GRANULE, 0, "row {row}'s segment starts on the granule");
        // SAFETY: admission reserved the row's ring bytes from `address`; nothing else writes them.
        let landed = unsafe { core::slice::from_raw_parts(address as *const u8, bytes.segment.len()) };
        let mut segment = bytes.segment.clone();
        if !bytes.update.is_empty() {
            let update_address = address + recipe.update_offset();
            segment[8..16].copy_from_slice(&update_address.to_le_bytes());
            // SAFETY: as above: the update bytes follow the segment within the reservation.
            let update = unsafe { core::slice::from_raw_parts(update_address as *const u8, bytes.update.len()) };
            assert_eq!(update, &bytes.update[..], "row {row}'s update bytes");
        }
        assert_eq!(landed, &segment[..], "row {row}'s segment at {address:#x}");
    }
    admitted
}

#[test]
fn every_row_lands_at_its_reservation_across_the_wrap() {
    let capacity = 4096;
    let mut rig = common::rig_sized(CrossQueueWait::BarrierValue, capacity);
    let base = rig.kernarg_base;
    let queue = &mut rig.state;
    // Start near the ring's end, so the range's spans wrap to its start part way through.
    queue.kernargs = KernargRing::starting_at(base, capacity, capacity - 300);
    let shapes = [
        Some((40, 0)),
        None,
        Some((100, 24)),
        Some((24, 0)),
        Some((200, 100)),
        None,
        Some((64, 0)),
        Some((120, 8)),
        Some((16, 0)),
    ];
    let expected = stage(queue, &shapes);
    assert_eq!(patch_and_check(queue, &expected), shapes.len(), "every row fits the ring");
    let addresses: Vec<u64> = (0..shapes.len() as u64)
        .filter(|&row| shapes[row as usize].is_some())
        .map(|row| queue.rows.columns.reservation[queue.rows.slot(row)].kernarg_address)
        .collect();
    assert!(
        addresses.windows(2).any(|pair| pair[1] < pair[0]) && addresses.contains(&base),
        "the range wraps to the ring's start: {addresses:x?}"
    );
}

#[test]
fn rows_enqueued_in_two_passes_land_where_each_pass_put_them() {
    let mut rig = common::rig_sized(CrossQueueWait::BarrierValue, 1 << 16);
    let queue = &mut rig.state;
    let first = stage(queue, &[Some((48, 16)), Some((80, 0)), None]);
    assert_eq!(patch_and_check(queue, &first), 3);
    (0..3).for_each(|_| queue.rows.pop_front());
    queue.rows.release_spans();
    // The arena's front moved; the second pass's runs start from its live bytes.
    let second = stage(queue, &[None, Some((8, 0)), Some((256, 64)), Some((32, 32))]);
    assert_eq!(patch_and_check(queue, &second), 4);
}
