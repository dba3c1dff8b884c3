//! The hardware registers `s_getreg_b32` reads besides MODE and the cycle counter (`scalar.rs`):
//! each register's field layout per ISA family, and what each field holds on the soft runtime.
//!
//! The layout is picked when the kernel is decoded ([`Layout`]: gfx9's from the processor, gfx11's
//! for gfx11 code and for the gfx10.3 and gfx12 code translated into it), so running a read is
//! one [`Plan::HwReg`](super::decoded_kernel::Plan) step with no ISA test. Sources for the
//! layouts: LLVM's `SIDefines.h` (`Hwreg` ids, SH_MEM_BASES offsets) and `AMDGPUAsmUtils.cpp`
//! (names); HIP's `amd_device_functions.h` and AMD's rocprofiler "embers" `hwid.h` (HW_ID, HW_ID1);
//! the Linux kernel's CWSR trap handlers `cwsr_trap_handler_gfx9.asm` and
//! `cwsr_trap_handler_gfx10.asm` (AMD's, which read GPR_ALLOC, LDS_ALLOC, IB_STS, TRAPSTS and
//! STATUS by these offsets on gfx9, gfx90a and gfx11); ROCdbgapi's `architecture.cpp` (STATUS bits
//! common to every AMDGCN architecture).
//!
//! What the values are:
//! - **Identity** (wave slot, SIMD, CU or WGP, shader array, shader engine): a workgroup runs on
//!   compute unit `linear workgroup id % compute_units`, as the dispatcher deals workgroups out,
//!   and every wave of it reports that CU. The agent's CUs fill each shader array's slots in order
//!   (16 CUs per array on gfx9, as CU_ID is 4 bits; 16 WGPs of two CUs on gfx11, as WGP_ID is
//!   4 bits), arrays within an engine, then engines: so HIP's `__smid()` (`SE_ID << 4 | CU_ID` on
//!   gfx9) is the CU's index, below the agent's CU count, which code sizing per-CU arrays by that
//!   count relies on. Wave `w` of its workgroup sits on SIMD `w % 4` in slot `w / 4` (gfx11 in CU
//!   mode: its CU's two SIMDs). The queue's CU mask is not consulted.
//! - **GPR_ALLOC, LDS_ALLOC**: from the kernel descriptor's granulated VGPR and SGPR counts
//!   (COMPUTE_PGM_RSRC1) and the workgroup's LDS bytes, in the units the trap handlers read them.
//! - **IB_STS**: 0. Its fields count outstanding memory and export operations and replays, and on
//!   the interpreter every memory operation completes before the next instruction.
//! - **STATUS**: SCC, EXECZ and VCCZ from the wave, and on gfx9 IN_TG (more than one wave in the
//!   workgroup) and VALID (1); PRIV, TRAP_EN (the soft runtime installs no trap handler), HALT,
//!   SPI_PRIO, ECC_ERR and the conditional-debug bits 0.
//! - **TRAPSTS**: MEM_VIOL, SAVECTX, ILLEGAL_INST (and gfx9's XNACK_ERROR) 0: a wave that faults
//!   or meets an illegal instruction never runs another, and the soft runtime's context save is no
//!   trap.
//! - **SH_MEM_BASES** (gfx9): the high 16 bits of the shared and private apertures the interpreter
//!   answers `src_shared_base` and `src_private_base` with.
//!
//! A read whose bits touch anything else (physical register and LDS bases, queue and pipe ids,
//! TRAPSTS's sticky float exceptions, which would need every float operation to record them, and
//! reserved bits) fails as `ExecError::Unsupported` naming the register and fields. Writes
//! (`s_setreg`) to these registers stay refused in `scalar.rs`: the ISA guides and LLVM's hwreg
//! table call them read-only (STATUS is "Shader read-only status"), writable only by a trap
//! handler.

use super::ExecError;
use super::site::WaveSite;
use super::wave::{EXEC, PRIVATE_BASE, SHARED_BASE, VCC, Wave};
use crate::gfx11::{Instruction, Opcode};

