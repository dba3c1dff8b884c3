//! LLVM's assembly syntax for decoded gfx12 instructions, as `llvm-objdump-19 -d --mcpu=gfx1200`
//! prints it (the golden test compares the two on every checked-in gfx1200 and gfx1201 code
//! object).
//!
//! The encodings gfx12 lays out as gfx11 (SOP*, VOP*, VOPD, DPP, DS) print through gfx11's
//! printer: it reads an instruction's words, encoding, mnemonic and printed operands (`slots`),
//! never its operation, so a gfx11 view of the gfx12 entry (the same mnemonic and slots) prints
//! the gfx12 text. SMEM and the vector memory encodings, laid out anew, print here, with the
//! cache policy (`th:`, `scope:`) that replaced gfx11's glc/slc/dlc.

use core::fmt::{self, Display, Formatter};
use std::sync::OnceLock;

use super::decode::{Instruction, table_of};
use super::table::Entry;
use crate::decode_core::Encoding;
use crate::decode_core::operand::aligned_scalar;
use crate::decode_core::syntax::{Hwreg, sign_extend};
use crate::gfx11::{self, Operand, Slot, scalar_operand};

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.encoding {
            Encoding::Smem => write_smem(f, self),
            Encoding::Flat | Encoding::Scratch | Encoding::Global => write_flat(f, self),
            Encoding::Mubuf | Encoding::Mtbuf => write_buffer(f, self),
            _ => write_shared(f, self),
        }
    }
}

/// The encodings laid out as gfx11's: gfx11's printer, but for the immediates gfx12 names
/// differently (LLVM 19's `AMDGPUInstPrinter` for gfx12, each checked with `llvm-mc-19
/// --disassemble -mcpu=gfx1200`).
fn write_shared(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let [w0, ..] = instruction.words;
    let simm = w0 & 0xFFFF;
    let mnemonic = instruction.entry.mnemonic;
    let sdst = |width| Wide(scalar_operand((w0 >> 16) & 0x7F), width);
    match (instruction.encoding, mnemonic) {
        (Encoding::Sopk, "s_getreg_b32") => write!(f, "{mnemonic} {}, {}", sdst(1), Hwreg(simm, hwreg_name)),
        (Encoding::Sopk, "s_setreg_b32") => write!(f, "{mnemonic} {}, {}", Hwreg(simm, hwreg_name), sdst(1)),
        (Encoding::Sopk, "s_setreg_imm32_b32") => {
            let literal = instruction.literal().unwrap_or(0);
            write!(f, "{mnemonic} {}, {}", Hwreg(simm, hwreg_name), Small(literal, -16))
        }
        // The return address's pair and the offset in decimal.
        (Encoding::Sopk, "s_call_b64") => write!(f, "{mnemonic} {}, {simm}", sdst(2)),
        (Encoding::Sopp, "s_barrier_wait" | "s_denorm_mode") => write!(f, "{mnemonic} {}", Small(simm, 0)),
        (Encoding::Sopp, "s_wait_alu") => write!(f, "{mnemonic} {}", Depctr(simm)),
        (Encoding::Sopp, "s_sendmsg" | "s_sendmsghalt") => write!(f, "{mnemonic} {}", Sendmsg(simm)),
        (Encoding::Sop1, "s_sendmsg_rtn_b32" | "s_sendmsg_rtn_b64") => {
            let width = if mnemonic.ends_with("b64") { 2 } else { 1 };
            write!(f, "{mnemonic} {}, {}", sdst(width), Sendmsg(w0 & 0xFF))
        }
        // A zero swizzle offset prints as no offset at all.
        (Encoding::Ds, "ds_swizzle_b32") if simm == 0 => {
            let text = instruction.gfx11_view().to_string();
            f.write_str(text.split(" offset:").next().unwrap_or(&text))
        }
        _ => write!(f, "{}", instruction.gfx11_view()),
    }
}

/// An immediate LLVM prints in decimal from `low` to 64 and in hex otherwise.
struct Small(u32, i32);

impl Display for Small {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Small(value, low) = *self;
        if (low..=64).contains(&(value as i32)) { write!(f, "{}", value as i32) } else { write!(f, "0x{value:x}") }
    }
}

