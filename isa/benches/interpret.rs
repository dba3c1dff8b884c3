//! How fast the interpreter runs real machine code, in wave instructions per second (criterion's
//! elements per second): a tiled f32 GEMM with LDS, a DPP sum reduction, an f16 GEMM with
//! `v_dot2_f32_f16`, the device library's fill over 1 MiB, and rocjitsu's four-chain WMMA
//! workload (`wmma_chains`), from their gfx1100 code objects
//! (`isa/tests/kernels/`, `builtins/prebuilt/`); and the GEMM again as gfx1030 wave64 code (its
//! wave instructions are 64 lanes each), and both GEMMs as gfx90a (CDNA2, wave64) code. Each kernel runs its workgroups on one thread
//! (`one_core`) and on every core through rayon (`all_cores`); the workgroups are independent,
//! as the soft runtime's packet processor runs them.
//!
//! Each runs on the interpreter (`interpret/…`) and on the native tier (`native/…`, on an AVX2
//! host), with the same throughput: the interpreter's count of wave instructions.
//!
//! `cargo bench -p aqueduct-isa --bench interpret`

use aqueduct_abi::KernelDispatchPacket;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, Isa, Regions, StandaloneImage};
use aqueduct_isa::native::{self, Tier};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;

/// A dispatch of one kernel with its memory, ready to run again and again.
struct Bench {
    name: &'static str,
    /// The loaded code object, which the kernel's code and descriptor live in.
    _image: StandaloneImage,
    kernel: DecodedKernel,
    memory: Regions,
    kernargs: Vec<u8>,
    packet: Box<KernelDispatchPacket>,
    grid: [u32; 3],
    workgroup: [u16; 3],
    lds: u32,
}

impl Bench {
    /// `symbol` of `code_object` (`isa`'s code) over `grid`/`workgroup`, with explicit kernel arguments
    /// `args` (zeroed hidden arguments follow) and the host ranges `buffers` it touches.
    fn new(
        name: &'static str,
        (isa, code_object): (Isa, &[u8]),
        symbol: &str,
        grid: [u32; 3],
        workgroup: [u16; 3],
        args: &[u8],
        buffers: &[(u64, u64)],
    ) -> Bench {
        let image = StandaloneImage::load(code_object).expect("the code object loads");
        let kernel_object = image.kernel_object(symbol).expect("the kernel");
        let mut kernargs = args.to_vec();
        kernargs.resize(args.len() + 256, 0);
        let mut packet = Box::new(KernelDispatchPacket::default());
        packet.workgroup_size_x = workgroup[0];
        packet.workgroup_size_y = workgroup[1];
        packet.workgroup_size_z = workgroup[2];
        packet.grid_size_x = grid[0];
        packet.grid_size_y = grid[1];
        packet.grid_size_z = grid[2];
        packet.kernel_object = kernel_object;
        packet.kernarg_address = kernargs.as_ptr() as u64;
        let mut regions = vec![
            image.range(),
            (kernargs.as_ptr() as u64, kernargs.len() as u64),
            (&*packet as *const KernelDispatchPacket as u64, 64),
        ];
        regions.extend_from_slice(buffers);
        let memory = Regions(regions);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, isa).expect("kernel");
        let lds = kernel.descriptor.group_segment_fixed_size;
        Bench { name, _image: image, kernel, memory, kernargs, packet, grid, workgroup, lds }
    }

    /// One dispatch of the kernel, numbered as the soft runtime numbers its dispatches.
    fn dispatch(&self, tier: Tier) -> Dispatch<'_> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Dispatch {
            packet_address: &*self.packet as *const KernelDispatchPacket as u64,
            kernarg_address: self.kernargs.as_ptr() as u64,
            group_segment_size: self.lds,
            instruction_limit: u64::MAX,
            serial: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            tier,
            ..Dispatch::new(&self.kernel, self.grid, self.workgroup)
        }
    }

    fn groups(&self) -> Vec<[u32; 3]> {
        let count: [u32; 3] = core::array::from_fn(|axis| self.grid[axis].div_ceil(self.workgroup[axis] as u32));
        let mut groups = Vec::new();
        for z in 0..count[2] {
            for y in 0..count[1] {
                for x in 0..count[0] {
                    groups.push([x, y, z]);
                }
            }
        }
        groups
    }

    /// Runs every workgroup on this thread; returns the wave instructions executed.
    fn one_core(&self, lds: &mut Vec<u8>, tier: Tier) -> u64 {
        let dispatch = self.dispatch(tier);
        self.groups()
            .iter()
            .map(|&group| aqueduct_isa::run_workgroup(&dispatch, &self.memory, group, lds).expect("runs"))
            .sum()
    }

    /// Runs the workgroups on every core.
    fn all_cores(&self, tier: Tier) -> u64 {
        let dispatch = self.dispatch(tier);
        self.groups()
            .par_iter()
            .map_init(Vec::new, |lds, &group| {
                aqueduct_isa::run_workgroup(&dispatch, &self.memory, group, lds).expect("runs")
            })
            .sum()
    }
}

