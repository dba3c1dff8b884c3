//! The soft runtime's watchdog (`SoftConfig::dispatch_timeout`, issue 55): a dispatch that runs
//! past it is stopped at its waves' next turn and fails its queue with ERROR_EXCEPTION, naming
//! the kernel and the PC. Its own test binary, since the timeout is the runtime's configuration.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_hsa::sys::status;
use aqueduct_soft_hsa as soft;
use common::*;

const TIMEOUT: Duration = Duration::from_millis(300);

fn client() -> Client {
    Client::configured(soft::SoftConfig { queue_min_packets: 4, dispatch_timeout: TIMEOUT, ..Default::default() })
}

#[test]
fn a_dispatch_past_the_watchdog_fails_its_queue_naming_the_kernel_and_the_pc() {
    let client = client();
    static STATUSES: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];
    for (slot, workgroups) in STATUSES.iter().zip([1u32, 64]) {
        let spin = client.kernel(HOSTILE_KERNELS, "spin_until.kd");
        let queue = client.queue_with_callback(16, (slot as *const AtomicU32).cast_mut().cast());
        let flag = client.alloc_u32(1);
        let marks = client.alloc_u32(64 * workgroups as usize);
        let done = client.signal(1);
        let kernarg: Vec<u8> =
            [flag.as_ptr() as u64, marks.as_ptr() as u64].iter().flat_map(|pointer| pointer.to_le_bytes()).collect();
        let kernarg = client.kernargs(&kernarg);
        let started = Instant::now();
        let id = queue.reserve_spinning();
        queue.publish(id, &dispatch_packet(&spin, 64 * workgroups, 64, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
        let deadline = started + Duration::from_secs(30);
        while slot.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let waited = started.elapsed();
        eprintln!("{workgroups} workgroups: the watchdog of {TIMEOUT:?} failed the queue after {waited:?}");
        assert_eq!(slot.load(Ordering::SeqCst), status::ERROR_EXCEPTION, "{workgroups} workgroups");
        assert!(waited >= TIMEOUT, "not before the watchdog's time");
        let (code, detail) = soft::queue_error_detail(queue.raw).expect("queue").expect("an error recorded");
        assert_eq!(code, status::ERROR_EXCEPTION);
        assert!(detail.contains("spin_until") && detail.contains("pc 0x") && detail.contains("watchdog"), "{detail}");
        assert_eq!(client.load(done), 1, "the stopped dispatch does not complete");
        assert!(marks.iter().all(|&word| word == 0), "no work-item got past the spin");
        // SAFETY: the queue is this test's and is not used after.
        unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    }
    // A dispatch within the watchdog's time runs as before.
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue(16);
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 1, 64));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 64, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(out[63], 64);
}
