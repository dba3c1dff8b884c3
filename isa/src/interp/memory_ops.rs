//! Memory instructions: FLAT, GLOBAL and SCRATCH (RDNA3 ISA chapter 10), MUBUF (chapter 9), DS
//! (chapter 11).
//!
//! Global memory goes through [`Memory`], whose refusal is a memory fault. Scratch is per lane,
//! `private_bytes` each: an access outside it faults too. LDS accesses outside the workgroup's
//! allocation read 0 and drop writes, as the hardware's range check does (RDNA3 ISA guide).

use super::wave::{Flow, unsupported};
use super::wave::{LANES, PRIVATE_BASE, SHARED_BASE, Wave};
use super::{AtomicOp, ExecError, Memory, MemoryFault, apply_atomic32, apply_atomic64, formats};
use crate::gfx11::{Encoding, Instruction};

/// What a memory instruction does, parsed once from its name (`global_load_u16`,
/// `flat_atomic_add_u64`, `ds_store_2addr_stride64_b32`) when the kernel is decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Operation {
    /// Load `bytes`; sign-extend if `signed`; `d16` keeps the other half of the register
    /// (`hi` loads into bits 31:16).
    Load {
        bytes: usize,
        signed: bool,
        d16: bool,
        hi: bool,
    },
    /// Store `bytes` from the data registers (`hi`: from bits 31:16).
    Store {
        bytes: usize,
        hi: bool,
    },
    Atomic {
        op: AtomicOp,
        wide: bool,
    },
    /// `ds_bpermute_b32`: each lane reads data from the lane its address names.
    Bpermute,
    /// `ds_permute_b32`: each lane writes its data to the lane its address names.
    Permute,
    /// `ds_swizzle_b32`: lanes exchange data by the pattern in the offset.
    Swizzle,
    /// `ds_append` (add) and `ds_consume` (subtract): the LDS word at M0[15:0] + offset moves
    /// by the wave's active lanes, and every active lane gets its value before (RDNA3 ISA guide,
    /// "DS_APPEND"). Run once for a whole wave64 wave.
    Append {
        consume: bool,
    },
    /// `ds_load/store_addtid_b32`, `global_load/store_addtid_b32`: one dword per lane at the
    /// base (DS: M0[15:0] + offset; GLOBAL: SADDR + offset) plus the lane's id × 4.
    LaneAddressed {
        load: bool,
    },
    /// A typed buffer access (`tbuffer_*`, `buffer_*_format_*`) of `count` components, each
    /// converted by the format (`formats.rs`); `d16`: two components per VGPR, or one in bits
    /// 31:16 for `hi`.
    Typed {
        load: bool,
        count: u8,
        d16: bool,
        hi: bool,
    },
    /// A cache invalidation or `ds_nop`: nothing to do on coherent memory.
    Nothing,
}

/// A memory instruction's plan: its operation and the DS forms' shape.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub operation: Operation,
    /// DS `2addr`: two addresses, `offset0` and `offset1` elements (× 64 for `stride64`).
    pub two: bool,
    pub stride: u32,
    /// Returns the old value (DS `_rtn_`; FLAT, GLOBAL and MUBUF atomics with GLC).
    pub returns: bool,
    /// The layout of the buffer resource (V#) a MUBUF or MTBUF access reads.
    pub descriptor: Descriptor,
}

/// Which generation's buffer resource (V#) layout and range check a buffer access follows,
/// chosen when the kernel is decoded (gfx9 code's: `from_gfx9/memory.rs`, `gfx9_descriptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Descriptor {
    /// gfx11's (RDNA3 ISA guide, "Buffer Resource"): the unified FORMAT in word 3 bits 18:12,
    /// OOB_SELECT in bits 29:28 choosing the range check.
    Gfx11,
    /// gfx9's (Vega ISA guide, "Buffer Resource"; Mesa's `ac_set_buf_desc_word3` for gfx6–9):
    /// NUM_FORMAT in word 3 bits 14:12 and DATA_FORMAT in 18:15 (`gfx9/buffer_format.rs`), no
    /// OOB_SELECT; base, stride, swizzle, `num_records`, the destination selects and
    /// ADD_TID_ENABLE lie as gfx11's.
    Gfx9,
}

impl Access {
    pub fn plan(instruction: &Instruction) -> Option<Access> {
        let mnemonic = instruction.mnemonic();
        let operation = match mnemonic {
            _ if let Some(typed) = typed(mnemonic) => typed,
            "ds_bpermute_b32" => Operation::Bpermute,
            "ds_permute_b32" => Operation::Permute,
            "ds_swizzle_b32" => Operation::Swizzle,
            "ds_nop" | "buffer_gl0_inv" | "buffer_gl1_inv" => Operation::Nothing,
            "ds_append" => Operation::Append { consume: false },
            "ds_consume" => Operation::Append { consume: true },
            _ if mnemonic.contains("addtid") => Operation::LaneAddressed { load: mnemonic.contains("_load_") },
            // Format conversions and loads into LDS are not modelled.
            _ if mnemonic.contains("format") || mnemonic.contains("_lds_") => return None,
            _ => parse(mnemonic)?,
        };
        let returns =
            if instruction.encoding == Encoding::Ds { mnemonic.contains("_rtn_") } else { instruction.returns_data() };
        Some(Access {
            operation,
            two: mnemonic.contains("2addr"),
            stride: if mnemonic.contains("stride64") { 64 } else { 1 },
            returns,
            descriptor: Descriptor::Gfx11,
        })
    }
}

