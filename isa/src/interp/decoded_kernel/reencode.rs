//! What the gfx10.3 and gfx9 translators (`from_gfx10.rs`, `from_gfx9/`) share: re-encoding
//! words as a gfx11 instruction, the gfx11 VOP3 form of a VOP1/VOP2/VOPC operation, and the
//! SOPP immediates both re-lay out. Each translator supplies its own operand renumbering
//! ([`Numbering`]).

use super::Plan;
use crate::gfx11;
use crate::gfx11::{Encoding as E11, Opcode as O11, Slot};
use crate::interp::AtomicOp;
use crate::interp::memory_ops::Operation;
use crate::interp::valu::half_operands;

/// Why an instruction has no gfx11 translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refusal(pub &'static str);

/// `vcc_lo`'s operand number (the same on gfx9, gfx10 and gfx11).
pub(super) const VCC: u32 = 106;
/// gfx11's `null`, which is also its `off` for a scalar base.
pub(super) const NULL: u32 = 124;
/// gfx11's `MSG_RTN_GET_REALTIME` (LLVM's SIDefines.h, `SendMsg::ID_RTN_GET_REALTIME`).
const MSG_RTN_GET_REALTIME: u32 = 131;

/// How a source ISA's scalar and source fields map to gfx11's numbers.
#[derive(Clone, Copy)]
pub(crate) struct Numbering {
    /// A 7-bit scalar register field (SDST, SMEM sdata, saddr): gfx11's number, or a refusal
    /// for a register gfx11 lacks.
    pub scalar: fn(u32) -> Result<u32, Refusal>,
    /// An 8-bit SSRC or 9-bit SRC field.
    pub source: fn(u32) -> Result<u32, Refusal>,
}

/// What a refused instruction holds in place of a translation: gfx11's `s_nop 0`, never run
/// (its plan is `Plan::Unsupported`, and errors name the instruction as written).
pub(super) fn placeholder() -> gfx11::Instruction {
    gfx11::decode(&[0xBF80_0000], 0).expect("gfx11 s_nop decodes")
}

/// Puts gfx11's opcode field value `op` into `w0` (RDNA3 ISA guide, each encoding's OP field;
/// the same positions `gfx11/decode.rs` reads).
fn with_opcode(encoding: E11, w0: u32, op: u32) -> u32 {
    let (shift, bits) = match encoding {
        E11::Sop2 => (23, 7),
        E11::Sopk => (23, 5),
        E11::Sop1 => (8, 8),
        E11::Sopc | E11::Sopp => (16, 7),
        E11::Smem | E11::Ds | E11::Mubuf => (18, 8),
        E11::Mtbuf => (15, 4),
        E11::Vop2 => (25, 6),
        E11::Vop1 => (9, 8),
        E11::Vopc => (17, 8),
        E11::Vop3 => (16, 10),
        E11::Vop3p => (16, 7),
        E11::Flat | E11::Scratch | E11::Global => (18, 7),
        E11::Vopd => (22, 4),
    };
    let mask = ((1u32 << bits) - 1) << shift;
    (w0 & !mask) | ((op << shift) & mask)
}

/// Gives `words` (their first dword laid out as gfx11's `encoding`, its opcode field aside) the
/// opcode of `opcode` and decodes them with gfx11's decoder, which must find that operation:
/// the decoder then sizes the instruction and reads its literal or DPP word as for any gfx11
/// code.
pub(super) fn encode(encoding: E11, opcode: O11, mut words: [u32; 3]) -> Result<gfx11::Instruction, Refusal> {
    let entry =
        gfx11::entry_of(encoding, opcode).ok_or(Refusal("gfx11 has the operation, but not in this encoding"))?;
    words[0] = with_opcode(encoding, words[0], entry.op as u32);
    let instruction = gfx11::decode(&words, 0).map_err(|_| Refusal("the re-encoded words do not decode as gfx11"))?;
    if instruction.opcode() != opcode || instruction.encoding != encoding {
        return Err(Refusal("the re-encoded words decode as another gfx11 operation"));
    }
    Ok(instruction)
}

