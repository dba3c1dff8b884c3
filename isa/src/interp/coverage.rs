//! Which operations the interpreter runs, enumerated from the decoders' tables rather than from the
//! kernels at hand: every opcode of every encoding of gfx11 and gfx10.3 is encoded once with plain
//! register operands, decoded, planned as decoding a kernel plans it (gfx10.3 through its
//! translation to gfx11), and, for the scalar encodings, whose plan is made as they run, stepped
//! once on a blank wave. An operation runs if that reaches its semantics; it does not if the
//! interpreter answers [`ExecError::Unsupported`].
//!
//! [`execute`] runs one instruction on given registers, which is how `isa/tests/coverage.rs`
//! checks each operation family against a reference computed on the host, and holds every
//! operation to its status in `isa/coverage/`.

use super::decoded_kernel::{Decoded, Plan, from_gfx9, from_gfx10, from_gfx12};
use super::wave::{Flow, LANES, Wave};
use super::{AtomicOp, ExecError, Isa, Memory, MemoryFault};
use crate::{gfx9, gfx10, gfx11, gfx12};

/// One operation of an instruction set, as the enumeration found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The mnemonic as LLVM prints it (`_e32`/`_e64`/`_sdwa`/`_dpp` included).
    pub mnemonic: &'static str,
    /// The encoding, as the decoder names it (`Vop3`, `Vop1Sdwa`, ...).
    pub encoding: String,
    /// Whether the interpreter runs it.
    pub runs: bool,
    /// The words it was tried as: destinations v4 or s4 (VOPD X: v8), sources v0, v2, v4 (or
    /// s0, s2), memory addressed by v0 with data in v1 and v2; gfx10.3's SDWA forms select whole
    /// dwords and its DPP forms the identity `quad_perm`.
    pub words: [u32; 3],
    /// Why the enumeration could not try it (its words did not decode as itself), if so.
    pub probe_error: Option<String>,
    /// Why the instruction has no gfx11 translation, for an ISA that runs translated (gfx9),
    /// if so.
    pub refusal: Option<&'static str>,
}

/// Every operation of `isa`'s decoder tables, in table order, each tried once.
pub fn operations(isa: Isa) -> Vec<Operation> {
    match isa {
        Isa::Gfx11 => gfx11_operations(),
        Isa::Gfx10_3 => gfx10_operations(),
        Isa::Gfx9(processor) => gfx9_operations(processor),
        Isa::Gfx12 => gfx12_operations(),
    }
}

/// The mnemonics of every instruction in a code object's `.text`, decoded as `isa`'s.
pub fn mnemonics_in(text: &[u8], isa: Isa) -> Vec<&'static str> {
    let mut found = Vec::new();
    match isa {
        Isa::Gfx11 => found.extend(gfx11::decode_all(text, 0).flatten().flat_map(|(_, instruction)| {
            [Some(instruction.mnemonic()), instruction.dual.map(|entry| entry.mnemonic)].into_iter().flatten()
        })),
        Isa::Gfx10_3 => {
            found.extend(gfx10::decode_all(text, 0).flatten().map(|(_, instruction)| instruction.entry.mnemonic))
        }
        Isa::Gfx9(processor) => found
            .extend(gfx9::decode_all(text, 0, processor).flatten().map(|(_, instruction)| instruction.entry.mnemonic)),
        Isa::Gfx12 => found.extend(gfx12::decode_all(text, 0).flatten().flat_map(|(_, instruction)| {
            [Some(instruction.mnemonic()), instruction.dual.map(|entry| entry.mnemonic)].into_iter().flatten()
        })),
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// A wave32 wave's registers, before and after [`execute`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registers {
    /// The scalar register file by operand number: s0–s105, `vcc_lo` 106, `vcc_hi` 107, `m0`
    /// 125, `exec_lo` 126.
    pub sgpr: [u32; 128],
    /// VGPR rows, one value per lane.
    pub vgpr: Vec<[u32; LANES]>,
    /// A wave64 wave's lanes 32–63, row for row with `vgpr`; empty for a wave32 wave
    /// ([`crate::run::run_code`] runs a wave64 wave where it is not).
    pub high_vgpr: Vec<[u32; LANES]>,
    pub scc: bool,
    /// The MODE register (round and denormal fields, DX10_CLAMP, IEEE).
    pub mode: u32,
    /// Each lane's private (scratch) bytes, `private_bytes` a lane, lane after lane (64 lanes'
    /// for a wave64 wave).
    pub scratch: Vec<u8>,
    pub private_bytes: usize,
}

