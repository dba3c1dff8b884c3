#!/usr/bin/env python3
"""A deterministic sample of a disassembly listing ("WORDS<TAB>text" lines, as golden_gfx10.sh and
golden_gfx9.sh write them): for each mnemonic and operand shape (register numbers and immediates
elided), the PER lines whose md5 is lowest. Prints the sample, unsorted.

Usage: python3 isa/gen/sample_golden.py PER LISTING
"""
import collections
import hashlib
import re
import sys


def shape(operands):
    """The operands with register numbers and numbers elided (`v[R]`, `ttmp`, `N`)."""
    operands = re.sub(r"\b([sva])\d+\b", r"\1R", operands)
    operands = re.sub(r"\b([sva])\[\d+:\d+\]", r"\1[R]", operands)
    operands = re.sub(r"ttmp\[?\d+(:\d+)?\]?", "ttmp", operands)
    return re.sub(r"0x[0-9a-f]+|-?\d+\.\d+|-?\d+", "N", operands)


def main():
    per, path = int(sys.argv[1]), sys.argv[2]
    shapes = collections.defaultdict(list)
    for line in open(path):
        line = line.rstrip("\n")
        mnemonic, _, operands = line.split("\t")[1].partition(" ")
        shapes[mnemonic + " " + shape(operands)].append(line)
    for lines in shapes.values():
        for line in sorted(lines, key=lambda line: hashlib.md5(line.encode()).hexdigest())[:per]:
            print(line)


if __name__ == "__main__":
    main()
