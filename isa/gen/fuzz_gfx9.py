#!/usr/bin/env python3
"""Random gfx9 words for the decoder's LLVM agreement test, beyond what compilers emit.

For every row of isa/src/gfx9/table.rs and every processor that has it, tries TRIES random
instructions (the encoding's fixed bits and the row's opcode, every other bit random, register
and source fields biased to the values LLVM prints specially; then with and without a random
trailing dword, which LLVM takes as a literal or SDWA/DPP word where the instruction has one) and
keeps up to PER that `llvm-mc-19 --disassemble -mcpu=<processor>` reads as exactly one
instruction without complaint. Writes "PROCESSOR<TAB>WORDS<TAB>text" lines, sorted:

    python3 isa/gen/fuzz_gfx9.py SEED PER OUT.tsv  (about a minute on 2 cores)

`tests/golden/gfx9_fuzz.txt` is `fuzz_gfx9.py 9 2`; tests/llvm_agreement_gfx9.rs checks it, and
with AQUEDUCT_GFX9_FUZZ=OUT.tsv any other such file.
"""
import os
import random
import re
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_gfx9 as G  # noqa: E402

TRIES = 48
# encoding: (fixed bits of the first word, their mask, opcode shift, opcode width, words)
ENCODINGS = {
    "SOP2": (0x80000000, 0xC0000000, 23, 7, 1), "SOPK": (0xB0000000, 0xF0000000, 23, 5, 1),
    "SOP1": (0xBE800000, 0xFF800000, 8, 8, 1), "SOPC": (0xBF000000, 0xFF800000, 16, 7, 1),
    "SOPP": (0xBF800000, 0xFF800000, 16, 7, 1), "SMEM": (0xC0000000, 0xFC000000, 18, 8, 2),
    "VOP2": (0, 0x80000000, 25, 6, 1), "VOP1": (0x7E000000, 0xFE000000, 9, 8, 1),
    "VOPC": (0x7C000000, 0xFE000000, 17, 8, 1), "VOP3": (0xD0000000, 0xFC000000, 16, 10, 2),
    "VOP3P": (0xD3800000, 0xFF800000, 16, 7, 2), "DS": (0xD8000000, 0xFC000000, 17, 8, 2),
    "FLAT": (0xDC000000, 0xFC00C000, 18, 7, 2), "SCRATCH": (0xDC004000, 0xFC00C000, 18, 7, 2),
    "GLOBAL": (0xDC008000, 0xFC00C000, 18, 7, 2), "MUBUF": (0xE0000000, 0xFC000000, 18, 7, 2),
    "MTBUF": (0xE8000000, 0xFC000000, 15, 4, 2),
}
EXTENSIONS = {"SDWA": 249, "DPP": 250}
SPECIAL = [102, 104, 106, 107, 108, 124, 126, 127, 128, 129, 192, 193, 208, 235, 240, 242, 247, 248, 251, 253]


def source9():
    choice = random.random()
    if choice < 0.45:
        return 256 + random.getrandbits(8)
    if choice < 0.75:
        return random.getrandbits(7)
    return random.choice(SPECIAL)


def random_words(enc, op):
    base, extension = enc.split("_")[0], enc.split("_")[1] if "_" in enc else None
    fixed, mask, shift, width, count = ENCODINGS[base]
    w0 = fixed | op << shift | random.getrandbits(32) & ~mask & ~(((1 << width) - 1) << shift)
    words = [w0] + [random.getrandbits(32) for _ in range(count - 1)]
    if base in ("VOP1", "VOP2", "VOPC"):
        words[0] = words[0] & ~0x1FF | (EXTENSIONS[extension] if extension else source9())
    if base in ("VOP3", "VOP3P"):
        words[1] = words[1] & ~0x7FFFFFF | source9() | source9() << 9 | source9() << 18
    if random.random() < 0.5:
        words.append(random.choice([random.getrandbits(32), 0x3F800000, 0x3C00, 64, 0x12345678]))
    return words


def main():
    seed, per, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    random.seed(seed)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    text = open(os.path.join(root, "src", "gfx9", "table.rs")).read()
    rows = []
    for name, body in re.findall(r"static (\w+): &\[Entry\] = &\[\n(.*?)\n\];", text, re.S):
        for op, mnemonic, processors in re.findall(r'op: (\d+), mnemonic: "(\w+)".*?processors: ([A-Z0-9 |]+) \}', body):
            rows.append((name, int(op), mnemonic, [p.strip().lower() for p in processors.split("|")]))
    pool = ThreadPoolExecutor(2)
    lines = set()
    for processor in G.PROCESSORS:
        d = G.Disassembler(processor, pool)
        # The decoder refuses VOP3's pixel-shader interpolation (never in compute code).
        mine = [row for row in rows if processor in row[3] and not (row[0] == "VOP3" and row[2].startswith("v_interp"))]
        tries = [(row, random_words(row[0], row[1])) for row in mine for _ in range(TRIES)]
        texts = d.many([words for _, words in tries])
        kept = {}
        for (row, words), result in zip(tries, texts):
            key = (row[0], row[1], row[2])
            if result and "/*" not in result and result.split(" ")[0] == row[2] and kept.get(key, 0) < per:
                kept[key] = kept.get(key, 0) + 1
                lines.add(f"{processor}\t{' '.join('%08X' % w for w in words)}\t{result}")
        print(f"{processor}: {len(kept)} of {len(mine)} rows", file=sys.stderr)
    with open(out_path, "w") as out:
        out.write("".join(line + "\n" for line in sorted(lines)))


if __name__ == "__main__":
    main()