/// A register layout family, picked when the kernel is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// gfx900, gfx906: HW_ID's SE_ID is 14:13 (HIP's header); GPR_ALLOC's VGPR_SIZE 13:8.
    Vega,
    /// gfx908: SE_ID 15:13 (rocrtst reads HW_ID bits 15:8 as the CU's place on gfx908, gfx90a and
    /// gfx940; their agents have 8 or more engines); GPR_ALLOC as Vega's.
    Cdna1,
    /// gfx90a, gfx942: SE_ID 15:13; GPR_ALLOC's VGPR_SIZE 11:6 in units of 8 (the trap handler's
    /// `ASIC_FAMILY >= CHIP_ALDEBARAN` layout).
    Cdna2,
    /// gfx11 (and gfx10.3 and gfx12 code translated to it): HW_ID1, HW_ID2, VGPR_SIZE 19:12.
    Gfx11,
}

impl Layout {
    /// The layout of a gfx9 processor's registers.
    pub(crate) fn gfx9(processor: crate::gfx9::Processor) -> Layout {
        use crate::gfx9::Processor::*;
        match processor {
            Gfx900 | Gfx906 => Layout::Vega,
            Gfx908 => Layout::Cdna1,
            Gfx90a | Gfx942 => Layout::Cdna2,
        }
    }
}

/// A planned `s_getreg_b32` of a register this file models: its id, bit offset and size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Read {
    layout: Layout,
    id: u8,
    offset: u8,
    size: u8,
    sdst: u8,
}

/// Register ids (LLVM's `SIDefines.h`, `Hwreg::Id`).
const STATUS: u8 = 2;
const TRAPSTS: u8 = 3;
const HW_ID: u8 = 4;
const GPR_ALLOC: u8 = 5;
const LDS_ALLOC: u8 = 6;
const IB_STS: u8 = 7;
const SH_MEM_BASES: u8 = 15;
const HW_ID1: u8 = 23;
const HW_ID2: u8 = 24;

/// The plan of `instruction` (gfx11 encoding) where it is an `s_getreg_b32` of a register this
/// file answers for; `None` for anything else (MODE and the cycle counter stay `scalar.rs`'s).
pub(crate) fn plan(instruction: &Instruction, layout: Layout) -> Option<Read> {
    if instruction.opcode() != Opcode::SGetregB32 {
        return None;
    }
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    let id = (simm & 0x3F) as u8;
    matches!(id, STATUS | TRAPSTS | HW_ID | GPR_ALLOC | LDS_ALLOC | IB_STS | SH_MEM_BASES | HW_ID1 | HW_ID2).then(
        || Read {
            layout,
            id,
            offset: ((simm >> 6) & 0x1F) as u8,
            size: (((simm >> 11) & 0x1F) + 1) as u8,
            sdst: ((w0 >> 16) & 0x7F) as u8,
        },
    )
}

/// Runs a [`Read`]: the register's bits `offset ..offset + size` to sdst, or `Unsupported` naming
/// the register's unmodelled fields where the range touches one.
pub(crate) fn step(wave: &mut Wave, read: &Read) -> Result<(), ExecError> {
    let (value, known, refusal) = register(wave, read.layout, read.id)?;
    let mask = if read.size >= 32 { u32::MAX } else { (1u32 << read.size) - 1 };
    let range = mask.checked_shl(read.offset as u32).unwrap_or(0);
    if range & !known != 0 {
        return Err(ExecError::Unsupported { pc: wave.pc, mnemonic: refusal });
    }
    wave.write_sgpr(read.sdst as u32, (value >> read.offset) & mask);
    Ok(())
}

