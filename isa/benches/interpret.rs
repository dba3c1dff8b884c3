//! How fast the interpreter runs real machine code: the device library's fill over 1 MiB,
//! every workgroup on one thread, from the gfx1100 code object. Throughput is in instructions
//! interpreted (criterion reports them as elements per second).
//!
//! `cargo bench -p aqueduct-isa --bench interpret`

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use aqueduct_abi::{KernelDispatchPacket, PacketHeader};
use aqueduct_isa::interp::{self, AtomicOp, Dispatch, Memory, MemoryFault, Program};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use object::{Object, ObjectSegment, ObjectSymbol};

/// Memory made of a few host buffers; anything else faults.
struct Buffers(Vec<(u64, u64)>);

impl Buffers {
    fn check(&self, address: u64, length: u64, write: bool) -> Result<(), MemoryFault> {
        let inside = self.0.iter().any(|&(base, size)| base <= address && address + length <= base + size);
        if inside { Ok(()) } else { Err(MemoryFault { address, length, write }) }
    }
}

impl Memory for Buffers {
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.check(address, out.len() as u64, false)?;
        // SAFETY: the range lies in one of the live buffers.
        unsafe { core::ptr::copy_nonoverlapping(address as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.check(address, data.len() as u64, true)?;
        // SAFETY: the range lies in one of the live buffers.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len()) };
        Ok(())
    }

    fn atomic32(&self, address: u64, op: AtomicOp, value: u32, compare: u32) -> Result<u32, MemoryFault> {
        self.check(address, 4, true)?;
        // SAFETY: a live, 4-aligned word of one of the buffers (the kernels align their atomics).
        let word = unsafe { AtomicU32::from_ptr(address as *mut u32) };
        Ok(word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                Some(interp::apply_atomic32(op, old, value, compare))
            })
            .unwrap_or_else(|old| old))
    }

    fn atomic64(&self, address: u64, op: AtomicOp, value: u64, compare: u64) -> Result<u64, MemoryFault> {
        self.check(address, 8, true)?;
        // SAFETY: as above, 8-aligned.
        let word = unsafe { AtomicU64::from_ptr(address as *mut u64) };
        Ok(word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                Some(interp::apply_atomic64(op, old, value, compare))
            })
            .unwrap_or_else(|old| old))
    }
}

/// Loads the code object's `PT_LOAD` segments into one buffer; returns it and the address of
/// `symbol`.
fn load(bytes: &[u8], symbol: &str) -> (Vec<u64>, u64) {
    let file = object::File::parse(bytes).expect("ELF");
    let lowest = file.segments().map(|segment| segment.address()).min().expect("segments");
    let end = file.segments().map(|segment| segment.address() + segment.size()).max().expect("segments");
    let mut image = vec![0u64; ((end - lowest) as usize).div_ceil(8)];
    let base = image.as_mut_ptr() as u64;
    for segment in file.segments() {
        let data = segment.data().expect("segment data");
        let at = (segment.address() - lowest) as usize;
        // SAFETY: the segment lies inside the image, sized from the segments' extent.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), (base as *mut u8).add(at), data.len()) };
    }
    let address = file.symbols().find(|entry| entry.name() == Ok(symbol)).expect("symbol").address();
    (image, base + address - lowest)
}

fn fill_one_mebibyte(c: &mut Criterion) {
    let bytes = aqueduct_builtins::DeviceLibrary::code_object("gfx1100").expect("embedded gfx1100 library");
    let mut target = vec![0u32; (1 << 20) / 4];
    let plan = aqueduct_builtins::plan_fill(target.as_mut_ptr() as u64, 1 << 20, 0xA5C3_E1F0, 4).expect("plan");
    // The planner picks the widest element the alignment allows: `fill_block_x16` here.
    let (image, kernel_object) = load(bytes, plan.kernel_symbol());
    let kernargs = plan.kernarg_bytes().to_vec();
    let packet = KernelDispatchPacket {
        header: PacketHeader::INVALID,
        setup: 1,
        workgroup_size_x: plan.workgroup_size,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: plan.grid_size,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object,
        kernarg_address: kernargs.as_ptr() as u64,
        ..KernelDispatchPacket::default()
    };
    let memory = Buffers(vec![
        (image.as_ptr() as u64, image.len() as u64 * 8),
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
