#!/usr/bin/env python3
"""Builds isa/src/gfx11/table.rs: every gfx1100 opcode LLVM 19 knows, per encoding, with the
operands it prints in order and their widths in dwords.

Source: LLVM 19's AMDGPU disassembler (`llvm-mc-19 --disassemble -mcpu=gfx1100`, Debian's
llvm-19), probed with one canonical word per opcode. The encodings' field positions are AMD's
"RDNA3 Instruction Set Architecture Reference Guide", chapter 15 (Microcode Formats); the probe
puts a distinct register number in each field (destination 10, sources 20, 30, 40, ...) so the
printed text says which field each operand comes from and how wide it is.

Run: python3 isa/gen/probe_llvm.py > isa/src/gfx11/table.rs  (a few minutes on 2 cores).

`--mcpu gfx1030` builds isa/src/gfx10/table.rs instead (RDNA2, the gfx10.3 family), from LLVM 19's
gfx1030 disassembler and the field positions of AMD's "RDNA2 Instruction Set Architecture
Reference Guide" (2020), chapter 13 (Microcode Formats); see `main_gfx1030` below. Its entries
also name the equivalent gfx11 operation where LLVM's gfx11 table has one (`gfx11_mnemonic`).

Run: python3 isa/gen/probe_llvm.py --mcpu gfx1030 -o isa/src/gfx10/table.rs
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


MCPU = "gfx1100"  # `--mcpu`; gfx1030 probes use their own cache (`main_gfx1030`)


def disassemble(words):
    key = " ".join("%08x" % w for w in words)
    if key not in CACHE:
        CACHE[key] = disassemble_uncached(words)
    return CACHE[key]


def disassemble_uncached(words):
    data = b"".join(w.to_bytes(4, "little") for w in words)
    line = ",".join("0x%02x" % x for x in data)
    out = subprocess.run(["nice", "llvm-mc-19", "--disassemble", "-arch=amdgcn", f"-mcpu={MCPU}"],
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
    "MTBUF": by_base({("v", R(30, 31, 32, 33)): "Vdata", ("v", R(20, 21)): "Vaddr", ("s", R(32)): "Srsrc"}),
    "VOPD": by_base({("v", R(11, 40)): "Vdst", ("v", R(20, 61)): "Src0", ("v", R(30, 51)): "Src1"}),
}


def main():
    pool = ThreadPoolExecutor(JOBS)
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
    # MTBUF (RDNA3 ISA guide, "MTBUF"; checked with llvm-mc-19): offset [11:0], slc 12, dlc 13,
    # glc 14, op [18:15], format [25:19] (1, the default BUF_FMT_8_UNORM, prints nothing); the
    # second word is MUBUF's.
    tables["MTBUF"] = probe(16, [lambda op, x=x: [0xE8000000 | 1 << 19 | op << 15, x] for x in
                                 [0x80 << 24 | 8 << 16 | 30 << 8 | 20, 0x80 << 24 | 8 << 16 | 30 << 8]], pool)
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
    out = OUT
    out.write("// @generated by isa/gen/probe_llvm.py from LLVM 19's gfx1100 disassembler; do not edit.\n")
    out.write("//! Every gfx1100 opcode, per encoding: its mnemonic as LLVM prints it, its operation, and the\n")
    out.write("//! operands LLVM prints, in order, with their widths in dwords.\n\n")
    out.write("use super::table_types::{Slot::*, opcodes};\n\n")
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


# ---------------------------------------------------------------------------------------------
# gfx1030 (RDNA2). Field positions: AMD, "RDNA2 Instruction Set Architecture Reference Guide"
# (2020), chapter 13, "Microcode Formats"; each probe word below was checked against what
# `llvm-mc-19 -mcpu=gfx1030` prints for it. Where gfx10 differs from gfx11: `null` is 125 (0x7D)
# and `m0` 124; SMEM has glc at bit 16 and dlc at bit 14; FLAT/GLOBAL/SCRATCH have the segment
# in bits 15:14, dlc at 12, glc at 16, slc at 17 and a 12-bit offset, saddr `off` is 0x7D; MUBUF
# has offen/idxen/glc/dlc at bits 12..15 of the first word and slc/tfe at bits 22/23 of the
# second; the VOP3 opcode space holds VOPC at 0..255, VOP3-only operations at 320..383 and
# 704..1023, VOP2 at 256 + op and VOP1 at 384 + op; SDWA (src0 = 249) and DPP16/DPP8 (250,
# 233/234) words follow VOP1/VOP2/VOPC.

GFX10_CACHE_PATH = "/tmp/aqueduct-llvm-probe-gfx1030.json"
NULL10 = 0x7D  # gfx10's `null` (RDNA2 ISA guide, the SSRC table)
SDWA = 249
SDWA_DWORD = 6 << 8 | 6 << 16 | 6 << 24  # dst_sel, src0_sel, src1_sel: DWORD
DPP16_WORD = 0xF << 28 | 0xF << 24 | 0x111 << 8  # row_mask, bank_mask 0xf, row_shr:1
DPP8_IDENTITY = sum(lane << (3 * lane) for lane in range(8)) << 8  # dpp8:[0,1,...,7]

GFX10_FIELDS = dict(FIELDS)
GFX10_FIELDS["VOP3"] = by_base({("v", R(*range(10, 18))): "Vdst", ("s", R(10, 11)): "ScalarVdst",
                                 ("s", R(12, 13, 0, 1)): "Sdst", ("v", R(20, 21)): "Src0", ("s", R(20, 21)): "Src0",
                                 ("v", R(30, 31)): "Src1", ("s", R(32, 33)): "Src1", ("v", R(40, 41)): "Src2",
                                 ("s", R(14, 15, 34, 35)): "Src2"})
GFX10_FIELDS.update({
    "VOP1_SDWA": by_base({("v", R(10, 11)): "Vdst", ("s", R(10, 11)): "ScalarVdst", ("v", R(20, 21)): "Src0"}),
    "VOP2_SDWA": by_base({("v", R(10, 11)): "Vdst", ("v", R(20, 21)): "Src0", ("v", R(30, 31)): "Src1"}),
    "VOPC_SDWA": by_base({("s", R(12, 13)): "Sdst", ("v", R(20, 21)): "Src0", ("v", R(30, 31)): "Src1"}),
})
GFX10_FIELDS["ILLEGAL"] = by_base({})
GFX10_FIELDS["VOP1_DPP"] = GFX10_FIELDS["VOP1_DPP8"] = GFX10_FIELDS["VOP1_SDWA"]
GFX10_FIELDS["VOP2_DPP"] = GFX10_FIELDS["VOP2_DPP8"] = GFX10_FIELDS["VOP2_SDWA"]


def main_gfx1030():
    global CACHE
    try:
        CACHE = json.load(open(GFX10_CACHE_PATH))
    except (OSError, ValueError):
        CACHE = {}
    pool = ThreadPoolExecutor(JOBS)
    t = {}
    # SOP2/SOPK/SOP1/SOPC/SOPP: as gfx11 (RDNA2 guide 13.1).
    t["SOP2"] = probe(96, [lambda op: [0x80000000 | op << 23 | 10 << 16 | 30 << 8 | 20]], pool)
    t["SOPK"] = probe(29, [lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x1234],
                           lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x0004, 0x100]], pool)
    t["SOP1"] = probe(256, [lambda op: [0xBE800000 | 10 << 16 | op << 8 | 20],
                            lambda op: [0xBE800000 | NULL10 << 16 | op << 8 | 20],
                            lambda op: [0xBE800000 | 10 << 16 | op << 8 | 0x80],
                            lambda op: [0xBE800000 | op << 8]], pool)
    t["SOPC"] = probe(128, [lambda op: [0xBF000000 | op << 16 | 30 << 8 | 20]], pool)
    t["SOPP"] = probe(128, [lambda op: [0xBF800000 | op << 16 | 0x0003], lambda op: [0xBF800000 | op << 16]], pool)
    # SMEM (13.2): sbase [5:0] (pairs), sdata [12:6], dlc 14, glc 16, op [25:18]; offset [52:32]
    # (21 bits, signed), soffset [63:57] (null: none).
    smem = [(10 << 6 | 10, 0x10), (10 << 6, 0), (10, 0x10), (0, 0)]
    t["SMEM"] = probe(256, [lambda op, a=a, o=o: [0xF4000000 | op << 18 | a, NULL10 << 25 | o] for a, o in smem], pool)
    # VOP2/VOP1/VOPC (13.3): as gfx11.
    variants = {}  # the VALU encodings' probe words, for `valu_operand_types`
    variants["VOP2"] = [lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20)],
                        lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20), 0x1234]]
    variants["VOP1"] = [lambda op: [0x7E000000 | 10 << 17 | op << 9 | (V + 20)], lambda op: [0x7E000000 | op << 9]]
    variants["VOPC"] = [lambda op: [0x7C000000 | op << 17 | 30 << 9 | (V + 20)]]
    t["VOP2"] = probe(64, variants["VOP2"], pool)
    t["VOP1"] = probe(256, variants["VOP1"], pool)
    t["VOPC"] = probe(256, variants["VOPC"], pool)
    # VOP3A/VOP3B (13.3.4): vdst [7:0] (VOP3B: sdst [14:8]), abs [10:8], op_sel [14:11],
    # clamp 15, op [25:16]; src0/1/2 [40:32]/[49:41]/[58:50], omod [60:59], neg [63:61].
    three, two, one = (V + 40) << 18 | (V + 30) << 9 | (V + 20), (V + 30) << 9 | (V + 20), V + 20
    scalar_src2 = 14 << 18 | (V + 30) << 9 | (V + 20)
    # Lane operations take scalar sources (v_readlane_b32 s10, v20, s32; v_writelane_b32 v10,
    # s20, s32; v_permlane16_b32 v10, v20, s32, s34): gfx10's LLVM refuses VGPRs there.
    scalar_src1, scalar_both, scalar_all = 32 << 9 | (V + 20), 34 << 18 | 32 << 9 | (V + 20), 32 << 9 | 20
    vop3 = [lambda op, sdst=sdst, hi=hi: [0xD4000000 | op << 16 | sdst << 8 | 10, hi]
            for sdst, hi in [(0, three), (0, scalar_src2), (0, two), (0, scalar_both), (0, scalar_src1), (0, scalar_all),
                             (0, one), (0, 0), (12, three), (12, scalar_src2), (12, two), (12, one)]]
    variants["VOP3"] = vop3
    t["VOP3"] = probe(1024, vop3, pool)
    # VOP3P (13.3.5): as gfx11.
    variants["VOP3P"] = [
        lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xCC000000 | op << 16 | 10 | 0x4000, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)]]
    t["VOP3P"] = probe(128, variants["VOP3P"], pool)
    # DS (13.6): as gfx11 (offset0 [7:0], offset1 [15:8], gds 17, op [25:18]; addr, data0,
    # data1, vdst in the second word's bytes).
    ds = sorted(itertools.product([40, 0], [30, 0], [20, 0], [10, 0]), key=lambda d: -sum(map(bool, d)))
    # The GWS operations (ds_gws_init, ...) need gds (bit 17): probed last.
    t["DS"] = probe(256, [lambda op, d=d, gds=gds: [0xD8000000 | op << 18 | gds, d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3]]
                          for gds in (0, 1 << 17) for d in ds], pool)
    # FLAT/SCRATCH/GLOBAL (13.8): offset [11:0], dlc 12, lds 13, seg [15:14], glc 16, slc 17,
    # op [24:18]; addr [39:32], data [47:40], saddr [54:48] (0x7D: off), vdst [63:56].
    flat = [10 << 24 | NULL10 << 16 | 30 << 8 | 20, 10 << 24 | NULL10 << 16 | 20, NULL10 << 16 | 30 << 8 | 20,
            NULL10 << 16 | 20, 10 << 24 | NULL10 << 16 | 30 << 8, NULL10 << 16 | 30 << 8, 10 << 24 | NULL10 << 16,
            NULL10 << 16]
    for seg, name in [(0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")]:
        t[name] = probe(128, [lambda op, seg=seg, x=x: [0xDC000000 | seg << 14 | op << 18, x] for x in flat], pool)
    # MUBUF (13.4): offset [11:0], offen 12, idxen 13, glc 14, dlc 15, lds 16, op [24:18] (bit 7
    # at 25); vaddr [39:32], vdata [47:40], srsrc [52:48], slc 54, tfe 55, soffset [63:56].
    t["MUBUF"] = probe(256, [lambda op, x=x: [0xE0000000 | op << 18, x] for x in
                             [0x80 << 24 | 8 << 16 | 30 << 8 | 20, 0x80 << 24 | 8 << 16 | 30 << 8, 0x80 << 24 | 8 << 16,
                              0x80 << 24 | 8 << 16 | 20]], pool)
    # SDWA (13.3.2): src0 [39:32], dst_sel [42:40], dst_unused [44:43], clamp 45, omod [47:46],
    # src0_sel [50:48], src0_sext 51, src0_neg 52, src0_abs 53, s0 55, src1_sel [58:56],
    # src1_sext 59, src1_neg 60, src1_abs 61, s1 63; VOPC: sdst [46:40] with sd 47.
    # VOP1 has no src1: LLVM refuses some VOP1 operations with a src1_sel.
    t["VOP1_SDWA"] = probe(256, [lambda op: [0x7E000000 | 10 << 17 | op << 9 | SDWA, (SDWA_DWORD & 0xFFFFFF) | 20],
                                 lambda op: [0x7E000000 | 10 << 17 | op << 9 | SDWA, SDWA_DWORD | 20]], pool)
    t["VOP2_SDWA"] = probe(64, [lambda op: [op << 25 | 10 << 17 | 30 << 9 | SDWA, SDWA_DWORD | 20]], pool)
    vopc_sdwa = SDWA_DWORD & ~0xFF00  # no dst_sel: sdst and sd in its place
    t["VOPC_SDWA"] = probe(256, [lambda op: [0x7C000000 | op << 17 | 30 << 9 | SDWA, vopc_sdwa | 1 << 15 | 12 << 8 | 20],
                                 lambda op: [0x7C000000 | op << 17 | 30 << 9 | SDWA, vopc_sdwa | 20]], pool)
    # DPP16 (13.3.3): src0 [39:32], dpp_ctrl [48:40], fi 50, bound_ctrl 51, src0_neg 52,
    # src0_abs 53, src1_neg 54, src1_abs 55, bank_mask [59:56], row_mask [63:60]. DPP8: src0
    # [39:32], eight 3-bit lane selects [63:40]. gfx10 has neither for VOPC (LLVM refuses both).
    variants_dpp = {"VOP1_DPP": lambda op: [0x7E000000 | 10 << 17 | op << 9 | 250, DPP16_WORD | 20],
                    "VOP2_DPP": lambda op: [op << 25 | 10 << 17 | 30 << 9 | 250, DPP16_WORD | 20]}
    t["VOP1_DPP"] = probe(256, [variants_dpp["VOP1_DPP"]], pool)
    t["VOP2_DPP"] = probe(64, [variants_dpp["VOP2_DPP"]], pool)
    t["VOP1_DPP8"] = probe(256, [lambda op: [0x7E000000 | 10 << 17 | op << 9 | 233, DPP8_IDENTITY | 20]], pool)
    t["VOP2_DPP8"] = probe(64, [lambda op: [op << 25 | 10 << 17 | 30 << 9 | 233, DPP8_IDENTITY | 20]], pool)
    vopc_dpp = probe(256, [lambda op: [0x7C000000 | op << 17 | 30 << 9 | 250, DPP16_WORD | 20],
                           lambda op: [0x7C000000 | op << 17 | 30 << 9 | 233, DPP8_IDENTITY | 20]], pool)
    # The all-zero word (a VOP2 word, opcode 0) is `v_illegal`; LLVM refuses VOP2 opcode 0 with
    # any other bit set.
    t["ILLEGAL"] = {0: (0, disassemble([0]))}
    assert t["ILLEGAL"][0][1] == "v_illegal" and disassemble([0x00143D14]) is None
    info = valu_operand_types(t, variants, pool)
    assert not vopc_dpp, f"gfx1030 VOPC DPP: {vopc_dpp}"
    # DPP8 takes the operations DPP16 takes, printed alike: one table serves both.
    for enc in ("VOP1", "VOP2"):
        dpp16 = {op: text.split(" ")[0] for op, (_, text) in t[enc + "_DPP"].items()}
        dpp8 = {op: text.split(" ")[0] for op, (_, text) in t.pop(enc + "_DPP8").items()}
        assert dpp16 == dpp8, f"{enc}: DPP16 and DPP8 differ: {set(dpp16.items()) ^ set(dpp8.items())}"
    # SDWA and DPP forms read their sources as the VOP1/VOP2/VOPC form does. DPP16's source abs
    # and neg (bits 20..23 of its word): probed one at a time, as VOP3's are.
    dpp_probes = [(name, flag, source, 1 << bit) for source in range(2)
                  for name, flag, bit in (("neg", "NEG", 20 + 2 * source), ("abs", "ABS", 21 + 2 * source))]
    dpp_words = {(enc, op, bit): [variants_dpp[enc](op)[0], DPP16_WORD | 20 | bit]
                 for enc in ("VOP1_DPP", "VOP2_DPP") for op in t[enc] for _, _, _, bit in dpp_probes}
    dpp_texts = dict(zip(dpp_words, pool.map(disassemble, dpp_words.values())))
    for enc in ("VOP1_SDWA", "VOP2_SDWA", "VOPC_SDWA", "VOP1_DPP", "VOP2_DPP"):
        base = enc.split("_")[0]
        for op in t[enc]:
            flags = set()
            for name, flag, source, bit in dpp_probes if enc.endswith("DPP") else []:
                text = dpp_texts[enc, op, bit]
                if text and "/*" not in text and ("|" in text if name == "abs" else " -" in text):
                    flags |= {flag, f"SRC{source}"}
                if text and "/*" not in text and name == "neg" and "sext(" in text:
                    flags |= {f"SEXT{source}"}
            # src0's type from the VOP1/VOP2/VOPC form; src1's (a VGPR there, but an SGPR or a
            # constant in SDWA) from the VOP3 form (VOPC at op, VOP2 at 256 + op).
            types = info.get((base, op), (("B32",) * 3, []))[0]
            vop3 = {"VOPC": op, "VOP2": 256 + op}.get(base)
            if vop3 is not None and ("VOP3", vop3) in info:
                types = (types[0], info["VOP3", vop3][0][1], "B32")
            info[enc, op] = (types, sorted(flags, key=FLAG_ORDER.index))
    json.dump(CACHE, open(GFX10_CACHE_PATH, "w"))
    emit_gfx1030(t, info)


# How LLVM prints three literals in a source decides the operand's type (`printImmediate32`,
# `printImmediate16`, `printImmediateInt16`, `printImmediate64`, `printImmediateV216`): f16 and
# i16 read the literal's low half, f64 its high half (the literal is the high dword of the double).
LITERAL_PROBES = (0x3F800000, 0x00003C00, 0x3FF00000)
LITERAL_SIGNATURES = {
    ("1.0", "0x3c00", "0x3ff00000"): "B32",
    ("0", "1.0", "0"): "F16",
    ("1.0", "0x3c00", "0x0"): "I16",
    ("0x3f800000", "0x3c00", "1.0"): "F64",
    ("0x3f800000", "0x3c00", "0x3ff00000"): "I64",
    ("0x3f800000", "1.0", "0x3ff00000"): "PackedF16",
}
# VOP3 modifier bits, one probe each: each source's abs (bits 8..10) and neg (61..63), op_sel
# (src0's, bit 11), clamp 15, omod [60:59]; the flag is set when LLVM prints the modifier. LLVM
# refuses abs or neg on a source without modifiers (v_cndmask_b32_e64's mask) and ignores op_sel,
# clamp or omod on an operation without them; integer sources with modifiers print neg as
# `sext(...)`.
MODIFIER_PROBES = [(f"ABS SRC{i}", 1 << (8 + i), 0, lambda text: "|" in text) for i in range(3)] + \
                  [(f"NEG SRC{i}", 0, 1 << (29 + i), lambda text: " -" in text) for i in range(3)] + \
                  [(f"SEXT{i}", 0, 1 << (29 + i), lambda text: "sext(" in text) for i in range(3)] + \
                  [("OP_SEL", 1 << 11, 0, lambda text: "op_sel:" in text),
                   ("CLAMP", 1 << 15, 0, lambda text: text.endswith(" clamp") or " clamp " in text),
                   ("OMOD", 0, 1 << 27, lambda text: "mul:2" in text)]


def bare(token):
    """An operand without its source modifiers."""
    token = token.strip()
    for prefix, suffix in (("neg(", ")"), ("sext(", ")")):
        if token.startswith(prefix) and token.endswith(suffix):
            token = token[len(prefix):-len(suffix)]
    return token.lstrip("-").strip("|")


def valu_operand_types(tables, variants, pool):
    """{(encoding, op): ((src0, src1, src2 type), [modifier flags])} for the VALU encodings."""
    jobs = []  # (key, source index, slot position, words per literal)
    modifier_jobs = []  # (key, flag, words, test)
    for enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P"):
        for op, (index, text) in tables[enc].items():
            words = variants[enc][index](op)
            _, slots = operand_slots(enc, text, GFX10_FIELDS[enc])
            for source in range(3):
                name = f"Src{source}("
                position = next((i for i, slot in enumerate(slots) if slot.startswith(name)), None)
                if position is None or (enc in ("VOP1", "VOP2", "VOPC") and source > 0):
                    continue
                probes = []
                for literal in LITERAL_PROBES:
                    if enc in ("VOP1", "VOP2", "VOPC"):
                        probe_words = [words[0] & ~0x1FF | 255, literal]
                    else:
                        shift = 9 * source
                        probe_words = [words[0], words[1] & ~(0x1FF << shift) | 255 << shift, literal]
                    probes.append(probe_words)
                jobs.append(((enc, op), source, position, probes))
            if enc == "VOP3":
                sdst = any(slot.startswith("Sdst") for slot in slots)
                for flag, low, high, test in MODIFIER_PROBES:
                    if sdst and flag.split()[0] in ("ABS", "OP_SEL"):
                        continue  # VOP3B: bits 14:8 are sdst
                    modifier_jobs.append(((enc, op), flag, [words[0] | low, words[1] | high], test))
    words = [w for job in jobs for w in job[3]] + [job[2] for job in modifier_jobs]
    texts = dict(zip(map(tuple, words), pool.map(disassemble, words)))
    info = {}
    for key, source, position, probes in jobs:
        printed = []
        for probe_words in probes:
            text = texts[tuple(probe_words)]
            if text is None or "/*" in text:
                break
            printed.append(bare(split_operands(text.partition(" ")[2])[position]))
        kind = LITERAL_SIGNATURES.get(tuple(printed), "B32") if len(printed) == 3 else "B32"
        if len(printed) == 3 and tuple(printed) not in LITERAL_SIGNATURES:
            raise SystemExit(f"{key}: src{source} prints literals as {printed}")
        types = list(info.get(key, (("B32",) * 3, []))[0])
        types[source] = kind
        info[key] = (tuple(types), [])
    for key, flag, probe_words, test in modifier_jobs:
        text = texts[tuple(probe_words)]
        types, flags = info.get(key, (("B32",) * 3, []))
        if text is not None and "/*" not in text and test(text):
            flags = sorted(set(flags) | set(flag.split()), key=FLAG_ORDER.index)
        info[key] = (types, flags)
    return info


FLAG_ORDER = ["ABS", "NEG", "OP_SEL", "CLAMP", "OMOD", "SRC0", "SRC1", "SRC2", "SEXT0", "SEXT1", "SEXT2"]


def gfx10_base(mnemonic):
    """The operation's name: the mnemonic without its encoding suffix."""
    return re.sub(r"_(e32|e64|sdwa|dpp)$", "", mnemonic)


