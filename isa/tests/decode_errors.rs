//! Words the decoder cannot decode are typed errors that name the word and its address.

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx11::{Dpp, Encoding, Opcode, decode, decode_all};

#[test]
fn an_unknown_opcode_names_the_word_the_pc_and_the_encoding() {
    // SOPP opcode 127: no gfx1100 instruction.
    let word = 0xBF80_0000 | 127 << 16;
    let error = decode(&[word], 0x1904).unwrap_err();
    assert_eq!(error, DecodeError::UnknownOpcode { pc: 0x1904, word, encoding: Encoding::Sopp, op: 127 });
    assert!(error.to_string().contains("0x1904") && error.to_string().contains(&format!("{word:08x}")), "{error}");
}

#[test]
fn encodings_outside_the_decoder_are_refused_by_name() {
    for (word, what) in [(0xF000_0000u32, "MIMG"), (0xF800_0000, "EXP")] {
        match decode(&[word, 0], 8) {
            Err(DecodeError::Unsupported { pc: 8, word: got, what: named }) => {
                assert_eq!((got, named), (word, what));
            }
            other => panic!("{word:08x}: {other:?}"),
        }
    }
    // The DPP markers (233, 234, 250) select DPP only in src0; elsewhere they name nothing.
    // v_fma_f32 (VOP3) with src1 = 250:
    let vop3 = [0xD613_0001u32, 0x0400_0000 | (250 << 9)];
    let refused = decode(&vop3, 0);
    assert!(matches!(refused, Err(DecodeError::Unsupported { what: "DPP outside src0", .. })), "{refused:?}");
}

#[test]
fn dpp_forms_carry_their_dpp_word_instead_of_a_literal() {
    // v_mov_b32_dpp v1, v2 row_xmask:1 row_mask:0xa bank_mask:0x3 fi:1 (llvm-mc-19 -mcpu=gfx1100).
    let dpp16 = decode(&[0x7E02_02FA, 0xA305_6102], 0).unwrap();
    assert_eq!((dpp16.dwords, dpp16.dpp, dpp16.dpp_word(), dpp16.literal()), (2, Dpp::Dpp16, Some(0xA305_6102), None));
    // v_mov_b32_dpp v1, v2 dpp8:[1,0,3,2,5,4,7,6] fi:1
    let dpp8 = decode(&[0x7E02_02EA, 0xDE54_C102], 0).unwrap();
    assert_eq!(dpp8.dpp, Dpp::Dpp8 { fetch_inactive: true });
    // v_add_f32_e64_dpp v1, -v2, |v3| row_ror:3: VOP3's two dwords, then the DPP word.
    let vop3 = decode(&[0xD503_0201, 0x2002_06FA, 0xFF01_2302], 0).unwrap();
    assert_eq!((vop3.dwords, vop3.dpp_word()), (3, Some(0xFF01_2302)));
    assert_eq!(decode(&[0x7E02_02FA], 0).unwrap_err(), DecodeError::Truncated { pc: 0, needed: 2 });
}

#[test]
fn code_that_ends_inside_an_instruction_is_truncated_not_read_past() {
    // s_load_b32 needs two dwords; v_mov_b32 with a literal source needs two.
    assert_eq!(decode(&[0xF400_0100], 4).unwrap_err(), (DecodeError::Truncated { pc: 4, needed: 2 }));
    assert_eq!(decode(&[0x7E00_02FF], 4).unwrap_err(), (DecodeError::Truncated { pc: 4, needed: 2 }));
    assert_eq!(decode(&[], 4).unwrap_err(), (DecodeError::Truncated { pc: 4, needed: 1 }));
    // The iterator stops after its first error.
    let bytes: Vec<u8> = [0xBF80_0000u32, 0xF400_0100].iter().flat_map(|word| word.to_le_bytes()).collect();
    let results: Vec<_> = decode_all(&bytes, 0x100).collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].as_ref().unwrap().1.opcode(), Opcode::SNop);
    assert_eq!(results[1].as_ref().unwrap_err(), &DecodeError::Truncated { pc: 0x104, needed: 2 });
}

#[test]
fn a_literal_travels_with_its_instruction() {
    // v_mul_f32_e32 v3, 0x4f800000, v3 (from the device library).
    let instruction = decode(&[0x1006_06FF, 0x4F80_0000, 0xDEAD_BEEF], 0).unwrap();
    assert_eq!((instruction.dwords, instruction.literal()), (2, Some(0x4F80_0000)));
    assert_eq!(instruction.to_string(), "v_mul_f32_e32 v3, 0x4f800000, v3");
    assert_eq!(instruction.opcode(), Opcode::VMulF32);
}
