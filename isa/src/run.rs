//! Running a dispatch's waves on the tier it names: the interpreter (`interp`) or the native
//! tier (`native`), through the one workgroup loop (`interp::launch::run_workgroup_turns`). Above
//! both tiers, so neither names the other.

use crate::compiled::Tier;
use crate::interp::coverage::{CLOCK, PC, Registers};
use crate::interp::launch::{self, Dispatch, Ran, RunFrom, run_workgroup_interpreted, run_workgroup_turns};
use crate::interp::wave::{LANES, Wave};
use crate::interp::{ExecError, Isa, Memory};
use crate::native;

/// Runs workgroup `workgroup_id` of `dispatch` to its end on the tier `dispatch.tier` names;
/// `lds` is reused between calls. Returns the instructions its waves executed. Where
/// [`Dispatch::interrupt`] saves the workgroup, it resumes at once on this thread: a caller that
/// moves saved workgroups between threads runs them with [`run_or_save`].
///
/// [`Tier::Auto`] runs the native tier where the kernel and the host allow it
/// ([`native::unavailable`]) and the interpreter otherwise; [`Tier::Native`] fails with
/// [`ExecError::NativeUnavailable`] where they do not. Either tier's waves take turns in the same
/// loop, with the same barriers, instruction limit and errors.
pub fn run_workgroup<M: Memory + ?Sized>(
    dispatch: &Dispatch<'_>,
    memory: &M,
    workgroup_id: [u32; 3],
    lds: &mut Vec<u8>,
) -> Result<u64, ExecError> {
    let mut from = RunFrom::Begin(workgroup_id);
    loop {
        match run_or_save(dispatch, memory, from, lds)? {
            Ran::Ended(executed) => return Ok(executed),
            Ran::Saved(saved) => from = RunFrom::Resume(saved),
        }
    }
}

/// Runs a workgroup of `dispatch`, from its beginning or where [`Dispatch::interrupt`] saved it
/// ([`RunFrom`]), on the tier `dispatch.tier` names ([`run_workgroup`]), until it ends or is
/// saved again ([`Ran`]); `lds` is reused between calls. A saved workgroup resumes on any
/// thread, with the same `dispatch` and `memory`; one never resumed is dropped with what it
/// holds. After an error the workgroup is gone.
pub fn run_or_save<M: Memory + ?Sized>(
    dispatch: &Dispatch<'_>,
    memory: &M,
    from: RunFrom,
    lds: &mut Vec<u8>,
) -> Result<Ran, ExecError> {
    let code = match dispatch.tier {
        Tier::Interpreter => None,
        Tier::Native => Some(native::compiled(dispatch.kernel).map_err(ExecError::NativeUnavailable)?),
        Tier::Auto => native::compiled(dispatch.kernel).ok(),
    };
    match code {
        // SAFETY: the native tier compiles only on hosts with AVX2, FMA and BMI
        // (`native::unavailable`), every feature `run_workgroup_native` is compiled for.
        Some(code) => unsafe { run_workgroup_native(code, dispatch, memory, from, lds) },
        None => run_workgroup_interpreted(dispatch, memory, from, lds),
    }
}

/// The workgroup loop with the native tier's waves (`code` is `dispatch.kernel`'s), compiled for
/// the AVX2/FMA hosts that tier needs, so that the waves' start (cleared rows, work-item ids) is
/// written in 256-bit vectors.
///
/// # Safety
/// The CPU has AVX2, FMA, BMI1/2, LZCNT and POPCNT (`native::compiled` succeeds only on such).
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt"))]
unsafe fn run_workgroup_native<M: Memory + ?Sized>(
    code: &native::NativeCode,
    dispatch: &Dispatch<'_>,
    memory: &M,
    from: RunFrom,
    lds: &mut Vec<u8>,
) -> Result<Ran, ExecError> {
    // The frame the workgroup's waves run with, and the host ranges they find (set up again on
    // a resume: a frame holds nothing of the waves between turns).
    let mut workgroup = native::Workgroup::new(dispatch.kernel, memory, dispatch.serial);
    run_workgroup_turns(dispatch, from, lds, |wave, lds, shares| {
        native::run_wave(code, dispatch, wave, lds, shares, &mut workgroup)
    })
}