/// A typed buffer access's operation: `tbuffer_load_format_xyzw`, `buffer_store_d16_format_xy`,
/// `buffer_load_d16_hi_format_x` (not the `_lds_` forms, which load into LDS).
fn typed(mnemonic: &str) -> Option<Operation> {
    let (head, components) = mnemonic.rsplit_once("format_")?;
    if mnemonic.contains("_lds_") || !mnemonic.contains("buffer_") {
        return None;
    }
    let count = match components {
        "x" => 1,
        "xy" => 2,
        "xyz" => 3,
        "xyzw" => 4,
        _ => return None,
    };
    Some(Operation::Typed {
        load: head.contains("_load_"),
        count,
        d16: head.contains("_d16_"),
        hi: head.contains("_d16_hi_"),
    })
}

fn parse(mnemonic: &str) -> Option<Operation> {
    let operation = mnemonic.split_once('_')?.1;
    let size = |suffix: &str| -> Option<(usize, bool)> {
        Some(match suffix {
            "u8" | "b8" => (1, false),
            "i8" => (1, true),
            "u16" | "b16" => (2, false),
            "i16" => (2, true),
            "b32" | "u32" | "i32" | "f32" => (4, false),
            "b64" | "u64" | "i64" | "f64" => (8, false),
            "b96" => (12, false),
            "b128" => (16, false),
            _ => return None,
        })
    };
    let suffix = operation.rsplit('_').next()?;
    // The size is the last part that names one: `load_u8_d16_hi` is a byte.
    let sized = operation.rsplit('_').find(|part| size(part).is_some()).unwrap_or(suffix);
    if let Some(rest) = operation.strip_prefix("load_") {
        let (bytes, signed) = size(sized)?;
        let d16 = rest.starts_with("d16") || rest.ends_with("_d16") || rest.contains("_d16_");
        let hi = rest.starts_with("d16_hi") || rest.ends_with("_d16_hi");
        return Some(Operation::Load { bytes, signed, d16, hi });
    }
    if let Some(rest) = operation.strip_prefix("store_") {
        let (bytes, _) = size(sized)?;
        return Some(Operation::Store { bytes, hi: rest.starts_with("d16_hi") || rest.ends_with("_d16_hi") });
    }
    let atomic = operation.strip_prefix("atomic_").unwrap_or(operation);
    let name = atomic.split('_').next()?;
    let float = suffix.starts_with('f');
    let op = match name {
        "add" if float => AtomicOp::AddFloat,
        "min" if float => AtomicOp::MinFloat,
        "max" if float => AtomicOp::MaxFloat,
        "add" => AtomicOp::Add,
        "sub" => AtomicOp::Sub,
        "rsub" => AtomicOp::ReverseSub,
        "csub" => AtomicOp::SubClamp,
        "mskor" => AtomicOp::MaskOr,
        "wrap" => AtomicOp::Wrap,
        "condxchg32" => AtomicOp::ConditionalExchange,
        "swap" | "storexchg" => AtomicOp::Swap,
        "cmpswap" | "cmpstore" if float => AtomicOp::CompareSwapFloat,
        "cmpswap" | "cmpstore" => AtomicOp::CompareSwap,
        "and" => AtomicOp::And,
        "or" => AtomicOp::Or,
        "xor" => AtomicOp::Xor,
        "inc" => AtomicOp::Inc,
        "dec" => AtomicOp::Dec,
        "min" if suffix.starts_with('i') => AtomicOp::MinI,
        "max" if suffix.starts_with('i') => AtomicOp::MaxI,
        "min" => AtomicOp::MinU,
        "max" => AtomicOp::MaxU,
        _ => return None,
    };
    let (bytes, _) = size(suffix)?;
    Some(Operation::Atomic { op, wide: bytes == 8 })
}

#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step<M: Memory + ?Sized>(
    wave: &mut Wave,
    instruction: &Instruction,
    access: &Access,
    memory: &M,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    match (instruction.encoding, access.operation) {
        (_, Operation::Nothing) => return Ok(Flow::Next),
        (Encoding::Ds, _) => return ds(wave, instruction, access, lds),
        (Encoding::Mubuf | Encoding::Mtbuf, _) => return buffer(wave, instruction, access, memory),
        _ => {}
    }
    let [w0, w1, _] = instruction.words;
    let (addr, data, saddr, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0x7F, (w1 >> 24) & 0xFF);
    let sve = (w1 >> 23) & 1 == 1;
    let offset = match instruction.encoding {
        Encoding::Flat => (w0 & 0xFFF) as i64,
        _ => (((w0 & 0x1FFF) << 19) as i32 >> 19) as i64,
    };
    let pc = wave.pc;
    let fault = |fault: MemoryFault| ExecError::Fault { pc, fault };
    let exec = wave.exec();
    if let Operation::LaneAddressed { load } = access.operation {
        // GLOBAL_*_ADDTID_B32: SADDR (null: 0) + offset + the lane's id × 4; no VGPR address.
        let base = if saddr == 0x7C { 0 } else { wave.scalar64(saddr, None, super::wave::Kind::Int) };
        for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
            let id = wave.half as u64 * LANES as u64 + lane as u64;
            let address = base.wrapping_add_signed(offset).wrapping_add(id * 4);
            if load {
                let mut word = [0u8; 4];
                memory.read(address, &mut word).map_err(fault)?;
                wave.write_vgpr(vdst, lane, u32::from_le_bytes(word));
            } else {
                memory.write(address, &wave.vgpr(data, lane).to_le_bytes()).map_err(fault)?;
            }
        }
        return Ok(Flow::Next);
    }
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let address = match instruction.encoding {
            Encoding::Scratch => {
                let mut address = offset;
                if sve {
                    address += wave.vgpr(addr, lane) as i64;
                }
                if saddr != 0x7C {
                    address += wave.scalar(saddr, None, super::wave::Kind::Int) as i64;
                }
                address as u64
            }
            Encoding::Global if saddr != 0x7C => {
                let base = wave.scalar64(saddr, None, super::wave::Kind::Int);
                base.wrapping_add(wave.vgpr(addr, lane) as u64).wrapping_add_signed(offset)
            }
            _ => (wave.vgpr(addr, lane) as u64 | (wave.vgpr(addr + 1, lane) as u64) << 32).wrapping_add_signed(offset),
        };
        let target = Target::of(instruction.encoding, address, lane);
        match access.operation {
            Operation::Load { bytes, signed, d16, hi } => {
                let mut buffer = [0u8; 16];
                sized(&mut buffer, bytes, |bytes| target.read(memory, wave, lds, bytes)).map_err(fault)?;
                write_loaded(wave, vdst, lane, &buffer[..bytes], signed, d16, hi);
            }
            Operation::Store { bytes, hi } => {
                let mut buffer = store_bytes(wave, data, lane, bytes, hi);
                sized(&mut buffer, bytes, |bytes| target.write(memory, wave, lds, bytes)).map_err(fault)?;
            }
            Operation::Atomic { op, wide } => {
                let old = target.atomic(memory, wave, lds, op, wide, data, lane).map_err(fault)?;
                if access.returns {
                    if wide { wave.write_vgpr64(vdst, lane, old) } else { wave.write_vgpr(vdst, lane, old as u32) }
                }
            }
            _ => return Err(unsupported(wave, instruction)),
        }
    }
    Ok(Flow::Next)
}

