//! The device library run twice on the same inputs: by its host build (the C source built for
//! the CPU) and by the interpreter from each embedded code object's own machine code (RDNA3,
//! RDNA2, GCN5 and CDNA; [`TARGETS`]). Every byte of the memory they touch must agree, guard
//! bytes included, over odd sizes, offsets and alignments. No HSA runtime is involved: both run
//! here, workgroup by workgroup.

use aqueduct_abi::{KernelDispatchPacket, WorkgroupContext};
use aqueduct_builtins::{DeviceLibrary, DispatchPlan, plan_copy, plan_fill, plan_patch_indirect, plan_update_inline};
use aqueduct_isa::interp::{DecodedKernel, Dispatch, Isa, Regions, StandaloneImage};

/// One arena per run: the plan's addresses point into it.
const ARENA: usize = 8192;

/// Arenas are 64-byte aligned, so the places `patch_indirect` needs aligned lie at the same
/// offsets in both.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);
const SENTINEL: u8 = 0x5A;

unsafe extern "C" fn no_clock() -> u64 {
    0
}

/// Runs `plan` through the host build of its kernel.
fn run_host(plan: &DispatchPlan) {
    let kernels = aqueduct_builtins::soft_registrations().next().expect("registrations").1;
    let kernel = kernels.iter().find(|kernel| kernel.symbol == plan.kernel_symbol()).expect("a host build");
    let kernargs = plan.kernarg_bytes();
    let packet = plan.template(0).packet(kernargs.as_ptr() as u64, 0);
    let mut group_memory = vec![0u8; 0];
    for group in 0..plan.grid_size.div_ceil(u32::from(plan.workgroup_size)) {
        let context = WorkgroupContext {
            packet: &packet,
            kernarg: kernargs.as_ptr(),
            implicit_args: core::ptr::null(),
            group_memory: group_memory.as_mut_ptr(),
            group_memory_len: 0,
            steady_counter: no_clock,
            workgroup_id: [group, 0, 0],
            grid_size: [plan.grid_size, 1, 1],
            workgroup_size: [plan.workgroup_size, 1, 1],
            trapped: core::cell::Cell::new(0),
            ring_doorbell: aqueduct_abi::host_build_abi::no_doorbell,
        };
        // SAFETY: the plan's pointers lie in the caller's arena, sized for the plan.
        unsafe { (kernel.function)(&context) };
        assert_eq!(context.trapped.get(), 0, "{}: the host build trapped", plan.kernel_symbol());
    }
}

/// Runs `plan` through the interpreter, with `arena` as the only memory besides the image.
fn run_isa(image: &Image, plan: &DispatchPlan, arena: &[u8]) {
    let Image { target, isa, image } = image;
    let kernel_object = image.kernel_object(plan.kernel_symbol()).expect("the kernel");
    let kernargs = plan.kernarg_bytes();
    let packet = plan.template(kernel_object).packet(kernargs.as_ptr() as u64, 0);
    let packet_address = &packet as *const KernelDispatchPacket as u64;
    let memory = Regions(vec![
        image.range(),
        (arena.as_ptr() as u64, arena.len() as u64),
        (kernargs.as_ptr() as u64, kernargs.len() as u64),
        (packet_address, 64),
    ]);
    let kernel = DecodedKernel::load_for(&memory, kernel_object, *isa).expect("the kernel decodes");
    let dispatch = Dispatch {
        packet_address,
        kernarg_address: kernargs.as_ptr() as u64,
        instruction_limit: 1 << 28,
        tier: aqueduct_isa::native::Tier::Auto,
        ..Dispatch::new(&kernel, [plan.grid_size, 1, 1], [plan.workgroup_size, 1, 1])
    };
    let mut lds = Vec::new();
    for group in 0..plan.grid_size.div_ceil(u32::from(plan.workgroup_size)) {
        aqueduct_isa::run_workgroup(&dispatch, &memory, [group, 0, 0], &mut lds)
            .unwrap_or_else(|error| panic!("{target} {}: {error}", plan.kernel_symbol()));
    }
}

/// Two arenas with the same bytes; `plan(base)` plans against an arena at `base`. Runs the host
/// build on one and the interpreter on the other, for each of `images`, and compares them whole.
fn agree(images: &[Image], what: &str, plan: impl Fn(u64) -> DispatchPlan) {
    for image in images {
        agree_on(image, what, &plan);
    }
}

fn agree_on(image: &Image, what: &str, plan: impl Fn(u64) -> DispatchPlan) {
    let mut arenas = [vec![Line([0; 64]); ARENA / 64], vec![Line([0; 64]); ARENA / 64]];
    for arena in &mut arenas {
        for (index, byte) in bytes_of(arena).iter_mut().enumerate() {
            *byte = if index < ARENA / 2 { (index as u8).wrapping_mul(31).wrapping_add(7) } else { SENTINEL };
        }
    }
    let [host, isa] = &mut arenas;
    let host_plan = plan(host.as_mut_ptr() as u64);
    if host_plan.is_noop() {
        return;
    }
    run_host(&host_plan);
    let isa_plan = plan(isa.as_mut_ptr() as u64);
    assert_eq!(isa_plan.kernel, host_plan.kernel, "{what}");
    run_isa(image, &isa_plan, bytes_of(isa));
    let (host, isa) = (bytes_of(host), bytes_of(isa));
    if let Some(index) = (0..ARENA).find(|&index| host[index] != isa[index]) {
        panic!(
            "{what} ({} for {}): byte {index} is {:#x} from the host build, {:#x} from the interpreter",
            host_plan.kernel_symbol(),
            image.target,
            host[index],
            isa[index]
        );
    }
}

