//! The native tier against the interpreter on random straight-line code (issue 54, "Differential
//! execution"): sequences of operations drawn from the decoder tables' enumeration
//! (`coverage::operations`, every operation the interpreter runs, translated or not), their
//! operands varied (VGPRs, SGPRs, VCC, EXEC, M0, SCC, inline constants; modifiers on VOP3), run
//! from random registers (special floats, LDS-sized addresses, random EXEC and MODE) on both
//! tiers. The final registers, the LDS and the result (instructions executed, or the error)
//! must be identical, bit for bit.
//!
//! GLOBAL operations reach one 4 KiB buffer (VGPR pairs and SADDR pointing into it, a few lanes
//! out of bounds, where both tiers must fault alike); flat, scratch, buffer and scalar memory
//! operations are left out: the kernel and error tests hold the tiers to them. So are the operations
//! that read or set the PC, whose value differs between the two runs' code images. The seed and the
//! sequence are in the failure message; `AQUEDUCT_FUZZ_SEQUENCES` sets how many sequences run.

use aqueduct_isa::interp::Regions;
use aqueduct_isa::interp::coverage::{Operation, Registers, operations};
use aqueduct_isa::interp::{ExecError, Isa};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run::run_code;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// f32 values where the tiers could differ: zeros, denormals, the extremes, infinities, NaNs.
const SPECIAL: [u32; 14] = [
    0x0000_0000,
    0x8000_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3F00_0000,
    0x0000_0001,
    0x007F_FFFF,
    0x8040_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x7FA0_0001,
];

const LDS_BYTES: usize = 512;
/// The global memory the sequences reach (one buffer).
const BUFFER_BYTES: usize = 4096;

/// Runs `words` as a lone wave32 wave from (a copy of) `registers`, with an empty LDS and no
/// global memory, on `tier`: the result and the registers it ends with.
fn run_alone(words: &[u32], registers: &Registers, tier: Tier) -> (Result<u64, ExecError>, Registers) {
    let mut registers = registers.clone();
    let mut lds = vec![0u8; LDS_BYTES];
    let result = run_code(Isa::Gfx11, words, &mut registers, &Regions(Vec::new()), &mut lds, tier);
    (result, registers)
}

/// One register value: a special float, a small integer, an in-range LDS address, a float of
/// ordinary size, or any bits.
fn value(rng: &mut Rng, lane: u32) -> u32 {
    match rng.below(7) {
        0 => rng.pick(&SPECIAL),
        1 => rng.below(64) as u32,
        2 => (lane * 4 + 4 * rng.below(32) as u32) % LDS_BYTES as u32,
        3 => ((rng.below(2000) as f32 - 1000.0) / 7.0).to_bits(),
        4 => (rng.below(2) as u32) << 31 | (rng.below(1 << 23) as u32) | (rng.below(255) as u32) << 23,
        5 => value_f16_pair(rng),
        _ => rng.next() as u32,
    }
}

/// Two f16 of ordinary size (sign, an exponent short of infinity, any mantissa), packed.
fn value_f16_pair(rng: &mut Rng) -> u32 {
    let half = |rng: &mut Rng| (rng.below(2) as u32) << 15 | (rng.below(31) as u32) << 10 | rng.below(1 << 10) as u32;
    half(rng) << 16 | half(rng)
}

fn registers(rng: &mut Rng, buffer: u64, wave64: bool) -> Registers {
    let mut registers = if wave64 { Registers::wave64(16) } else { Registers::new(16) };
    fill_rows(rng, &mut registers.vgpr, buffer);
    fill_rows(rng, &mut registers.high_vgpr, buffer);
    for field in (0..16).chain([106, 107, 125]) {
        registers.sgpr[field] = value(rng, 0);
    }
    registers.sgpr[126] = if rng.chance(50) { u32::MAX } else { rng.next() as u32 };
    if wave64 {
        registers.sgpr[127] = if rng.chance(50) { u32::MAX } else { rng.next() as u32 };
    }
    if rng.chance(50) {
        registers.sgpr[0] = buffer as u32;
        registers.sgpr[1] = (buffer >> 32) as u32;
    }
    registers.scc = rng.chance(50);
    if rng.chance(20) {
        // Directed rounding or flushed denormals, where the native tier's float operations take
        // the interpreter's step.
        registers.mode = (registers.mode & !0xFF) | rng.below(256) as u32;
    }
    registers
}

/// Random VGPR rows (one half's, for a wave64 wave): special and ordinary values, LDS address
/// patterns, and global address pairs into the buffer at `buffer`.
fn fill_rows(rng: &mut Rng, rows: &mut [[u32; 32]], buffer: u64) {
    if rows.is_empty() {
        return;
    }
    for row in rows.iter_mut() {
        // Some rows one value (a broadcast LDS address, a uniform operand), some consecutive
        // dwords (a tile row's LDS addresses), the rest lane by lane.
        let uniform = rng.chance(20).then(|| value(rng, 0));
        let consecutive = rng.chance(15).then(|| 4 * rng.below(64) as u32);
        // Some rows all packed f16 pairs of ordinary size (so that packed and dot-product
        // arithmetic meets no NaN in any lane).
        if uniform.is_none() && consecutive.is_none() && rng.chance(15) {
            for slot in row.iter_mut() {
                *slot = value_f16_pair(rng);
            }
            continue;
        }
        // Some rows special values only (±0, ±∞, NaNs, …), so that two operands meet as
        // special cases in the same lane (−0 against +0, a NaN against a number).
        if uniform.is_none() && consecutive.is_none() && rng.chance(15) {
            for slot in row.iter_mut() {
                *slot = rng.pick(&SPECIAL);
            }
            continue;
        }
        // Some rows a pattern per eight lanes (a 16-wide tile's halves: one chunk a shared
        // LDS address, the next consecutive dwords, the next scattered ones).
        if uniform.is_none() && consecutive.is_none() && rng.chance(15) {
            for chunk in row.chunks_mut(8) {
                let shared = 4 * rng.below(64) as u32;
                let base = 4 * rng.below(64) as u32;
                let pattern = rng.below(3);
                for (lane, slot) in chunk.iter_mut().enumerate() {
                    *slot = match pattern {
                        0 => shared,
                        1 => base + 4 * lane as u32,
                        _ => 4 * rng.below(64) as u32,
                    };
                }
            }
            continue;
        }
        for (lane, slot) in row.iter_mut().enumerate() {
            *slot = match (uniform, consecutive) {
                (Some(value), _) => value,
                (None, Some(base)) => base + 4 * lane as u32,
                (None, None) => value(rng, lane as u32),
            };
        }
    }
    // Global addresses: v[0:1] (and often v[2:3]) a pair into the buffer, s[0:1] its base: a
    // tile row's consecutive elements, or lane by lane with most lanes in bounds and some not, and
    // now and then a lane whose high half differs from the others'.
    for pair in [0, 2] {
        if rng.chance(if pair == 0 { 60 } else { 30 }) {
            // Consecutive at the stride of a dword, a pair or four dwords (a b64 or b128 store's
            // lanes side by side).
            let stride = rng.pick(&[4u64, 4, 8, 16]);
            let span = (BUFFER_BYTES as u64 - 32 * stride - 16) / 4;
            let consecutive = rng.chance(35).then(|| 4 * rng.below(span));
            // Most such rows without a lane out of step (a whole row's fast paths).
            let exact = rng.chance(60);
            let (low, high) = rows.split_at_mut(pair + 1);
            for (lane, (low, high)) in low[pair].iter_mut().zip(high[0].iter_mut()).enumerate() {
                let offset = match consecutive {
                    Some(base) if exact || rng.chance(90) => base + stride * lane as u64,
                    _ if rng.chance(95) => 4 * rng.below((BUFFER_BYTES / 4 - 4) as u64),
                    _ => rng.next() >> 40,
                };
                let address = buffer + offset;
                *low = address as u32;
                *high = (address >> 32) as u32;
            }
            if rng.chance(5) {
                rows[pair + 1][rng.below(32) as usize] ^= 1;
            }
        }
    }
}

/// A scalar source: an SGPR, VCC, M0, EXEC (rarely), an inline constant or SCC.
fn scalar_source(rng: &mut Rng) -> u32 {
    match rng.below(10) {
        0..=3 => rng.below(12) as u32,
        4 => rng.pick(&[106, 107, 125]),
        5 => {
            // EXEC's halves (a wave64 wave's high half reads them as the interpreter holds them).
            if rng.chance(20) { rng.pick(&[126, 127]) } else { 0 }
        }
        6 => 128 + rng.below(65) as u32,
        7 => 193 + rng.below(16) as u32,
        8 => 240 + rng.below(9) as u32,
        _ => 253,
    }
}

/// A 9-bit vector source: a VGPR (v0–v11), or a scalar source.
fn vector_source(rng: &mut Rng) -> u32 {
    if rng.chance(60) { 256 + rng.below(12) as u32 } else { scalar_source(rng) }
}

/// A scalar destination: s0–s11, VCC, M0, `null`, or (rarely) EXEC.
fn scalar_destination(rng: &mut Rng) -> u32 {
    match rng.below(10) {
        0..=6 => rng.below(12) as u32,
        7 => rng.pick(&[106, 125]),
        8 => 124,
        _ => {
            if rng.chance(30) {
                126
            } else {
                1
            }
        }
    }
}

