#!/usr/bin/env bash
# Rebuilds the demo code object. Needs Debian's clang-19 and lld-19.
set -euo pipefail
cd "$(dirname "$0")"
clang-19 -target amdgcn-amd-amdhsa -mcpu=gfx11-generic -mcode-object-version=6 -nogpulib -ffreestanding -O3 -c demo.c -o /tmp/aqueduct-demo.o
ld.lld-19 -shared /tmp/aqueduct-demo.o -o demo_gfx11-generic.hsaco
