//! Memory instructions: FLAT, GLOBAL and SCRATCH (RDNA3 ISA chapter 10), DS (chapter 11).
//!
//! Global memory goes through [`Memory`], whose refusal is a memory fault. Scratch is per lane,
//! `private_bytes` each: an access outside it faults too. LDS accesses outside the workgroup's
//! allocation read 0 and drop writes, as the hardware's range check does (RDNA3 ISA guide).

use super::launch::{Flow, unsupported};
use super::wave::{LANES, PRIVATE_BASE, SHARED_BASE, Wave};
use super::{AtomicOp, ExecError, Memory, MemoryFault, apply_atomic32, apply_atomic64};
use crate::gfx11::{Encoding, Instruction};

/// What a memory mnemonic does, parsed from its name (`global_load_u16`, `flat_atomic_add_u64`,
/// `ds_store_2addr_stride64_b32`).
#[derive(Clone, Copy, Debug)]
enum Access {
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
}

fn parse(mnemonic: &str) -> Option<Access> {
    let operation = mnemonic.split_once('_')?.1;
    let size = |suffix: &str| -> Option<(usize, bool)> {
        Some(match suffix {
            "u8" | "b8" => (1, false),
            "i8" => (1, true),
            "u16" | "b16" => (2, false),
            "i16" => (2, true),
            "b32" | "u32" | "i32" => (4, false),
            "b64" | "u64" | "i64" => (8, false),
            "b96" => (12, false),
            "b128" => (16, false),
            _ => return None,
        })
    };
    let suffix = operation.rsplit('_').next()?;
    if let Some(rest) = operation.strip_prefix("load_") {
        let (bytes, signed) = size(suffix)?;
        let d16 = rest.starts_with("d16");
        return Some(Access::Load { bytes, signed, d16, hi: rest.starts_with("d16_hi") });
    }
    if let Some(rest) = operation.strip_prefix("store_") {
        let (bytes, _) = size(suffix)?;
        return Some(Access::Store { bytes, hi: rest.starts_with("d16_hi") });
    }
    let atomic = operation.strip_prefix("atomic_").unwrap_or(operation);
    let name = atomic.split('_').next()?;
    let op = match name {
        "add" => AtomicOp::Add,
        "sub" => AtomicOp::Sub,
        "swap" | "storexchg" => AtomicOp::Swap,
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
    Some(Access::Atomic { op, wide: bytes == 8 })
}

pub(crate) fn step(
    wave: &mut Wave,
    instruction: &Instruction,
    memory: &dyn Memory,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    let mnemonic = instruction.mnemonic();
    if instruction.encoding == Encoding::Mubuf {
        // The cache invalidations need nothing on coherent memory; buffer accesses are not
        // modelled.
        return if mnemonic.starts_with("buffer_gl") { Ok(Flow::Next) } else { Err(unsupported(wave, instruction)) };
    }
    let Some(access) = parse(mnemonic) else { return Err(unsupported(wave, instruction)) };
    if instruction.encoding == Encoding::Ds {
        return ds(wave, instruction, access, lds);
    }
    let [w0, w1, _] = instruction.words;
    let (addr, data, saddr, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0x7F, (w1 >> 24) & 0xFF);
    let sve = (w1 >> 23) & 1 == 1;
    let returns = instruction.returns_data();
    let offset = match instruction.encoding {
        Encoding::Flat => (w0 & 0xFFF) as i64,
        _ => (((w0 & 0x1FFF) << 19) as i32 >> 19) as i64,
    };
    let pc = wave.pc;
    let fault = |fault: MemoryFault| ExecError::Fault { pc, fault };
    let exec = wave.exec();
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
        let target = Target::of(instruction.encoding, address, lane).map_err(fault)?;
        match access {
            Access::Load { bytes, signed, d16, hi } => {
                let mut buffer = [0u8; 16];
                target.read(memory, wave, &mut buffer[..bytes]).map_err(fault)?;
                write_loaded(wave, vdst, lane, &buffer[..bytes], signed, d16, hi);
            }
            Access::Store { bytes, hi } => {
                let mut buffer = [0u8; 16];
                for dword in 0..bytes.div_ceil(4) {
                    let value = wave.vgpr(data + dword as u32, lane);
                    buffer[dword * 4..dword * 4 + 4]
                        .copy_from_slice(&if hi { value >> 16 } else { value }.to_le_bytes());
                }
                target.write(memory, wave, &buffer[..bytes]).map_err(fault)?;
            }
            Access::Atomic { op, wide } => {
                let Target::Global(address) = target else { return Err(unsupported(wave, instruction)) };
                let (value, compare) = if wide {
                    let value = wave.vgpr(data, lane) as u64 | (wave.vgpr(data + 1, lane) as u64) << 32;
                    let compare = wave.vgpr(data + 2, lane) as u64 | (wave.vgpr(data + 3, lane) as u64) << 32;
                    (value, compare)
                } else {
                    (wave.vgpr(data, lane) as u64, wave.vgpr(data + 1, lane) as u64)
                };
                let old = if wide {
                    memory.atomic64(address, op, value, compare).map_err(fault)?
                } else {
                    memory.atomic32(address, op, value as u32, compare as u32).map_err(fault)? as u64
                };
                if returns {
                    if wide { wave.write_vgpr64(vdst, lane, old) } else { wave.write_vgpr(vdst, lane, old as u32) }
                }
            }
        }
    }
    Ok(Flow::Next)
}

/// Where one lane's access lands.
enum Target {
    Global(u64),
    /// A byte offset into the lane's scratch.
    Scratch(usize, u64),
}

