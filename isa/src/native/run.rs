//! The native tier's wave loop: it enters compiled code at the wave's PC and acts on why it came
//! back, with the same turns, barriers, limit and errors as the interpreter's (`interp::launch`).

use dynasmrt::AssemblyOffset;

use super::NativeCode;
use super::frame::{Exit, Frame, MatrixScratch, Part, ROW_SHAPES, RangeCache, RowShape, Trampoline, fallback, range};
use crate::interp::launch::{Dispatch, slice};
use crate::interp::wave::{LANES, Wave};
use crate::interp::{ExecError, HostRange, Memory};

/// Compiled code's signature ([`Frame`]).
type Compiled = unsafe extern "sysv64" fn(*mut Frame, *const u8) -> u32;

/// What a workgroup's waves share while they run natively: the frame compiled code reads (its
/// constants, scratch rows and range cache set up once per workgroup, its wave pointers per
/// turn) and the trampoline its steps run through.
pub(crate) struct Workgroup<'a, M: Memory + ?Sized> {
    /// Always `Some` until dropped, when it goes back to [`SPARE_FRAME`].
    frame: Option<Box<Frame>>,
    trampoline: Trampoline<'a, M>,
}

thread_local! {
    /// The frame of the last workgroup this thread ran, for the next one: building and moving a
    /// frame (6 KiB, most of it WMMA scratch) per workgroup was a tenth of a fill's time.
    static SPARE_FRAME: core::cell::Cell<Option<Box<Frame>>> = const { core::cell::Cell::new(None) };
}

impl<'a, M: Memory + ?Sized> Workgroup<'a, M> {
    /// A workgroup of `kernel`'s over `memory` (one dispatch, for which the range cache holds):
    /// the ranges the last workgroup on this thread found stay where it was of the same
    /// dispatch (`serial`, [`crate::interp::launch::Dispatch::serial`], not 0).
    pub(crate) fn new(kernel: &'a crate::interp::DecodedKernel, memory: &'a M, serial: u64) -> Self {
        let mut frame = SPARE_FRAME.take().unwrap_or_else(|| {
            Box::new(Frame {
                lane_bits: core::array::from_fn(|lane| 1 << lane),
                ramp: core::array::from_fn(|lane| 4 * lane as u32),
                scratch: [[0; LANES]; 4],
                inactive: [[[0; 8]; 4]; 2],
                wave: core::ptr::null_mut(),
                vgpr: core::ptr::null_mut(),
                vgpr_high: core::ptr::null_mut(),
                lds: core::ptr::null_mut(),
                lds_len: 0,
                yield_at: 0,
                fallback: fallback::<M>,
                range: range::<M>,
                trampoline: core::ptr::null_mut(),
                cache: RangeCache::default(),
                matrix: MatrixScratch { a: [0.0; 256], b: [0.0; 256], d: [[0; LANES]; 8] },
                row_shapes: [RowShape::UNKNOWN; 2 * ROW_SHAPES],
                serial: 0,
            })
        });
        // What belongs to the last workgroup goes: its pointers, its memory's functions and the
        // ranges its memory granted. The constants stay; the scratch rows and the matrix
        // scratch are written before they are read, within one instruction.
        frame.wave = core::ptr::null_mut();
        frame.vgpr = core::ptr::null_mut();
        frame.vgpr_high = core::ptr::null_mut();
        frame.lds = core::ptr::null_mut();
        frame.lds_len = 0;
        frame.trampoline = core::ptr::null_mut();
        frame.fallback = fallback::<M>;
        frame.range = range::<M>;
        // Emptied in place (a `RangeCache::default()` built on the stack and copied in was a
        // store-forwarding stall, a fifth of this function's time in a fill), unless they are
        // this dispatch's: then the workgroup's first access finds its range without a call.
        if serial == 0 || frame.serial != serial {
            for range in &mut frame.cache.ranges {
                *range = HostRange::default();
            }
            frame.cache.next = 0;
            frame.serial = serial;
        }
        Workgroup { frame: Some(frame), trampoline: Trampoline { kernel, memory, error: None, backward: false } }
    }
}

impl<M: Memory + ?Sized> Drop for Workgroup<'_, M> {
    fn drop(&mut self) {
        SPARE_FRAME.set(self.frame.take());
    }
}

