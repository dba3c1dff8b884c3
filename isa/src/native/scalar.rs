//! Scalar translations: program flow (SOPP) and the common 32-bit scalar ALU operations.
//!
//! Translated: `s_endpgm`, `s_branch`, `s_cbranch_scc0/scc1/vccz/vccnz/execz/execnz`,
//! `s_barrier`, `s_sleep`, and the waits, hints and cache controls the interpreter also treats
//! as nothing; SOP2 `s_add/sub_u32/i32`, `s_addc_u32`, `s_mul_i32`, `s_and/or/xor/andn2_b32`,
//! `s_lshl/lshr_b32`, `s_ashr_i32`, `s_cselect_b32`, `s_mul_hi_u32/i32`, `s_min/max_u32/i32`,
//! `s_or_not1/nand/nor/xnor_b32`; SOPC 32-bit compares and `s_cmp_eq/lg_u64`; SOP1 `s_mov_b32`,
//! `s_not_b32`, `s_bcnt1_i32_b32` and every 32-bit `s_*_saveexec_b32`; 64-bit `s_lshl/lshr_b64`,
//! `s_mov_b64`, the bitwise family and every `s_*_saveexec_b64` to SGPR pairs, VCC or EXEC; SOPK `s_movk_i32`, `s_addk_i32`, `s_cmpk_*` and the counter
//! waits; SMEM `s_load_b32` to
//! `_b512` and the scalar cache invalidations. Semantics as `interp::scalar`'s, which the
//! differential tests hold them to.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, SCC, YIELD_AT, sgpr};
use super::frame::Exit;
use crate::gfx11::{Encoding, Opcode};
use crate::interp::decoded_kernel::Decoded;
use crate::interp::wave::{EXEC, Kind, NULL, VCC, constant_of};

/// Translates a scalar instruction; false (nothing emitted) for one without a translation.
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    match decoded.instruction.encoding {
        Encoding::Sopp => flow(e, index, decoded),
        Encoding::Sop2 | Encoding::Sopc | Encoding::Sop1 => alu(e, decoded),
        Encoding::Sopk => sopk(e, decoded),
        Encoding::Smem => load(e, index, decoded),
        _ => false,
    }
}

/// SMEM `s_load_b32` to `_b512` into plain SGPRs: the dword-aligned address (SBASE's pair, 48
/// bits, plus the offset and SOFFSET, wrapping as `interp::scalar::smem` does), one range test
/// for the whole load (`Emitter::host_address`), then the copy; anything the memory does not grant
/// whole is the interpreter's step, which faults as it does. The cache invalidations do nothing,
/// as in the interpreter.
fn load(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    use Opcode::*;
    let [w0, w1, _] = decoded.instruction.words;
    let dwords: u32 = match decoded.instruction.opcode() {
        SLoadB32 => 1,
        SLoadB64 => 2,
        SLoadB128 => 4,
        SLoadB256 => 8,
        SLoadB512 => 16,
        SDcacheInv | SGl1Inv => return true,
        _ => return false,
    };
    let (sbase, sdata, soffset) = ((w0 & 0x3F) << 1, (w0 >> 6) & 0x7F, w1 >> 25);
    let offset = ((w1 & 0x1F_FFFF) << 11) as i32 >> 11;
    // Plain SGPRs only (not VCC, M0, EXEC or null, which `write_sgpr` treats apart).
    if sbase >= VCC || sdata + dwords > VCC {
        return false;
    }
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    dynasm!(e.ops
        ; .arch x64
        ; mov rsi, [r12 + sgpr(sbase)]
        ; shl rsi, 16
        ; shr rsi, 16
        ; add rsi, offset
    );
    if soffset != NULL {
        dynasm!(e.ops ; .arch x64 ; mov eax, [r12 + sgpr(soffset)] ; add rsi, rax);
    }
    dynasm!(e.ops
        ; .arch x64
        ; and rsi, -4
        ; mov r8, rsi
        ; mov r9, rsi
        ; add r9, 4 * dwords as i32
        ; jc =>slow
    );
    e.host_address(false, slow);
    for dword in 0..dwords as i32 {
        dynasm!(e.ops
            ; .arch x64
            ; mov ecx, [rax + 4 * dword]
            ; mov [r12 + sgpr(sdata) + 4 * dword], ecx
        );
    }
    true
}

