#!/usr/bin/env python3
"""Builds isa/src/gfx9/table.rs: every opcode LLVM 19 knows for the gfx9 family's compute
processors (gfx900, gfx906, gfx908, gfx90a, gfx942), per encoding, with the operands it prints in
order and their widths in dwords, and the processors that have it.

Source: LLVM 19's AMDGPU disassembler (`llvm-mc-19 --disassemble -mcpu=<processor>`, Debian's
llvm-19), probed with one canonical word per opcode, as `probe_llvm.py` probes gfx1100 and
gfx1030 (its helpers are shared). Field positions: AMD, "Vega Instruction Set Architecture
Reference Guide" (2017), chapter 12, and "AMD Instinct MI200 Instruction Set Architecture
Reference Guide" (2022), chapter 13, "Microcode Formats"; each probe word below was checked against
what `llvm-mc-19 -mcpu=gfx90a -show-encoding` encodes. Where gfx9 differs from gfx10:
- there is no `null`: saddr `off` is 0x7F, and SMEM's offset register is chosen by `imm` (bit 17)
  and `soe` (bit 14);
- SMEM is major opcode 0x30 (bits 31:26): sbase [5:0], sdata [12:6], soe 14, nv 15, glc 16,
  imm 17, op [25:18]; the second word holds the offset [20:0] or, with soe, soffset [31:25];
- VOP3 is major opcode 0x34 with op [25:16]; VOPC at 0..255, VOP2 at 256 + op, VOP1 at 320 + op,
  VOP3-only operations above; op 896..1023 (bits 31:23 = 0x1A7) is VOP3P, op [22:16];
- no VOP3 literal (gfx10 added it): a literal follows only VOP1/VOP2/VOPC and SOP words;
- DS has op [24:17] and gds 16; gfx90a adds `acc` at bit 25 (data and vdst are AGPRs);
- FLAT has a 13-bit offset [12:0] (signed for GLOBAL and SCRATCH), no dlc; gfx90a's `acc` is
  bit 55 (the second word's bit 23); gfx940 renames glc/slc to sc0/nt and adds sc1 at bit 25;
- MUBUF has offen 12, idxen 13, glc 14, lds 16, slc 17, op [24:18]; gfx90a's `acc` is bit 55;
- MTBUF has op [18:15], dfmt [22:19], nfmt [25:23];
- DPP has no DPP8 and no `fi`; its controls include `row_bcast`, `wave_shl` and `wave_rol`.

Run: python3 isa/gen/probe_gfx9.py -o isa/src/gfx9/table.rs  (about ten minutes on 2 cores).
"""
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_llvm as P  # noqa: E402

PROCESSORS = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942"]
CACHE_PATH = "/tmp/aqueduct-llvm-probe-gfx9.json"
V = P.V
OFF9 = 0x7F  # saddr `off` (MI200 ISA guide, "Global"; LLVM prints `off`)
SENTINEL = 0xBF800007  # `s_nop 7`: between probes in one llvm-mc run; no probe is this word
BATCH = 400

try:
    CACHE = json.load(open(CACHE_PATH))
except (OSError, ValueError):
    CACHE = {}