impl Registers {
    /// `vgprs` VGPRs and every SGPR 0, EXEC all 32 lanes, MODE as a kernel starts (round to
    /// nearest even, denormals kept, IEEE).
    pub fn new(vgprs: usize) -> Registers {
        let mut sgpr = [0; 128];
        sgpr[super::wave::EXEC as usize] = u32::MAX;
        Registers {
            sgpr,
            vgpr: vec![[0; LANES]; vgprs],
            high_vgpr: Vec::new(),
            scc: false,
            mode: super::wave::MODE_IEEE_FLOAT | 0x300,
            scratch: Vec::new(),
            private_bytes: 0,
        }
    }

    /// As [`Registers::new`], for a wave64 wave: `vgprs` VGPRs in each half, EXEC all 64 lanes.
    pub fn wave64(vgprs: usize) -> Registers {
        let mut registers = Registers::new(vgprs);
        registers.sgpr[super::wave::EXEC as usize + 1] = u32::MAX;
        registers.high_vgpr = vec![[0; LANES]; vgprs];
        registers
    }
}

/// Where a wave goes after one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// On to the following instruction.
    Following,
    /// To this address (a branch taken, `s_setpc`, `s_swappc`, `s_call`).
    Jump(u64),
    /// The wave ended (`s_endpgm`).
    End,
    /// The wave waits at `s_barrier`.
    Barrier,
    /// The wave yields to its workgroup's others (`s_sleep`).
    Sleep,
}

/// What the agent's clock reads during [`execute`] (`s_memrealtime`, `s_sendmsg_rtn_b64`,
/// `s_getreg_b32 hwreg(HW_REG_SHADER_CYCLES)`'s low 20 bits).
pub const CLOCK: u64 = 0x0123_4567_89AB_CDEF;

/// The address [`execute`] runs its instruction at (a branch's target is relative to it).
pub const PC: u64 = 0x1000;

/// Runs the instruction at the start of `words`, `isa`'s code, once on `registers` in wave32
/// at [`PC`], with `memory` and the workgroup's `lds`: decoded and planned as decoding a kernel does
/// it (gfx10.3 translated to gfx11) and stepped as the wave loop steps it. Returns where the wave
/// would go next. On an error the registers hold what the instruction wrote before it failed.
pub fn execute(
    isa: Isa,
    words: &[u32],
    registers: &mut Registers,
    memory: &dyn Memory,
    lds: &mut [u8],
) -> Result<Next, ExecError> {
    let decoded = match isa {
        Isa::Gfx11 => {
            let instruction = gfx11::decode(words, 0)?;
            Decoded { plan: Plan::of(&instruction), len: instruction.len() as u8, source: None, instruction }
        }
        Isa::Gfx10_3 => from_gfx10::decoded(&gfx10::decode(words, 0)?, registers.vgpr.len() as u16),
        Isa::Gfx9(processor) => from_gfx9::decoded(&gfx9::decode(words, 0, processor)?, registers.vgpr.len() as u16),
        Isa::Gfx12 => from_gfx12::decoded(&gfx12::decode(words, 0)?, registers.vgpr.len() as u16),
    };
    let mut wave = Wave::blank();
    wave.sgpr = registers.sgpr;
    wave.vgpr = core::mem::take(&mut registers.vgpr);
    // The SDWA plans' shadow registers lie past the kernel's.
    wave.vgpr.resize(wave.vgpr.len() + from_gfx10::SHADOW_VGPRS, [0; LANES]);
    wave.scc = registers.scc;
    wave.mode = registers.mode;
    wave.private_bytes = registers.private_bytes;
    wave.scratch = core::mem::take(&mut registers.scratch);
    wave.scratch.resize(registers.private_bytes * LANES, 0);
    let result = super::launch::step::<dyn Memory, false>(memory, &mut wave, &decoded, lds);
    wave.vgpr.truncate(wave.vgpr.len() - from_gfx10::SHADOW_VGPRS);
    registers.sgpr = wave.sgpr;
    registers.vgpr = wave.vgpr;
    registers.scc = wave.scc;
    registers.mode = wave.mode;
    registers.scratch = core::mem::take(&mut wave.scratch);
    result.map(|flow| match flow {
        Flow::Next => Next::Following,
        Flow::Jump(target) => Next::Jump(target),
        Flow::End => Next::End,
        Flow::Barrier => Next::Barrier,
        Flow::Sleep => Next::Sleep,
    })
}

