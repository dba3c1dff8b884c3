//! The wave loop's frames fit a small thread stack, in every build profile: the soft runtime runs
//! workgroups on pool threads, and an unoptimized build once inlined every instruction step into
//! one frame that overflowed 2 MiB stacks.

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, Regions, StandaloneImage};

#[test]
fn a_workgroup_runs_in_a_256_kib_stack() {
    let ran = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let bytes = aqueduct_builtins::DeviceLibrary::code_object("gfx1100").expect("embedded gfx1100 library");
            let mut target = vec![0u32; 1024];
            let plan = aqueduct_builtins::plan_fill(target.as_mut_ptr() as u64, 4096, 0x1234_5678, 4).expect("plan");
            let image = StandaloneImage::load(bytes).expect("the library loads");
            let kernel_object = image.kernel_object(plan.kernel_symbol()).expect("the kernel");
            let kernargs = plan.kernarg_bytes().to_vec();
            let packet = plan.template(kernel_object).packet(kernargs.as_ptr() as u64, 0);
            let memory = Regions(vec![
                image.range(),
                (target.as_ptr() as u64, 4096),
                (kernargs.as_ptr() as u64, kernargs.len() as u64),
                (&packet as *const KernelDispatchPacket as u64, 64),
            ]);
            let kernel = DecodedKernel::load(&memory, kernel_object).expect("kernel");
            let dispatch = Dispatch {
                packet_address: &packet as *const KernelDispatchPacket as u64,
                kernarg_address: kernargs.as_ptr() as u64,
                instruction_limit: 1 << 24,
                tier: aqueduct_isa::native::Tier::Auto,
                ..Dispatch::new(&kernel, [plan.grid_size, 1, 1], [plan.workgroup_size, 1, 1])
            };
            let groups = plan.grid_size.div_ceil(plan.workgroup_size as u32);
            let mut lds = Vec::new();
            for group in 0..groups {
                aqueduct_isa::run_workgroup(&dispatch, &memory, [group, 0, 0], &mut lds).expect("runs");
            }
            target.iter().all(|&word| word == 0x1234_5678)
        })
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert!(ran, "the fill is right");
}