def run_batch(mcpu, batch):
    """Disassembles each word list of `batch` in one llvm-mc run: {key: text or None}. Each probe
    is a bracketed group (llvm-mc decodes it apart from its neighbours: a literal never comes
    from the next probe), followed by a sentinel group, so the output between two sentinels is
    the probe's. A probe LLVM refuses (a warning names its line), or reads as more than one
    instruction, is None."""
    sentinel = ",".join("0x%02x" % b for b in SENTINEL.to_bytes(4, "little"))
    lines = []
    for words in batch:
        lines.append("[" + ",".join("0x%02x" % b for b in b"".join(w.to_bytes(4, "little") for w in words)) + "]")
        lines.append(f"[{sentinel}]")
    out = subprocess.run(["nice", "llvm-mc-19", "--disassemble", "-arch=amdgcn", f"-mcpu={mcpu}"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    if out.returncode < 0:
        # llvm-mc-19 crashes on a few random SDWA words: halve the batch until the crashing probe
        # stands alone, and count it refused.
        if len(batch) == 1:
            return {" ".join("%08x" % w for w in batch[0]): None}
        half = len(batch) // 2
        return {**run_batch(mcpu, batch[:half]), **run_batch(mcpu, batch[half:])}
    bad = {int(m) for m in re.findall(r"<stdin>:(\d+):\d+: (?:warning|error)", out.stderr)}
    groups, current = [], []
    for line in out.stdout.splitlines():
        line = line.strip()
        if not line or line.startswith(".text"):
            continue
        if line == "s_nop 7":
            groups.append(current)
            current = []
        else:
            current.append(line)
    assert len(groups) == len(batch) and not (bad & set(range(2, 2 * len(batch) + 1, 2))), \
        f"{mcpu}: {len(groups)} outputs for {len(batch)} probes"
    result = {}
    for index, (words, texts) in enumerate(zip(batch, groups)):
        ok = (2 * index + 1) not in bad and len(texts) == 1
        result[" ".join("%08x" % w for w in words)] = texts[0] if ok else None
    return result


class Disassembler:
    def __init__(self, mcpu, pool):
        self.mcpu, self.pool = mcpu, pool
        self.cache = CACHE.setdefault(mcpu, {})

    def many(self, word_lists):
        keys = [" ".join("%08x" % w for w in words) for words in word_lists]
        todo = list({key: words for key, words in zip(keys, word_lists) if key not in self.cache}.values())
        batches = [todo[i:i + BATCH] for i in range(0, len(todo), BATCH)]
        for result in self.pool.map(lambda b: run_batch(self.mcpu, b), batches):
            self.cache.update(result)
        return [self.cache[key] for key in keys]

    def probe(self, count, variants):
        """The first variant LLVM accepts for each opcode: {op: (variant index, text)}."""
        found = {}
        for index, make in enumerate(variants):
            todo = [op for op in range(count) if op not in found]
            for op, text in zip(todo, self.many([make(op) for op in todo])):
                if text and "/*" not in text:
                    found[op] = (index, text)
        return dict(sorted(found.items()))


R = P.R
by_base = P.by_base
FIELDS = dict(P.GFX10_FIELDS)
# by_base matches an operand's first register: the probes put vdst at 10, the sources at 20, 30
# and 40 (MFMA's C at 42), sdst at s12 (or s0), SMEM's base at s[20:21].
FIELDS["VOP3P"] = by_base({("v", R(10)): "Vdst", ("v", R(20)): "Src0", ("v", R(30)): "Src1", ("v", R(40, 42)): "Src2"})
FIELDS["DS"] = by_base({("v", R(10)): "Addr", ("v", R(20)): "Data0", ("v", R(30)): "Data1", ("v", R(40)): "Vdst"})
FIELDS["VOPC_DPP"] = FIELDS["VOPC_SDWA"]
FIELDS["VOP1_DPP"] = FIELDS["VOP1_SDWA"]
FIELDS["VOP2_DPP"] = FIELDS["VOP2_SDWA"]
FIELDS["ILLEGAL"] = by_base({})

AGPR = re.compile(r"\ba(\d+)\b|\ba\[(\d+):(\d+)\]")


def to_vgpr_text(text):
    """`text` with AGPRs spelled as VGPRs (which fields the operands come from does not change), and
    the positions of the printed operands that were AGPRs."""
    mnemonic, _, rest = text.partition(" ")
    positions = [i for i, token in enumerate(P.split_operands(rest)) if re.match(r"^-?\|?a(\d+|\[)", token)]
    return mnemonic + (" " + AGPR.sub(lambda m: f"v{m[1]}" if m[1] else f"v[{m[2]}:{m[3]}]", rest) if rest else ""), positions


def probe_processor(mcpu, pool):
    d = Disassembler(mcpu, pool)
    t, variants = {}, {}
    # SOP2/SOPK/SOP1/SOPC/SOPP: as gfx10 (Vega ISA guide 12.1), without `null`.
    t["SOP2"] = d.probe(128, [lambda op: [0x80000000 | op << 23 | 10 << 16 | 30 << 8 | 20]])
    t["SOPK"] = d.probe(29, [lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x1234],
                             lambda op: [0xB0000000 | op << 23 | 10 << 16 | 0x0004, 0x100]])
    t["SOP1"] = d.probe(256, [lambda op: [0xBE800000 | 10 << 16 | op << 8 | 20],
                              lambda op: [0xBE800000 | op << 8 | 20],
                              lambda op: [0xBE800000 | 10 << 16 | op << 8 | 0x80],
                              lambda op: [0xBE800000 | op << 8]])
    t["SOPC"] = d.probe(128, [lambda op: [0xBF000000 | op << 16 | 30 << 8 | 20]])
    t["SOPP"] = d.probe(128, [lambda op: [0xBF800000 | op << 16 | 0x0003], lambda op: [0xBF800000 | op << 16]])
    # SMEM: sdata 10, sbase s[20:21] (pairs), an immediate offset 0x10; then without sdata, then
    # with the offset register s12 (imm 0).
    imm = 1 << 17
    smem = [(10 << 6 | 10 | imm, 0x10), (10 << 6 | 10, 12), (10 << 6 | imm, 0x10), (10 | imm, 0x10), (10 << 6, 0), (imm, 0), (0, 0)]
    t["SMEM"] = d.probe(256, [lambda op, a=a, o=o: [0xC0000000 | op << 18 | a, o] for a, o in smem])
    variants["VOP2"] = [lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20)],
                        lambda op: [op << 25 | 10 << 17 | 30 << 9 | (V + 20), 0x1234]]
    variants["VOP1"] = [lambda op: [0x7E000000 | 10 << 17 | op << 9 | (V + 20)], lambda op: [0x7E000000 | op << 9]]
    variants["VOPC"] = [lambda op: [0x7C000000 | op << 17 | 30 << 9 | (V + 20)]]
    t["VOP2"] = d.probe(64, variants["VOP2"])
    t["VOP1"] = d.probe(256, variants["VOP1"])
    t["VOPC"] = d.probe(256, variants["VOPC"])
    three, two, one = (V + 40) << 18 | (V + 30) << 9 | (V + 20), (V + 30) << 9 | (V + 20), V + 20
    scalar_src2 = 14 << 18 | (V + 30) << 9 | (V + 20)
    scalar_src1, scalar_both, scalar_all = 32 << 9 | (V + 20), 34 << 18 | 32 << 9 | (V + 20), 32 << 9 | 20
    vop3 = [lambda op, sdst=sdst, hi=hi: [0xD0000000 | op << 16 | sdst << 8 | 10, hi]
            for sdst, hi in [(0, three), (0, scalar_src2), (0, two), (0, scalar_both), (0, scalar_src1), (0, scalar_all),
                             (0, one), (0, 0), (12, three), (12, scalar_src2), (12, two), (12, one)]]
    variants["VOP3"] = vop3
    t["VOP3"] = d.probe(896, vop3)
    # VOP3P (MI200 guide 13.3.5): 0x1A7 at [31:23], op [22:16], vdst [7:0], op_sel_hi [60:59]
    # (and src2's at bit 14); MFMA (VOP3P-MAI) reads bit 15 as acc_cd on gfx90a and gfx942, and
    # its sources may be wider (src2 at 42 lets a 16-register C not overlap).
    # MFMA's acc bits (src0/src1 at [60:59], vdst/src2 by acc_cd) are clear in the first probes,
    # so the table's AGPRs are those the opcode implies (gfx908's MFMA destination and C).
    variants["VOP3P"] = [
        lambda op: [0xD3800000 | op << 16 | 10, (V + 42) << 18 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xD3800000 | op << 16 | 10, (V + 40) << 18 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xD3800000 | op << 16 | 10, (V + 30) << 9 | (V + 20)],
        lambda op: [0xD3800000 | op << 16 | 10, V + 20],
        lambda op: [0xD3800000 | op << 16 | 10, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xD3800000 | op << 16 | 10, 3 << 27 | (V + 30) << 9 | (V + 20)],
        lambda op: [0xD3800000 | op << 16 | 10 | 0x4000, 3 << 27 | (V + 40) << 18 | (V + 30) << 9 | (V + 20)]]
    t["VOP3P"] = d.probe(128, variants["VOP3P"])
    ds = sorted(P.itertools.product([40, 0], [30, 0], [20, 0], [10, 0]), key=lambda x: -sum(map(bool, x)))
    t["DS"] = d.probe(256, [lambda op, x=x, gds=gds: [0xD8000000 | op << 17 | gds, x[0] << 24 | x[1] << 16 | x[2] << 8 | x[3]]
                            for gds in (0, 1 << 16) for x in ds])
    flat = [10 << 24 | OFF9 << 16 | 30 << 8 | 20, 10 << 24 | OFF9 << 16 | 20, OFF9 << 16 | 30 << 8 | 20,
            OFF9 << 16 | 20, 10 << 24 | OFF9 << 16 | 30 << 8, OFF9 << 16 | 30 << 8, 10 << 24 | OFF9 << 16, OFF9 << 16]
    for seg, name in [(0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")]:
        # FLAT has no scalar base: its saddr field is 0 (LLVM refuses `off` there).
        words = [x & ~(OFF9 << 16) for x in flat] if seg == 0 else flat
        t[name] = d.probe(128, [lambda op, seg=seg, x=x: [0xDC000000 | seg << 14 | op << 18, x] for x in words])
    mubuf_words = [0x80 << 24 | 8 << 16 | 30 << 8 | 20, 0x80 << 24 | 8 << 16 | 30 << 8, 0x80 << 24 | 8 << 16,
                   0x80 << 24 | 8 << 16 | 20]
    t["MUBUF"] = d.probe(128, [lambda op, x=x: [0xE0000000 | op << 18, x] for x in mubuf_words])
    # MTBUF: dfmt 1, nfmt 0 (BUF_DATA_FORMAT_8, BUF_NUM_FORMAT_UNORM: the default, printed as nothing).
    t["MTBUF"] = d.probe(16, [lambda op, x=x: [0xE8000000 | 1 << 19 | op << 15, x] for x in mubuf_words[:2]])
    sdwa, dword = P.SDWA, P.SDWA_DWORD
    t["VOP1_SDWA"] = d.probe(256, [lambda op: [0x7E000000 | 10 << 17 | op << 9 | sdwa, (dword & 0xFFFFFF) | 20],
                                   lambda op: [0x7E000000 | 10 << 17 | op << 9 | sdwa, dword | 20]])
    t["VOP2_SDWA"] = d.probe(64, [lambda op: [op << 25 | 10 << 17 | 30 << 9 | sdwa, dword | 20]])
    vopc_sdwa = dword & ~0xFF00
    t["VOPC_SDWA"] = d.probe(256, [lambda op: [0x7C000000 | op << 17 | 30 << 9 | sdwa, vopc_sdwa | 1 << 15 | 12 << 8 | 20],
                                   lambda op: [0x7C000000 | op << 17 | 30 << 9 | sdwa, vopc_sdwa | 20]])
    # DPP: row_shr:1, then row_newbcast:1, the only control gfx90a's 64-bit ("DP ALU") DPP
    # takes (0x150..0x15F; LLVM's `isLegalDPALU_DPPControl`), which finds those rows.
    dpp_controls = [P.DPP16_WORD, P.DPP16_WORD & ~(0x1FF << 8) | 0x151 << 8]
    heads = {"VOP1_DPP": lambda op: 0x7E000000 | 10 << 17 | op << 9 | 250,
             "VOP2_DPP": lambda op: op << 25 | 10 << 17 | 30 << 9 | 250,
             "VOPC_DPP": lambda op: 0x7C000000 | op << 17 | 30 << 9 | 250}
    variants_dpp = {name: [lambda op, head=head, control=control: [head(op), control | 20] for control in dpp_controls]
                    for name, head in heads.items()}
    for name, makes in variants_dpp.items():
        t[name] = d.probe(64 if name == "VOP2_DPP" else 256, makes)
    info = operand_info(d, t, variants, variants_dpp)
    return t, info


# How an inline constant prints decides a VOP3 source's type where gfx9 has no VOP3 literal: 1.0
# (242) prints as `0x3c00` in an i16 source (`printImmediateInt16`), as `1.0` elsewhere.
INLINE_ONE = 242


def operand_info(d, t, variants, variants_dpp):
    """{(encoding, op): ((src0, src1, src2 type), [modifier flags])}, as `probe_llvm.py`'s
    `valu_operand_types`: literal probes where gfx9 has literals (VOP1/VOP2/VOPC src0), inline
    constant probes in VOP3/VOP3P, one modifier bit at a time."""
    jobs, modifier_jobs = [], []
    for enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P"):
        for op, (index, text) in t[enc].items():
            words = variants[enc][index](op)
            _, slots = P.operand_slots(enc, to_vgpr_text(text)[0], FIELDS[enc])
            for source in range(3):
                position = next((i for i, slot in enumerate(slots) if slot.startswith(f"Src{source}(")), None)
                if position is None or (enc in ("VOP1", "VOP2", "VOPC") and source > 0):
                    continue
                if enc in ("VOP1", "VOP2", "VOPC"):
                    probes = [[words[0] & ~0x1FF | 255, literal] for literal in P.LITERAL_PROBES]
                else:
                    shift = 9 * source
                    probes = [[words[0], words[1] & ~(0x1FF << shift) | INLINE_ONE << shift]]
                jobs.append(((enc, op), source, position, probes))
            if enc == "VOP3":
                sdst = any(slot.startswith("Sdst") for slot in slots)
                for flag, low, high, test in P.MODIFIER_PROBES:
                    if sdst and flag.split()[0] in ("ABS", "OP_SEL"):
                        continue
                    modifier_jobs.append(((enc, op), flag, [words[0] | low, words[1] | high], test))
    all_words = [w for job in jobs for w in job[3]] + [job[2] for job in modifier_jobs]
    texts = dict(zip(map(tuple, all_words), d.many(all_words)))
    info = {}
    for key, source, position, probes in jobs:
        printed = []
        for probe_words in probes:
            text = texts[tuple(probe_words)]
            if text is None or "/*" in text:
                break
            printed.append(P.bare(P.split_operands(text.partition(" ")[2])[position]))
        if len(probes) == 3:
            kind = P.LITERAL_SIGNATURES.get(tuple(printed), "B32") if len(printed) == 3 else "B32"
            if len(printed) == 3 and tuple(printed) not in P.LITERAL_SIGNATURES:
                raise SystemExit(f"{d.mcpu} {key}: src{source} prints literals as {printed}")
        else:
            kind = "I16" if printed == ["0x3c00"] else "B32"
        types = list(info.get(key, (("B32",) * 3, []))[0])
        types[source] = kind
        info[key] = (tuple(types), [])
    for key, flag, probe_words, test in modifier_jobs:
        text = texts[tuple(probe_words)]
        types, flags = info.get(key, (("B32",) * 3, []))
        if text is not None and "/*" not in text and test(text):
            flags = sorted(set(flags) | set(flag.split()), key=P.FLAG_ORDER.index)
        info[key] = (types, flags)
    # SDWA and DPP read their sources as the VOP1/VOP2/VOPC form does; src1 of SDWA as VOP3's.
    # DPP's source neg and abs (bits 20..23 of its word) are probed one at a time, as gfx10's:
    # an operation prints them only on the sources that have them.
    dpp_probes = [(name, flag, source, 1 << bit) for source in range(2)
                  for name, flag, bit in (("neg", "NEG", 20 + 2 * source), ("abs", "ABS", 21 + 2 * source))]
    dpp_words = {(enc, op, bit): [words[0], words[1] | bit]
                 for enc in ("VOP1_DPP", "VOP2_DPP") for op, (index, _) in t[enc].items()
                 for words in [variants_dpp[enc][index](op)] for _, _, _, bit in dpp_probes}
    dpp_texts = dict(zip(dpp_words, d.many(list(dpp_words.values()))))
    for enc in ("VOP1_SDWA", "VOP2_SDWA", "VOPC_SDWA", "VOP1_DPP", "VOP2_DPP", "VOPC_DPP"):
        base = enc.split("_")[0]
        for op in t[enc]:
            flags = set()
            for name, flag, source, bit in dpp_probes if (enc, op, 1 << 20) in dpp_words else []:
                text = dpp_texts[enc, op, bit]
                if text and "/*" not in text and ("|" in text if name == "abs" else " -" in text):
                    flags |= {flag, f"SRC{source}"}
                if text and "/*" not in text and name == "neg" and "sext(" in text:
                    flags |= {f"SEXT{source}"}
            types = info.get((base, op), (("B32",) * 3, []))[0]
            vop3 = {"VOPC": op, "VOP2": 256 + op}.get(base)
            if vop3 is not None and ("VOP3", vop3) in info:
                types = (types[0], info["VOP3", vop3][0][1], "B32")
            info[enc, op] = (types, sorted(flags, key=P.FLAG_ORDER.index))
    return info


def rows(processor_tables):
    """{encoding: {op: [(processor mask, mnemonic, slots, agprs, types, flags)]}}: the processors
    that print an opcode alike share one row."""
    merged = {}
    for bit, (mcpu, (t, info)) in enumerate(processor_tables.items()):
        for enc, entries in t.items():
            fields = FIELDS["FLAT" if enc in ("SCRATCH", "GLOBAL") else enc]
            for op, (_, text) in entries.items():
                if enc == "DS" and text.endswith(" gds") and " " not in text[:-4]:
                    text = text[:-4]
                plain, agprs = to_vgpr_text(text)
                mnemonic, slots = P.operand_slots(enc, plain, fields)
                types, flags = info.get((enc, op), (("B32",) * 3, []))
                row = (mnemonic, tuple(slots), tuple(agprs), tuple(types), tuple(flags))
                group = merged.setdefault(enc, {}).setdefault(op, {})
                group[row] = group.get(row, 0) | 1 << bit
    return merged


GFX9_TO_GFX10 = {  # gfx9 names LLVM spells differently for gfx10 (and so for `gfx11_mnemonic`)
    "v_add_u32": "v_add_nc_u32", "v_sub_u32": "v_sub_nc_u32", "v_subrev_u32": "v_subrev_nc_u32",
    "v_addc_co_u32": "v_add_co_ci_u32", "v_subb_co_u32": "v_sub_co_ci_u32", "v_subbrev_co_u32": "v_subrev_co_ci_u32",
    "v_add_u16": "v_add_nc_u16", "v_sub_u16": "v_sub_nc_u16", "v_add_i32": "v_add_nc_i32", "v_sub_i32": "v_sub_nc_i32",
    "v_add_i16": "v_add_nc_i16", "v_sub_i16": "v_sub_nc_i16",
}


def emit(merged):
    out = OUT
    gfx11 = P.gfx11_opcodes()
    out.write("// @generated by isa/gen/probe_gfx9.py from LLVM 19's gfx900, gfx906, gfx908, gfx90a and gfx942\n")
    out.write("// disassemblers; do not edit.\n")
    out.write("//! Every gfx9 opcode, per encoding: its mnemonic as LLVM prints it, its operation, the operands\n")
    out.write("//! LLVM prints, in order, with their widths in dwords (and which are AGPRs), how each VALU source\n")
    out.write("//! reads an immediate, which VOP3 modifiers it has, and the processors that have it (`GFX900`,\n")
    out.write("//! ...). One opcode has one row per distinct spelling among the processors.\n\n")
    used = sorted({flag for rows_ in merged.values() for group in rows_.values() for row in group for flag in row[4]})
    out.write("use super::table_types::OperandType::*;\n")
    out.write(f"use super::table_types::{{{', '.join(used + ['GFX900', 'GFX906', 'GFX908', 'GFX90A', 'GFX942', 'opcodes'])}}};\n")
    out.write("use crate::gfx11::Slot::*;\n\n")
    names = {}
    masks = ["GFX900", "GFX906", "GFX908", "GFX90A", "GFX942"]
    for enc, ops in merged.items():
        out.write(f"pub(crate) static {enc}: &[Entry] = &[\n")
        for op, group in sorted(ops.items()):
            for (mnemonic, slots, agprs, types, flags), mask in sorted(group.items(), key=lambda item: item[1]):
                base = P.gfx10_base(mnemonic)
                name = P.opcode_name(base)
                names[name] = base
                processors = " | ".join(m for bit, m in enumerate(masks) if mask >> bit & 1)
                agpr_mask = sum(1 << i for i in agprs)
                out.write(f'    Entry {{ op: {op}, mnemonic: "{mnemonic}", opcode: Opcode::{name}, slots: &[{", ".join(slots)}], '
                          f'types: [{", ".join(types)}], modifiers: {" | ".join(flags) or "0"}, agprs: {agpr_mask}, '
                          f'processors: {processors} }},\n')
        out.write("];\n\n")
    out.write("opcodes! {\n")
    for name in sorted(names):
        base = GFX9_TO_GFX10.get(names[name], names[name])
        renamed = P.gfx11_mnemonic(base)
        equivalent = renamed and P.opcode_name(renamed)
        out.write(f"    {name} => {equivalent},\n" if equivalent in gfx11 else f"    {name},\n")
    out.write("}\n")


OUT = sys.stdout

if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="the table to write (default: standard output)")
    parser.add_argument("--jobs", type=int, default=2, help="llvm-mc processes at a time")
    arguments = parser.parse_args()
    pool = ThreadPoolExecutor(arguments.jobs)
    tables = {}
    for mcpu in PROCESSORS:
        tables[mcpu] = probe_processor(mcpu, pool)
        json.dump(CACHE, open(CACHE_PATH, "w"))
        print(f"{mcpu}: " + ", ".join(f"{enc} {len(e)}" for enc, e in tables[mcpu][0].items()), file=sys.stderr)
    if arguments.output:
        OUT = open(arguments.output, "w")
    emit(rows(tables))
    if OUT is not sys.stdout:
        OUT.close()