/// A VGPR as a 9-bit source operand.
const fn v(register: u32) -> u32 {
    256 + register
}

/// Words of a gfx11 instruction of `encoding` with opcode field `op`: destinations v4/s4 (v8 for
/// VOPD's X), sources v0, v2, v4 or s0, s2, memory through v0 with data in v1, v2. `dual` is a
/// VOPD pair's Y opcode.
fn gfx11_words(encoding: gfx11::Encoding, op: u32, dual: u32, mnemonic: &str) -> [u32; 3] {
    use gfx11::Encoding::*;
    // s_sendmsg_rtn: MSG_RTN_GET_REALTIME; s_setreg/s_getreg: HW_REG_MODE, all 32 bits.
    let ssrc0 = if mnemonic.starts_with("s_sendmsg_rtn") { 131 } else { 0 };
    let simm = if mnemonic.contains("reg_") { 1 | 31 << 11 } else { 0 };
    match encoding {
        Sop2 => [0x8000_0000 | op << 23 | 4 << 16 | 2 << 8, 0, 0],
        Sopk => [0xB000_0000 | op << 23 | 4 << 16 | simm, 0, 0],
        Sop1 => [0xBE80_0000 | 4 << 16 | op << 8 | ssrc0, 0, 0],
        Sopc => [0xBF00_0000 | op << 16 | 2 << 8, 0, 0],
        Sopp => [0xBF80_0000 | op << 16, 0, 0],
        Smem => [0xF400_0000 | op << 18 | 8 << 6, 124 << 25, 0],
        Vop2 => [op << 25 | 4 << 17 | 2 << 9 | v(0), 0, 0],
        Vop1 => [0x7E00_0000 | 4 << 17 | op << 9 | v(0), 0, 0],
        Vopc => [0x7C00_0000 | op << 17 | 2 << 9 | v(0), 0, 0],
        Vop3 => [0xD400_0000 | op << 16 | 4, v(0) | v(2) << 9 | v(4) << 18, 0],
        Vop3p => [0xCC00_0000 | op << 16 | 4 | 1 << 14, v(0) | v(2) << 9 | v(4) << 18 | 3 << 27, 0],
        Vopd => [0xC800_0000 | op << 22 | dual << 17 | 2 << 9 | v(0), 8 << 24 | 4 << 17 | 3 << 9 | v(1), 0],
        Ds => [0xD800_0000 | op << 18, 1 << 8 | 2 << 16 | 4 << 24, 0],
        Flat => [0xDC00_0000 | op << 18, 1 << 8 | 0x7C << 16 | 4 << 24, 0],
        Scratch => [0xDC00_0000 | op << 18 | 1 << 16, 1 << 8 | 0x7C << 16 | 1 << 23 | 4 << 24, 0],
        Global => [0xDC00_0000 | op << 18 | 2 << 16, 1 << 8 | 0x7C << 16 | 4 << 24, 0],
        Mubuf => [0xE000_0000 | op << 18, 1 << 8 | 0x80 << 24, 0],
        Mtbuf => [0xE800_0000 | op << 15 | 1 << 19, 1 << 8 | 0x80 << 24, 0],
    }
}

