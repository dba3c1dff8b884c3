//! gfx9 CDNA's matrix instructions and accumulation registers (gfx908, gfx90a, gfx942):
//! `v_mfma_*` planned as [`Plan::Mfma`] (run by `interp/mfma.rs`), and `v_accvgpr_read_b32`,
//! `v_accvgpr_write_b32` and `v_accvgpr_mov_b32` as gfx11's `v_mov_b32` with an AGPR row.
//!
//! **AGPRs.** gfx908 has a separate file of 256 AGPRs per lane; gfx90a and gfx942 one unified
//! file whose AGPRs start at the descriptor's ACCUM_OFFSET (AMDGPUUsage, "compute_pgm_rsrc3 for
//! GFX90A, GFX942"). Instructions name a0..a255 the same way on all three, so the interpreter
//! keeps them as a namespace of their own: AGPR n is VGPR row [`agpr_row`], past the kernel's
//! VGPRs and the SDWA shadow rows, and those 256 rows are added to a wave only where the kernel
//! names an AGPR ([`uses_agprs`]; `DecodedKernel::load_for`), so other kernels pay nothing.
//! Code that reaches an AGPR by its unified-file VGPR number (aliasing the two) is not modelled.
//! gfx90a requires 64-bit VGPR and AGPR tuples to start at an even register (LLVM's
//! `needsAlignedVGPRs`, the `_Align2` register classes; `llvm-mc-19 -mcpu=gfx90a` rejects
//! `v[1:2]` there). LLVM 19's disassembler decodes misaligned tuples without complaint
//! (`v_mfma_f64_16x16x4f64 v[1:8], ...` prints), and what hardware does with one is not
//! documented, so an instruction naming one fails when reached (`from_gfx9::odd_tuple`).
//!
//! **MFMA fields** (VOP3P-MAI; MI100 and MI200 ISA guides, "VOP3P-MAI"; `gfx9/format.rs`):
//! vdst [7:0], cbsz [10:8], abid [14:11], acc_cd 15 (gfx90a, gfx942: vdst and C are AGPRs;
//! gfx908's are always AGPRs, the table's `agprs`), op [22:16]; src0 (A) [40:32], src1 (B)
//! [49:41], src2 (C) [58:50], acc [60:59] (A, B are AGPRs), blgp [63:61]. The broadcast controls
//! cbsz, abid and blgp run where the form has them (`mfma`); elsewhere (and f64's negation in
//! the same bits) they are refused when set, as is a C that is neither a register tuple nor an
//! inline constant.
//!
//! gfx942's sparse `v_smfmac_*` (MI300 ISA guide, 7.4 "Sparse Matrices"): src2 is a VGPR of
//! sparse indices, always a VGPR ("SRC2 acts as if ACC_CD==0"; acc_cd places D only), C is D,
//! and cbsz/abid pick the index set, not a broadcast: with CBSZ[1:0] = 0, ABID[1:0] picks one of
//! four 8-bit sets (16-bit inputs) or ABID[0] one of two 16-bit sets (8-bit inputs), else the
//! first set. BLGP is refused when set (amd_matrix_instruction_calculator, CDNA3 SMFMAC: "BLGP
//! bits supported: False"). gfx942's xf32 forms run with their inputs' mantissas truncated
//! (`interp/mfma.rs`); like the other single-block gfx942 forms they have no cbsz, abid or blgp
//! (the calculator: neither supported).

use super::{NUMBERING, Plan, Refusal};
use crate::gfx9::{self, Extension};
use crate::gfx11::{self, Opcode as O11};
use crate::interp::decoded_kernel::from_gfx10::SHADOW_VGPRS;
use crate::interp::decoded_kernel::reencode::{Vop3, placeholder};
use crate::interp::mfma::{Accumulator, Input, Mfma, Output, Sparse};
use crate::interp::operands::Source;

/// AGPRs per lane (MI100 and MI200 ISA guides: a0..a255).
pub(crate) const AGPRS: usize = 256;

/// The VGPR row that holds AGPR `n` for a kernel whose SDWA shadow rows start at `shadow` (the
/// first row past its own VGPRs): the AGPRs follow the shadow rows (the module's note).
pub(crate) fn agpr_row(shadow: u16, n: u32) -> u16 {
    shadow + SHADOW_VGPRS as u16 + n as u16
}

/// Whether `instruction` is one [`planned`] plans: an MFMA (dense or sparse) or a `v_accvgpr_*`.
pub(super) fn handles(instruction: &gfx9::Instruction) -> bool {
    let mnemonic = instruction.entry.mnemonic;
    mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac") || mnemonic.starts_with("v_accvgpr")
}

