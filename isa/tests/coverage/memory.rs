//! The memory family: DS, FLAT, GLOBAL, SCRATCH and MUBUF loads, stores and atomics of both
//! instruction sets, each run alone over 32 lanes at distinct addresses (every lane, then every
//! other pair) against a model of the bytes they touch: the RDNA2 and RDNA3 ISA guides' per-lane
//! pseudocode, written here again rather than taken from the interpreter.

use aqueduct_isa::interp::coverage::{Operation, Registers, execute};
use aqueduct_isa::interp::{Isa, Memory};

use super::{EXEC, HostBytes, Rng, assert_registers};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    Lds,
    Flat,
    Global,
    Scratch,
    Buffer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Load {
        bytes: usize,
        signed: bool,
        d16: bool,
        hi: bool,
    },
    Store {
        bytes: usize,
        hi: bool,
    },
    Atomic {
        op: &'static str,
        wide: bool,
        signed: bool,
        float: bool,
        returns: bool,
    },
    /// A cache invalidation or `ds_nop`: nothing changes.
    Nothing,
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    segment: Segment,
    kind: Kind,
    /// DS `2addr`/`read2`/`write2`: two elements at `offset0` and `offset1`, × 64 for `st64`.
    two: bool,
    stride64: bool,
    /// gfx10's `ds_cmpst`: the comparand in data0 and the new value in data1 (gfx11's
    /// `ds_cmpstore` has them the other way round).
    comparand_first: bool,
}

fn size(token: &str) -> Option<(usize, bool)> {
    Some(match token {
        "ubyte" | "u8" | "byte" | "b8" => (1, false),
        "sbyte" | "i8" => (1, true),
        "ushort" | "u16" | "short" | "b16" => (2, false),
        "sshort" | "i16" => (2, true),
        "dword" | "b32" | "u32" | "i32" | "f32" => (4, false),
        "dwordx2" | "b64" | "u64" | "i64" | "f64" => (8, false),
        "dwordx3" | "b96" => (12, false),
        "dwordx4" | "b128" => (16, false),
        _ => return None,
    })
}

/// The shape of a memory operation, from its name in either instruction set's spelling; `None`
/// for one outside the family (typed, lane-addressed, lane exchanges, LDS loads).
fn shape(name: &'static str) -> Option<Shape> {
    let tokens: Vec<&'static str> = name.split('_').collect();
    let segment = match tokens[0] {
        "ds" => Segment::Lds,
        "flat" => Segment::Flat,
        "global" => Segment::Global,
        "scratch" => Segment::Scratch,
        "buffer" => Segment::Buffer,
        _ => return None,
    };
    let excluded = ["format", "addtid", "append", "consume", "swizzle", "permute", "bpermute", "lds", "gws", "ordered"];
    if tokens.iter().any(|token| excluded.contains(token)) {
        return None;
    }
    let mut shape = Shape { segment, kind: Kind::Nothing, two: false, stride64: false, comparand_first: false };
    if matches!(name, "ds_nop" | "buffer_gl0_inv" | "buffer_gl1_inv") {
        return Some(shape);
    }
    let has = |token: &str| tokens.contains(&token);
    shape.two =
        has("2addr") || ["read2", "write2", "read2st64", "write2st64", "wrxchg2", "wrxchg2st64"].contains(&tokens[1]);
    shape.stride64 = has("stride64") || tokens[1].ends_with("st64");
    let last_size = tokens.iter().rev().find_map(|token| size(token));
    match tokens[1] {
        "load" | "read" | "read2" | "read2st64" => {
            let (bytes, signed) = last_size?;
            shape.kind = Kind::Load { bytes, signed, d16: has("d16"), hi: has("hi") };
        }
        "store" | "write" | "write2" | "write2st64" => {
            let (bytes, _) = last_size?;
            shape.kind = Kind::Store { bytes, hi: has("hi") };
        }
        _ => {
            let (op_token, rest) =
                if tokens[1] == "atomic" { (tokens[2], &tokens[3..]) } else { (tokens[1], &tokens[2..]) };
            let typed = rest.iter().find_map(|token| size(token).map(|(bytes, _)| (bytes, *token)));
            let x2 = rest.contains(&"x2");
            let (wide, type_token) = match typed {
                Some((bytes, token)) => (bytes == 8, token),
                None => (x2, ""),
            };
            let (op, signed, float) = match op_token {
                "smin" => ("min", true, false),
                "smax" => ("max", true, false),
                "umin" => ("min", false, false),
                "umax" => ("max", false, false),
                "fmin" => ("min", false, true),
                "fmax" => ("max", false, true),
                "fcmpswap" => ("cmpswap", false, true),
                "cmpst" => {
                    shape.comparand_first = true;
                    ("cmpswap", false, type_token.starts_with('f'))
                }
                "cmpstore" => ("cmpswap", false, type_token.starts_with('f')),
                "storexchg" | "wrxchg" | "wrxchg2" | "wrxchg2st64" => ("swap", false, false),
                "add" | "sub" | "rsub" | "csub" | "inc" | "dec" | "and" | "or" | "xor" | "swap" | "cmpswap"
                | "mskor" | "wrap" | "min" | "max" | "condxchg32" => {
                    (op_token, type_token.starts_with('i'), type_token.starts_with('f'))
                }
                _ => return None,
            };
            let returns = segment != Segment::Lds || has("rtn");
            let wide = wide || op_token == "condxchg32";
            shape.kind = Kind::Atomic { op, wide, signed, float, returns };
        }
    }
    Some(shape)
}

