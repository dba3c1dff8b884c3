//! Compiles the demo and bench kernels (`kernels/demo.c`, `kernels/bench.c`) for the host with
//! the device library's work-item shim, so the soft HSA runtime runs the same source as their
//! AMDGPU code objects. Needs only the host C compiler (`cc`), never clang-19.

fn main() {
    for path in ["kernels/demo.c", "kernels/bench.c", "builtins/device/aqueduct_kernel.h"] {
        println!("cargo::rerun-if-changed={path}");
    }
    cc::Build::new()
        .files(["kernels/demo.c", "kernels/bench.c"])
        .include("builtins/device")
        .std("gnu11")
        // Fixed, whatever the profile: these run inside the soft runtime's hot loop.
        .opt_level(2)
        .debug(false)
        .flag("-fno-strict-aliasing")
        .flag_if_supported("-Werror=implicit-function-declaration")
        .warnings(true)
        .compile("aqueduct_kernels_host");
}
