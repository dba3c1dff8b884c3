//! The soft runtime in `auto` mode (`KernelExecution::Auto`, the default): the host build where
//! one is registered, the gfx11 interpreter otherwise. (Its own test binary: the mode is set
//! once per process, at the soft runtime's first initialization.)

mod common;

use aqueduct_soft_hsa::{KernelExecution, SoftConfig};
use common::{Client, TEST_KERNELS_GFX1100, dispatch_header, dispatch_packet, kernargs_store_value};

fn client() -> Client {
    Client::configured(SoftConfig { kernel_execution: KernelExecution::Auto, ..SoftConfig::default() })
}

fn run(client: &Client, symbol: &str, grid: u32, workgroup: u16, kernargs: &[u8]) {
    let kernel = client.kernel(TEST_KERNELS_GFX1100, symbol);
    let queue = client.queue(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(kernargs);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&kernel, grid, workgroup, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let error = aqueduct_soft_hsa::queue_error_detail(queue.raw).expect("queue");
    assert_eq!(client.wait_eq(done, 0, 30_000), 0, "{symbol}: {error:?}");
}

#[test]
fn a_kernel_without_a_host_build_runs_through_the_interpreter() {
    let client = client();
    // `no_cpu_twin` has no host build: in `host` mode its dispatch faults the queue naming it
    // (host_mode.rs); here the interpreter runs its machine code.
    let out = client.alloc_u32(32);
    let kernargs = (out.as_mut_ptr() as u64).to_le_bytes();
    run(&client, "no_cpu_twin.kd", 32, 32, &kernargs);
    assert!(out.iter().all(|&word| word == 7), "{out:?}");
}

#[test]
fn a_kernel_with_a_host_build_still_runs_it() {
    let client = client();
    let out = client.alloc_u32(100);
    // The host build reads only the explicit arguments; the machine code would also read the
    // hidden workgroup size, which these kernargs leave out, so only the host build computes
    // `value + i` for work-items past the first workgroup.
    run(&client, "store_value.kd", 100, 32, &kernargs_store_value(out.as_mut_ptr(), 40, 100));
    assert!(out.iter().enumerate().all(|(i, &word)| word == 40 + i as u32), "{out:?}");
}

#[test]
fn auto_is_the_default_mode() {
    // Unset (as in this test's environment unless a caller forces a mode), the variable means
    // `auto`.
    if std::env::var_os("AQUEDUCT_SOFT_EXEC").is_none() {
        assert_eq!(KernelExecution::from_env(), KernelExecution::Auto);
    }
    assert_eq!(KernelExecution::default(), KernelExecution::Auto);
}
