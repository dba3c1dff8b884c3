#!/usr/bin/env python3
"""Builds isa/src/gfx11/table.rs: every gfx1100 opcode LLVM 19 knows, per encoding, with the
operands it prints in order and their widths in dwords.

Source: LLVM 19's AMDGPU disassembler (`llvm-mc-19 --disassemble -mcpu=gfx1100`, Debian's
llvm-19), probed with one canonical word per opcode. The encodings' field positions are AMD's
"RDNA3 Instruction Set Architecture Reference Guide", chapter 15 (Microcode Formats); the probe
puts a distinct register number in each field (destination 10, sources 20, 30, 40, ...) so the
printed text says which field each operand comes from and how wide it is.

Run: python3 isa/gen/probe_llvm.py > isa/src/gfx11/table.rs  (a few minutes on 2 cores).
"""
import itertools
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

V = 256  # a VGPR in a 9-bit source field


CACHE_PATH = "/tmp/aqueduct-llvm-probe.json"  # reruns of the emitter skip llvm-mc
try:
    import json
    CACHE = json.load(open(CACHE_PATH))
except (OSError, ValueError):
    CACHE = {}


def disassemble(words):
    key = " ".join("%08x" % w for w in words)
    if key not in CACHE:
        CACHE[key] = disassemble_uncached(words)
    return CACHE[key]


def disassemble_uncached(words):
    data = b"".join(w.to_bytes(4, "little") for w in words)
    line = ",".join("0x%02x" % x for x in data)
    out = subprocess.run(["llvm-mc-19", "--disassemble", "-arch=amdgcn", "-mcpu=gfx1100"],
                         input=line + "\n", capture_output=True, text=True)
    if "invalid" in out.stderr or "warning" in out.stderr:
        return None
    text = [l.strip() for l in out.stdout.splitlines() if l.strip() and not l.strip().startswith(".text")]
    return text[0] if len(text) == 1 else None


def probe(count, variants, pool):
    """The first variant LLVM accepts for each opcode: {op: (variant index, text)}."""
    found = {}
    for index, make in enumerate(variants):
        todo = [op for op in range(count) if op not in found]
        for op, text in zip(todo, pool.map(disassemble, [make(op) for op in todo])):
            if text and "/*" not in text:  # LLVM flags an operand it decoded but rejects
                found[op] = (index, text)
    return dict(sorted(found.items()))


def split_operands(rest):
    """Operands separated by ', ' outside parentheses and brackets; modifiers after a space."""
    parts, depth, current = [], 0, ""
    for ch in rest:
        depth += ch in "([" ; depth -= ch in ")]"
        if ch == "," and depth == 0:
            parts.append(current.strip()); current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    # The last part may carry modifiers (`v40 op_sel_hi:[1,1,0]`).
    if parts and " " in parts[-1] and not parts[-1].startswith(("hwreg", "sendmsg")) and "(" not in parts[-1].split(" ")[0][:0]:
        head = parts[-1].split(" ")[0]
        if not head.startswith(("hwreg", "sendmsg", "vmcnt", "depctr", "instid")):
            parts[-1] = head
    return parts


REG = re.compile(r"^([sv])(?:\[(\d+):(\d+)\]|(\d+))$")


def operand_slots(encoding, text, fields):
    mnemonic, _, rest = text.partition(" ")
    slots = []
    for token in split_operands(rest):
        m = REG.match(token)
        if m:
            lo = int(m.group(2) or m.group(4)); hi = int(m.group(3) or m.group(4))
            field = fields(m.group(1), lo)
            if field is None:
                raise SystemExit(f"{encoding}: no field for {token} in {text!r}")
            slots.append(f"{field}({hi - lo + 1})")
        elif token in ("vcc_lo", "vcc", "exec_lo", "exec", "m0", "scc"):
            slots.append(f'Fixed("{token}")')
        elif token == "off":
            slots.append("Off")
        elif token == "null":
            slots.append("Null")
        else:
            slots.append("Imm")
    return mnemonic, slots


def by_base(table):
    def field(file, lo):
        for (f, base), name in table.items():
            if f == file and lo in base:
                return name
        return None
    return field