fn bytes_of(lines: &mut [Line]) -> &mut [u8] {
    // SAFETY: a line is 64 bytes with no padding, and every byte pattern is a valid u8.
    unsafe { core::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u8>(), lines.len() * 64) }
}

/// The embedded code objects the interpreter runs, each with the instruction set its agents
/// run it as: a generic family's code runs on its family's processors, so gfx9-generic is run
/// as gfx900's.
const TARGETS: [(&str, &str); 7] = [
    ("gfx1100", "gfx1100"),
    ("gfx11-generic", "gfx1100"),
    ("gfx1030", "gfx1030"),
    ("gfx10-3-generic", "gfx1030"),
    ("gfx9-generic", "gfx900"),
    ("gfx90a", "gfx90a"),
    ("gfx942", "gfx942"),
];

/// One embedded code object, loaded.
struct Image {
    target: &'static str,
    isa: Isa,
    image: StandaloneImage,
}

fn images() -> Vec<Image> {
    TARGETS
        .iter()
        .map(|&(target, processor)| {
            let isa = match processor {
                "gfx1100" => Isa::Gfx11,
                "gfx1030" => Isa::Gfx10_3,
                gfx9 => Isa::Gfx9(aqueduct_isa::gfx9::Processor::from_name(gfx9).expect("a gfx9 processor")),
            };
            let bytes = DeviceLibrary::code_object(target).expect("embedded");
            Image { target, isa, image: StandaloneImage::load(bytes).expect("the library loads") }
        })
        .collect()
}

const SIZES: [u64; 11] = [0, 1, 3, 4, 15, 16, 17, 255, 256, 1000, 2049];
/// The copies' data starts in the first half; their targets in the second, behind guard bytes.
const TARGET: u64 = (ARENA / 2) as u64 + 64;

#[test]
fn fills_agree_over_sizes_offsets_and_pattern_widths() {
    let images = images();
    for size in SIZES {
        for offset in [0u64, 1, 2, 3, 4, 7, 8, 13, 16] {
            for (width, pattern) in [(1u8, 0xC3u64), (2, 0xE1F0), (4, 0xA5C3_E1F0)] {
                if size % u64::from(width) != 0 {
                    continue; // the planner refuses a length that is not whole patterns
                }
                agree(&images, &format!("fill {size} at +{offset}, width {width}"), |base| {
                    plan_fill(base + TARGET + offset, size, pattern, width).expect("valid")
                });
            }
        }
    }
}

#[test]
fn copies_agree_over_sizes_and_both_alignments() {
    let images = images();
    for size in SIZES {
        for (source, target) in [(0u64, 0u64), (1, 1), (3, 0), (0, 5), (8, 16), (16, 16), (7, 13)] {
            agree(&images, &format!("copy {size} from +{source} to +{target}"), |base| {
                plan_copy(base + source, base + TARGET + target, size).expect("valid")
            });
        }
    }
}

#[test]
fn inline_updates_agree() {
    let images = images();
    let data: Vec<u8> = (0..=255u8).map(|byte| byte ^ 0x3C).collect();
    for length in [1usize, 2, 5, 16, 31, 64, aqueduct_builtins::UPDATE_INLINE_MAX_BYTES] {
        for offset in [0u64, 1, 4, 9] {
            agree(&images, &format!("update {length} at +{offset}"), |base| {
                plan_update_inline(base + TARGET + offset, &data[..length]).expect("valid")
            });
        }
    }
}

#[test]
fn patch_indirect_agrees_including_the_clamp() {
    let images = images();
    // A packet (64 bytes, INVALID header, workgroup sizes written), the counts, and the
    // implicit arguments, at 64-byte-aligned places in the target half.
    for counts in [[9u32, 1 << 31, 4], [1, 1, 1], [u32::MAX, 7, 0]] {
        for sizes in [[64u16, 2, 1], [1, 1, 1], [256, 3, 5]] {
            agree(&images, &format!("patch_indirect {counts:?} × {sizes:?}"), |base| {
                let (packet, counts_at, implicit) = (base + TARGET, base + TARGET + 128, base + TARGET + 192);
                // SAFETY: the three places lie in this arena's target half.
                unsafe {
                    for (axis, size) in sizes.iter().enumerate() {
                        (packet as *mut u16).add(2 + axis).write(*size);
                    }
                    for (axis, count) in counts.iter().enumerate() {
                        (counts_at as *mut u32).add(axis).write(*count);
                    }
                }
                plan_patch_indirect(packet, counts_at, implicit, 0x0003_1602).expect("valid")
            });
        }
    }
}