/// Whether the gfx11 form of `entry` reads or writes a 16-bit half through VOP1/VOP2/VOPC's
/// VGPR fields (`valu::half_operands` of its name).
pub(super) fn names_halves(entry: &gfx11::Entry) -> bool {
    half_operands(bare_name(entry)) != 0
}

/// Whether the gfx11 operation `entry` writes a 16-bit result (bit 3 of `half_operands`).
pub(super) fn writes_half(entry: &gfx11::Entry) -> bool {
    half_operands(bare_name(entry)) & 8 != 0
}

fn bare_name(entry: &gfx11::Entry) -> &'static str {
    entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64")
}

/// `value`'s low `bits` bits, sign-extended to 32.
pub(super) fn sign_extend(value: u32, bits: u32) -> u32 {
    let shift = 32 - bits;
    (((value << shift) as i32) >> shift) as u32
}

/// `s_waitcnt`'s counters in gfx11's layout (RDNA3 ISA guide, S_WAITCNT: vmcnt [15:10],
/// lgkmcnt [9:4], expcnt [2:0]).
pub(super) fn waitcnt(vm: u32, exp: u32, lgkm: u32) -> u32 {
    (vm & 0x3F) << 10 | (lgkm & 0x3F) << 4 | (exp & 7)
}

/// `s_sendmsg`'s immediate where gfx11 gives it the same meaning: only `MSG_INTERRUPT` (1 on
/// gfx9, gfx10 and gfx11; LLVM's SIDefines.h `SendMsg`). The others are graphics or system
/// messages whose numbers gfx11 reuses (3 is gfx10's `MSG_GS_DONE`, gfx11's
/// `MSG_DEALLOC_VGPRS`).
pub(super) fn sendmsg(simm: u32) -> Result<u32, Refusal> {
    if simm == 1 {
        Ok(simm)
    } else {
        Err(Refusal("a message gfx11 numbers differently (only MSG_INTERRUPT is the same)"))
    }
}

/// `s_memtime`/`s_memrealtime sdata` (`sdata` already gfx11's number): gfx11's
/// `s_sendmsg_rtn_b64 sdata, sendmsg(MSG_RTN_GET_REALTIME)` (SOP1: identity 0x17D at [31:23],
/// sdst [22:16], the message in ssrc0), which reads the agent's clock. The interpreter's one
/// clock serves both, and each read is as monotonic as the hardware's.
pub(super) fn clock(sdata: u32) -> Result<gfx11::Instruction, Refusal> {
    encode(E11::Sop1, O11::SSendmsgRtnB64, [0x17D << 23 | sdata << 16 | MSG_RTN_GET_REALTIME, 0, 0])
}

/// SOP2, SOPC, SOP1 (laid out alike on gfx9, gfx10 and gfx11: sdst [22:16] (not SOPC), ssrc1
/// [15:8] (not SOP1), ssrc0 [7:0], identity and opcode above; the literal follows) re-encoded
/// as gfx11's `encoding` with the fields renumbered. `reads_ssrc0`: whether a SOP1 reads its
/// ssrc0 (otherwise the field is kept as it is).
pub(super) fn sop(
    encoding: E11,
    w0: u32,
    literal: Option<u32>,
    reads_ssrc0: bool,
    equivalent: O11,
    numbering: Numbering,
) -> Result<gfx11::Instruction, Refusal> {
    let (sdst, ssrc1, ssrc0) = ((w0 >> 16) & 0x7F, (w0 >> 8) & 0xFF, w0 & 0xFF);
    let out = match encoding {
        // SOP2: identity [31:30]; the opcode field is replaced.
        E11::Sop2 => {
            (w0 & 0xC000_0000)
                | (numbering.scalar)(sdst)? << 16
                | (numbering.source)(ssrc1)? << 8
                | (numbering.source)(ssrc0)?
        }
        E11::Sopc => (w0 & 0xFF80_0000) | (numbering.source)(ssrc1)? << 8 | (numbering.source)(ssrc0)?,
        _ => {
            let ssrc0 = if reads_ssrc0 { (numbering.source)(ssrc0)? } else { ssrc0 };
            (w0 & 0xFF80_0000) | (numbering.scalar)(sdst)? << 16 | ssrc0
        }
    };
    encode(encoding, equivalent, [out, literal.unwrap_or(0), 0])
}

