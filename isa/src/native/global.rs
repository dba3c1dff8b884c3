//! Global memory translations: GLOBAL and FLAT whole-dword loads and stores (`global_load_b32`
//! to `_b128`, `global_store_*`, `flat_load/store_*`), addressed as `memory_ops` addresses them:
//! a 64-bit VGPR pair, or SADDR's SGPR pair plus a 32-bit VGPR, plus the instruction's offset.
//!
//! One check per instruction: a first pass over the active lanes finds the lowest and highest
//! address, and the dispatch's memory is asked once whether the whole span is host memory the
//! kernel may touch (`Memory::host_range`). If it is, a second pass loads or stores lane by lane
//! in lane order, as the interpreter does, at the host address. If it is not (a lane out of
//! bounds, a span across two allocations, a FLAT address in the LDS or private aperture), the
//! instruction takes the interpreter's step, which reaches every lane through the memory's own
//! checks and reports a fault exactly as the interpreter does. A wild address never becomes a
//! host access outside what the memory granted.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, RANGE, ROW, sgpr};
use crate::gfx11::Encoding;
use crate::interp::memory_ops::{Access, Operation};
use crate::interp::program::Decoded;
use crate::interp::wave::{EXEC, NULL};

/// Translates a GLOBAL or FLAT access; false (nothing emitted) for one without a translation.
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, access: &Access) -> bool {
    let instruction = &decoded.instruction;
    let [w0, w1, _] = instruction.words;
    let (addr, data, saddr, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0x7F, (w1 >> 24) & 0xFF);
    let (bytes, load) = match access.operation {
        Operation::Load { bytes, signed: false, d16: false, hi: false } if bytes % 4 == 0 => (bytes as u32, true),
        Operation::Store { bytes, hi: false } if bytes % 4 == 0 => (bytes as u32, false),
        _ => return false,
    };
    let offset: i32 = match instruction.encoding {
        Encoding::Flat => (w0 & 0xFFF) as i32,
        _ => ((w0 & 0x1FFF) << 19) as i32 >> 19,
    };
    // SADDR names an SGPR pair (GLOBAL only); `null` (0x7C) is "off": the VGPR pair is the address.
    let scalar_base = instruction.encoding == Encoding::Global && saddr != NULL;
    if scalar_base && saddr >= 127 {
        return false;
    }
    let dwords = bytes / 4;
    let address_rows = if scalar_base { 1 } else { 2 };
    let registers = if load { vdst } else { data };
    if addr + address_rows > e.vgprs || registers + dwords > e.vgprs {
        return false;
    }
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    let low_row = addr as i32 * ROW;
    let high_row = low_row + ROW;

    // rax = lane rcx's address (r10: SADDR's base).
    let address = |e: &mut Emitter<'_>| {
        if scalar_base {
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, [r13 + rcx * 4 + low_row]
                ; add rax, r10
            );
        } else {
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, [r13 + rcx * 4 + low_row]
                ; mov r11d, [r13 + rcx * 4 + high_row]
                ; shl r11, 32
                ; or rax, r11
            );
        }
        dynasm!(e.ops ; .arch x64 ; add rax, offset);
    };
    let base = |e: &mut Emitter<'_>| {
        if scalar_base {
            dynasm!(e.ops ; .arch x64 ; mov r10, [r12 + sgpr(saddr)]);
        }
    };

    // Pass 1: the lowest (r8) and highest (r9) address of the active lanes (none: nothing to do).
    let done = e.ops.new_dynamic_label();
    dynasm!(e.ops
        ; .arch x64
        ; cmp DWORD [r12 + sgpr(EXEC)], 0
        ; je =>done
        ; mov r8, -1
        ; xor r9d, r9d
    );
    base(e);
    e.each_active_lane(|e| {
        address(e);
        dynasm!(e.ops
            ; .arch x64
        ; cmp rax, r8
        ; cmovb r8, rax
        ; cmp rax, r9
        ; cmova r9, rax
        );
    });
    dynasm!(e.ops
        ; .arch x64
        // The span [lowest, highest + bytes): one range, or the interpreter's step.
        ; mov rdx, r9
        ; sub rdx, r8
        ; add rdx, bytes as i32
        ; jc =>slow
        ; mov [rsp], r8
        ; mov rdi, r14
        ; mov rsi, r8
        ; mov ecx, (!load) as i32
        ; call QWORD [r14 + RANGE]
        ; test rax, rax
        ; jz =>slow
        // r8: host minus agent address, the same for every lane of the span.
        ; sub rax, [rsp]
        ; mov r8, rax
    );
    e.masks();

    // Pass 2: each active lane's access, in lane order.
    base(e);
    e.each_active_lane(|e| {
        address(e);
        dynasm!(e.ops ; .arch x64 ; add rax, r8);
        for dword in 0..dwords as i32 {
            let row = (registers as i32 + dword) * ROW;
            if load {
                dynasm!(e.ops
                    ; .arch x64
                    ; mov esi, [rax + 4 * dword]
                    ; mov [r13 + rcx * 4 + row], esi
                );
            } else {
                dynasm!(e.ops
                    ; .arch x64
                    ; mov esi, [r13 + rcx * 4 + row]
                    ; mov [rax + 4 * dword], esi
                );
            }
        }
    });
    dynasm!(e.ops ; .arch x64 ; =>done);
    true
}