fn flow(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    use Opcode::*;
    let pc = e.pc(index);
    let simm = (decoded.instruction.words[0] & 0xFFFF) as i16;
    let target = pc.wrapping_add(4).wrapping_add_signed(simm as i64 * 4);
    let next = pc + decoded.len as u64;
    match decoded.instruction.opcode() {
        SNop
        | SWaitcnt
        | SWaitcntDepctr
        | SDelayAlu
        | SClause
        | SSetInstPrefetchDistance
        | SIcacheInv
        | SSetprio
        | SSendmsg
        | SWaitIdle
        | SIncperflevel
        | SDecperflevel
        | STtracedata
        | STtracedataImm
        | SWakeup => {}
        SEndpgm => e.leave(pc, Exit::End),
        SBarrier => e.leave(next, Exit::Barrier),
        SSleep => e.leave(next, Exit::Sleep),
        SBranch => jump(e, pc, target, None),
        SCbranchScc0 | SCbranchScc1 => {
            dynasm!(e.ops ; .arch x64 ; cmp BYTE [r12 + SCC], 0);
            // Taken when SCC is 1 (scc1: not equal to 0) or 0 (scc0).
            jump(e, pc, target, Some(decoded.instruction.opcode() == SCbranchScc1));
        }
        // A wave64 wave tests the whole mask, both halves (`Wave::mask64`).
        SCbranchVccz | SCbranchVccnz | SCbranchExecz | SCbranchExecnz => {
            let mask = if matches!(decoded.instruction.opcode(), SCbranchVccz | SCbranchVccnz) { VCC } else { EXEC };
            if e.wide {
                dynasm!(e.ops ; .arch x64 ; cmp QWORD [r12 + sgpr(mask)], 0);
            } else {
                dynasm!(e.ops ; .arch x64 ; cmp DWORD [r12 + sgpr(mask)], 0);
            }
            jump(e, pc, target, Some(matches!(decoded.instruction.opcode(), SCbranchVccnz | SCbranchExecnz)));
        }
        _ => return false,
    }
    true
}

/// A branch to `target`, always (`None`) or on the flags just set: taken on "not equal"
/// (`Some(true)`) or "equal" (`Some(false)`). A backward branch leaves once the turn's budget is
/// spent; a target without an instruction leaves for the wave loop to report.
fn jump(e: &mut Emitter<'_>, pc: u64, target: u64, taken_if_nonzero: Option<bool>) {
    let skip = e.ops.new_dynamic_label();
    match taken_if_nonzero {
        Some(true) => dynasm!(e.ops ; .arch x64 ; je =>skip),
        Some(false) => dynasm!(e.ops ; .arch x64 ; jne =>skip),
        None => {}
    }
    match e.label_at(target) {
        Some(label) if target > pc => dynasm!(e.ops ; .arch x64 ; jmp =>label),
        Some(label) => {
            dynasm!(e.ops
                ; .arch x64
                ; cmp rbp, [r14 + YIELD_AT]
                ; jb =>label
            );
            e.leave(target, Exit::Yield);
        }
        None => e.leave(target, Exit::Jump),
    }
    dynasm!(e.ops ; .arch x64 ; =>skip);
}

/// Whether a scalar source field reads as something compiled code can load: an SGPR (or VCC,
/// M0, EXEC, `null`), SCC, an integer or float inline constant, an aperture, or the literal.
fn readable(field: u32) -> bool {
    matches!(field, 0..=127 | 128..=208 | 235 | 237 | 240..=248 | 253 | 255)
}