/// Calls `f` on `buffer[..bytes]` with a length the compiler knows in each arm, so the copies
/// beneath it become moves rather than `memmove` calls (the access sizes are these six).
#[inline(always)]
fn sized<R>(buffer: &mut [u8; 16], bytes: usize, mut f: impl FnMut(&mut [u8]) -> R) -> R {
    match bytes {
        1 => f(&mut buffer[..1]),
        2 => f(&mut buffer[..2]),
        4 => f(&mut buffer[..4]),
        8 => f(&mut buffer[..8]),
        12 => f(&mut buffer[..12]),
        _ => f(&mut buffer[..bytes]),
    }
}

/// The bytes a store writes: `bytes` from the data registers (`hi`: their bits 31:16).
#[inline(always)]
fn store_bytes(wave: &Wave, data: u32, lane: usize, bytes: usize, hi: bool) -> [u8; 16] {
    let mut buffer = [0u8; 16];
    for dword in 0..bytes.div_ceil(4) {
        let value = wave.vgpr(data + dword as u32, lane);
        buffer[dword * 4..dword * 4 + 4].copy_from_slice(&if hi { value >> 16 } else { value }.to_le_bytes());
    }
    buffer
}

/// A global (or buffer) atomic: the value in `data` (and, for compare-and-swap, the comparand
/// after it), applied through the memory; returns the old value.
#[cfg_attr(not(debug_assertions), inline(always))]
fn global_atomic<M: Memory + ?Sized>(
    memory: &M,
    wave: &Wave,
    address: u64,
    op: AtomicOp,
    wide: bool,
    data: u32,
    lane: usize,
) -> Result<u64, MemoryFault> {
    if wide {
        let value = wave.vgpr(data, lane) as u64 | (wave.vgpr(data + 1, lane) as u64) << 32;
        let compare = wave.vgpr(data + 2, lane) as u64 | (wave.vgpr(data + 3, lane) as u64) << 32;
        memory.atomic64(address, op, value, compare)
    } else {
        memory.atomic32(address, op, wave.vgpr(data, lane), wave.vgpr(data + 1, lane)).map(u64::from)
    }
}