/// Whether `instruction` names an AGPR: by its table row (gfx908's MFMA and the `v_accvgpr_*`
/// moves), MFMA's acc_cd or acc bits, or gfx90a's and gfx942's memory `acc` bits (DS bit 25;
/// FLAT/GLOBAL/SCRATCH, MUBUF and MTBUF bit 55; the MI200 ISA guide's formats).
pub(crate) fn uses_agprs(instruction: &gfx9::Instruction) -> bool {
    use gfx9::Encoding as E9;
    let [w0, w1, _] = instruction.words;
    let unified = instruction.processor.has_unified_registers();
    let mnemonic = instruction.entry.mnemonic;
    instruction.entry.agprs != 0
        || (mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac"))
            && (w0 >> 15 & 1 == 1 || w1 >> 27 & 3 != 0)
        || unified
            && match instruction.encoding {
                E9::Ds => w0 >> 25 & 1 == 1,
                E9::Flat | E9::Global | E9::Scratch | E9::Mubuf | E9::Mtbuf => w1 >> 23 & 1 == 1,
                _ => false,
            }
}

/// The plan of an MFMA or `v_accvgpr_*` instruction (one [`handles`]), whose kernel's SDWA
/// shadow rows start at `shadow`.
pub(super) fn planned(instruction: &gfx9::Instruction, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    use gfx9::Opcode as O9;
    match instruction.opcode() {
        O9::VAccvgprReadB32 | O9::VAccvgprWriteB32 | O9::VAccvgprMovB32 => accvgpr(instruction, shadow),
        _ => mfma(instruction, shadow).map(|mfma| (placeholder(), Plan::Mfma(Box::new(mfma)))),
    }
}

/// `v_accvgpr_read_b32 vD, aS` (VOP3P), `v_accvgpr_write_b32 aD, src` (VOP3P; a VGPR or an
/// inline constant) and gfx90a's `v_accvgpr_mov_b32 aD, aS` (VOP1): a 32-bit copy in each lane
/// EXEC enables (MI100 ISA guide, V_ACCVGPR_READ/WRITE; MI200 ISA guide, V_ACCVGPR_MOV_B32), as
/// gfx11's `v_mov_b32` (VOP3) planned, its AGPR operand's row then set past the VGPRs. The
/// VOP3P modifier bits LLVM sets (op_sel_hi) mean nothing for a move. `llvm-mc-19
/// -mcpu=gfx90a`: `v_accvgpr_read_b32 v1, a2` is `d3d84001 18000102`, `v_accvgpr_write_b32 a3,
/// v4` `d3d94003 18000104`, `v_accvgpr_mov_b32 a1, a2` `7e02a502`.
fn accvgpr(instruction: &gfx9::Instruction, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    use gfx9::Opcode as O9;
    let [w0, w1, _] = instruction.words;
    if instruction.extension != Extension::None {
        return Err(Refusal("a DPP or SDWA v_accvgpr_mov_b32"));
    }
    // (vdst field, src0 field, whether each is an AGPR).
    let (vdst, src0, vdst_agpr, src0_agpr) = match instruction.opcode() {
        O9::VAccvgprReadB32 => (w0 & 0xFF, w1 & 0x1FF, false, true),
        O9::VAccvgprWriteB32 => (w0 & 0xFF, w1 & 0x1FF, true, false),
        _ => (w0 >> 17 & 0xFF, w0 & 0x1FF, true, true),
    };
    if src0_agpr && src0 < 256 {
        return Err(Refusal("an AGPR source field below 256"));
    }
    let source = if src0_agpr { 256 } else { (NUMBERING.source)(src0)? };
    let stand_in = Vop3 { vdst: 0, src: [source, 0, 0], ..Vop3::default() }.encode(O11::VMovB32)?;
    let Plan::Vector(mut op) = Plan::of(&stand_in) else {
        return Err(Refusal("the stand-in does not plan as a VALU row"));
    };
    op.operands.vdst = if vdst_agpr { agpr_row(shadow, vdst) } else { vdst as u16 };
    if src0_agpr {
        op.operands.src[0] = Source::Vgpr(agpr_row(shadow, src0 - 256));
    }
    Ok((stand_in, Plan::Vector(op)))
}

/// The shape and types an MFMA mnemonic names (`v_mfma_<out>_<M>x<N>x<K>[_<blocks>b]<in>`, the
/// gfx908/gfx90a and gfx942 spellings, and gfx942's `v_smfmac_<out>_<M>x<N>x<K>_<in>`; LLVM's
/// VOP3PInstructions.td, `MAIInst` and `SMFMACInst` definitions): (M, K, C/D type, A type, B
/// type, sparse), K the dense K, or `None` for a name it does not know.
fn shape_of(mnemonic: &str) -> Option<(usize, usize, Output, Input, Input, bool)> {
    let (rest, sparse) = match mnemonic.strip_prefix("v_smfmac_") {
        Some(rest) => (rest, true),
        None => (mnemonic.strip_prefix("v_mfma_")?, false),
    };
    let (out, rest) = rest.split_once('_')?;
    let output = match out {
        "f32" => Output::F32,
        "i32" => Output::I32,
        "f64" => Output::F64,
        _ => return None,
    };
    let mut dims = rest.splitn(3, 'x');
    let m: usize = dims.next()?.parse().ok()?;
    let n: usize = dims.next()?.parse().ok()?;
    let tail = dims.next()?;
    let digits = tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len());
    let k: usize = tail[..digits].parse().ok()?;
    let types = &tail[digits..];
    let (a, b) = match types {
        _ if types.ends_with("xf32") => (Input::Xf32, Input::Xf32),
        _ if types.ends_with("fp8_fp8") => (Input::Fp8, Input::Fp8),
        _ if types.ends_with("fp8_bf8") => (Input::Fp8, Input::Bf8),
        _ if types.ends_with("bf8_fp8") => (Input::Bf8, Input::Fp8),
        _ if types.ends_with("bf8_bf8") => (Input::Bf8, Input::Bf8),
        _ if types.contains("bf16") => (Input::Bf16, Input::Bf16),
        _ if types.ends_with("f16") => (Input::F16, Input::F16),
        _ if types.ends_with("i8") => (Input::I8, Input::I8),
        _ if types.ends_with("f64") => (Input::F64, Input::F64),
        _ if types.ends_with("f32") => (Input::F32, Input::F32),
        _ => return None,
    };
    (m == n).then_some((m, k, output, a, b, sparse))
}

