#!/usr/bin/env bash
# Rebuilds the demo and bench code objects. Needs Debian's clang-19 and lld-19.
set -euo pipefail
cd "$(dirname "$0")"
python3 gen_bench.py
for name in demo bench; do
    clang-19 -target amdgcn-amd-amdhsa -mcpu=gfx11-generic -mcode-object-version=6 -nogpulib -ffreestanding -O3 -c "$name.c" -o "/tmp/aqueduct-$name.o"
    ld.lld-19 -shared "/tmp/aqueduct-$name.o" -o "${name}_gfx11-generic.hsaco"
done
