//! How fast the interpreter runs real machine code: the device library's fill over 1 MiB,
//! every workgroup on one thread, from the gfx1100 code object. Throughput is in instructions
//! interpreted (criterion reports them as elements per second).
//!
//! `cargo bench -p aqueduct-isa --bench interpret`

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_isa::interp::{self, Dispatch, Program, Regions, StandaloneImage};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn fill_one_mebibyte(c: &mut Criterion) {
    let bytes = aqueduct_builtins::DeviceLibrary::code_object("gfx1100").expect("embedded gfx1100 library");
    let mut target = vec![0u32; (1 << 20) / 4];
    let plan = aqueduct_builtins::plan_fill(target.as_mut_ptr() as u64, 1 << 20, 0xA5C3_E1F0, 4).expect("plan");
    // The planner picks the widest element the alignment allows: `fill_block_x16` here.
    let image = StandaloneImage::load(bytes).expect("the library loads");
    let kernel_object = image.kernel_object(plan.kernel_symbol()).expect("the kernel");
    let kernargs = plan.kernarg_bytes().to_vec();
    let packet = plan.packet(kernel_object, kernargs.as_ptr() as u64);
    let memory = Regions(vec![
        image.range(),
        (target.as_ptr() as u64, target.len() as u64 * 4),
        (kernargs.as_ptr() as u64, kernargs.len() as u64),
        (&packet as *const KernelDispatchPacket as u64, 64),
    ]);
    let program = Program::load(&memory, kernel_object).expect("program");
    let dispatch = Dispatch {
        program: &program,
        packet_address: &packet as *const KernelDispatchPacket as u64,
        queue_address: 0,
        kernarg_address: kernargs.as_ptr() as u64,
        dispatch_id: 0,
        grid: [plan.grid_size, 1, 1],
        workgroup: [plan.workgroup_size, 1, 1],
        group_segment_size: 0,
        private_segment_size: 0,
        instruction_limit: u64::MAX,
        realtime: || 0,
    };
    let groups = plan.grid_size.div_ceil(plan.workgroup_size as u32);
    let run = |lds: &mut Vec<u8>| -> u64 {
        (0..groups).map(|group| interp::run_workgroup(&dispatch, &memory, [group, 0, 0], lds).expect("runs")).sum()
    };
    let instructions = run(&mut Vec::new());
    assert!(target.iter().all(|&word| word == 0xA5C3_E1F0), "the fill is right");
    let mut group = c.benchmark_group("interpret");
    group.throughput(Throughput::Elements(instructions));
    group.bench_function("fill/1MiB", |b| {
        let mut lds = Vec::new();
        b.iter(|| run(&mut lds));
    });
    group.finish();
    // The physical limit for the same bytes: the host writing them itself.
    let mut baseline = c.benchmark_group("baseline");
    baseline.throughput(Throughput::Bytes(1 << 20));
    baseline.bench_function("memset/1MiB", |b| b.iter(|| std::hint::black_box(&mut target).fill(0xA5C3_E1F0)));
    baseline.finish();
}

criterion_group!(benches, fill_one_mebibyte);
criterion_main!(benches);