/// A register's value, the bits of it that are modelled, and the error naming what is not.
fn register(wave: &Wave, layout: Layout, id: u8) -> Result<(u32, u32, &'static str), ExecError> {
    let site = &wave.site;
    let gfx9 = layout != Layout::Gfx11;
    Ok(match id {
        STATUS => status(wave, gfx9),
        // gfx9 (trap handler): MEM_VIOL 8, SAVECTX 10, ILLEGAL_INST 11, XNACK_ERROR 28; gfx11 has
        // no XNACK. EXCP 7:0 are sticky float (and address-watch) exceptions.
        TRAPSTS => (
            0,
            if gfx9 { 1 << 8 | 1 << 10 | 1 << 11 | 1 << 28 } else { 1 << 8 | 1 << 10 | 1 << 11 },
            "s_getreg_b32 HW_REG_TRAPSTS: EXCP (7:0, sticky float exceptions the interpreter does not record) and the fields besides MEM_VIOL, SAVECTX and ILLEGAL_INST",
        ),
        HW_ID if gfx9 => hw_id(wave, layout)?,
        GPR_ALLOC => gpr_alloc(site, layout),
        // LDS_SIZE 20:12 in 64-dword units (the trap handlers' `get_lds_size_bytes`), of LDS
        // allocated in 128-dword blocks (LLVM's `getSIProgramInfo`, LDSAlignShift 9).
        LDS_ALLOC => (
            (site.lds_bytes.div_ceil(512) * 2) << 12,
            0x1FF << 12,
            "s_getreg_b32 HW_REG_LDS_ALLOC: LDS_BASE and the fields besides LDS_SIZE (20:12)",
        ),
        IB_STS => (0, u32::MAX, ""),
        // PRIVATE_BASE 15:0 and SHARED_BASE 31:16: the apertures' bits 63:48 (LLVM's `SIDefines.h`
        // OFFSET_SRC_SHARED_BASE 16 and OFFSET_SRC_PRIVATE_BASE 0, each 16 bits, shifted left 16
        // into the aperture's high dword).
        SH_MEM_BASES if gfx9 => (((SHARED_BASE >> 48) as u32) << 16 | (PRIVATE_BASE >> 48) as u32, u32::MAX, ""),
        HW_ID1 if !gfx9 => hw_id1(wave)?,
        _ => {
            return Err(ExecError::Unsupported {
                pc: wave.pc,
                mnemonic: "s_getreg_b32 of a register the soft runtime does not model (HW_ID2's queue, pipe and VMID; HW_ID on gfx11; SH_MEM_BASES on gfx11)",
            });
        }
    })
}

/// STATUS (bits alike on gfx9 and gfx11, ROCdbgapi's `amdgcn_architecture_t`: SCC 0, PRIV 5,
/// TRAP_EN 6, EXECZ 9, VCCZ 10, HALT 13, COND_DBG_USER 20, COND_DBG_SYS 21; the trap handlers:
/// SPI_PRIO 2:1, ECC_ERR 17). On gfx9 also IN_TG 11 (the wave shares its workgroup with others)
/// and VALID 16 (umr's VI wave-status parser, the gfx8 layout gfx9 keeps).
fn status(wave: &Wave, gfx9: bool) -> (u32, u32, &'static str) {
    let execz = wave.mask64(EXEC) == 0;
    let vccz = wave.mask64(VCC) == 0;
    let common = 1 | 0b110 | 1 << 5 | 1 << 6 | 1 << 9 | 1 << 10 | 1 << 13 | 1 << 17 | 1 << 20 | 1 << 21;
    let value = wave.scc as u32 | (execz as u32) << 9 | (vccz as u32) << 10;
    match gfx9 {
        true => (
            value | ((wave.site.waves > 1) as u32) << 11 | 1 << 16,
            common | 1 << 11 | 1 << 16,
            "s_getreg_b32 HW_REG_STATUS: a field besides SCC, SPI_PRIO, PRIV, TRAP_EN, EXECZ, VCCZ, IN_TG, HALT, VALID, ECC_ERR and COND_DBG_USER/SYS",
        ),
        false => (
            value,
            common,
            "s_getreg_b32 HW_REG_STATUS: a field besides SCC, SPI_PRIO, PRIV, TRAP_EN, EXECZ, VCCZ, HALT, ECC_ERR and COND_DBG_USER/SYS",
        ),
    }
}

/// Where the wave's CU sits: (shader engine, shader array, slot in the array), a slot holding
/// `per_array` CUs' worth of places; `Unsupported` where the agent has more CUs than its engines'
/// arrays hold or the engine does not fit `se_bits`.
fn place(wave: &Wave, per_array: u32, se_bits: u32) -> Result<(u32, u32, u32), ExecError> {
    let topology = wave.site.topology;
    let arrays = topology.shader_arrays_per_engine.max(1);
    let cu = wave.site.cu;
    let (slot, array, engine) = (cu % per_array, cu / per_array % arrays, cu / (per_array * arrays));
    if engine >= topology.shader_engines.max(1) || engine >> se_bits != 0 {
        return Err(ExecError::Unsupported {
            pc: wave.pc,
            mnemonic: "s_getreg_b32 of a wave's place: the agent has more compute units than its shader engines' arrays hold",
        });
    }
    Ok((engine, array, slot))
}

