//! The operations with state beyond their operands: register-relative moves (M0), the program
//! counter, the clock, lane-addressed LDS and global memory, the LDS append counter, swaps,
//! moves and no-ops, carries through VCC, literal constants, dual issue, mixed precision and
//! packed math. Each against the RDNA3 (or RDNA2) ISA guide's pseudocode.

use aqueduct_isa::interp::Isa;
use aqueduct_isa::interp::coverage::{CLOCK, Next, Operation, PC, Registers, execute};
use half::f16;

use super::{EXEC, HostBytes, Rng, Unmapped, VCC, assert_registers, base_name, gfx11_name};

const M0: usize = 125;

fn random_registers(rng: &mut Rng, vgprs: usize) -> Registers {
    let mut registers = Registers::new(vgprs);
    for row in registers.vgpr.iter_mut() {
        for value in row.iter_mut() {
            *value = rng.next() as u32;
        }
    }
    for register in 0..16 {
        registers.sgpr[register] = rng.next() as u32;
    }
    registers
}

fn f16_bits(value: f64) -> u32 {
    f16::from_f64(value).to_bits() as u32
}
fn f16_value(bits: u32) -> f64 {
    f16::from_bits(bits as u16).to_f64()
}

/// Checks one of this family's operations; `None` if it is not one.
pub fn check_misc(isa: Isa, operation: &Operation) -> Option<()> {
    let name = gfx11_name(base_name(operation.mnemonic));
    let vector = !operation.mnemonic.starts_with("s_");
    let valu = vector && (operation.encoding.starts_with("Vop") || operation.encoding == "VopdY");
    let mut rng = Rng(0x315C ^ operation.words[0] as u64 ^ (operation.words[1] as u64) << 31);
    let words = operation.words;
    for round in 0..6 {
        let mut registers = random_registers(&mut rng, 16);
        let exec = if round % 2 == 0 { u32::MAX } else { rng.next() as u32 };
        registers.sgpr[EXEC] = exec;
        let active = |lane: usize| exec >> lane & 1 == 1;
        let mut expected;
        let mut words = words;
        let mut next = Next::Following;
        match name.as_str() {
            // Register-relative moves.
            "v_movrels_b32" | "v_movreld_b32" | "v_movrelsd_b32" | "v_movrelsd_2_b32" | "v_swaprel_b32" if valu => {
                let (low, high) = (rng.next() as u32 % 4, rng.next() as u32 % 4);
                registers.sgpr[M0] =
                    if name.ends_with("_2_b32") || name == "v_swaprel_b32" { low | high << 16 } else { low };
                let m0 = registers.sgpr[M0] as usize;
                let (from, to) = match name.as_str() {
                    "v_movrels_b32" => (m0, 4),
                    "v_movreld_b32" => (0, 4 + m0),
                    "v_movrelsd_b32" => (m0, 4 + m0),
                    _ => (low as usize, 4 + high as usize),
                };
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    expected.vgpr[to][lane] = registers.vgpr[from][lane];
                    if name == "v_swaprel_b32" {
                        expected.vgpr[from][lane] = registers.vgpr[to][lane];
                    }
                }
            }
            "s_movrels_b32" | "s_movrels_b64" | "s_movreld_b32" | "s_movreld_b64" | "s_movrelsd_2_b32" => {
                let (low, high) = (2 * (rng.next() as u32 % 3), 2 * (rng.next() as u32 % 3));
                let pair = name.ends_with("b64");
                registers.sgpr[M0] = if name == "s_movrelsd_2_b32" { low | high << 16 } else { low };
                let (from, to) = match name.as_str() {
                    "s_movrels_b32" | "s_movrels_b64" => (low as usize, 4),
                    "s_movreld_b32" | "s_movreld_b64" => (0, 4 + low as usize),
                    _ => (low as usize, 4 + high as usize),
                };
                expected = registers.clone();
                for index in 0..if pair { 2 } else { 1 } {
                    expected.sgpr[to + index] = registers.sgpr[from + index];
                }
            }
            // The program counter and the clock.
            "s_getpc_b64" => {
                expected = registers.clone();
                expected.sgpr[4] = (PC + 4) as u32;
                expected.sgpr[5] = ((PC + 4) >> 32) as u32;
            }
            "s_setpc_b64" | "s_swappc_b64" => {
                registers.sgpr[1] = 0;
                registers.sgpr[0] &= !3;
                expected = registers.clone();
                next = Next::Jump(registers.sgpr[0] as u64);
                if name == "s_swappc_b64" {
                    expected.sgpr[4] = (PC + 4) as u32;
                    expected.sgpr[5] = ((PC + 4) >> 32) as u32;
                }
            }
            "s_sendmsg_rtn_b32" | "s_sendmsg_rtn_b64" => {
                expected = registers.clone();
                expected.sgpr[4] = CLOCK as u32;
                if name.ends_with("b64") {
                    expected.sgpr[5] = (CLOCK >> 32) as u32;
                }
            }
            // Moves, swaps and no-ops.
            "v_nop" | "v_pipeflush" | "v_clrexcp" => expected = registers.clone(),
            "v_swap_b32" if valu => {
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    expected.vgpr[4][lane] = registers.vgpr[0][lane];
                    expected.vgpr[0][lane] = registers.vgpr[4][lane];
                }
            }
            "v_mov_b16" if valu => {
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    expected.vgpr[4][lane] =
                        (registers.vgpr[4][lane] & 0xFFFF_0000) | (registers.vgpr[0][lane] & 0xFFFF);
                }
            }
            // Selects and carries through a lane mask (VCC for VOP2 forms; VOP3's in s6).
            "v_cndmask_b32" | "v_cndmask_b16" if valu => {
                let vop3 = operation.encoding == "Vop3";
                if vop3 {
                    words[1] = (words[1] & !(0x1FF << 18)) | 6 << 18; // src2: s6
                }
                let mask = if vop3 { registers.sgpr[6] } else { registers.sgpr[VCC] };
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    let chosen = if mask >> lane & 1 == 1 { registers.vgpr[2][lane] } else { registers.vgpr[0][lane] };
                    expected.vgpr[4][lane] = if name == "v_cndmask_b16" {
                        (registers.vgpr[4][lane] & 0xFFFF_0000) | (chosen & 0xFFFF)
                    } else {
                        chosen
                    };
                }
            }
            "v_add_co_ci_u32" | "v_sub_co_ci_u32" | "v_subrev_co_ci_u32" | "v_subrev_co_u32" | "v_add_co_u32"
            | "v_sub_co_u32"
                if valu =>
            {
                let vop3 = operation.encoding == "Vop3";
                let carry_in = name.contains("_ci_");
                if vop3 {
                    // VOP3B: the carry out to s[8:9]; a carry in from s[6:7].
                    words[0] = (words[0] & !(0x7F << 8)) | 8 << 8;
                    if carry_in {
                        words[1] = (words[1] & !(0x1FF << 18)) | 6 << 18;
                    }
                }
                let mask_in = if vop3 { registers.sgpr[6] } else { registers.sgpr[VCC] };
                let out = if vop3 { 8 } else { VCC };
                expected = registers.clone();
                let mut carry = 0u32;
                for lane in (0..32).filter(|&lane| active(lane)) {
                    let (a, b) = (registers.vgpr[0][lane] as u64, registers.vgpr[2][lane] as u64);
                    let c = if carry_in { (mask_in >> lane & 1) as u64 } else { 0 };
                    let (value, flag) = match name.as_str() {
                        "v_add_co_ci_u32" | "v_add_co_u32" => (a + b + c, a + b + c > u32::MAX as u64),
                        "v_sub_co_ci_u32" | "v_sub_co_u32" => (a.wrapping_sub(b + c), b + c > a),
                        _ => (b.wrapping_sub(a + c), a + c > b),
                    };
                    expected.vgpr[4][lane] = value as u32;
                    carry |= (flag as u32) << lane;
                }
                expected.sgpr[out] = carry;
            }
            // Literal constants: fmaak = a × b + K, fmamk = a × K + b.
            "v_fmaak_f32" | "v_fmamk_f32" | "v_fmaak_f16" | "v_fmamk_f16" if operation.encoding.starts_with("Vop2") => {
                let half = name.ends_with("f16");
                let ordinary = |rng: &mut Rng| {
                    let value = (rng.next() % 2001) as f64 / 16.0 - 60.0;
                    if half { f16_bits(value) } else { (value as f32).to_bits() }
                };
                let constant = ordinary(&mut rng);
                words[1] = constant;
                for lane in 0..32 {
                    let (a, b) = (ordinary(&mut rng), ordinary(&mut rng));
                    registers.vgpr[0][lane] = a | if half { registers.vgpr[0][lane] & 0xFFFF_0000 } else { 0 };
                    registers.vgpr[2][lane] = b | if half { registers.vgpr[2][lane] & 0xFFFF_0000 } else { 0 };
                }
                expected = registers.clone();
                let aak = name.starts_with("v_fmaak");
                for lane in (0..32).filter(|&lane| active(lane)) {
                    let (a, b) = (registers.vgpr[0][lane], registers.vgpr[2][lane]);
                    if half {
                        let (x, y, k) = (f16_value(a), f16_value(b), f16_value(constant));
                        let value = if aak { x.mul_add(y, k) } else { x.mul_add(k, y) };
                        expected.vgpr[4][lane] = (registers.vgpr[4][lane] & 0xFFFF_0000) | f16_bits(value);
                    } else {
                        let (x, y, k) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(constant));
                        expected.vgpr[4][lane] = if aak { x.mul_add(y, k) } else { x.mul_add(k, y) }.to_bits();
                    }
                }
            }
            // f16 dot products into f32, on eighths in [−2, 2], where every partial sum is exact in
            // f32 (the guides leave the summation order to the hardware).
            "v_dot2_f32_f16" | "v_dot2c_f32_f16" | "v_dot2acc_f32_f16" if valu => {
                let eighth = |rng: &mut Rng| f16_bits((rng.next() % 33) as f64 / 8.0 - 2.0);
                for register in [0, 2] {
                    for lane in 0..32 {
                        registers.vgpr[register][lane] = eighth(&mut rng) | eighth(&mut rng) << 16;
                    }
                }
                for lane in 0..32 {
                    registers.vgpr[4][lane] = ((rng.next() % 65) as f32 / 8.0 - 4.0).to_bits();
                }
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    let v = |register: usize, index: u32| f16_value(registers.vgpr[register][lane] >> (16 * index));
                    let sum = v(0, 0) * v(2, 0) + v(0, 1) * v(2, 1) + f32::from_bits(registers.vgpr[4][lane]) as f64;
                    expected.vgpr[4][lane] = (sum as f32).to_bits();
                }
            }
            // Each f16 half's FMA into the destination's (gfx11's VOP2 V_PK_FMAC_F16), on ordinary
            // values (exact in f64, rounded once).
            "v_pk_fmac_f16" if valu => {
                let half = |rng: &mut Rng| f16_bits((rng.next() % 401) as f64 / 16.0 - 12.0);
                for register in [0, 2, 4] {
                    for lane in 0..32 {
                        registers.vgpr[register][lane] = half(&mut rng) | half(&mut rng) << 16;
                    }
                }
                expected = registers.clone();
                for lane in (0..32).filter(|&lane| active(lane)) {
                    let v = |register: usize, index: u32| f16_value(registers.vgpr[register][lane] >> (16 * index));
                    expected.vgpr[4][lane] = (0..2).fold(0, |out, index| {
                        out | f16_bits(v(0, index).mul_add(v(2, index), v(4, index))) << (16 * index)
                    });
                }
            }
            _ => return None,
        }
        let mut lds = [0u8; 0];
        let got = execute(isa, &words, &mut registers, &Unmapped, &mut lds)
            .unwrap_or_else(|error| panic!("{isa:?} {}: {error}", operation.mnemonic));
        let what = format!("{isa:?} {} round {round}", operation.mnemonic);
        assert_eq!(got, next, "{what}");
        assert_registers(&registers, &expected, &what);
    }
    Some(())
}