/// `operation`'s probe words with their operands varied (gfx11's plain encodings; the others
/// keep the probe's registers).
fn varied(rng: &mut Rng, operation: &Operation) -> Vec<u32> {
    let [mut w0, mut w1, w2] = operation.words;
    let set = |word: &mut u32, shift: u32, bits: u32, value: u32| {
        let mask = ((1u32 << bits) - 1) << shift;
        *word = (*word & !mask) | (value << shift & mask);
    };
    match operation.encoding.as_str() {
        "Vop1" | "Vop2" | "Vopc" => {
            set(&mut w0, 0, 9, vector_source(rng));
            if operation.encoding != "Vop1" {
                set(&mut w0, 9, 8, rng.below(12) as u32);
            }
            if operation.encoding != "Vopc" {
                // `v_readfirstlane_b32` writes an SGPR there: any scalar destination.
                let scalar = operation.mnemonic.starts_with("v_readfirstlane");
                set(&mut w0, 17, 8, if scalar { scalar_destination(rng) } else { rng.below(12) as u32 });
            }
            if rng.chance(30) {
                // DPP16 (src0 250) or DPP8 (233): src0 a VGPR in the DPP word, with a random
                // control, fi, bound_ctrl, and now and then modifiers or partial row and bank masks.
                let vgpr = rng.below(12) as u32;
                if rng.chance(70) {
                    set(&mut w0, 0, 9, 250);
                    let (low, any) = (rng.below(15) as u32, rng.below(0x100) as u32);
                    let control = match rng.below(8) {
                        0 => any,
                        1 => 0x101 + low,
                        2 => 0x111 + low,
                        3 => 0x121 + low,
                        4 => 0x140,
                        5 => 0x141,
                        6 => 0x150 + low,
                        _ => 0x160 + low,
                    };
                    let modifiers = if rng.chance(10) { rng.below(16) as u32 } else { 0 };
                    let masks = if rng.chance(70) { 0xFF } else { rng.below(256) as u32 };
                    w1 = vgpr | control << 8 | (rng.below(4) as u32) << 18 | modifiers << 20 | masks << 24;
                } else {
                    set(&mut w0, 0, 9, if rng.chance(50) { 233 } else { 234 });
                    w1 = vgpr | (rng.next() as u32) << 8;
                }
            }
        }
        "Vop3" => {
            // Compares and `v_readlane_b32` write an SGPR there.
            let scalar = operation.mnemonic.starts_with("v_cmp") || operation.mnemonic.starts_with("v_readlane");
            set(&mut w0, 0, 8, if scalar { scalar_destination(rng) } else { rng.below(12) as u32 });
            for shift in [0, 9, 18] {
                set(&mut w1, shift, 9, vector_source(rng));
            }
            if operation.mnemonic.starts_with("v_permlane") {
                // op_sel[1:0]: fi and bound_ctrl.
                set(&mut w0, 11, 2, rng.below(4) as u32);
            }
            if operation.mnemonic.starts_with("v_mad_u64") || operation.mnemonic.starts_with("v_mad_i64") {
                // VOP3SD: the carry-out SGPR in bits 14:8, often `null` (as compilers write it).
                set(&mut w0, 8, 7, if rng.chance(60) { 0x7C } else { scalar_destination(rng) });
            } else if rng.chance(25) {
                // Modifiers: abs, neg, clamp, omod (the native tier takes the interpreter's step).
                set(&mut w0, 8, 3, rng.below(8) as u32);
                set(&mut w1, 29, 3, rng.below(8) as u32);
                set(&mut w0, 15, 1, rng.below(2) as u32);
                set(&mut w1, 27, 2, rng.below(4) as u32);
            }
        }
        "Sop2" | "Sopc" => {
            set(&mut w0, 0, 8, scalar_source(rng));
            set(&mut w0, 8, 8, scalar_source(rng));
            if operation.encoding == "Sop2" {
                set(&mut w0, 16, 7, scalar_destination(rng));
            }
        }
        "Sop1" => {
            set(&mut w0, 0, 8, scalar_source(rng));
            set(&mut w0, 16, 7, scalar_destination(rng));
        }
        "Sopk" => {
            set(&mut w0, 0, 16, rng.next() as u32);
            set(&mut w0, 16, 7, rng.below(12) as u32);
        }
        "Global" => {
            // Address v[0:1] (or v0 from SADDR s[0:1]), data and destination v2–v11; an offset
            // of a few dwords either way.
            set(&mut w0, 0, 13, (rng.below(64) as u32).wrapping_sub(32) & 0x1FFF);
            set(&mut w1, 8, 8, 2 + rng.below(6) as u32);
            set(&mut w1, 16, 7, if rng.chance(50) { 0x7C } else { 0 });
            set(&mut w1, 24, 8, 2 + rng.below(6) as u32);
        }
        "Ds" => {
            // ds offsets (offset0, offset1) within the LDS's size, registers v0–v11.
            set(&mut w0, 0, 16, rng.below(64) as u32);
            set(&mut w1, 0, 8, rng.below(12) as u32);
            set(&mut w1, 8, 8, rng.below(12) as u32);
            set(&mut w1, 16, 8, rng.below(12) as u32);
            set(&mut w1, 24, 8, rng.below(8) as u32);
        }
        _ => {}
    }
    length(Isa::Gfx11, [w0, w1, w2])
}

/// The instruction's words, as many as it decodes to (one where it does not decode).
fn length(isa: Isa, words: [u32; 3]) -> Vec<u32> {
    let dwords = match isa {
        Isa::Gfx11 => aqueduct_isa::gfx11::decode(&words, 0).map(|instruction| instruction.len() / 4),
        Isa::Gfx10_3 => aqueduct_isa::gfx10::decode(&words, 0).map(|instruction| instruction.len() / 4),
        Isa::Gfx9(processor) => {
            aqueduct_isa::gfx9::decode(&words, 0, processor).map(|instruction| instruction.len() / 4)
        }
        Isa::Gfx12 => aqueduct_isa::gfx12::decode(&words, 0).map(|instruction| instruction.len() / 4),
    };
    words[..dwords.unwrap_or(1).clamp(1, 3)].to_vec()
}

/// Whether the operation is drawn: it runs, and it is not a memory access that needs memory.
fn drawn(operation: &Operation) -> bool {
    let memory = ["Smem", "Flat", "Scratch", "Mubuf", "Mtbuf", "Mimg"]
        .iter()
        .any(|encoding| operation.encoding.starts_with(encoding));
    // The PC's own value differs between the two runs' code images.
    let reads_pc = ["s_getpc", "s_setpc", "s_swappc", "s_call"].iter().any(|name| operation.mnemonic.starts_with(name));
    operation.runs && operation.probe_error.is_none() && !memory && !reads_pc
}

/// Runs `AQUEDUCT_FUZZ_SEQUENCES` (600) random sequences of `isa` code from `seed` on both tiers
/// in a wave32 wave, or a wave64 one (`wave64`), and compares what they leave.
fn fuzz(isa: Isa, seed: u64, wave64: bool) {
    let pool: Vec<Operation> = operations(isa).into_iter().filter(drawn).collect();
    assert!(pool.len() > 500, "{isa:?}: {} operations drawn", pool.len());
    let sequences = std::env::var("AQUEDUCT_FUZZ_SEQUENCES").ok().and_then(|text| text.parse().ok()).unwrap_or(600);
    let mut rng = Rng(seed);
    let mut compared = 0;
    for sequence in 0..sequences {
        let count = 1 + rng.below(12) as usize;
        let mut words = Vec::new();
        let mut names = Vec::new();
        let mut ends = Vec::new();
        for _ in 0..count {
            let operation = &pool[rng.below(pool.len() as u64) as usize];
            let instruction =
                if isa == Isa::Gfx11 { varied(&mut rng, operation) } else { length(isa, operation.words) };
            words.extend(&instruction);
            names.push(operation.mnemonic);
            ends.push(words.len());
        }
        // The buffer the kernel's stores reach through its address (a RefCell: the runs restore
        // it, and the closure that runs them is called from several places).
        let buffer = std::cell::RefCell::new(vec![0u32; BUFFER_BYTES / 4]);
        let address = buffer.borrow_mut().as_mut_ptr() as u64;
        let start = registers(&mut rng, address, wave64);
        let lds_start: Vec<u8> = (0..LDS_BYTES).map(|_| rng.next() as u8).collect();
        let buffer_start: Vec<u32> = (0..BUFFER_BYTES / 4).map(|_| value(&mut rng, 0)).collect();
        let memory = Regions(vec![(address, BUFFER_BYTES as u64)]);
        let run = |tier, words: &[u32]| {
            let mut registers = start.clone();
            let mut lds = lds_start.clone();
            buffer.borrow_mut().copy_from_slice(&buffer_start);
            let result = run_code(isa, words, &mut registers, &memory, &mut lds, tier);
            (result, registers, lds, buffer.borrow().clone())
        };
        let (interpreted, expected, expected_lds, expected_buffer) = run(Tier::Interpreter, &words);
        let (compiled, registers, lds, buffer_after) = run(Tier::Native, &words);
        if matches!(compiled, Err(ExecError::NativeUnavailable(_))) {
            continue;
        }
        compared += 1;
        // On a difference: the first instruction after which the tiers differ.
        let first = || {
            ends.iter()
                .position(|&end| run(Tier::Interpreter, &words[..end]) != run(Tier::Native, &words[..end]))
                .map_or("none alone".to_string(), |index| format!("{} (instruction {index})", names[index]))
        };
        let context = || {
            format!(
                "{isa:?} {} seed {seed:#x} sequence {sequence}: {names:?}\n  words {words:08x?}\n  first differing: {}\n  MODE {:#x}, EXEC {:#x}, SCC {}",
                if wave64 { "wave64" } else { "wave32" },
                first(),
                start.mode,
                (start.sgpr[127] as u64) << 32 | start.sgpr[126] as u64,
                start.scc
            )
        };
        assert_eq!(compiled, interpreted, "the result differs\n{}", context());
        assert_eq!(registers.scc, expected.scc, "SCC differs\n{}", context());
        assert_eq!(registers.mode, expected.mode, "MODE differs\n{}", context());
        for field in 0..128 {
            assert_eq!(
                registers.sgpr[field],
                expected.sgpr[field],
                "SGPR field {field} differs: native {:#x}, interpreter {:#x}\n{}",
                registers.sgpr[field],
                expected.sgpr[field],
                context()
            );
        }
        assert_eq!(registers.high_vgpr.len(), expected.high_vgpr.len());
        let rows = |registers: &Registers| {
            let high = registers.high_vgpr.iter().enumerate().map(|(index, row)| (index, 32, *row));
            registers.vgpr.iter().enumerate().map(|(index, row)| (index, 0, *row)).chain(high).collect::<Vec<_>>()
        };
        for ((index, first_lane, row), (_, _, expected_row)) in rows(&registers).into_iter().zip(rows(&expected)) {
            if let Some(lane) = (0..32).find(|&lane| row[lane] != expected_row[lane]) {
                panic!(
                    "v{index} lane {} differs: native {:#010x}, interpreter {:#010x}\n{}",
                    first_lane + lane,
                    row[lane],
                    expected_row[lane],
                    context()
                );
            }
        }
        assert!(lds == expected_lds, "the LDS differs\n{}", context());
        assert!(buffer_after == expected_buffer, "global memory differs\n{}", context());
    }
    if native::host_supported() {
        assert_eq!(compared, sequences, "every sequence ran on both tiers");
    }
}