/// The second VOP3/VOP3P dword `w1` with the sources that `slots` reads renumbered.
pub(super) fn vop3_sources(slots: &[Slot], w1: u32, numbering: Numbering) -> Result<u32, Refusal> {
    let mut out = w1;
    for (index, slot) in [Slot::Src0(0), Slot::Src1(0), Slot::Src2(0)].iter().enumerate() {
        let reads = slots.iter().any(|s| core::mem::discriminant(s) == core::mem::discriminant(slot));
        if reads {
            let shift = 9 * index as u32;
            out = (out & !(0x1FF << shift)) | (numbering.source)((w1 >> shift) & 0x1FF)? << shift;
        }
    }
    Ok(out)
}

/// The first VOP3 dword `w0` with VOP3B's sdst [14:8] and a scalar vdst [7:0] (`v_cmp*_e64`,
/// `v_readlane_b32`) renumbered, where `slots` has them.
pub(super) fn vop3_scalars(slots: &[Slot], w0: u32, numbering: Numbering) -> Result<u32, Refusal> {
    let has = |probe: fn(&Slot) -> bool| slots.iter().any(probe);
    let mut out = w0;
    if has(|slot| matches!(slot, Slot::ScalarVdst(_))) {
        out = (out & !0xFF) | (numbering.scalar)(w0 & 0xFF)?;
    }
    if has(|slot| matches!(slot, Slot::Sdst(_))) {
        out = (out & !(0x7F << 8)) | (numbering.scalar)((w0 >> 8) & 0x7F)? << 8;
    }
    Ok(out)
}

/// DS compare-stores: gfx9's and gfx10's `ds_cmpst_*` take the comparand in DATA0 and the new
/// value in DATA1, gfx11's `ds_cmpstore_*` the reverse (RDNA2 and RDNA3 ISA guides,
/// DS_CMPST_B32 and DS_CMPSTORE_B32): the second DS dword with the two fields swapped.
pub(super) fn swap_ds_data(w1: u32) -> u32 {
    let (data0, data1) = ((w1 >> 8) & 0xFF, (w1 >> 16) & 0xFF);
    (w1 & 0xFF00_00FF) | data1 << 8 | data0 << 16
}

/// The fields of a VOP1/VOP2/VOPC instruction: src0 renumbered (a DPP or SDWA marker as it
/// is), vdst (0 for VOPC, whose bits there are its opcode), vsrc1.
#[derive(Clone, Copy)]
pub(super) struct E32 {
    pub vdst: u32,
    /// Whether vdst is an SGPR (`v_readfirstlane_b32`).
    pub scalar_vdst: bool,
    pub src0: u32,
    pub vsrc1: u32,
}

impl E32 {
    /// The fields of `w0` (VOP1 vdst [24:17], VOP2 vdst [24:17] and vsrc1 [16:9], src0 [8:0];
    /// the same on gfx9, gfx10 and gfx11). `extended`: src0 is an SDWA or DPP marker.
    pub fn of(w0: u32, vopc: bool, slots: &[Slot], extended: bool, numbering: Numbering) -> Result<E32, Refusal> {
        let scalar_vdst = slots.iter().any(|slot| matches!(slot, Slot::ScalarVdst(_)));
        let src0 = if extended { w0 & 0x1FF } else { (numbering.source)(w0 & 0x1FF)? };
        let vdst = if vopc { 0 } else { (w0 >> 17) & 0xFF };
        Ok(E32 { vdst, scalar_vdst, src0, vsrc1: (w0 >> 9) & 0xFF })
    }
}

