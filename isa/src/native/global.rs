//! Global memory translations: GLOBAL and FLAT loads and stores (`global_load_b32` to `_b128`,
//! the byte and short loads `_u8`, `_i8`, `_u16`, `_i16` and their `d16`/`d16_hi` forms,
//! `global_store_*`, `flat_load/store_*`), addressed as `memory_ops` addresses them:
//! a 64-bit VGPR pair, or SADDR's SGPR pair plus a 32-bit VGPR, plus the instruction's offset.
//!
//! One check per instruction, in vectors: every active lane's address is a 64-bit base plus its
//! 32-bit VGPR (SADDR's pair, or the high halves of the VGPR pairs, which must then agree), so
//! the lowest and highest address are the base plus the lowest and highest low half. That whole
//! span must lie in host memory the kernel may touch: a range the workgroup has already found,
//! or else the dispatch's memory's answer (`Emitter::host_address`, `Memory::host_range`). If
//! it does, the rows go eight lanes at a time (`rows.rs`): loads as
//! vector loads or gathers (with every lane active, the whole row classified once), stores of a dword as masked vector stores or lane by lane, wider
//! stores and bytes and shorts lane by lane, all in the interpreter's lane order. Anything else (high halves that
//! differ, a span that wraps, crosses two allocations or leaves them, a FLAT address in the LDS
//! or private aperture) is the interpreter's step, which reaches every lane through the memory's
//! own checks and reports a fault exactly as the interpreter does. A wild address never becomes
//! a host access outside what the memory granted.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, RAMP, ROW, sgpr};
use super::rows::Chunks;
use crate::gfx11::Encoding;
use crate::interp::decoded_kernel::Decoded;
use crate::interp::memory_ops::{Access, Operation};
use crate::interp::wave::{EXEC, LANES, NULL};

/// Stack slot (the prologue's alignment) for the lowest low half across the range test.
const LOWEST: i32 = 0;

