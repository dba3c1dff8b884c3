//! A kernel as the interpreter runs it: its descriptor and its code, decoded once.

mod both_halves;
pub(super) mod from_gfx10;
pub(super) mod from_gfx12;
pub(super) mod from_gfx9;
mod reencode;

use super::memory_ops::Access;
use super::valu::VOp;
use super::{ExecError, Memory};
use crate::gfx11::{Encoding, Instruction, Opcode, decode};

/// The instruction set a kernel's code is written in. The descriptor does not say (AMDGPUUsage's
/// kernel descriptor has no ISA field; the code object's ELF header and the agent do), so the
/// caller names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// gfx11 (RDNA3), the interpreter's own.
    Gfx11,
    /// gfx10.3 (RDNA2): each instruction is translated to gfx11's (`decoded_kernel/from_gfx10.rs`).
    Gfx10_3,
    /// gfx9 (GCN5 and CDNA, wave64), for one processor: each instruction is translated to
    /// gfx11's (`decoded_kernel/from_gfx9.rs`).
    Gfx9(crate::gfx9::Processor),
    /// gfx12 (RDNA4: gfx1200, gfx1201): each instruction is translated to gfx11's
    /// (`decoded_kernel/from_gfx12.rs`).
    Gfx12,
}

impl Isa {
    /// Whether the dispatch gives the work-item ids packed in v0 (10 bits each) rather than in
    /// v0, v1 and v2: gfx11, gfx90a and gfx942 (LLVM's `FeaturePackedTID`; AMDGPUUsage, "VGPR
    /// Register Set Up Order for Compute Kernels").
    pub fn packed_work_item_ids(self) -> bool {
        match self {
            Isa::Gfx11 | Isa::Gfx12 => true,
            Isa::Gfx10_3 => false,
            Isa::Gfx9(processor) => processor.has_unified_registers(),
        }
    }

    /// Whether the workgroup ids are also in trap temporaries: gfx12's "architected SGPRs", X in
    /// `ttmp9`, Y and Z in `ttmp7`'s low and high halves (AMDGPUUsage, "Initial Kernel Execution
    /// State"; LLVM's `hasArchitectedSGPRs`), which gfx12 code reads instead of system SGPRs.
    pub fn architected_workgroup_ids(self) -> bool {
        self == Isa::Gfx12
    }
}

/// An instruction as the wave loop runs it: decoded (as gfx11, translated where the code is
/// gfx10.3), with its execution planned once.
pub(crate) struct Decoded {
    pub instruction: Instruction,
    pub plan: Plan,
    /// Bytes the instruction takes in the code as written: the next one is that far on (a
    /// translation may be longer or shorter than its gfx10 original).
    pub len: u8,
    /// The mnemonic of the gfx10 or gfx9 instruction this was translated from, which errors
    /// name.
    pub source: Option<&'static str>,
}

impl Decoded {
    /// A gfx11 instruction, planned.
    fn gfx11(instruction: Instruction) -> Decoded {
        Decoded { plan: Plan::of(&instruction), len: instruction.len() as u8, source: None, instruction }
    }

    /// The mnemonic of the code as written.
    pub fn mnemonic(&self) -> &'static str {
        self.source.unwrap_or(self.instruction.mnemonic())
    }

    /// `error`, naming the code as written where it names the instruction (a translated
    /// instruction's error would otherwise name its gfx11 translation); an error naming
    /// something else (a gfx9 V#'s format) keeps it.
    #[cold]
    pub fn named(&self, error: ExecError) -> ExecError {
        match error {
            ExecError::Unsupported { pc, mnemonic }
                if self.source.is_some() && mnemonic == self.instruction.mnemonic() =>
            {
                ExecError::Unsupported { pc, mnemonic: self.mnemonic() }
            }
            other => other,
        }
    }
}