/// `op` on the old value: the guides' per-lane arithmetic.
fn apply(op: &str, signed: bool, float: bool, wide: bool, old: u64, value: u64, compare: u64) -> u64 {
    let mask = if wide { u64::MAX } else { u32::MAX as u64 };
    let (old, value, compare) = (old & mask, value & mask, compare & mask);
    let as_float = |bits: u64| if wide { f64::from_bits(bits) } else { f32::from_bits(bits as u32) as f64 };
    let from_float = |value: f64| if wide { value.to_bits() } else { (value as f32).to_bits() as u64 };
    let as_signed = |bits: u64| if wide { bits as i64 } else { bits as u32 as i32 as i64 };
    let result = match op {
        "add" if float => from_float(as_float(old) + as_float(value)),
        "add" => old.wrapping_add(value),
        "sub" => old.wrapping_sub(value),
        "rsub" => value.wrapping_sub(old),
        "csub" => old.saturating_sub(value),
        "swap" => value,
        "cmpswap" if float => {
            if as_float(old) == as_float(compare) {
                value
            } else {
                old
            }
        }
        "cmpswap" => {
            if old == compare {
                value
            } else {
                old
            }
        }
        "min" if float => from_float(as_float(old).min(as_float(value))),
        "max" if float => from_float(as_float(old).max(as_float(value))),
        "min" if signed => {
            if as_signed(value) < as_signed(old) {
                value
            } else {
                old
            }
        }
        "max" if signed => {
            if as_signed(value) > as_signed(old) {
                value
            } else {
                old
            }
        }
        "min" => old.min(value),
        "max" => old.max(value),
        "and" => old & value,
        "or" => old | value,
        "xor" => old ^ value,
        "inc" => {
            if old >= value {
                0
            } else {
                old + 1
            }
        }
        "dec" => {
            if old == 0 || old > value {
                value
            } else {
                old - 1
            }
        }
        "mskor" => (old & !value) | compare,
        "wrap" => {
            if old >= value {
                old - value
            } else {
                old.wrapping_add(compare)
            }
        }
        "condxchg32" => {
            let half = |shift: u32| {
                let new = (value >> shift) as u32;
                if new >> 31 == 1 { ((new & 0x7FFF_FFFF) as u64) << shift } else { old & (0xFFFF_FFFF << shift) }
            };
            half(0) | half(32)
        }
        other => panic!("no reference for {other}"),
    };
    result & mask
}