#[test]
fn gfx11_sequences_agree_on_both_tiers() {
    fuzz(Isa::Gfx11, 0x5EED_0011, false);
}

#[test]
fn gfx10_3_sequences_agree_on_both_tiers() {
    fuzz(Isa::Gfx10_3, 0x5EED_1030, false);
}

/// Wave64: each per-half instruction's code twice, the high half's with its own rows, EXEC and
/// lane-mask halves; the lane-crossing ones as the interpreter's step over all 64 lanes.
#[test]
fn gfx11_wave64_sequences_agree_on_both_tiers() {
    fuzz(Isa::Gfx11, 0x5EED_0064, true);
}

#[test]
fn gfx10_3_wave64_sequences_agree_on_both_tiers() {
    fuzz(Isa::Gfx10_3, 0x5EED_1064, true);
}

/// A call through `s_swappc_b64` reaches code the native tier does not compile (no fall-through
/// or static branch leads there, `native/reach.rs`): the callee runs as the interpreter's steps,
/// its loop included, and its `s_setpc_b64` returns into compiled code. Both tiers end alike.
#[test]
fn an_indirect_call_runs_its_uncompiled_callee_and_returns_to_compiled_code() {
    // llvm-mc-19 -mcpu=gfx1100: s_getpc_b64 s[0:1]; s_add_u32 s0, s0, 20; s_addc_u32 s1, s1, 0;
    // s_swappc_b64 s[30:31], s[0:1]; v_mov_b32 v2, 5; s_endpgm; then the callee at +24:
    // s_mov_b32 s2, 3; s_sub_u32 s2, s2, 1; s_cmp_lg_u32 s2, 0; s_cbranch_scc1 -3;
    // v_mov_b32 v1, 42; s_setpc_b64 s[30:31].
    let words = [
        0xBE804700, 0x80009400, 0x82018001, 0xBE9E4900, 0x7E040285, 0xBFB00000, 0xBE820083, 0x80828102, 0xBF078002,
        0xBFA2FFFD, 0x7E0202AA, 0xBE80481E,
    ];
    let run = |tier| run_alone(&words, &Registers::new(4), tier);
    let (interpreted, expected) = run(Tier::Interpreter);
    // The caller's four, the callee's eleven and setpc, the caller's v_mov and s_endpgm.
    assert_eq!(interpreted, Ok(18), "the interpreter ran the call");
    assert!(expected.vgpr[1].iter().all(|&lane| lane == 42) && expected.vgpr[2].iter().all(|&lane| lane == 5));
    assert_eq!(expected.sgpr[2], 0, "the callee's loop ran out");
    if !native::host_supported() {
        return;
    }
    let (compiled, registers) = run(Tier::Native);
    assert_eq!(compiled, interpreted, "the native tier ran as many instructions");
    // s[0:1] and s[30:31] hold PCs, which differ between the two runs' code images; their
    // distance does not.
    let pcs = |sgpr: &[u32; 128]| (sgpr[0].wrapping_sub(sgpr[30]), sgpr[1].wrapping_sub(sgpr[31]));
    assert_eq!(pcs(&registers.sgpr), pcs(&expected.sgpr));
    assert_eq!(registers.sgpr[2..30], expected.sgpr[2..30]);
    assert_eq!(registers.sgpr[32..], expected.sgpr[32..]);
    assert_eq!(registers.vgpr, expected.vgpr);
    assert_eq!(registers.scc, expected.scc);
}

/// VOPD halves read their sources before either writes. The native tier emits them one after
/// the other, X first unless Y reads what X writes, then Y first unless X reads what Y writes,
/// and otherwise takes the interpreter's step: each order, and the step, give the pair's values.
#[test]
fn vopd_pairs_read_before_either_half_writes_in_every_order() {
    // llvm-mc-19 -mcpu=gfx1100:
    // v_dual_mov_b32 v1, v4 :: v_dual_add_f32 v2, v1, v3 (Y reads X's destination: Y first);
    // v_dual_add_f32 v6, v7, v2 :: v_dual_sub_f32 v7, v8, v3 (X reads Y's: X first);
    // v_dual_mul_f32 v9, v10, v11 :: v_dual_mul_f32 v10, v9, v4 (each reads the other's: the step);
    // v_dual_max_f32 v12, v12, v12 :: v_dual_add_nc_u32 v13, 32, v13 (a checked half first).
    let words = [0xCA080104, 0x01020701, 0xC90A0507, 0x06060708, 0xC8C6170A, 0x090A0909, 0xCAA0190C, 0x0C0C1AA0];
    let start = |registers: &mut Registers| {
        for (index, row) in registers.vgpr.iter_mut().enumerate() {
            for (lane, value) in row.iter_mut().enumerate() {
                *value = ((index * 32 + lane) as f32 * 0.75 - 200.0).to_bits();
            }
        }
    };
    let mut starting = Registers::new(16);
    start(&mut starting);
    let run = |tier| run_alone(&words, &starting, tier);
    let (interpreted, expected) = run(Tier::Interpreter);
    assert_eq!(interpreted, Ok(5));
    let before = &starting;
    let f = |register: usize, lane: usize| f32::from_bits(before.vgpr[register][lane]);
    for lane in 0..32 {
        let got = |register: usize| expected.vgpr[register][lane];
        assert_eq!(got(1), before.vgpr[4][lane]);
        assert_eq!(got(2), (f(1, lane) + f(3, lane)).to_bits(), "Y read v1 before X wrote it");
        let v2 = f(1, lane) + f(3, lane);
        assert_eq!(got(6), (f(7, lane) + v2).to_bits(), "X read v7 before Y wrote it");
        assert_eq!(got(7), (f(8, lane) - f(3, lane)).to_bits());
        assert_eq!(got(9), (f(10, lane) * f(11, lane)).to_bits());
        assert_eq!(got(10), (f(9, lane) * f(4, lane)).to_bits());
        assert_eq!(got(12), before.vgpr[12][lane]);
        assert_eq!(got(13), before.vgpr[13][lane].wrapping_add(32));
    }
    if !native::host_supported() {
        return;
    }
    let (compiled, registers) = run(Tier::Native);
    assert_eq!(compiled, interpreted);
    assert_eq!(registers.vgpr, expected.vgpr, "the native tier's pairs");
}