/// Runs `wave` natively until it ends or reaches a barrier, or until it yields (a backward branch
/// once the turn's [`slice`] is spent, or, when it `shares` its workgroup, `s_sleep`): the
/// interpreter's `run_wave`, in compiled code. `code` is `dispatch.kernel`'s; `workgroup` is
/// the wave's workgroup's ([`Workgroup::new`] for `dispatch.kernel` and the dispatch's memory).
pub(crate) fn run_wave<M: Memory + ?Sized>(
    code: &NativeCode,
    dispatch: &Dispatch<'_>,
    wave: &mut Wave,
    lds: &mut [u8],
    shares: bool,
    workgroup: &mut Workgroup<'_, M>,
) -> Result<(), ExecError> {
    let kernel = dispatch.kernel;
    let limit = dispatch.instruction_limit;
    let turn_start = wave.executed;
    let Workgroup { frame, trampoline } = workgroup;
    let frame = frame.as_deref_mut().expect("a workgroup's frame, until it is dropped");
    trampoline.error = None;
    // Between instructions a wave64 wave is in its low half (`interp::launch::run_wave` and the
    // trampoline swap the high half back after its step).
    frame.vgpr = wave.vgpr.as_mut_ptr();
    frame.vgpr_high = if wave.wide { wave.other.vgpr.as_mut_ptr() } else { core::ptr::null_mut() };
    frame.wave = wave;
    frame.lds = lds.as_mut_ptr();
    frame.lds_len = lds.len() as u64;
    frame.yield_at = turn_start.saturating_add(slice(shares)).min(limit.saturating_add(1));
    frame.trampoline = &mut *trampoline as *mut Trampoline<'_, M> as *mut ();
    // SAFETY: the prologue's offset in the finished buffer, which has the signature `Compiled`
    // (`emit::compile`).
    let compiled: Compiled = unsafe { core::mem::transmute(code.buffer.ptr(AssemblyOffset(code.prologue))) };
    loop {
        // SAFETY: the frame's wave is `wave`, which only compiled code and the trampoline touch
        // (through the frame) while this runs.
        let pc = unsafe { (*frame.wave).pc };
        let index = pc.wrapping_sub(kernel.entry) / 4;
        let compiled_at =
            code.entries.get(index as usize).filter(|&&offset| pc.is_multiple_of(4) && offset != u32::MAX);
        trampoline.backward = false;
        let exit = match compiled_at {
            // SAFETY: the frame's pointers are live and used by nothing else during the call
            // (the wave, its VGPR rows, which no step reallocates, the LDS and the trampoline);
            // `offset` is an instruction's start in the same buffer; the host has AVX2 and FMA
            // (`unavailable`).
            Some(&offset) => unsafe { compiled(&mut *frame, code.buffer.ptr(AssemblyOffset(offset as usize))) },
            // An instruction compiled code does not reach (an indirect jump's target,
            // `reach.rs`): the interpreter's step, as compiled code would call it.
            None => {
                let next = match kernel.fetch(pc) {
                    Ok(decoded) => pc + decoded.len as u64,
                    Err(error) => break Err(error),
                };
                // SAFETY: compiled code is not running; the wave is ours.
                unsafe { (*frame.wave).executed += 1 };
                // SAFETY: as for the compiled call: the frame's pointers are live and unaliased,
                // its trampoline is this `Trampoline<M>`, `index` is an instruction's (fetched
                // above), and the host has AVX2 and FMA.
                let exit = unsafe { fallback::<M>(&mut *frame, index as u32, Part::Whole as u32) };
                if exit == Exit::Next as u32 {
                    // SAFETY: the step has returned; the wave is ours.
                    unsafe { (*frame.wave).pc = next };
                }
                exit
            }
        };
        // SAFETY: compiled code has returned; the wave is ours again.
        let wave = unsafe { &mut *frame.wave };
        if wave.executed > limit {
            break Err(ExecError::InstructionLimit { pc: wave.pc, limit });
        }
        match exit {
            exit if exit == Exit::Next as u32 => {}
            // A backward branch found the turn's budget spent, whether the wave shares its
            // workgroup or runs alone (`interp::launch::slice`).
            exit if exit == Exit::Yield as u32 => break Ok(()),
            exit if exit == Exit::Jump as u32 => {
                if trampoline.backward && wave.executed - turn_start >= slice(shares) {
                    break Ok(());
                }
            }
            exit if exit == Exit::End as u32 => {
                wave.ended = true;
                break Ok(());
            }
            exit if exit == Exit::Barrier as u32 => {
                wave.at_barrier = true;
                break Ok(());
            }
            exit if exit == Exit::Sleep as u32 => {
                if shares {
                    break Ok(());
                }
            }
            _ => {
                break Err(trampoline.error.take().unwrap_or(ExecError::PcOutOfRange { pc: wave.pc }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{DecodedKernel, Isa, Regions};

    #[test]
    fn a_threads_workgroups_keep_their_dispatchs_ranges_and_no_other_dispatchs() {
        // A kernel descriptor (the code 64 bytes on, wave32) and `s_endpgm`: a kernel to hold.
        let mut image = vec![0u32; 16];
        image[4] = 64;
        image[14] = 1 << 10;
        image.push(0xBFB0_0000);
        let memory = Regions(vec![(image.as_ptr() as u64, image.len() as u64 * 4)]);
        let kernel = DecodedKernel::load_for(&memory, image.as_ptr() as u64, Isa::Gfx11).expect("the kernel decodes");
        let found = HostRange { start: 0x1000, end: 0x2000, delta: 7, writable: true };
        // A workgroup of dispatch `serial` finds `found`; what does the next one start with?
        let after = |first: u64, next: u64| {
            {
                let mut workgroup = Workgroup::new(&kernel, &memory, first);
                workgroup.frame.as_mut().expect("a frame").cache.ranges[0] = found;
            }
            let workgroup = Workgroup::new(&kernel, &memory, next);
            workgroup.frame.as_ref().expect("a frame").cache.ranges[0]
        };
        assert_eq!(after(5, 5), found, "the same dispatch keeps its ranges");
        assert_eq!(after(5, 6), HostRange::default(), "another dispatch starts empty");
        assert_eq!(after(0, 0), HostRange::default(), "without a number, every workgroup starts empty");
    }
}