/// Runs `words`, straight-line `isa` code (an `s_endpgm` is added after it), as a kernel's one
/// wave from `registers` (wave64 where they hold a high half, [`Registers::wave64`]), with
/// `memory` and the workgroup's `lds`, on `tier`: compiled by the native tier, or planned and
/// stepped by the interpreter, through the same wave loops a dispatch runs. Returns the
/// instructions executed, or the wave's error (its PC as if the code started at [`PC`]); the
/// registers hold the wave's state when it stopped either way. A barrier releases at once (the
/// wave is alone). This is how `isa/tests/native_differential.rs` holds the tiers to each other.
pub fn run_code(
    isa: Isa,
    words: &[u32],
    registers: &mut Registers,
    memory: &dyn Memory,
    lds: &mut [u8],
    tier: Tier,
) -> Result<u64, ExecError> {
    // A kernel descriptor (AMDGPUUsage): the code 64 bytes on, wave32 (ENABLE_WAVEFRONT_SIZE32)
    // or wave64, enough VGPRs (granules of 8 for wave32, 4 for wave64), then the code and
    // `s_endpgm` (gfx11: 0xBFB00000; gfx10 and gfx9: 0xBF810000).
    let wide = !registers.high_vgpr.is_empty();
    let granules = registers.vgpr.len().div_ceil(if wide { 4 } else { 8 }).max(1) as u32;
    let mut image = vec![0u32; 16];
    image[4] = 64;
    image[12] = granules - 1;
    image[14] = if wide { 0 } else { 1 << 10 };
    image.extend_from_slice(words);
    image.push(match isa {
        Isa::Gfx11 | Isa::Gfx12 => 0xBFB0_0000,
        Isa::Gfx10_3 | Isa::Gfx9(_) => 0xBF81_0000,
    });
    let code_memory = crate::interp::Regions(vec![(image.as_ptr() as u64, image.len() as u64 * 4)]);
    let kernel = crate::interp::DecodedKernel::load_for(&code_memory, image.as_ptr() as u64, isa)?;
    let dispatch = Dispatch {
        group_segment_size: lds.len() as u32,
        private_segment_size: registers.private_bytes as u32,
        instruction_limit: 1 << 20,
        realtime: || CLOCK,
        tier,
        ..Dispatch::new(&kernel, [if wide { 64 } else { 32 }, 1, 1], [if wide { 64 } else { 32 }, 1, 1])
    };
    let mut wave = Wave::blank();
    wave.pc = kernel.entry;
    wave.sgpr = registers.sgpr;
    let rows = registers.vgpr.len();
    wave.vgpr = core::mem::take(&mut registers.vgpr);
    wave.vgpr.resize(kernel.descriptor.vgprs() + kernel.extra_vgprs, [0; LANES]);
    wave.scc = registers.scc;
    wave.mode = registers.mode;
    wave.private_bytes = registers.private_bytes;
    wave.scratch = core::mem::take(&mut registers.scratch);
    wave.scratch.resize(registers.private_bytes * LANES * if wide { 2 } else { 1 }, 0);
    if wide {
        wave.wide = true;
        wave.other.vgpr = core::mem::take(&mut registers.high_vgpr);
        wave.other.vgpr.resize(wave.vgpr.len(), [0; LANES]);
        wave.other.scratch = wave.scratch.split_off(registers.private_bytes * LANES);
    }
    let native = match tier {
        Tier::Interpreter => None,
        _ => Some(native::compiled(&kernel).map_err(ExecError::NativeUnavailable)?),
    };
    let mut workgroup = native::Workgroup::new(&kernel, memory, 0);
    let result = loop {
        let turn = match &native {
            Some(code) => native::run_wave(code, &dispatch, &mut wave, lds, false, &mut workgroup),
            None => launch::run_wave_interpreted(&dispatch, memory, &mut wave, lds, false),
        };
        match turn {
            Err(error) => break Err(error),
            Ok(()) if wave.ended => break Ok(wave.executed),
            Ok(()) => wave.at_barrier = false,
        }
    };
    // A wave64 wave that failed in its high half stopped with that half swapped in (the
    // interpreter's loop leaves it so); its registers are read from the low half's side.
    if wave.half == 1 {
        wave.swap_halves();
    }
    wave.vgpr.truncate(rows);
    registers.sgpr = wave.sgpr;
    registers.vgpr = core::mem::take(&mut wave.vgpr);
    if wide {
        wave.other.vgpr.truncate(rows);
        registers.high_vgpr = core::mem::take(&mut wave.other.vgpr);
        wave.scratch.append(&mut wave.other.scratch);
    }
    registers.scc = wave.scc;
    registers.mode = wave.mode;
    registers.scratch = core::mem::take(&mut wave.scratch);
    let at = |pc: u64| pc.wrapping_sub(kernel.entry).wrapping_add(PC);
    result.map_err(|error| match error {
        ExecError::Fault { pc, fault } => ExecError::Fault { pc: at(pc), fault },
        ExecError::Unsupported { pc, mnemonic } => ExecError::Unsupported { pc: at(pc), mnemonic },
        ExecError::PcOutOfRange { pc } => ExecError::PcOutOfRange { pc: at(pc) },
        ExecError::Trap { pc, reason } => ExecError::Trap { pc: at(pc), reason },
        ExecError::InstructionLimit { pc, limit } => ExecError::InstructionLimit { pc: at(pc), limit },
        other => other,
    })
}