impl Target {
    fn of(encoding: Encoding, address: u64, lane: usize) -> Result<Target, MemoryFault> {
        let fault = MemoryFault { address, length: 1, write: false };
        match encoding {
            Encoding::Scratch => Ok(Target::Scratch(lane, address)),
            // A flat address in the LDS or private aperture is not modelled: refuse it rather
            // than read global memory at an aperture address.
            _ if address >> 60 == SHARED_BASE >> 60 || address >> 60 == PRIVATE_BASE >> 60 => Err(fault),
            _ => Ok(Target::Global(address)),
        }
    }

    fn read(&self, memory: &dyn Memory, wave: &Wave, out: &mut [u8]) -> Result<(), MemoryFault> {
        match *self {
            Target::Global(address) => memory.read(address, out),
            Target::Scratch(lane, offset) => {
                let range = scratch_range(wave, lane, offset, out.len(), false)?;
                out.copy_from_slice(&wave.scratch[range]);
                Ok(())
            }
        }
    }

    fn write(&self, memory: &dyn Memory, wave: &mut Wave, data: &[u8]) -> Result<(), MemoryFault> {
        match *self {
            Target::Global(address) => memory.write(address, data),
            Target::Scratch(lane, offset) => {
                let range = scratch_range(wave, lane, offset, data.len(), true)?;
                wave.scratch[range].copy_from_slice(data);
                Ok(())
            }
        }
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

/// DS: LDS accesses. Addresses are the VGPR plus the instruction's offset (`offset1:offset0`),
/// or two addresses `offset0`/`offset1` × size (× 64 for `stride64`) for the `2addr` forms.
fn ds(wave: &mut Wave, instruction: &Instruction, access: Access, lds: &mut [u8]) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let (addr, data0, data1, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0xFF, (w1 >> 24) & 0xFF);
    let (offset0, offset1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
    if (w0 >> 17) & 1 == 1 {
        return Err(unsupported(wave, instruction)); // GDS
    }
    let mnemonic = instruction.mnemonic();
    let two = mnemonic.contains("2addr");
    let stride = if mnemonic.contains("stride64") { 64 } else { 1 };
    let returns = mnemonic.contains("_rtn_");
    let exec = wave.exec();
    // LDS addresses are 32-bit: the VGPR plus the offset wraps (a negative VGPR with a positive
    // offset is common in compiled code).
    let read = |lds: &[u8], at: u64, out: &mut [u8]| match lds.get(at as u32 as usize..at as u32 as usize + out.len()) {
        Some(bytes) => out.copy_from_slice(bytes),
        None => out.fill(0),
    };
    let write = |lds: &mut [u8], at: u64, data: &[u8]| {
        if let Some(bytes) = lds.get_mut(at as u32 as usize..at as u32 as usize + data.len()) {
            bytes.copy_from_slice(data);
        }
    };
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let base = wave.vgpr(addr, lane) as u64;
        match access {
            Access::Load { bytes, signed, d16, hi } if two => {
                for (index, offset) in [offset0, offset1].into_iter().enumerate() {
                    let mut buffer = [0u8; 8];
                    read(lds, base + (offset * stride) as u64 * bytes as u64, &mut buffer[..bytes]);
                    write_loaded(wave, vdst + (index * bytes / 4) as u32, lane, &buffer[..bytes], signed, d16, hi);
                }
            }
            Access::Load { bytes, signed, d16, hi } => {
                let mut buffer = [0u8; 16];
                read(lds, base + (offset1 << 8 | offset0) as u64, &mut buffer[..bytes]);
                write_loaded(wave, vdst, lane, &buffer[..bytes], signed, d16, hi);
            }
            Access::Store { bytes, hi } => {
                let sources: &[(u32, u32)] = if two { &[(data0, offset0), (data1, offset1)] } else { &[(data0, 0)] };
                for &(source, offset) in sources {
                    let mut buffer = [0u8; 16];
                    for dword in 0..bytes.div_ceil(4) {
                        let value = wave.vgpr(source + dword as u32, lane);
                        buffer[dword * 4..dword * 4 + 4]
                            .copy_from_slice(&if hi { value >> 16 } else { value }.to_le_bytes());
                    }
                    let at = if two {
                        base + (offset * stride) as u64 * bytes as u64
                    } else {
                        base + (offset1 << 8 | offset0) as u64
                    };
                    write(lds, at, &buffer[..bytes]);
                }
            }
            Access::Atomic { op, wide } => {
                if two {
                    return Err(unsupported(wave, instruction));
                }
                let at = base + (offset1 << 8 | offset0) as u64;
                let width = if wide { 8 } else { 4 };
                let mut buffer = [0u8; 8];
                read(lds, at, &mut buffer[..width]);
                let old = u64::from_le_bytes(buffer);
                // DS compare-and-store takes the comparand in data0 and the new value in
                // data1 (RDNA3 ISA guide, `DS_CMPSTORE_B32`).
                let operand = |register: u32| {
                    if wide {
                        wave.vgpr(register, lane) as u64 | (wave.vgpr(register + 1, lane) as u64) << 32
                    } else {
                        wave.vgpr(register, lane) as u64
                    }
                };
                let (value, compare) =
                    if op == AtomicOp::CompareSwap { (operand(data1), operand(data0)) } else { (operand(data0), 0) };
                let new = if wide {
                    apply_atomic64(op, old, value, compare)
                } else {
                    apply_atomic32(op, old as u32, value as u32, compare as u32) as u64
                };
                write(lds, at, &new.to_le_bytes()[..width]);
                if returns {
                    if wide { wave.write_vgpr64(vdst, lane, old) } else { wave.write_vgpr(vdst, lane, old as u32) }
                }
            }
        }
    }
    Ok(Flow::Next)
}