/// A VOP3 instruction's fields, as gfx11 lays them out (RDNA3 ISA guide, VOP3 and VOP3SD):
/// vdst [7:0], abs [10:8] or sdst [14:8], op_sel [14:11], clamp 15; src0/src1/src2 [8:0]/[17:9]/
/// [26:18] of the second dword, omod [28:27], neg [31:29].
#[derive(Clone, Copy, Default)]
pub(super) struct Vop3 {
    pub vdst: u32,
    pub sdst: Option<u32>,
    pub src: [u32; 3],
    pub abs: u32,
    pub neg: u32,
    pub op_sel: u32,
    pub clamp: u32,
    pub omod: u32,
    pub literal: Option<u32>,
}

impl Vop3 {
    /// The gfx11 VOP3 instruction of `opcode` with these fields.
    pub fn encode(self, opcode: O11) -> Result<gfx11::Instruction, Refusal> {
        let modifiers = match self.sdst {
            Some(sdst) => sdst << 8,
            None => self.abs << 8 | self.op_sel << 11,
        };
        let w0 = 0x35 << 26 | modifiers | self.clamp << 15 | self.vdst;
        let [src0, src1, src2] = self.src;
        let w1 = src0 | src1 << 9 | src2 << 18 | self.omod << 27 | self.neg << 29;
        encode(E11::Vop3, opcode, [w0, w1, self.literal.unwrap_or(0)])
    }
}

/// The VOP3 form of a VOP1/VOP2/VOPC operation (whose printed operands are `slots`), its
/// operands placed where the gfx11 VOP3 entry has them: VOPC's mask (and a VOP2 carry-out) to
/// `fields.sdst` or `vcc_lo`, an implied `vcc_lo` source to src2. `fields.src` holds src0 and
/// src1 as 9-bit fields.
pub(super) fn vop3_of(
    slots: &[Slot],
    equivalent: O11,
    e32: E32,
    mut fields: Vop3,
    numbering: Numbering,
) -> Result<gfx11::Instruction, Refusal> {
    let entry = gfx11::entry_of(E11::Vop3, equivalent).ok_or(Refusal("gfx11 has no VOP3 form of this operation"))?;
    let implied_vcc_source =
        slots.iter().skip_while(|slot| !matches!(slot, Slot::Src1(_))).any(|slot| matches!(slot, Slot::Fixed(_)));
    let two_sources = slots.iter().any(|slot| matches!(slot, Slot::Src1(_)));
    let mut src = [fields.src[0], if two_sources { fields.src[1] } else { 0 }, 0];
    for slot in entry.slots {
        match slot {
            Slot::Vdst(_) => fields.vdst = e32.vdst,
            Slot::ScalarVdst(_) if e32.scalar_vdst => fields.vdst = (numbering.scalar)(e32.vdst)?,
            Slot::ScalarVdst(_) => fields.vdst = fields.sdst.take().unwrap_or(VCC),
            Slot::Sdst(_) => fields.sdst = Some(fields.sdst.unwrap_or(VCC)),
            Slot::Src2(_) if implied_vcc_source => src[2] = VCC,
            Slot::Src2(_) => return Err(Refusal("no third source to give the VOP3 form")),
            _ => {}
        }
    }
    if !entry.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_))) {
        fields.sdst = None;
    }
    fields.src = src;
    fields.encode(equivalent)
}

