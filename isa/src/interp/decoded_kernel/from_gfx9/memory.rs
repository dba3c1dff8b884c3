//! gfx9's memory encodings as gfx11's: DS, FLAT/GLOBAL/SCRATCH and MUBUF. Each field's gfx9
//! position is the Vega ISA guide's (chapter 12, "Microcode Formats") and the MI200 ISA guide's
//! for gfx90a's `acc` bits, as `gfx9/format.rs` reads them; gfx11's the RDNA3 ISA guide's
//! (chapter 15), as `gfx11/decode.rs` reads them.

use super::{NUMBERING, Plan, Refusal, scalar};
use crate::gfx9::{self, Processor};
use crate::gfx11::{self, Encoding as E11, Opcode as O11};
use crate::interp::AtomicOp;
use crate::interp::decoded_kernel::reencode::{self, NULL, encode, sign_extend};
use crate::interp::memory_ops::{Access, Descriptor};

/// gfx90a's and gfx942's f64 float atomics, which gfx11 lacks: the gfx11 64-bit integer atomic
/// with the same operands that stands in for each (its words and register use), and the
/// operation it runs instead (MI200 ISA guide: `*_ATOMIC_ADD_F64`, `MIN_F64`, `MAX_F64`,
/// `DS_ADD_F64`, `DS_ADD_RTN_F64`).
pub(super) fn float64_atomic(opcode: gfx9::Opcode) -> Option<(O11, AtomicOp)> {
    use gfx9::Opcode::*;
    Some(match opcode {
        FlatAtomicAddF64 => (O11::FlatAtomicAddU64, AtomicOp::AddFloat),
        FlatAtomicMinF64 => (O11::FlatAtomicMinU64, AtomicOp::MinFloat),
        FlatAtomicMaxF64 => (O11::FlatAtomicMaxU64, AtomicOp::MaxFloat),
        GlobalAtomicAddF64 => (O11::GlobalAtomicAddU64, AtomicOp::AddFloat),
        GlobalAtomicMinF64 => (O11::GlobalAtomicMinU64, AtomicOp::MinFloat),
        GlobalAtomicMaxF64 => (O11::GlobalAtomicMaxU64, AtomicOp::MaxFloat),
        BufferAtomicAddF64 => (O11::BufferAtomicAddU64, AtomicOp::AddFloat),
        BufferAtomicMinF64 => (O11::BufferAtomicMinU64, AtomicOp::MinFloat),
        BufferAtomicMaxF64 => (O11::BufferAtomicMaxU64, AtomicOp::MaxFloat),
        DsAddF64 => (O11::DsAddU64, AtomicOp::AddFloat),
        DsAddRtnF64 => (O11::DsAddRtnU64, AtomicOp::AddFloat),
        _ => return None,
    })
}

/// gfx9's `off` for FLAT/GLOBAL/SCRATCH saddr (`gfx9/format.rs`; `llvm-mc-19 -mcpu=gfx90a`
/// encodes `global_load_dword v1, v[2:3], off` with saddr 0x7F).
const OFF_9: u32 = 0x7F;

/// DS. gfx9: offset0 [7:0], offset1 [15:8], gds 16, op [24:17], acc 25 (gfx90a), identity 0x36
/// [31:26]; the second dword addr [7:0], data0 [15:8], data1 [23:16], vdst [31:24]. gfx11: gds
/// 17, op [25:18] (`llvm-mc-19 -mcpu=gfx1100`: `ds_add_u32 v1, v2 offset:4 gds` sets bit 17),
/// the second dword alike. Compare-stores swap their data ([`reencode::swap_ds_data`]).
pub(super) fn ds(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    if (w0 >> 16) & 1 == 1 {
        return Err(Refusal("a GDS access"));
    }
    if (w0 >> 25) & 1 == 1 {
        return Err(Refusal("AGPR data (acc)"));
    }
    let compare_store = instruction.entry.mnemonic.starts_with("ds_cmpst_");
    let w1 = if compare_store { reencode::swap_ds_data(w1) } else { w1 };
    encode(E11::Ds, equivalent, [0x36 << 26 | (w0 & 0xFFFF), w1, 0])
}