/// A sparse MFMA's index set (the module's note): its first bit in the src2 VGPR, from CBSZ
/// and ABID; a set holds 2 bits for each A element of a lane's two registers, so it is 8 bits
/// wide for 16-bit inputs and 16 for 8-bit ones.
fn index_shift(a_type: Input, cbsz: u8, abid: u8) -> u8 {
    let width = (2 * 64 / a_type.bits()) as u8;
    let sets = 32 / width;
    if cbsz & 3 != 0 { 0 } else { (abid % sets) * width }
}

/// An MFMA's plan (the module's field note). Its block count follows from D's register count
/// (the table's vdst width = M·N·blocks / 64 elements), and each operand's register count is
/// checked against the table's, so a misread name is refused rather than run.
fn mfma(instruction: &gfx9::Instruction, shadow: u16) -> Result<Mfma, Refusal> {
    use gfx11::Slot;
    let entry = instruction.entry;
    let [w0, w1, _] = instruction.words;
    let (m, k, output, a_type, b_type, sparse) =
        shape_of(entry.mnemonic).ok_or(Refusal("an MFMA form whose name the interpreter does not parse"))?;
    let width = |probe: fn(&Slot) -> Option<u8>| entry.slots.iter().find_map(probe).unwrap_or(0) as usize;
    let d_width = width(|slot| if let Slot::Vdst(w) = slot { Some(*w) } else { None });
    let a_width = width(|slot| if let Slot::Src0(w) = slot { Some(*w) } else { None });
    let b_width = width(|slot| if let Slot::Src1(w) = slot { Some(*w) } else { None });
    let elements = d_width / if output == Output::F64 { 2 } else { 1 };
    let blocks = 64 * elements / (m * m);
    let (cbsz, abid, blgp) = ((w0 >> 8 & 7) as u8, (w0 >> 11 & 0xF) as u8, (w1 >> 29) as u8);
    let plan = Mfma {
        m,
        k,
        blocks,
        a_type,
        b_type,
        output,
        a: 0,
        b: 0,
        c: Accumulator::Constant(0),
        d: 0,
        cbsz: 0,
        abid: 0,
        blgp: 0,
        // Stands for the shape's checks; the index row is set below.
        sparse: sparse.then_some(Sparse { index: 0, shift: 0 }),
        exec_ignored: instruction.processor == gfx9::Processor::Gfx942,
    };
    let consistent = plan.is_valid()
        && plan.d_registers() == d_width
        && plan.a_registers() == a_width
        && plan.source_registers(b_type) == b_width;
    if !consistent {
        return Err(Refusal("an MFMA whose operand widths do not match its named shape"));
    }
    if sparse {
        return smfmac(instruction, shadow, plan, (cbsz, blgp, abid));
    }
    // CBSZ and ABID apply to the forms of several blocks, an ABID within the 2^CBSZ blocks
    // broadcast to; BLGP to every f32-accumulating form of gfx908 and gfx90a and to gfx942's
    // f32-input and multi-block ones (amd_matrix_instruction_calculator's "CBSZ and ABID bits
    // supported" and "BLGP bits supported" for CDNA1, CDNA2 and CDNA3). For f64 the same bits
    // are negation on gfx942 (LLVM's `AMDGPUAsmParser::validateBLGP`, DGEMM's `neg`): refused.
    let broadcast = cbsz != 0 || abid != 0;
    if broadcast && (blocks == 1 || output == Output::F64 || 1 << cbsz > blocks || abid >= 1 << cbsz) {
        return Err(Refusal("MFMA cbsz/abid outside a multi-block form's blocks"));
    }
    let gfx942_single = instruction.processor == gfx9::Processor::Gfx942 && blocks == 1 && a_type != Input::F32;
    if blgp != 0 && (output == Output::F64 || gfx942_single) {
        return Err(Refusal("MFMA blgp on a form without it (f64's negation, gfx942's single-block forms)"));
    }
    let unified = instruction.processor.has_unified_registers();
    let cd_agprs = entry.agprs & 1 != 0 || unified && w0 >> 15 & 1 == 1;
    // A register tuple's first row, checked to lie within its file.
    let row = |number: u32, count: usize, agpr: bool| -> Result<u16, Refusal> {
        if number as usize + count > AGPRS {
            return Err(Refusal("an MFMA register tuple past the register file"));
        }
        Ok(if agpr { agpr_row(shadow, number) } else { number as u16 })
    };
    let (src0, src1, src2) = (w1 & 0x1FF, w1 >> 9 & 0x1FF, w1 >> 18 & 0x1FF);
    if src0 < 256 || src1 < 256 {
        return Err(Refusal("an MFMA A or B operand that is not a register"));
    }
    let a = row(src0 - 256, a_width, w1 >> 27 & 1 == 1)?;
    let b = row(src1 - 256, b_width, w1 >> 28 & 1 == 1)?;
    let c = match src2 {
        256.. => Accumulator::Rows(row(src2 - 256, d_width, cd_agprs)?),
        // Inline constants (Vega and MI200 ISA guides, SRC operands: 128..=208 integers,
        // 240..=248 floats), numbered as gfx11 numbers them, read as C's type.
        128..=208 | 240..=248 => {
            let kind = match output {
                Output::F32 => crate::interp::wave::Kind::F32,
                Output::I32 => crate::interp::wave::Kind::Int,
                Output::F64 => crate::interp::wave::Kind::F64,
            };
            Accumulator::Constant(crate::interp::wave::constant_of(src2, kind, false))
        }
        _ => return Err(Refusal("an MFMA C that is neither a register tuple nor an inline constant")),
    };
    let d = row(w0 & 0xFF, d_width, cd_agprs)?;
    Ok(Mfma { a, b, c, d, cbsz, abid, blgp, ..plan })
}