/// A plain VOP1/VOP2/VOPC instruction (printed operands `slots`, literal `literal`) as its
/// VOP3 form.
pub(super) fn promote(
    slots: &[Slot],
    literal: Option<u32>,
    equivalent: O11,
    e32: E32,
    numbering: Numbering,
) -> Result<gfx11::Instruction, Refusal> {
    if slots.iter().any(|slot| matches!(slot, Slot::Imm)) {
        return Err(Refusal("a VOP2 constant operand (fmaak/fmamk) has no VOP3 form"));
    }
    let fields = Vop3 { src: [e32.src0, 256 + e32.vsrc1, 0], literal, ..Vop3::default() };
    vop3_of(slots, equivalent, e32, fields, numbering)
}

/// A VOP1/VOP2/VOPC instruction as written: its gfx11 encoding, first dword, printed operands,
/// and the word after it (a literal or a DPP word, `dpp` saying which).
pub(super) struct E32Form<'a> {
    pub encoding: E11,
    pub w0: u32,
    pub slots: &'a [Slot],
    pub literal: Option<u32>,
    /// The DPP word, if the instruction has one.
    pub dpp: Option<u32>,
}

/// The VOP1/VOP2/VOPC instruction `form` as gfx11's `equivalent` (laid out alike on all three
/// ISAs): renumbered, and promoted to VOP3 where gfx11 lacks the e32 form or where its e32 form
/// would read a 16-bit operand above v127 as a half register (a gfx11 VOP1/VOP2/VOPC 16-bit
/// operand names a half register: bit 7 of the VGPR number is the high half, RDNA3 ISA guide
/// "16-bit VGPRs"; gfx9's and gfx10's name the whole register's low half).
pub(super) fn vop_e32(
    form: &E32Form<'_>,
    equivalent: O11,
    numbering: Numbering,
) -> Result<gfx11::Instruction, Refusal> {
    let E32Form { encoding, w0, slots, literal, dpp } = *form;
    let fields = E32::of(w0, encoding == E11::Vopc, slots, dpp.is_some(), numbering)?;
    let Some(entry) = gfx11::entry_of(encoding, equivalent) else {
        return if dpp.is_some() {
            Err(Refusal("gfx11 has no DPP form of this operation"))
        } else {
            promote(slots, literal, equivalent, fields, numbering)
        };
    };
    if names_halves(entry) {
        let dpp_source = dpp.map_or(0, |word| word & 0xFF);
        let high = fields.vdst >= 128 && !fields.scalar_vdst
            || fields.vsrc1 >= 128
            || (fields.src0 >= 256 + 128)
            || (dpp.is_some() && dpp_source >= 128);
        if high {
            return if dpp.is_some() {
                Err(Refusal("a 16-bit DPP operand above v127 (gfx11's VOP2 would read a half register)"))
            } else {
                promote(slots, literal, equivalent, fields, numbering)
            };
        }
    }
    let src0 = if dpp.is_some() { w0 & 0x1FF } else { fields.src0 };
    let vdst = if fields.scalar_vdst { (numbering.scalar)(fields.vdst)? } else { fields.vdst };
    let out = match encoding {
        E11::Vopc => (w0 & 0xFE00_0000) | (w0 & 0x1FE00) | src0,
        _ => (w0 & 0xFE00_0000) | vdst << 17 | (w0 & 0x1FE00) | src0,
    };
    encode(encoding, equivalent, [out, dpp.or(literal).unwrap_or(0), 0])
}

/// `stand_in` (a gfx11 64-bit integer atomic with the operands of a float64 atomic gfx11 lacks:
/// gfx10's `*_fcmpswap_x2`/`fmin_x2`/`fmax_x2`, gfx90a's `*_add_f64`/`min_f64`/`max_f64`)
/// planned to run `op` on the 8-byte word instead.
pub(super) fn wide_atomic(stand_in: gfx11::Instruction, op: AtomicOp) -> Result<(gfx11::Instruction, Plan), Refusal> {
    match Plan::of(&stand_in) {
        Plan::Memory(mut access) => {
            access.operation = Operation::Atomic { op, wide: true };
            Ok((stand_in, Plan::Memory(access)))
        }
        _ => Err(Refusal("the stand-in does not plan as an atomic")),
    }
}