/// What running an instruction needs beyond its words, worked out when the kernel is decoded.
pub(crate) enum Plan {
    /// Scalar ALU, branches, SMEM: their fields are read from the words as they run.
    Scalar,
    /// `s_getreg_b32` of a hardware register `hw_registers.rs` models, in the layout of the
    /// code's ISA family.
    HwReg(super::hw_registers::Read),
    Vector(VOp),
    /// VOPD's X and Y halves, or the low and high dwords of gfx90a's packed f32 arithmetic
    /// (`from_gfx9/vector.rs`, `packed_f32`): both read their sources before either writes.
    Dual(Box<(VOp, VOp)>),
    Memory(Access),
    /// gfx10's `v_dot2_i32_i16` (true: signed) and `v_dot2_u32_u16`, which gfx11 lacks: the
    /// operands of a gfx11 stand-in (`from_gfx10::dot2_16`).
    Dot2x16(Box<(VOp, bool)>),
    /// A gfx10 SDWA instruction with selects gfx11's VOP3 cannot make (`decoded_kernel/from_gfx10/sdwa.rs`).
    Sdwa(Box<from_gfx10::Sdwa>),
    /// A gfx9 operation with a 16-bit result, whose high half gfx9 zeroes: its gfx11 VOP3
    /// translation, then the destination's high half zeroed in the lanes EXEC enables
    /// (`from_gfx9::zero_high`).
    ZeroHigh(Box<VOp>),
    /// gfx90a's `v_pk_mov_b32`: the operands of a gfx11 stand-in and the op_sel bits picking
    /// each source's dword (`from_gfx9::pk_mov`).
    PkMov(Box<(VOp, u8)>),
    /// gfx942's `v_lshl_add_u64`: two stand-ins whose operands read the shift and value, and
    /// the addend (`from_gfx9/gfx942.rs`).
    ShiftAdd64(Box<(VOp, VOp)>),
    /// gfx9's `v_cmpx_*`: gfx11's `v_cmp_*` of the same condition, then its mask (VCC or sdst)
    /// copied to EXEC in the running half (`from_gfx9::mask_to_exec`).
    CmpxMask(Box<VOp>),
    /// gfx9's non-fused `v_mad_f32`, `v_mac_f32`, `v_madak_f32`, `v_madmk_f32` and (true)
    /// `v_mad_legacy_f32`: a gfx11 stand-in's operands (`valu::step_unfused`).
    Unfused(Box<(VOp, bool)>),
    /// gfx9 DPP gfx11's DPP16 lacks (whole-wave patterns) or with a 16-bit result: run once for
    /// the wave, src0 gathered into a shadow VGPR (`from_gfx9/dpp.rs`).
    WaveDpp(Box<from_gfx9::WaveDpp>),
    /// A gfx12 operation gfx11 lacks: its own step (`from_gfx12::step`).
    Gfx12(Box<from_gfx12::Step>),
    /// gfx9 CDNA's `v_mfma_*`: one matrix multiply-accumulate across the whole wave64 wave,
    /// run once, not per half (`interp/mfma.rs`; planned by `from_gfx9/mfma.rs`).
    Mfma(Box<super::mfma::Mfma>),
    /// gfx90a's and gfx942's loads and stores with AGPR data: the access on VGPR windows that
    /// exchange rows with the AGPRs around it (`from_gfx9/agpr_memory.rs`).
    AgprMemory(Box<from_gfx9::AgprMemory>),
    /// A wave64 per-half instruction whose low half's mask word (the SGPR named) is a scalar
    /// source of its high half: both halves run in one step, reading before that word is
    /// written (`decoded_kernel/both_halves.rs`).
    BothHalves(Box<(Decoded, u8)>),
    /// An instruction the interpreter does not execute: reaching it fails the wave, naming it.
    Unsupported,
}

impl Plan {
    pub(crate) fn of(instruction: &Instruction) -> Plan {
        let planned = match instruction.encoding {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => {
                VOp::plan(instruction).map(Plan::Vector)
            }
            Encoding::Vopd => super::valu::plan_dual(instruction).map(|pair| Plan::Dual(Box::new(pair))),
            Encoding::Flat
            | Encoding::Global
            | Encoding::Scratch
            | Encoding::Ds
            | Encoding::Mubuf
            | Encoding::Mtbuf => Access::plan(instruction).map(Plan::Memory),
            // gfx11's register layout; gfx9's `from_gfx9` plans with its own.
            Encoding::Sopk => Some(
                super::hw_registers::plan(instruction, super::hw_registers::Layout::Gfx11)
                    .map_or(Plan::Scalar, Plan::HwReg),
            ),
            _ => Some(Plan::Scalar),
        };
        planned.unwrap_or(Plan::Unsupported)
    }
}

/// The fields of the 64-byte kernel descriptor the interpreter reads (AMDGPUUsage, "Kernel
/// Descriptor", code object V3 and later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// Bytes of LDS the kernel itself uses (the packet may ask for more).
    pub group_segment_fixed_size: u32,
    /// Bytes of scratch per work-item.
    pub private_segment_fixed_size: u32,
    /// Byte offset from the descriptor to the kernel's first instruction.
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
}