/// gfx12's hardware register names (every id of `s_getreg_b32` disassembled by `llvm-mc-19
/// -mcpu=gfx1200`); LLVM prints the others by number.
fn hwreg_name(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        4 => "HW_REG_STATE_PRIV",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        10 => "HW_REG_PERF_SNAPSHOT_DATA",
        11 => "HW_REG_PERF_SNAPSHOT_PC_LO",
        12 => "HW_REG_PERF_SNAPSHOT_PC_HI",
        15 => "HW_REG_PERF_SNAPSHOT_DATA1",
        16 => "HW_REG_PERF_SNAPSHOT_DATA2",
        17 => "HW_REG_EXCP_FLAG_PRIV",
        18 => "HW_REG_EXCP_FLAG_USER",
        19 => "HW_REG_TRAP_CTRL",
        20 => "HW_REG_SCRATCH_BASE_LO",
        21 => "HW_REG_SCRATCH_BASE_HI",
        23 => "HW_REG_HW_ID1",
        24 => "HW_REG_HW_ID2",
        29 => "HW_REG_SHADER_CYCLES_LO",
        30 => "HW_REG_SHADER_CYCLES_HI",
        31 => "HW_REG_DVGPR_ALLOC_LO",
        32 => "HW_REG_DVGPR_ALLOC_HI",
        _ => return None,
    })
}

/// A message as LLVM 19 names it for gfx12 (`llvm-mc-19 -mcpu=gfx1200` over the ids): the
/// named ones, else `sendmsg(id, 0, 0)`.
struct Sendmsg(u32);

impl Display for Sendmsg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            1 => "MSG_INTERRUPT",
            2 => "MSG_HS_TESSFACTOR",
            3 => "MSG_DEALLOC_VGPRS",
            9 => "MSG_GS_ALLOC_REQ",
            128 => "MSG_RTN_GET_DOORBELL",
            129 => "MSG_RTN_GET_DDID",
            130 => "MSG_RTN_GET_TMA",
            131 => "MSG_RTN_GET_REALTIME",
            132 => "MSG_RTN_SAVE_WAVE",
            133 => "MSG_RTN_GET_TBA",
            134 => "MSG_RTN_GET_TBA_TO_PC",
            135 => "MSG_RTN_GET_SE_AID_ID",
            id if id < 256 => return write!(f, "sendmsg({id}, 0, 0)"),
            other => return write!(f, "0x{other:x}"),
        };
        write!(f, "sendmsg({name})")
    }
}

/// `s_wait_alu`'s dependency counters as LLVM 19 prints them for gfx12 (`printDepCtr`; the field
/// positions found by disassembling every single-bit value with `llvm-mc-19 -mcpu=gfx1200`):
/// symbolic when the unused bits 6:5 are clear, naming the fields not at their defaults (all of
/// them when every field is), else in hex.
struct Depctr(u32);

impl Display for Depctr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        // (name, shift, width): each field's default is its maximum.
        const FIELDS: [(&str, u32, u32); 7] = [
            ("depctr_hold_cnt", 7, 1),
            ("depctr_sa_sdst", 0, 1),
            ("depctr_va_vdst", 12, 4),
            ("depctr_va_sdst", 9, 3),
            ("depctr_va_ssrc", 8, 1),
            ("depctr_va_vcc", 1, 1),
            ("depctr_vm_vsrc", 2, 3),
        ];
        let value = self.0;
        if value & 0x60 != 0 {
            return write!(f, "0x{value:x}");
        }
        let field = |shift: u32, width: u32| (value >> shift) & ((1 << width) - 1);
        let all_default = FIELDS.iter().all(|&(_, shift, width)| field(shift, width) == (1 << width) - 1);
        let mut first = true;
        for (name, shift, width) in FIELDS {
            let current = field(shift, width);
            if all_default || current != (1 << width) - 1 {
                write!(f, "{}{name}({current})", if first { "" } else { " " })?;
                first = false;
            }
        }
        Ok(())
    }
}

