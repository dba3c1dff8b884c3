//! Freed pointers through every memory instruction class fault the queue (issue 55). A test
//! binary of its own: a parallel test's allocation could land in the freed range, and a use
//! after free of memory allocated again does not fault on a GPU either.

mod common;

use common::*;

#[test]
fn freed_pointers_fault_through_every_memory_instruction_class() {
    let client = Client::new();
    // SAFETY: the handler keeps no state.
    unsafe { client.hsa.register_system_event_handler(Some(take_fault), core::ptr::null_mut()) }.expect("handler");
    let touch = client.kernel(HOSTILE_KERNELS, "touch.kd");
    let out = client.alloc_u32(1);
    for (class, name) in MEMORY_CLASSES.iter().enumerate() {
        // 1 MiB, so that the host unmaps it at the free; the kernargs are allocated before.
        let pointer = client.hsa.allocate(client.device_pool, 1 << 20).expect("allocation") as u64;
        let kernarg = touch_kernargs(&client, pointer, class, out);
        // SAFETY: nothing uses the allocation but the dispatch that is the test.
        unsafe { client.hsa.free(pointer as *mut u8) }.expect("free");
        touch_faults(&client, &touch, kernarg, &format!("a freed pointer through a {name}"));
    }
}
