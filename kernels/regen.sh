#!/usr/bin/env bash
# Rebuilds the demo, bench, saxpy, digits-MLP and n-body code objects. Needs Debian's clang-19 and lld-19; building
# and testing do not (the root crate's build.rs compiles demo.c and bench.c for the host;
# saxpy.c's host build is Rust, in examples/own_kernel.rs).
# Deterministic: fixed flags, relative source paths, no build id.
set -euo pipefail
cd "$(dirname "$0")"
python3 gen_bench.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# RDNA3 and RDNA2: the engine loads the first of a program's code objects that runs on its agents
# (Device::select_code_object), so the demo and the bench run on a gfx1030 agent too.
for target in gfx11-generic gfx10-3-generic; do
    for name in demo bench saxpy; do
        clang-19 -target amdgcn-amd-amdhsa -mcpu="$target" -mcode-object-version=6 -nogpulib -ffreestanding -O3 \
            -Wall -Werror=implicit-function-declaration -I ../builtins/device -c "$name.c" -o "$work/$name.o" \
            2> >(grep -v 'code object v6 is still in development' >&2)
        ld.lld-19 -shared --build-id=none "$work/$name.o" -o "${name}_${target}.hsaco"
        echo "built ${name}_${target}.hsaco"
    done
    # HIP as users write it: the digits MLP's kernels and the game example's n-body step. clang 19
    # wraps a device-only object in an offload bundle (which needs clang-offload-bundler), so
    # the assembly is assembled instead.
    for name in mlp nbody; do
        clang-19 -x hip --offload-device-only --offload-arch="$target" -cuid="$name" -mcode-object-version=6 -O3 \
            -Wall -Werror=unused-value -Werror=uninitialized -nogpuinc -nogpulib -S "$name.hip" -o "$work/$name.s" \
            2> >(grep -v 'code object v6 is still in development' >&2)
        clang-19 -target amdgcn-amd-amdhsa -mcpu="$target" -mcode-object-version=6 -c "$work/$name.s" -o "$work/$name.o" \
            2> >(grep -v 'code object v6 is still in development' >&2)
        ld.lld-19 -shared --build-id=none "$work/$name.o" -o "${name}_${target}.hsaco"
        echo "built ${name}_${target}.hsaco"
    done
done