/// Loads a 32-bit scalar source into `eax` (`into` 0) or `ecx` (1), as `Wave::scalar` reads it.
fn source(e: &mut Emitter<'_>, field: u32, literal: Option<u32>, into: u8) {
    match field {
        NULL => dynasm!(e.ops ; .arch x64 ; xor Rd(into), Rd(into)),
        0..=127 => dynasm!(e.ops ; .arch x64 ; mov Rd(into), [r12 + sgpr(field)]),
        253 => dynasm!(e.ops ; .arch x64 ; movzx Rd(into), BYTE [r12 + SCC]),
        255 => dynasm!(e.ops ; .arch x64 ; mov Rd(into), literal.unwrap_or(0) as i32),
        _ => {
            let value = constant_of(field, Kind::Int, false) as u32;
            dynasm!(e.ops ; .arch x64 ; mov Rd(into), value as i32)
        }
    }
}

/// Stores `eax` to SGPR `sdst` (`null` drops it); EXEC's masks follow a write to EXEC.
fn store(e: &mut Emitter<'_>, sdst: u32) {
    if sdst != NULL && sdst < 128 {
        dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(sdst)], eax);
        if sdst == EXEC {
            e.masks();
        }
    }
}

/// SCC from a condition code just set: `setcc` into SCC.
macro_rules! scc {
    ($e:expr, $set:ident) => {
        dynasm!($e.ops ; .arch x64 ; $set BYTE [r12 + SCC])
    };
}

/// The 32-bit SALU operations compiled code runs, by the function that emits them.
#[derive(Clone, Copy)]
enum Salu32 {
    Arithmetic,
    Bitwise,
    Compare,
    Move,
    SaveExec,
}

/// The family of a 32-bit SALU operation with a translation; `None` for the others (`alu64`'s).
fn salu32(opcode: Opcode) -> Option<Salu32> {
    use Opcode::*;
    Some(match opcode {
        SAddU32 | SSubU32 | SAddI32 | SSubI32 | SAddcU32 | SMulI32 | SMulHiU32 | SMulHiI32 | SMinU32 | SMaxU32
        | SMinI32 | SMaxI32 => Salu32::Arithmetic,
        SOrNot1B32 | SNandB32 | SNorB32 | SXnorB32 | SNotB32 | SBcnt1I32B32 | SAndB32 | SOrB32 | SXorB32
        | SAndNot1B32 | SLshlB32 | SLshrB32 | SAshrI32 => Salu32::Bitwise,
        SCmpEqU32 | SCmpEqI32 | SCmpLgU32 | SCmpLgI32 | SCmpGtU32 | SCmpGeU32 | SCmpLtU32 | SCmpLeU32 | SCmpGtI32
        | SCmpGeI32 | SCmpLtI32 | SCmpLeI32 => Salu32::Compare,
        SCselectB32 | SMovB32 => Salu32::Move,
        SAndSaveexecB32 | SOrSaveexecB32 | SXorSaveexecB32 | SAndNot1SaveexecB32 | SOrNot1SaveexecB32
        | SAndNot0SaveexecB32 | SOrNot0SaveexecB32 | SNandSaveexecB32 | SNorSaveexecB32 | SXnorSaveexecB32 => {
            Salu32::SaveExec
        }
        _ => return None,
    })
}