# gfx10 names LLVM spells differently for gfx11 that the rules in `gfx11_mnemonic` do not cover.
GFX11_RENAMED = {
    "s_ff1_i32_b32": "s_ctz_i32_b32", "s_ff1_i32_b64": "s_ctz_i32_b64",
    "s_flbit_i32_b32": "s_clz_i32_u32", "s_flbit_i32_b64": "s_clz_i32_u64",
    "s_flbit_i32": "s_cls_i32", "s_flbit_i32_i64": "s_cls_i32_i64",
    "s_inst_prefetch": "s_set_inst_prefetch_distance",
    "v_ffbh_u32": "v_clz_i32_u32", "v_ffbl_b32": "v_ctz_i32_b32", "v_ffbh_i32": "v_cls_i32",
    "v_cvt_pkrtz_f16_f32": "v_cvt_pk_rtz_f16_f32",
    "v_cvt_flr_i32_f32": "v_cvt_floor_i32_f32", "v_cvt_rpi_i32_f32": "v_cvt_nearest_i32_f32",
    "global_load_dword_addtid": "global_load_addtid_b32", "global_store_dword_addtid": "global_store_addtid_b32",
    "v_mul_legacy_f32": "v_mul_dx9_zero_f32", "v_fmac_legacy_f32": "v_fmac_dx9_zero_f32",
    "v_fma_legacy_f32": "v_fma_dx9_zero_f32",
    "v_dot2c_f32_f16": "v_dot2acc_f32_f16",
}

