//! Memory translations: `buffer_gl0_inv`, `buffer_gl1_inv` and `ds_nop`, which do nothing here
//! (as in `memory_ops`); LDS's whole-dword loads and stores (`ds_load_b32/b64/b96/b128`,
//! `ds_store_*`, and their `2addr` and `stride64` forms), the forms `memory_ops::ds_dwords`
//! runs as rows; and the lane exchange `ds_bpermute_b32`.
//!
//! The fast path checks every active lane's whole access against the LDS once per instruction,
//! as vectors; when any lane's is out of range (or its address would wrap), the instruction
//! takes the interpreter's step, which reads 0 and drops writes lane by lane. Then the rows go
//! eight lanes at a time (`rows.rs`), in the interpreter's order.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, FRAME_LDS_LEN, ROW, SCRATCH, SHAPE_HIGHEST, SHAPE_KIND, SHAPE_ROW, row_shape};
use super::frame::{Part, ROW_SHAPES, SHAPE_UNKNOWN};
use super::rows::Chunks;
use crate::gfx11::Encoding;
use crate::interp::decoded_kernel::{Decoded, Plan};
use crate::interp::memory_ops::{Access, Operation};

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
    if matches!(access.operation, Operation::Bpermute) {
        return backward_permute(e, offset1 << 8 | offset0, [addr, data0, vdst]);
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

    let chunks = Chunks { addresses, biased: false, base: 15, lane_base: 15 };
    let rows: Vec<(i32, i32)> = elements
        .iter()
        .flat_map(|&(offset, first)| {
            (0..dwords).map(move |dword| ((first + dword) as i32 * ROW, (offset + 4 * dword) as i32))
        })
        .collect();
    if load {
        // Every lane active (the common case): one range test of the row's highest address,
        // then the whole row at once where its shape allows (`Chunks::load_whole`). The row's
        // highest address and shape are remembered in a frame slot (by the address VGPR) and
        // reused while the row is unchanged: a tiled GEMM loads a dozen times from each of two
        // address rows between barriers. Any other case goes out of line, each active lane's
        // access tested.
        let by_chunk = e.ops.new_dynamic_label();
        let lane_rows = rows.clone();
        let partial = e.out_of_line(move |e| {
            by_lanes(e, chunks, farthest, slow, Moved::Load(&lane_rows), by_chunk);
            dynasm!(e.ops ; .arch x64 ; jmp =>resume);
        });
        // The high half of a wave64 wave has its own slots (`Frame::row_shapes`): `ROW_SHAPES`
        // further, known here, or for code that runs once per half, `rbx` (the running half)
        // times as many bytes from the frame, in `r11`, which nothing else here uses.
        let (base, slot) = if e.part == Part::Running {
            let high = row_shape(ROW_SHAPES) - row_shape(0);
            dynasm!(e.ops
                ; .arch x64
                ; imul r11, rbx, high
                ; add r11, r14
            );
            (11, row_shape(addr as usize % ROW_SHAPES))
        } else {
            let half = if e.part == Part::High { ROW_SHAPES } else { 0 };
            (14, row_shape(addr as usize % ROW_SHAPES + half))
        };
        // The range test is the row's highest address plus `farthest` against the LDS's size
        // (each below 2^32, so no wrap in 64 bits). A highest address of 2^31 or more is kept
        // as 2^32 − 1, which fails it: the general path indexes with signed 32-bit offsets.
        e.unless_every_lane(partial);
        dynasm!(e.ops ; .arch x64 ; vpcmpeqd ymm3, ymm3, ymm3);
        // Where the slot is known to hold this row already (`known_rows.rs`; a wave64 half's
        // own slot), only the range test.
        if e.known_rows.get(index as usize) != Some(&true) {
            row_in_slot(e, addresses, base, slot);
        }
        dynasm!(e.ops
            ; .arch x64
            ; mov eax, [Rq(base) + slot + SHAPE_HIGHEST]
            ; add rax, farthest as i32
            ; cmp rax, [r14 + FRAME_LDS_LEN]
            ; ja =>slow
        );
        chunks.load_whole(e, &rows, by_chunk, Some((base, slot)));
        dynasm!(e.ops ; .arch x64 ; jmp =>resume);
        return true;
    }
    let by_chunk = e.ops.new_dynamic_label();
    by_lanes(e, chunks, farthest, slow, Moved::Store(&elements, dwords), by_chunk);
    true
}