fn gfx11_tables() -> [(gfx11::Encoding, &'static [gfx11::Entry]); 18] {
    use gfx11::Encoding::*;
    use gfx11::table::*;
    [
        (Sop2, SOP2),
        (Sopk, SOPK),
        (Sop1, SOP1),
        (Sopc, SOPC),
        (Sopp, SOPP),
        (Smem, SMEM),
        (Vop2, VOP2),
        (Vop1, VOP1),
        (Vopc, VOPC),
        (Vop3, VOP3),
        (Vop3p, VOP3P),
        (Vopd, VOPDX),
        (Ds, DS),
        (Flat, FLAT),
        (Scratch, SCRATCH),
        (Global, GLOBAL),
        (Mubuf, MUBUF),
        (Mtbuf, MTBUF),
    ]
}

fn gfx11_operations() -> Vec<Operation> {
    let mut operations = Vec::new();
    // VOPD pairs each table's operation with `v_dual_mov_b32` on the other side.
    let mov_x = gfx11::table::VOPDX.iter().find(|entry| entry.mnemonic == "v_dual_mov_b32").map_or(0, |entry| entry.op);
    let mov_y = gfx11::table::VOPDY.iter().find(|entry| entry.mnemonic == "v_dual_mov_b32").map_or(0, |entry| entry.op);
    let mut tried = |encoding: gfx11::Encoding, name: &str, entry: &'static gfx11::Entry, op: u32, dual: u32| {
        let words = gfx11_words(encoding, op, dual, entry.mnemonic);
        let (runs, probe_error) = match gfx11::decode(&words, 0) {
            Ok(instruction)
                if (instruction.entry.mnemonic == entry.mnemonic
                    || instruction.dual.is_some_and(|dual| dual.mnemonic == entry.mnemonic)) =>
            {
                let decoded =
                    Decoded { plan: Plan::of(&instruction), len: instruction.len() as u8, source: None, instruction };
                (runs(&decoded), None)
            }
            Ok(instruction) => (false, Some(format!("the words decode as {}", instruction.mnemonic()))),
            Err(error) => (false, Some(error.to_string())),
        };
        let operation =
            Operation { mnemonic: entry.mnemonic, encoding: name.to_owned(), runs, words, probe_error, refusal: None };
        operations.push(operation);
    };
    for (encoding, table) in gfx11_tables() {
        for entry in table {
            tried(encoding, &format!("{encoding:?}"), entry, entry.op as u32, mov_y as u32);
        }
    }
    for entry in gfx11::table::VOPDY {
        tried(gfx11::Encoding::Vopd, "VopdY", entry, mov_x as u32, entry.op as u32);
    }
    operations
}

/// Words of a gfx12 instruction: gfx11's where the layouts agree ([`gfx11_words`]), else the
/// RDNA4 ISA guide's (`gfx12/decode.rs`), with the same operands: SMEM into s8 from s[0:1],
/// VFLAT/VSCRATCH/VGLOBAL and VBUFFER through v0 (scratch's SVE set, no scalar base) with data
/// in v1 and v4's destination, VBUFFER's resource s[0:3] (a typed one's format the default).
fn gfx12_words(encoding: gfx11::Encoding, op: u32, dual: u32, mnemonic: &str) -> [u32; 3] {
    use gfx11::Encoding::*;
    match encoding {
        Smem => [0xF400_0000 | op << 13 | 8 << 6, 124 << 25, 0],
        Flat => [0xEC00_0000 | op << 14 | 0x7C, 4 | 1 << 23, 0],
        Scratch => [0xED00_0000 | op << 14 | 0x7C, 4 | 1 << 17 | 1 << 23, 0],
        Global => [0xEE00_0000 | op << 14 | 0x7C, 4 | 1 << 23, 0],
        Mubuf | Mtbuf => [0xC400_0000 | op << 14 | 0x7C, 1 | 1 << 23, 0],
        _ => gfx11_words(encoding, op, dual, mnemonic),
    }
}