/// MUBUF: an access through a buffer resource (V#) in four SGPRs (RDNA3 ISA guide, "Buffer
/// Instructions" and "Buffer Resource"). The V#: base address in bits 47:0, stride in bits
/// 61:48, `num_records` in dword 2, `OOB_SELECT` in dword 3 bits 29:28. The address is
/// base + soffset + offset + stride × index, with offset = the instruction's offset plus the
/// VGPR offset (`offen`) and index the VGPR index (`idxen`, in the VGPR before the offset).
///
/// Out-of-range accesses, as the range check treats them: a load returns 0 and a store or an
/// atomic is dropped, per dword. Raw buffers (`OOB_SELECT` 3, or no index) are in range where the
/// dword's bytes end within `num_records` bytes of the offset; structured ones where the index is
/// below `num_records` (and, for `OOB_SELECT` 0, the offset within the stride). Swizzled buffers
/// are not modelled.
///
/// gfx9's V# ([`Descriptor::Gfx9`]) has no OOB_SELECT. Its structured accesses (idxen and a
/// nonzero stride) are in range where the index is below `num_records`, whatever the offset:
/// gfx11's OOB_SELECT 1 (Vega and MI200 ISA guides, "Range Checking": a structured buffer, used
/// where Stride ≠ 0 and IdxEn, is out of range where Index ≥ NumRecords; Mesa's
/// `ac_set_buf_desc_word3` comment gives gfx10+'s OOB_SELECT 1 the same check). The rest,
/// idxen with a zero stride too, are raw, in bytes (LLVM D44401, `AMDGPU.td`: "On GFX9 IDXEN
/// matters for interpretation of buffer sizes"; `IntrinsicsAMDGPU.td`: bounds checking changes
/// with idxen). Typed accesses are checked all or nothing (the guides' note 3: format loads and
/// stores and atomics are entirely in or out; dword loads and stores per dword).
#[cfg_attr(not(debug_assertions), inline(always))]
fn buffer<M: Memory + ?Sized>(
    wave: &mut Wave,
    instruction: &Instruction,
    access: &Access,
    memory: &M,
) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let (vaddr, vdata, srsrc) = (w1 & 0xFF, (w1 >> 8) & 0xFF, ((w1 >> 16) & 0x1F) * 4);
    let (offen, idxen) = ((w1 >> 22) & 1 == 1, (w1 >> 23) & 1 == 1);
    let soffset = wave.scalar((w1 >> 24) & 0xFF, None, super::wave::Kind::Int) as u64;
    let offset = (w0 & 0xFFF) as u64;
    let resource: [u32; 4] = core::array::from_fn(|index| wave.read_sgpr(srsrc + index as u32));
    let base = resource[0] as u64 | ((resource[1] & 0xFFFF) as u64) << 32;
    let stride = ((resource[1] >> 16) & 0x3FFF) as u64;
    let records = resource[2] as u64;
    let oob_select = match access.descriptor {
        Descriptor::Gfx11 => (resource[3] >> 28) & 3,
        Descriptor::Gfx9 => 1,
    };
    if resource[1] >> 30 != 0 {
        return Err(unsupported(wave, instruction)); // swizzle_enable
    }
    if resource[3] & super::wave::ADD_TID_ENABLE != 0 {
        // The private segment buffer (gfx10's scratch); any other V# with ADD_TID_ENABLE
        // (a swizzled global buffer) is not modelled.
        if base & super::wave::SCRATCH_RESOURCE_BASE == 0 || idxen {
            return Err(unsupported(wave, instruction));
        }
        return scratch_buffer(wave, instruction, access, base - super::wave::SCRATCH_RESOURCE_BASE + soffset);
    }
    // A typed access's format, parsed from its name, so only for a typed access.
    let format = match access.operation {
        Operation::Typed { .. } => Some(typed_format(wave, instruction, access.descriptor, resource[3])),
        _ => None,
    };
    let pc = wave.pc;
    let fault = |fault: MemoryFault| ExecError::Fault { pc, fault };
    let exec = wave.exec();
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let index = if idxen { wave.vgpr(vaddr, lane) as u64 } else { 0 };
        let vgpr_offset = if offen { wave.vgpr(vaddr + idxen as u32, lane) as u64 } else { 0 };
        let element_offset = offset + vgpr_offset;
        let address = base.wrapping_add(soffset).wrapping_add(element_offset).wrapping_add(stride * index);
        let structured = idxen && stride != 0 && oob_select != 3;
        // Whether the `length` bytes at `at` (from the element's start) are in range.
        let in_range = |at: u64, length: u64| -> bool {
            if structured {
                index < records && (oob_select != 0 || element_offset + at < stride)
            } else {
                element_offset + at + length <= records
            }
        };
        match access.operation {
            Operation::Load { bytes, signed, d16, hi } => {
                let mut buffer = [0u8; 16];
                for start in (0..bytes).step_by(4) {
                    let length = (bytes - start).min(4);
                    if in_range(start as u64, length as u64) {
                        memory.read(address + start as u64, &mut buffer[start..start + length]).map_err(fault)?;
                    }
                }
                write_loaded(wave, vdata, lane, &buffer[..bytes], signed, d16, hi);
            }
            Operation::Store { bytes, hi } => {
                let buffer = store_bytes(wave, vdata, lane, bytes, hi);
                for start in (0..bytes).step_by(4) {
                    let length = (bytes - start).min(4);
                    if in_range(start as u64, length as u64) {
                        memory.write(address + start as u64, &buffer[start..start + length]).map_err(fault)?;
                    }
                }
            }
            Operation::Typed { load, count, d16, hi } => {
                let format = match &format {
                    Some(Ok(format)) => format,
                    Some(Err(error)) => return Err(error.clone()),
                    None => return Err(unsupported(wave, instruction)),
                };
                let typed = formats::Typed { load, count, d16, hi, vdata, selects: resource[3] };
                if access.descriptor == Descriptor::Gfx9 {
                    // All or nothing: the bytes of the components the access moves.
                    let moved = if load { format.components() } else { (count as usize).min(format.components()) };
                    let bytes = format.bits[..moved].iter().map(|&bits| bits as u64 / 8).sum();
                    let whole = in_range(0, bytes);
                    formats::access(wave, memory, format, typed, lane, address, &|_, _| whole).map_err(fault)?;
                } else {
                    formats::access(wave, memory, format, typed, lane, address, &in_range).map_err(fault)?;
                }
            }
            Operation::Atomic { op, wide } => {
                let width = if wide { 8 } else { 4 };
                if !in_range(0, width) {
                    if access.returns {
                        if wide { wave.write_vgpr64(vdata, lane, 0) } else { wave.write_vgpr(vdata, lane, 0) }
                    }
                    continue;
                }
                let old = global_atomic(memory, wave, address, op, wide, vdata, lane).map_err(fault)?;
                if access.returns {
                    if wide { wave.write_vgpr64(vdata, lane, old) } else { wave.write_vgpr(vdata, lane, old as u32) }
                }
            }
            _ => return Err(unsupported(wave, instruction)),
        }
    }
    Ok(Flow::Next)
}

/// A typed access's format: MTBUF's own field (bits 25:19, gfx11's numbering, which the gfx9
/// translation gives too), or the V#'s: gfx11's unified FORMAT (word 3, bits 18:12) or gfx9's
/// DATA_FORMAT and NUM_FORMAT ([`Descriptor::Gfx9`]). Formats whose components differ in width
/// are not converted (`formats.rs`); they, and gfx9 pairs gfx11 has no format for, fail the
/// wave: a gfx9 V#'s naming its format.
#[cold]
fn typed_format(
    wave: &Wave,
    instruction: &Instruction,
    descriptor: Descriptor,
    word3: u32,
) -> Result<crate::gfx11::BufferFormat, ExecError> {
    let number = match (instruction.encoding, descriptor) {
        (Encoding::Mtbuf, _) => Some((instruction.words[0] >> 19) & 0x7F),
        (_, Descriptor::Gfx11) => Some((word3 >> 12) & 0x7F),
        (_, Descriptor::Gfx9) => crate::gfx9::buffer_format::unified(word3 >> 15, word3 >> 12),
    };
    match number.and_then(crate::gfx11::buffer_format).filter(|format| !format.packed) {
        Some(format) => Ok(format),
        None if descriptor == Descriptor::Gfx9 && instruction.encoding == Encoding::Mubuf => {
            let mnemonic = crate::gfx9::buffer_format::spelled(word3 >> 15, word3 >> 12);
            Err(ExecError::Unsupported { pc: wave.pc, mnemonic })
        }
        None => Err(unsupported(wave, instruction)),
    }
}