/// Lane-addressed LDS and global memory, and the LDS append counter; `None` for other operations.
pub fn check_lane_addressed(isa: Isa, operation: &Operation) -> Option<()> {
    let name = operation.mnemonic;
    let ds = name.starts_with("ds_");
    let global = name.starts_with("global_") && name.contains("addtid");
    if !(ds && (name.contains("addtid") || name == "ds_append" || name == "ds_consume") || global) {
        return None;
    }
    let load = name.contains("load") || name.contains("read");
    let mut rng = Rng(0xADD ^ operation.words[0] as u64);
    for round in 0..4 {
        let exec = if round % 2 == 0 { u32::MAX } else { rng.next() as u32 };
        let mut registers = random_registers(&mut rng, 16);
        registers.sgpr[EXEC] = exec;
        let active = |lane: usize| exec >> lane & 1 == 1;
        let initial: Vec<u8> = (0..1024).map(|_| rng.next() as u8).collect();
        let mut words = operation.words;
        let mut expected;
        if ds {
            // M0[15:0] the base, the instruction's offset added; data in v2, the result in v8.
            let base = (rng.next() % 16) as u32 * 4;
            let offset = (rng.next() % 16) as u32 * 4;
            registers.sgpr[M0] = base | 0xABCD_0000;
            words = [(words[0] & !0xFFFF) | offset, 2 << 8 | 8 << 24, 0];
            let mut lds = initial.clone();
            let mut lds_model = initial.clone();
            expected = registers.clone();
            let at = (base + offset) as usize;
            match name {
                "ds_append" | "ds_consume" => {
                    let old = u32::from_le_bytes(lds_model[at..at + 4].try_into().unwrap());
                    let count = exec.count_ones();
                    let new = if name == "ds_append" { old.wrapping_add(count) } else { old.wrapping_sub(count) };
                    lds_model[at..at + 4].copy_from_slice(&new.to_le_bytes());
                    for lane in (0..32).filter(|&lane| active(lane)) {
                        expected.vgpr[8][lane] = old;
                    }
                }
                _ => {
                    for lane in (0..32).filter(|&lane| active(lane)) {
                        let place = at + 4 * lane;
                        if load {
                            expected.vgpr[8][lane] =
                                u32::from_le_bytes(lds_model[place..place + 4].try_into().unwrap());
                        } else {
                            lds_model[place..place + 4].copy_from_slice(&registers.vgpr[2][lane].to_le_bytes());
                        }
                    }
                }
            }
            execute(isa, &words, &mut registers, &Unmapped, &mut lds)
                .unwrap_or_else(|error| panic!("{isa:?} {name}: {error}"));
            let what = format!("{isa:?} {name} round {round}");
            assert_registers(&registers, &expected, &what);
            assert!(lds == lds_model, "{what}: the LDS differs from the model");
        } else {
            // SADDR s[0:1] the base, the offset added, lane × 4; data in v2, the result in v8.
            let memory = HostBytes::new(initial.clone());
            let base = memory.base();
            registers.sgpr[0] = base as u32;
            registers.sgpr[1] = (base >> 32) as u32;
            let offset = (rng.next() % 16) as u32 * 4;
            let gfx11 = isa == Isa::Gfx11;
            let w0 = if gfx11 { words[0] & !0x1FFF } else { words[0] & !0xFFF };
            words = [w0 | offset, 2 << 8 | 8 << 24, 0];
            let mut model = initial.clone();
            expected = registers.clone();
            for lane in (0..32).filter(|&lane| active(lane)) {
                let place = offset as usize + 4 * lane;
                if load {
                    expected.vgpr[8][lane] = u32::from_le_bytes(model[place..place + 4].try_into().unwrap());
                } else {
                    model[place..place + 4].copy_from_slice(&registers.vgpr[2][lane].to_le_bytes());
                }
            }
            let mut lds = [0u8; 0];
            execute(isa, &words, &mut registers, &memory, &mut lds)
                .unwrap_or_else(|error| panic!("{isa:?} {name}: {error}"));
            let what = format!("{isa:?} {name} round {round}");
            assert_registers(&registers, &expected, &what);
            assert!(memory.bytes() == model, "{what}: memory differs from the model");
        }
    }
    Some(())
}