fn gfx12_operations() -> Vec<Operation> {
    use gfx11::Encoding::*;
    use gfx12::table::*;
    let tables: [(gfx11::Encoding, &'static [gfx12::Entry]); 17] = [
        (Sop2, SOP2),
        (Sopk, SOPK),
        (Sop1, SOP1),
        (Sopc, SOPC),
        (Sopp, SOPP),
        (Smem, SMEM),
        (Vop2, VOP2),
        (Vop1, VOP1),
        (Vopc, VOPC),
        (Vop3, VOP3),
        (Vop3p, VOP3P),
        (Vopd, VOPDX),
        (Ds, DS),
        (Flat, FLAT),
        (Scratch, SCRATCH),
        (Global, GLOBAL),
        (Mubuf, VBUFFER),
    ];
    let mov =
        |table: &[gfx12::Entry]| table.iter().find(|entry| entry.mnemonic == "v_dual_mov_b32").map_or(0, |e| e.op);
    let (mov_x, mov_y) = (mov(VOPDX) as u32, mov(VOPDY) as u32);
    let mut operations = Vec::new();
    let mut tried = |encoding: gfx11::Encoding, name: &str, entry: &'static gfx12::Entry, op: u32, dual: u32| {
        let words = gfx12_words(encoding, op, dual, entry.mnemonic);
        let (runs, probe_error, refusal) = match gfx12::decode(&words, 0) {
            Ok(instruction)
                if (instruction.entry.mnemonic == entry.mnemonic
                    || instruction.dual.is_some_and(|dual| dual.mnemonic == entry.mnemonic)) =>
            {
                let decoded = from_gfx12::decoded(&instruction, 16);
                let refusal = match decoded.plan {
                    Plan::Unsupported => from_gfx12::refusal(&instruction),
                    _ => None,
                };
                (runs(&decoded), None, refusal)
            }
            Ok(instruction) => (false, Some(format!("the words decode as {}", instruction.mnemonic())), None),
            Err(error) => (false, Some(error.to_string()), None),
        };
        operations.push(Operation {
            mnemonic: entry.mnemonic,
            encoding: name.to_owned(),
            runs,
            words,
            probe_error,
            refusal,
        });
    };
    for (encoding, table) in tables {
        for entry in table {
            tried(encoding, &format!("{encoding:?}"), entry, entry.op as u32, mov_y);
        }
    }
    for entry in VOPDY {
        tried(Vopd, "VopdY", entry, mov_x, entry.op as u32);
    }
    operations
}

/// The fields gfx10.3's and gfx9's probe words share (the two lay them out alike).
struct ProbeFields {
    /// SOPK/SOPP's immediate: s_setreg/s_getreg's HW_REG_MODE, all 32 bits; s_sendmsg's
    /// MSG_INTERRUPT, the one message gfx11 numbers the same.
    simm: u32,
    /// VOP1/VOP2/VOPC's src0: v0, or the SDWA or DPP marker.
    marker: u32,
    /// The SDWA or DPP word: v0, every select DWORD; quad_perm identity, all rows and banks.
    word: u32,
}

/// [`ProbeFields`] of a row of `extension` ("", "Sdwa" or "Dpp") named `mnemonic`.
fn probe_fields(extension: &str, mnemonic: &str) -> ProbeFields {
    let simm = match mnemonic {
        _ if mnemonic.contains("reg_") => 1 | 31 << 11,
        "s_sendmsg" => 1,
        _ => 0,
    };
    let (marker, word) = match extension {
        "Sdwa" => (249, 0x0606_0600),
        "Dpp" => (250, 0xFF00_E400),
        _ => (v(0), 0),
    };
    ProbeFields { simm, marker, word }
}