/// A SOP1, SOP2 or SOPC operation: its sources loaded into `eax` and `ecx`, then its family's
/// emitter (one `match`); the 64-bit ones are `alu64`'s. False where it has no translation.
fn alu(e: &mut Emitter<'_>, decoded: &Decoded) -> bool {
    let instruction = &decoded.instruction;
    let w0 = instruction.words[0];
    let (sdst, ssrc0, ssrc1) = ((w0 >> 16) & 0x7F, w0 & 0xFF, (w0 >> 8) & 0xFF);
    let sop1 = instruction.encoding == Encoding::Sop1;
    let opcode = instruction.opcode();
    let Some(family) = salu32(opcode) else {
        return alu64(e, decoded);
    };
    if !readable(ssrc0) || (!sop1 && !readable(ssrc1)) {
        return false;
    }
    let literal = instruction.literal();
    source(e, ssrc0, literal, 0);
    if !sop1 {
        source(e, ssrc1, literal, 1);
    }
    match family {
        Salu32::Arithmetic => arithmetic(e, opcode, sdst),
        Salu32::Bitwise => bitwise(e, opcode, sdst),
        Salu32::Compare => compare(e, opcode),
        Salu32::Move => moves(e, opcode, sdst),
        Salu32::SaveExec => save_exec(e, opcode, sdst),
    }
    true
}

/// Adds, subtracts, multiplies, min and max of `eax` and `ecx` into sdst, SCC as `interp::scalar` sets it.
fn arithmetic(e: &mut Emitter<'_>, opcode: Opcode, sdst: u32) {
    use Opcode::*;
    match opcode {
        SAddU32 => {
            dynasm!(e.ops ; .arch x64 ; add eax, ecx);
            scc!(e, setc);
            store(e, sdst);
        }
        SSubU32 => {
            dynasm!(e.ops ; .arch x64 ; sub eax, ecx);
            scc!(e, setc);
            store(e, sdst);
        }
        SAddI32 => {
            dynasm!(e.ops ; .arch x64 ; add eax, ecx);
            scc!(e, seto);
            store(e, sdst);
        }
        SSubI32 => {
            dynasm!(e.ops ; .arch x64 ; sub eax, ecx);
            scc!(e, seto);
            store(e, sdst);
        }
        SAddcU32 => {
            // CF = SCC, then add with carry.
            dynasm!(e.ops
                ; .arch x64
                ; movzx edx, BYTE [r12 + SCC]
                ; bt edx, 0
                ; adc eax, ecx
            );
            scc!(e, setc);
            store(e, sdst);
        }
        SMulI32 => {
            dynasm!(e.ops ; .arch x64 ; imul eax, ecx);
            store(e, sdst);
        }
        // The high halves of the 64-bit products; no SCC.
        SMulHiU32 => {
            dynasm!(e.ops ; .arch x64 ; mul ecx ; mov eax, edx);
            store(e, sdst);
        }
        SMulHiI32 => {
            dynasm!(e.ops ; .arch x64 ; imul ecx ; mov eax, edx);
            store(e, sdst);
        }
        // SCC: whether S0 is the one selected (`interp::scalar`): S0 < S1 for min, S0 >= S1
        // for max.
        SMinU32 | SMaxU32 | SMinI32 | SMaxI32 => {
            dynasm!(e.ops ; .arch x64 ; cmp eax, ecx);
            match opcode {
                SMinU32 => dynasm!(e.ops ; .arch x64 ; setb BYTE [r12 + SCC] ; cmovae eax, ecx),
                SMaxU32 => dynasm!(e.ops ; .arch x64 ; setae BYTE [r12 + SCC] ; cmovb eax, ecx),
                SMinI32 => dynasm!(e.ops ; .arch x64 ; setl BYTE [r12 + SCC] ; cmovge eax, ecx),
                _ => dynasm!(e.ops ; .arch x64 ; setge BYTE [r12 + SCC] ; cmovl eax, ecx),
            }
            store(e, sdst);
        }
        _ => unreachable!("`salu32` lists the translated operations"),
    }
}