R = lambda *n: frozenset(n)
FIELDS = {
    "SOP2": by_base({("s", R(10, 11)): "Sdst", ("s", R(20, 21)): "Ssrc0", ("s", R(30, 31)): "Ssrc1"}),
    "SOPK": by_base({("s", R(10, 11)): "Sdst"}),
    "SOP1": by_base({("s", R(10, 11)): "Sdst", ("s", R(20, 21)): "Ssrc0"}),
    "SOPC": by_base({("s", R(20, 21)): "Ssrc0", ("s", R(30, 31)): "Ssrc1"}),
    "SOPP": by_base({}),
    "SMEM": by_base({("s", R(*range(8, 12))): "Sdata", ("s", R(20)): "Sbase", ("s", R(12, 13)): "Soffset"}),
    "VOP2": by_base({("v", R(10, 11)): "Vdst", ("v", R(20, 21)): "Src0", ("v", R(30, 31)): "Src1"}),
    "VOP1": by_base({("v", R(10, 11)): "Vdst", ("s", R(10, 11)): "ScalarVdst", ("v", R(20, 21)): "Src0"}),
    "VOPC": by_base({("v", R(20, 21)): "Src0", ("v", R(30, 31)): "Src1"}),
    "VOP3": by_base({("v", R(*range(10, 18))): "Vdst", ("s", R(10, 11)): "ScalarVdst", ("s", R(12, 13, 0, 1)): "Sdst",
                     ("v", R(20, 21)): "Src0", ("v", R(30, 31)): "Src1", ("v", R(40, 41)): "Src2",
                     ("s", R(14, 15, 18, 19)): "Src2", ("s", R(16, 17, 24, 25)): "Src1", ("s", R(22, 23)): "Src0"}),
    "VOP3P": by_base({("v", R(*range(10, 18))): "Vdst", ("v", R(*range(20, 28))): "Src0",
                      ("v", R(*range(30, 38))): "Src1", ("v", R(*range(40, 48))): "Src2"}),
    "DS": by_base({("v", R(10)): "Addr", ("v", R(20, 21, 22, 23)): "Data0", ("v", R(30, 31, 32, 33)): "Data1",
                   ("v", R(*range(40, 48))): "Vdst"}),
    "FLAT": by_base({("v", R(10, 11, 12, 13)): "Vdst", ("v", R(20, 21)): "Addr", ("v", R(30, 31, 32, 33)): "Data",
                     ("s", R(40, 41)): "Saddr"}),
    "MUBUF": by_base({("v", R(30, 31, 32, 33)): "Vdata", ("v", R(20, 21)): "Vaddr", ("s", R(32)): "Srsrc"}),
    "VOPD": by_base({("v", R(11, 40)): "Vdst", ("v", R(20, 61)): "Src0", ("v", R(30, 51)): "Src1"}),
}


