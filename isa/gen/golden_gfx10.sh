#!/bin/sh
# Writes isa/tests/golden/gfx1030.txt ("WORDS<TAB>text", as isa/gen/golden.sh writes gfx1100.txt):
# every distinct instruction of the checked-in gfx1030 test kernels (isa/tests/kernels/
# *_gfx1030.hsaco), and a deterministic sample of the distinct instructions of the gfx1030 code
# objects in Debian's librocsparse0 and librocrand1, as LLVM 19 disassembles them. The ROCm
# corpus has about 450,000 distinct instructions (22 MB of text), too many to check in: the
# sample keeps, for each mnemonic and operand shape (registers and numbers elided), the 32
# instructions whose lines hash lowest (md5), about 20,000 lines.
#
# Usage: sh isa/gen/golden_gfx10.sh [FULL]
#   FULL: also write every distinct instruction of the ROCm corpus there (for
#   AQUEDUCT_GFX1030_CORPUS=FULL cargo test -p aqueduct-isa --test llvm_agreement_gfx10).
# Needs llvm-objdump-19, python3 and the two Debian packages
# (apt-get install -y --no-install-recommends librocsparse0 librocrand1).
set -eu
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sh isa/gen/extract_rocm.sh "$work/rocm"
disassemble() {
    for object in "$@"; do
        nice llvm-objdump-19 -d --mcpu=gfx1030 "$object"
    done | sed -n 's#^\t\(.*[^ ]\) *// [0-9A-F]*: \([0-9A-F ]*\)\( <.*>\)\{0,1\}$#\2\t\1#p'
}
disassemble isa/tests/kernels/*_gfx1030.hsaco | sort -u > "$work/kernels.txt"
disassemble "$work"/rocm/*.hsaco | sort -u > "$work/rocm.txt"
if [ $# -gt 0 ]; then
    cp "$work/rocm.txt" "$1"
fi
python3 isa/gen/sample_golden.py 32 "$work/rocm.txt" > "$work/sample.txt"
LC_ALL=C sort -u "$work/kernels.txt" "$work/sample.txt" > isa/tests/golden/gfx1030.txt
echo "isa/tests/golden/gfx1030.txt: $(wc -l < isa/tests/golden/gfx1030.txt) lines;" \
    "ROCm corpus: $(wc -l < "$work/rocm.txt") distinct instructions" >&2