/// A dual-issue (VOPD) half's result for lane values `a` (src0), `b` (vsrc1), `d` (the
/// destination's old value) and the literal `k`; `None` for an operation not modelled here.
fn dual(name: &str, a: u32, b: u32, d: u32, k: u32, vcc: bool) -> Option<u32> {
    let f = f32::from_bits;
    let (x, y) = (f(a), f(b));
    let min_max = |max: bool| {
        if x == 0.0 && y == 0.0 {
            let negative = if max {
                x.is_sign_negative() && y.is_sign_negative()
            } else {
                x.is_sign_negative() || y.is_sign_negative()
            };
            return if negative { -0.0f32 } else { 0.0 };
        }
        if (x < y) != max { x } else { y }
    };
    let dot = |acc: f32| {
        let half = |bits: u32, index: u32| f16::from_bits((bits >> (16 * index)) as u16).to_f32();
        acc + half(a, 0) * half(b, 0) + half(a, 1) * half(b, 1)
    };
    Some(match name {
        "v_dual_mov_b32" => a,
        "v_dual_add_f32" => (x + y).to_bits(),
        "v_dual_sub_f32" => (x - y).to_bits(),
        "v_dual_subrev_f32" => (y - x).to_bits(),
        "v_dual_mul_f32" => (x * y).to_bits(),
        "v_dual_mul_dx9_zero_f32" => {
            if x == 0.0 || y == 0.0 {
                0
            } else {
                (x * y).to_bits()
            }
        }
        "v_dual_fmac_f32" => x.mul_add(y, f(d)).to_bits(),
        "v_dual_fmaak_f32" => x.mul_add(y, f(k)).to_bits(),
        "v_dual_fmamk_f32" => x.mul_add(f(k), y).to_bits(),
        "v_dual_max_f32" => min_max(true).to_bits(),
        "v_dual_min_f32" => min_max(false).to_bits(),
        "v_dual_cndmask_b32" => {
            if vcc {
                b
            } else {
                a
            }
        }
        "v_dual_lshlrev_b32" => b << (a & 31),
        "v_dual_and_b32" => a & b,
        "v_dual_dot2acc_f32_f16" => dot(f(d)).to_bits(),
        _ => return None,
    })
}