/// The rows the gfx10.3 and gfx9 enumerations walk, as (encoding, extension, table), from
/// `$isa`'s table module: the same list for both, with `$isa`'s own encodings (`$extra`) after
/// MUBUF's.
macro_rules! probed_tables {
    ($isa:ident $(, $extra:ident: $table:ident)*) => {{
        use $isa::Encoding::*;
        use $isa::table::*;
        [
            (Sop2, "", SOP2),
            (Sopk, "", SOPK),
            (Sop1, "", SOP1),
            (Sopc, "", SOPC),
            (Sopp, "", SOPP),
            (Smem, "", SMEM),
            (Vop2, "", VOP2),
            (Vop1, "", VOP1),
            (Vopc, "", VOPC),
            (Vop3, "", VOP3),
            (Vop3p, "", VOP3P),
            (Ds, "", DS),
            (Flat, "", FLAT),
            (Scratch, "", SCRATCH),
            (Global, "", GLOBAL),
            (Mubuf, "", MUBUF),
            $(($extra, "", $table),)*
            (Vop1, "Sdwa", VOP1_SDWA),
            (Vop2, "Sdwa", VOP2_SDWA),
            (Vopc, "Sdwa", VOPC_SDWA),
            (Vop1, "Dpp", VOP1_DPP),
            (Vop2, "Dpp", VOP2_DPP),
        ]
    }};
}

/// Words of a gfx10.3 instruction (RDNA2 ISA guide's encodings; the operands as for gfx11).
fn gfx10_words(encoding: gfx10::Encoding, extension: &str, op: u32, mnemonic: &str) -> [u32; 3] {
    use gfx10::Encoding::*;
    let ProbeFields { simm, marker, word } = probe_fields(extension, mnemonic);
    match encoding {
        Sop2 => [0x8000_0000 | op << 23 | 4 << 16 | 2 << 8, 0, 0],
        Sopk => [0xB000_0000 | op << 23 | 4 << 16 | simm, 0, 0],
        Sop1 => [0xBE80_0000 | 4 << 16 | op << 8, 0, 0],
        Sopc => [0xBF00_0000 | op << 16 | 2 << 8, 0, 0],
        Sopp => [0xBF80_0000 | op << 16 | simm, 0, 0],
        Smem => [0xF400_0000 | op << 18 | 8 << 6, 124 << 25, 0],
        Vop2 => [op << 25 | 4 << 17 | 2 << 9 | marker, word, 0],
        Vop1 => [0x7E00_0000 | 4 << 17 | op << 9 | marker, word, 0],
        Vopc => [0x7C00_0000 | op << 17 | 2 << 9 | marker, word, 0],
        Vop3 => [0xD400_0000 | op << 16 | 4, v(0) | v(2) << 9 | v(4) << 18, 0],
        Vop3p => [0xCC00_0000 | op << 16 | 4 | 1 << 14, v(0) | v(2) << 9 | v(4) << 18 | 3 << 27, 0],
        Ds => [0xD800_0000 | op << 18, 1 << 8 | 2 << 16 | 4 << 24, 0],
        Flat => [0xDC00_0000 | op << 18, 1 << 8 | 0x7D << 16 | 4 << 24, 0],
        Scratch => [0xDC00_0000 | op << 18 | 1 << 14, 1 << 8 | 0x7D << 16 | 4 << 24, 0],
        Global => [0xDC00_0000 | op << 18 | 2 << 14, 1 << 8 | 0x7D << 16 | 4 << 24, 0],
        Mubuf => [0xE000_0000 | (op & 0x7F) << 18 | (op >> 7) << 25, 1 << 8 | 0x80 << 24, 0],
    }
}

fn gfx10_operations() -> Vec<Operation> {
    let tables = probed_tables!(gfx10);
    let mut operations = Vec::new();
    for (encoding, extension, table) in tables {
        for entry in table {
            let words = gfx10_words(encoding, extension, entry.op as u32, entry.mnemonic);
            let (runs, probe_error) = match gfx10::decode(&words, 0) {
                Ok(instruction) if instruction.entry.mnemonic == entry.mnemonic => {
                    (runs(&from_gfx10::decoded(&instruction, 16)), None)
                }
                Ok(instruction) => (false, Some(format!("the words decode as {}", instruction.entry.mnemonic))),
                Err(error) => (false, Some(error.to_string())),
            };
            let name = format!("{encoding:?}{extension}");
            operations.push(Operation {
                mnemonic: entry.mnemonic,
                encoding: name,
                runs,
                words,
                probe_error,
                refusal: None,
            });
        }
    }
    operations
}

