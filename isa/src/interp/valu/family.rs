//! Which file computes an operation: its family, chosen once when the operation is planned
//! ([`Family::of`]), so that running it is one `match` on the family and then one on the
//! operation within its file. A leaf: it imports no family.

use super::Form;
use crate::gfx11::{Encoding, Opcode};

/// An operation family: the file of `valu/` that computes it under MODE's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// The common 32-bit operations (`plain::common_row`), which the small path runs as well.
    Common,
    /// VOPC compares (`compare.rs`).
    Compare,
    /// VOP3P (`packed.rs`, `wmma.rs`).
    Packed,
    /// `cross_lane.rs`.
    CrossLane,
    /// `bit_ops.rs`.
    Bits,
    /// `integer_ops.rs`.
    Integer,
    /// `f32_ops.rs`.
    Float32,
    /// `f64_ops.rs`.
    Float64,
    /// `f16_ops.rs`.
    Float16,
    /// `conversions.rs`.
    Conversion,
    /// `division.rs`.
    Division,
    /// `v_nop`, `v_pipeflush`: nothing to compute.
    Nothing,
    /// An operation the interpreter does not run.
    Unsupported,
}

impl Family {
    /// The family of an operation of `form` and `encoding`: compares by their form, VOP3P by its
    /// encoding, the rest by opcode. A clamped `v_add_nc_u32`/`v_sub_nc_u32` saturates, which
    /// the common path does not: it is an integer operation.
    pub(crate) fn of(form: &Form, encoding: Encoding, opcode: Opcode, clamp: bool) -> Family {
        use Opcode::*;
        if let Form::Compare { .. } = form {
            return Family::Compare;
        }
        if encoding == Encoding::Vop3p {
            return Family::Packed;
        }
        match opcode {
            VAddNcU32 | VSubNcU32 if clamp => Family::Integer,
            VNop | VPipeflush => Family::Nothing,
            VMovB32 | VAddF32 | VSubF32 | VSubrevF32 | VMulF32 | VMaxF32 | VMinF32 | VFmacF32 | VFmaF32 | VFmaakF32
            | VFmamkF32 | VAddNcU32 | VSubNcU32 | VSubrevNcU32 | VAndB32 | VOrB32 | VXorB32 | VLshlrevB32
            | VLshrrevB32 | VAshrrevI32 | VMulLoU32 | VMulU32U24 | VMaxU32 | VMinU32 | VMaxI32 | VMinI32 | VAdd3U32
            | VLshlAddU32 | VAddLshlU32 | VLshlOrB32 | VAndOrB32 | VOr3B32 | VCndmaskB32 | VCvtF32U32 | VCvtF32I32
            | VCvtU32F32 | VCvtI32F32 => Family::Common,
            VReadfirstlaneB32 | VReadlaneB32 | VWritelaneB32 | VPermlane64B32 | VPermlane16B32 | VPermlanex16B32
            | VSwapB32 | VMovrelsB32 | VMovreldB32 | VMovrelsdB32 | VMovrelsd2B32 | VSwaprelB32 => Family::CrossLane,
            VMovB16 | VXnorB32 | VNotB32 | VAndB16 | VOrB16 | VXorB16 | VNotB16 | VBfrevB32 | VLshlrevB16
            | VLshrrevB16 | VAshrrevI16 | VLshlrevB64 | VLshrrevB64 | VAshrrevI64 | VXor3B32 | VXadU32 | VBfeU32
            | VBfeI32 | VBfiB32 | VBfmB32 | VAlignbitB32 | VAlignbyteB32 | VPermB32 | VBcntU32B32 | VClzI32U32
            | VCtzI32B32 | VClsI32 | VMbcntLoU32B32 | VMbcntHiU32B32 | VCndmaskB16 => Family::Bits,
            VAddNcI32 | VSubNcI32 | VAddNcU16 | VSubNcU16 | VAddNcI16 | VSubNcI16 | VMulLoU16 | VMadU16 | VMadI16
            | VMadU32U16 | VMadI32I16 | VMinU16 | VMaxU16 | VMinI16 | VMaxI16 | VMin3U16 | VMax3U16 | VMed3U16
            | VMin3I16 | VMax3I16 | VMed3I16 | VMulHiU32 | VMulHiI32 | VMulHiU32U24 | VMulI32I24 | VMulHiI32I24
            | VMadU32U24 | VMadI32I24 | VMin3U32 | VMax3U32 | VMed3U32 | VMin3I32 | VMax3I32 | VMed3I32
            | VMaxminU32 | VMinmaxU32 | VMaxminI32 | VMinmaxI32 | VSadU32 | VSadU8 | VSadHiU8 | VMsadU8 | VSadU16
            | VLerpU8 | VQsadPkU16U8 | VMqsadPkU16U8 | VAddCoU32 | VSubCoU32 | VSubrevCoU32 | VAddCoCiU32
            | VSubCoCiU32 | VSubrevCoCiU32 | VMadU64U32 | VMadI64I32 => Family::Integer,
            VMulDx9ZeroF32 | VFmaDx9ZeroF32 | VFmacDx9ZeroF32 | VMin3F32 | VMax3F32 | VMed3F32 | VMaxminF32
            | VMinmaxF32 | VRcpF32 | VRcpIflagF32 | VTruncF32 | VFloorF32 | VCeilF32 | VRndneF32 | VFrexpExpI32F32
            | VLdexpF32 | VCubeidF32 | VCubescF32 | VCubetcF32 | VCubemaF32 | VMullitF32 | VSqrtF32 | VRsqF32
            | VExpF32 | VLogF32 | VSinF32 | VCosF32 | VFractF32 | VFrexpMantF32 => Family::Float32,
            VAddF64 | VMulF64 | VFmaF64 | VMinF64 | VMaxF64 | VTrigPreopF64 | VLdexpF64 | VTruncF64 | VFloorF64
            | VCeilF64 | VRndneF64 | VFractF64 | VRcpF64 | VRsqF64 | VSqrtF64 | VFrexpMantF64 | VFrexpExpI32F64 => {
                Family::Float64
            }
            VAddF16 | VSubF16 | VSubrevF16 | VMulF16 | VFmaF16 | VFmacF16 | VFmaakF16 | VFmamkF16 | VMinF16
            | VMaxF16 | VMin3F16 | VMax3F16 | VMed3F16 | VMaxminF16 | VMinmaxF16 | VLdexpF16 | VRcpF16 | VSqrtF16
            | VRsqF16 | VLogF16 | VExpF16 | VSinF16 | VCosF16 | VFloorF16 | VCeilF16 | VTruncF16 | VRndneF16
            | VFractF16 | VFrexpMantF16 | VFrexpExpI16F16 | VDot2accF32F16 | VDot2F16F16 | VDot2Bf16Bf16
            | VPkFmacF16 => Family::Float16,
            VCvtI32I16 | VCvtU32U16 | VCvtPkU16U32 | VCvtPkI16I32 | VCvtNearestI32F32 | VCvtFloorI32F32
            | VCvtOffF32I4 | VCvtF32Ubyte0 | VCvtF32Ubyte1 | VCvtF32Ubyte2 | VCvtF32Ubyte3 | VCvtPkU8F32
            | VCvtPkRtzF16F32 | VCvtPkI16F32 | VCvtPkU16F32 | VCvtPkNormI16F32 | VCvtPkNormU16F32 | VCvtF32F64
            | VCvtU32F64 | VCvtI32F64 | VCvtF64F32 | VCvtF64U32 | VCvtF64I32 | VCvtF16F32 | VCvtF32F16 | VCvtF16U16
            | VCvtF16I16 | VCvtU16F16 | VCvtI16F16 | VCvtNormI16F16 | VCvtNormU16F16 | VCvtPkNormI16F16
            | VCvtPkNormU16F16 | VPackB32F16 | VSatPkU8I16 => Family::Conversion,
            VDivFmasF32 | VDivFixupF32 | VDivScaleF32 | VDivFmasF64 | VDivFixupF64 | VDivScaleF64 | VDivFixupF16 => {
                Family::Division
            }
            _ => Family::Unsupported,
        }
    }
}