/// Reads `count` bytes of lane `lane`'s data registers from `first` on.
fn data_bytes(registers: &Registers, first: usize, lane: usize, count: usize) -> Vec<u8> {
    (0..count.div_ceil(4)).flat_map(|index| registers.vgpr[first + index][lane].to_le_bytes()).take(count).collect()
}

fn read_u64(bytes: &[u8], at: usize, count: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..count].copy_from_slice(&bytes[at..at + count]);
    u64::from_le_bytes(word)
}

/// The words of `operation` with the operands this family uses: address v0 (v[0:1] for FLAT and
/// GLOBAL), data from v2, destination v8; LDS offsets or the instruction offset as given;
/// returning atomics with GLC; MUBUF through the V# in s[0:3] with `offen`.
fn words(isa: Isa, operation: &Operation, shape: &Shape, offset: u32) -> [u32; 3] {
    let [w0, _, _] = operation.words;
    let gfx11 = isa == Isa::Gfx11;
    match shape.segment {
        Segment::Lds => [(w0 & !0xFFFF) | offset, 2 << 8 | 4 << 16 | 8 << 24, 0],
        Segment::Flat | Segment::Global | Segment::Scratch => {
            let off = if gfx11 { 0x7C } else { 0x7D };
            let glc = 1 << if gfx11 { 14 } else { 16 };
            let scratch_vgpr = if gfx11 && shape.segment == Segment::Scratch { 1 << 23 } else { 0 };
            [(w0 & !0x1FFF & !glc) | glc | offset, 2 << 8 | off << 16 | scratch_vgpr | 8 << 24, 0]
        }
        Segment::Buffer => {
            let glc = 1 << 14;
            let (w0, offen) = if gfx11 { (w0, 1 << 22) } else { (w0 | 1 << 12, 0) };
            [(w0 & !0xFFF & !glc) | glc | offset, 2 << 8 | offen | 0x80 << 24, 0]
        }
    }
}

