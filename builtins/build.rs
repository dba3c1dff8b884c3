//! Compiles the device library's C source (`device/blit.c`) for the host, with the work-item
//! shim `device/aqueduct_kernel.h`: the soft HSA runtime runs this build of the same kernels the
//! prebuilt AMDGPU code objects hold. Needs only the host C compiler (`cc`), never clang-19.

fn main() {
    println!("cargo::rerun-if-changed=device/blit.c");
    println!("cargo::rerun-if-changed=device/aqueduct_kernel.h");
    println!("cargo::rerun-if-changed=device/block_processor.h");
    cc::Build::new()
        .file("device/blit.c")
        .include("device")
        .std("gnu11")
        // Fixed, whatever the profile: the kernels are the hot loop of every soft-runtime test.
        .opt_level(2)
        .debug(false)
        // Kernels reinterpret device memory (a dispatch packet as u16 and u32 words), as GPU code
        // does; strict aliasing would let the compiler reorder those accesses.
        .flag("-fno-strict-aliasing")
        .flag_if_supported("-Werror=implicit-function-declaration")
        .warnings(true)
        .compile("aqueduct_blit_host");
    // The shim's folder, for dependents that build kernels of their own the same way (the root
    // crate's demo and bench kernels): `DEP_AQUEDUCT_BUILTINS_INCLUDE` in their build scripts.
    let device = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("device");
    println!("cargo::metadata=include={}", device.display());
}
