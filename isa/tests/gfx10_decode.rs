//! The gfx10 decoder's typed refusals, its gfx10 register numbering, its extension words, and the
//! gfx11 equivalents of its operations.

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx10::{Encoding, Extension, Opcode, decode, decode_all, gfx11_equivalent};
use aqueduct_isa::gfx11;

#[test]
fn an_unknown_opcode_names_the_word_the_pc_and_the_gfx11_encoding_of_the_same_name() {
    // SOPP opcode 127: no gfx1030 instruction.
    let word = 0xBF80_0000 | 127 << 16;
    let error = decode(&[word], 0x1904).unwrap_err();
    assert_eq!(error, DecodeError::UnknownOpcode { pc: 0x1904, word, encoding: gfx11::Encoding::Sopp, op: 127 });
    assert_eq!(Encoding::Sopp.gfx11(), gfx11::Encoding::Sopp);
}

#[test]
fn encodings_outside_the_decoder_are_refused_by_name() {
    for (words, what) in [
        ([0xF000_0000u32, 0], "MIMG"),
        ([0xF800_0000, 0], "EXP"),
        ([0xE800_0000, 0], "MTBUF"),
        ([0xC800_0000, 0], "VINTRP"),
        // v_interp_p2_f16 (VOP3 opcode 858).
        ([0xD75A_0000, 0], "VOP3 interpolation"),
        // v_add_f32_e64 with src1 = 250, the DPP16 marker, which only VOP1/VOP2/VOPC src0 takes.
        ([0xD503_0000, 250 << 9 | 1], "SDWA/DPP marker outside VOP1/VOP2/VOPC src0"),
    ] {
        match decode(&words, 8) {
            Err(DecodeError::Unsupported { pc: 8, word, what: named }) => assert_eq!((word, named), (words[0], what)),
            other => panic!("{:08x}: {other:?}", words[0]),
        }
    }
    assert_eq!(decode(&[0xF400_0000], 4).unwrap_err(), DecodeError::Truncated { pc: 4, needed: 2 });
}

#[test]
fn gfx10_numbers_m0_124_and_null_125() {
    // s_mov_b32 m0, null: sdst 124, ssrc0 125 (gfx11 has them the other way round).
    let instruction = decode(&[0xBEFC_037D], 0).unwrap();
    assert_eq!(instruction.to_string(), "s_mov_b32 m0, null");
    assert_eq!(instruction.opcode(), Opcode::SMovB32);
}

#[test]
fn sdwa_and_dpp_words_follow_their_instruction() {
    // v_mov_b32_dpp v1, v1 row_shr:1, then s_endpgm.
    let code: Vec<u8> = [0x7E02_02FAu32, 0xFF01_1101, 0xBF81_0000].iter().flat_map(|word| word.to_le_bytes()).collect();
    let decoded: Vec<_> = decode_all(&code, 0x100).map(Result::unwrap).collect();
    assert_eq!(decoded.len(), 2);
    let (pc, dpp) = decoded[0];
    assert_eq!((pc, dpp.extension, dpp.dwords, dpp.extension_word()), (0x100, Extension::Dpp16, 2, Some(0xFF01_1101)));
    assert_eq!(dpp.to_string(), "v_mov_b32_dpp v1, v1 row_shr:1 row_mask:0xf bank_mask:0xf");
    assert_eq!(decoded[1].0, 0x108);
    // v_add_nc_u32_sdwa v2, v6, s14 (src1 a scalar: the word's bit 31).
    let sdwa = decode(&[0x4A04_1CF9, 0x8605_0606], 0).unwrap();
    assert_eq!(sdwa.extension, Extension::Sdwa);
    assert_eq!(
        sdwa.to_string(),
        "v_add_nc_u32_sdwa v2, v6, s14 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD"
    );
}

#[test]
fn gfx10_operations_name_their_gfx11_equivalents() {
    for (gfx10, gfx11) in [
        (Opcode::SAndn2B32, gfx11::Opcode::SAndNot1B32),
        (Opcode::SLoadDwordx2, gfx11::Opcode::SLoadB64),
        (Opcode::GlobalLoadDword, gfx11::Opcode::GlobalLoadB32),
        (Opcode::GlobalLoadUbyte, gfx11::Opcode::GlobalLoadU8),
        (Opcode::GlobalStoreShortD16Hi, gfx11::Opcode::GlobalStoreD16HiB16),
        (Opcode::GlobalAtomicSminX2, gfx11::Opcode::GlobalAtomicMinI64),
        (Opcode::DsRead2st64B32, gfx11::Opcode::DsLoad2addrStride64B32),
        (Opcode::DsWriteB32, gfx11::Opcode::DsStoreB32),
        (Opcode::DsCmpstRtnB64, gfx11::Opcode::DsCmpstoreRtnB64),
        (Opcode::BufferLoadFormatD16X, gfx11::Opcode::BufferLoadD16FormatX),
        (Opcode::VFfbhU32, gfx11::Opcode::VClzI32U32),
        (Opcode::VDot2cF32F16, gfx11::Opcode::VDot2accF32F16),
        (Opcode::VAddCoU32, gfx11::Opcode::VAddCoU32),
    ] {
        assert_eq!(gfx11_equivalent(gfx10), Some(gfx11), "{gfx10:?}");
    }
    // The operations gfx11 lacks (their own semantics later).
    let missing: Vec<Opcode> = Opcode::ALL.iter().copied().filter(|op| op.gfx11_equivalent().is_none()).collect();
    assert_eq!(
        format!("{missing:?}"),
        "[BufferAtomicFcmpswapX2, BufferAtomicFmaxX2, BufferAtomicFminX2, DsGwsBarrier, DsGwsInit, DsGwsSemaBr, \
         DsGwsSemaP, DsGwsSemaReleaseAll, DsGwsSemaV, DsOrderedCount, FlatAtomicFcmpswapX2, FlatAtomicFmaxX2, \
         FlatAtomicFminX2, GlobalAtomicFcmpswapX2, GlobalAtomicFmaxX2, GlobalAtomicFminX2, SEndpgmOrderedPsDone, \
         SFf0I32B32, SFf0I32B64, SMemrealtime, SMemtime, VClrexcp, VDot2I32I16, VDot2U32U16, VDot4I32I8, \
         VDot4cI32I8, VDot8I32I4, VIllegal, VInterpMovF32, VInterpP1llF16, VInterpP1lvF16, VInterpP2F16]"
    );
    assert_eq!((Opcode::ALL.len(), missing.len()), (1008, 32));
}

/// LLVM reads a wide scalar field aligned down (`AMDGPUDisassembler::createSRegOperand`): an odd
/// field of a 64-bit operand names the pair below it (`llvm-mc-19 -mcpu=gfx1030` prints
/// `0x89ED488F` as `s_xor_b64 ttmp[0:1], 15, s[72:73]`: sdst 109 is ttmp1).
#[test]
fn an_odd_field_of_a_64_bit_scalar_operand_names_the_aligned_pair() {
    let instruction = decode(&[0x89ED_488F], 0).unwrap();
    assert_eq!(instruction.to_string(), "s_xor_b64 ttmp[0:1], 15, s[72:73]");
}