#[test]
fn a_vopd_pair_of_two_checked_halves_reads_both_sources_before_writing_either() {
    // llvm-mc-19 -mcpu=gfx1100: v_dual_max_f32 v3, v4, v5 :: v_dual_min_f32 v4, v3, v6. Each
    // half reads the other's destination, and either may leave its lanes to the interpreter (a
    // NaN): both results are computed and tested before either is written.
    let words = [0xCA960B04, 0x03040D03];
    let start = |registers: &mut Registers, nan: bool| {
        for (index, row) in registers.vgpr.iter_mut().enumerate() {
            for (lane, value) in row.iter_mut().enumerate() {
                *value = ((index * 32 + lane) as f32 * 0.75 - 7.0 * index as f32).to_bits();
            }
        }
        if nan {
            registers.vgpr[5][17] = f32::NAN.to_bits() | 1;
        }
    };
    for nan in [false, true] {
        let mut starting = Registers::new(8);
        start(&mut starting, nan);
        let run = |tier| run_alone(&words, &starting, tier);
        let (interpreted, expected) = run(Tier::Interpreter);
        assert_eq!(interpreted, Ok(2));
        let before = &starting;
        let f = |register: usize, lane: usize| f32::from_bits(before.vgpr[register][lane]);
        for lane in (0..32).filter(|&lane| !(nan && lane == 17)) {
            assert_eq!(expected.vgpr[3][lane], f(4, lane).max(f(5, lane)).to_bits(), "lane {lane}");
            assert_eq!(expected.vgpr[4][lane], f(3, lane).min(f(6, lane)).to_bits(), "Y read v3 before X wrote it");
        }
        if !native::host_supported() {
            return;
        }
        let (compiled, registers) = run(Tier::Native);
        assert_eq!(compiled, interpreted);
        assert_eq!(registers.vgpr, expected.vgpr, "the native tier's pair (a NaN lane: {nan})");
    }
}

#[test]
fn division_helpers_agree_on_whole_rows_of_ordinary_and_extreme_operands() {
    // llvm-mc-19 -mcpu=gfx1100: v_div_fmas_f32 v4, v0, v1, v2 (reading the starting VCC);
    // v_div_fixup_f32 v5, v0, v1, v2; v_div_scale_f32 v3, vcc_lo, v0, v1, v2;
    // v_div_scale_f32 v6, s4, v2, v1, v2. The native tier computes rows whose every active lane
    // is ordinary in vectors and leaves the rest to the interpreter's step: rows all ordinary,
    // rows spanning every exponent, and ordinary rows with a few extreme lanes test both sides
    // of each bound.
    let words = [0xD6370004, 0x040A0300, 0xD6270005, 0x040A0300, 0xD6FC6A03, 0x040A0300, 0xD6FC0406, 0x040A0302];
    let mut rng = Rng(0xD1F1_5EED);
    let mut fast_rows = 0;
    for round in 0..3000 {
        let mut registers = Registers::new(8);
        let spread = rng.below(3);
        for row in registers.vgpr.iter_mut().take(3) {
            // An exponent window: narrow (ordinary), every exponent, or ordinary with extremes.
            let (low, high) = match spread {
                0 => (100u64, 150u64),
                1 => (0, 256),
                _ => (20, 230),
            };
            for slot in row.iter_mut() {
                let exponent = (low + rng.below(high - low)) as u32;
                *slot = (rng.below(2) as u32) << 31 | exponent.min(255) << 23 | rng.below(1 << 23) as u32;
            }
            if spread == 2 && rng.chance(50) {
                row[rng.below(32) as usize] = rng.pick(&SPECIAL);
            }
        }
        if spread == 0 && rng.chance(50) {
            // One lane at a bound of the vector paths: (denominator's, numerator's exponent)
            // either side of e2 ≥ 24, e1 ≤ 250, −125 ≤ e2 − e1 ≤ 95, e2 − e1 ≥ −150.
            let (e1, e2) = rng.pick(&[
                (100u32, 23u32),
                (100, 24),
                (250, 200),
                (251, 200),
                (150, 25),
                (150, 24),
                (60, 155),
                (60, 156),
                (180, 30),
                (180, 29),
                (175, 25),
                (176, 25),
            ]);
            let lane = rng.below(32) as usize;
            let mantissa = |rng: &mut Rng| rng.below(1 << 23) as u32;
            registers.vgpr[1][lane] = e1 << 23 | mantissa(&mut rng);
            registers.vgpr[2][lane] = e2 << 23 | mantissa(&mut rng);
        }
        registers.sgpr[106] = if rng.chance(50) { 0 } else { rng.next() as u32 };
        registers.sgpr[126] = if rng.chance(80) { u32::MAX } else { rng.next() as u32 };
        let ordinary = spread == 0 && registers.sgpr[106] == 0;
        let (interpreted, expected) = run_alone(&words, &registers, Tier::Interpreter);
        assert_eq!(interpreted, Ok(5), "four instructions and the end");
        if !native::host_supported() {
            return;
        }
        let (compiled, after) = run_alone(&words, &registers, Tier::Native);
        assert_eq!(compiled, interpreted, "round {round}");
        assert_eq!(after.vgpr, expected.vgpr, "round {round}: the rows");
        assert_eq!(after.sgpr[106], expected.sgpr[106], "round {round}: VCC");
        assert_eq!(after.sgpr[4], expected.sgpr[4], "round {round}: s4");
        fast_rows += usize::from(ordinary);
    }
    assert!(fast_rows > 300, "{fast_rows} rounds of ordinary rows");
}

#[test]
fn a_lane_read_into_exec_narrows_the_next_instructions_lanes() {
    // llvm-mc-19 -mcpu=gfx1100: v_readfirstlane_b32 exec_lo, v1; v_mov_b32 v2, v3;
    // v_readlane_b32 exec_lo, v4, 5; v_mov_b32 v5, v3. Each new EXEC (lane 0 of v1, then lane 5
    // of v4, which the first EXEC keeps active) decides which lanes the next move writes.
    let words = [0x7EFC0501, 0x7E040303, 0xD760007E, 0x00010B04, 0x7E0A0303];
    let mut starting = Registers::new(8);
    starting.sgpr[126] = u32::MAX;
    starting.vgpr[1][0] = 0x0000_FF3F;
    starting.vgpr[4][5] = 0x00F0_0021;
    for lane in 0..32 {
        starting.vgpr[3][lane] = 100 + lane as u32;
    }
    let (interpreted, expected) = run_alone(&words, &starting, Tier::Interpreter);
    assert_eq!(interpreted, Ok(5));
    assert_eq!(expected.sgpr[126], 0x00F0_0021, "the second lane read is EXEC");
    for lane in 0..32 {
        let moved = |exec: u32, register: usize| {
            if exec >> lane & 1 == 1 { 100 + lane as u32 } else { starting.vgpr[register][lane] }
        };
        assert_eq!(expected.vgpr[2][lane], moved(0x0000_FF3F, 2), "v2 lane {lane}");
        assert_eq!(expected.vgpr[5][lane], moved(0x00F0_0021, 5), "v5 lane {lane}");
    }
    if !native::host_supported() {
        return;
    }
    let (compiled, registers) = run_alone(&words, &starting, Tier::Native);
    assert_eq!(compiled, interpreted);
    assert_eq!(registers.vgpr, expected.vgpr, "the native tier's lanes after each EXEC");
    assert_eq!(registers.sgpr, expected.sgpr);
}

#[test]
fn lds_loads_reuse_an_address_rows_shape_only_while_the_row_is_unchanged() {
    // llvm-mc-19 -mcpu=gfx1100: ds_store_b32 v6, v7; ds_store_b32 v6, v8 offset:128 (dwords
    // 0–63 of the LDS are 1000 + i and 2000 + i); ds_load_b32 v1, v0 (consecutive addresses);
    // v_mov_b32 v0, v9; ds_load_b32 v2, v0; ds_load_b32 v3, v0 offset:8 (one address, twice);
    // v_mov_b32 v0, v10; ds_load_b32 v4, v0; ds_load_b32 v5, v0 offset:400 (the same row, now
    // past the LDS's end in some lanes); ds_load_2addr_b32 v[11:12], v0 offset1:3. Compiled code
    // remembers each address row's shape and highest address while the row is unchanged: a
    // shape or range kept for a changed row, or a range test skipped for a known one, would
    // read the wrong words (or past the LDS).
    let words = [
        0xD834_0000,
        0x0000_0706,
        0xD834_0080,
        0x0000_0806,
        0xD8D8_0000,
        0x0100_0000,
        0x7E00_0309,
        0xD8D8_0000,
        0x0200_0000,
        0xD8D8_0008,
        0x0300_0000,
        0x7E00_030A,
        0xD8D8_0000,
        0x0400_0000,
        0xD8D8_0190,
        0x0500_0000,
        0xD8DC_0300,
        0x0B00_0000,
    ];
    let mut starting = Registers::new(16);
    starting.sgpr[126] = u32::MAX;
    for lane in 0..32u32 {
        let l = lane as usize;
        starting.vgpr[0][l] = 4 * lane + 4;
        starting.vgpr[6][l] = 4 * lane;
        starting.vgpr[7][l] = 1000 + lane;
        starting.vgpr[8][l] = 2032 + lane;
        starting.vgpr[9][l] = 64;
        starting.vgpr[10][l] = (lane * 12) % 256 + if lane % 2 == 1 { 256 } else { 0 };
    }
    // The word the interpreter reads at an address: what the stores wrote, 0 elsewhere (past
    // the LDS's end included).
    let word = |address: u32| match address / 4 {
        dword @ 0..32 => 1000 + dword,
        dword @ 32..64 => 2000 + dword,
        _ => 0,
    };
    let (interpreted, expected) = run_alone(&words, &starting, Tier::Interpreter);
    assert_eq!(interpreted, Ok(11), "ten instructions and the s_endpgm");
    for lane in 0..32u32 {
        let l = lane as usize;
        let irregular = starting.vgpr[10][l];
        assert_eq!(expected.vgpr[1][l], word(4 * lane + 4), "v1 lane {lane}");
        assert_eq!(expected.vgpr[2][l], 1016, "v2 lane {lane}");
        assert_eq!(expected.vgpr[3][l], 1018, "v3 lane {lane}");
        assert_eq!(expected.vgpr[4][l], word(irregular), "v4 lane {lane}");
        assert_eq!(expected.vgpr[5][l], word(irregular + 400), "v5 lane {lane}: 0 past the end");
        assert_eq!(expected.vgpr[12][l], word(irregular + 12), "v12 lane {lane}");
    }
    if !native::host_supported() {
        return;
    }
    // Twice: the second run finds the first's shapes in the frame it reuses.
    for run in 0..2 {
        let (compiled, registers) = run_alone(&words, &starting, Tier::Native);
        assert_eq!(compiled, interpreted, "run {run}");
        assert_eq!(registers.vgpr, expected.vgpr, "the native tier's loads, run {run}");
    }
}