/// Words of a gfx9 instruction (Vega ISA guide's encodings, as `gfx9/decode.rs` reads them;
/// the operands as for gfx11, `off` for FLAT's saddr and an immediate SMEM offset).
fn gfx9_words(encoding: gfx9::Encoding, extension: &str, op: u32, mnemonic: &str) -> [u32; 3] {
    use gfx9::Encoding::*;
    let ProbeFields { simm, marker, word } = probe_fields(extension, mnemonic);
    // Every VGPR operand even, as gfx90a's 64-bit tuples must be (`from_gfx9::odd_tuple`).
    let memory = 2 << 8 | 0x7F << 16 | 4 << 24;
    match encoding {
        Sop2 => [0x8000_0000 | op << 23 | 4 << 16 | 2 << 8, 0, 0],
        Sopk => [0xB000_0000 | op << 23 | 4 << 16 | simm, 0, 0],
        Sop1 => [0xBE80_0000 | 4 << 16 | op << 8, 0, 0],
        Sopc => [0xBF00_0000 | op << 16 | 2 << 8, 0, 0],
        Sopp => [0xBF80_0000 | op << 16 | simm, 0, 0],
        Smem => [0xC000_0000 | op << 18 | 1 << 17 | 8 << 6, 0, 0],
        Vop2 => [op << 25 | 4 << 17 | 2 << 9 | marker, word, 0],
        Vop1 => [0x7E00_0000 | 4 << 17 | op << 9 | marker, word, 0],
        Vopc => [0x7C00_0000 | op << 17 | 2 << 9 | marker, word, 0],
        Vop3 => [0xD000_0000 | op << 16 | 4, v(0) | v(2) << 9 | v(4) << 18, 0],
        // MFMA's bits 14:8 and 63:59 are cbsz, abid, acc_cd, the acc bits and blgp, not op_sel_hi
        // (MI200 ISA guide, "VOP3P-MAI"): its probe sets none of them.
        Vop3p if mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac") => {
            [0xD380_0000 | op << 16 | 4, v(0) | v(2) << 9 | v(4) << 18, 0]
        }
        Vop3p => [0xD380_0000 | op << 16 | 4 | 1 << 14, v(0) | v(2) << 9 | v(4) << 18 | 3 << 27, 0],
        Ds => [0xD800_0000 | op << 17, 2 << 8 | 4 << 16 | 6 << 24, 0],
        Flat => [0xDC00_0000 | op << 18, memory, 0],
        Scratch => [0xDC00_0000 | op << 18 | 1 << 14, memory, 0],
        Global => [0xDC00_0000 | op << 18 | 2 << 14, memory, 0],
        Mubuf => [0xE000_0000 | op << 18, 2 << 8 | 0x80 << 24, 0],
        Mtbuf => [0xE800_0000 | op << 15 | 1 << 19, 2 << 8 | 0x80 << 24, 0],
    }
}

/// Why the gfx9 `instruction` has no gfx11 translation or plan (and fails the wave when
/// reached), or `None` where it runs translated.
pub fn gfx9_refusal(instruction: &gfx9::Instruction) -> Option<&'static str> {
    from_gfx9::refusal(instruction)
}

