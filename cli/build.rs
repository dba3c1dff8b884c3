//! Compiles the demo and bench kernels (`cli/kernels/demo.c`, `cli/kernels/bench.c`) for the host with
//! the device library's work-item shim, so the soft HSA runtime runs the same source as their
//! AMDGPU code objects. Needs only the host C compiler (`cc`), never clang-19.

fn main() {
    for path in ["kernels/demo.c", "kernels/bench.c"] {
        println!("cargo::rerun-if-changed={path}");
    }
    // The device library's shim folder, from its build script (so a packaged crate finds it too).
    let shim = std::env::var("DEP_AQUEDUCT_BUILTINS_INCLUDE").expect("aqueduct-builtins names its shim's folder");
    println!("cargo::rerun-if-changed={shim}/aqueduct_kernel.h");
    cc::Build::new()
        .files(["kernels/demo.c", "kernels/bench.c"])
        .include(&shim)
        .std("gnu11")
        // Fixed, whatever the profile: these run inside the soft runtime's hot loop.
        .opt_level(2)
        .debug(false)
        .flag("-fno-strict-aliasing")
        .flag_if_supported("-Werror=implicit-function-declaration")
        .warnings(true)
        .compile("aqueduct_kernels_host");
}