/// Checks a memory operation; `None` if it is not in the family.
pub fn check_memory(isa: Isa, operation: &Operation) -> Option<()> {
    let shape = shape(operation.mnemonic)?;
    let name = operation.mnemonic;
    let mut rng = Rng(0x3E3 ^ operation.words[0] as u64 ^ (operation.words[1] as u64) << 32);
    let element = match shape.kind {
        Kind::Load { bytes, .. } | Kind::Store { bytes, .. } => bytes,
        Kind::Atomic { wide, .. } => {
            if wide {
                8
            } else {
                4
            }
        }
        Kind::Nothing => 4,
    };
    // Each lane's elements within its own 256 elements, so no two lanes touch one byte.
    let lane_bytes = 256 * element;
    let span = 32 * lane_bytes;
    for round in 0..4 {
        let exec = if round % 2 == 0 { u32::MAX } else { 0x5A5A_A5A5 };
        let offset: u32 = match shape.segment {
            Segment::Lds if shape.two => (rng.next() as u32 & 0x0303) | 0x0100,
            Segment::Lds => rng.next() as u32 & 0x1C,
            _ => [0, 16, 8, 4][round] & !(element as u32 - 1).min(15),
        };
        let initial: Vec<u8> = (0..span).map(|_| rng.next() as u8).collect();
        let memory = HostBytes::new(if shape.segment == Segment::Lds || shape.segment == Segment::Scratch {
            Vec::new()
        } else {
            initial.clone()
        });
        let mut lds = if shape.segment == Segment::Lds { initial.clone() } else { Vec::new() };
        let mut registers = Registers::new(16);
        registers.sgpr[EXEC] = exec;
        for register in 2..16 {
            for lane in 0..32 {
                registers.vgpr[register][lane] = rng.next() as u32;
            }
        }
        // Float atomics on ordinary values (the NaN rules are the minimum's and maximum's own).
        if let Kind::Atomic { float: true, wide, .. } = shape.kind {
            for register in 2..6 {
                for lane in 0..32 {
                    let value = (rng.next() % 2001) as f64 / 8.0 - 125.0;
                    if wide {
                        let bits = value.to_bits();
                        if register % 2 == 0 {
                            registers.vgpr[register][lane] = bits as u32;
                            registers.vgpr[register + 1][lane] = (bits >> 32) as u32;
                        }
                    } else {
                        registers.vgpr[register][lane] = (value as f32).to_bits();
                    }
                }
            }
        }
        let base = memory.base();
        // Where lane `lane`'s element is: its address, and where the model keeps those bytes.
        // Scratch is the lane's own, so its addresses are small and its bytes lane after lane.
        let private = span / 32;
        let lane_start = |lane: usize| {
            if shape.segment == Segment::Scratch { (lane % 4) as u64 * 16 } else { (lane * lane_bytes) as u64 }
        };
        let position = |lane: usize| {
            if shape.segment == Segment::Scratch {
                lane * private + lane_start(lane) as usize
            } else {
                lane_start(lane) as usize
            }
        };
        if shape.segment == Segment::Scratch {
            registers.private_bytes = private;
            registers.scratch = initial.clone();
        }
        let mut model = if shape.segment == Segment::Scratch { Vec::new() } else { initial.clone() };
        let mut scratch_model = registers.scratch.clone();
        for lane in 0..32 {
            let address = match shape.segment {
                Segment::Lds | Segment::Buffer | Segment::Scratch => lane_start(lane),
                Segment::Flat | Segment::Global => base + lane_start(lane),
            };
            // Float atomics: put an ordinary value in memory too.
            if let Kind::Atomic { float: true, wide, .. } = shape.kind {
                let value = (rng.next() % 2001) as f64 / 8.0 - 125.0;
                let bytes = if wide {
                    value.to_bits().to_le_bytes().to_vec()
                } else {
                    (value as f32).to_bits().to_le_bytes().to_vec()
                };
                let at = position(lane);
                let target: &mut Vec<u8> = match shape.segment {
                    Segment::Lds => &mut lds,
                    Segment::Scratch => &mut registers.scratch,
                    _ => &mut model,
                };
                target[at..at + bytes.len()].copy_from_slice(&bytes);
                if shape.segment == Segment::Scratch {
                    scratch_model[at..at + bytes.len()].copy_from_slice(&bytes);
                }
            }
            registers.vgpr[0][lane] = address as u32;
            registers.vgpr[1][lane] = (address >> 32) as u32;
        }
        if matches!(shape.segment, Segment::Flat | Segment::Global | Segment::Buffer) {
            // The memory starts as the model does (float atomics put ordinary values in both).
            memory.write(base, &model.clone()).unwrap();
        }
        if shape.segment == Segment::Buffer {
            registers.sgpr[0] = base as u32;
            registers.sgpr[1] = (base >> 32) as u32; // stride 0
            registers.sgpr[2] = span as u32; // num_records
            registers.sgpr[3] = 0;
        }
        let words = words(isa, operation, &shape, offset);
        let mut expected = registers.clone();
        expected.scratch = scratch_model.clone();
        let mut lds_model = lds.clone();
        // MUBUF loads and returns into its data registers; the others into v8.
        let result_register = if shape.segment == Segment::Buffer { 2 } else { 8 };
        for lane in (0..32).filter(|lane| exec >> lane & 1 == 1) {
            let (bytes_model, start): (&mut Vec<u8>, usize) = match shape.segment {
                Segment::Lds => (&mut lds_model, position(lane)),
                Segment::Scratch => (&mut expected.scratch, position(lane)),
                _ => (&mut model, position(lane)),
            };
            let elements: Vec<usize> = if shape.two {
                let stride = if shape.stride64 { 64 } else { 1 } * element;
                vec![start + (offset & 0xFF) as usize * stride, start + (offset >> 8) as usize * stride]
            } else {
                vec![start + offset as usize]
            };
            match shape.kind {
                Kind::Nothing => {}
                Kind::Load { bytes, signed, d16, hi } => {
                    for (index, &at) in elements.iter().enumerate() {
                        let destination = result_register + index * bytes.div_ceil(4);
                        if bytes >= 4 {
                            for dword in 0..bytes / 4 {
                                expected.vgpr[destination + dword][lane] =
                                    read_u64(bytes_model, at + 4 * dword, 4) as u32;
                            }
                            continue;
                        }
                        let raw = read_u64(bytes_model, at, bytes) as u32;
                        let bits = 8 * bytes as u32;
                        let value = if signed { (((raw << (32 - bits)) as i32) >> (32 - bits)) as u32 } else { raw };
                        let old = expected.vgpr[destination][lane];
                        expected.vgpr[destination][lane] = match (d16, hi) {
                            (false, _) => value,
                            (true, false) => (old & 0xFFFF_0000) | (value & 0xFFFF),
                            (true, true) => (old & 0xFFFF) | value << 16,
                        };
                    }
                }
                Kind::Store { bytes, hi } => {
                    for (index, &at) in elements.iter().enumerate() {
                        let source = if index == 0 {
                            2
                        } else if shape.segment == Segment::Lds {
                            4
                        } else {
                            2
                        };
                        let mut data = data_bytes(&registers, source, lane, bytes.max(4));
                        if hi {
                            data = (registers.vgpr[source][lane] >> 16).to_le_bytes().to_vec();
                        }
                        bytes_model[at..at + bytes].copy_from_slice(&data[..bytes]);
                    }
                }
                Kind::Atomic { op, wide, signed, float, returns } => {
                    let width = if wide { 8 } else { 4 };
                    let pair = |register: usize| {
                        let low = registers.vgpr[register][lane] as u64;
                        if wide { low | (registers.vgpr[register + 1][lane] as u64) << 32 } else { low }
                    };
                    // Operands: VMEM's data then comparand (after the data); DS's data0, data1.
                    let second = if shape.segment == Segment::Lds { 4 } else { 2 + width / 4 };
                    for (index, &at) in elements.iter().enumerate() {
                        let old = read_u64(bytes_model, at, width);
                        let (value, compare) = match op {
                            "cmpswap" if shape.comparand_first => (pair(second), pair(2)),
                            "cmpswap" | "mskor" | "wrap" => (pair(2), pair(second)),
                            _ if index == 1 => (pair(second), 0),
                            _ => (pair(2), 0),
                        };
                        let new = apply(op, signed, float, wide, old, value, compare);
                        bytes_model[at..at + width].copy_from_slice(&new.to_le_bytes()[..width]);
                        if returns {
                            let destination = result_register + index * width / 4;
                            expected.vgpr[destination][lane] = old as u32;
                            if wide {
                                expected.vgpr[destination + 1][lane] = (old >> 32) as u32;
                            }
                        }
                    }
                }
            }
        }
        execute(isa, &words, &mut registers, &memory, &mut lds)
            .unwrap_or_else(|error| panic!("{isa:?} {name} (offset {offset:#x}): {error}"));
        let what = format!("{isa:?} {name} (offset {offset:#x}, exec {exec:#x})");
        assert_registers(&registers, &expected, &what);
        match shape.segment {
            Segment::Lds => assert!(lds == lds_model, "{what}: the LDS differs from the model"),
            Segment::Scratch => {}
            _ => assert!(memory.bytes() == model, "{what}: memory differs from the model"),
        }
    }
    Some(())
}