/// Every encoding's gfx11 views, built once: for each gfx12 entry, a gfx11 entry with its
/// mnemonic and slots (and, since the printer never reads it, the gfx11 equivalent's operation,
/// or `s_nop`'s where gfx11 has none).
fn views(encoding: Encoding) -> &'static [gfx11::Entry] {
    static VIEWS: OnceLock<Vec<(Encoding, Vec<gfx11::Entry>)>> = OnceLock::new();
    let all = VIEWS.get_or_init(|| {
        use Encoding::*;
        [Sop2, Sopk, Sop1, Sopc, Sopp, Vop2, Vop1, Vopc, Vop3, Vop3p, Vopd, Ds]
            .into_iter()
            .map(|encoding| (encoding, table_of(encoding).iter().map(view).collect()))
            .chain(std::iter::once((Mtbuf, super::table::VOPDY.iter().map(view).collect())))
            .collect()
    });
    all.iter().find(|(named, _)| *named == encoding).map_or(&[], |(_, views)| views.as_slice())
}

fn view(entry: &'static Entry) -> gfx11::Entry {
    gfx11::Entry {
        op: entry.op,
        mnemonic: entry.mnemonic,
        opcode: entry.opcode.gfx11_equivalent().unwrap_or(gfx11::Opcode::SNop),
        slots: entry.slots,
    }
}

/// The gfx11 view of `entry`, one of `encoding`'s (VOPD's Y table is filed under `Mtbuf`, which
/// has no shared layout).
fn view_of(encoding: Encoding, table: &'static [Entry], entry: &'static Entry) -> &'static gfx11::Entry {
    let index = table.iter().position(|candidate| std::ptr::eq(candidate, entry)).expect("an entry of its table");
    &views(encoding)[index]
}

impl Instruction {
    /// This instruction as gfx11's printer reads it: the same words with a view of the entry.
    /// Only for the encodings laid out as gfx11's.
    fn gfx11_view(&self) -> gfx11::Instruction {
        gfx11::Instruction {
            encoding: self.encoding,
            entry: view_of(self.encoding, table_of(self.encoding), self.entry),
            dual: self.dual.map(|dual| view_of(Encoding::Mtbuf, super::table::VOPDY, dual)),
            words: self.words,
            dwords: self.dwords,
            dpp: self.dpp,
        }
    }
}

/// An operand at a width in dwords, as LLVM spells the registers memory instructions name.
struct Wide(Operand, u8);

