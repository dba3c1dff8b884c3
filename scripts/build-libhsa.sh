#!/usr/bin/env bash
# Builds the soft HSA runtime as a drop-in `libhsa-runtime64.so.1` (SONAME libhsa-runtime64.so.1,
# the HSA entry points under ROCr's ROCR_1 version node, `aqueduct_soft_*` under AQUEDUCT_SOFT_1,
# nothing else exported) and prints, as its last line, the directory that holds it (with a
# `libhsa-runtime64.so` link for `-lhsa-runtime64`).
#
# Usage: scripts/build-libhsa.sh [--debug]
# Needs the system C compiler (`cc`) as the linker driver.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
profile=release
cargo_flags=(--release)
if [[ "${1:-}" == "--debug" ]]; then
    profile=debug
    cargo_flags=()
fi
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
cargo rustc -q -p aqueduct-soft-hsa --lib --features drop-in-library --crate-type staticlib "${cargo_flags[@]}" >&2
archive="$target_dir/$profile/libaqueduct_soft_hsa.a"
out="$target_dir/libhsa/$profile"
mkdir -p "$out"
# The archive carries the Rust standard library; the system libraries are what it calls.
cc -shared -o "$out/libhsa-runtime64.so.1" \
    -Wl,-soname,libhsa-runtime64.so.1 \
    -Wl,--version-script=soft-hsa/exports.map \
    -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
    -Wl,-z,now -Wl,--gc-sections \
    -lpthread -ldl -lm -lgcc_s -lc
ln -sf libhsa-runtime64.so.1 "$out/libhsa-runtime64.so"
echo "$out"
