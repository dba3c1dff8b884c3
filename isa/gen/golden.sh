#!/bin/sh
# Writes isa/tests/golden/gfx1100.txt: every distinct instruction of every checked-in gfx1100 and
# gfx11-generic code object, as LLVM 19 disassembles it ("WORDS<TAB>text", words in hex as
# llvm-objdump-19 prints them). The decoder's test compares its own text with this.
set -eu
cd "$(dirname "$0")/../.."
for object in $(sh isa/gen/objects.sh); do
    llvm-objdump-19 -d --mcpu=gfx1100 "$object"
done | sed -n 's#^\t\(.*[^ ]\) *// [0-9A-F]*: \([0-9A-F ]*\)\( <.*>\)\{0,1\}$#\2\t\1#p' | sort -u > isa/tests/golden/gfx1100.txt
