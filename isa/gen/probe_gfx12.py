#!/usr/bin/env python3
"""Builds isa/src/gfx12/table.rs: every opcode LLVM 19 knows for gfx1200 (RDNA4; gfx1201 decodes
alike in LLVM 19), per encoding, with the operands it prints in order and their widths in dwords,
and the gfx11 operation of the same meaning where gfx11 has one.

Source: LLVM 19's AMDGPU disassembler (`llvm-mc-19 --disassemble -mcpu=gfx1200`), probed with one
canonical word per opcode in batches, as `probe_gfx9.py` probes gfx9 (its batch runner is shared),
and with `probe_llvm.py`'s field names. Field positions: AMD, "RDNA4 Instruction Set Architecture
Reference Guide" (2025), "Microcode Formats"; each probe layout below was checked against what
`llvm-mc-19 -mcpu=gfx1200 -show-encoding` encodes. Where gfx12 differs from gfx11:
- SOP*, VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD, DPP16/DPP8 and DS are laid out as gfx11's (opcode
  numbers may differ);
- SMEM: sbase [5:0], sdata [12:6], op [20:13], scope [22:21], th [24:23]; the second word holds a
  signed 24-bit offset [23:0] and soffset [31:25] (null: none);
- VFLAT/VSCRATCH/VGLOBAL (three dwords, major opcode 0x3B): saddr [6:0], op [20:14], seg
  [25:24]; vdst [39:32], scratch's SVE 49, scope [51:50], th [54:52], vsrc [62:55]; vaddr
  [71:64], a signed 24-bit offset [95:72];
- VBUFFER (three dwords, major opcode 0x31): soffset [6:0], op [21:14] (typed accesses:
  0x80 | op), vdata [39:32], rsrc [49:41], scope [51:50], th [54:52], format [61:55], offen 62,
  idxen 63; vaddr [71:64], an unsigned 24-bit offset [95:72].

Run: python3 isa/gen/probe_gfx12.py -o isa/src/gfx12/table.rs --golden isa/tests/golden/gfx12_probes.txt
(a few minutes on 2 cores). The golden file holds the probe word LLVM accepted for every row, with
its text: tests/llvm_agreement_gfx12.rs checks that each decodes and prints as LLVM printed it.
"""
import itertools
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_llvm as P  # noqa: E402
import probe_gfx9 as G  # noqa: E402

CACHE_PATH = "/tmp/aqueduct-llvm-probe-gfx12.json"
try:
    G.CACHE = json.load(open(CACHE_PATH))
except (OSError, ValueError):
    G.CACHE = {}
V = P.V
NULL = 0x7C  # gfx12's `null`, as gfx11's

FIELDS = dict(P.FIELDS)
FIELDS["SMEM"] = P.by_base({("s", P.R(*range(8, 12))): "Sdata", ("s", P.R(20)): "Sbase", ("s", P.R(12)): "Soffset"})
FIELDS["VBUFFER"] = P.by_base({("v", P.R(30, 31, 32, 33)): "Vdata", ("v", P.R(20, 21)): "Vaddr",
                               ("s", P.R(32)): "Srsrc", ("s", P.R(12)): "Soffset"})


class Recorder:
    """`Disassembler.probe` that also keeps each accepted opcode's probe words, for the
    enumeration golden (`--golden`)."""

    def __init__(self, d):
        self.d, self.words = d, []

    def probe(self, count, variants):
        # Rows whose operands name 16-bit register halves (`v_mov_b16_e32 v10.l, v20.l`, LLVM 19's
        # true16 forms, which clang 19 does not emit for gfx12) are left out: the table's slots
        # cannot say which half, so the decoder refuses them as unknown opcodes.
        found = {op: row for op, row in self.d.probe(count, variants).items()
                 if not re.search(r"\bv\d+\.[lh]\b", row[1])}
        for op, (index, text) in found.items():
            self.words.append((variants[index](op), text))
        return found