/// Checks a VOPD operation on its side of the pair (X: v8 from v0 and v2; Y: v9 from v1 and v3;
/// the other side `v_dual_mov_b32`), on ordinary values; `None` if not one.
pub fn check_dual(isa: Isa, operation: &Operation) -> Option<()> {
    if !operation.encoding.starts_with("Vopd") {
        return None;
    }
    let y_side = operation.encoding == "VopdY";
    dual(operation.mnemonic, 0, 0, 0, 0, false)?;
    let mut rng = Rng(0xD0A1 ^ operation.words[0] as u64 ^ y_side as u64);
    for round in 0..4 {
        let mut registers = random_registers(&mut rng, 16);
        let ordinary = |rng: &mut Rng| ((rng.next() % 4001) as f32 / 32.0 - 60.0).to_bits();
        let half_pair = |rng: &mut Rng| {
            let h = |rng: &mut Rng| f16::from_f32((rng.next() % 401) as f32 / 16.0 - 12.0).to_bits() as u32;
            h(rng) | h(rng) << 16
        };
        let dot = operation.mnemonic.contains("dot2acc");
        for register in [0, 1, 2, 3, 8, 9] {
            for lane in 0..32 {
                registers.vgpr[register][lane] =
                    if dot && register < 4 { half_pair(&mut rng) } else { ordinary(&mut rng) };
            }
        }
        let exec = if round % 2 == 0 { u32::MAX } else { rng.next() as u32 };
        registers.sgpr[EXEC] = exec;
        let mut words = operation.words;
        let literal = ordinary(&mut rng);
        words[2] = literal;
        let (x_name, y_name) =
            if y_side { ("v_dual_mov_b32", operation.mnemonic) } else { (operation.mnemonic, "v_dual_mov_b32") };
        let mut expected = registers.clone();
        let vcc = registers.sgpr[VCC];
        for lane in (0..32).filter(|&lane| exec >> lane & 1 == 1) {
            let v = |register: usize| registers.vgpr[register][lane];
            let take = |value: Option<u32>| value.unwrap_or_else(|| panic!("{}: no reference", operation.mnemonic));
            expected.vgpr[8][lane] = take(dual(x_name, v(0), v(2), v(8), literal, vcc >> lane & 1 == 1));
            expected.vgpr[9][lane] = take(dual(y_name, v(1), v(3), v(9), literal, vcc >> lane & 1 == 1));
        }
        let mut lds = [0u8; 0];
        execute(isa, &words, &mut registers, &Unmapped, &mut lds)
            .unwrap_or_else(|error| panic!("{isa:?} {}: {error}", operation.mnemonic));
        assert_registers(
            &registers,
            &expected,
            &format!("{isa:?} {} ({}) round {round}", operation.mnemonic, operation.encoding),
        );
    }
    Some(())
}
