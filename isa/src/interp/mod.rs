//! An interpreter for gfx1100 machine code: it runs a dispatch's workgroups wave by wave, as the
//! hardware would, over memory the caller provides. gfx10.3 (RDNA2) code runs translated to gfx11.
//! Wave32 and wave64 both run; a wave64 wave as two 32-lane halves (`wave.rs`).
//!
//! - `decoded_kernel.rs`: a kernel's descriptor and its code, decoded once.
//! - `decoded_kernel/from_gfx10.rs`: gfx10.3 instructions re-encoded as the gfx11 instructions that compute the
//!   same thing.
//! - `launch.rs`: each wave's initial state, from the descriptor and the dispatch packet
//!   (AMDGPUUsage, "Initial Kernel Execution State").
//! - `wave.rs`: a wave's registers and operand access, and what a step asks of the wave loop (`Flow`).
//! - `scalar.rs`, `valu/` (a file per operation family, with `operands.rs` and `trig_preop.rs`), `memory_ops.rs`
//!   (with `formats.rs`): the instructions. Vector and memory instructions are planned when the kernel is decoded (operands
//!   resolved, types and conditions parsed), so running one is a `match` and loops over rows.
//! - `hw_registers.rs` (with `site.rs`, a wave's place on the agent): the hardware registers
//!   `s_getreg_b32` reads, in each ISA family's layout.
//!
//! The waves of a workgroup take turns on the calling thread: each runs until it ends, reaches
//! `s_barrier`, sleeps (`s_sleep`) or takes a backward branch after a slice of instructions, so
//! they progress together as on the hardware (a wave may spin on a flag a later wave sets).
//! `s_barrier` releases once every live wave has reached it (a wave that ended no longer counts,
//! as on the hardware). Workgroups are independent, so the caller runs them on as many threads
//! as it likes.

pub mod coverage;
mod formats;
pub(crate) mod launch;
pub(crate) mod memory_ops;
pub(crate) mod mfma;
// Lane loops index several rows by one lane number: the form the compiler vectorises.
pub(crate) mod decoded_kernel;
pub(crate) mod hw_registers;
#[allow(clippy::needless_range_loop)]
pub(crate) mod operands;
mod scalar;
pub(crate) mod site;
mod standalone;
mod trig_preop;
#[allow(clippy::needless_range_loop)]
pub(crate) mod valu;
pub(crate) mod wave;

use core::sync::atomic::Ordering;

pub use decoded_kernel::{DecodedKernel, Isa, KernelDescriptor};
pub use launch::{Dispatch, Interrupt, InterruptFn, Ran, Rounds, RunFrom, SavedWorkgroup};
pub use site::Topology;
pub use standalone::{Regions, StandaloneImage};

use crate::DecodeError;

/// A memory access the memory refused: nothing is mapped there for the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryFault {
    /// The first byte address of the access.
    pub address: u64,
    /// Its length in bytes.
    pub length: u64,
    /// Whether it wrote.
    pub write: bool,
}

/// The atomic read-modify-write operations of FLAT, GLOBAL and DS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Swap,
    /// Compare-and-swap: stores `value` where memory holds `compare`.
    CompareSwap,
    /// Compare-and-swap on IEEE values (`*_cmpswap_f32`, `ds_cmpstore_f32/f64`, gfx10's
    /// `*_fcmpswap_x2`): equal as floats (−0 equals +0; a NaN equals nothing).
    CompareSwapFloat,
    MinU,
    MaxU,
    MinI,
    MaxI,
    And,
    Or,
    Xor,
    /// `(old >= value) ? 0 : old + 1`.
    Inc,
    /// `(old == 0 || old > value) ? value : old - 1`.
    Dec,
    /// `value - old` (DS's reverse subtract).
    ReverseSub,
    /// `old - value`, clamped at 0 (`*_atomic_csub_u32`).
    SubClamp,
    /// `(old & !compare) | value` (DS's masked or; `compare` holds the mask).
    MaskOr,
    /// `(old >= value) ? old - value : old + compare` (`ds_wrap_rtn_b32`; `compare` holds
    /// DATA2).
    Wrap,
    /// Each 32-bit half of the word takes `value`'s half, bit 31 cleared, where that bit is set,
    /// and keeps its own otherwise (`ds_condxchg32_rtn_b64`).
    ConditionalExchange,
    /// Float add, min and max on the word's IEEE value (f32 or f64 by width).
    AddFloat,
    MinFloat,
    MaxFloat,
}

/// Global memory as the agent sees it: every access is checked by the implementation.
pub trait Memory: Sync {
    /// Reads `out.len()` bytes at `address`.
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault>;
    /// Writes `data` at `address`.
    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault>;
    /// An atomic on the naturally aligned 4-byte word at `address`; returns the old value.
    fn atomic32(&self, address: u64, op: AtomicOp, value: u32, compare: u32) -> Result<u32, MemoryFault>;
    /// An atomic on the naturally aligned 8-byte word at `address`; returns the old value.
    fn atomic64(&self, address: u64, op: AtomicOp, value: u64, compare: u64) -> Result<u64, MemoryFault>;
    /// The host memory holding `[address, address + length)` for plain loads (or, `write`,
    /// stores): a [`HostRange`] at least that long, valid for the rest of the dispatch, so the
    /// native tier checks a whole instruction's accesses with one call and later ones in the
    /// same range with none. `None` (the default) where the memory is not host memory or the
    /// range is not all mapped; the caller then goes through [`Memory::read`] and
    /// [`Memory::write`], which report the fault.
    fn host_range(&self, address: u64, length: u64, write: bool) -> Option<HostRange> {
        let _ = (address, length, write);
        None
    }
}