/// The same loads in a wave64 wave whose halves have different address rows (reversed,
/// another broadcast, another irregular row): each half remembers its rows' shapes in slots of
/// its own, and must read what the interpreter reads, on a first run and on a second that finds
/// the first's shapes in the frame.
#[test]
fn wave64_lds_loads_keep_each_halfs_address_row_shapes_apart() {
    // The sequence of `lds_loads_reuse_an_address_rows_shape_only_while_the_row_is_unchanged`
    // (its encodings are the same for wave64) with ds_load_b32 v13, v0 offset:4 after its first
    // load (the same row again: reversed in the low half, consecutive in the high half, where
    // neither half may take the other's shape), ending in s_endpgm.
    let words = [
        0xD834_0000,
        0x0000_0706,
        0xD834_0080,
        0x0000_0806,
        0xD8D8_0000,
        0x0100_0000,
        0xD8D8_0004,
        0x0D00_0000,
        0x7E00_0309,
        0xD8D8_0000,
        0x0200_0000,
        0xD8D8_0008,
        0x0300_0000,
        0x7E00_030A,
        0xD8D8_0000,
        0x0400_0000,
        0xD8D8_0190,
        0x0500_0000,
        0xD8DC_0300,
        0x0B00_0000,
        0xBFB0_0000,
    ];
    let mut starting = Registers::wave64(16);
    starting.sgpr[126] = u32::MAX;
    starting.sgpr[127] = u32::MAX;
    for lane in 0..32u32 {
        let l = lane as usize;
        starting.vgpr[0][l] = 252 - 4 * lane;
        starting.high_vgpr[0][l] = 4 * lane + 4;
        for rows in [&mut starting.vgpr, &mut starting.high_vgpr] {
            rows[6][l] = 4 * lane;
            rows[7][l] = 1000 + lane;
            rows[8][l] = 2032 + lane;
        }
        starting.vgpr[9][l] = 64;
        starting.high_vgpr[9][l] = 128;
        starting.vgpr[10][l] = (lane * 12) % 256 + if lane % 2 == 1 { 256 } else { 0 };
        starting.high_vgpr[10][l] = (lane * 20) % 256 + if lane % 3 == 1 { 256 } else { 0 };
    }
    let (interpreted, expected) = run_alone(&words, &starting, Tier::Interpreter);
    assert_eq!(interpreted, Ok(12), "eleven instructions and the s_endpgm");
    // Both halves stored the same words: dwords 0–31 are 1000 + i, 32–63 are 2000 + i, and the
    // rest of the LDS is 0.
    let word = |address: u32| match address / 4 {
        dword @ 0..32 => 1000 + dword,
        dword @ 32..64 => 2000 + dword,
        _ => 0,
    };
    for lane in 0..32usize {
        assert_eq!(expected.vgpr[1][lane], word(252 - 4 * lane as u32), "low v1 lane {lane}");
        assert_eq!(expected.vgpr[13][lane], word(256 - 4 * lane as u32), "low v13 lane {lane}");
        assert_eq!(expected.high_vgpr[13][lane], word(4 * lane as u32 + 8), "high v13 lane {lane}");
        assert_eq!(expected.high_vgpr[2][lane], word(128), "high v2 lane {lane}");
        assert_eq!(expected.vgpr[2][lane], word(64), "low v2 lane {lane}");
    }
    if !native::host_supported() {
        return;
    }
    for run in 0..2 {
        let (compiled, registers) = run_alone(&words, &starting, Tier::Native);
        assert_eq!(compiled, interpreted, "run {run}");
        assert_eq!(registers.vgpr, expected.vgpr, "the low half's loads, run {run}");
        assert_eq!(registers.high_vgpr, expected.high_vgpr, "the high half's loads, run {run}");
    }
}

/// LDS stores whose active lanes share one address (a wave's result every lane holds, stored from
/// all of them), in the whole row and chunk by chunk, under full and partial EXEC: the last
/// active lane's value stays, and a `2addr` store's second element after its first.
#[test]
fn lds_stores_of_many_lanes_at_one_address_keep_the_last_lanes_value() {
    // ds_store_b32 v9, v7 (v9 = 64 in every lane); ds_store_2addr_b32 v10, v7, v8 offset0:1
    // offset1:1 (v10 = 128: both elements at 132); ds_store_b32 v11, v8 (v11 = 256 + 4 × the
    // lane's chunk of eight); then the words back as rows: ds_load_b32 v1, v12; the same at
    // offset:128 into v2 and offset:256 into v3 (v12 = 4 × the lane). DS words: opcode << 18
    // (13 ds_store_b32, 14 ds_store_2addr_b32, 54 ds_load_b32), offset1 << 8 | offset0; then
    // vdst << 24 | data1 << 16 | data0 << 8 | addr.
    let words = [
        0xD834_0000,
        0x0000_0709,
        0xD838_0101,
        0x0008_070A,
        0xD834_0000,
        0x0000_080B,
        0xD8D8_0000,
        0x0100_000C,
        0xD8D8_0080,
        0x0200_000C,
        0xD8D8_0100,
        0x0300_000C,
    ];
    for exec in [u32::MAX, 0x7FFF_FFF0, 0x00FF_FF01, 0x8000_0000] {
        let mut starting = Registers::new(16);
        starting.sgpr[126] = exec;
        for lane in 0..32u32 {
            let l = lane as usize;
            starting.vgpr[7][l] = 100 + lane;
            starting.vgpr[8][l] = 200 + lane;
            starting.vgpr[9][l] = 64;
            starting.vgpr[10][l] = 128;
            starting.vgpr[11][l] = 256 + 4 * (lane / 8);
            starting.vgpr[12][l] = 4 * lane;
        }
        let (interpreted, expected) = run_alone(&words, &starting, Tier::Interpreter);
        assert_eq!(interpreted, Ok(7), "six instructions and the s_endpgm");
        // The word at an LDS address after the stores, read back by the loads' lanes.
        let last = |lanes: u32| (lanes != 0).then(|| 31 - lanes.leading_zeros());
        let word = |address: u32| match address {
            64 => last(exec).map_or(0, |lane| 100 + lane),
            132 => last(exec).map_or(0, |lane| 200 + lane),
            256..272 => last(exec & 0xFF << (2 * (address - 256))).map_or(0, |lane| 200 + lane),
            _ => 0,
        };
        for lane in (0..32u32).filter(|lane| exec >> lane & 1 == 1) {
            let l = lane as usize;
            assert_eq!(expected.vgpr[1][l], word(4 * lane), "v1 lane {lane}, EXEC {exec:#x}");
            assert_eq!(expected.vgpr[2][l], word(128 + 4 * lane), "v2 lane {lane}, EXEC {exec:#x}");
            assert_eq!(expected.vgpr[3][l], word(256 + 4 * lane), "v3 lane {lane}, EXEC {exec:#x}");
        }
        if !native::host_supported() {
            continue;
        }
        let (compiled, registers) = run_alone(&words, &starting, Tier::Native);
        assert_eq!(compiled, interpreted, "EXEC {exec:#x}");
        assert_eq!(registers.vgpr, expected.vgpr, "the native tier's stores, EXEC {exec:#x}");
    }
}