/// What [`by_lanes`] moves: load rows `(row, displacement)`, or store `dwords` from each
/// element's `(offset, first register)`.
enum Moved<'a> {
    Load(&'a [(i32, i32)]),
    Store(&'a [(u32, u32)], u32),
}

/// Emits a DS access with each active lane's access tested, as vectors (jumping to `slow` where
/// any is out of range), then eight lanes at a time from `by_chunk` (`rows.rs`): LDS offsets
/// are below 2^31, so they index unbiased.
fn by_lanes(
    e: &mut Emitter<'_>,
    chunks: Chunks,
    farthest: u32,
    slow: dynasmrt::DynamicLabel,
    moved: Moved<'_>,
    by_chunk: dynasmrt::DynamicLabel,
) {
    highest_allowed(e, farthest, slow);
    dynasm!(e.ops
        ; .arch x64
        ; vpcmpeqd ymm3, ymm3, ymm3
        ; vmovdqa ymm2, ymm3
    );
    for k in 0..4 {
        dynasm!(e.ops
            ; .arch x64
            ; vpmaxud ymm0, ymm1, [r13 + chunks.addresses + 32 * k]
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
        ; =>by_chunk
    );
    Chunks::setup(e);
    match moved {
        Moved::Load(rows) => {
            for k in 0..4 {
                chunks.load(e, k, rows);
            }
        }
        // Stores in the interpreter's order: element, dword, then lane.
        Moved::Store(elements, dwords) => {
            for &(offset, first) in elements {
                for dword in 0..dwords {
                    for k in 0..4 {
                        chunks.store(e, k, (first + dword) as i32 * ROW, (offset + 4 * dword) as i32);
                    }
                }
            }
        }
    }
}

/// The address VGPR of a DS load that [`translate`] runs as rows (whole dwords, not GDS, its
/// rows within the wave's `vgprs`), and the VGPR rows it writes; `None` for any other
/// instruction. `known_rows.rs` follows address rows through a kernel by it.
pub(super) fn whole_dword_load(decoded: &Decoded, vgprs: u32) -> Option<(u32, core::ops::Range<u32>)> {
    let Plan::Memory(access) = &decoded.plan else { return None };
    let instruction = &decoded.instruction;
    let [w0, w1, _] = instruction.words;
    let Operation::Load { bytes, signed: false, d16: false, .. } = access.operation else { return None };
    if instruction.encoding != Encoding::Ds || (w0 >> 17) & 1 == 1 || bytes % 4 != 0 {
        return None;
    }
    let (addr, vdst) = (w1 & 0xFF, (w1 >> 24) & 0xFF);
    let written = bytes as u32 / 4 * if access.two { 2 } else { 1 };
    (addr < vgprs && vdst + written <= vgprs).then_some((addr, vdst..vdst + written))
}

/// Emits the test of the address row (at `addresses`) against the row shape `slot` bytes past
/// register `base` (the frame, or the running half's slots in it) holds: where it differs, the
/// row, its highest address and an unknown shape go to the slot. `ymm3` is all ones.
fn row_in_slot(e: &mut Emitter<'_>, addresses: i32, base: u8, slot: i32) {
    let same = e.ops.new_dynamic_label();
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqu ymm0, [r13 + addresses]
        ; vpcmpeqd ymm0, ymm0, [Rq(base) + slot + SHAPE_ROW]
    );
    for k in 1..4 {
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm2, [r13 + addresses + 32 * k]
            ; vpcmpeqd ymm2, ymm2, [Rq(base) + slot + SHAPE_ROW + 32 * k]
            ; vpand ymm0, ymm0, ymm2
        );
    }
    // A new row (out of line: a GEMM's loads reuse each row a dozen times): its highest
    // address (each lane's, then across the row) and the row go to the slot, its shape unknown.
    let new_row = e.out_of_line(move |e| {
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm0, [r13 + addresses]
            ; vmovdqu [Rq(base) + slot + SHAPE_ROW], ymm0
        );
        for k in 1..4 {
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm2, [r13 + addresses + 32 * k]
                ; vmovdqu [Rq(base) + slot + SHAPE_ROW + 32 * k], ymm2
                ; vpmaxud ymm0, ymm0, ymm2
            );
        }
        dynasm!(e.ops
            ; .arch x64
            ; vextracti128 xmm2, ymm0, 1
            ; vpmaxud xmm0, xmm0, xmm2
            ; vpshufd xmm2, xmm0, 0x4E
            ; vpmaxud xmm0, xmm0, xmm2
            ; vpshufd xmm2, xmm0, 0xB1_u8 as i8
            ; vpmaxud xmm0, xmm0, xmm2
            ; vmovd ecx, xmm0
            ; mov edx, -1
            ; test ecx, ecx
            ; cmovs ecx, edx
            ; mov [Rq(base) + slot + SHAPE_HIGHEST], ecx
            ; mov DWORD [Rq(base) + slot + SHAPE_KIND], SHAPE_UNKNOWN as i32
            ; jmp =>same
        );
    });
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm0, ymm3
        ; jnc =>new_row
        ; =>same
    );
}