/// Bitwise operations, shifts and `s_bcnt1_i32_b32`: SCC = result != 0.
fn bitwise(e: &mut Emitter<'_>, opcode: Opcode, sdst: u32) {
    use Opcode::*;
    match opcode {
        SOrNot1B32 | SNandB32 | SNorB32 | SXnorB32 | SNotB32 | SBcnt1I32B32 => {
            match opcode {
                SOrNot1B32 => dynasm!(e.ops ; .arch x64 ; not ecx ; or eax, ecx),
                SNandB32 => dynasm!(e.ops ; .arch x64 ; and eax, ecx ; not eax),
                SNorB32 => dynasm!(e.ops ; .arch x64 ; or eax, ecx ; not eax),
                SXnorB32 => dynasm!(e.ops ; .arch x64 ; xor eax, ecx ; not eax),
                SNotB32 => dynasm!(e.ops ; .arch x64 ; not eax),
                _ => dynasm!(e.ops ; .arch x64 ; popcnt eax, eax),
            }
            // SCC = result != 0 (`not` sets no flags).
            dynasm!(e.ops ; .arch x64 ; test eax, eax);
            scc!(e, setnz);
            store(e, sdst);
        }
        SAndB32 | SOrB32 | SXorB32 | SAndNot1B32 | SLshlB32 | SLshrB32 | SAshrI32 => {
            match opcode {
                SAndB32 => dynasm!(e.ops ; .arch x64 ; and eax, ecx),
                SOrB32 => dynasm!(e.ops ; .arch x64 ; or eax, ecx),
                SXorB32 => dynasm!(e.ops ; .arch x64 ; xor eax, ecx),
                SAndNot1B32 => dynasm!(e.ops ; .arch x64 ; not ecx ; and eax, ecx),
                // x86 shifts by a register take the count's low 5 bits, as the ISA does.
                SLshlB32 => dynasm!(e.ops ; .arch x64 ; shl eax, cl),
                SLshrB32 => dynasm!(e.ops ; .arch x64 ; shr eax, cl),
                _ => dynasm!(e.ops ; .arch x64 ; sar eax, cl),
            }
            // SCC = result != 0 (a shift by 0 leaves the flags as they were: test again).
            dynasm!(e.ops ; .arch x64 ; test eax, eax);
            scc!(e, setnz);
            store(e, sdst);
        }
        _ => unreachable!("`salu32` lists the translated operations"),
    }
}

/// SOPC compares of `eax` and `ecx`: SCC only.
fn compare(e: &mut Emitter<'_>, opcode: Opcode) {
    use Opcode::*;
    match opcode {
        SCmpEqU32 | SCmpEqI32 | SCmpLgU32 | SCmpLgI32 | SCmpGtU32 | SCmpGeU32 | SCmpLtU32 | SCmpLeU32 | SCmpGtI32
        | SCmpGeI32 | SCmpLtI32 | SCmpLeI32 => {
            dynasm!(e.ops ; .arch x64 ; cmp eax, ecx);
            match opcode {
                SCmpEqU32 | SCmpEqI32 => scc!(e, sete),
                SCmpLgU32 | SCmpLgI32 => scc!(e, setne),
                SCmpGtU32 => scc!(e, seta),
                SCmpGeU32 => scc!(e, setae),
                SCmpLtU32 => scc!(e, setb),
                SCmpLeU32 => scc!(e, setbe),
                SCmpGtI32 => scc!(e, setg),
                SCmpGeI32 => scc!(e, setge),
                SCmpLtI32 => scc!(e, setl),
                _ => scc!(e, setle),
            }
        }
        _ => unreachable!("`salu32` lists the translated operations"),
    }
}

/// `s_mov_b32` and `s_cselect_b32`.
fn moves(e: &mut Emitter<'_>, opcode: Opcode, sdst: u32) {
    use Opcode::*;
    match opcode {
        SCselectB32 => {
            dynasm!(e.ops
                ; .arch x64
                ; cmp BYTE [r12 + SCC], 0
                ; cmove eax, ecx
            );
            store(e, sdst);
        }
        SMovB32 => store(e, sdst),
        _ => unreachable!("`salu32` lists the translated operations"),
    }
}