/// A sparse MFMA's plan, `plan` its shape (the module's note on `v_smfmac_*`): D (and C) in
/// VGPRs or AGPRs by acc_cd, A and B by the acc bits, the indices in the src2 VGPR.
fn smfmac(instruction: &gfx9::Instruction, shadow: u16, plan: Mfma, controls: (u8, u8, u8)) -> Result<Mfma, Refusal> {
    let [w0, w1, _] = instruction.words;
    let (cbsz, blgp, abid) = controls;
    if blgp != 0 {
        return Err(Refusal("blgp on a sparse MFMA (v_smfmac), which has none"));
    }
    let (src0, src1, src2) = (w1 & 0x1FF, w1 >> 9 & 0x1FF, w1 >> 18 & 0x1FF);
    if src0 < 256 || src1 < 256 || src2 < 256 {
        return Err(Refusal("a sparse MFMA operand that is not a register"));
    }
    let row = |number: u32, count: usize, agpr: bool| -> Result<u16, Refusal> {
        if number as usize + count > AGPRS {
            return Err(Refusal("an MFMA register tuple past the register file"));
        }
        Ok(if agpr { agpr_row(shadow, number) } else { number as u16 })
    };
    let a = row(src0 - 256, plan.a_registers(), w1 >> 27 & 1 == 1)?;
    let b = row(src1 - 256, plan.source_registers(plan.b_type), w1 >> 28 & 1 == 1)?;
    let d = row(w0 & 0xFF, plan.d_registers(), w0 >> 15 & 1 == 1)?;
    let index = row(src2 - 256, 1, false)?;
    let sparse = Some(Sparse { index, shift: index_shift(plan.a_type, cbsz, abid) });
    let planned = Mfma { a, b, c: Accumulator::Rows(d), d, sparse, ..plan };
    if !planned.is_valid() {
        return Err(Refusal("a sparse MFMA whose index set lies past its index register"));
    }
    Ok(planned)
}
