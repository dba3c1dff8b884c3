//! What an operation's mnemonic says about its operands, read once when it is planned: the
//! sources' float type, the result's, and which operands are 16-bit halves. A leaf: it imports
//! no family.

use crate::interp::wave::Kind;

/// The constant kind of an operation's sources: the last type suffix of its name
/// (`v_cvt_f32_u32` reads a u32).
pub(crate) fn source_kind(name: &str) -> Kind {
    match name.rsplit('_').next() {
        Some("f64") => Kind::F64,
        Some("f32") => Kind::F32,
        Some("f16") => Kind::F16,
        _ => Kind::Int,
    }
}

/// Whether a name token is an operand type (`f32`, `u16`, `b64`, `bf16`).
pub(super) fn is_type(token: &str) -> bool {
    token.len() >= 3
        && matches!(token.as_bytes()[0], b'f' | b'i' | b'u' | b'b')
        && token[1..].trim_start_matches('f').parse::<u32>().is_ok()
}

/// The result's float type: the first type suffix (`v_cvt_f16_f32` makes an f16); packed
/// results of `v_pk_*` f16 operations are f16 pairs.
pub(super) fn result_kind(name: &str) -> Kind {
    let first = name.split('_').skip(1).find(|token| is_type(token));
    match first {
        _ if name.starts_with("v_cmp") || name.contains("_pk_norm") || name.starts_with("v_cvt_pk") => Kind::Int,
        Some("f16") => Kind::F16,
        Some("f32") => Kind::F32,
        Some("f64") => Kind::F64,
        _ => Kind::Int,
    }
}

/// Which operands of a VOP1/VOP2/VOPC/VOP3 operation are 16-bit: bits 0–2 the sources, bit 3
/// the destination. From the name: the last type suffix is the sources', the first the
/// destination's; packed (`_pk_`) results and dot products are 32-bit.
pub(crate) fn half_operands(name: &str) -> u8 {
    let is16 = |ty: &str| matches!(ty, "f16" | "i16" | "u16" | "b16" | "bf16");
    let types: Vec<&str> = name.split('_').filter(|token| is_type(token)).collect();
    let (Some(first), Some(last)) = (types.first(), types.last()) else { return 0 };
    let mut sources = if is16(last) { 0b111 } else { 0 };
    let compare = name.starts_with("v_cmp");
    let mut destination = !compare && !name.contains("_pk_") && !name.starts_with("v_pk_") && is16(first);
    match name {
        "v_mad_u32_u16" | "v_mad_i32_i16" => sources = 0b011,
        "v_dot2acc_f32_f16" | "v_pk_fmac_f16" => sources = 0,
        "v_dot2_f16_f16" | "v_dot2_bf16_bf16" => sources = 0b100,
        "v_sat_pk_u8_i16" => {
            sources = 0;
            destination = true;
        }
        "v_cvt_pk_norm_i16_f16" | "v_cvt_pk_norm_u16_f16" | "v_pack_b32_f16" => destination = false,
        "v_cndmask_b16" => sources = 0b011,
        // Two 16-bit fields of each 32-bit source, and a 32-bit sum; the quad SADs' `u16` names
        // their packed results, whose sources are bytes (`u8`, too short a token to count).
        "v_sad_u16" | "v_qsad_pk_u16_u8" | "v_mqsad_pk_u16_u8" => {
            sources = 0;
            destination = false;
        }
        "v_ldexp_f16" => sources = 0b011,
        _ => {}
    }
    sources | if destination { 8 } else { 0 }
}
