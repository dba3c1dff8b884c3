#!/usr/bin/env python3
"""Random gfx1030 words for the decoder's LLVM agreement test, beyond what compilers emit.

For every opcode of every encoding in isa/src/gfx10/table.rs, writes PER random instructions (the
opcode's encoding bits and opcode, every other field random, register and source fields biased
to valid values, then a random literal dword and s_nop padding to four dwords), assembles them
with llvm-mc-19 as `.long`s and disassembles the object with llvm-objdump-19 -d --mcpu=gfx1030,
keeping each line LLVM decodes without complaint ("WORDS<TAB>text", as golden_gfx10.sh writes).
Words in encodings the decoder refuses (EXP, MIMG, MTBUF, VINTRP, the VOP3 interpolation
operations) are left out. Then:

    python3 isa/gen/fuzz_gfx10.py SEED PER OUT.tsv
    AQUEDUCT_GFX1030_CORPUS=OUT.tsv cargo test -p aqueduct-isa --test llvm_agreement_gfx10

Nothing it writes is checked in.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

seed, per, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
random.seed(seed)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
text = open(os.path.join(root, "src", "gfx10", "table.rs")).read()
tables = {name: [int(op) for op in re.findall(r"op: (\d+),", body)]
          for name, body in re.findall(r"static (\w+): &\[Entry\] = &\[\n(.*?)\n\];", text, re.S)}
r = random.getrandbits
INTERESTING = [106, 107, 124, 125, 126, 127, 128, 129, 192, 193, 208, 235, 239, 240, 242, 244, 247, 248, 251, 253,
               254, 255]
LITERALS = [0x3F800000, 0x40000000, 64, 0xFFFFFFF0, 0x3C00, 0x12345678, 0x3E22F983, 0x4000, 0x3FF00000]


def src9():
    """A 9-bit source: mostly VGPRs, SGPRs and the special values."""
    choice = random.random()
    if choice < 0.4:
        return 256 + r(8)
    if choice < 0.6:
        return r(7)
    if choice < 0.8:
        return random.choice(INTERESTING)
    return r(9)


def src8():
    value = src9()
    return value if value < 256 else r(7)


def words(table, op):
    literal = r(32) if random.random() < 0.5 else random.choice(LITERALS)
    if table == "SOP2":
        return [0x80000000 | op << 23 | r(7) << 16 | src8() << 8 | src8(), literal]
    if table == "SOPK":
        return [0xB0000000 | op << 23 | r(7) << 16 | r(16), literal]
    if table == "SOP1":
        return [0xBE800000 | r(7) << 16 | op << 8 | src8(), literal]
    if table == "SOPC":
        return [0xBF000000 | op << 16 | src8() << 8 | src8(), literal]
    if table == "SOPP":
        return [0xBF800000 | op << 16 | (r(16) if random.random() < 0.5 else r(6))]
    if table == "SMEM":
        soffset = random.choice([0x7D, r(7), 124, 106])
        return [0xF4000000 | op << 18 | r(18), soffset << 25 | (r(21) if random.random() < 0.5 else r(8))]
    if table in ("VOP2", "ILLEGAL"):
        return [op << 25 | r(8) << 17 | r(8) << 9 | src9(), literal]
    if table == "VOP1":
        return [0x7E000000 | r(8) << 17 | op << 9 | src9(), literal]
    if table == "VOPC":
        return [0x7C000000 | op << 17 | r(8) << 9 | src9(), literal]
    if table in ("VOP3", "VOP3P"):
        if table == "VOP3":
            low = r(16) if random.random() < 0.3 else r(8) | (r(4) << 8 if random.random() < 0.5 else 0) | r(1) << 15
            w0 = 0xD4000000 | op << 16 | low
        else:
            w0 = 0xCC000000 | op << 16 | r(16)
        high = r(5) << 27 if table == "VOP3P" or random.random() < 0.5 else 0
        return [w0, src9() | src9() << 9 | src9() << 18 | high, literal]
    if table == "DS":
        return [0xD8000000 | op << 18 | r(18), r(32)]
    if table in ("FLAT", "SCRATCH", "GLOBAL"):
        segment = {"FLAT": 0, "SCRATCH": 1, "GLOBAL": 2}[table]
        w0 = 0xDC000000 | op << 18 | segment << 14 | r(2) << 16 | r(1) << 12 | r(12)
        saddr = random.choice([0x7D, 0x7D, r(7), 0x7F, 0x7C, 106])
        return [w0, r(8) << 24 | saddr << 16 | r(8) << 8 | r(8)]
    if table == "MUBUF":
        w0 = 0xE0000000 | (op & 0x7F) << 18 | (op >> 7) << 25 | r(16)
        return [w0, random.choice([0x80, 0x7D, r(8)]) << 24 | r(2) << 22 | r(5) << 16 | r(16), literal]
    sdwa = table.endswith("SDWA")
    src0 = 249 if sdwa else random.choice([250, 250, 233, 234])
    if table.startswith("VOP1"):
        w0 = 0x7E000000 | r(8) << 17 | op << 9 | src0
    elif table.startswith("VOP2"):
        w0 = op << 25 | r(8) << 17 | r(8) << 9 | src0
    else:
        w0 = 0x7C000000 | op << 17 | r(8) << 9 | src0
    if sdwa:
        sel = lambda: random.choice(range(7))
        w1 = (r(8) | r(3) << 8 | r(2) << 11 | r(1) << 13 | r(2) << 14 | sel() << 16 | r(4) << 19 | r(1) << 23
              | sel() << 24 | r(4) << 27 | r(1) << 31)
        if random.random() < 0.5:
            w1 &= ~(0xF << 19 | 0xF << 27)  # no source modifiers
    else:
        w1 = r(32)
        if random.random() < 0.6:
            control = random.choice([r(8), 0x101 + r(4), 0x111 + r(4), 0x121 + r(4), 0x140, 0x141, 0x150 + r(4),
                                     0x160 + r(4), r(9)])
            w1 = (w1 & ~0x1FF00) | control << 8
    return [w0, w1]


lines = []
for table, ops in tables.items():
    for op in ops:
        for _ in range(per):
            instruction = words(table, op)
            instruction += [0xBF800000] * (4 - len(instruction))  # s_nop 0
            lines.append(".long " + ", ".join("0x%08x" % word for word in instruction))
# llvm-objdump-19 crashes on a few random words: chunks of 500 instructions, and a chunk it
# crashes on is left out.
listing, crashed = "", 0
with tempfile.TemporaryDirectory() as work:
    source, obj = os.path.join(work, "fuzz.s"), os.path.join(work, "fuzz.o")
    for start in range(0, len(lines), 500):
        open(source, "w").write(".text\n" + "\n".join(lines[start:start + 500]) + "\n")
        subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1030", "-filetype=obj", source, "-o", obj],
                       check=True)
        dump = subprocess.run(["nice", "llvm-objdump-19", "-d", "--mcpu=gfx1030", obj], capture_output=True, text=True)
        if dump.returncode == 0:
            listing += dump.stdout
        else:
            crashed += 1
line_pattern = re.compile(r"^\t(.*[^ ]) *// [0-9A-F]*: ([0-9A-F ]*)( <.*>)?$")
refused = re.compile(r"^(exp |image_|tbuffer_|v_interp_)")
# LLVM's comments flag words it decoded but rejects; its DPP comments are its printing.
comment_ok = ("dpp_ctrl", "starting from GFX10")
decoded = set()
for line in listing.splitlines():
    match = line_pattern.match(line)
    if not match:
        continue
    instruction = match.group(1)
    if instruction.startswith(".long") or refused.match(instruction):
        continue
    if "/*" in instruction and not any(ok in instruction for ok in comment_ok):
        continue
    decoded.add(match.group(2).strip() + "\t" + instruction)
open(out_path, "w").write("".join(line + "\n" for line in sorted(decoded)))
print(f"{len(lines)} random instructions ({crashed} chunks of 500 left out: llvm-objdump crashed); "
      f"{len(decoded)} distinct lines LLVM decodes -> {out_path}", file=sys.stderr)
