//! Executables loaded through the HSA table: compatibility checked first, descriptors per kernel.

mod common;

use aqueduct_hsa::{Executable, ExecutableError};
use common::*;

#[test]
fn descriptors_carry_what_a_dispatch_needs() {
    let client = Client::new();
    let executable = Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    assert_eq!(executable.target().to_string(), "gfx1100");
    let names: Vec<_> = executable.kernels().iter().map(|kernel| kernel.name.as_str()).collect();
    assert_eq!(names, ["store_value", "add_from", "no_cpu_twin", "accumulate", "no_way_to_run"]);
    let store = executable.kernel("store_value").expect("by name");
    assert_eq!(executable.kernel("store_value.kd").expect("by symbol"), store);
    assert_ne!(store.kernel_object, 0);
    assert_eq!(store.kernarg_alignment, 8);
    assert!(store.kernarg_size >= 16, "explicit args end at 16, hidden args follow");
    assert_eq!(store.wavefront_size, 32);
    assert_eq!(store.default_workgroup_size(), [32, 1, 1]);
    assert_eq!(store.args[1].offset, 8);
    // The descriptor's kernel object is the one the raw table reports.
    let raw = client.hsa.kernel_symbol(executable.handle(), client.agent, "store_value.kd").expect("symbol");
    assert_eq!(raw.kernel_object, store.kernel_object);
}

#[test]
fn accumulate_lists_exactly_its_four_explicit_args_on_both_targets() {
    let client = Client::new();
    // The gfx90a object cannot load on the gfx1100 soft agent, so read its metadata directly.
    for code_object in [TEST_KERNELS_GFX1100, TEST_KERNELS_GFX90A] {
        let parsed = aqueduct_codeobject::CodeObject::parse(code_object).expect("parses");
        let kernel = parsed.kernels().iter().find(|kernel| kernel.name == "accumulate").expect("accumulate");
        assert_eq!(kernel.kernarg_segment_size, 24, "out@0, in@8, scale@16, count@20 and no hidden args");
        assert_eq!(kernel.kernarg_segment_align, 8);
        let layout: Vec<_> = kernel.args.iter().map(|arg| (arg.offset, arg.size, arg.value_kind.as_str())).collect();
        assert_eq!(
            layout,
            [(0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 4, "by_value"), (20, 4, "by_value")]
        );
        assert!(kernel.args.iter().all(|arg| !arg.value_kind.is_hidden()));
    }
    let executable = Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let accumulate = executable.kernel("accumulate").expect("by name");
    // The alignment is the metadata's 8, not the 16 ROCr (and the soft runtime) report for the
    // symbol of every code-object v3+ kernel.
    assert_eq!((accumulate.kernarg_size, accumulate.kernarg_alignment), (24, 8));
    let symbol = client.hsa.kernel_symbol(executable.handle(), client.agent, "accumulate.kd").expect("symbol");
    assert_eq!(symbol.kernarg_segment_alignment, 16);
    assert_eq!(kernargs_accumulate(core::ptr::null_mut(), core::ptr::null(), 0, 0).len(), 24);
}

#[test]
fn accumulate_runs_serially_in_work_item_zero_with_wrapping_arithmetic() {
    let client = Client::new();
    let executable = Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let kernel = executable.kernel("accumulate").expect("kernel");
    let symbol = aqueduct_hsa::KernelSymbol {
        kernel_object: kernel.kernel_object,
        kernarg_segment_size: kernel.kernarg_size,
        kernarg_segment_alignment: kernel.kernarg_alignment,
        group_segment_size: kernel.group_segment_size,
        private_segment_size: kernel.private_segment_size,
        dynamic_callstack: false,
    };
    let queue = client.queue(16);
    let out = client.alloc_u32(6);
    let input = client.alloc_u32(6);
    out.copy_from_slice(&[1, 2, 3, 4, u32::MAX, 99]);
    input.copy_from_slice(&[10, 20, 30, 0x8000_0000, 1, 7]);
    let done = client.signal(1);
    // Count 5 leaves the last element alone; a 4-workgroup grid still applies the update once.
    let kernarg = client.kernargs(&kernargs_accumulate(out.as_mut_ptr(), input.as_ptr(), 3, 5));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&symbol, 128, 32, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(out, &[31, 62, 93, 0x8000_0004, 2, 99]);
}

#[test]
fn a_descriptor_dispatches_to_the_registered_cpu_kernel() {
    let client = Client::new();
    let executable = Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let store = executable.kernel("store_value").expect("kernel");
    let symbol = aqueduct_hsa::KernelSymbol {
        kernel_object: store.kernel_object,
        kernarg_segment_size: store.kernarg_size,
        kernarg_segment_alignment: store.kernarg_alignment,
        group_segment_size: store.group_segment_size,
        private_segment_size: store.private_segment_size,
        dynamic_callstack: false,
    };
    let queue = client.queue(16);
    let out = client.alloc_u32(10);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 40, 10));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&symbol, 10, 32, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(out, &[40, 41, 42, 43, 44, 45, 46, 47, 48, 49]);
}

#[test]
fn an_incompatible_target_is_refused_before_loading_naming_both_targets() {
    let client = Client::new();
    let error =
        Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX90A).err().expect("gfx90a code on a gfx1100 agent");
    assert!(matches!(error, ExecutableError::Incompatible(_)), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("gfx90a") && message.contains("gfx1100"), "{message}");
}

#[test]
fn an_unknown_kernel_lists_the_kernels_that_exist() {
    let client = Client::new();
    let executable = Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let message = executable.kernel("missing").expect_err("unknown").to_string();
    for name in ["missing", "store_value", "add_from", "no_cpu_twin", "accumulate", "no_way_to_run"] {
        assert!(message.contains(name), "{message}");
    }
}

#[test]
fn garbage_is_a_typed_code_object_error() {
    let client = Client::new();
    let error =
        Executable::load(&client.hsa, client.agent, &[0x7F, b'E', b'L', b'F', 2, 1, 1]).err().expect("truncated ELF");
    assert!(matches!(error, ExecutableError::CodeObject(_)), "{error:?}");
}

#[test]
fn a_dynamic_call_stack_gets_at_least_the_default_stack() {
    let base = aqueduct_hsa::KernelSymbol {
        kernel_object: 1,
        kernarg_segment_size: 0,
        kernarg_segment_alignment: 16,
        group_segment_size: 0,
        private_segment_size: 96,
        dynamic_callstack: false,
    };
    assert_eq!(aqueduct_hsa::executable::private_segment_size(&base), 96);
    let dynamic = aqueduct_hsa::KernelSymbol { dynamic_callstack: true, ..base };
    assert_eq!(aqueduct_hsa::executable::private_segment_size(&dynamic), aqueduct_hsa::executable::DYNAMIC_STACK_BYTES);
    let large = aqueduct_hsa::KernelSymbol { private_segment_size: 4096, ..dynamic };
    assert_eq!(aqueduct_hsa::executable::private_segment_size(&large), 4096);
}