def probe(d):
    # Opcode ranges stop where another encoding's identity begins: SOP2 ops from 96 (bits 31:28 =
    # 0xB) are SOPK's words, VOP2 ops 62 and 63 are VOPC's and VOP1's, SOPK ops from 29 SOP1's
    # (as gfx11's, `probe_llvm.py`).
    t = {}
    t["SOP2"] = d.probe(96, [lambda op: [0x80000000 | op << 23 | 10 << 16 | 30 << 8 | 20]])
    t["SOPK"] = d.probe(29, [lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x1234],
                             lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x0004, 0x100]])
    t["SOP1"] = d.probe(256, [lambda op: [0xBE800000 | 10 << 16 | op << 8 | 20],
                              lambda op: [0xBE800000 | NULL << 16 | op << 8 | 20],
                              lambda op: [0xBE800000 | 10 << 16 | op << 8 | 0x80],
                              lambda op: [0xBE800000 | NULL << 16 | op << 8 | 0xC1],
                              lambda op: [0xBE800000 | op << 8]])
    t["SOPC"] = d.probe(128, [lambda op: [0xBF000000 | op << 16 | 30 << 8 | 20]])
    t["SOPP"] = d.probe(128, [lambda op: [0xBF800000 | op << 16 | 0x0003], lambda op: [0xBF800000 | op << 16]])
    # SMEM: sdata s10, sbase s[20:21], offset 0x10 and soffset null; then without sdata or sbase.
    smem = [(10 << 6 | 10, NULL << 25 | 0x10), (10 << 6, NULL << 25 | 0x10), (10, NULL << 25 | 0x10), (0, NULL << 25)]
    t["SMEM"] = d.probe(256, [lambda op, a=a, o=o: [0xF4000000 | op << 13 | a, o] for a, o in smem])
    t["VOP2"] = d.probe(62, [lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20)],
                             lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20), 0x1234]])
    t["VOP1"] = d.probe(256, [lambda op: [0x7E000000 | 10 << 17 | op << 9 | (V + 20)], lambda op: [0x7E000000 | op << 9]])
    t["VOPC"] = d.probe(256, [lambda op: [0x7C000000 | op << 17 | 30 << 9 | (V + 20)]])
    three, two, one = (V + 40) << 18 | (V + 30) << 9 | (V + 20), (V + 30) << 9 | (V + 20), V + 20
    scalar_src2 = 14 << 18 | (V + 30) << 9 | (V + 20)
    scalar_src12 = 18 << 18 | 16 << 9 | (V + 20)
    scalar_src1 = 16 << 9 | (V + 20)
    scalar_src01 = 24 << 9 | 22
    # gfx12's pseudo-scalar transcendentals (`v_s_exp_f32 s10, s22`) take only a scalar src0; the
    # variant `22` alone names it.
    t["VOP3"] = d.probe(1024, [lambda op, sdst=sdst, hi=hi: [0xD4000000 | op << 16 | sdst << 8 | 10, hi]
                               for sdst, hi in [(0, three), (0, scalar_src2), (0, two), (0, scalar_src12), (0, scalar_src1),
                                                (0, one), (0, scalar_src01), (0, 22), (0, 0), (12, three), (12, scalar_src2),
                                                (12, two), (12, one)]])
    t["VOP3P"] = d.probe(128, [lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)],
                               lambda op: [0xCC000000 | op << 16 | 10, 3 << 27 | (V + 30) << 9 | (V + 20)],
                               lambda op: [0xCC000000 | op << 16 | 10 | 0x4000, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)]])
    ds = sorted(itertools.product([40, 0], [30, 0], [20, 0], [10, 0]), key=lambda x: -sum(map(bool, x)))
    t["DS"] = d.probe(256, [lambda op, x=x: [0xD8000000 | op << 18, x[0] << 24 | x[1] << 16 | x[2] << 8 | x[3]] for x in ds])
    # VFLAT/VSCRATCH/VGLOBAL: (saddr, vdst, vsrc, vaddr, scratch's SVE), most fields first.
    flat = sorted(itertools.product([40, NULL], [10, 0], [30, 0], [20, None]),
                  key=lambda x: -(x[0] != NULL) - bool(x[1]) - bool(x[2]) - (x[3] is not None))
    for seg, name in [(0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")]:
        def word(op, x, seg=seg):
            saddr, vdst, vsrc, vaddr = x
            sve = 1 << 17 if seg == 1 and vaddr is not None else 0
            return [0xEC000000 | seg << 24 | op << 14 | saddr, vsrc << 23 | sve | vdst, vaddr or 0]
        t[name] = d.probe(128, [lambda op, x=x: word(op, x) for x in flat if seg != 0 or x[0] == NULL])
    # VBUFFER: soffset null, rsrc s[32:35]; vdata v30 or none, offen with v20 or not; format 1
    # (BUF_FMT_8_UNORM, the default, printed as nothing) on a typed access.
    vbuffer = [(fmt, vdata, offen) for fmt in (0, 1) for vdata in (30, 0) for offen in (1, 0)]
    t["VBUFFER"] = d.probe(256, [lambda op, x=x: [0xC4000000 | op << 14 | NULL,
                                                  x[2] << 30 | x[0] << 23 | 32 << 9 | x[1], 20 if x[2] else 0]
                                 for x in vbuffer])
    vopd = []
    for v1x, v1y, lit in itertools.product([30, 0], [51, 0], [[], [0x1234]]):
        vopd.append((v1x, v1y, lit))

    def vopd_word(x, y, v):
        return [0xC8000000 | x << 22 | y << 17 | v[0] << 9 | (V + 20), 11 << 24 | (40 >> 1) << 17 | v[1] << 9 | (V + 61)] + v[2]
    t["VOPDX"] = {k: (i, s.split(" :: ")[0]) for k, (i, s) in d.probe(16, [lambda x, v=v: vopd_word(x, 8, v) for v in vopd]).items()}
    t["VOPDY"] = {k: (i, s.split(" :: ")[1]) for k, (i, s) in d.probe(32, [lambda y, v=v: vopd_word(8, y, v) for v in vopd]).items()}
    return t


# gfx12 names LLVM spells differently from gfx11 for the same operation (LLVM 19's
# `VOP2Instructions.td`/`VOP3Instructions.td`/`SOPInstructions.td`/`DSInstructions.td`/
# `FLATInstructions.td`/`BUFInstructions.td` gfx12 `Renamed` reals).
GFX11_NAMES = {
    "v_max_num_f32": "v_max_f32", "v_min_num_f32": "v_min_f32", "v_max_num_f16": "v_max_f16",
    "v_min_num_f16": "v_min_f16", "v_max_num_f64": "v_max_f64", "v_min_num_f64": "v_min_f64",
    "v_pk_max_num_f16": "v_pk_max_f16", "v_pk_min_num_f16": "v_pk_min_f16",
    "v_med3_num_f32": "v_med3_f32", "v_med3_num_f16": "v_med3_f16",
    "v_max3_num_f32": "v_max3_f32", "v_min3_num_f32": "v_min3_f32", "v_max3_num_f16": "v_max3_f16",
    "v_min3_num_f16": "v_min3_f16", "v_minmax_num_f32": "v_minmax_f32", "v_maxmin_num_f32": "v_maxmin_f32",
    "v_minmax_num_f16": "v_minmax_f16", "v_maxmin_num_f16": "v_maxmin_f16",
    "v_mad_co_u64_u32": "v_mad_u64_u32", "v_mad_co_i64_i32": "v_mad_i64_i32",
    "s_add_co_u32": "s_add_u32", "s_sub_co_u32": "s_sub_u32", "s_add_co_i32": "s_add_i32",
    "s_sub_co_i32": "s_sub_i32", "s_add_co_ci_u32": "s_addc_u32", "s_sub_co_ci_u32": "s_subb_u32",
    "s_addk_co_i32": "s_addk_i32",
    "ds_min_num_f32": "ds_min_f32", "ds_max_num_f32": "ds_max_f32", "ds_min_num_rtn_f32": "ds_min_rtn_f32",
    "ds_max_num_rtn_f32": "ds_max_rtn_f32", "ds_min_num_f64": "ds_min_f64", "ds_max_num_f64": "ds_max_f64",
    "ds_min_num_rtn_f64": "ds_min_rtn_f64", "ds_max_num_rtn_f64": "ds_max_rtn_f64",
    "global_atomic_min_num_f32": "global_atomic_min_f32", "global_atomic_max_num_f32": "global_atomic_max_f32",
    "flat_atomic_min_num_f32": "flat_atomic_min_f32", "flat_atomic_max_num_f32": "flat_atomic_max_f32",
    "buffer_atomic_min_num_f32": "buffer_atomic_min_f32", "buffer_atomic_max_num_f32": "buffer_atomic_max_f32",
    "global_atomic_cond_sub_u32": None,  # gfx12's conditional subtract; gfx11's csub differs
    "v_cvt_f32_fp8": None, "v_cvt_f32_bf8": None,
}


def gfx11_name(base):
    if base in GFX11_NAMES:
        return GFX11_NAMES[base]
    return base


def emit(tables, out):
    gfx11 = P.gfx11_opcodes()
    out.write("// @generated by isa/gen/probe_gfx12.py from LLVM 19's gfx1200 disassembler; do not edit.\n")
    out.write("//! Every gfx1200 opcode, per encoding: its mnemonic as LLVM prints it, its operation, and the\n")
    out.write("//! operands LLVM prints, in order, with their widths in dwords. The `opcodes!` list at the end\n")
    out.write("//! names each operation's gfx11 equivalent, where gfx11 has one.\n\n")
    out.write("use super::table_types::opcodes;\n")
    out.write("use crate::gfx11::Slot::*;\n\n")
    names = {}
    for enc, entries in tables.items():
        fields = FIELDS["FLAT" if enc in ("SCRATCH", "GLOBAL") else "VOPD" if enc.startswith("VOPD") else enc]
        out.write(f"pub(crate) static {enc}: &[Entry] = &[\n")
        for op, (_, text) in entries.items():
            text = text.split(" th:")[0].split(" scope:")[0]
            mnemonic, slots = P.operand_slots(enc, text, fields)
            base = P.gfx10_base(mnemonic)
            base = re.sub(r"^v_dual_", "v_", base)
            name = P.opcode_name(base)
            names[name] = base
            out.write(f'    Entry {{ op: {op}, mnemonic: "{mnemonic}", opcode: Opcode::{name}, slots: &[{", ".join(slots)}] }},\n')
        out.write("];\n\n")
    out.write("opcodes! {\n")
    for name in sorted(names):
        renamed = gfx11_name(names[name])
        equivalent = renamed and P.opcode_name(renamed)
        out.write(f"    {name} => {equivalent},\n" if equivalent in gfx11 else f"    {name},\n")
    out.write("}\n")


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="the table to write (default: standard output)")
    parser.add_argument("--golden", help="also write every probe LLVM accepted, as WORDS<TAB>text lines")
    parser.add_argument("--jobs", type=int, default=2, help="llvm-mc processes at a time")
    arguments = parser.parse_args()
    pool = ThreadPoolExecutor(arguments.jobs)
    recorder = Recorder(G.Disassembler("gfx1200", pool))
    tables = probe(recorder)
    json.dump(G.CACHE, open(CACHE_PATH, "w"))
    print(", ".join(f"{enc} {len(e)}" for enc, e in tables.items()), file=sys.stderr)
    out = open(arguments.output, "w") if arguments.output else sys.stdout
    emit(tables, out)
    if arguments.golden:
        lines = {" ".join("%08X" % w for w in words) + "\t" + text for words, text in recorder.words}
        open(arguments.golden, "w").write("".join(line + "\n" for line in sorted(lines)))