/// A MUBUF access through the private segment buffer: each lane's scratch at `start` plus the
/// instruction's offset and (`offen`) its VGPR offset. Loads and stores beyond the lane's private
/// bytes fault; typed accesses and atomics on scratch are refused by name (not modelled).
#[inline(never)]
fn scratch_buffer(wave: &mut Wave, instruction: &Instruction, access: &Access, start: u64) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let (vaddr, vdata) = (w1 & 0xFF, (w1 >> 8) & 0xFF);
    let offen = (w1 >> 22) & 1 == 1;
    let offset = start + (w0 & 0xFFF) as u64;
    let pc = wave.pc;
    let fault = |fault: MemoryFault| ExecError::Fault { pc, fault };
    let exec = wave.exec();
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let at = offset + if offen { wave.vgpr(vaddr, lane) as u64 } else { 0 };
        match access.operation {
            Operation::Load { bytes, signed, d16, hi } => {
                let range = scratch_range(wave, lane, at, bytes, false).map_err(fault)?;
                let mut buffer = [0u8; 16];
                buffer[..bytes].copy_from_slice(&wave.scratch[range]);
                write_loaded(wave, vdata, lane, &buffer[..bytes], signed, d16, hi);
            }
            Operation::Store { bytes, hi } => {
                let buffer = store_bytes(wave, vdata, lane, bytes, hi);
                let range = scratch_range(wave, lane, at, bytes, true).map_err(fault)?;
                wave.scratch[range].copy_from_slice(&buffer[..bytes]);
            }
            _ => return Err(unsupported(wave, instruction)),
        }
    }
    Ok(Flow::Next)
}

/// Where one lane's access lands. A FLAT address in the shared or private aperture (the 4 GiB
/// at `src_shared_base`/`src_private_base`, whose high half it carries) is LDS or the lane's
/// scratch at the low half, as a GPU's address translation routes it (AMDGPUUsage, "Address
/// Spaces": a local or private pointer cast to flat is the aperture's high half with the
/// segment offset as the low half). GLOBAL and SCRATCH instructions have no apertures.
enum Target {
    Global(u64),
    /// A byte offset into the lane's scratch.
    Scratch(usize, u64),
    /// A byte offset into the workgroup's LDS.
    Lds(u32),
}

impl Target {
    #[inline(always)]
    fn of(encoding: Encoding, address: u64, lane: usize) -> Target {
        match encoding {
            Encoding::Scratch => Target::Scratch(lane, address),
            Encoding::Flat if address >> 32 == SHARED_BASE >> 32 => Target::Lds(address as u32),
            Encoding::Flat if address >> 32 == PRIVATE_BASE >> 32 => Target::Scratch(lane, address & 0xFFFF_FFFF),
            _ => Target::Global(address),
        }
    }

    /// LDS bytes at `offset`, if all `length` are inside the allocation. Out of range, a load
    /// reads 0 and a store is dropped, as DS accesses are (RDNA3 ISA guide, "LDS": the address
    /// is checked against the workgroup's allocation).
    #[inline(always)]
    fn lds_range(lds: &[u8], offset: u32, length: usize) -> Option<core::ops::Range<usize>> {
        let start = offset as usize;
        start.checked_add(length).filter(|&end| end <= lds.len()).map(|end| start..end)
    }

    #[inline(always)]
    fn read<M: Memory + ?Sized>(&self, memory: &M, wave: &Wave, lds: &[u8], out: &mut [u8]) -> Result<(), MemoryFault> {
        match *self {
            Target::Global(address) => memory.read(address, out),
            Target::Scratch(lane, offset) => {
                let range = scratch_range(wave, lane, offset, out.len(), false)?;
                out.copy_from_slice(&wave.scratch[range]);
                Ok(())
            }
            Target::Lds(offset) => {
                match Self::lds_range(lds, offset, out.len()) {
                    Some(range) => out.copy_from_slice(&lds[range]),
                    None => out.fill(0),
                }
                Ok(())
            }
        }
    }

    #[inline(always)]
    fn write<M: Memory + ?Sized>(
        &self,
        memory: &M,
        wave: &mut Wave,
        lds: &mut [u8],
        data: &[u8],
    ) -> Result<(), MemoryFault> {
        match *self {
            Target::Global(address) => memory.write(address, data),
            Target::Scratch(lane, offset) => {
                let range = scratch_range(wave, lane, offset, data.len(), true)?;
                wave.scratch[range].copy_from_slice(data);
                Ok(())
            }
            Target::Lds(offset) => {
                if let Some(range) = Self::lds_range(lds, offset, data.len()) {
                    lds[range].copy_from_slice(data);
                }
                Ok(())
            }
        }
    }

