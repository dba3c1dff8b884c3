//! The memory-order variants of the signal and queue-index operations the drop-in exports
//! (`soft/orders.rs`), each called through its guarded export: every one does its operation
//! (the order is the atomic's), wakes or does not wake as ROCr's does, and ignores a handle that
//! names nothing.

mod common;

use aqueduct_hsa::sys::{enums, hsa_signal_t, hsa_signal_value_t};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

type Rmw = unsafe extern "C" fn(hsa_signal_t, hsa_signal_value_t);

#[test]
fn every_signal_read_modify_write_order_does_its_operation() {
    let client = Client::new();
    // (operation, start, operand, expected)
    let cases: [(&str, [Rmw; 7], i64, i64, i64); 5] = [
        (
            "add",
            [
                hsa::hsa_signal_add_relaxed,
                hsa::hsa_signal_add_scacquire,
                hsa::hsa_signal_add_acquire,
                hsa::hsa_signal_add_screlease,
                hsa::hsa_signal_add_release,
                hsa::hsa_signal_add_acq_rel,
                hsa::hsa_signal_add_scacq_screl,
            ],
            5,
            3,
            8,
        ),
        (
            "subtract",
            [
                hsa::hsa_signal_subtract_relaxed,
                hsa::hsa_signal_subtract_scacquire,
                hsa::hsa_signal_subtract_acquire,
                hsa::hsa_signal_subtract_screlease,
                hsa::hsa_signal_subtract_release,
                hsa::hsa_signal_subtract_acq_rel,
                hsa::hsa_signal_subtract_scacq_screl,
            ],
            5,
            3,
            2,
        ),
        (
            "and",
            [
                hsa::hsa_signal_and_relaxed,
                hsa::hsa_signal_and_scacquire,
                hsa::hsa_signal_and_acquire,
                hsa::hsa_signal_and_screlease,
                hsa::hsa_signal_and_release,
                hsa::hsa_signal_and_acq_rel,
                hsa::hsa_signal_and_scacq_screl,
            ],
            0b1100,
            0b1010,
            0b1000,
        ),
        (
            "or",
            [
                hsa::hsa_signal_or_relaxed,
                hsa::hsa_signal_or_scacquire,
                hsa::hsa_signal_or_acquire,
                hsa::hsa_signal_or_screlease,
                hsa::hsa_signal_or_release,
                hsa::hsa_signal_or_acq_rel,
                hsa::hsa_signal_or_scacq_screl,
            ],
            0b1100,
            0b1010,
            0b1110,
        ),
        (
            "xor",
            [
                hsa::hsa_signal_xor_relaxed,
                hsa::hsa_signal_xor_scacquire,
                hsa::hsa_signal_xor_acquire,
                hsa::hsa_signal_xor_screlease,
                hsa::hsa_signal_xor_release,
                hsa::hsa_signal_xor_acq_rel,
                hsa::hsa_signal_xor_scacq_screl,
            ],
            0b1100,
            0b1010,
            0b0110,
        ),
    ];
    for (name, variants, start, operand, expected) in cases {
        for (order, variant) in variants.into_iter().enumerate() {
            let signal = client.signal(start);
            // SAFETY: a live signal.
            unsafe { variant(signal, operand) };
            assert_eq!(client.load(signal), expected, "{name}, order {order}");
            // A handle that names no signal changes nothing and does not crash.
            // SAFETY: the soft runtime range-checks handles.
            unsafe { variant(hsa_signal_t { handle: 0x10 }, operand) };
        }
    }
}

#[test]
fn exchange_and_compare_and_swap_return_the_previous_value_in_every_order() {
    let client = Client::new();
    type Exchange = unsafe extern "C" fn(hsa_signal_t, hsa_signal_value_t) -> hsa_signal_value_t;
    type Cas = unsafe extern "C" fn(hsa_signal_t, hsa_signal_value_t, hsa_signal_value_t) -> hsa_signal_value_t;
    let exchanges: [Exchange; 7] = [
        hsa::hsa_signal_exchange_relaxed,
        hsa::hsa_signal_exchange_scacquire,
        hsa::hsa_signal_exchange_acquire,
        hsa::hsa_signal_exchange_screlease,
        hsa::hsa_signal_exchange_release,
        hsa::hsa_signal_exchange_scacq_screl,
        hsa::hsa_signal_exchange_acq_rel,
    ];
    for exchange in exchanges {
        let signal = client.signal(4);
        // SAFETY: a live signal.
        assert_eq!(unsafe { exchange(signal, 9) }, 4);
        assert_eq!(client.load(signal), 9);
    }
    let swaps: [Cas; 7] = [
        hsa::hsa_signal_cas_relaxed,
        hsa::hsa_signal_cas_scacquire,
        hsa::hsa_signal_cas_acquire,
        hsa::hsa_signal_cas_screlease,
        hsa::hsa_signal_cas_release,
        hsa::hsa_signal_cas_scacq_screl,
        hsa::hsa_signal_cas_acq_rel,
    ];
    for cas in swaps {
        let signal = client.signal(4);
        // SAFETY: a live signal.
        assert_eq!(unsafe { cas(signal, 3, 7) }, 4, "a failed swap returns the value");
        assert_eq!(client.load(signal), 4, "and changes nothing");
        // SAFETY: as above.
        assert_eq!(unsafe { cas(signal, 4, 7) }, 4);
        assert_eq!(client.load(signal), 7);
    }
}