ATOMIC_TYPES = {  # gfx10 atomic -> (gfx11 name, 32-bit type, 64-bit type)
    "add": ("add", "u32", "u64"), "sub": ("sub", "u32", "u64"), "inc": ("inc", "u32", "u64"),
    "dec": ("dec", "u32", "u64"), "smin": ("min", "i32", "i64"), "smax": ("max", "i32", "i64"),
    "umin": ("min", "u32", "u64"), "umax": ("max", "u32", "u64"), "and": ("and", "b32", "b64"),
    "or": ("or", "b32", "b64"), "xor": ("xor", "b32", "b64"), "swap": ("swap", "b32", "b64"),
    "cmpswap": ("cmpswap", "b32", "b64"), "fmin": ("min", "f32", "f64"), "fmax": ("max", "f32", "f64"),
    "fcmpswap": ("cmpswap", "f32", "f64"), "csub": ("csub", "u32", None),
}
MEMORY_TYPES = {"dword": "b32", "dwordx2": "b64", "dwordx3": "b96", "dwordx4": "b128", "ubyte": "u8",
                "sbyte": "i8", "ushort": "u16", "sshort": "i16", "byte": "b8", "short": "b16"}


def gfx11_mnemonic(name):
    """The gfx11 spelling of a gfx10 operation (LLVM renamed many for gfx11: `SIInstructions`'s
    `*_gfx11` real names and `FLATInstructions.td`/`DSInstructions.td`'s `Renamed` lists)."""
    if name in GFX11_RENAMED:
        return GFX11_RENAMED[name]
    # v_cvt_pknorm_i16_f32 -> v_cvt_pk_norm_i16_f32; v_cmp_tru_f32 -> v_cmp_t_f32.
    name = re.sub(r"^v_cvt_pknorm_", "v_cvt_pk_norm_", name)
    name = re.sub(r"^v_cmp(x?)_tru_", r"v_cmp\1_t_", name)
    # buffer_load_format_d16_hi_x -> buffer_load_d16_hi_format_x.
    name = re.sub(r"^buffer_(load|store)_format_(d16(?:_hi)?)_", r"buffer_\1_\2_format_", name)
    # Scalar loads: s_load_dwordx2 -> s_load_b64, s_buffer_load_dword -> s_buffer_load_b32.
    m = re.match(r"^(s_(?:buffer_)?load)_dword(?:x(\d+))?$", name)
    if m:
        return f"{m[1]}_b{32 * int(m[2] or 1)}"
    # SALU: andn2 -> and_not1, orn2 -> or_not1, andn1 -> and_not0, orn1 -> or_not0.
    name = re.sub(r"^s_(and|or)n([12])_", lambda m: f"s_{m[1]}_not{int(m[2]) - 1}_", name)
    # FLAT/GLOBAL/SCRATCH/MUBUF atomics: global_atomic_smin_x2 -> global_atomic_min_i64.
    m = re.match(r"^(flat|global|scratch|buffer)_atomic_([a-z]+?)(_x2)?$", name)
    if m and m[2] in ATOMIC_TYPES:
        op, t32, t64 = ATOMIC_TYPES[m[2]]
        width = t64 if m[3] else t32
        return f"{m[1]}_atomic_{op}_{width}" if width else None
    # Loads and stores: global_load_dwordx2 -> global_load_b64, global_load_ubyte_d16_hi ->
    # global_load_d16_hi_u8, global_store_byte_d16_hi -> global_store_d16_hi_b8.
    m = re.match(r"^(flat|global|scratch|buffer)_(load|store)_([a-z]+\d*)(_d16(?:_hi)?)?$", name)
    if m and m[3] in MEMORY_TYPES:
        return f"{m[1]}_{m[2]}{m[4] or ''}_{MEMORY_TYPES[m[3]]}"
    # LDS: ds_read -> ds_load, ds_write -> ds_store, read2/write2 -> 2addr, st64 -> stride64,
    # wrxchg -> storexchg, cmpst -> cmpstore.
    if name.startswith("ds_"):
        name = re.sub(r"^ds_(read|write)(2st64|2)?_", lambda m: "ds_" + {"read": "load", "write": "store"}[m[1]]
                      + {None: "", "2": "_2addr", "2st64": "_2addr_stride64"}[m[2]] + "_", name)
        name = re.sub(r"^ds_wrxchg(2st64|2)?_", lambda m: "ds_storexchg"
                      + {None: "", "2": "_2addr", "2st64": "_2addr_stride64"}[m[1]] + "_", name)
        name = re.sub(r"^ds_cmpst_", "ds_cmpstore_", name)
    return name