/// A wave64 wave whose low half is empty: `s_cbranch_execz` tests all 64 lanes (not taken), a
/// compare writes each half's lanes to its half of VCC, `v_cndmask` reads its half back,
/// `s_cbranch_vccz` tests both halves; then a wave64 WMMA, whose layout neither tier models,
/// stops the wave by name on both.
#[test]
fn wave64_halves_keep_their_own_exec_and_vcc_and_branches_test_both() {
    // llvm-mc-19 -mcpu=gfx1100 -mattr=+wavefrontsize64: s_cbranch_execz 1; v_mov_b32 v0, 7;
    // v_cmp_gt_u32 vcc, 5, v1; v_cndmask_b32_e64 v2, 1, 2, vcc; s_cbranch_vccz 1;
    // v_mov_b32 v3, 9; v_wmma_f32_16x16x16_f16 v[8:11], v[0:7], v[0:7], v[8:11].
    let words = [
        0xBFA5_0001,
        0x7E00_0287,
        0x7C98_0285,
        0xD501_0002,
        0x01A9_0481,
        0xBFA3_0001,
        0x7E06_0289,
        0xCC40_4008,
        0x1C22_0100,
    ];
    let mut starting = Registers::wave64(16);
    starting.sgpr[126] = 0;
    starting.sgpr[127] = 0x0000_FFFF;
    for lane in 0..32 {
        starting.vgpr[1][lane] = lane as u32 % 8;
        starting.high_vgpr[1][lane] = lane as u32 % 8;
        starting.vgpr[0][lane] = 0xAAAA;
        starting.high_vgpr[0][lane] = 0xAAAA;
    }
    let (interpreted, expected) = run_alone(&words, &starting, Tier::Interpreter);
    assert!(
        matches!(interpreted, Err(ExecError::Unsupported { mnemonic: "v_wmma_f32_16x16x16_f16", .. })),
        "{interpreted:?}"
    );
    // Lanes 32–47 run: 5 > v1 in lanes whose v1 is 0–4.
    let below_five = (0..32).filter(|lane| lane % 8 < 5 && *lane < 16).fold(0u32, |bits, lane| bits | 1 << lane);
    assert_eq!((expected.sgpr[106], expected.sgpr[107]), (0, below_five), "VCC's halves");
    for lane in 0..32 {
        assert_eq!(expected.vgpr[0][lane], 0xAAAA, "the empty low half keeps v0");
        let active = lane < 16;
        assert_eq!(expected.high_vgpr[0][lane], if active { 7 } else { 0xAAAA }, "v0 lane {}", 32 + lane);
        let selected = if below_five >> lane & 1 == 1 { 2 } else { 1 };
        assert_eq!(expected.high_vgpr[2][lane], if active { selected } else { 0 }, "v2 lane {}", 32 + lane);
        assert_eq!(expected.high_vgpr[3][lane], if active { 9 } else { 0 }, "VCC is not zero: v3 lane {}", 32 + lane);
    }
    if !native::host_supported() {
        return;
    }
    let (compiled, registers) = run_alone(&words, &starting, Tier::Native);
    assert_eq!(compiled, interpreted);
    assert_eq!((registers.vgpr, registers.high_vgpr), (expected.vgpr, expected.high_vgpr));
    assert_eq!(registers.sgpr, expected.sgpr);
}

/// Runs `words` (`s_cbranch_scc1 1`, then four instructions `op v0, v(2i−1), v(2i)`, then
/// `op v9, v1, v2; op v9, v0, v3`: a run onto v0 the native tier chains, `native/vector.rs`,
/// `accumulator_chain`) from 600 random starts (each row from `row`, given its index): EXEC full
/// or not, MODE IEEE's or not, SCC set or not (set: the branch enters the run at its second
/// instruction). Holds the native tier to the interpreter, and the interpreter, in IEEE mode and
/// for lanes without a NaN, to `host` (one instruction's result from a, b and the accumulator).
fn accumulator_chain_agrees(
    words: [u32; 7],
    seed: u64,
    row: impl Fn(&mut Rng, usize) -> [u32; 32],
    host: impl Fn(u32, u32, f32) -> f32,
) {
    let mut rng = Rng(seed);
    let mut chained = 0;
    for round in 0..600 {
        let mut registers = Registers::new(12);
        for (index, slot) in registers.vgpr.iter_mut().enumerate() {
            *slot = row(&mut rng, index);
        }
        registers.sgpr[126] = if rng.chance(60) { u32::MAX } else { rng.next() as u32 };
        registers.scc = rng.chance(30);
        if rng.chance(15) {
            registers.mode = (registers.mode & !0xFF) | rng.below(256) as u32;
        }
        let (interpreted, expected) = run_alone(&words, &registers, Tier::Interpreter);
        assert_eq!(interpreted, Ok(if registers.scc { 7 } else { 8 }), "round {round}");
        if registers.mode & 0xFF == 0xF0 {
            let bits = |row: usize, lane: usize| registers.vgpr[row][lane];
            for lane in (0..32).filter(|lane| registers.sgpr[126] >> lane & 1 == 1) {
                let first = if registers.scc { 2 } else { 1 };
                let mut v0 = f32::from_bits(bits(0, lane));
                for pair in first..=4 {
                    v0 = host(bits(2 * pair - 1, lane), bits(2 * pair, lane), v0);
                }
                let v9 = host(
                    v0.to_bits(),
                    bits(3, lane),
                    host(bits(1, lane), bits(2, lane), f32::from_bits(bits(9, lane))),
                );
                for (index, host) in [(0, v0), (9, v9)] {
                    let got = f32::from_bits(expected.vgpr[index][lane]);
                    assert!(
                        got.to_bits() == host.to_bits() || (got.is_nan() && host.is_nan()),
                        "round {round}: v{index} lane {lane}: interpreter {got:e}, host {host:e}"
                    );
                }
            }
            chained += usize::from(registers.sgpr[126] == u32::MAX);
        }
        if !native::host_supported() {
            continue;
        }
        let (compiled, after) = run_alone(&words, &registers, Tier::Native);
        assert_eq!(compiled, interpreted, "round {round}");
        assert_eq!(
            after.vgpr, expected.vgpr,
            "round {round}: the rows (EXEC {:#x}, MODE {:#x})",
            registers.sgpr[126], registers.mode
        );
    }
    assert!(chained > 200, "{chained} rounds ran the chain with every lane on");
}

/// `v_fmac_f32`: each FMA still rounded alone, NaNs as the interpreter's (rows of special values
/// only, one in five, so NaNs of different payloads meet in one FMA).
#[test]
fn a_chain_of_fmacs_onto_one_accumulator_agrees_as_one_run_and_entered_midway() {
    // llvm-mc-19 -mcpu=gfx1100: s_cbranch_scc1 1; v_fmac_f32 v0, v1, v2; v_fmac_f32 v0, v3, v4;
    // v_fmac_f32 v0, v5, v6; v_fmac_f32 v0, v7, v8; v_fmac_f32 v9, v1, v2; v_fmac_f32 v9, v0, v3.
    let words = [0xBFA2_0001, 0x5600_0501, 0x5600_0903, 0x5600_0D05, 0x5600_1107, 0x5612_0501, 0x5612_0700];
    let row = |rng: &mut Rng, _| {
        let special = rng.chance(20);
        core::array::from_fn(|lane| match (special, rng.chance(80)) {
            (true, _) => rng.pick(&SPECIAL),
            (false, true) => ((rng.below(2000) as f32 - 1000.0) / 7.0).to_bits(),
            (false, false) => value(rng, lane as u32),
        })
    };
    accumulator_chain_agrees(words, 0xF3AC_C4A1, row, |a, b, acc| f32::from_bits(a).mul_add(f32::from_bits(b), acc));
}

/// `v_dot2acc_f32_f16`, whose result is the interpreter's wherever a lane's is a NaN: the run
/// writes only once no lane of any step is NaN, else its first instruction's own code decides.
/// The host's model of the interpreter's rounding: the two products exact, summed in f64, the
/// accumulator added in f64, then f32.
#[test]
fn a_chain_of_dot2_onto_one_accumulator_agrees_as_one_run_and_entered_midway() {
    // llvm-mc-19 -mcpu=gfx1100: s_cbranch_scc1 1; v_dot2acc_f32_f16 v0, v1, v2; … v0, v3, v4;
    // … v0, v5, v6; … v0, v7, v8; … v9, v1, v2; … v9, v0, v3.
    let words = [0xBFA2_0001, 0x0400_0501, 0x0400_0903, 0x0400_0D05, 0x0400_1107, 0x0412_0501, 0x0412_0700];
    // The accumulators ordinary f32, the rest f16 pairs, and one row in ten any bits (NaNs).
    let row = |rng: &mut Rng, index: usize| {
        let wild = rng.chance(10);
        core::array::from_fn(|_| match (index, wild) {
            (0 | 9, false) => ((rng.below(2000) as f32 - 1000.0) / 7.0).to_bits(),
            (_, false) => value_f16_pair(rng),
            (_, true) => rng.next() as u32,
        })
    };
    let host = |a: u32, b: u32, acc: f32| {
        let half = |bits: u32| half::f16::from_bits(bits as u16).to_f32();
        let products = (half(a) * half(b)) as f64 + (half(a >> 16) * half(b >> 16)) as f64;
        (products + acc as f64) as f32
    };
    accumulator_chain_agrees(words, 0xD072_C4A1, row, host);
}

/// A wave64 vector operand reading `exec_lo` or `exec_hi` (or the pair, as a 64-bit value) gets
/// the same register in all 64 lanes, on both tiers, though the interpreter's high half holds
/// EXEC's halves swapped while it runs.
#[test]
fn a_wave64_read_of_exec_as_a_value_is_the_same_register_in_both_halves() {
    // llvm-mc-19 -mcpu=gfx1100 -mattr=+wavefrontsize64: v_mov_b32 v0, exec_lo;
    // v_mov_b32 v1, exec_hi; v_lshlrev_b64 v[2:3], 0, exec.
    let words = [0x7E00_027E, 0x7E02_027F, 0xD73C_0002, 0x0000_FC80];
    let mut starting = Registers::wave64(8);
    starting.sgpr[126] = 0xFFFF_FFFF;
    starting.sgpr[127] = 0x8000_FFFF;
    for tier in [Tier::Interpreter, Tier::Native] {
        if tier == Tier::Native && !native::host_supported() {
            continue;
        }
        let (result, after) = run_alone(&words, &starting, tier);
        assert_eq!(result, Ok(4), "{tier:?}");
        for lane in 0..64 {
            let row =
                |index: usize| if lane < 32 { after.vgpr[index][lane] } else { after.high_vgpr[index][lane - 32] };
            let active = lane < 32 || (0x8000_FFFFu32 >> (lane - 32)) & 1 == 1;
            if !active {
                continue;
            }
            assert_eq!(
                [row(0), row(1), row(2), row(3)],
                [0xFFFF_FFFF, 0x8000_FFFF, 0xFFFF_FFFF, 0x8000_FFFF],
                "{tier:?} lane {lane}"
            );
        }
    }
}