/// The `s_*_saveexec_b32` operations.
fn save_exec(e: &mut Emitter<'_>, opcode: Opcode, sdst: u32) {
    use Opcode::*;
    match opcode {
        // sdst = EXEC; EXEC = op(source, EXEC); SCC = EXEC != 0 (`interp::scalar::saveexec`).
        SAndSaveexecB32 | SOrSaveexecB32 | SXorSaveexecB32 | SAndNot1SaveexecB32 | SOrNot1SaveexecB32
        | SAndNot0SaveexecB32 | SOrNot0SaveexecB32 | SNandSaveexecB32 | SNorSaveexecB32 | SXnorSaveexecB32 => {
            dynasm!(e.ops ; .arch x64 ; mov edx, [r12 + sgpr(EXEC)]);
            saveexec_operation(e, opcode, false);
            dynasm!(e.ops ; .arch x64 ; mov ecx, eax ; mov eax, edx);
            store(e, sdst);
            dynasm!(e.ops
                ; .arch x64
                ; mov [r12 + sgpr(EXEC)], ecx
                ; test ecx, ecx
            );
            scc!(e, setnz);
            e.masks();
        }
        _ => unreachable!("`salu32` lists the translated operations"),
    }
}

/// `op` on 64-bit registers (`wide`) or their 32-bit halves: `ops!(e, wide, [not 1; and 0, 1])`
/// is `not rcx; and rax, rcx` or `not ecx; and eax, ecx` (dynasm's register numbers).
macro_rules! ops {
    ($e:expr, $wide:expr, [$($ins:ident $($reg:literal),+);+]) => {
        if $wide {
            dynasm!($e.ops ; .arch x64 $(; $ins $(Rq($reg)),+)+)
        } else {
            dynasm!($e.ops ; .arch x64 $(; $ins $(Rd($reg)),+)+)
        }
    };
}

/// The operation of an `s_*_saveexec_b32` (or, `wide`, `_b64`): `rax` (`eax`) = op(the source
/// in it, EXEC in `rdx`), as `interp::scalar::saveexec` defines it; `rdx` kept, `rcx` clobbered.
fn saveexec_operation(e: &mut Emitter<'_>, opcode: Opcode, wide: bool) {
    use Opcode::*;
    match opcode {
        SAndSaveexecB32 | SAndSaveexecB64 => ops!(e, wide, [and 0, 2]),
        SOrSaveexecB32 | SOrSaveexecB64 => ops!(e, wide, [or 0, 2]),
        SXorSaveexecB32 | SXorSaveexecB64 => ops!(e, wide, [xor 0, 2]),
        SAndNot1SaveexecB32 | SAndNot1SaveexecB64 => ops!(e, wide, [mov 1, 2; not 1; and 0, 1]),
        SOrNot1SaveexecB32 | SOrNot1SaveexecB64 => ops!(e, wide, [mov 1, 2; not 1; or 0, 1]),
        SAndNot0SaveexecB32 | SAndNot0SaveexecB64 => ops!(e, wide, [not 0; and 0, 2]),
        SOrNot0SaveexecB32 | SOrNot0SaveexecB64 => ops!(e, wide, [not 0; or 0, 2]),
        SNandSaveexecB32 | SNandSaveexecB64 => ops!(e, wide, [and 0, 2; not 0]),
        SNorSaveexecB32 | SNorSaveexecB64 => ops!(e, wide, [or 0, 2; not 0]),
        _ => ops!(e, wide, [xor 0, 2; not 0]),
    }
}

/// Loads a 64-bit scalar source into `rax` (`into` 0) or `rcx` (1), as `Wave::scalar64` reads
/// it for an integer operation: an SGPR pair (or VCC, EXEC), `null`, the literal (zero-extended)
/// or an integer inline constant. False (nothing emitted) for other sources.
fn source64(e: &mut Emitter<'_>, field: u32, literal: Option<u32>, into: u8) -> bool {
    match field {
        NULL => dynasm!(e.ops ; .arch x64 ; xor Rd(into), Rd(into)),
        0..=126 => dynasm!(e.ops ; .arch x64 ; mov Rq(into), [r12 + sgpr(field)]),
        255 => dynasm!(e.ops ; .arch x64 ; mov Rd(into), literal.unwrap_or(0) as i32),
        128..=208 => {
            let value = constant_of(field, Kind::Int, true);
            dynasm!(e.ops ; .arch x64 ; mov Rq(into), QWORD value as i64);
        }
        _ => return false,
    }
    true
}

