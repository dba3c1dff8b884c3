//! Scalar instructions: SOP1, SOP2, SOPC, SOPK, SOPP and SMEM (RDNA3 ISA chapters 4 and 5 for
//! their operations, chapter 15 for the fields).

use super::wave::{EXEC, Kind, M0, VCC, Wave};
use super::wave::{Flow, unsupported};
use super::{ExecError, Memory};
use crate::gfx11::{Encoding, Instruction, Opcode};

/// Hardware register ids of `s_getreg`/`s_setreg` (LLVM's `HW_REG_*` for gfx11).
const HW_REG_MODE: u32 = 1;
const HW_REG_SHADER_CYCLES: u32 = 29;

fn sign_extend(value: u32, bits: u32) -> i32 {
    ((value << (32 - bits)) as i32) >> (32 - bits)
}

#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step<M: Memory + ?Sized>(
    wave: &mut Wave,
    instruction: &Instruction,
    memory: &M,
) -> Result<Flow, ExecError> {
    match instruction.encoding {
        Encoding::Sopp => sopp(wave, instruction),
        Encoding::Smem => smem(wave, instruction, memory),
        Encoding::Sopk => sopk(wave, instruction),
        Encoding::Sop1 => sop1(wave, instruction, Sources::read(wave, instruction, true)),
        Encoding::Sopc => sopc(wave, instruction, Sources::read(wave, instruction, false)),
        _ => sop2(wave, instruction, Sources::read(wave, instruction, false)),
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn sopp(wave: &mut Wave, instruction: &Instruction) -> Result<Flow, ExecError> {
    let simm = instruction.words[0] & 0xFFFF;
    // Branch targets: PC of the next instruction + simm16 × 4 (RDNA3 ISA guide).
    let target = wave.pc.wrapping_add(4).wrapping_add_signed(sign_extend(simm, 16) as i64 * 4);
    let jump_if = |condition: bool| if condition { Flow::Jump(target) } else { Flow::Next };
    Ok(match instruction.opcode() {
        Opcode::SEndpgm => Flow::End,
        Opcode::SBranch => Flow::Jump(target),
        Opcode::SCbranchScc0 => jump_if(!wave.scc),
        Opcode::SCbranchScc1 => jump_if(wave.scc),
        // Wave64 tests the whole 64-bit mask.
        Opcode::SCbranchVccz => jump_if(wave.mask64(VCC) == 0),
        Opcode::SCbranchVccnz => jump_if(wave.mask64(VCC) != 0),
        Opcode::SCbranchExecz => jump_if(wave.mask64(EXEC) == 0),
        Opcode::SCbranchExecnz => jump_if(wave.mask64(EXEC) != 0),
        Opcode::SBarrier => Flow::Barrier,
        Opcode::SSleep => Flow::Sleep,
        // Memory is coherent and every access completes before the next instruction, so the
        // waits, hints and cache controls have nothing to do.
        Opcode::SNop
        | Opcode::SWaitcnt
        | Opcode::SWaitcntDepctr
        | Opcode::SDelayAlu
        | Opcode::SClause
        | Opcode::SSetInstPrefetchDistance
        | Opcode::SIcacheInv
        | Opcode::SSetprio
        | Opcode::SSendmsg
        // Waits for the wave's outstanding work, which the interpreter finishes as it issues it;
        // performance hints and thread-trace data, which nothing here collects; a wakeup of
        // sleeping waves, whose sleep already yields (RDNA3 ISA guide, SOPP).
        | Opcode::SWaitIdle
        | Opcode::SIncperflevel
        | Opcode::SDecperflevel
        | Opcode::STtracedata
        | Opcode::STtracedataImm
        | Opcode::SWakeup => Flow::Next,
        // MODE bits 3:0 (rounding) and 7:4 (denormals), RDNA3 ISA guide "MODE".
        Opcode::SRoundMode => {
            wave.mode = (wave.mode & !0xF) | (simm & 0xF);
            Flow::Next
        }
        Opcode::SDenormMode => {
            wave.mode = (wave.mode & !0xF0) | (simm & 0xF) << 4;
            Flow::Next
        }
        Opcode::STrap => return Err(ExecError::Trap { pc: wave.pc, reason: "s_trap" }),
        _ => return Err(unsupported(wave, instruction)),
    })
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn sopk(wave: &mut Wave, instruction: &Instruction) -> Result<Flow, ExecError> {
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    let sdst = (w0 >> 16) & 0x7F;
    let signed = sign_extend(simm, 16);
    let current = wave.scalar(sdst, None, Kind::Int);
    match instruction.opcode() {
        Opcode::SMovkI32 => wave.write_sgpr(sdst, signed as u32),
        Opcode::SCmovkI32 => {
            if wave.scc {
                wave.write_sgpr(sdst, signed as u32)
            }
        }
        Opcode::SAddkI32 => {
            let (sum, overflow) = (current as i32).overflowing_add(signed);
            wave.write_sgpr(sdst, sum as u32);
            wave.scc = overflow;
        }
        Opcode::SMulkI32 => wave.write_sgpr(sdst, (current as i32).wrapping_mul(signed) as u32),
        // The code's ISA version, for tools: no operation (RDNA3 ISA guide, SOPK).
        Opcode::SVersion => {}
        // The return address (the next instruction's) to sdst, then a branch as SOPP's.
        Opcode::SCallB64 => {
            let next = wave.pc.wrapping_add(4);
            wave.write_sgpr64(sdst, next);
            return Ok(Flow::Jump(next.wrapping_add_signed(signed as i64 * 4)));
        }
        Opcode::SCmpkEqI32 => wave.scc = current as i32 == signed,
        Opcode::SCmpkLgI32 => wave.scc = current as i32 != signed,
        Opcode::SCmpkGtI32 => wave.scc = current as i32 > signed,
        Opcode::SCmpkGeI32 => wave.scc = current as i32 >= signed,
        Opcode::SCmpkLtI32 => wave.scc = (current as i32) < signed,
        Opcode::SCmpkLeI32 => wave.scc = current as i32 <= signed,
        Opcode::SCmpkEqU32 => wave.scc = current == simm,
        Opcode::SCmpkLgU32 => wave.scc = current != simm,
        Opcode::SCmpkGtU32 => wave.scc = current > simm,
        Opcode::SCmpkGeU32 => wave.scc = current >= simm,
        Opcode::SCmpkLtU32 => wave.scc = current < simm,
        Opcode::SCmpkLeU32 => wave.scc = current <= simm,
        Opcode::SWaitcntVscnt | Opcode::SWaitcntVmcnt | Opcode::SWaitcntExpcnt | Opcode::SWaitcntLgkmcnt => {}
        // Writes to FLAT_SCRATCH (hwreg 20, 21) set up scratch, which the interpreter addresses
        // per lane itself.
        Opcode::SSetregB32 | Opcode::SSetregImm32B32 if matches!(simm & 0x3F, 20 | 21) => {}
        Opcode::SSetregB32 | Opcode::SSetregImm32B32 | Opcode::SGetregB32 => {
            let (id, offset, size) = (simm & 0x3F, (simm >> 6) & 0x1F, ((simm >> 11) & 0x1F) + 1);
            let mask = if size >= 32 { u32::MAX } else { (1u32 << size) - 1 };
            let register = match id {
                HW_REG_MODE => wave.mode,
                // A 20-bit cycle counter: the agent's clock (the soft runtime's one clock).
                HW_REG_SHADER_CYCLES if instruction.opcode() == Opcode::SGetregB32 => {
                    ((wave.realtime)() & 0xF_FFFF) as u32
                }
                _ => return Err(unsupported(wave, instruction)),
            };
            if instruction.opcode() == Opcode::SGetregB32 {
                wave.write_sgpr(sdst, (register >> offset) & mask);
            } else {
                // s_setreg_b32 writes the SGPR the sdst field names; the imm32 form its literal.
                let value = match instruction.opcode() {
                    Opcode::SSetregB32 => current,
                    _ => instruction.literal().unwrap_or(0),
                };
                wave.mode = (register & !(mask << offset)) | ((value & mask) << offset);
            }
        }
        _ => return Err(unsupported(wave, instruction)),
    }
    Ok(Flow::Next)
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn smem<M: Memory + ?Sized>(wave: &mut Wave, instruction: &Instruction, memory: &M) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let dwords = match instruction.opcode() {
        Opcode::SLoadB32 => 1,
        Opcode::SLoadB64 => 2,
        Opcode::SLoadB128 => 4,
        Opcode::SLoadB256 => 8,
        Opcode::SLoadB512 => 16,
        Opcode::SBufferLoadB32 => 1,
        Opcode::SBufferLoadB64 => 2,
        Opcode::SBufferLoadB128 => 4,
        Opcode::SBufferLoadB256 => 8,
        Opcode::SBufferLoadB512 => 16,
        Opcode::SDcacheInv | Opcode::SGl1Inv => return Ok(Flow::Next),
        _ => return Err(unsupported(wave, instruction)),
    };
    let buffer = matches!(
        instruction.opcode(),
        Opcode::SBufferLoadB32
            | Opcode::SBufferLoadB64
            | Opcode::SBufferLoadB128
            | Opcode::SBufferLoadB256
            | Opcode::SBufferLoadB512
    );
    let offset = sign_extend(w1 & 0x1F_FFFF, 21) as i64;
    let soffset = wave.scalar(w1 >> 25, None, Kind::Int) as u64;
    let mut bytes = [0u8; 64];
    let sdata = (w0 >> 6) & 0x7F;
    let fault = |fault| ExecError::Fault { pc: wave.pc, fault };
    if buffer {
        // S_BUFFER_LOAD: sbase names a V# in four SGPRs (base in bits 47:0, num_records in dword
        // 2); each dword at or past num_records bytes reads 0 (RDNA3 ISA guide, "Scalar Memory
        // Operations": the range check is done per dword).
        let sbase = (w0 & 0x3F) << 1;
        let resource: [u32; 4] = core::array::from_fn(|index| wave.read_sgpr(sbase + index as u32));
        let base = resource[0] as u64 | ((resource[1] & 0xFFFF) as u64) << 32;
        let records = resource[2] as u64;
        let start = (offset as u64).wrapping_add(soffset) & !3;
        for index in 0..dwords {
            let at = start.wrapping_add(index as u64 * 4);
            if at.checked_add(4).is_some_and(|end| end <= records) {
                memory.read(base.wrapping_add(at), &mut bytes[index * 4..index * 4 + 4]).map_err(fault)?;
            }
        }
    } else {
        let base = wave.scalar64((w0 & 0x3F) << 1, None, Kind::Int) & 0xFFFF_FFFF_FFFF;
        // The address is dword-aligned: its two low bits are ignored (RDNA3 ISA guide).
        let address = base.wrapping_add_signed(offset).wrapping_add(soffset) & !3;
        memory.read(address, &mut bytes[..dwords * 4]).map_err(fault)?;
    }
    for index in 0..dwords {
        let value = u32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().unwrap());
        wave.write_sgpr(sdata + index as u32, value);
    }
    Ok(Flow::Next)
}

/// The sources of a SOP2, SOP1 or SOPC instruction, read once: 64 bits (`a`, `b`) and their
/// 32-bit operands (`a32`, `b32`: an aperture register's high half).
#[derive(Clone, Copy)]
struct Sources {
    sdst: u32,
    ssrc0: u32,
    a: u64,
    b: u64,
    a32: u32,
    b32: u32,
    pc: u64,
    scc: bool,
}

impl Sources {
    /// Reads the sources of `instruction`, a SOP1 (`one_source`), SOP2 or SOPC instruction.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn read(wave: &Wave, instruction: &Instruction, one_source: bool) -> Sources {
        let w0 = instruction.words[0];
        let literal = instruction.literal();
        let (sdst, ssrc0, ssrc1) = ((w0 >> 16) & 0x7F, w0 & 0xFF, (w0 >> 8) & 0xFF);
        let a = wave.scalar64(ssrc0, literal, Kind::Int);
        let b = if one_source { 0 } else { wave.scalar64(ssrc1, literal, Kind::Int) };
        // A 32-bit operand of an aperture register is its base's high half.
        let half =
            |field: u32, value: u64| if matches!(field, 235 | 237) { (value >> 32) as u32 } else { value as u32 };
        let (a32, b32) = (half(ssrc0, a), if one_source { 0 } else { half(ssrc1, b) });
        let pc = wave.pc;
        let scc = wave.scc;
        Sources { sdst, ssrc0, a, b, a32, b32, pc, scc }
    }
}

/// SOP2: arithmetic (SCC the carry, borrow or signed overflow), bitwise operations and shifts
/// (SCC = result != 0), bit fields, packs and selects.
#[cfg_attr(not(debug_assertions), inline(always))]
fn sop2(wave: &mut Wave, instruction: &Instruction, sources: Sources) -> Result<Flow, ExecError> {
    let Sources { sdst, a, b, a32, b32, scc, .. } = sources;
    let write = |wave: &mut Wave, value: u32| wave.write_sgpr(sdst, value);
    let write64 = |wave: &mut Wave, value: u64| wave.write_sgpr64(sdst, value);
    match instruction.opcode() {
        // SOP2: arithmetic. SCC is the carry/borrow or signed overflow.
        Opcode::SAddU32 => {
            let (sum, carry) = a32.overflowing_add(b32);
            write(wave, sum);
            wave.scc = carry;
        }
        Opcode::SSubU32 => {
            let (difference, borrow) = a32.overflowing_sub(b32);
            write(wave, difference);
            wave.scc = borrow;
        }
        Opcode::SAddcU32 => {
            let sum = a32 as u64 + b32 as u64 + scc as u64;
            write(wave, sum as u32);
            wave.scc = sum >> 32 != 0;
        }
        Opcode::SSubbU32 => {
            let difference = (a32 as u64).wrapping_sub(b32 as u64).wrapping_sub(scc as u64);
            write(wave, difference as u32);
            wave.scc = (b32 as u64 + scc as u64) > a32 as u64;
        }
        Opcode::SAddI32 => {
            let (sum, overflow) = (a32 as i32).overflowing_add(b32 as i32);
            write(wave, sum as u32);
            wave.scc = overflow;
        }
        Opcode::SSubI32 => {
            let (difference, overflow) = (a32 as i32).overflowing_sub(b32 as i32);
            write(wave, difference as u32);
            wave.scc = overflow;
        }
        Opcode::SMulI32 => write(wave, (a32 as i32).wrapping_mul(b32 as i32) as u32),
        Opcode::SMulHiU32 => write(wave, ((a32 as u64 * b32 as u64) >> 32) as u32),
        Opcode::SMulHiI32 => write(wave, ((a32 as i32 as i64 * b32 as i32 as i64) >> 32) as u32),
        // SCC: whether S0 is the one selected, which for min is S0 < S1 and for max S0 >= S1
        // (RDNA3 ISA guide, S_MIN_I32 and S_MAX_I32): equal sources clear it for min only.
        Opcode::SMinU32 | Opcode::SMaxU32 | Opcode::SMinI32 | Opcode::SMaxI32 => {
            let (value, first) = match instruction.opcode() {
                Opcode::SMinU32 => (a32.min(b32), a32 < b32),
                Opcode::SMaxU32 => (a32.max(b32), a32 >= b32),
                Opcode::SMinI32 => ((a32 as i32).min(b32 as i32) as u32, (a32 as i32) < b32 as i32),
                _ => ((a32 as i32).max(b32 as i32) as u32, a32 as i32 >= b32 as i32),
            };
            write(wave, value);
            wave.scc = first;
        }
        Opcode::SAbsdiffI32 => set32(wave, sdst, (a32 as i32).wrapping_sub(b32 as i32).unsigned_abs()),
        // A mask of S0 bits shifted left by S1 (RDNA3 ISA guide, S_BFM): no SCC.
        Opcode::SBfmB32 => write(wave, mask32(a32 & 31) << (b32 & 31)),
        Opcode::SBfmB64 => write64(wave, mask64(a32 & 63) << (b32 & 63)),
        Opcode::SPackLlB32B16 => write(wave, (a32 & 0xFFFF) | b32 << 16),
        Opcode::SPackLhB32B16 => write(wave, (a32 & 0xFFFF) | (b32 & 0xFFFF_0000)),
        Opcode::SPackHhB32B16 => write(wave, a32 >> 16 | (b32 & 0xFFFF_0000)),
        Opcode::SPackHlB32B16 => write(wave, a32 >> 16 | b32 << 16),
        Opcode::SCselectB32 => write(wave, if scc { a32 } else { b32 }),
        Opcode::SCselectB64 => write64(wave, if scc { a } else { b }),
        // Bitwise: SCC = result != 0.
        Opcode::SAndB32
        | Opcode::SOrB32
        | Opcode::SXorB32
        | Opcode::SAndNot1B32
        | Opcode::SOrNot1B32
        | Opcode::SNandB32
        | Opcode::SNorB32
        | Opcode::SXnorB32 => {
            let value = bitwise(instruction.opcode(), a, b) as u32;
            write(wave, value);
            wave.scc = value != 0;
        }
        Opcode::SAndB64
        | Opcode::SOrB64
        | Opcode::SXorB64
        | Opcode::SAndNot1B64
        | Opcode::SOrNot1B64
        | Opcode::SNandB64
        | Opcode::SNorB64
        | Opcode::SXnorB64 => {
            let value = bitwise(instruction.opcode(), a, b);
            write64(wave, value);
            wave.scc = value != 0;
        }
        Opcode::SLshlB32 => set32(wave, sdst, a32 << (b32 & 31)),
        Opcode::SLshrB32 => set32(wave, sdst, a32 >> (b32 & 31)),
        Opcode::SAshrI32 => set32(wave, sdst, ((a32 as i32) >> (b32 & 31)) as u32),
        Opcode::SLshlB64 => set64(wave, sdst, a << (b32 & 63)),
        Opcode::SLshrB64 => set64(wave, sdst, a >> (b32 & 63)),
        Opcode::SAshrI64 => set64(wave, sdst, ((a as i64) >> (b32 & 63)) as u64),
        Opcode::SLshl1AddU32 | Opcode::SLshl2AddU32 | Opcode::SLshl3AddU32 | Opcode::SLshl4AddU32 => {
            let shift = match instruction.opcode() {
                Opcode::SLshl1AddU32 => 1,
                Opcode::SLshl2AddU32 => 2,
                Opcode::SLshl3AddU32 => 3,
                _ => 4,
            };
            let sum = ((a32 as u64) << shift) + b32 as u64;
            write(wave, sum as u32);
            wave.scc = sum >> 32 != 0;
        }
        Opcode::SBfeU32 | Opcode::SBfeI32 => {
            let (offset, size) = (b32 & 31, (b32 >> 16) & 0x7F);
            let field = if size == 0 { 0 } else { (a32 >> offset) & mask32(size) };
            let value = if instruction.opcode() == Opcode::SBfeI32 && size > 0 && size < 32 {
                sign_extend(field, size) as u32
            } else {
                field
            };
            set32(wave, sdst, value);
        }
        Opcode::SBfeU64 | Opcode::SBfeI64 => {
            let (offset, size) = (b32 & 63, (b32 >> 16) & 0x7F);
            let field = if size == 0 { 0 } else { (a >> offset) & mask64(size) };
            let value = if instruction.opcode() == Opcode::SBfeI64 && size > 0 && size < 64 {
                ((field << (64 - size)) as i64 >> (64 - size)) as u64
            } else {
                field
            };
            set64(wave, sdst, value);
        }
        _ => return Err(unsupported(wave, instruction)),
    }
    Ok(Flow::Next)
}

/// SOPC: compares and bit tests, which set SCC.
#[cfg_attr(not(debug_assertions), inline(always))]
fn sopc(wave: &mut Wave, instruction: &Instruction, sources: Sources) -> Result<Flow, ExecError> {
    let Sources { a, b, a32, b32, .. } = sources;
    match instruction.opcode() {
        // SOPC: compares set SCC.
        Opcode::SCmpEqU32 | Opcode::SCmpEqI32 => wave.scc = a32 == b32,
        Opcode::SCmpLgU32 | Opcode::SCmpLgI32 => wave.scc = a32 != b32,
        Opcode::SCmpGtU32 => wave.scc = a32 > b32,
        Opcode::SCmpGeU32 => wave.scc = a32 >= b32,
        Opcode::SCmpLtU32 => wave.scc = a32 < b32,
        Opcode::SCmpLeU32 => wave.scc = a32 <= b32,
        Opcode::SCmpGtI32 => wave.scc = a32 as i32 > b32 as i32,
        Opcode::SCmpGeI32 => wave.scc = a32 as i32 >= b32 as i32,
        Opcode::SCmpLtI32 => wave.scc = (a32 as i32) < b32 as i32,
        Opcode::SCmpLeI32 => wave.scc = a32 as i32 <= b32 as i32,
        Opcode::SCmpEqU64 => wave.scc = a == b,
        Opcode::SCmpLgU64 => wave.scc = a != b,
        Opcode::SBitcmp0B32 => wave.scc = a32 >> (b32 & 31) & 1 == 0,
        Opcode::SBitcmp1B32 => wave.scc = a32 >> (b32 & 31) & 1 == 1,
        Opcode::SBitcmp0B64 => wave.scc = a >> (b32 & 63) & 1 == 0,
        Opcode::SBitcmp1B64 => wave.scc = a >> (b32 & 63) & 1 == 1,
        _ => return Err(unsupported(wave, instruction)),
    }
    Ok(Flow::Next)
}

/// SOP1: moves, bit counts and bit sets, quad masks, the program counter, and the EXEC masks
/// (`s_*_saveexec`, `s_*_wrexec`).
#[cfg_attr(not(debug_assertions), inline(always))]
fn sop1(wave: &mut Wave, instruction: &Instruction, sources: Sources) -> Result<Flow, ExecError> {
    let Sources { sdst, ssrc0, a, a32, pc, scc, .. } = sources;
    let write = |wave: &mut Wave, value: u32| wave.write_sgpr(sdst, value);
    let write64 = |wave: &mut Wave, value: u64| wave.write_sgpr64(sdst, value);
    match instruction.opcode() {
        // SOP1.
        Opcode::SMovB32 => write(wave, a32),
        Opcode::SMovB64 => write64(wave, a),
        Opcode::SCmovB32 => {
            if scc {
                write(wave, a32)
            }
        }
        Opcode::SCmovB64 => {
            if scc {
                write64(wave, a)
            }
        }
        Opcode::SNotB32 => set32(wave, sdst, !a32),
        Opcode::SNotB64 => set64(wave, sdst, !a),
        Opcode::SBrevB64 => write64(wave, a.reverse_bits()),
        Opcode::SClzI32U64 => write(wave, if a == 0 { u32::MAX } else { a.leading_zeros() }),
        Opcode::SBcnt0I32B64 => set32(wave, sdst, a.count_zeros()),
        Opcode::SBrevB32 => write(wave, a32.reverse_bits()),
        Opcode::SBcnt1I32B32 => set32(wave, sdst, a32.count_ones()),
        Opcode::SBcnt1I32B64 => set32(wave, sdst, a.count_ones()),
        Opcode::SCtzI32B32 => write(wave, if a32 == 0 { u32::MAX } else { a32.trailing_zeros() }),
        Opcode::SCtzI32B64 => write(wave, if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        Opcode::SClzI32U32 => write(wave, if a32 == 0 { u32::MAX } else { a32.leading_zeros() }),
        Opcode::SAbsI32 => set32(wave, sdst, (a32 as i32).unsigned_abs()),
        Opcode::SBcnt0I32B32 => set32(wave, sdst, a32.count_zeros()),
        // Leading bits equal to the sign bit, the sign bit not counted; -1 for 0 and -1.
        Opcode::SClsI32 => write(wave, leading_sign_bits(a32 as u64, 32)),
        Opcode::SClsI32I64 => write(wave, leading_sign_bits(a, 64)),
        // D[S0] = 0 or 1, the rest of D kept.
        Opcode::SBitset0B32 => write(wave, wave.read_sgpr(sdst) & !(1 << (a32 & 31))),
        Opcode::SBitset1B32 => write(wave, wave.read_sgpr(sdst) | 1 << (a32 & 31)),
        Opcode::SBitset0B64 => write64(wave, wave.scalar64(sdst, None, Kind::Int) & !(1 << (a32 & 63))),
        Opcode::SBitset1B64 => write64(wave, wave.scalar64(sdst, None, Kind::Int) | 1 << (a32 & 63)),
        // Each bit of S0's low half twice.
        Opcode::SBitreplicateB64B32 => {
            write64(wave, (0..32).fold(0u64, |out, bit| out | (((a32 >> bit) & 1) as u64 * 3) << (2 * bit)))
        }
        // One bit per quad of lanes: whether any of its four is set.
        Opcode::SQuadmaskB32 => set32(wave, sdst, quadmask(a32 as u64, 8) as u32),
        Opcode::SQuadmaskB64 => set64(wave, sdst, quadmask(a, 16)),
        // Whole quads: every lane of a quad with any lane set (whole quad mode).
        Opcode::SWqmB32 => set32(wave, sdst, whole_quads(a32 as u64, 8) as u32),
        Opcode::SWqmB64 => set64(wave, sdst, whole_quads(a, 16)),
        // SGPRs indexed by M0 (RDNA3 ISA guide, "S_MOVRELS" and siblings): the source (movrels),
        // the destination (movreld) or both (movrelsd_2: M0[9:0] the source's, M0[25:16] the
        // destination's). An index past the SGPRs fails the wave.
        Opcode::SMovrelsB32
        | Opcode::SMovrelsB64
        | Opcode::SMovreldB32
        | Opcode::SMovreldB64
        | Opcode::SMovrelsd2B32 => movrel(wave, instruction, sdst, ssrc0)?,
        Opcode::SSextI32I8 => write(wave, a32 as i8 as i32 as u32),
        Opcode::SSextI32I16 => write(wave, a32 as i16 as i32 as u32),
        Opcode::SGetpcB64 => write64(wave, pc + 4),
        Opcode::SSetpcB64 => return Ok(Flow::Jump(a)),
        Opcode::SSwappcB64 => {
            write64(wave, pc + 4);
            return Ok(Flow::Jump(a));
        }
        // Save EXEC to sdst, then EXEC = op(source, EXEC); SCC = EXEC != 0.
        Opcode::SAndSaveexecB32
        | Opcode::SOrSaveexecB32
        | Opcode::SXorSaveexecB32
        | Opcode::SAndNot1SaveexecB32
        | Opcode::SOrNot1SaveexecB32
        | Opcode::SAndNot0SaveexecB32
        | Opcode::SOrNot0SaveexecB32
        | Opcode::SNandSaveexecB32
        | Opcode::SNorSaveexecB32
        | Opcode::SXnorSaveexecB32 => {
            let exec = wave.exec();
            write(wave, exec);
            let value = saveexec(instruction.opcode(), a32 as u64, exec as u64) as u32;
            wave.write_sgpr(EXEC, value);
            wave.scc = value != 0;
        }
        // The wave64 forms, on the EXEC pair.
        Opcode::SAndSaveexecB64
        | Opcode::SOrSaveexecB64
        | Opcode::SXorSaveexecB64
        | Opcode::SAndNot1SaveexecB64
        | Opcode::SOrNot1SaveexecB64
        | Opcode::SAndNot0SaveexecB64
        | Opcode::SOrNot0SaveexecB64
        | Opcode::SNandSaveexecB64
        | Opcode::SNorSaveexecB64
        | Opcode::SXnorSaveexecB64 => {
            let exec = wave.scalar64(EXEC, None, Kind::Int);
            write64(wave, exec);
            let value = saveexec(instruction.opcode(), a, exec);
            wave.write_sgpr64(EXEC, value);
            wave.scc = value != 0;
        }
        // EXEC = op(source, EXEC) written to sdst and EXEC; SCC = result != 0 (RDNA3 ISA guide,
        // SOP1 "wrexec").
        Opcode::SAndNot0WrexecB32 | Opcode::SAndNot1WrexecB32 => {
            let exec = wave.exec();
            let value = if instruction.opcode() == Opcode::SAndNot0WrexecB32 { !a32 & exec } else { a32 & !exec };
            wave.write_sgpr(EXEC, value);
            write(wave, value);
            wave.scc = value != 0;
        }
        Opcode::SAndNot0WrexecB64 | Opcode::SAndNot1WrexecB64 => {
            let exec = wave.scalar64(EXEC, None, Kind::Int);
            let value = if instruction.opcode() == Opcode::SAndNot0WrexecB64 { !a & exec } else { a & !exec };
            wave.write_sgpr64(EXEC, value);
            write64(wave, value);
            wave.scc = value != 0;
        }
        Opcode::SSendmsgRtnB64 | Opcode::SSendmsgRtnB32 => {
            // MSG_RTN_GET_REALTIME (131) reads the agent's clock; others are not modelled.
            if ssrc0 != 131 {
                return Err(unsupported(wave, instruction));
            }
            let value = (wave.realtime)();
            if instruction.opcode() == Opcode::SSendmsgRtnB64 {
                write64(wave, value)
            } else {
                write(wave, value as u32)
            }
        }
        _ => return Err(unsupported(wave, instruction)),
    }
    Ok(Flow::Next)
}

/// The M0-relative SGPR moves (`s_movrels*`, `s_movreld*`, `s_movrelsd_2`).
// SGPRs indexed by M0 (RDNA3 ISA guide, "S_MOVRELS" and siblings): the source (movrels),
// the destination (movreld) or both (movrelsd_2: M0[9:0] the source's, M0[25:16] the
// destination's). An index past the SGPRs fails the wave.
#[cfg_attr(not(debug_assertions), inline(always))]
fn movrel(wave: &mut Wave, instruction: &Instruction, sdst: u32, ssrc0: u32) -> Result<(), ExecError> {
    let m0 = wave.read_sgpr(M0);
    let (source_index, destination_index) = match instruction.opcode() {
        Opcode::SMovrelsB32 | Opcode::SMovrelsB64 => (m0, 0),
        Opcode::SMovreldB32 | Opcode::SMovreldB64 => (0, m0),
        _ => (m0 & 0x3FF, (m0 >> 16) & 0x3FF),
    };
    let pair = matches!(instruction.opcode(), Opcode::SMovrelsB64 | Opcode::SMovreldB64);
    let width = if pair { 2 } else { 1 };
    // M0 may be any value: an index that overflows is out of range like any other (a
    // wrapped sum would name a register in range).
    let in_range = |base: u32, index: u32| base.checked_add(index).filter(|&at| base <= 105 && at + width <= 106);
    let (Some(source), Some(destination)) = (in_range(ssrc0, source_index), in_range(sdst, destination_index)) else {
        return Err(unsupported(wave, instruction));
    };
    for index in 0..width {
        let value = wave.read_sgpr(source + index);
        wave.write_sgpr(destination + index, value);
    }
    Ok(())
}

fn set32(wave: &mut Wave, sdst: u32, value: u32) {
    wave.write_sgpr(sdst, value);
    wave.scc = value != 0;
}

fn set64(wave: &mut Wave, sdst: u32, value: u64) {
    wave.write_sgpr64(sdst, value);
    wave.scc = value != 0;
}

/// `S_CLS_I32`: leading bits of the `bits`-bit `value` equal to its sign bit, the sign bit not
/// counted; 0xFFFF_FFFF when all are (0 and -1).
fn leading_sign_bits(value: u64, bits: u32) -> u32 {
    let value = value << (64 - bits);
    let flipped = if (value as i64) < 0 { !value } else { value } << 1;
    let count = flipped.leading_zeros();
    if count >= bits - 1 { u32::MAX } else { count }
}

/// Bit q of the result: whether any of bits 4q..4q+3 of `value` is set, for `quads` quads.
fn quadmask(value: u64, quads: u32) -> u64 {
    (0..quads).fold(0, |out, quad| out | (((value >> (4 * quad)) & 0xF != 0) as u64) << quad)
}

/// Every bit of each quad of `value` that has one set.
fn whole_quads(value: u64, quads: u32) -> u64 {
    (0..quads).fold(0, |out, quad| out | if (value >> (4 * quad)) & 0xF != 0 { 0xF << (4 * quad) } else { 0 })
}

fn mask32(size: u32) -> u32 {
    if size >= 32 { u32::MAX } else { (1 << size) - 1 }
}

fn mask64(size: u32) -> u64 {
    if size >= 64 { u64::MAX } else { (1 << size) - 1 }
}

fn bitwise(opcode: Opcode, a: u64, b: u64) -> u64 {
    match opcode {
        Opcode::SAndB32 | Opcode::SAndB64 => a & b,
        Opcode::SOrB32 | Opcode::SOrB64 => a | b,
        Opcode::SXorB32 | Opcode::SXorB64 => a ^ b,
        Opcode::SAndNot1B32 | Opcode::SAndNot1B64 => a & !b,
        Opcode::SOrNot1B32 | Opcode::SOrNot1B64 => a | !b,
        Opcode::SNandB32 | Opcode::SNandB64 => !(a & b),
        Opcode::SNorB32 | Opcode::SNorB64 => !(a | b),
        _ => !(a ^ b),
    }
}

fn saveexec(opcode: Opcode, source: u64, exec: u64) -> u64 {
    use Opcode::*;
    match opcode {
        SAndSaveexecB32 | SAndSaveexecB64 => source & exec,
        SOrSaveexecB32 | SOrSaveexecB64 => source | exec,
        SXorSaveexecB32 | SXorSaveexecB64 => source ^ exec,
        SAndNot1SaveexecB32 | SAndNot1SaveexecB64 => source & !exec,
        SOrNot1SaveexecB32 | SOrNot1SaveexecB64 => source | !exec,
        SAndNot0SaveexecB32 | SAndNot0SaveexecB64 => !source & exec,
        SOrNot0SaveexecB32 | SOrNot0SaveexecB64 => !source | exec,
        SNandSaveexecB32 | SNandSaveexecB64 => !(source & exec),
        SNorSaveexecB32 | SNorSaveexecB64 => !(source | exec),
        _ => !(source ^ exec),
    }
}