def main():
    pool = ThreadPoolExecutor(4)
    tables = {}
    tables["SOP2"] = probe(96, [lambda op: [0x80000000 | op << 23 | 10 << 16 | 30 << 8 | 20]], pool)
    tables["SOPK"] = probe(29, [lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x1234],
                                lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x0004, 0x100]], pool)
    tables["SOP1"] = probe(256, [lambda op: [0xBE800000 | 10 << 16 | op << 8 | 20],
                                 lambda op: [0xBE800000 | 0x7C << 16 | op << 8 | 20],
                                 lambda op: [0xBE800000 | 10 << 16 | op << 8 | 0x80]], pool)
    tables["SOPC"] = probe(128, [lambda op: [0xBF000000 | op << 16 | 30 << 8 | 20]], pool)
    tables["SOPP"] = probe(128, [lambda op: [0xBF800000 | op << 16 | 0x0003], lambda op: [0xBF800000 | op << 16]], pool)
    tables["SMEM"] = probe(256, [lambda op: [0xF4000000 | op << 18 | 10 << 6 | 20 >> 1, 0xF8000010],
                                 lambda op: [0xF4000000 | op << 18 | 20 >> 1, 0xF8000010],
                                 lambda op: [0xF4000000 | op << 18, 0xF8000000]], pool)
    tables["VOP2"] = probe(62, [lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20)],
                                lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20), 0x1234]], pool)
    tables["VOP1"] = probe(256, [lambda op: [0x7E000000 | 10 << 17 | op << 9 | (V + 20)],
                                 lambda op: [0x7E000000 | op << 9]], pool)
    tables["VOPC"] = probe(256, [lambda op: [0x7C000000 | op << 17 | 30 << 9 | (V + 20)]], pool)
    three, two, one = (V + 40) << 18 | (V + 30) << 9 | (V + 20), (V + 30) << 9 | (V + 20), V + 20
    scalar_src2 = 14 << 18 | (V + 30) << 9 | (V + 20)
    # Scalar src1 and src2 (v_readlane, v_permlane16) and scalar src0 and src1 (v_writelane),
    # each SGPR distinct from sdst's s12/s0 so the printed text says which field it came from.
    scalar_src12 = 18 << 18 | 16 << 9 | (V + 20)
    scalar_src1 = 16 << 9 | (V + 20)
    scalar_src01 = 24 << 9 | 22
    vop3 = [lambda op, sdst=sdst, hi=hi: [0xD4000000 | op << 16 | sdst << 8 | 10, hi]
            for sdst, hi in [(0, three), (0, scalar_src2), (0, two), (0, scalar_src12), (0, scalar_src1), (0, one), (0, scalar_src01), (0, 0),
                             (12, three), (12, scalar_src2), (12, two), (12, one)]]
    tables["VOP3"] = probe(1024, vop3, pool)
    tables["VOP3P"] = probe(128, [lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)],
                                  lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 30) << 9 | (V + 20)],
                                  lambda op: [0xCC000000 | op << 16 | 10 | 0x4000, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)]], pool)
    # (vdst, data1, data0, addr): every subset of the fields in use, most fields first.
    ds = sorted(itertools.product([40, 0], [30, 0], [20, 0], [10, 0]), key=lambda d: -sum(map(bool, d)))
    tables["DS"] = probe(256, [lambda op, d=d: [0xD8000000 | op << 18, d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3]] for d in ds], pool)
    flat = [10 << 24 | 0x7C << 16 | 30 << 8 | 20, 10 << 24 | 0x7C << 16 | 20, 0x7C << 16 | 30 << 8 | 20, 0x7C << 16 | 20,
            10 << 24 | 0x7C << 16 | 30 << 8, 0x7C << 16 | 30 << 8, 10 << 24 | 0x7C << 16, 0x7C << 16]
    for seg, name in [(0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")]:
        tables[name] = probe(128, [lambda op, seg=seg, x=x: [0xDC000000 | seg << 16 | op << 18, x] for x in flat], pool)
    tables["MUBUF"] = probe(256, [lambda op, x=x: [0xE0000000 | op << 18, x] for x in
                                  [0x80 << 24 | 8 << 16 | 30 << 8 | 20, 0x80 << 24 | 8 << 16 | 30 << 8, 0x80 << 24 | 8 << 16, 0x80 << 24 | 8 << 16 | 20]], pool)
    vopd = []
    for v1x, v1y, lit in itertools.product([30, 0], [51, 0], [[], [0x1234]]):
        vopd.append((v1x, v1y, lit))
    def vopd_word(x, y, v):
        return [0xC8000000 | x << 22 | y << 17 | v[0] << 9 | (V + 20), 11 << 24 | (40 >> 1) << 17 | v[1] << 9 | (V + 61)] + v[2]
    tables["VOPDX"] = {k: (i, t.split(" :: ")[0]) for k, (i, t) in probe(16, [lambda x, v=v: vopd_word(x, 8, v) for v in vopd], pool).items()}
    tables["VOPDY"] = {k: (i, t.split(" :: ")[1]) for k, (i, t) in probe(32, [lambda y, v=v: vopd_word(8, y, v) for v in vopd], pool).items()}
    json.dump(CACHE, open(CACHE_PATH, "w"))
    emit(tables)


def opcode_name(mnemonic):
    base = re.sub(r"_e(32|64)$", "", mnemonic)
    base = re.sub(r"^v_dual_", "v_", base)
    return "".join(part.capitalize() for part in base.split("_"))


def emit(tables):
    out = sys.stdout
    out.write("// @generated by isa/gen/probe_llvm.py from LLVM 19's gfx1100 disassembler; do not edit.\n")
    out.write("//! Every gfx1100 opcode, per encoding: its mnemonic as LLVM prints it, its operation, and the\n")
    out.write("//! operands LLVM prints, in order, with their widths in dwords.\n\n")
    out.write("use super::table_types::{Entry, Slot::*, opcodes};\n\n")
    names = {}
    for enc, entries in tables.items():
        fields = FIELDS["FLAT" if enc in ("SCRATCH", "GLOBAL") else "VOPD" if enc.startswith("VOPD") else enc]
        out.write(f"pub(crate) static {enc}: &[Entry] = &[\n")
        for op, (_, text) in entries.items():
            mnemonic, slots = operand_slots(enc, text, fields)
            name = opcode_name(mnemonic)
            names[name] = mnemonic
            out.write(f'    Entry {{ op: {op}, mnemonic: "{mnemonic}", opcode: Opcode::{name}, slots: &[{", ".join(slots)}] }},\n')
        out.write("];\n\n")
    out.write("opcodes! {\n")
    for name in sorted(names):
        out.write(f"    {name},\n")
    out.write("}\n")


if __name__ == "__main__":
    main()