/// GLOBAL dword loads and stores over rows of every shape the native tier tells apart, on both
/// tiers: a whole row of consecutive dwords (its fast path: one range check, four vectors), the
/// same with one lane out of step, one lane's high half different, reversed, shared by every
/// lane, running past the buffer's end (a fault), or with low halves that wrap past 2^32; VGPR
/// pairs and SADDR bases; positive, zero and negative offsets; every lane active or not; wave32
/// and wave64. The result, the registers and the buffer must be identical.
#[test]
fn global_dwords_of_whole_rows_agree_with_the_interpreter_in_every_shape() {
    // GLOBAL (gfx11): word 0 = 0xDC00_0000 | opcode << 18 | SEG 2 << 16 | offset (13 bits,
    // signed); word 1 = vdst << 24 | saddr << 16 | data << 8 | addr (saddr 0x7C: off).
    // global_load_b32 is opcode 20, global_store_b32 26.
    let global = |opcode: u32, offset: i32, vdst: u32, saddr: u32, data: u32, addr: u32| {
        [0xDC02_0000 | opcode << 18 | (offset as u32 & 0x1FFF), vdst << 24 | saddr << 16 | data << 8 | addr]
    };
    const OFF: u32 = 0x7C;
    for offset in [0, 12, -8] {
        // global_load_b32 v4, v[0:1], off; global_store_b32 v[2:3], v5, off;
        // global_load_b32 v6, v8, s[0:1]; global_store_b32 v9, v7, s[0:1].
        let words: Vec<u32> = [
            global(20, offset, 4, OFF, 0, 0),
            global(26, offset, 0, OFF, 5, 2),
            global(20, offset, 6, 0, 0, 8),
            global(26, offset, 0, 0, 7, 9),
        ]
        .concat();
        for shape in 0..7 {
            for exec in [u32::MAX, 0x7FFF_FFFF, 0xFFFF_FFFE, 0x00FF_FF00] {
                for wave64 in [false, true] {
                    let buffer = std::cell::RefCell::new(vec![0u32; BUFFER_BYTES / 4]);
                    let address = buffer.borrow_mut().as_mut_ptr() as u64;
                    let start_words: Vec<u32> = (0..BUFFER_BYTES as u32 / 4).map(|word| 0x5000_0000 | word).collect();
                    // Lane `lane`'s byte offset into the buffer for `row` (0 to 3: the four
                    // address rows), in this shape.
                    let at = |row: u64, lane: u64| -> u64 {
                        let first = 64 + 512 * row;
                        match shape {
                            0 => first + 4 * lane,
                            1 => first + 4 * lane + if lane == 17 { 8 } else { 0 },
                            2 => first + 4 * lane,
                            3 => first + 4 * (31 - lane % 32),
                            4 => first,
                            5 => BUFFER_BYTES as u64 - 64 + 4 * lane,
                            _ => first + 4 * lane,
                        }
                    };
                    let mut start = if wave64 { Registers::wave64(16) } else { Registers::new(16) };
                    for (half, rows) in [&mut start.vgpr, &mut start.high_vgpr].into_iter().enumerate() {
                        for (lane_in_half, lane) in (0..rows.first().map_or(0, |_| 32)).zip(32 * half as u64..) {
                            let pair = |row: u64| address + at(row, lane);
                            rows[0][lane_in_half] = pair(0) as u32;
                            rows[1][lane_in_half] = (pair(0) >> 32) as u32;
                            rows[2][lane_in_half] = pair(1) as u32;
                            rows[3][lane_in_half] = (pair(1) >> 32) as u32;
                            rows[5][lane_in_half] = 0x1000 + lane as u32;
                            rows[7][lane_in_half] = 0x2000 + lane as u32;
                            rows[8][lane_in_half] = at(2, lane) as u32;
                            rows[9][lane_in_half] = at(3, lane) as u32;
                            if shape == 6 {
                                // Low halves that wrap past 2^32 within the row.
                                rows[0][lane_in_half] = 0xFFFF_FFC0u32.wrapping_add(4 * lane_in_half as u32);
                                rows[8][lane_in_half] = 0xFFFF_FFC0u32.wrapping_add(4 * lane_in_half as u32);
                            }
                        }
                    }
                    if shape == 2 {
                        start.vgpr[1][5] ^= 1;
                        start.vgpr[3][30] ^= 1;
                    }
                    start.sgpr[0] = address as u32;
                    start.sgpr[1] = (address >> 32) as u32;
                    start.sgpr[126] = exec;
                    if wave64 {
                        start.sgpr[127] = exec.rotate_left(7);
                    }
                    let memory = Regions(vec![(address, BUFFER_BYTES as u64)]);
                    let run = |tier| {
                        let mut registers = start.clone();
                        let mut lds = vec![0u8; LDS_BYTES];
                        buffer.borrow_mut().copy_from_slice(&start_words);
                        let result = run_code(Isa::Gfx11, &words, &mut registers, &memory, &mut lds, tier);
                        (result, registers, buffer.borrow().clone())
                    };
                    let (interpreted, expected, expected_buffer) = run(Tier::Interpreter);
                    let context = format!("offset {offset}, shape {shape}, EXEC {exec:#x}, wave64 {wave64}");
                    if shape == 0 && exec == u32::MAX && !wave64 {
                        // The fast path's own case: every load and store landed.
                        assert_eq!(interpreted, Ok(5), "{context}");
                        let word = |row: u64, lane: u64| ((at(row, lane) as i64 + offset as i64) / 4) as usize;
                        for lane in 0..32 {
                            assert_eq!(expected.vgpr[4][lane], start_words[word(0, lane as u64)], "{context}");
                            assert_eq!(expected_buffer[word(1, lane as u64)], 0x1000 + lane as u32, "{context}");
                            assert_eq!(expected.vgpr[6][lane], start_words[word(2, lane as u64)], "{context}");
                            assert_eq!(expected_buffer[word(3, lane as u64)], 0x2000 + lane as u32, "{context}");
                        }
                    }
                    if !native::host_supported() {
                        continue;
                    }
                    let (compiled, registers, buffer_after) = run(Tier::Native);
                    assert_eq!(compiled, interpreted, "{context}");
                    assert_eq!(registers.vgpr, expected.vgpr, "{context}");
                    assert_eq!(registers.high_vgpr, expected.high_vgpr, "{context}");
                    assert!(buffer_after == expected_buffer, "global memory differs: {context}");
                }
            }
        }
    }
}

/// `v_lshlrev_b64` and `v_lshrrev_b64` by every inline constant count (0 to 64, −1 to −16: the
/// count's low six bits), of a VGPR pair and of an SGPR pair, every lane active or not, on both
/// tiers: the native tier's constant-count form against the interpreter's, bit for bit.
#[test]
fn sixty_four_bit_shifts_by_every_inline_count_agree_with_the_interpreter() {
    let mut rng = Rng(0x5EED_0064);
    for opcode in [0x33C_u32, 0x33D] {
        for inline in (128..=192).chain(193..=208) {
            for (source, exec) in [(0x102, u32::MAX), (0x102, 0x0F0F_F0F1), (4, u32::MAX)] {
                // VOP3: word 0 = 0xD400_0000 | opcode << 16 | vdst; word 1 = src0 | src1 << 9.
                let words = [0xD400_0000 | opcode << 16 | 6, inline | source << 9];
                let mut start = Registers::new(16);
                for row in start.vgpr.iter_mut() {
                    for lane in row.iter_mut() {
                        *lane = rng.next() as u32;
                    }
                }
                start.sgpr[4] = rng.next() as u32;
                start.sgpr[5] = rng.next() as u32;
                start.sgpr[126] = exec;
                let (interpreted, expected) = run_alone(&words, &start, Tier::Interpreter);
                assert_eq!(interpreted, Ok(2), "opcode {opcode:#x}, inline {inline}");
                // The interpreter's own answer for one lane, against a 64-bit shift.
                let count = if inline <= 192 { inline - 128 } else { (192 - inline as i32) as u32 } & 63;
                let (low, high) =
                    if source == 4 { (start.sgpr[4], start.sgpr[5]) } else { (start.vgpr[2][0], start.vgpr[3][0]) };
                let pair = u64::from(high) << 32 | u64::from(low);
                let shifted = if opcode == 0x33C { pair << count } else { pair >> count };
                assert_eq!(
                    (expected.vgpr[6][0], expected.vgpr[7][0]),
                    (shifted as u32, (shifted >> 32) as u32),
                    "opcode {opcode:#x}, count {count}"
                );
                if !native::host_supported() {
                    continue;
                }
                let (compiled, registers) = run_alone(&words, &start, Tier::Native);
                assert_eq!(compiled, interpreted, "opcode {opcode:#x}, inline {inline}");
                assert_eq!(registers.vgpr, expected.vgpr, "opcode {opcode:#x}, inline {inline}, EXEC {exec:#x}");
            }
        }
    }
}