impl KernelDescriptor {
    /// Parses the descriptor's bytes.
    pub fn parse(bytes: &[u8; 64]) -> KernelDescriptor {
        let u32_at = |offset: usize| u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernel_code_entry_byte_offset: i64::from_le_bytes(bytes[16..24].try_into().unwrap()),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16::from_le_bytes([bytes[56], bytes[57]]),
        }
    }

    /// VGPRs each lane holds: (`GRANULATED_WORKITEM_VGPR_COUNT` + 1) × the granule (rsrc1 bits
    /// 5:0; AMDGPUUsage: on GFX10 and GFX11 the granule is 8 for wave32 and 4 for wave64).
    pub fn vgprs(&self) -> usize {
        let granule = if self.wave32() { 8 } else { 4 };
        ((self.compute_pgm_rsrc1 & 0x3F) as usize + 1) * granule
    }

    /// `USER_SGPR_COUNT` (rsrc2 bits 5:1): the system SGPRs start after this many.
    pub fn user_sgpr_count(&self) -> u32 {
        (self.compute_pgm_rsrc2 >> 1) & 0x1F
    }

    /// Whether `ENABLE_WAVEFRONT_SIZE32` (kernel_code_properties bit 10) is set.
    pub fn wave32(&self) -> bool {
        self.kernel_code_properties & (1 << 10) != 0
    }
}

/// VGPRs each lane of a gfx9 `processor`'s kernel holds: gfx90a's and gfx942's granule is 8
/// (AMDGPUUsage, GRANULATED_WORKITEM_VGPR_COUNT: their VGPRs and AGPRs together), twice what
/// `KernelDescriptor::vgprs` counts for wave64.
fn gfx9_vgprs(descriptor: &KernelDescriptor, processor: crate::gfx9::Processor) -> usize {
    descriptor.vgprs() * if processor.has_unified_registers() { 2 } else { 1 }
}

/// Code longer than this is refused (a descriptor pointing into garbage would otherwise decode
/// until memory ends).
const MAX_CODE_BYTES: u64 = 1 << 20;

/// A kernel ready to run: its descriptor, and its instructions from the entry point to its
/// first `s_code_end` (or the first word that does not decode, which faults only if reached).
pub struct DecodedKernel {
    /// The descriptor's address (the packet's `kernel_object`).
    pub kernel_object: u64,
    pub descriptor: KernelDescriptor,
    /// The instruction set the code is written in, which also decides the work-item id VGPRs.
    pub isa: Isa,
    /// VGPRs each wave holds past the descriptor's: the SDWA plans' shadow registers.
    pub(crate) extra_vgprs: usize,
    /// The address of the first instruction.
    pub entry: u64,
    /// Decoded instructions indexed by (pc − entry) / 4; `None` inside a multi-dword
    /// instruction or past the decodable code.
    code: Vec<Option<Decoded>>,
    /// Why decoding stopped, if it was not `s_code_end`: reaching that pc reports it.
    stop: Option<(u64, ExecError)>,
    /// The native tier's code, compiled at the kernel's first native dispatch and freed with
    /// it (`native::compiled`); `Err` says why it cannot run natively.
    pub(crate) native: std::sync::OnceLock<Result<crate::compiled::NativeCode, &'static str>>,
}

impl DecodedKernel {
    /// Reads the descriptor at `kernel_object` and decodes the gfx11 code it points at.
    pub fn load(memory: &dyn Memory, kernel_object: u64) -> Result<DecodedKernel, ExecError> {
        DecodedKernel::load_for(memory, kernel_object, Isa::Gfx11)
    }