/// Translates a GLOBAL or FLAT access; false (nothing emitted) for one without a translation.
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, access: &Access) -> bool {
    let instruction = &decoded.instruction;
    let [w0, w1, _] = instruction.words;
    let (addr, data, saddr, vdst) = (w1 & 0xFF, (w1 >> 8) & 0xFF, (w1 >> 16) & 0x7F, (w1 >> 24) & 0xFF);
    // Whole dwords, or (`narrow`) a byte or a short per lane: loads zero- or sign-extended, or
    // into one half of the register (`d16`, `hi`); stores of the low (or, `hi`, high) bits.
    let (bytes, load, narrow) = match access.operation {
        Operation::Load { bytes, signed: false, d16: false, hi: false } if bytes % 4 == 0 => (bytes as u32, true, None),
        Operation::Store { bytes, hi: false } if bytes % 4 == 0 => (bytes as u32, false, None),
        Operation::Load { bytes: bytes @ (1 | 2), signed, d16, hi } => (bytes as u32, true, Some((signed, d16, hi))),
        Operation::Store { bytes: bytes @ (1 | 2), hi } => (bytes as u32, false, Some((false, false, hi))),
        _ => return false,
    };
    let offset: i32 = match instruction.encoding {
        Encoding::Flat => (w0 & 0xFFF) as i32,
        _ => ((w0 & 0x1FFF) << 19) as i32 >> 19,
    };
    // SADDR names an SGPR pair (GLOBAL only); `null` (0x7C) is "off": the VGPR pair is the address.
    let scalar_base = instruction.encoding == Encoding::Global && saddr != NULL;
    // (A wave64 wave's halves read EXEC's pair as the interpreter's halves hold it, swapped
    // in the high half: that base is the step's.)
    if scalar_base && (saddr >= 127 || e.wide && saddr == EXEC) {
        return false;
    }
    let dwords = bytes.div_ceil(4);
    let address_rows = if scalar_base { 1 } else { 2 };
    let registers = if load { vdst } else { data };
    if addr + address_rows > e.vgprs || registers + dwords > e.vgprs {
        return false;
    }
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    let low_row = addr as i32 * ROW;
    let high_row = low_row + ROW;
    let (done, exec) = (e.ops.new_dynamic_label(), e.exec());
    e.load_mask(2, exec);
    dynasm!(e.ops
        ; .arch x64
        ; test edx, edx
        ; jz =>done
        ; vpcmpeqd ymm3, ymm3, ymm3
    );
    if narrow.is_none() && dwords == 1 {
        let general = e.ops.new_dynamic_label();
        whole_row(
            e,
            load,
            registers as i32 * ROW,
            low_row,
            (!scalar_base).then_some(high_row),
            saddr,
            offset,
            slow,
            general,
        );
        dynasm!(e.ops ; .arch x64 ; jmp =>done ; =>general);
    }

    // r10 = the 64-bit base: SADDR's pair, or the first active lane's high half (every active
    // lane's must be the same) shifted up.
    if scalar_base {
        dynasm!(e.ops ; .arch x64 ; mov r10, [r12 + sgpr(saddr)]);
    } else {
        dynasm!(e.ops ; .arch x64 ; vmovdqa ymm2, ymm3);
        same_high_halves(e, high_row, false);
        dynasm!(e.ops
            ; .arch x64
            ; vptest ymm2, ymm3
            ; jnc =>slow
        );
    }

    address_extremes(e, low_row);
    span(e, offset, bytes, slow);
    e.host_address(!load, slow);
    dynasm!(e.ops
        ; .arch x64
        // r11 = the host address of a lane's low half 0 (base and offset included), r10 the same
        // 2^31 higher for the biased indices.
        ; sub rax, [rsp + LOWEST]
        ; mov r11, rax
        ; mov r10d, i32::MIN
        ; add r10, rax
    );
    let chunks = Chunks { addresses: low_row, biased: true, base: 10, lane_base: 11 };
    Chunks::setup(e);
    if let Some((signed, d16, hi)) = narrow {
        narrow_lanes(e, (load, bytes, signed, d16, hi), registers, low_row);
    } else if load {
        // Lane-local: each chunk reads its addresses before writing its destinations.
        let rows: Vec<(i32, i32)> =
            (0..dwords as i32).map(|dword| ((registers as i32 + dword) * ROW, 4 * dword)).collect();
        // Every lane active: the whole row at once where its pattern allows; chunk by chunk
        // out of line otherwise.
        let chunk_rows = rows.clone();
        let by_chunk = e.out_of_line(move |e| {
            for k in 0..4 {
                chunks.load(e, k, &chunk_rows);
            }
            dynasm!(e.ops ; .arch x64 ; jmp =>done);
        });
        e.unless_every_lane(by_chunk);
        chunks.load_whole(e, &rows, by_chunk, None);
    } else if dwords == 1 {
        for k in 0..4 {
            chunks.store(e, k, registers as i32 * ROW, 0);
        }
    } else {
        // Wider stores: with every lane active and the lanes' elements side by side, whole
        // vectors (`Chunks::store_interleaved_whole`); otherwise lane by lane, each lane's dwords
        // together, as the interpreter writes.
        if matches!(dwords, 2 | 4) {
            let by_lane = e.ops.new_dynamic_label();
            e.unless_every_lane(by_lane);
            chunks.store_interleaved_whole(e, registers as i32 * ROW, dwords, by_lane);
            dynasm!(e.ops ; .arch x64 ; jmp =>done ; =>by_lane);
        }
        e.each_active_lane(|e| {
            dynasm!(e.ops ; .arch x64 ; mov eax, [r13 + rcx * 4 + low_row]);
            for dword in 0..dwords as i32 {
                let row = (registers as i32 + dword) * ROW;
                dynasm!(e.ops
                    ; .arch x64
                    ; mov esi, [r13 + rcx * 4 + row]
                    ; mov [r11 + rax + 4 * dword], esi
                );
            }
        });
    }
    dynasm!(e.ops ; .arch x64 ; =>done);
    true
}

