//! Memory translations: `buffer_gl0_inv`, `buffer_gl1_inv` and `ds_nop`, which do nothing here
//! (as in `memory_ops`); and LDS's whole-dword loads and stores (`ds_load_b32/b64/b96/b128`,
//! `ds_store_*`, and their `2addr` and `stride64` forms), the forms `memory_ops::ds_dwords`
//! runs as rows.
//!
//! The fast path checks every active lane's whole access against the LDS once per instruction,
//! as vectors; when any lane's is out of range (or its address would wrap), the instruction
//! takes the interpreter's step, which reads 0 and drops writes lane by lane. Loads go eight
//! lanes at a time: one vector load where the eight are active and consecutive, one broadcast
//! where they share an address, a gather into the old row otherwise (inactive lanes keep it);
//! stores go lane by lane in lane order, as the interpreter's do, so the last of two lanes
//! writing one word wins in both.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, RAMP, ROW};
use crate::gfx11::Encoding;
use crate::interp::memory_ops::{Access, Operation};
use crate::interp::program::Decoded;

/// Translates a DS instruction; false (nothing emitted) for one without a translation.
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, access: &Access) -> bool {
    let instruction = &decoded.instruction;
    // Cache controls and `ds_nop`: nothing to do (memory is coherent; `memory_ops`).
    if matches!(access.operation, Operation::Nothing) {
        return true;
    }
    if instruction.encoding != Encoding::Ds {
        return false;
    }
    let [w0, w1, _] = instruction.words;
    let (addr, data0, data1, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0xFF, (w1 >> 24) & 0xFF);
    let (offset0, offset1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
    if (w0 >> 17) & 1 == 1 {
        return false; // GDS
    }
    let (bytes, load) = match access.operation {
        Operation::Load { bytes, signed: false, d16: false, .. } if bytes % 4 == 0 => (bytes as u32, true),
        Operation::Store { bytes, hi: false } if bytes % 4 == 0 => (bytes as u32, false),
        _ => return false,
    };
    let dwords = bytes / 4;
    // (byte offset from the address, first data or destination register) per element.
    let elements: Vec<(u32, u32)> = if access.two {
        let scale = access.stride * bytes;
        let second = if load { vdst + dwords } else { data1 };
        vec![(offset0 * scale, if load { vdst } else { data0 }), (offset1 * scale, second)]
    } else {
        vec![(offset1 << 8 | offset0, if load { vdst } else { data0 })]
    };
    let fits = addr < e.vgprs && elements.iter().all(|&(_, first)| first + dwords <= e.vgprs);
    if !fits {
        return false;
    }
    let farthest = elements.iter().map(|&(offset, _)| offset).max().unwrap_or(0) + bytes;
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    let addresses = addr as i32 * ROW;

    // The highest address every access fits below: LDS bytes − the farthest access's end (none
    // fits when negative), at most u32::MAX.
    dynasm!(e.ops
        ; .arch x64
        ; mov rax, rbx
        ; sub rax, farthest as i32
        ; jb =>slow
        ; mov ecx, -1
        ; cmp rax, rcx
        ; cmova rax, rcx
        ; vmovd xmm1, eax
        ; vpbroadcastd ymm1, xmm1
        ; vpcmpeqd ymm3, ymm3, ymm3
        ; vmovdqa ymm2, ymm3
    );
    for k in 0..4 {
        let reg = 4 + k as u8;
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu Ry(reg), [r13 + addresses + 32 * k]
            ; vpmaxud ymm0, Ry(reg), ymm1
            ; vpcmpeqd ymm0, ymm0, ymm1
            ; vpor ymm0, ymm0, Ry(12 + k as u8)
            ; vpand ymm2, ymm2, ymm0
        );
    }
    // CF: every lane in range (or inactive).
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm2, ymm3
        ; jnc =>slow
    );
    // Loads, eight lanes at a time: where all eight are active and their addresses consecutive
    // (a row of a tile) one vector load, where they are all one address (a broadcast) one
    // broadcast, otherwise a gather into the old row (inactive lanes keep it).
    if load {
        for k in 0..4 {
            let reg = 4 + k as u8;
            let (gather, broadcast, next) =
                (e.ops.new_dynamic_label(), e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
            dynasm!(e.ops
                ; .arch x64
                ; vptest Ry(12 + k as u8), Ry(12 + k as u8)
                ; jnz =>gather
                ; vpbroadcastd ymm0, Rx(reg)
                ; vpcmpeqd ymm1, ymm0, Ry(reg)
                ; vpaddd ymm0, ymm0, [r14 + RAMP]
                ; vpcmpeqd ymm0, ymm0, Ry(reg)
                ; vmovd eax, Rx(reg)
                ; vptest ymm1, ymm3
                ; jc =>broadcast
                ; vptest ymm0, ymm3
                ; jnc =>gather
            );
            for_each_dword(&elements, dwords, |row, displacement| {
                dynasm!(e.ops
                    ; .arch x64
                    ; vmovdqu ymm0, [r15 + rax + displacement]
                    ; vmovdqu [r13 + row + 32 * k], ymm0
                );
            });
            dynasm!(e.ops ; .arch x64 ; jmp =>next ; =>broadcast);
            for_each_dword(&elements, dwords, |row, displacement| {
                dynasm!(e.ops
                    ; .arch x64
                    ; vpbroadcastd ymm0, [r15 + rax + displacement]
                    ; vmovdqu [r13 + row + 32 * k], ymm0
                );
            });
            dynasm!(e.ops ; .arch x64 ; jmp =>next ; =>gather);
            for_each_dword(&elements, dwords, |row, displacement| {
                dynasm!(e.ops
                    ; .arch x64
                    ; vmovdqu ymm0, [r13 + row + 32 * k]
                    ; vpxor ymm1, Ry(12 + k as u8), ymm3
                    ; vpgatherdd ymm0, [r15 + Ry(reg) * 1 + displacement], ymm1
                    ; vmovdqu [r13 + row + 32 * k], ymm0
                );
            });
            dynasm!(e.ops ; .arch x64 ; =>next);
        }
        return true;
    }
    for &(offset, first) in &elements {
        for dword in 0..dwords {
            let row = (first + dword) as i32 * ROW;
            let displacement = (offset + 4 * dword) as i32;
            e.each_active_lane(|e| {
                dynasm!(e.ops
                    ; .arch x64
                    ; mov eax, [r13 + rcx * 4 + addresses]
                    ; mov r8d, [r13 + rcx * 4 + row]
                    ; mov [r15 + rax + displacement], r8d
                );
            });
        }
    }
    true
}

/// Calls `emit(row, displacement)` for each destination dword of a load: the row's byte offset
/// and the dword's offset from the lane's address, element by element.
fn for_each_dword(elements: &[(u32, u32)], dwords: u32, mut emit: impl FnMut(i32, i32)) {
    for &(offset, first) in elements {
        for dword in 0..dwords {
            emit((first + dword) as i32 * ROW, (offset + 4 * dword) as i32);
        }
    }
}