/// The 64-bit scalar operations compilers emit around addresses and wave64 masks: `s_lshl_b64`,
/// `s_lshr_b64`, `s_mov_b64`, `s_cmp_eq_u64`, `s_cmp_lg_u64`, the bitwise family and every
/// `s_*_saveexec_b64`, to plain SGPR pairs, VCC or EXEC.
fn alu64(e: &mut Emitter<'_>, decoded: &Decoded) -> bool {
    use Opcode::*;
    let instruction = &decoded.instruction;
    let w0 = instruction.words[0];
    let (sdst, ssrc0, ssrc1) = ((w0 >> 16) & 0x7F, w0 & 0xFF, (w0 >> 8) & 0xFF);
    let opcode = instruction.opcode();
    let literal = instruction.literal();
    // The shift count is a 32-bit operand (`interp::scalar`'s `b32`).
    let bitwise =
        matches!(opcode, SAndB64 | SOrB64 | SXorB64 | SAndNot1B64 | SOrNot1B64 | SNandB64 | SNorB64 | SXnorB64);
    let saveexec = matches!(
        opcode,
        SAndSaveexecB64
            | SOrSaveexecB64
            | SXorSaveexecB64
            | SAndNot1SaveexecB64
            | SOrNot1SaveexecB64
            | SAndNot0SaveexecB64
            | SOrNot0SaveexecB64
            | SNandSaveexecB64
            | SNorSaveexecB64
            | SXnorSaveexecB64
    );
    let (writes, second) = match opcode {
        SLshlB64 | SLshrB64 => (true, Some(false)),
        SMovB64 => (true, None),
        SCmpEqU64 | SCmpLgU64 => (false, Some(true)),
        _ if bitwise => (true, Some(true)),
        _ if saveexec => (true, None),
        _ => return false,
    };
    if writes && sdst > VCC && sdst != EXEC && sdst != NULL {
        return false;
    }
    let readable64 = |field: u32| matches!(field, NULL | 0..=126 | 255 | 128..=208);
    if !readable64(ssrc0) {
        return false;
    }
    match second {
        Some(true) if !readable64(ssrc1) => return false,
        Some(false) if !readable(ssrc1) => return false,
        _ => {}
    }
    source64(e, ssrc0, literal, 0);
    match second {
        Some(true) => {
            source64(e, ssrc1, literal, 1);
        }
        Some(false) => source(e, ssrc1, literal, 1),
        None => {}
    }
    match opcode {
        // x86 shifts by `cl` take its low 6 bits, as the ISA does; SCC = result != 0.
        SLshlB64 | SLshrB64 => {
            if opcode == SLshlB64 {
                dynasm!(e.ops ; .arch x64 ; shl rax, cl);
            } else {
                dynasm!(e.ops ; .arch x64 ; shr rax, cl);
            }
            dynasm!(e.ops ; .arch x64 ; test rax, rax);
            scc!(e, setnz);
        }
        SCmpEqU64 | SCmpLgU64 => {
            dynasm!(e.ops ; .arch x64 ; cmp rax, rcx);
            if opcode == SCmpEqU64 {
                scc!(e, sete);
            } else {
                scc!(e, setne);
            }
            return true;
        }
        // SCC = result != 0 (`not` sets no flags).
        _ if bitwise => {
            match opcode {
                SAndB64 => dynasm!(e.ops ; .arch x64 ; and rax, rcx),
                SOrB64 => dynasm!(e.ops ; .arch x64 ; or rax, rcx),
                SXorB64 => dynasm!(e.ops ; .arch x64 ; xor rax, rcx),
                SAndNot1B64 => dynasm!(e.ops ; .arch x64 ; not rcx ; and rax, rcx),
                SOrNot1B64 => dynasm!(e.ops ; .arch x64 ; not rcx ; or rax, rcx),
                SNandB64 => dynasm!(e.ops ; .arch x64 ; and rax, rcx ; not rax),
                SNorB64 => dynasm!(e.ops ; .arch x64 ; or rax, rcx ; not rax),
                _ => dynasm!(e.ops ; .arch x64 ; xor rax, rcx ; not rax),
            }
            dynasm!(e.ops ; .arch x64 ; test rax, rax);
            scc!(e, setnz);
        }
        // sdst = EXEC; EXEC = op(source, EXEC); SCC = EXEC != 0 (`interp::scalar::saveexec`).
        _ if saveexec => {
            dynasm!(e.ops ; .arch x64 ; mov rdx, [r12 + sgpr(EXEC)]);
            saveexec_operation(e, opcode, true);
            if sdst != NULL {
                dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(sdst)], rdx);
            }
            dynasm!(e.ops
                ; .arch x64
                ; mov [r12 + sgpr(EXEC)], rax
                ; test rax, rax
            );
            scc!(e, setnz);
            e.masks();
            return true;
        }
        _ => {}
    }
    if sdst != NULL {
        dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(sdst)], rax);
        if sdst == EXEC {
            e.masks();
        }
    }
    true
}

