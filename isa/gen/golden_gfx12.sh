#!/bin/sh
# Writes isa/tests/golden/gfx1200.txt, gfx1201.txt and gfx12-generic.txt ("WORDS<TAB>text", as
# golden_gfx9.sh writes its files): every distinct instruction of the checked-in gfx12 test
# kernels (isa/tests/kernels/*_gfx1200.hsaco and *_gfx1200-wave64.hsaco, *_gfx1201.hsaco,
# *_gfx12-generic.hsaco) as `llvm-objdump-19 -d --mcpu=<processor>` prints it.
# tests/llvm_agreement_gfx12.rs checks them.
set -eu
cd "$(dirname "$0")/../.."
for processor in gfx1200 gfx1201 gfx12-generic; do
    for object in isa/tests/kernels/*_$processor.hsaco isa/tests/kernels/*_$processor-wave64.hsaco; do
        [ -e "$object" ] || continue
        nice llvm-objdump-19 -d --mcpu=$processor "$object"
    done | sed -n 's#^\t\(.*[^ ]\) *// [0-9A-F]*: \([0-9A-F ]*\)\( <.*>\)\{0,1\}$#\2\t\1#p' \
        | LC_ALL=C sort -u > "isa/tests/golden/$processor.txt"
    echo "isa/tests/golden/$processor.txt: $(wc -l < "isa/tests/golden/$processor.txt") lines" >&2
done