/// Emits r8d / r9d = the lowest / highest low half of the active lanes (inactive lanes count as
/// all ones for the lowest and zero for the highest); the lowest is also kept at `[rsp + LOWEST]`.
fn address_extremes(e: &mut Emitter<'_>, low_row: i32) {
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqa ymm4, ymm3
        ; vpxor xmm5, xmm5, xmm5
    );
    for k in 0..4 {
        let inactive = 12 + k as u8;
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm0, [r13 + low_row + 32 * k]
            ; vpor ymm1, ymm0, Ry(inactive)
            ; vpminud ymm4, ymm4, ymm1
            ; vpandn ymm1, Ry(inactive), ymm0
            ; vpmaxud ymm5, ymm5, ymm1
        );
    }
    dynasm!(e.ops
        ; .arch x64
        ; vextracti128 xmm0, ymm4, 1
        ; vpminud xmm4, xmm4, xmm0
        ; vpshufd xmm0, xmm4, 0x4E
        ; vpminud xmm4, xmm4, xmm0
        ; vpshufd xmm0, xmm4, 0xB1_u8 as i8
        ; vpminud xmm4, xmm4, xmm0
        ; vmovd r8d, xmm4
        ; vextracti128 xmm0, ymm5, 1
        ; vpmaxud xmm5, xmm5, xmm0
        ; vpshufd xmm0, xmm5, 0x4E
        ; vpmaxud xmm5, xmm5, xmm0
        ; vpshufd xmm0, xmm5, 0xB1_u8 as i8
        ; vpmaxud xmm5, xmm5, xmm0
        ; vmovd r9d, xmm5
        ; mov [rsp + LOWEST], r8
    );
}

/// A byte or a short per lane, lane by lane in lane order, as `memory_ops` reads and
/// writes them (`write_loaded`, `store_bytes`).
fn narrow_lanes(
    e: &mut Emitter<'_>,
    (load, bytes, signed, d16, hi): (bool, u32, bool, bool, bool),
    registers: u32,
    low_row: i32,
) {
    let row = registers as i32 * ROW;
    e.each_active_lane(|e| {
        dynasm!(e.ops ; .arch x64 ; mov eax, [r13 + rcx * 4 + low_row]);
        match (load, bytes, signed) {
            (true, 1, false) => dynasm!(e.ops ; .arch x64 ; movzx esi, BYTE [r11 + rax]),
            (true, 1, true) => dynasm!(e.ops ; .arch x64 ; movsx esi, BYTE [r11 + rax]),
            (true, _, false) => dynasm!(e.ops ; .arch x64 ; movzx esi, WORD [r11 + rax]),
            (true, _, true) => dynasm!(e.ops ; .arch x64 ; movsx esi, WORD [r11 + rax]),
            (false, _, _) => {
                dynasm!(e.ops ; .arch x64 ; mov esi, [r13 + rcx * 4 + row]);
                if hi {
                    dynasm!(e.ops ; .arch x64 ; shr esi, 16);
                }
                if bytes == 1 {
                    dynasm!(e.ops ; .arch x64 ; mov [r11 + rax], sil);
                } else {
                    dynasm!(e.ops ; .arch x64 ; mov [r11 + rax], si);
                }
                return;
            }
        }
        match (d16, hi) {
            (false, _) => {}
            (true, false) => dynasm!(e.ops
                ; .arch x64
                ; mov r8d, [r13 + rcx * 4 + row]
                ; and r8d, 0xFFFF_0000_u32 as i32
                ; and esi, 0xFFFF
                ; or esi, r8d
            ),
            (true, true) => dynasm!(e.ops
                ; .arch x64
                ; mov r8d, [r13 + rcx * 4 + row]
                ; and r8d, 0xFFFF
                ; shl esi, 16
                ; or esi, r8d
            ),
        }
        dynasm!(e.ops ; .arch x64 ; mov [r13 + rcx * 4 + row], esi);
    });
}

/// Emits `r10` = the 64-bit base of a VGPR pair's addresses (a lane's high half, shifted up) and
/// ANDs into `ymm2` the lanes whose high half in row `high_row` is that one: the first active
/// lane's, inactive lanes counting as equal (`edx` holds the running part's EXEC), or, `whole`
/// (every lane active), lane 0's.
fn same_high_halves(e: &mut Emitter<'_>, high_row: i32, whole: bool) {
    if whole {
        dynasm!(e.ops ; .arch x64 ; mov r10d, [r13 + high_row]);
    } else {
        dynasm!(e.ops ; .arch x64 ; bsf ecx, edx ; mov r10d, [r13 + rcx * 4 + high_row]);
    }
    dynasm!(e.ops
        ; .arch x64
        ; vmovd xmm1, r10d
        ; vpbroadcastd ymm1, xmm1
    );
    for k in 0..4 {
        dynasm!(e.ops ; .arch x64 ; vpcmpeqd ymm0, ymm1, [r13 + high_row + 32 * k]);
        if !whole {
            dynasm!(e.ops ; .arch x64 ; vpor ymm0, ymm0, Ry(12 + k as u8));
        }
        dynasm!(e.ops ; .arch x64 ; vpand ymm2, ymm2, ymm0);
    }
    dynasm!(e.ops ; .arch x64 ; shl r10, 32);
}

