//! The gfx9 decoder's typed refusals and its per-processor rows: what LLVM refuses, or what a
//! processor lacks, is an error naming the word, never a wrong instruction.

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx9::{Processor, decode};
use aqueduct_isa::gfx11;

#[test]
fn a_vop3_source_naming_a_literal_is_refused_as_gfx9_has_none() {
    // v_add_f32_e64 v10, <255>, v30: src0 255 is the literal marker, which gfx10 added to VOP3.
    let error = decode(&[0xD101_000A, 0x0002_3CFF, 0x3F80_0000], 0x40, Processor::Gfx90a).unwrap_err();
    assert!(
        matches!(error, DecodeError::Unsupported { pc: 0x40, word: 0xD101_000A, what } if what.contains("literal")),
        "{error:?}"
    );
}

#[test]
fn encodings_outside_the_decoder_are_refused_by_name() {
    for (word, name) in [(0xC400_0000, "EXP"), (0xD400_0000, "VINTRP"), (0xF000_0000, "MIMG")] {
        match decode(&[word, 0], 0, Processor::Gfx906) {
            Err(DecodeError::Unsupported { what, .. }) => assert_eq!(what, name, "{word:#x}"),
            other => panic!("{word:#x}: {other:?}"),
        }
    }
}

#[test]
fn an_opcode_a_processor_lacks_is_unknown_there_and_decodes_where_it_exists() {
    // v_pk_fma_f32 v[10:11], v[20:21], v[30:31], v[40:41] (VOP3P op 48): gfx90a and gfx942 only.
    let words = [0xD3B0_400A, 0x1CA2_3D14];
    let instruction = decode(&words, 0, Processor::Gfx90a).unwrap();
    assert_eq!(instruction.to_string(), "v_pk_fma_f32 v[10:11], v[20:21], v[30:31], v[40:41]");
    match decode(&words, 8, Processor::Gfx906) {
        Err(DecodeError::UnknownOpcode { pc: 8, encoding: gfx11::Encoding::Vop3p, op: 48, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_opcode_prints_as_each_processor_names_it() {
    // VOP3P op 64: gfx908's AGPR-only MFMA, gfx90a's unified form, gfx942's renamed one.
    let words = [0xD3C0_000A, 0x04A2_3D14];
    let text = |processor| decode(&words, 0, processor).unwrap().to_string();
    assert_eq!(text(Processor::Gfx908), "v_mfma_f32_32x32x1f32 a[10:41], v20, v30, a[40:71]");
    assert_eq!(text(Processor::Gfx90a), "v_mfma_f32_32x32x1f32 v[10:41], v20, v30, v[40:71]");
    assert_eq!(text(Processor::Gfx942), "v_mfma_f32_32x32x1_2b_f32 v[10:41], v20, v30, v[40:71]");
}

#[test]
fn a_truncated_instruction_names_the_words_it_needs() {
    assert!(matches!(decode(&[0xD101_000A], 0, Processor::Gfx900), Err(DecodeError::Truncated { pc: 0, needed: 2 })));
    assert!(matches!(decode(&[], 4, Processor::Gfx900), Err(DecodeError::Truncated { pc: 4, needed: 1 })));
}