/// One run of `bench` on this thread, the part callgrind counts (`--toggle-collect`).
#[inline(never)]
fn measured_once(bench: &Bench, tier: Tier) -> u64 {
    bench.one_core(&mut Vec::new(), tier)
}

fn words<T: Copy>(values: &[T]) -> (u64, u64) {
    (values.as_ptr() as u64, core::mem::size_of_val(values) as u64)
}

fn args(pointers: &[u64], scalars: &[u32]) -> Vec<u8> {
    let mut bytes: Vec<u8> = pointers.iter().flat_map(|pointer| pointer.to_le_bytes()).collect();
    bytes.extend(scalars.iter().flat_map(|value| value.to_le_bytes()));
    bytes
}

/// A test kernel's code object: beside the crate, or (a bench binary carried to another
/// machine) under `isa/tests/kernels` of the working directory.
fn kernel(name: &str) -> Vec<u8> {
    let beside = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(name);
    let path = if beside.exists() { beside } else { std::path::Path::new("isa/tests/kernels").join(name) };
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn real_kernels(c: &mut Criterion) {
    // GEMM: 256 x 256 x 256, 256 workgroups of 16 x 16.
    let n = 256u32;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5 - 1.0).collect();
    let bias = vec![0.5f32; n as usize];
    let mut out = vec![0f32; (n * n) as usize];
    let gemm = Bench::new(
        "gemm_f32_256",
        (Isa::Gfx11, &kernel("gemm_gfx1100.hsaco")),
        "gemm_bias_relu",
        [n, n, 1],
        [16, 16, 1],
        &args(&[out.as_mut_ptr() as u64, a.as_ptr() as u64, b.as_ptr() as u64, bias.as_ptr() as u64], &[n, n, n]),
        &[words(&out), words(&a), words(&b), words(&bias)],
    );
    // The same GEMM as gfx1030 wave64 code (translated, each wave instruction run for two
    // halves of 32 lanes).
    let mut out64 = vec![0f32; (n * n) as usize];
    let gemm64 = Bench::new(
        "gemm_f32_256_wave64",
        (Isa::Gfx10_3, &kernel("gemm_gfx1030-wave64.hsaco")),
        "gemm_bias_relu",
        [n, n, 1],
        [16, 16, 1],
        &args(&[out64.as_mut_ptr() as u64, a.as_ptr() as u64, b.as_ptr() as u64, bias.as_ptr() as u64], &[n, n, n]),
        &[words(&out64), words(&a), words(&b), words(&bias)],
    );
    // The same GEMM as gfx90a (CDNA2) wave64 code from the same source (translated, as gfx9
    // code runs): issue 57's measure, gfx90a's wave instructions per second against gfx1100's.
    let mut out90a = vec![0f32; (n * n) as usize];
    let gemm90a = Bench::new(
        "gemm_f32_256_gfx90a",
        (Isa::Gfx9(aqueduct_isa::gfx9::Processor::Gfx90a), &kernel("gemm_gfx90a.hsaco")),
        "gemm_bias_relu",
        [n, n, 1],
        [16, 16, 1],
        &args(&[out90a.as_mut_ptr() as u64, a.as_ptr() as u64, b.as_ptr() as u64, bias.as_ptr() as u64], &[n, n, n]),
        &[words(&out90a), words(&a), words(&b), words(&bias)],
    );
    // Reduction: 1 M elements, 4096 workgroups of 256.
    let count = 1u32 << 20;
    let input: Vec<f32> = (0..count).map(|i| (i % 13) as f32).collect();
    let input_u: Vec<u32> = (0..count).collect();
    let mut partials = vec![0f32; (count / 256) as usize];
    let mut total = vec![0u32; 1];
    let reduce = Bench::new(
        "reduce_dpp_1M",
        (Isa::Gfx11, &kernel("reduce_gfx1100.hsaco")),
        "reduce_sum",
        [count, 1, 1],
        [256, 1, 1],
        &args(
            &[partials.as_mut_ptr() as u64, total.as_mut_ptr() as u64, input.as_ptr() as u64, input_u.as_ptr() as u64],
            &[count],
        ),
        &[words(&partials), words(&total), words(&input), words(&input_u)],
    );
    // f16 GEMM with v_dot2_f32_f16: 128 x 128 x 128.
    let h = 128u32;
    let half = |value: f32| half::f16::from_f32(value).to_bits();
    let ha: Vec<u16> = (0..h * h).map(|i| half((i % 3) as f32 * 0.5)).collect();
    let hb: Vec<u16> = (0..h * h).map(|i| half((i % 4) as f32 * 0.25)).collect();
    let mut hc = vec![0f32; (h * h) as usize];
    let hgemm = Bench::new(
        "hgemm_dot2_128",
        (Isa::Gfx11, &kernel("hgemm_gfx1100.hsaco")),
        "hgemm_dot2",
        [h, h, 1],
        [16, 16, 1],
        &args(&[hc.as_mut_ptr() as u64, ha.as_ptr() as u64, hb.as_ptr() as u64], &[h, h, h]),
        &[words(&hc), words(&ha), words(&hb)],
    );
    let mut hc90a = vec![0f32; (h * h) as usize];
    let hgemm90a = Bench::new(
        "hgemm_dot2_128_gfx90a",
        (Isa::Gfx9(aqueduct_isa::gfx9::Processor::Gfx90a), &kernel("hgemm_gfx90a.hsaco")),
        "hgemm_dot2",
        [h, h, 1],
        [16, 16, 1],
        &args(&[hc90a.as_mut_ptr() as u64, ha.as_ptr() as u64, hb.as_ptr() as u64], &[h, h, h]),
        &[words(&hc90a), words(&ha), words(&hb)],
    );
    // The device library's fill of 1 MiB.
    let mut target = vec![0u32; (1 << 20) / 4];
    let plan = aqueduct_builtins::plan_fill(target.as_mut_ptr() as u64, 1 << 20, 0xA5C3_E1F0, 4).expect("plan");
    let library = aqueduct_builtins::DeviceLibrary::code_object("gfx1100").expect("embedded gfx1100 library");
    let fill = Bench::new(
        "fill_1MiB",
        (Isa::Gfx11, library),
        plan.kernel_symbol(),
        [plan.grid_size, 1, 1],
        [plan.workgroup_size, 1, 1],
        plan.kernarg_bytes(),
        &[words(&target)],
    );
    // rocjitsu's thread-scaling workload (ROCm/rocm-systems, emulation/rocjitsu,
    // docs/desktop-thread-scaling.md): 512 one-wave workgroups, 128 rounds of four independent
    // f16 WMMA chains each. Its time per run is the number to hold beside rocjitsu's 13.0 s
    // (one thread) and 1.09 s (16).
    let rounds = 128u32;
    let waves = 512usize;
    let wa: Vec<u16> = (0..waves * 32 * 16).map(|i| half(((i % 17) as f32 - 8.0) / 8.0)).collect();
    let wb: Vec<u16> = (0..waves * 32 * 16).map(|i| half(((i % 13) as f32 - 6.0) / 8.0)).collect();
    let mut wd = vec![0f32; waves * 32 * 4 * 8];
    let wmma = Bench::new(
        "wmma_chains",
        (Isa::Gfx11, &kernel("wmma_gfx1100.hsaco")),
        "wmma_chains",
        [32 * waves as u32, 1, 1],
        [32, 1, 1],
        &args(&[wd.as_mut_ptr() as u64, wa.as_ptr() as u64, wb.as_ptr() as u64], &[rounds]),
        &[words(&wd), words(&wa), words(&wb)],
    );
    // The digits MLP's first layer and its softmax (`cli/kernels/mlp.hip`), as the README's main job
    // serves a batch of 32: `dense` 32 × 64 · 64 × 64 with bias and ReLU (eight 16 × 16
    // workgroups), `softmax` of 32 rows of 10 logits (one 32-lane workgroup per row, ten lanes
    // active).
    let mlp: &[u8] = include_bytes!("../../cli/kernels/mlp_gfx11-generic.hsaco");
    let (rows, k, classes) = (32u32, 64u32, 10u32);
    let x: Vec<f32> = (0..rows * k).map(|i| (i % 17) as f32 / 16.0).collect();
    let w1: Vec<f32> = (0..k * k).map(|i| ((i % 23) as f32 - 11.0) / 64.0).collect();
    let b1: Vec<f32> = (0..k).map(|i| (i % 5) as f32 * 0.1 - 0.2).collect();
    let mut hidden = vec![0f32; (rows * k) as usize];
    let dense = Bench::new(
        "mlp_dense_b32",
        (Isa::Gfx11, mlp),
        "dense",
        [k, rows, 1],
        [16, 16, 1],
        &args(
            &[hidden.as_mut_ptr() as u64, x.as_ptr() as u64, w1.as_ptr() as u64, b1.as_ptr() as u64],
            &[rows, k, k, 1],
        ),
        &[words(&hidden), words(&x), words(&w1), words(&b1)],
    );
    let logits: Vec<f32> = (0..rows * classes).map(|i| ((i * 7) % 19) as f32 - 9.0).collect();
    let mut probabilities = vec![0f32; (rows * classes) as usize];
    let softmax = Bench::new(
        "mlp_softmax_b32",
        (Isa::Gfx11, mlp),
        "softmax",
        [32 * rows, 1, 1],
        [32, 1, 1],
        &args(&[probabilities.as_mut_ptr() as u64, logits.as_ptr() as u64], &[rows, classes]),
        &[words(&probabilities), words(&logits)],
    );
    // `AQUEDUCT_ISA_BENCH_ONCE=NAME`: run that kernel's workgroups once on this thread and stop,
    // for an instruction count under callgrind (`scripts/isa-instructions.sh`), which is
    // deterministic where times on a shared machine are not.
    if let Ok(name) = std::env::var("AQUEDUCT_ISA_BENCH_ONCE") {
        let bench = [&gemm, &gemm64, &gemm90a, &reduce, &hgemm, &hgemm90a, &fill, &wmma, &dense, &softmax]
            .into_iter()
            .find(|bench| bench.name == name)
            .expect("a bench name");
        let tier = if std::env::var("AQUEDUCT_ISA_BENCH_TIER").as_deref() == Ok("native") {
            Tier::Native
        } else {
            Tier::Interpreter
        };
        let instructions = measured_once(bench, tier);
        println!("{name}: {instructions} wave instructions");
        return;
    }
    // Each kernel on the interpreter (`interpret/`) and, where it compiles (AVX2), on the native
    // tier (`native/`).
    for bench in [&gemm, &gemm64, &gemm90a, &reduce, &hgemm, &hgemm90a, &fill, &wmma, &dense, &softmax] {
        let mut tiers = vec![("interpret", Tier::Interpreter)];
        if native::unavailable().is_none() {
            tiers.push(("native", Tier::Native));
        }
        // Both tiers count the same wave instructions (the differential tests hold them to it);
        // the fastest one counts them.
        let instructions = bench.one_core(&mut Vec::new(), tiers.last().expect("the interpreter").1);
        for (prefix, tier) in tiers {
            let mut group = c.benchmark_group(format!("{prefix}/{}", bench.name));
            group.throughput(Throughput::Elements(instructions));
            if bench.name == "wmma_chains" {
                // Seconds per run on the interpreter: criterion's fewest samples.
                group.sample_size(10);
            }
            group.bench_function("one_core", |b| {
                let mut lds = Vec::new();
                b.iter(|| bench.one_core(&mut lds, tier));
            });
            group.bench_function("all_cores", |b| b.iter(|| bench.all_cores(tier)));
            group.finish();
        }
    }
    // The results are right (the tests check them exactly; here, enough to know it ran).
    assert!(out.iter().any(|&value| value > 0.0), "the GEMM wrote");
    assert_eq!(out, out64, "wave64 and wave32 GEMMs agree");
    assert_eq!(out, out90a, "gfx90a's and gfx1100's GEMMs agree");
    assert_eq!(hc, hc90a, "gfx90a's and gfx1100's f16 GEMMs agree");
    assert!(partials.iter().any(|&value| value > 0.0) && hc.iter().any(|&value| value > 0.0), "they wrote");
    assert!(target.iter().all(|&word| word == 0xA5C3_E1F0), "the fill is right");
    assert!(wd.iter().any(|&value| value != 0.0), "the WMMA chains wrote");
    assert!(hidden.iter().any(|&value| value > 0.0), "the dense layer wrote");
    for row in probabilities.chunks(classes as usize) {
        let total: f32 = row.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "a softmax row sums to 1: {row:?}");
    }
    // The physical limit for the fill's bytes: the host writing them itself.
    let mut baseline = c.benchmark_group("baseline");
    baseline.throughput(Throughput::Bytes(1 << 20));
    baseline.bench_function("memset/1MiB", |b| b.iter(|| std::hint::black_box(&mut target).fill(0xA5C3_E1F0)));
    baseline.finish();
}

criterion_group!(benches, real_kernels);
criterion_main!(benches);