/// Agent addresses `[start, end)` that are host memory for the rest of a dispatch, at host
/// address `agent + delta` (wrapping), which plain loads may read and, where `writable`, stores
/// may write. `repr(C)`: the native tier keeps a few in its frame and tests them inline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRange {
    pub start: u64,
    pub end: u64,
    pub delta: u64,
    pub writable: bool,
}

/// One body for both atomic widths: `$unsigned` words, compared as `$signed` for `MinI`/`MaxI`.
macro_rules! atomic_arithmetic {
    ($(#[$doc:meta])* $name:ident, $unsigned:ty, $signed:ty, $float:ty) => {
        $(#[$doc])*
        pub fn $name(op: AtomicOp, old: $unsigned, value: $unsigned, compare: $unsigned) -> $unsigned {
            match op {
                AtomicOp::Add => old.wrapping_add(value),
                AtomicOp::Sub => old.wrapping_sub(value),
                AtomicOp::Swap => value,
                AtomicOp::CompareSwap if old == compare => value,
                AtomicOp::CompareSwap => old,
                AtomicOp::CompareSwapFloat if <$float>::from_bits(old) == <$float>::from_bits(compare) => value,
                AtomicOp::CompareSwapFloat => old,
                AtomicOp::MinU => old.min(value),
                AtomicOp::MaxU => old.max(value),
                AtomicOp::MinI => (old as $signed).min(value as $signed) as $unsigned,
                AtomicOp::MaxI => (old as $signed).max(value as $signed) as $unsigned,
                AtomicOp::And => old & value,
                AtomicOp::Or => old | value,
                AtomicOp::Xor => old ^ value,
                AtomicOp::Inc if old >= value => 0,
                AtomicOp::Inc => old + 1,
                AtomicOp::Dec if old == 0 || old > value => value,
                AtomicOp::Dec => old - 1,
                AtomicOp::ReverseSub => value.wrapping_sub(old),
                AtomicOp::SubClamp => old.saturating_sub(value),
                AtomicOp::MaskOr => (old & !compare) | value,
                AtomicOp::Wrap if old >= value => old - value,
                AtomicOp::Wrap => old.wrapping_add(compare),
                AtomicOp::ConditionalExchange => {
                    let mut out = old;
                    let mut shift = 0;
                    while shift < <$unsigned>::BITS {
                        let half = (value >> shift) as u32;
                        if half >> 31 == 1 {
                            let mask = (u32::MAX as $unsigned) << shift;
                            out = (out & !mask) | (((half & 0x7FFF_FFFF) as $unsigned) << shift);
                        }
                        shift += 32;
                    }
                    out
                }
                AtomicOp::AddFloat => {
                    // A NaN operand gives its NaN, old's first, quieted: one answer whichever
                    // order a compiler adds in (`valu::rows::ordered_nans` for the VALU's).
                    let quiet = (1 as $unsigned) << (<$float>::MANTISSA_DIGITS - 2);
                    let (x, y) = (<$float>::from_bits(old), <$float>::from_bits(value));
                    if x.is_nan() {
                        old | quiet
                    } else if y.is_nan() {
                        value | quiet
                    } else {
                        (x + y).to_bits()
                    }
                }
                AtomicOp::MinFloat => <$float>::from_bits(old).min(<$float>::from_bits(value)).to_bits(),
                AtomicOp::MaxFloat => <$float>::from_bits(old).max(<$float>::from_bits(value)).to_bits(),
            }
        }
    };
}

atomic_arithmetic!(
    /// Applies `op` to the 4-byte `old` (the shared arithmetic of every atomic implementation).
    apply_atomic32,
    u32,
    i32,
    f32
);
atomic_arithmetic!(
    /// [`apply_atomic32`] for 8-byte words.
    apply_atomic64,
    u64,
    i64,
    f64
);

/// Memory the kernel reaches through host memory. The implementor says whether an access may
/// happen and where its bytes are on the host (an agent address may name host memory elsewhere,
/// as a locked range's does); its [`Memory`] then copies and updates those host bytes, one way
/// for every implementation.
///
/// # Safety
/// `check` returns `Ok(host)` only when `[host, host + length)` is live host memory that stays
/// live for the dispatch, where every access racing the interpreter's is atomic or a plain copy
/// (as on a GPU), and `host` keeps `address`'s alignment modulo 8.
pub unsafe trait HostMemory: Sync {
    /// Whether the kernel may read (or, `write`, write) `[address, address + length)`, and the
    /// host address of its first byte.
    fn check(&self, address: u64, length: u64, write: bool) -> Result<u64, MemoryFault>;

    /// [`HostMemory::check`], answered with the whole range the access falls in (an allocation,
    /// say), which must meet `check`'s contract throughout for the rest of the dispatch: every
    /// access inside it is granted as `check` would grant it (stores only where `writable`).
    /// The default is the access itself.
    fn check_range(&self, address: u64, length: u64, write: bool) -> Result<HostRange, MemoryFault> {
        let host = self.check(address, length, write)?;
        Ok(HostRange {
            start: address,
            end: address.saturating_add(length),
            delta: host.wrapping_sub(address),
            writable: write,
        })
    }
}

/// The body of a [`HostMemory`]'s atomic on one word of `$atomic`'s width: an aligned word that
/// `check` vouches for, updated with a host atomic (the two widths differ only in their types).
macro_rules! host_atomic {
    ($memory:ident, $address:ident, $atomic:ty, $apply:ident($op:ident, $value:ident, $compare:ident)) => {{
        let width = core::mem::size_of::<$atomic>() as u64;
        if !$address.is_multiple_of(width) {
            return Err(MemoryFault { address: $address, length: width, write: true });
        }
        let host = $memory.check($address, width, true)?;
        // SAFETY: an aligned word `check` vouched for (the trait's contract keeps the alignment);
        // accesses racing this one are atomic or plain copies, as on a GPU.
        let word = unsafe { <$atomic>::from_ptr(host as *mut _) };
        let update = |old| Some($apply($op, old, $value, $compare));
        Ok(word.fetch_update(Ordering::AcqRel, Ordering::Acquire, update).unwrap_or_else(|old| old))
    }};
}

impl<T: HostMemory> Memory for T {
    fn host_range(&self, address: u64, length: u64, write: bool) -> Option<HostRange> {
        self.check_range(address, length, write).ok()
    }

    #[inline(always)]
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        let host = self.check(address, out.len() as u64, false)?;
        // SAFETY: `check` vouched for the host range (the trait's contract). Plain copies carry
        // no tearing guarantee, as a GPU's plain loads carry none.
        unsafe { core::ptr::copy_nonoverlapping(host as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    #[inline(always)]
    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let host = self.check(address, data.len() as u64, true)?;
        // SAFETY: as for `read`.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len()) };
        Ok(())
    }

    fn atomic32(&self, address: u64, op: AtomicOp, value: u32, compare: u32) -> Result<u32, MemoryFault> {
        host_atomic!(self, address, core::sync::atomic::AtomicU32, apply_atomic32(op, value, compare))
    }

    fn atomic64(&self, address: u64, op: AtomicOp, value: u64, compare: u64) -> Result<u64, MemoryFault> {
        host_atomic!(self, address, core::sync::atomic::AtomicU64, apply_atomic64(op, value, compare))
    }
}

/// Why a wave stopped before `s_endpgm`. Each names the program counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The kernel's code could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A global, scratch or LDS access outside what is mapped: a GPU memory fault.
    #[error("memory fault at pc 0x{pc:x}: {} of {} bytes at 0x{:x}", if fault.write { "write" } else { "read" }, fault.length, fault.address)]
    Fault { pc: u64, fault: MemoryFault },
    /// An instruction the interpreter does not execute yet.
    #[error("`{mnemonic}` at pc 0x{pc:x} is not supported by the interpreter")]
    Unsupported { pc: u64, mnemonic: &'static str },
    /// A branch or fall-through left the kernel's decoded code.
    #[error("pc 0x{pc:x} is outside the kernel's code")]
    PcOutOfRange { pc: u64 },
    /// The kernel descriptor asks for something this interpreter cannot set up.
    #[error("kernel descriptor: {0}")]
    Descriptor(String),
    /// `s_trap`. (Running into `s_code_end`, where decoding stopped, is [`ExecError::PcOutOfRange`].)
    #[error("the wave trapped at pc 0x{pc:x}: {reason}")]
    Trap { pc: u64, reason: &'static str },
    /// A wave ran past the instruction budget: the interpreter's stand-in for a hung wave.
    #[error("a wave ran {limit} instructions without ending (pc 0x{pc:x})")]
    InstructionLimit { pc: u64, limit: u64 },
    /// [`Dispatch::interrupt`](launch::Dispatch) stopped the workgroup between turns, at `pc` (a
    /// wave's that had not ended), for `reason`.
    #[error("stopped at pc 0x{pc:x}: {reason}")]
    Interrupted { pc: u64, reason: String },
    /// The dispatch asks for more than the agent has (scratch past what a wave's scratch can
    /// address, LDS past the workgroup's share) or the host could not allocate it: ROCr's
    /// `HSA_STATUS_ERROR_OUT_OF_RESOURCES`. Nothing ran.
    #[error("out of resources: {0}")]
    OutOfResources(String),
    /// The dispatch asked for the native tier ([`Tier::Native`](crate::native::Tier)) and it
    /// cannot run this kernel on this host: the reason.
    #[error("{0}")]
    NativeUnavailable(&'static str),
}