/// The typed buffer accesses of gfx11 (MUBUF's `_format_` forms through the V#'s format, MTBUF's
/// through its own), on the two formats whose conversion is the identity: `32_32_32_32_UINT` and,
/// for the d16 forms, `16_16_16_16_UINT`; the V#'s destination selects the identity (X, Y, Z,
/// W). A load fills `count` registers (d16: halves, two a register, the others kept) from the
/// element's components; a store writes `count` components and leaves the rest of the element.
/// gfx10.3's are left out: its V# numbers the formats differently. `None` for other operations.
pub fn check_typed(isa: Isa, operation: &Operation) -> Option<()> {
    let name = operation.mnemonic;
    if isa != Isa::Gfx11 || !name.contains("format") || !(name.starts_with("buffer_") || name.starts_with("tbuffer_")) {
        return None;
    }
    let components = name.rsplit('_').next()?;
    let count = match components {
        "x" => 1,
        "xy" => 2,
        "xyz" => 3,
        "xyzw" => 4,
        _ => return None,
    };
    let (load, d16, hi) = (name.contains("_load_"), name.contains("_d16_"), name.contains("_d16_hi_"));
    let format_name = if d16 { "16_16_16_16_UINT" } else { "32_32_32_32_UINT" };
    let format = (0..128).find(|&number| aqueduct_isa::gfx11::buffer_format_name(number) == Some(format_name))?;
    let component_bytes = if d16 { 2 } else { 4 };
    let element = 4 * component_bytes;
    let mut rng = Rng(0x7B0F ^ operation.words[0] as u64);
    let typed_buffer = name.starts_with("tbuffer_");
    for round in 0..4 {
        let exec = if round % 2 == 0 { u32::MAX } else { rng.next() as u32 };
        let initial: Vec<u8> = (0..element * 32 + 64).map(|_| rng.next() as u8).collect();
        let memory = HostBytes::new(initial.clone());
        let mut registers = Registers::new(12);
        for register in 2..12 {
            for lane in 0..32 {
                registers.vgpr[register][lane] = rng.next() as u32;
            }
        }
        registers.sgpr[EXEC] = exec;
        let base = memory.base();
        let selects = 4 | 5 << 3 | 6 << 6 | 7 << 9;
        registers.sgpr[0] = base as u32;
        registers.sgpr[1] = (base >> 32) as u32;
        registers.sgpr[2] = initial.len() as u32;
        registers.sgpr[3] = selects | if typed_buffer { 0 } else { format << 12 };
        for lane in 0..32 {
            registers.vgpr[0][lane] = (lane * element) as u32;
        }
        let [w0, _, _] = operation.words;
        let w0 = if typed_buffer { (w0 & !(0x7F << 19) & !0xFFF) | format << 19 } else { w0 & !0xFFF & !(1 << 14) };
        let words = [w0, 2 << 8 | 1 << 22 | 0x80 << 24, 0];
        let mut expected = registers.clone();
        let mut model = initial.clone();
        for lane in (0..32).filter(|&lane| exec >> lane & 1 == 1) {
            let at = lane * element;
            for component in 0..count {
                let place = at + component * component_bytes;
                let (register, high) =
                    if d16 { (2 + component / 2, hi || component % 2 == 1) } else { (2 + component, false) };
                if load {
                    let value = if d16 {
                        u16::from_le_bytes(model[place..place + 2].try_into().unwrap()) as u32
                    } else {
                        u32::from_le_bytes(model[place..place + 4].try_into().unwrap())
                    };
                    let old = expected.vgpr[register][lane];
                    expected.vgpr[register][lane] = match (d16, high) {
                        (false, _) => value,
                        (true, false) => (old & 0xFFFF_0000) | value,
                        (true, true) => (old & 0xFFFF) | value << 16,
                    };
                } else {
                    let value = registers.vgpr[register][lane];
                    if d16 {
                        let half = if high { value >> 16 } else { value } as u16;
                        model[place..place + 2].copy_from_slice(&half.to_le_bytes());
                    } else {
                        model[place..place + 4].copy_from_slice(&value.to_le_bytes());
                    }
                }
            }
        }
        let mut lds = [0u8; 0];
        execute(isa, &words, &mut registers, &memory, &mut lds)
            .unwrap_or_else(|error| panic!("{isa:?} {name}: {error}"));
        let what = format!("{isa:?} {name} ({format_name}) round {round}");
        assert_registers(&registers, &expected, &what);
        assert!(memory.bytes() == model, "{what}: memory differs from the model");
    }
    Some(())
}