impl Display for Wide {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Wide(operand, width) = *self;
        let range = |f: &mut Formatter<'_>, file: &str, index: u32| {
            if width <= 1 {
                write!(f, "{file}{index}")
            } else {
                write!(f, "{file}[{index}:{}]", index + width as u32 - 1)
            }
        };
        match operand {
            Operand::Sgpr(index) => range(f, "s", aligned_scalar(index, width) as u32),
            Operand::Ttmp(index) => range(f, "ttmp", aligned_scalar(index, width) as u32),
            Operand::Vgpr(index) => range(f, "v", index as u32),
            Operand::Null => f.write_str("null"),
            Operand::M0 => f.write_str("m0"),
            Operand::VccLo => f.write_str(if width == 2 { "vcc" } else { "vcc_lo" }),
            Operand::VccHi => f.write_str("vcc_hi"),
            Operand::ExecLo => f.write_str(if width == 2 { "exec" } else { "exec_lo" }),
            Operand::ExecHi => f.write_str("exec_hi"),
            Operand::Special(name) => f.write_str(name),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Writes ", "-separated operands after the mnemonic.
struct List<'a, 'b> {
    f: &'a mut Formatter<'b>,
    first: bool,
}

impl List<'_, '_> {
    fn item(&mut self, text: impl Display) -> fmt::Result {
        let separator = if self.first { " " } else { ", " };
        self.first = false;
        write!(self.f, "{separator}{text}")
    }
}

/// What kind of access a temporal hint is named for (LLVM's `AMDGPUInstPrinter::printTH`: an
/// atomic's, a store's, or a load's names).
#[derive(PartialEq)]
enum Access {
    Load,
    Store,
    Atomic,
}

fn access(instruction: &Instruction) -> Access {
    let mnemonic = instruction.entry.mnemonic;
    if mnemonic.contains("_atomic_") {
        Access::Atomic
    } else if mnemonic.contains("_store_") {
        Access::Store
    } else {
        Access::Load
    }
}

/// The cache policy's ` th:… scope:…` as LLVM 19 prints it (`printTH`, `printScope`; every value
/// checked with `llvm-mc-19 --disassemble -mcpu=gfx1200`): nothing for the defaults (0).
fn write_policy(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let Some(policy) = instruction.cache_policy() else { return Ok(()) };
    if policy.th != 0 {
        const LOAD: [&str; 8] = ["RT", "NT", "HT", "LU", "NT_RT", "RT_NT", "NT_HT", ""];
        const STORE: [&str; 8] = ["RT", "NT", "HT", "RT_WB", "NT_RT", "RT_NT", "NT_HT", "NT_WB"];
        const ATOMIC: [&str; 4] = ["", "RETURN", "NT", "NT_RETURN"];
        let th = policy.th as usize;
        match access(instruction) {
            Access::Atomic if th < 4 => write!(f, " th:TH_ATOMIC_{}", ATOMIC[th])?,
            Access::Atomic => write!(f, " th:TH_ATOMIC_0x{th:x}")?,
            Access::Store => write!(f, " th:TH_STORE_{}", STORE[th])?,
            Access::Load if LOAD[th].is_empty() => write!(f, " th:0x{th:x}")?,
            Access::Load => write!(f, " th:TH_LOAD_{}", LOAD[th])?,
        }
    }
    match policy.scope {
        1 => f.write_str(" scope:SCOPE_SE"),
        2 => f.write_str(" scope:SCOPE_DEV"),
        3 => f.write_str(" scope:SCOPE_SYS"),
        _ => Ok(()),
    }
}

/// A signed offset as LLVM prints SMEM's: `0x10`, `-0x10`.
fn signed_hex(value: i32) -> String {
    if value < 0 { format!("-0x{:x}", value.unsigned_abs()) } else { format!("0x{value:x}") }
}

/// SMEM: `s_load_b32 s10, s[20:21], 0x10`, or with an offset register `s12 offset:0x10` (the
/// offset then always printed).
fn write_smem(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    f.write_str(instruction.entry.mnemonic)?;
    let offset = sign_extend(w1 & 0xFF_FFFF, 24);
    let soffset = w1 >> 25;
    let mut list = List { f, first: true };
    // The prefetches and `s_atc_probe` print sdata's field as a number: before the base
    // (`s_atc_probe 10, s[20:21], 0x10`) or after the offset and soffset (`s_prefetch_data
    // s[20:21], 0x10, null, 10`), which then print apart.
    let slots = instruction.entry.slots;
    let apart = slots.contains(&Slot::Null);
    let mut seen_base = false;
    for (index, slot) in slots.iter().enumerate() {
        let leading = !seen_base && index == 0 && !apart;
        let number = matches!(slot, Slot::Imm) && (leading || apart && index == slots.len() - 1);
        seen_base |= matches!(slot, Slot::Sbase(_));
        match *slot {
            Slot::Imm if number => list.item((w0 >> 6) & 0x7F)?,
            Slot::Imm if apart => list.item(signed_hex(offset))?,
            Slot::Null => list.item(Wide(scalar_operand(soffset), 1))?,
            Slot::Sdata(width) => list.item(Wide(scalar_operand((w0 >> 6) & 0x7F), width))?,
            Slot::Sbase(width) => list.item(Wide(Operand::Sgpr(((w0 & 0x3F) << 1) as u8), width))?,
            Slot::Imm | Slot::Soffset(_) if soffset == 0x7C => list.item(signed_hex(offset))?,
            Slot::Imm | Slot::Soffset(_) => {
                list.item(Wide(scalar_operand(soffset), 1))?;
                write!(list.f, " offset:{}", signed_hex(offset))?;
            }
            other => list.item(format_args!("{other:?}"))?,
        }
    }
    write_policy(f, instruction)
}

/// VFLAT/VSCRATCH/VGLOBAL: vdst (or a returning atomic's), the address, the data, the scalar
/// base, `offset:` (signed, decimal) and the cache policy.
fn write_flat(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, w2] = instruction.words;
    f.write_str(instruction.entry.mnemonic)?;
    let saddr = w0 & 0x7F;
    let has_saddr = saddr != 0x7C && instruction.encoding != Encoding::Flat;
    let sve = (w1 >> 17) & 1 == 1;
    let mut list = List { f, first: true };
    if instruction.returns_data()
        && let Some(width) = atomic_return_width(instruction.entry)
    {
        list.item(Wide(Operand::Vgpr(w1 as u8), width))?;
    }
    for slot in instruction.entry.slots {
        match (instruction.encoding, *slot) {
            (_, Slot::Vdst(width)) => list.item(Wide(Operand::Vgpr(w1 as u8), width))?,
            (_, Slot::Data(width)) => list.item(Wide(Operand::Vgpr((w1 >> 23) as u8), width))?,
            // Scratch's address is a VGPR when SVE is set, else `off`.
            (Encoding::Scratch, Slot::Addr(width)) if sve => list.item(Wide(Operand::Vgpr(w2 as u8), width))?,
            (Encoding::Scratch, Slot::Addr(_)) => list.item("off")?,
            (_, Slot::Addr(width)) => {
                list.item(Wide(Operand::Vgpr(w2 as u8), if has_saddr { 1 } else { width.max(2) }))?
            }
            (_, Slot::Saddr(width)) if has_saddr => list.item(Wide(scalar_operand(saddr), width))?,
            (_, Slot::Saddr(_) | Slot::Off) => list.item("off")?,
            (_, other) => list.item(format_args!("{other:?}"))?,
        }
    }
    let offset = sign_extend(w2 >> 8, 24);
    if offset != 0 {
        write!(f, " offset:{offset}")?;
    }
    write_policy(f, instruction)
}