/// FLAT/GLOBAL/SCRATCH. gfx9: offset [12:0] (FLAT 12 bits unsigned, GLOBAL and SCRATCH 13
/// signed), lds 13 (gfx942's SCRATCH: sve), seg [15:14], glc 16, slc 17, op [24:18], gfx90a's
/// scc 25; addr [39:32], data [47:40], saddr [54:48] (`off`: 0x7F), acc (gfx90a) or nv 55, vdst
/// [63:56]. gfx11: offset [12:0], dlc 13, glc 14, slc 15, seg [17:16]; saddr `off` 0x7C, SVE 55
/// (`llvm-mc-19 -mcpu=gfx1100`: `scratch_load_b32 v1, v2, off` sets it). gfx9's SCRATCH
/// addresses by the VGPR when saddr is `off`, else by the SGPR alone. The `scc`/`sc1` scope bit
/// chooses which caches stay coherent, which the interpreter's coherent memory does not need.
pub(super) fn flat(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    use gfx9::Encoding as E9;
    let [w0, w1, _] = instruction.words;
    let gfx942 = instruction.processor == Processor::Gfx942;
    let scratch_sve = instruction.encoding == E9::Scratch && gfx942;
    if (w0 >> 13) & 1 == 1 && !scratch_sve {
        return Err(Refusal("a load into LDS"));
    }
    if (w1 >> 23) & 1 == 1 {
        return Err(Refusal("AGPR data (acc) or nv"));
    }
    let (segment, offset) = match instruction.encoding {
        E9::Flat if (w0 >> 12) & 1 == 1 => return Err(Refusal("a FLAT offset past 12 bits")),
        E9::Flat => (0, w0 & 0xFFF),
        E9::Scratch => (1, sign_extend(w0, 13) & 0x1FFF),
        _ => (2, sign_extend(w0, 13) & 0x1FFF),
    };
    let (glc, slc) = ((w0 >> 16) & 1, (w0 >> 17) & 1);
    let out0 = 0x37 << 26 | segment << 16 | slc << 15 | glc << 14 | offset;
    let saddr = (w1 >> 16) & 0x7F;
    let (saddr, sve) = match instruction.encoding {
        E9::Flat => (NULL, 0),
        E9::Scratch if scratch_sve => (if saddr == OFF_9 { NULL } else { scalar(saddr)? }, (w0 >> 13) & 1),
        E9::Scratch if saddr == OFF_9 => (NULL, 1),
        _ if saddr == OFF_9 => (NULL, 0),
        _ => (scalar(saddr)?, 0),
    };
    let out1 = (w1 & 0xFF00_FFFF & !(1 << 23)) | sve << 23 | saddr << 16;
    encode(instruction.encoding.gfx11(), equivalent, [out0, out1, 0])
}

