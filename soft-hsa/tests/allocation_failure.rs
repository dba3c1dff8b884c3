//! An allocation the host refuses while a dispatch starts ends as ROCr ends a dispatch it cannot
//! give scratch to: the queue's error callback gets OUT_OF_RESOURCES, and the process goes on (it
//! had aborted on a failed allocation). The allocator of this test binary refuses allocations of
//! 1 MiB or more while `REFUSING` is set, as a host out of memory would.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use aqueduct_hsa::sys::status;
use common::*;

struct Refusing;

static REFUSING: AtomicBool = AtomicBool::new(false);
const REFUSED_FROM: usize = 1 << 20;

fn refused(size: usize) -> bool {
    size >= REFUSED_FROM && REFUSING.load(Ordering::SeqCst)
}

// SAFETY: every call is the system allocator's, or a null return, which `GlobalAlloc` allows
// for a failed allocation.
unsafe impl GlobalAlloc for Refusing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
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
        if refused(size) {
            return core::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(pointer, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Refusing = Refusing;

/// The most scratch a gfx11 wave32 work-item can have (`hostile_packets.rs` holds the limit):
/// 8 MiB a wave, past the refused size.
const GFX11_WAVE32_SCRATCH_PER_LANE: u32 = 256 * ((1 << 15) - 1) / 32;

#[test]
fn scratch_the_host_cannot_allocate_fails_the_queue_with_out_of_resources() {
    let client = Client::new();
    let store = client.kernel(patched_code_object(TEST_KERNELS_GFX1100, "store_value", |_| {}), "store_value.kd");
    for refuse in [true, false] {
        static STATUSES: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];
        let slot = &STATUSES[usize::from(refuse)];
        let queue = client.queue_with_callback(16, (slot as *const AtomicU32).cast_mut().cast());
        let out = client.alloc_u32(64);
        let done = client.signal(1);
        let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 1, 64));
        let mut packet = dispatch_packet(&store, 64, 64, kernarg, done);
        packet.private_segment_size = GFX11_WAVE32_SCRATCH_PER_LANE;
        REFUSING.store(refuse, Ordering::SeqCst);
        let id = queue.reserve_spinning();
        queue.publish(id, &packet, dispatch_header(true), packet.setup);
        queue.ring(id);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while client.load(done) != 0 && slot.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        REFUSING.store(false, Ordering::SeqCst);
        if refuse {
            assert_eq!(slot.load(Ordering::SeqCst), status::ERROR_OUT_OF_RESOURCES, "the queue's error");
            assert_eq!(client.load(done), 1, "the dispatch does not complete");
            assert!(out.iter().all(|&word| word == 0), "nothing ran");
            let (_, detail) = aqueduct_soft_hsa::queue_error_detail(queue.raw).expect("queue").expect("error recorded");
            assert!(detail.contains("could not allocate"), "{detail}");
        } else {
            assert_eq!(client.wait_eq(done, 0, 30_000), 0, "the control completes");
            assert_eq!(slot.load(Ordering::SeqCst), 0);
            assert_eq!(out[63], 64);
        }
        // SAFETY: the queue is this test's and is not used after.
        unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    }
}
