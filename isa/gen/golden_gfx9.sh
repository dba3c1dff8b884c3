#!/bin/sh
# Writes isa/tests/golden/gfx900.txt, gfx906.txt, gfx908.txt, gfx90a.txt and gfx942.txt
# ("WORDS<TAB>text", as golden_gfx10.sh writes gfx1030.txt): every distinct instruction of the
# checked-in gfx9 test kernels (isa/tests/kernels/*_gfx9*.hsaco), and a deterministic sample of the
# distinct instructions of each processor's code objects in Debian's librocsparse0 and librocrand1
# (which carry no gfx942), as LLVM 19 disassembles them. Each corpus has about 420,000 distinct instructions; the sample keeps, for each mnemonic
# and operand shape (registers and numbers elided), the 8 instructions whose lines hash lowest
# (md5).
#
# Usage: sh isa/gen/golden_gfx9.sh [FULL_DIR]
#   FULL_DIR: also write every distinct instruction of each corpus to FULL_DIR/<processor>.txt
#   (for AQUEDUCT_GFX9_CORPUS=FULL_DIR cargo test -p aqueduct-isa --test llvm_agreement_gfx9).
# Needs llvm-objdump-19, python3 and the two Debian packages.
set -eu
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
disassemble() { # processor object...
    processor=$1
    shift
    for object in "$@"; do
        nice llvm-objdump-19 -d --mcpu=$processor "$object"
    done | sed -n 's#^\t\(.*[^ ]\) *// [0-9A-F]*: \([0-9A-F ]*\)\( <.*>\)\{0,1\}$#\2\t\1#p'
}
for processor in gfx900 gfx906 gfx908 gfx90a gfx942; do
    kernels=$(ls isa/tests/kernels/*_$processor.hsaco 2>/dev/null || true)
    if [ -n "$kernels" ]; then disassemble $processor $kernels; fi | LC_ALL=C sort -u > "$work/$processor.kernels"
    if [ $processor = gfx942 ]; then
        cp "$work/$processor.kernels" "isa/tests/golden/$processor.txt"
        continue
    fi
    TARGET=$processor sh isa/gen/extract_rocm.sh "$work/$processor"
    for object in "$work/$processor"/*.hsaco; do
        nice llvm-objdump-19 -d --mcpu=$processor "$object"
    done | sed -n 's#^\t\(.*[^ ]\) *// [0-9A-F]*: \([0-9A-F ]*\)\( <.*>\)\{0,1\}$#\2\t\1#p' \
        | LC_ALL=C sort -u > "$work/$processor.txt"
    if [ $# -gt 0 ]; then
        mkdir -p "$1"
        cp "$work/$processor.txt" "$1/$processor.txt"
    fi
    python3 isa/gen/sample_golden.py 8 "$work/$processor.txt" > "$work/$processor.sample"
    LC_ALL=C sort -u "$work/$processor.kernels" "$work/$processor.sample" > "isa/tests/golden/$processor.txt"
    echo "isa/tests/golden/$processor.txt: $(wc -l < "isa/tests/golden/$processor.txt") lines;" \
        "corpus: $(wc -l < "$work/$processor.txt") distinct instructions" >&2
done
