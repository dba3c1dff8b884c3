#!/usr/bin/env bash
# Rebuilds the demo, bench, digits-MLP and n-body code objects (cli/kernels/, the CLI's workloads)
# and saxpy's (kernels/, the own-kernel example). Needs Debian's clang-19 and lld-19; building
# and testing do not (cli/build.rs compiles demo.c and bench.c for the host;
# saxpy.c's host build is Rust, in examples/own_kernel.rs).
# Deterministic: fixed flags, relative source paths, no build id.
set -euo pipefail
cd "$(dirname "$0")"
python3 ../cli/kernels/gen_bench.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# RDNA3 and RDNA2: the engine loads the first of a program's code objects that runs on its agents
# (Device::select_code_object), so the demo and the bench run on a gfx1030 agent too.
builtins_device=$(cd ../builtins/device && pwd)
# Each source is built from its own folder with a relative path, so the objects do not depend on
# where the checkout is.
build_c() { # folder name target
    (cd "$1" && clang-19 -target amdgcn-amd-amdhsa -mcpu="$3" -mcode-object-version=6 -nogpulib -ffreestanding -O3 \
        -Wall -Werror=implicit-function-declaration -I "$builtins_device" -c "$2.c" -o "$work/$2.o" \
        2> >(grep -v 'code object v6 is still in development' >&2) &&
        ld.lld-19 -shared --build-id=none "$work/$2.o" -o "$2_$3.hsaco")
    echo "built $1/$2_$3.hsaco"
}
# HIP as users write it: the digits MLP's kernels and the game example's n-body step. clang 19
# wraps a device-only object in an offload bundle (which needs clang-offload-bundler), so the
# assembly is assembled instead.
build_hip() { # folder name target
    (cd "$1" && clang-19 -x hip --offload-device-only --offload-arch="$3" -cuid="$2" -mcode-object-version=6 -O3 \
        -Wall -Werror=unused-value -Werror=uninitialized -nogpuinc -nogpulib -S "$2.hip" -o "$work/$2.s" \
        2> >(grep -v 'code object v6 is still in development' >&2) &&
        clang-19 -target amdgcn-amd-amdhsa -mcpu="$3" -mcode-object-version=6 -c "$work/$2.s" -o "$work/$2.o" \
            2> >(grep -v 'code object v6 is still in development' >&2) &&
        ld.lld-19 -shared --build-id=none "$work/$2.o" -o "$2_$3.hsaco")
    echo "built $1/$2_$3.hsaco"
}
# RDNA3 and RDNA2: the engine loads the first of a program's code objects that runs on its agents
# (Device::select_code_object), so the demo and the bench run on a gfx1030 agent too.
for target in gfx11-generic gfx10-3-generic gfx12-generic gfx90a gfx942; do
    build_c ../cli/kernels demo "$target"
    build_c ../cli/kernels bench "$target"
    build_c . saxpy "$target"
    build_hip ../cli/kernels mlp "$target"
    build_hip ../cli/kernels nbody "$target"
done