    /// Reads the descriptor at `kernel_object` and decodes the code it points at as `isa`'s:
    /// gfx10.3 code is translated to gfx11 instruction by instruction (an instruction with no
    /// translation fails the wave only when reached, naming it).
    pub fn load_for(memory: &dyn Memory, kernel_object: u64, isa: Isa) -> Result<DecodedKernel, ExecError> {
        let mut bytes = [0u8; 64];
        memory.read(kernel_object, &mut bytes).map_err(|fault| ExecError::Fault { pc: kernel_object, fault })?;
        let descriptor = KernelDescriptor::parse(&bytes);
        // Whether gfx9 code names an AGPR: the wave then holds 256 AGPR rows past its VGPRs.
        let agprs = core::cell::Cell::new(false);
        // One instruction at `words`' start, decoded and planned; `None` at `s_code_end`.
        let decode_one = |words: &[u32], pc: u64| -> Result<Option<Decoded>, crate::DecodeError> {
            match isa {
                Isa::Gfx11 => decode(words, pc)
                    .map(|instruction| (instruction.opcode() != Opcode::SCodeEnd).then(|| Decoded::gfx11(instruction))),
                Isa::Gfx10_3 => crate::gfx10::decode(words, pc).map(|instruction| {
                    (instruction.opcode() != crate::gfx10::Opcode::SCodeEnd)
                        .then(|| from_gfx10::decoded(&instruction, descriptor.vgprs() as u16))
                }),
                Isa::Gfx12 => crate::gfx12::decode(words, pc).map(|instruction| {
                    (instruction.opcode() != crate::gfx12::Opcode::SCodeEnd)
                        .then(|| from_gfx12::decoded(&instruction, descriptor.vgprs() as u16))
                }),
                // gfx9 has no `s_code_end`: decoding goes on to the end of the code's memory.
                Isa::Gfx9(processor) => crate::gfx9::decode(words, pc, processor).map(|instruction| {
                    agprs.set(agprs.get() || from_gfx9::uses_agprs(&instruction));
                    Some(from_gfx9::decoded(&instruction, gfx9_vgprs(&descriptor, processor) as u16))
                }),
            }
        };
        let entry = kernel_object.wrapping_add_signed(descriptor.kernel_code_entry_byte_offset);
        let mut words = Vec::new();
        let mut chunk = [0u8; 256];
        let mut code = Vec::new();
        let mut stop = None;
        let mut exhausted = false;
        'read: loop {
            let offset = words.len() as u64 * 4;
            if offset >= MAX_CODE_BYTES {
                exhausted = true;
            } else if memory.read(entry + offset, &mut chunk).is_ok() {
                words.extend(chunk.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())));
            } else {
                // The code ends where the memory does; a word past it faults only if reached.
                let mut one = [0u8; 4];
                while words.len() < (offset as usize + chunk.len()) / 4
                    && memory.read(entry + words.len() as u64 * 4, &mut one).is_ok()
                {
                    words.push(u32::from_le_bytes(one));
                }
                exhausted = true;
            }
            while code.len() < words.len() {
                let index = code.len();
                let pc = entry + index as u64 * 4;
                match decode_one(&words[index..], pc) {
                    Ok(None) => break 'read,
                    Ok(Some(decoded)) => {
                        let dwords = decoded.len / 4;
                        code.push(Some(decoded));
                        code.extend((1..dwords).map(|_| None));
                    }
                    Err(crate::DecodeError::Truncated { .. }) if !exhausted => break,
                    Err(error) => {
                        stop = Some((pc, error.into()));
                        break 'read;
                    }
                }
            }
            if exhausted {
                break;
            }
        }
        code.truncate(words.len());
        if !descriptor.wave32() {
            both_halves::guard(&mut code);
        }
        // gfx12's offset steps use the first two of the same shadow rows.
        let sdwa = code.iter().flatten().any(|decoded| match &decoded.plan {
            Plan::Sdwa(_) | Plan::WaveDpp(_) => true,
            Plan::Gfx12(own) => own.uses_shadow(),
            _ => false,
        });
        let mut extra_vgprs = if sdwa { from_gfx10::SHADOW_VGPRS } else { 0 };
        if let Isa::Gfx9(processor) = isa {
            extra_vgprs += gfx9_vgprs(&descriptor, processor) - descriptor.vgprs();
            if agprs.get() {
                // The AGPR rows follow the shadow rows (`from_gfx9::agpr_row`), which are then
                // reserved whether or not SDWA uses them.
                let rows = from_gfx9::agpr_row(gfx9_vgprs(&descriptor, processor) as u16, 0) as usize;
                extra_vgprs = rows + from_gfx9::AGPRS - descriptor.vgprs();
            }
        }
        Ok(DecodedKernel { kernel_object, descriptor, isa, extra_vgprs, entry, code, stop, native: Default::default() })
    }

    /// The instruction at `pc`.
    pub(crate) fn fetch(&self, pc: u64) -> Result<&Decoded, ExecError> {
        let index = pc.wrapping_sub(self.entry) / 4;
        if pc.is_multiple_of(4)
            && let Some(Some(instruction)) = self.code.get(index as usize)
        {
            return Ok(instruction);
        }
        match &self.stop {
            Some((stop, error)) if *stop == pc => Err(error.clone()),
            _ => Err(ExecError::PcOutOfRange { pc }),
        }
    }

    /// Words of decoded code: instructions start at word indices below this.
    pub(crate) fn words(&self) -> usize {
        self.code.len()
    }

    /// The instruction starting at word `index` (`None` inside a multi-dword instruction).
    pub(crate) fn at(&self, index: usize) -> Option<&Decoded> {
        self.code.get(index).and_then(Option::as_ref)
    }

    /// Instructions decoded.
    pub fn instructions(&self) -> usize {
        self.code.iter().flatten().count()
    }
}