def gfx11_opcodes():
    """The gfx11 `Opcode` variants, from the gfx11 table's `opcodes!` list."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "gfx11", "table.rs")
    text = open(path).read()
    return set(re.findall(r"^    (\w+),$", text.split("opcodes! {")[1], re.M))


def emit_gfx1030(tables, info):
    out = OUT
    gfx11 = gfx11_opcodes()
    out.write("// @generated by isa/gen/probe_llvm.py --mcpu gfx1030 from LLVM 19's gfx1030 disassembler; do not edit.\n")
    out.write("//! Every gfx1030 opcode, per encoding: its mnemonic as LLVM prints it, its operation, and the\n")
    out.write("//! operands LLVM prints, in order, with their widths in dwords; for the VALU, how each source reads\n")
    out.write("//! an immediate and which VOP3/DPP modifiers the operation has. `VOP*_SDWA` and `VOP*_DPP` are\n")
    out.write("//! the operations LLVM accepts with an SDWA or DPP16/DPP8 word. The `opcodes!` list at the end\n")
    out.write("//! names each operation's gfx11 equivalent, where gfx11 has one.\n\n")
    used = sorted({flag for _, flags in info.values() for flag in flags})
    out.write("use super::table_types::OperandType::*;\n")
    out.write(f"use super::table_types::{{{', '.join(used + ['opcodes'])}}};\n")
    out.write("use crate::gfx11::Slot::*;\n\n")
    names = {}
    for enc, entries in tables.items():
        fields = GFX10_FIELDS["FLAT" if enc in ("SCRATCH", "GLOBAL") else enc]
        out.write(f"pub(crate) static {enc}: &[Entry] = &[\n")
        for op, (_, text) in entries.items():
            if enc == "DS" and text.endswith(" gds") and " " not in text[:-4]:
                text = text[:-4]  # `ds_gws_sema_v gds`: a modifier, no operand
            mnemonic, slots = operand_slots(enc, text, fields)
            name = opcode_name(gfx10_base(mnemonic))
            names[name] = gfx10_base(mnemonic)
            types, flags = info.get((enc, op), (("B32",) * 3, []))
            out.write(f'    Entry {{ op: {op}, mnemonic: "{mnemonic}", opcode: Opcode::{name}, slots: &[{", ".join(slots)}], '
                      f'types: [{", ".join(types)}], modifiers: {" | ".join(flags) or "0"} }},\n')
        out.write("];\n\n")
    out.write("opcodes! {\n")
    for name in sorted(names):
        renamed = gfx11_mnemonic(names[name])
        equivalent = renamed and opcode_name(renamed)
        out.write(f"    {name} => {equivalent},\n" if equivalent in gfx11 else f"    {name},\n")
    out.write("}\n")


JOBS = 2  # `--jobs`: llvm-mc processes at a time
OUT = sys.stdout  # `-o`

if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcpu", choices=["gfx1100", "gfx1030"], default="gfx1100")
    parser.add_argument("-o", "--output", help="the table to write (default: standard output)")
    parser.add_argument("--jobs", type=int, default=2, help="llvm-mc processes at a time")
    arguments = parser.parse_args()
    MCPU, JOBS = arguments.mcpu, arguments.jobs
    if arguments.output:
        OUT = open(arguments.output, "w")
    if MCPU == "gfx1100":
        main()
    else:
        main_gfx1030()
    if OUT is not sys.stdout:
        OUT.close()