/// `v_mad_u64_u32` with both factors uniform (SGPRs, inline constants), as kernels compute an
/// index: the native tier's scalar product and per-lane 64-bit add against the interpreter,
/// with carries out of the low half, a destination pair that overlaps the addend's, and lanes
/// inactive.
#[test]
fn a_multiply_add_of_uniform_factors_agrees_with_the_interpreter() {
    let mut rng = Rng(0x5EED_0AD0);
    // (src0, src1): s4 and s15, s4 and the inline 64, −1 (inline 193) and s15, two inlines.
    for (a, b) in [(4u32, 15u32), (4, 192), (193, 15), (130, 193)] {
        for (vdst, c) in [(2u32, 0u32), (0, 0), (1, 0), (0, 1)] {
            for exec in [u32::MAX, 0xF0F0_0F0F] {
                // VOP3 with an SGPR destination: word 0 = 0xD6FE_0000 | sdst (null) << 8 | vdst;
                // word 1 = src0 | src1 << 9 | src2 << 18.
                let words = [0xD6FE_0000 | 0x7C << 8 | vdst, a | b << 9 | (256 + c) << 18];
                let mut start = Registers::new(16);
                for row in start.vgpr.iter_mut() {
                    for lane in row.iter_mut() {
                        // Low halves near 2^32 often, so that the product's low half carries.
                        *lane = if rng.chance(50) { u32::MAX - rng.below(1 << 20) as u32 } else { rng.next() as u32 };
                    }
                }
                start.sgpr[4] = rng.next() as u32;
                start.sgpr[15] = rng.next() as u32;
                start.sgpr[126] = exec;
                let (interpreted, expected) = run_alone(&words, &start, Tier::Interpreter);
                assert_eq!(interpreted, Ok(2), "src0 {a}, src1 {b}");
                let factor = |operand: u32| match operand {
                    128..=192 => u64::from(operand - 128),
                    193 => u64::from(u32::MAX),
                    s => u64::from(start.sgpr[s as usize]),
                };
                let (c, vdst) = (c as usize, vdst as usize);
                let addend = u64::from(start.vgpr[c + 1][0]) << 32 | u64::from(start.vgpr[c][0]);
                let sum = factor(a).wrapping_mul(factor(b)).wrapping_add(addend);
                assert_eq!((expected.vgpr[vdst][0], expected.vgpr[vdst + 1][0]), (sum as u32, (sum >> 32) as u32));
                if !native::host_supported() {
                    continue;
                }
                let (compiled, registers) = run_alone(&words, &start, Tier::Native);
                assert_eq!(compiled, interpreted);
                assert_eq!(registers.vgpr, expected.vgpr, "src0 {a}, src1 {b}, v[{vdst}] from v[{c}], EXEC {exec:#x}");
            }
        }
    }
}

/// wave64 compares, carries and `v_mad_u64_u32` with a carry-out, as the gemm kernels' tile
/// loads have them (clang's gfx90a and gfx1100-wave64 code). The interpreter plans a mask
/// destination that a source names as `Plan::BothHalves`; where only an unused source field or
/// a carry-in pair that is also the carry-out pair names it, the native tier runs it half by
/// half, and where a scalar value lies in the low half's mask word (`s8` below) it takes the
/// interpreter's step. Registers, masks and instruction counts must be identical, from random
/// registers with random EXEC halves.
#[test]
fn wave64_compares_carries_and_multiply_adds_with_carry_out_agree_with_the_interpreter() {
    // llvm-mc-19 -mcpu=gfx1100 -mattr=+wavefrontsize64:
    let words = [
        0xD44C_0000,
        0x0002_000D, // v_cmp_gt_u32_e64 s[0:1], s13, v0
        0x7C98_020C, // v_cmp_gt_u32_e32 vcc, s12, v1
        0xD520_0202,
        0x000A_0407, // v_add_co_ci_u32_e64 v2, s[2:3], s7, v2, s[2:3]
        0x4006_060B, // v_add_co_ci_u32_e32 v3, vcc, s11, v3, vcc
        0xD6FE_0404,
        0x0410_1D06, // v_mad_u64_u32 v[4:5], s[4:5], v6, s14, v[4:5]
        0xD6FE_0608,
        0x0422_0F06, // v_mad_u64_u32 v[8:9], s[6:7], v6, v7, v[8:9]
        0xD521_020A,
        0x000A_030A, // v_sub_co_ci_u32_e64 v10, s[2:3], v10, v1, s[2:3]
        0xD520_080B,
        0x0022_1608, // v_add_co_ci_u32_e64 v11, s[8:9], s8, v11, s[8:9]
        0xD451_000C,
        0x0000_1904, // v_cmp_lt_i64_e64 s[12:13], v[4:5], s[12:13]
        0xBFB0_0000, // s_endpgm
    ];
    wave64_sequence_agrees(Isa::Gfx11, &words, 10, 0x6464_CA77, |start, expected| {
        // The interpreter's own carry-out of one active lane, against the definition.
        if start.sgpr[126] & 1 == 1 {
            let product = u64::from(start.vgpr[6][0]) * u64::from(start.sgpr[14]);
            let addend = u64::from(start.vgpr[5][0]) << 32 | u64::from(start.vgpr[4][0]);
            let (sum, carry) = product.overflowing_add(addend);
            assert_eq!((expected.vgpr[4][0], expected.vgpr[5][0]), (sum as u32, (sum >> 32) as u32));
            assert_eq!(expected.sgpr[4] & 1 == 1, carry);
        }
    });
}

/// The same for gfx90a's own forms (`v_addc_co_u32`, VOPC to VCC, `v_mad_u64_u32` with a
/// carry-out), as its gemm code has them; the last, whose carry-out pair `s[10:11]` holds its
/// multiplier `s10`, stays `Plan::BothHalves` and the interpreter's step.
#[test]
fn gfx90a_compares_carries_and_multiply_adds_with_carry_out_agree_with_the_interpreter() {
    // llvm-mc-19 -mcpu=gfx90a:
    let words = [
        0xD0CC_0002,
        0x0002_0A08, // v_cmp_gt_u32_e64 s[2:3], s8, v5
        0x7D98_0009, // v_cmp_gt_u32_e32 vcc, s9, v0
        0xD11C_020F,
        0x000A_1F05, // v_addc_co_u32_e64 v15, s[2:3], v5, v15, s[2:3]
        0x380A_0B02, // v_addc_co_u32_e32 v5, vcc, v2, v5, vcc
        0xD1E8_0406,
        0x0408_1503, // v_mad_u64_u32 v[6:7], s[4:5], v3, s10, v[2:3]
        0xD1E8_0A08,
        0x0422_040A, // v_mad_u64_u32 v[8:9], s[10:11], s10, v2, v[8:9]
        0xBF81_0000, // s_endpgm
    ];
    wave64_sequence_agrees(
        Isa::Gfx9(aqueduct_isa::gfx9::Processor::Gfx90a),
        &words,
        7,
        0x90A0_CA77,
        |start, expected| {
            // Both halves' multiply-add read the old s10 (the high half's lane 32 included).
            if start.sgpr[127] & 1 == 1 {
                let product = u64::from(start.sgpr[10]) * u64::from(start.high_vgpr[2][0]);
                let addend = u64::from(start.high_vgpr[9][0]) << 32 | u64::from(start.high_vgpr[8][0]);
                let sum = product.wrapping_add(addend);
                assert_eq!((expected.high_vgpr[8][0], expected.high_vgpr[9][0]), (sum as u32, (sum >> 32) as u32));
            }
        },
    );
}

/// Runs `words` (a wave64 sequence of `isa`, `executed` instructions) from 64 random register
/// sets (random EXEC halves, MODE's float fields cleared, lanes near 2^32 half the time so that
/// sums and products carry) on both tiers: `check` holds the interpreter to the definition, and
/// the native tier must leave the same result and registers.
fn wave64_sequence_agrees(isa: Isa, words: &[u32], executed: u64, seed: u64, check: impl Fn(&Registers, &Registers)) {
    let run = |start: &Registers, tier: Tier| {
        let mut registers = start.clone();
        let mut lds = vec![0u8; LDS_BYTES];
        let result = run_code(isa, words, &mut registers, &Regions(Vec::new()), &mut lds, tier);
        (result, registers)
    };
    let mut rng = Rng(seed);
    for round in 0..64 {
        let mut start = registers(&mut rng, 0, true);
        for row in start.vgpr.iter_mut().chain(start.high_vgpr.iter_mut()) {
            for lane in row.iter_mut() {
                if rng.chance(50) {
                    *lane = u32::MAX - rng.below(1 << 16) as u32;
                }
            }
        }
        start.mode &= !0xFF;
        let (interpreted, expected) = run(&start, Tier::Interpreter);
        assert_eq!(interpreted, Ok(executed), "round {round}");
        check(&start, &expected);
        if !native::host_supported() {
            continue;
        }
        let (compiled, registers) = run(&start, Tier::Native);
        assert_eq!(compiled, interpreted, "round {round}");
        assert_eq!(registers.sgpr, expected.sgpr, "round {round}: SGPRs");
        assert_eq!(registers.vgpr, expected.vgpr, "round {round}: low half");
        assert_eq!(registers.high_vgpr, expected.high_vgpr, "round {round}: high half");
    }
}