    /// An atomic with the operands a FLAT or GLOBAL atomic takes (the value in `data`, the
    /// comparand after it); returns the old value. In global memory it goes through the memory.
    /// In LDS or scratch, a plain read-modify-write is atomic: the workgroup's waves run on one
    /// thread. Out of range in LDS, it returns 0 and writes nothing; in scratch, it faults.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn atomic<M: Memory + ?Sized>(
        &self,
        memory: &M,
        wave: &mut Wave,
        lds: &mut [u8],
        op: AtomicOp,
        wide: bool,
        data: u32,
        lane: usize,
    ) -> Result<u64, MemoryFault> {
        let width = if wide { 8 } else { 4 };
        let (value, compare) = if wide {
            let pair = |register: u32| wave.vgpr(register, lane) as u64 | (wave.vgpr(register + 1, lane) as u64) << 32;
            (pair(data), pair(data + 2))
        } else {
            (wave.vgpr(data, lane) as u64, wave.vgpr(data + 1, lane) as u64)
        };
        let bytes: &mut [u8] = match *self {
            Target::Global(address) => return global_atomic(memory, wave, address, op, wide, data, lane),
            Target::Lds(offset) => match Self::lds_range(lds, offset, width) {
                Some(range) => &mut lds[range],
                None => return Ok(0),
            },
            Target::Scratch(lane, offset) => {
                let range = scratch_range(wave, lane, offset, width, true)?;
                &mut wave.scratch[range]
            }
        };
        let mut old = [0u8; 8];
        old[..width].copy_from_slice(bytes);
        let old = u64::from_le_bytes(old);
        let new = if wide {
            apply_atomic64(op, old, value, compare)
        } else {
            apply_atomic32(op, old as u32, value as u32, compare as u32) as u64
        };
        bytes.copy_from_slice(&new.to_le_bytes()[..width]);
        Ok(old)
    }
}

fn scratch_range(
    wave: &Wave,
    lane: usize,
    offset: u64,
    length: usize,
    write: bool,
) -> Result<core::ops::Range<usize>, MemoryFault> {
    let end = offset.checked_add(length as u64).filter(|&end| end <= wave.private_bytes as u64);
    match end {
        Some(end) => Ok(lane * wave.private_bytes + offset as usize..lane * wave.private_bytes + end as usize),
        None => Err(MemoryFault { address: offset, length: length as u64, write }),
    }
}

#[inline(always)]
fn write_loaded(wave: &mut Wave, vdst: u32, lane: usize, bytes: &[u8], signed: bool, d16: bool, hi: bool) {
    if bytes.len() >= 4 {
        for (index, chunk) in bytes.chunks_exact(4).enumerate() {
            wave.write_vgpr(vdst + index as u32, lane, u32::from_le_bytes(chunk.try_into().unwrap()));
        }
        return;
    }
    let mut value = 0u32;
    for (index, byte) in bytes.iter().enumerate() {
        value |= (*byte as u32) << (8 * index);
    }
    let bits = 8 * bytes.len() as u32;
    let value = if signed { (((value << (32 - bits)) as i32) >> (32 - bits)) as u32 } else { value };
    let value = if d16 {
        let old = wave.vgpr(vdst, lane);
        if hi { (old & 0xFFFF) | (value << 16) } else { (old & 0xFFFF_0000) | (value & 0xFFFF) }
    } else {
        value
    };
    wave.write_vgpr(vdst, lane, value);
}

/// `ds_bpermute_b32`/`ds_permute_b32` in a wave64 wave, run once over all 64 lanes: the lane
/// index is the byte address ÷ 4, modulo 64 (RDNA ISA guides, "DS_BPERMUTE_B32"), and a read
/// from an inactive lane gives 0, as in wave32.
fn permute_wide(wave: &mut Wave, access: &Access, offset: u32, [addr, data, vdst]: [u32; 3]) {
    const WIDE: usize = 2 * LANES;
    let exec = wave.mask64(super::wave::EXEC);
    let active = |lane: usize| exec >> lane & 1 == 1;
    let source: [u32; WIDE] = core::array::from_fn(|lane| wave.lane_value(data, lane));
    let target: [usize; WIDE] =
        core::array::from_fn(|lane| (wave.lane_value(addr, lane).wrapping_add(offset) >> 2) as usize % WIDE);
    let mut out = [0u32; WIDE];
    if matches!(access.operation, Operation::Bpermute) {
        for lane in 0..WIDE {
            out[lane] = if active(target[lane]) { source[target[lane]] } else { 0 };
        }
    } else {
        for lane in (0..WIDE).filter(|&lane| active(lane)) {
            out[target[lane]] = source[lane];
        }
    }
    for lane in (0..WIDE).filter(|&lane| active(lane)) {
        wave.set_lane_value(vdst, lane, out[lane]);
    }
}

/// `ds_bpermute_b32`, `ds_permute_b32` and `ds_swizzle_b32` over one row of lanes: a lane that
/// reads an inactive lane reads 0.
#[cfg_attr(not(debug_assertions), inline(always))]
fn permute(wave: &mut Wave, access: &Access, offset: u32, [addr, data0, vdst]: [u32; 3], exec: u32) {
    // `ds_swizzle_b32 vdst, vaddr` swizzles its one operand, the address field's VGPR.
    let data = if matches!(access.operation, Operation::Swizzle) { addr } else { data0 };
    let source = wave.vgpr.get(data as usize).copied().unwrap_or([0; LANES]);
    let address = wave.vgpr.get(addr as usize).copied().unwrap_or([0; LANES]);
    let mut out = [0u32; LANES];
    let active = |lane: usize| exec >> lane & 1 == 1;
    match access.operation {
        Operation::Bpermute => {
            for lane in 0..LANES {
                let from = (address[lane].wrapping_add(offset) >> 2) as usize % LANES;
                out[lane] = if active(from) { source[from] } else { 0 };
            }
        }
        Operation::Permute => {
            for lane in (0..LANES).filter(|&lane| active(lane)) {
                let to = (address[lane].wrapping_add(offset) >> 2) as usize % LANES;
                out[to] = source[lane];
            }
        }
        _ => {
            for (lane, value) in out.iter_mut().enumerate() {
                let from = swizzle_source(offset, lane);
                *value = if active(from) { source[from] } else { 0 };
            }
        }
    }
    for lane in (0..LANES).filter(|&lane| active(lane)) {
        wave.write_vgpr(vdst, lane, out[lane]);
    }
}