/// Emits `r8` / `r9` = the span `[base + lowest + offset, base + highest + offset + bytes)` from
/// the base in `r10` and the lowest and highest low halves in `r8` and `r9`, and jumps to `slow`
/// where a lane's address would wrap (the interpreter's step wraps as it does).
fn span(e: &mut Emitter<'_>, offset: i32, bytes: u32, slow: dynasmrt::DynamicLabel) {
    dynasm!(e.ops
        ; .arch x64
        ; add r8, r10
        ; jc =>slow
        ; add r9, r10
        ; jc =>slow
    );
    if offset >= 0 {
        dynasm!(e.ops
            ; .arch x64
            ; add r9, offset + bytes as i32
            ; jc =>slow
            ; add r8, offset
        );
    } else {
        dynasm!(e.ops
            ; .arch x64
            ; add r8, offset
            ; jnc =>slow
            ; add r9, offset + bytes as i32
        );
    }
}

/// A dword per lane where every lane of the row is active and the lanes' addresses are one run
/// of consecutive dwords (lane `i` at the first lane's plus `4 i`, the high halves all equal, no
/// low half wrapping): the range checked once from the first lane's address, then four whole
/// vectors loaded into `row` or stored from it. Such lanes' words do not overlap, so the order
/// of the writes is immaterial. Jumps to `general`, having checked and written nothing, for any
/// other row; `slow` as the general path's. `high_row` is the address pair's high row, or `None`
/// where SADDR's pair (`saddr`) is the base. `edx` holds the running part's EXEC, `ymm3` is all
/// ones.
#[allow(clippy::too_many_arguments)]
fn whole_row(
    e: &mut Emitter<'_>,
    load: bool,
    row: i32,
    low_row: i32,
    high_row: Option<i32>,
    saddr: u32,
    offset: i32,
    slow: dynasmrt::DynamicLabel,
    general: dynasmrt::DynamicLabel,
) {
    dynasm!(e.ops
        ; .arch x64
        ; cmp edx, -1
        ; jne =>general
        // The first lane's low half, and no lane's past 2^32.
        ; mov eax, [r13 + low_row]
        ; cmp eax, 0xFFFF_FF80_u32 as i32
        ; ja =>general
        // ymm0 = the addresses a run would hold, chunk by chunk; ymm2 = the lanes that hold them.
        ; vmovd xmm0, eax
        ; vpbroadcastd ymm0, xmm0
        ; vpaddd ymm0, ymm0, [r14 + RAMP]
        ; mov ecx, 32
        ; vmovd xmm5, ecx
        ; vpbroadcastd ymm5, xmm5
        ; vpcmpeqd ymm2, ymm0, [r13 + low_row]
    );
    for k in 1..4 {
        dynasm!(e.ops
            ; .arch x64
            ; vpaddd ymm0, ymm0, ymm5
            ; vpcmpeqd ymm1, ymm0, [r13 + low_row + 32 * k]
            ; vpand ymm2, ymm2, ymm1
        );
    }
    match high_row {
        Some(high_row) => same_high_halves(e, high_row, true),
        None => dynasm!(e.ops ; .arch x64 ; mov r10, [r12 + sgpr(saddr)]),
    }
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm2, ymm3
        ; jnc =>general
        ; mov r8d, eax
        ; lea r9, [r8 + 4 * (LANES as i32 - 1)]
    );
    span(e, offset, 4, slow);
    e.host_address(!load, slow);
    for k in 0..4 {
        if load {
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm0, [rax + 32 * k]
                ; vmovdqu [r13 + row + 32 * k], ymm0
            );
        } else {
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm0, [r13 + row + 32 * k]
                ; vmovdqu [rax + 32 * k], ymm0
            );
        }
    }
}