#[test]
fn deprecated_loads_stores_waits_and_silent_stores() {
    let client = Client::new();
    let signal = client.signal(1);
    // SAFETY (every call): a live signal.
    unsafe {
        hsa::hsa_signal_store_release(signal, 6);
        assert_eq!(hsa::hsa_signal_load_acquire(signal), 6);
        hsa::hsa_signal_silent_store_relaxed(signal, 2);
        assert_eq!(hsa::hsa_signal_load_acquire(signal), 2);
        hsa::hsa_signal_silent_store_screlease(signal, 0);
        assert_eq!(hsa::hsa_signal_load_acquire(signal), 0);
        for wait in [hsa::hsa_signal_wait_relaxed, hsa::hsa_signal_wait_acquire] {
            // Already satisfied: returns the value at once; a timed-out wait returns the value too.
            assert_eq!(wait(signal, enums::SIGNAL_CONDITION_EQ, 0, 1_000_000, enums::WAIT_STATE_ACTIVE), 0);
            assert_eq!(wait(signal, enums::SIGNAL_CONDITION_EQ, 5, 1_000_000, enums::WAIT_STATE_ACTIVE), 0);
        }
    }
}

#[test]
fn every_queue_index_order_reads_and_writes_the_amd_queue() {
    let client = Client::new();
    let queue = client.queue_with_callback(64, core::ptr::null_mut());
    let q = queue.raw.cast_const();
    // SAFETY (every call): a live queue; the processor is idle (no doorbell rung), so only this
    // test moves its indices.
    unsafe {
        for (step, add) in [
            hsa::hsa_queue_add_write_index_scacquire,
            hsa::hsa_queue_add_write_index_acquire,
            hsa::hsa_queue_add_write_index_screlease,
            hsa::hsa_queue_add_write_index_release,
            hsa::hsa_queue_add_write_index_scacq_screl,
            hsa::hsa_queue_add_write_index_acq_rel,
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(add(q, 2), 2 * step as u64, "returns the index before");
        }
        for load in [hsa::hsa_queue_load_write_index_scacquire, hsa::hsa_queue_load_write_index_acquire] {
            assert_eq!(load(q), 12);
        }
        for (step, cas) in [
            hsa::hsa_queue_cas_write_index_relaxed,
            hsa::hsa_queue_cas_write_index_scacquire,
            hsa::hsa_queue_cas_write_index_acquire,
            hsa::hsa_queue_cas_write_index_screlease,
            hsa::hsa_queue_cas_write_index_release,
            hsa::hsa_queue_cas_write_index_acq_rel,
        ]
        .into_iter()
        .enumerate()
        {
            let current = 12 + step as u64;
            assert_eq!(cas(q, current + 100, 0), current, "a failed swap returns the index");
            assert_eq!(cas(q, current, current + 1), current);
        }
        for (value, store) in [
            hsa::hsa_queue_store_write_index_relaxed,
            hsa::hsa_queue_store_write_index_screlease,
            hsa::hsa_queue_store_write_index_release,
        ]
        .into_iter()
        .enumerate()
        {
            store(q, 40 + value as u64);
            assert_eq!(hsa::hsa_queue_load_write_index_relaxed(q), 40 + value as u64);
        }
        // The read index: what the processor publishes, stored back by hand here.
        for (value, store) in [
            hsa::hsa_queue_store_read_index_relaxed,
            hsa::hsa_queue_store_read_index_screlease,
            hsa::hsa_queue_store_read_index_release,
        ]
        .into_iter()
        .enumerate()
        {
            store(q, value as u64);
            for load in [hsa::hsa_queue_load_read_index_relaxed, hsa::hsa_queue_load_read_index_acquire] {
                assert_eq!(load(q), value as u64);
            }
        }
        // A pointer that names no queue: 0, and nothing written.
        let stranger = 0x40usize as *const aqueduct_hsa::sys::hsa_queue_t;
        assert_eq!(hsa::hsa_queue_add_write_index_acq_rel(stranger, 1), 0);
        hsa::hsa_queue_store_write_index_release(stranger, 9);
        assert_eq!(hsa::hsa_queue_load_read_index_acquire(stranger), 0);
    }
}