/// One lane of a DS atomic at `base`: each element (two for the `2addr` forms) read, combined and
/// written back, the old value returned to vdst where the operation returns one.
#[cfg_attr(not(debug_assertions), inline(always))]
fn ds_atomic(
    wave: &mut Wave,
    lds: &mut [u8],
    lane: usize,
    base: u64,
    (op, wide, two, stride, returns): (AtomicOp, bool, bool, u32, bool),
    [offset0, offset1]: [u32; 2],
    [data0, data1, vdst]: [u32; 3],
) {
    let width = if wide { 8 } else { 4 };
    let operand = |register: u32| {
        if wide {
            wave.vgpr(register, lane) as u64 | (wave.vgpr(register + 1, lane) as u64) << 32
        } else {
            wave.vgpr(register, lane) as u64
        }
    };
    let (first, second) = (operand(data0), operand(data1));
    // `2addr` exchanges swap two elements (data0 at offset0, data1 at offset1).
    let places: &[(u64, u32)] = if two {
        &[((offset0 * stride) as u64 * width, 0), ((offset1 * stride) as u64 * width, 1)]
    } else {
        &[((offset1 << 8 | offset0) as u64, 0)]
    };
    for &(offset, index) in places {
        let at = base + offset;
        let mut buffer = [0u8; 8];
        read(lds, at, &mut buffer[..width as usize]);
        let old = u64::from_le_bytes(buffer);
        // gfx11's compare-and-store takes the new value in data0 and the comparand
        // in data1 (RDNA3 ISA guide, `DS_CMPSTORE_B32`: the reverse of gfx10's
        // `DS_CMPST_B32`); masked or takes the mask in data0 and the bits in data1.
        let (value, compare) = match op {
            AtomicOp::CompareSwap | AtomicOp::CompareSwapFloat | AtomicOp::Wrap => (first, second),
            AtomicOp::MaskOr => (second, first),
            _ if index == 1 => (second, 0),
            _ => (first, 0),
        };
        let new = if wide {
            apply_atomic64(op, old, value, compare)
        } else {
            apply_atomic32(op, old as u32, value as u32, compare as u32) as u64
        };
        write(lds, at, &new.to_le_bytes()[..width as usize]);
        if returns {
            let to = vdst + index * (width as u32 / 4);
            if wide { wave.write_vgpr64(to, lane, old) } else { wave.write_vgpr(to, lane, old as u32) }
        }
    }
}

// LDS addresses are 32-bit: the VGPR plus the offset wraps (a negative VGPR with a positive
// offset is common in compiled code).
#[inline(always)]
fn read(lds: &[u8], at: u64, out: &mut [u8]) {
    match lds.get(at as u32 as usize..at as u32 as usize + out.len()) {
        Some(bytes) => out.copy_from_slice(bytes),
        None => out.fill(0),
    }
}
#[inline(always)]
fn write(lds: &mut [u8], at: u64, data: &[u8]) {
    if let Some(bytes) = lds.get_mut(at as u32 as usize..at as u32 as usize + data.len()) {
        bytes.copy_from_slice(data);
    }
}

/// DS: LDS accesses. Addresses are the VGPR plus the instruction's offset (`offset1:offset0`),
/// or two addresses `offset0`/`offset1` × size (× 64 for `stride64`) for the `2addr` forms.
/// The lane exchanges (`ds_bpermute`, `ds_permute`, `ds_swizzle`) touch no LDS; a lane that
/// reads an inactive lane reads 0 (RDNA3 ISA guide, "LDS Lane-permute Ops").
#[cfg_attr(not(debug_assertions), inline(always))]
fn ds(wave: &mut Wave, instruction: &Instruction, access: &Access, lds: &mut [u8]) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let (addr, data0, data1, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0xFF, (w1 >> 24) & 0xFF);
    let (offset0, offset1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
    if (w0 >> 17) & 1 == 1 {
        return Err(unsupported(wave, instruction)); // GDS
    }
    let (two, stride, returns) = (access.two, access.stride, access.returns);
    let exec = wave.exec();
    if ds_dwords(wave, access, [offset0, offset1], [addr, data0, data1, vdst], lds) {
        return Ok(Flow::Next);
    }
    let m0_base = (wave.read_sgpr(super::wave::M0) & 0xFFFF) + (offset1 << 8 | offset0);
    match access.operation {
        Operation::Append { consume } => {
            let exec = wave.mask64(super::wave::EXEC);
            let mut word = [0u8; 4];
            let at = m0_base as u64;
            read(lds, at, &mut word);
            let old = u32::from_le_bytes(word);
            let count = exec.count_ones();
            let new = if consume { old.wrapping_sub(count) } else { old.wrapping_add(count) };
            write(lds, at, &new.to_le_bytes());
            for lane in (0..wave.lanes()).filter(|lane| exec >> lane & 1 == 1) {
                wave.set_lane_value(vdst, lane, old);
            }
            return Ok(Flow::Next);
        }
        Operation::LaneAddressed { load } => {
            for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                let at = (m0_base as u64).wrapping_add((wave.half as u64 * LANES as u64 + lane as u64) * 4);
                if load {
                    let mut word = [0u8; 4];
                    read(lds, at, &mut word);
                    wave.write_vgpr(vdst, lane, u32::from_le_bytes(word));
                } else {
                    write(lds, at, &wave.vgpr(data0, lane).to_le_bytes());
                }
            }
            return Ok(Flow::Next);
        }
        Operation::Bpermute | Operation::Permute if wave.wide => {
            permute_wide(wave, access, offset1 << 8 | offset0, [addr, data0, vdst]);
            return Ok(Flow::Next);
        }
        Operation::Bpermute | Operation::Permute | Operation::Swizzle => {
            permute(wave, access, offset1 << 8 | offset0, [addr, data0, vdst], exec);
            return Ok(Flow::Next);
        }
        _ => {}
    }
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let base = wave.vgpr(addr, lane) as u64;
        match access.operation {
            Operation::Load { bytes, signed, d16, hi } if two => {
                for (index, offset) in [offset0, offset1].into_iter().enumerate() {
                    let mut buffer = [0u8; 16];
                    let at = base + (offset * stride) as u64 * bytes as u64;
                    sized(&mut buffer, bytes, |out| read(lds, at, out));
                    write_loaded(wave, vdst + (index * bytes / 4) as u32, lane, &buffer[..bytes], signed, d16, hi);
                }
            }
            Operation::Load { bytes, signed, d16, hi } => {
                let mut buffer = [0u8; 16];
                sized(&mut buffer, bytes, |out| read(lds, base + (offset1 << 8 | offset0) as u64, out));
                write_loaded(wave, vdst, lane, &buffer[..bytes], signed, d16, hi);
            }
            Operation::Store { bytes, hi } => {
                let sources: &[(u32, u32)] = if two { &[(data0, offset0), (data1, offset1)] } else { &[(data0, 0)] };
                for &(source, offset) in sources {
                    let mut buffer = store_bytes(wave, source, lane, bytes, hi);
                    let at = if two {
                        base + (offset * stride) as u64 * bytes as u64
                    } else {
                        base + (offset1 << 8 | offset0) as u64
                    };
                    sized(&mut buffer, bytes, |data| write(lds, at, data));
                }
            }
            Operation::Atomic { op, wide } => ds_atomic(
                wave,
                lds,
                lane,
                base,
                (op, wide, two, stride, returns),
                [offset0, offset1],
                [data0, data1, vdst],
            ),
            _ => return Err(unsupported(wave, instruction)),
        }
    }
    Ok(Flow::Next)
}