/// Emits every dword of `ymm1` = the highest address at which every element of an access
/// `farthest` bytes long fits in the LDS: its size − `farthest`, at most 2^31 − 1 (rows index
/// the LDS with signed 32-bit indices); jumps to `slow` where none fits.
fn highest_allowed(e: &mut Emitter<'_>, farthest: u32, slow: dynasmrt::DynamicLabel) {
    dynasm!(e.ops
        ; .arch x64
        ; mov rax, [r14 + FRAME_LDS_LEN]
        ; sub rax, farthest as i32
        ; jb =>slow
        ; mov ecx, 0x7FFF_FFFF
        ; cmp rax, rcx
        ; cmova rax, rcx
        ; vmovd xmm1, eax
        ; vpbroadcastd ymm1, xmm1
    );
}

/// `ds_bpermute_b32` (wave32, as `memory_ops::ds` runs it): each active lane reads `data` from
/// lane `((address + offset) >> 2) mod 32`, 0 where that lane is inactive. One gather per eight
/// lanes into the frame's scratch row, whose lanes then go to `vdst` (which may be either
/// source) in the active lanes.
fn backward_permute(e: &mut Emitter<'_>, offset: u32, [addr, data, vdst]: [u32; 3]) -> bool {
    if addr.max(data).max(vdst) >= e.vgprs {
        return false;
    }
    let (addresses, data, vdst) = (addr as i32 * ROW, data as i32 * ROW, vdst as i32 * ROW);
    let exec = e.exec();
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, offset as i32
        ; vmovd xmm3, eax
        ; vpbroadcastd ymm3, xmm3
        ; mov eax, 31
        ; vmovd xmm4, eax
        ; vpbroadcastd ymm4, xmm4
    );
    e.broadcast_mask(5, exec);
    for k in 0..4 {
        dynasm!(e.ops
            ; .arch x64
            ; vpaddd ymm0, ymm3, [r13 + addresses + 32 * k]
            ; vpsrld ymm0, ymm0, 2
            ; vpand ymm0, ymm0, ymm4
            // The source lane's EXEC bit, as a lane mask.
            ; vpsrlvd ymm1, ymm5, ymm0
            ; vpslld ymm1, ymm1, 31
            ; vpsrad ymm1, ymm1, 31
            ; vpxor xmm2, xmm2, xmm2
            ; vpgatherdd ymm2, [r13 + ymm0 * 4 + data], ymm1
            ; vmovdqa [r14 + SCRATCH + 32 * k], ymm2
        );
    }
    e.write_scratch_row(0, vdst);
    true
}