/// The vdst width of a returning atomic: its data width, halved for compare-and-swap (whose
/// data holds the value and the comparand).
fn atomic_return_width(entry: &Entry) -> Option<u8> {
    let data = entry.slots.iter().find_map(|slot| match slot {
        Slot::Data(width) | Slot::Vdata(width) => Some(*width),
        _ => None,
    })?;
    Some(if entry.mnemonic.contains("cmpswap") { data / 2 } else { data })
}

/// VBUFFER: vdata, the address (`off` without offen or idxen; a pair with both), the resource,
/// soffset, the format of a typed access, `idxen`, `offen`, `offset:` and the cache policy.
fn write_buffer(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, w2] = instruction.words;
    f.write_str(instruction.entry.mnemonic)?;
    let (offen, idxen) = ((w1 >> 30) & 1 == 1, (w1 >> 31) & 1 == 1);
    let mut list = List { f, first: true };
    for slot in instruction.entry.slots {
        match *slot {
            Slot::Vdata(width) => list.item(Wide(Operand::Vgpr(w1 as u8), width))?,
            Slot::Vaddr(_) | Slot::Off if offen || idxen => {
                list.item(Wide(Operand::Vgpr(w2 as u8), if offen && idxen { 2 } else { 1 }))?
            }
            Slot::Vaddr(_) | Slot::Off => list.item("off")?,
            Slot::Srsrc(width) => list.item(Wide(Operand::Sgpr(((w1 >> 9) & 0x1FF) as u8), width))?,
            Slot::Null | Slot::Soffset(_) | Slot::Imm => list.item(Wide(scalar_operand(w0 & 0x7F), 1))?,
            other => list.item(format_args!("{other:?}"))?,
        }
    }
    if instruction.entry.mnemonic.starts_with("tbuffer_") {
        // The format [61:55]; 1 (BUF_FMT_8_UNORM) is the default LLVM omits. gfx12 numbers
        // formats as gfx11 (LLVM's `getUnifiedFormatName` uses one table from gfx11 on).
        let format = (w1 >> 23) & 0x7F;
        if format != 1 {
            match gfx11::buffer_format_name(format) {
                Some(name) => write!(f, " format:[BUF_FMT_{name}]")?,
                None => write!(f, " format:{format}")?,
            }
        }
    }
    if idxen {
        f.write_str(" idxen")?;
    }
    if offen {
        f.write_str(" offen")?;
    }
    let offset = w2 >> 8;
    if offset != 0 {
        write!(f, " offset:{offset}")?;
    }
    write_policy(f, instruction)
}