/// The common DS loads and stores, whole dwords without sign or half-register forms, row by row:
/// each data register's row is read or written once for every lane instead of per lane and
/// byte. Returns false for the other forms, which the general path runs.
#[cfg_attr(not(debug_assertions), inline(always))]
fn ds_dwords(
    wave: &mut Wave,
    access: &Access,
    [offset0, offset1]: [u32; 2],
    [addr, data0, data1, vdst]: [u32; 4],
    lds: &mut [u8],
) -> bool {
    let (bytes, load) = match access.operation {
        Operation::Load { bytes, signed: false, d16: false, .. } if bytes % 4 == 0 => (bytes, true),
        Operation::Store { bytes, hi: false } if bytes % 4 == 0 => (bytes, false),
        _ => return false,
    };
    let dwords = bytes / 4;
    let exec = wave.exec();
    let Some(&addresses) = wave.vgpr.get(addr as usize) else { return false };
    // (byte offset from the address, first data or destination register) per element.
    let elements: [(u32, u32); 2];
    let elements: &[(u32, u32)] = if access.two {
        let scale = access.stride * bytes as u32;
        let second = if load { vdst + dwords as u32 } else { data1 };
        elements = [(offset0 * scale, if load { vdst } else { data0 }), (offset1 * scale, second)];
        &elements
    } else {
        elements = [(offset1 << 8 | offset0, if load { vdst } else { data0 }), (0, 0)];
        &elements[..1]
    };
    // Every lane active and every element in range (the usual case): plain indexed copies.
    // In range for the largest address means in range, without wrapping, for every lane.
    let highest = addresses.iter().fold(0u32, |highest, &address| highest.max(address));
    let farthest = elements.iter().map(|&(offset, _)| offset).max().unwrap_or(0);
    let fits = exec == u32::MAX && highest as u64 + farthest as u64 + bytes as u64 <= lds.len() as u64;
    for &(offset, first) in elements {
        for dword in 0..dwords {
            let Some(row) = wave.vgpr.get_mut(first as usize + dword) else { continue };
            if fits {
                for lane in 0..LANES {
                    let at = (addresses[lane] + offset) as usize + 4 * dword;
                    let word: &mut [u8; 4] = (&mut lds[at..at + 4]).try_into().expect("4 bytes");
                    if load {
                        row[lane] = u32::from_le_bytes(*word);
                    } else {
                        *word = row[lane].to_le_bytes();
                    }
                }
                continue;
            }
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                // LDS addresses are 32-bit and wrap; out of range reads 0 and drops writes.
                let at = addresses[lane].wrapping_add(offset).wrapping_add(4 * dword as u32) as usize;
                match lds.get_mut(at..at + 4) {
                    Some(word) if load => row[lane] = u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
                    Some(word) => word.copy_from_slice(&row[lane].to_le_bytes()),
                    None if load => row[lane] = 0,
                    None => {}
                }
            }
        }
    }
    true
}

/// The lane `ds_swizzle_b32` reads for `lane` (RDNA3 ISA guide, `DS_SWIZZLE_B32`): offset bit 15
/// set is quad-permute mode (two bits per lane of each quad); clear is bit-mask mode over groups
/// of 32 lanes: ((lane & and_mask) | or_mask) ^ xor_mask, the masks in bits 4:0, 9:5 and 14:10.
fn swizzle_source(offset: u32, lane: usize) -> usize {
    if offset & 0x8000 != 0 {
        (lane & !3) | ((offset as usize >> (2 * (lane & 3))) & 3)
    } else {
        let (and, or, xor) = (offset & 31, (offset >> 5) & 31, (offset >> 10) & 31);
        let within = (((lane as u32 & 31) & and) | or) ^ xor;
        (lane & !31) | within as usize
    }
}