fn sopk(e: &mut Emitter<'_>, decoded: &Decoded) -> bool {
    use Opcode::*;
    let w0 = decoded.instruction.words[0];
    let simm = w0 & 0xFFFF;
    let signed = simm as u16 as i16 as i32;
    let sdst = (w0 >> 16) & 0x7F;
    let opcode = decoded.instruction.opcode();
    match opcode {
        // Waits on counters, which the interpreter also treats as nothing.
        SWaitcntVscnt | SWaitcntVmcnt | SWaitcntExpcnt | SWaitcntLgkmcnt => {}
        SMovkI32 => {
            dynasm!(e.ops ; .arch x64 ; mov eax, signed);
            store(e, sdst);
        }
        SAddkI32 => {
            source(e, sdst, None, 0);
            dynasm!(e.ops ; .arch x64 ; add eax, signed);
            scc!(e, seto);
            store(e, sdst);
        }
        SCmpkEqI32 | SCmpkLgI32 | SCmpkGtI32 | SCmpkGeI32 | SCmpkLtI32 | SCmpkLeI32 | SCmpkEqU32 | SCmpkLgU32
        | SCmpkGtU32 | SCmpkGeU32 | SCmpkLtU32 | SCmpkLeU32 => {
            source(e, sdst, None, 0);
            // The signed forms compare with the sign-extended constant, the unsigned with the
            // zero-extended one.
            let constant =
                if matches!(opcode, SCmpkEqU32 | SCmpkLgU32 | SCmpkGtU32 | SCmpkGeU32 | SCmpkLtU32 | SCmpkLeU32) {
                    simm as i32
                } else {
                    signed
                };
            dynasm!(e.ops ; .arch x64 ; cmp eax, constant);
            match opcode {
                SCmpkEqI32 | SCmpkEqU32 => scc!(e, sete),
                SCmpkLgI32 | SCmpkLgU32 => scc!(e, setne),
                SCmpkGtI32 => scc!(e, setg),
                SCmpkGeI32 => scc!(e, setge),
                SCmpkLtI32 => scc!(e, setl),
                SCmpkLeI32 => scc!(e, setle),
                SCmpkGtU32 => scc!(e, seta),
                SCmpkGeU32 => scc!(e, setae),
                SCmpkLtU32 => scc!(e, setb),
                _ => scc!(e, setbe),
            }
        }
        _ => return false,
    }
    true
}