/// Every row of the gfx9 table that `processor` has, tried once: decoded, translated to gfx11
/// (`refusal` says why not) and, translated, run as [`runs`] runs it.
fn gfx9_operations(processor: gfx9::Processor) -> Vec<Operation> {
    let tables = probed_tables!(gfx9, Mtbuf: MTBUF);
    let mut operations = Vec::new();
    for (encoding, extension, table) in tables {
        for entry in table.iter().filter(|entry| entry.processors & processor.bit() != 0) {
            let mut words = gfx9_words(encoding, extension, entry.op as u32, entry.mnemonic);
            if extension == "Dpp"
                && entry
                    .slots
                    .iter()
                    .any(|slot| matches!(slot, gfx9::Slot::Vdst(2) | gfx9::Slot::Src0(2) | gfx9::Slot::Src1(2)))
            {
                // 64-bit ("DP ALU") DPP takes only row_newbcast (`gfx9/decode.rs`): row_newbcast:1.
                words[1] = 0xFF01_5100;
            }
            let (runs, probe_error, refusal) = match gfx9::decode(&words, 0, processor) {
                Ok(instruction) if instruction.entry.mnemonic == entry.mnemonic => {
                    let refusal = gfx9_refusal(&instruction);
                    (runs(&from_gfx9::decoded(&instruction, 16)), None, refusal)
                }
                Ok(instruction) => (false, Some(format!("the words decode as {}", instruction.entry.mnemonic)), None),
                Err(error) => (false, Some(error.to_string()), None),
            };
            let name = format!("{encoding:?}{extension}");
            operations.push(Operation { mnemonic: entry.mnemonic, encoding: name, runs, words, probe_error, refusal });
        }
    }
    operations
}

/// Whether `decoded` runs: stepped once on a blank wave (all registers 0, every lane active) with
/// nothing mapped, the interpreter does not refuse it (a fault, a trap or a jump is its
/// semantics). A plan alone is not enough: a planned operation may still have no arithmetic.
fn runs(decoded: &Decoded) -> bool {
    if matches!(decoded.plan, Plan::Unsupported) {
        return false;
    }
    // Wave32, then wave64 (`v_permlane64_b32` reaches across a wave64 wave's halves).
    [false, true].into_iter().any(|wide| {
        let mut wave = Wave::blank();
        wave.vgpr.resize(wave.vgpr.len() + from_gfx10::SHADOW_VGPRS, [0; LANES]);
        if wide {
            wave.wide = true;
            wave.other = super::wave::Half { vgpr: wave.vgpr.clone(), scratch: Vec::new() };
            wave.write_sgpr(super::wave::EXEC + 1, u32::MAX);
        }
        // A typed MUBUF access takes its format from the V# (s[0:3], word 3 bits 18:12): the
        // first unpacked one, so the probe's V# is not BUF_FMT_INVALID.
        let format = (1..128).find(|&number| gfx11::buffer_format(number).is_some_and(|format| !format.packed));
        wave.write_sgpr(3, format.unwrap_or(0) << 12);
        let mut lds = [0u8; 64];
        let result = super::launch::step::<Unmapped, false>(&Unmapped, &mut wave, decoded, &mut lds);
        !matches!(result, Err(ExecError::Unsupported { .. }))
    })
}

/// Memory with nothing mapped: every access faults (for trying instructions that need none).
pub struct Unmapped;

impl Memory for Unmapped {
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        Err(MemoryFault { address, length: out.len() as u64, write: false })
    }
    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        Err(MemoryFault { address, length: data.len() as u64, write: true })
    }
    fn atomic32(&self, address: u64, _: AtomicOp, _: u32, _: u32) -> Result<u32, MemoryFault> {
        Err(MemoryFault { address, length: 4, write: true })
    }
    fn atomic64(&self, address: u64, _: AtomicOp, _: u64, _: u64) -> Result<u64, MemoryFault> {
        Err(MemoryFault { address, length: 8, write: true })
    }
}

impl Wave {
    /// A wave32 wave with 16 VGPRs, every register 0 and EXEC all lanes, for trying one
    /// instruction.
    pub(crate) fn blank() -> Wave {
        let mut wave = Wave {
            sgpr: [0; 128],
            vgpr: vec![[0; LANES]; 16],
            scc: false,
            pc: PC,
            ended: false,
            at_barrier: false,
            scratch: Vec::new(),
            private_bytes: 0,
            executed: 0,
            realtime: || CLOCK,
            mode: super::wave::MODE_IEEE_FLOAT,
            wide: false,
            half: 0,
            other: Default::default(),
            site: Default::default(),
        };
        wave.write_sgpr(super::wave::EXEC, u32::MAX);
        wave
    }
}