/// MUBUF. gfx9: offset [11:0], offen 12, idxen 13, glc 14, gfx90a's scc 15, lds 16, slc 17, op
/// [24:18]; vaddr [39:32], vdata [47:40], srsrc [52:48], tfe (gfx90a: acc) 55, soffset [63:56]
/// (`llvm-mc-19 -mcpu=gfx90a`: `buffer_load_dword v1, v2, s[4:7], s8 offen offset:4 glc slc` is
/// e0525004 08010102). gfx11: offset [11:0], slc 12, dlc 13, glc 14; srsrc [52:48], tfe 53,
/// offen 54, idxen 55, soffset [63:56] (`llvm-mc-19 -mcpu=gfx1100`: `buffer_load_b32 v1,
/// v[2:3], s[4:7], s8 idxen offen` is e0500000 08c10102). With idxen the VGPR holds the index
/// and, with offen too, the next one the offset, on both (LLVM's AMDGPU operand docs,
/// `gfx9_addr_buf`). The V# is read in gfx9's layout ([`gfx9_descriptor`]), whose format and
/// range check differ from gfx11's (`memory_ops.rs`, `Descriptor::Gfx9`).
pub(super) fn mubuf(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    if (w0 >> 16) & 1 == 1 || (w1 >> 23) & 1 == 1 {
        return Err(Refusal("a buffer access into LDS, with TFE or AGPR data"));
    }
    let (offen, idxen, glc, slc) = ((w0 >> 12) & 1, (w0 >> 13) & 1, (w0 >> 14) & 1, (w0 >> 17) & 1);
    let soffset = w1 >> 24;
    if soffset == 255 {
        return Err(Refusal("a literal soffset"));
    }
    let out0 = 0x38 << 26 | glc << 14 | slc << 12 | (w0 & 0xFFF);
    let out1 = (NUMBERING.source)(soffset)? << 24 | idxen << 23 | offen << 22 | (w1 & 0x1F_FFFF);
    encode(E11::Mubuf, equivalent, [out0, out1, 0])
}

/// `plan` with its buffer access reading the V# in gfx9's layout (`Descriptor::Gfx9`) where
/// `translated`, its gfx11 form, is MUBUF or MTBUF (with AGPR data too): chosen once here, so
/// that the access's step tests no instruction set.
pub(super) fn gfx9_descriptor(translated: &gfx11::Instruction, plan: Plan) -> Plan {
    if !matches!(translated.encoding, E11::Mubuf | E11::Mtbuf) {
        return plan;
    }
    match plan {
        Plan::Memory(access) => Plan::Memory(Access { descriptor: Descriptor::Gfx9, ..access }),
        Plan::AgprMemory(mut agprs) => {
            agprs.access.descriptor = Descriptor::Gfx9;
            Plan::AgprMemory(agprs)
        }
        other => other,
    }
}

/// MTBUF (`tbuffer_*`), whose format the instruction names. gfx9 (Vega ISA guide 12.7;
/// `llvm-mc-19 -mcpu=gfx90a`: `tbuffer_load_format_x v1, v2, s[4:7], s8
/// format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen offset:4 glc slc` is eba05004
/// 08410102): offset [11:0], offen 12, idxen 13, glc 14, op [18:15], dfmt [22:19], nfmt
/// [25:23]; vaddr [39:32], vdata [47:40], srsrc [52:48], slc 54, tfe (gfx90a: acc) 55, soffset
/// [63:56]. gfx11 (`-mcpu=gfx1100`, the same with `format:[BUF_FMT_32_FLOAT]`: e8b05004
/// 08410102): offset [11:0], slc 12, dlc 13, glc 14, op [18:15], format [25:19]; offen 54,
/// idxen 55. The two formats become gfx11's unified one (`gfx9/buffer_format.rs`). The V# is
/// read as [`mubuf`]'s (its format unused); TFE or AGPR data and a literal soffset are refused.
pub(super) fn mtbuf(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let (offen, idxen, glc, slc) = ((w0 >> 12) & 1, (w0 >> 13) & 1, (w0 >> 14) & 1, (w1 >> 22) & 1);
    if (w1 >> 23) & 1 == 1 {
        return Err(Refusal("a typed buffer access with TFE or AGPR data"));
    }
    let soffset = w1 >> 24;
    if soffset == 255 {
        return Err(Refusal("a literal soffset"));
    }
    let format = gfx9::buffer_format::unified((w0 >> 19) & 0xF, (w0 >> 23) & 7)
        .ok_or(Refusal("a typed buffer format gfx11 lacks (or gfx9 reserves)"))?;
    let out0 = 0x3A << 26 | format << 19 | (w0 & (0xF << 15)) | glc << 14 | slc << 12 | (w0 & 0xFFF);
    let out1 = (NUMBERING.source)(soffset)? << 24 | idxen << 23 | offen << 22 | (w1 & 0x1F_FFFF);
    encode(E11::Mtbuf, equivalent, [out0, out1, 0])
}
