//! Your own kernel, end to end: code objects built by clang from `kernels/saxpy.c` for RDNA3, RDNA2,
//! RDNA4, CDNA2 and CDNA3 (checked in as `kernels/saxpy_TARGET.hsaco`; `kernels/regen.sh`
//! rebuilds them), the one the device's agents run picked as HIP picks a fat binary's entry, its
//! host build written in Rust, a typed launch, and every element of the result checked.
//!
//! On ROCr with a GPU the GPU runs the code object and the registration takes nothing. On the
//! soft runtime (the default where no GPU is) the Rust host build below runs instead: the
//! registration compares its declared arguments with the code object's metadata, so a struct
//! that disagrees with the kernel is refused with an error naming the argument, never run.
//!
//! `cargo run --release --example own_kernel -- [--elements N] [--device SPEC]`

use std::time::Duration;

use aqueduct::host_build::{DevicePtr, HostBuild, HostKernel, Workgroup, kernel_args};
use aqueduct::prelude::*;
use clap::Parser;

/// `clang-19 -target amdgcn-amd-amdhsa -mcpu=TARGET` of `kernels/saxpy.c`, one per target.
const SAXPY_CODE_OBJECTS: [(&str, &[u8]); 5] = [
    ("gfx11-generic", include_bytes!("../kernels/saxpy_gfx11-generic.hsaco")),
    ("gfx10-3-generic", include_bytes!("../kernels/saxpy_gfx10-3-generic.hsaco")),
    ("gfx12-generic", include_bytes!("../kernels/saxpy_gfx12-generic.hsaco")),
    ("gfx90a", include_bytes!("../kernels/saxpy_gfx90a.hsaco")),
    ("gfx942", include_bytes!("../kernels/saxpy_gfx942.hsaco")),
];

kernel_args! {
    /// `saxpy(float *y, const float *x, float a, u32 count)`: the parameters in order, as the
    /// kernarg segment holds them (two device addresses, then two 4-byte values).
    struct SaxpyArgs {
        y: DevicePtr<f32>,
        x: DevicePtr<f32>,
        a: f32,
        count: u32,
    }
}

/// The host build of `saxpy`: `y[i] = a * x[i] + y[i]` for every work-item `i < count`, as the
/// GPU code does.
struct Saxpy;

impl HostKernel for Saxpy {
    const SYMBOL: &'static str = "saxpy.kd";
    type Args = SaxpyArgs;

    fn workgroup(group: &mut Workgroup<'_, SaxpyArgs>) {
        let SaxpyArgs { y, x, a, count } = *group.args();
        for item in group.work_items() {
            let i = item.global_id()[0];
            if i < count {
                let i = i as usize;
                // SAFETY: the launch binds `y` and `x` to buffers of `count` floats, and each
                // work-item touches only its own element.
                unsafe { y.write(i, a * x.read(i) + y.read(i)) };
            }
        }
    }
}

/// Loads a kernel from a checked-in code object, runs it with a Rust host build on the soft
/// runtime (or on the GPU), and checks every element.
#[derive(Parser)]
struct Arguments {
    /// Elements of `x` and `y`; the default is no multiple of the workgroup size, so the last
    /// workgroup is partial.
    #[arg(long, default_value_t = 65_539, value_parser = clap::value_parser!(u32).range(1..=(1 << 24)))]
    elements: u32,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
}

/// `a` and the inputs keep every product and sum exact in `f32`, so the GPU (which may fuse the
/// multiply-add into one rounding) and the host build (two roundings) give the same bits.
const A: f32 = 2.5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Arguments { elements, device } = Arguments::parse();
    let engine = Engine::new(&device)?;
    let device = engine.device();
    let code_object = device.select_code_object(&SAXPY_CODE_OBJECTS.map(|(_, bytes)| bytes))?;
    let target = SAXPY_CODE_OBJECTS.iter().find(|(_, bytes)| *bytes == code_object).map_or("?", |(target, _)| target);
    let host_build_taken = device.register_host_builds(code_object, &[HostBuild::of::<Saxpy>()])?;
    let saxpy = device.load_executable(code_object)?.kernel("saxpy")?;

    let x_values: Vec<f32> = (0..elements).map(|i| (i % 1024) as f32).collect();
    let y_values: Vec<f32> = (0..elements).map(|i| (i % 7) as f32 - 3.0).collect();
    let x = device.buffer_from(MemoryKind::HostVisible, &x_values)?;
    let y = device.buffer_from(MemoryKind::HostVisible, &y_values)?;
    let queue = device.create_queue()?;
    let done = device.create_semaphore(0)?;
    queue.launch(&saxpy).grid([elements, 1, 1]).arg(&y).arg(&x).arg(A).arg(elements).signal(done.at(1)).submit()?;
    done.wait(1, Duration::from_secs(30))?;

    let result = y.to_vec()?;
    if result.len() != elements as usize {
        return Err(format!("read back {} elements, expected {elements}", result.len()).into());
    }
    for (index, ((got, x), y)) in result.iter().zip(&x_values).zip(&y_values).enumerate() {
        let expected = A * x + y;
        if got.to_bits() != expected.to_bits() {
            return Err(format!("element {index}: {got}, expected {A} * {x} + {y} = {expected}").into());
        }
    }
    let ran = if host_build_taken { "its Rust host build" } else { "the GPU" };
    println!(
        "own_kernel: saxpy from kernels/saxpy_{target}.hsaco on {} ({ran}): all {elements} elements checked",
        device.provider()
    );
    Ok(())
}