/// gfx9's HW_ID (HIP's `amd_device_functions.h`, embers `hwid.h`): WAVE_ID 3:0, SIMD_ID 5:4,
/// CU_ID 11:8, SH_ID 12, SE_ID 14:13 (15:13 on gfx908 and later). PIPE_ID 7:6, TG_ID 19:16,
/// VM_ID 23:20, QUEUE_ID 26:24, STATE_ID 29:27 and ME_ID 31:30 name hardware queue and
/// workgroup slots the soft runtime has none of.
fn hw_id(wave: &Wave, layout: Layout) -> Result<(u32, u32, &'static str), ExecError> {
    let se_bits = if layout == Layout::Vega { 2 } else { 3 };
    let (engine, array, cu) = place(wave, 16, se_bits)?;
    let index = wave.site.wave;
    let value = (index / 4) | (index % 4) << 4 | cu << 8 | array << 12 | engine << 13;
    let known = 0xF | 0x3 << 4 | 0xF << 8 | 1 << 12 | ((1 << se_bits) - 1) << 13;
    Ok((
        value,
        known,
        "s_getreg_b32 HW_REG_HW_ID: PIPE_ID, TG_ID, VM_ID, QUEUE_ID, STATE_ID or ME_ID (hardware queue slots the soft runtime has none of)",
    ))
}

/// gfx11's HW_ID1 (embers `hwid.h`, GFX11P): WAVE_ID 4:0, SIMD_ID 9:8, WGP_ID 13:10, SA_ID 16,
/// SE_ID 20:18; DP_RATE 31:29 is refused. In WGP mode (COMPUTE_PGM_RSRC1 bit 29, AMDGPUUsage) a
/// workgroup's waves spread over the WGP's four SIMD32s; in CU mode over its CU's two.
fn hw_id1(wave: &Wave) -> Result<(u32, u32, &'static str), ExecError> {
    let (engine, array, slot) = place(wave, 32, 3)?;
    let (wgp, cu_in_wgp) = (slot / 2, slot % 2);
    let index = wave.site.wave;
    let (simd, id) =
        if wave.site.rsrc1 >> 29 & 1 == 1 { (index % 4, index / 4) } else { (2 * cu_in_wgp + index % 2, index / 2) };
    let value = id | simd << 8 | wgp << 10 | array << 16 | engine << 18;
    let known = 0x1F | 0x3 << 8 | 0xF << 10 | 1 << 16 | 0x7 << 18;
    Ok((value, known, "s_getreg_b32 HW_REG_HW_ID1: DP_RATE or a reserved bit"))
}

/// GPR_ALLOC's sizes. gfx9 (trap handler): VGPR_SIZE 13:8 in units of 4, the descriptor's
/// granule (AMDGPUUsage), so its GRANULATED_WORKITEM_VGPR_COUNT; SGPR_SIZE 27:24, 16 SGPRs a
/// unit, minus 1, which is half the descriptor's gfx9 SGPR field (LLVM `getNumSGPRBlocks`:
/// blocks of 16, minus 1, times 2). gfx90a and gfx942: VGPR_SIZE 11:6 in units of 8, the
/// descriptor's granule there too. gfx11: VGPR_SIZE 19:12 in units of 4 (the trap handler's
/// `get_vgpr_size_bytes`), of the VGPRs the descriptor asks for (granule 8 for wave32, 4 for
/// wave64); gfx10 and later allocate a fixed SGPR file, and GPR_ALLOC has no SGPR size.
fn gpr_alloc(site: &WaveSite, layout: Layout) -> (u32, u32, &'static str) {
    let vgpr_field = site.rsrc1 & 0x3F;
    let sgpr_size = (site.rsrc1 >> 6 & 0xF) / 2;
    let refusal =
        "s_getreg_b32 HW_REG_GPR_ALLOC: VGPR_BASE, SGPR_BASE, ACCV_OFFSET or a field besides VGPR_SIZE and SGPR_SIZE";
    match layout {
        Layout::Vega | Layout::Cdna1 => (vgpr_field << 8 | sgpr_size << 24, 0x3F << 8 | 0xF << 24, refusal),
        Layout::Cdna2 => (vgpr_field << 6 | sgpr_size << 24, 0x3F << 6 | 0xF << 24, refusal),
        Layout::Gfx11 => {
            let vgprs = (vgpr_field + 1) * if site.wave32 { 8 } else { 4 };
            ((vgprs / 4 - 1) << 12, 0xFF << 12, refusal)
        }
    }
}
