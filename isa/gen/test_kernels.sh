#!/usr/bin/env bash
# Rebuilds the interpreter's test kernels, isa/tests/kernels/<name>_<target>.hsaco, from the
# sources beside them, for gfx1100, gfx11-generic (code object v6) and gfx1030 (the kernels that
# build there, run through the interpreter's gfx10.3 path), and in wave64 for gfx1030 and
# gfx1100 (targets gfx1030-wave64, gfx1100-wave64: -mwavefrontsize64); the CDNA matrix kernels
# (gfx9_only) for gfx908, gfx90a and gfx942 only; the kernels that build for gfx9 (gfx9_too) also
# for gfx906 and gfx90a; for gfx1200, gfx1201, gfx12-generic and gfx1200-wave64 (RDNA4) the
# kernels that build there (not gfx12_not). isa/tests/kernels_exec.rs runs the gfx11 and gfx10.3 ones and the gfx9
# ones that run whole through the gfx9 path; isa/tests/gfx9_exec.rs lists what each gfx9 one has
# that the interpreter refuses; isa/tests/llvm_agreement_gfx9.rs decodes the CDNA ones. Needs Debian's clang-19 and lld-19. Deterministic: fixed flags, relative source paths, no
# build id; the outputs are checked in.
set -euo pipefail
cd "$(dirname "$0")/../tests/kernels"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Extra flags per source. atomics: the hardware float atomics rather than compare-swap loops,
# and no atomic optimizer, so every lane's atomic reaches memory as written.
extra_flags() {
    case "$1" in
        atomics) echo "-munsafe-fp-atomics -mllvm -amdgpu-atomic-optimizer-strategy=None" ;;
        *) echo "" ;;
    esac
}

# Sources with nothing for gfx1030 (WMMA is RDNA3's; gfx10 numbers buffer formats differently);
# sources only for wave64, and not for it (the interpreter runs WMMA in wave32 only; one wave
# size suffices for the typed buffer accesses).
gfx11_only="wmma typed_buffer"
wave64_only="wave64"
wave32_only="wmma wmma_gfx12 wmma_gfx12_sparse typed_buffer"
# Sources only for gfx12 (its WMMA builtins).
gfx12_only="wmma_gfx12 wmma_gfx12_sparse wmma_gfx12_waves"
gfx9_only="mfma"
# The sources that build for gfx9 (the others use gfx10's permlanes, DPP8, WMMA or its formats).
gfx9_too="atomics buffer gemm half hgemm idioms mode transcendental trig_preop"
# Sources with nothing for gfx12: WMMA in gfx11's operand layout (gfx12's intrinsics take other
# vector types) and mode's s_memtime/s_memrealtime (gfx12 has neither).
gfx12_not="wmma mode"

# Code object v6 is the first to allow a generic target; a -wave64 target is its GPU in wave64.
version_flags() {
    case "$1" in
        gfx11-generic | gfx12-generic) echo "-mcode-object-version=6" ;;
        *-wave64) echo "-mwavefrontsize64" ;;
        *) echo "" ;;
    esac
}

build() { # source target
    local source=$1 name=${1%.*} kind=${1##*.} target=${2%-wave64}
    local out="$work/${name}_$2" flags
    flags="$(version_flags "$2") $(extra_flags "$name") -O3 -Wall -Werror=implicit-function-declaration"
    case "$kind" in
        c) clang-19 -x c -target amdgcn-amd-amdhsa -mcpu="$target" $flags -nogpulib -ffreestanding -c "$source" -o "$out.o" ;;
        ll) clang-19 -x ir -target amdgcn-amd-amdhsa -mcpu="$target" $flags -nogpulib -c "$source" -o "$out.o" ;;
        cl) clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$target" $flags -nogpulib -c "$source" -o "$out.o" ;;
        hip)
            # Device-only HIP without headers or device libraries. clang 19 wraps a device-only
            # object in an offload bundle (which needs clang-offload-bundler), so assemble its
            # assembly instead.
            clang-19 -x hip --offload-device-only --offload-arch="$target" -cuid="$name" $flags -nogpuinc -nogpulib -S "$source" -o "$out.s"
            clang-19 -target amdgcn-amd-amdhsa -mcpu="$target" $(version_flags "$2") -c "$out.s" -o "$out.o" ;;
    esac 2> >(grep -v 'code object v6 is still in development' >&2)
    ld.lld-19 -shared --build-id=none "$out.o" -o "${name}_$2.hsaco"
    echo "built ${name}_$2.hsaco"
}

for source in *.c *.cl *.hip *.ll; do
    [ -e "$source" ] || continue
    name=${source%.*}
    for target in gfx1100 gfx11-generic gfx1030 gfx1030-wave64 gfx1100-wave64 gfx906 gfx908 gfx90a gfx942 gfx1200 gfx1201 gfx12-generic gfx1200-wave64; do
        if [[ "$target" == gfx12* && " $gfx12_not " == *" $name "* ]]; then
            continue
        fi
        if [[ "$target" != gfx12* && " $gfx12_only " == *" $name "* ]]; then
            continue
        fi
        is_gfx9=no; [[ "$target" == gfx9* ]] && is_gfx9=yes
        wants_gfx9=no; [[ " $gfx9_only " == *" $name "* ]] && wants_gfx9=yes
        also_gfx9=no; [[ " $gfx9_too " == *" $name "* ]] && also_gfx9=yes
        if [[ "$also_gfx9" == yes ]]; then
            # Everywhere else, and on gfx906 and gfx90a among the gfx9 targets.
            if [[ "$is_gfx9" == yes && "$target" != gfx906 && "$target" != gfx90a ]]; then
                continue
            fi
        elif [[ "$is_gfx9" != "$wants_gfx9" || ("$target" == gfx906) ]]; then
            continue
        fi
        if [[ "$target" == gfx1030* && " $gfx11_only " == *" $name "* ]]; then
            continue
        fi
        if [[ "$target" == *-wave64 && " $wave32_only " == *" $name "* ]]; then
            continue
        fi
        if [[ "$target" != *-wave64 && " $wave64_only " == *" $name "* ]]; then
            continue
        fi
        build "$source" "$target"
    done
done
