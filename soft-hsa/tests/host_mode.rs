//! The soft runtime in `host` mode (`KernelExecution::Host`): only registered host builds run.
//! (Its own test binary: the mode is set once per process, at the soft runtime's first
//! initialization; the default is `auto`, tested in isa_auto.rs.)

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_hsa::sys::status;
use aqueduct_soft_hsa::{self as soft, KernelExecution, SoftConfig};
use common::*;

#[test]
fn a_kernel_without_a_host_build_loads_but_faults_naming_itself() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let config = SoftConfig { kernel_execution: KernelExecution::Host, queue_min_packets: 4, ..SoftConfig::default() };
    let client = Client::configured(config);
    let kernel = client.kernel(TEST_KERNELS_GFX1100, "no_cpu_twin.kd");
    let queue = client.queue_with_callback(16, (&STATUS as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&(out.as_mut_ptr() as u64).to_le_bytes());
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&kernel, 64, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let deadline = Instant::now() + Duration::from_secs(10);
    while STATUS.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(STATUS.load(Ordering::SeqCst), status::ERROR_INVALID_CODE_SYMBOL);
    let (_, detail) = soft::queue_error_detail(queue.raw).expect("queue").expect("error");
    assert!(detail.contains("no_cpu_twin.kd") && detail.contains("no CPU implementation"), "{detail}");
}
