//! The interpreter against real compiler output: every kernel of `tests/kernels/` (built by
//! `gen/test_kernels.sh` for gfx1100, gfx11-generic and gfx1030, and in wave64) runs through
//! `aqueduct_isa::run_workgroup` and its results are compared with a reference computed here on the
//! host, bit for bit for the exact operations and within the tolerances of [`APPROXIMATE`] for
//! the approximate ones. The gfx1030 objects run through the gfx10.3 path (`Isa::Gfx10_3`: each
//! instruction translated to gfx11's) against the same references.
//!
//! Every dispatch runs twice, on the interpreter and on the native tier (where the host and the
//! kernel allow it: wave32, AVX2), and the two must agree bit for bit on every buffer, the
//! instructions executed and any error (`try_run`).
//!
//! One test per kernel family; each runs every code object built for it. A kernel that reaches an instruction
//! the interpreter does not execute fails with the interpreter's error (`ExecError`), naming the
//! object, the kernel, the workgroup and the instruction.
//!
//! `tests/kernels/README.md` lists what each kernel reaches.

use std::cell::Cell;

use aqueduct_abi::packet::{FenceScope, PacketType};
use aqueduct_abi::{ImplicitKernargs, KernelDispatchPacket, PacketHeader};
use aqueduct_codeobject::CodeObject;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions, StandaloneImage};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

/// The code objects each test runs (`gfx1030` through the gfx10.3 path; `-wave64`: built with
/// `-mwavefrontsize64`).
const TARGETS: [&str; 5] = ["gfx1100", "gfx11-generic", "gfx1030", "gfx1030-wave64", "gfx1100-wave64"];
/// The wave64 targets.
const WAVE64_TARGETS: [&str; 3] = ["gfx1030-wave64", "gfx1100-wave64", "gfx1200-wave64"];
/// The gfx9 objects the tests of kernels that run whole through the gfx9 path (`Isa::Gfx9`:
/// each instruction translated to gfx11's) also run; wave64.
const GFX9_TARGETS: [&str; 2] = ["gfx906", "gfx90a"];
/// The gfx12 (RDNA4) objects the tests of kernels built for gfx12 also run, through the gfx12
/// path (`Isa::Gfx12`: each instruction translated to gfx11's); `-wave64` in wave64.
const GFX12_TARGETS: [&str; 4] = ["gfx1200", "gfx1201", "gfx12-generic", "gfx1200-wave64"];
/// The targets of RDNA3-only kernels (WMMA).
const GFX11_TARGETS: [&str; 2] = ["gfx1100", "gfx11-generic"];

/// Lanes in a target's waves.
fn wave_width(target: &str) -> u32 {
    if target.ends_with("-wave64") || target.starts_with("gfx9") { 64 } else { 32 }
}

/// The instruction set of a target's code.
fn isa_of(target: &str) -> Isa {
    if let Some(processor) = aqueduct_isa::gfx9::Processor::from_name(target) {
        Isa::Gfx9(processor)
    } else if target.starts_with("gfx103") {
        Isa::Gfx10_3
    } else if target.starts_with("gfx12") {
        Isa::Gfx12
    } else {
        Isa::Gfx11
    }
}

// ---------------------------------------------------------------------------------------------
// The harness: host buffers the kernel reaches by address, kernarg building from the metadata,
// and one function that runs a whole grid.
// ---------------------------------------------------------------------------------------------

/// Types whose every byte pattern is a value and that have no padding.
///
/// # Safety
/// Only for such types.
unsafe trait Plain: Copy + 'static {}
macro_rules! plain {
    ($($t:ty),*) => { $(unsafe impl Plain for $t {})* };
}
plain!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

fn as_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `Plain` types have no padding.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}

#[repr(C, align(256))]
#[derive(Clone, Copy)]
struct Chunk([u8; 256]);

/// Memory a kernel reads and writes by address: host bytes, 256-byte aligned, reached only
/// through raw pointers while a dispatch runs.
struct Buf {
    chunks: *mut Chunk,
    count: usize,
    len: usize,
}

impl Buf {
    fn zeroed(len: usize) -> Buf {
        Buf::filled(len, 0)
    }

    fn filled(len: usize, byte: u8) -> Buf {
        let count = len.div_ceil(256).max(1);
        let chunks = Box::into_raw(vec![Chunk([byte; 256]); count].into_boxed_slice()).cast::<Chunk>();
        Buf { chunks, count, len }
    }

    fn of<T: Plain>(values: &[T]) -> Buf {
        let mut buf = Buf::zeroed(size_of_val(values));
        buf.bytes_mut().copy_from_slice(as_bytes(values));
        buf
    }

    fn address(&self) -> u64 {
        self.chunks as u64
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `count` chunks live until drop; no dispatch runs while the slice lives (the
        // harness runs dispatches to completion before the test reads).
        unsafe { std::slice::from_raw_parts(self.chunks.cast::<u8>(), self.len) }
    }

    /// Overwrites the contents with `bytes` (between dispatches: no slice of it is alive).
    fn restore(&self, bytes: &[u8]) {
        assert_eq!(bytes.len(), self.len);
        // SAFETY: `count` chunks of 256 bytes hold at least `len`; nothing borrows them now.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.chunks.cast::<u8>(), self.len) };
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `bytes`, and `&mut self` is the only handle.
        unsafe { std::slice::from_raw_parts_mut(self.chunks.cast::<u8>(), self.len) }
    }

    /// The contents as `T`s.
    fn read<T: Plain>(&self) -> Vec<T> {
        let bytes = self.bytes();
        let size = size_of::<T>();
        // SAFETY: every byte pattern is a `T`; unaligned reads.
        (0..bytes.len() / size).map(|i| unsafe { bytes.as_ptr().add(i * size).cast::<T>().read_unaligned() }).collect()
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` of a boxed slice of `count` chunks.
        unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.chunks, self.count))) }
    }
}

/// One explicit kernel argument, in the kernel's parameter order.
#[derive(Clone, Copy)]
enum Arg<'a> {
    Buf(&'a Buf),
    U32(u32),
}

impl Arg<'_> {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::Buf(buf) => buf.address().to_le_bytes().to_vec(),
            Arg::U32(value) => value.to_le_bytes().to_vec(),
        }
    }
}

/// The start of [`realtime`]'s clock.
const CLOCK_START: u64 = 1 << 40;

thread_local! {
    /// This test thread's clock, reset before each tier's run of a dispatch, so both tiers read
    /// the same times.
    static CLOCK: Cell<u64> = const { Cell::new(CLOCK_START) };
}

/// The clock `s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME` reads: it advances on every read.
fn realtime() -> u64 {
    CLOCK.with(|clock| clock.replace(clock.get() + 100))
}

fn object_bytes(object: &str, target: &str) -> Vec<u8> {
    let path = format!("{}/tests/kernels/{object}_{target}.hsaco", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error} (run isa/gen/test_kernels.sh)"))
}

/// Runs kernel `symbol` of `tests/kernels/<object>_<target>.hsaco` over the whole `grid`
/// (work-items) in `workgroup`-sized groups, one workgroup after another, with `args` as its
/// explicit arguments. The kernarg segment follows the metadata's offsets; the code-object-v5
/// implicit arguments (block counts, group sizes, remainders, grid dims) follow the explicit
/// ones, as LLVM places them, whether or not the metadata lists them. The kernel reaches the
/// code object, the buffers among `args`, the kernargs and the dispatch packet, and nothing
/// else. Returns the instructions executed; panics with the interpreter's error.
fn run(object: &str, target: &str, symbol: &str, grid: [u32; 3], workgroup: [u16; 3], args: &[Arg]) -> u64 {
    try_run(object, target, symbol, grid, workgroup, args).unwrap_or_else(|error| panic!("{error}"))
}

/// [`run`], returning the interpreter's error (with the object, kernel and workgroup) instead.
fn try_run(
    object: &str,
    target: &str,
    symbol: &str,
    grid: [u32; 3],
    workgroup: [u16; 3],
    args: &[Arg],
) -> Result<u64, String> {
    let bytes = object_bytes(object, target);
    let code_object = CodeObject::parse(&bytes).unwrap_or_else(|error| panic!("{object}_{target}: {error}"));
    let metadata = code_object.kernel(symbol).unwrap_or_else(|error| panic!("{object}_{target}: {error}")).clone();
    let image = StandaloneImage::load(&bytes).unwrap_or_else(|error| panic!("{object}_{target}: {error}"));
    let kernel_object = image.kernel_object(symbol).expect("the kernel descriptor");

    // Explicit arguments at the metadata's offsets.
    let explicit: Vec<_> = metadata.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), args.len(), "{symbol} takes {} explicit arguments", explicit.len());
    let explicit_end = explicit.iter().map(|arg| arg.offset + arg.size).max().unwrap_or(0) as usize;
    let implicit_at = explicit_end.next_multiple_of(8);
    let size = (metadata.kernarg_segment_size as usize).max(implicit_at + size_of::<ImplicitKernargs>());
    let mut kernargs = Buf::zeroed(size);
    for (arg, value) in explicit.iter().zip(args) {
        let value = value.bytes();
        assert_eq!(value.len(), arg.size as usize, "{symbol}: argument {:?} is {} bytes", arg.name, arg.size);
        kernargs.bytes_mut()[arg.offset as usize..][..value.len()].copy_from_slice(&value);
    }
    let implicit = ImplicitKernargs::for_grid(grid, workgroup);
    // SAFETY: `ImplicitKernargs` is plain old data (repr(C), no padding: it is Pod).
    let implicit_bytes = unsafe {
        std::slice::from_raw_parts((&implicit as *const ImplicitKernargs).cast::<u8>(), size_of::<ImplicitKernargs>())
    };
    kernargs.bytes_mut()[implicit_at..][..implicit_bytes.len()].copy_from_slice(implicit_bytes);
    for arg in metadata.args.iter().filter(|arg| arg.value_kind.is_hidden()) {
        // Where LLVM puts the implicit block: the metadata, when it lists it, must agree.
        let expected = match arg.value_kind.as_str() {
            "hidden_block_count_x" => Some(0),
            "hidden_group_size_x" => Some(12),
            "hidden_remainder_x" => Some(18),
            "hidden_grid_dims" => Some(64),
            _ => None,
        };
        if let Some(offset) = expected {
            assert_eq!(
                arg.offset as usize,
                implicit_at + offset,
                "{symbol}: {} is not where assumed",
                arg.value_kind.as_str()
            );
        }
    }

    let packet = Box::new(KernelDispatchPacket {
        header: PacketHeader::new(PacketType::KernelDispatch, true, FenceScope::System, FenceScope::System),
        setup: 3,
        workgroup_size_x: workgroup[0],
        workgroup_size_y: workgroup[1],
        workgroup_size_z: workgroup[2],
        reserved0: 0,
        grid_size_x: grid[0],
        grid_size_y: grid[1],
        grid_size_z: grid[2],
        private_segment_size: metadata.private_segment_fixed_size,
        group_segment_size: metadata.group_segment_fixed_size,
        kernel_object,
        kernarg_address: kernargs.address(),
        reserved2: 0,
        completion_signal: 0,
    });
    let packet_address = &*packet as *const KernelDispatchPacket as u64;
    let mut regions = vec![image.range(), (kernargs.address(), size as u64), (packet_address, 64)];
    regions.extend(args.iter().filter_map(|arg| match arg {
        Arg::Buf(buf) => Some((buf.address(), buf.len as u64)),
        _ => None,
    }));
    let memory = Regions(regions);
    let fail =
        |what: &str, error: ExecError| format!("{object}_{target}.hsaco `{symbol}` {what}: {error}\n  ({error:?})");
    let kernel = DecodedKernel::load_for(&memory, kernel_object, isa_of(target))
        .map_err(|error| fail("does not load", error))?;
    let execute = |tier: Tier| -> Result<u64, String> {
        CLOCK.with(|clock| clock.set(CLOCK_START));
        let dispatch = Dispatch {
            packet_address,
            kernarg_address: kernargs.address(),
            group_segment_size: metadata.group_segment_fixed_size,
            private_segment_size: metadata.private_segment_fixed_size,
            instruction_limit: 1 << 26,
            realtime,
            tier,
            ..Dispatch::new(&kernel, grid, workgroup)
        };
        let groups: [u32; 3] = std::array::from_fn(|axis| grid[axis].div_ceil(u32::from(workgroup[axis])));
        let mut lds = Vec::new();
        let mut executed = 0;
        for z in 0..groups[2] {
            for y in 0..groups[1] {
                for x in 0..groups[0] {
                    executed += run_workgroup(&dispatch, &memory, [x, y, z], &mut lds)
                        .map_err(|error| fail(&format!("failed in workgroup [{x}, {y}, {z}]"), error))?;
                }
            }
        }
        Ok(executed)
    };
    let buffers: Vec<&Buf> =
        args.iter().filter_map(|arg| if let Arg::Buf(buf) = arg { Some(*buf) } else { None }).collect();
    let before: Vec<Vec<u8>> = buffers.iter().map(|buf| buf.bytes().to_vec()).collect();
    let interpreted = execute(Tier::Interpreter);
    if native::unavailable().is_none() {
        // The same dispatch on the native tier, from the same memory: it must agree exactly.
        let expected: Vec<Vec<u8>> = buffers.iter().map(|buf| buf.bytes().to_vec()).collect();
        for (buf, bytes) in buffers.iter().zip(&before) {
            buf.restore(bytes);
        }
        let compiled = execute(Tier::Native);
        if compiled != interpreted {
            return Err(format!(
                "{object}_{target}.hsaco `{symbol}`: the native tier returned {compiled:?}, the interpreter {interpreted:?}"
            ));
        }
        for (index, (buf, expected)) in buffers.iter().zip(&expected).enumerate() {
            if let Some(at) = buf.bytes().iter().zip(expected).position(|(native, interpreted)| native != interpreted) {
                return Err(format!(
                    "{object}_{target}.hsaco `{symbol}`: buffer {index} differs at byte {at}: native {:#04x}, interpreter {:#04x}",
                    buf.bytes()[at],
                    expected[at]
                ));
            }
        }
    }
    drop(packet);
    interpreted
}

/// A small deterministic generator for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    /// An integer in `[low, high]`.
    fn int(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next() % (high - low + 1) as u64) as i64
    }

    /// A float in `[low, high)`.
    fn float(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// `items` extended to `count` by `more`.
fn padded<T: Copy>(items: &[T], count: usize, mut more: impl FnMut(usize) -> T) -> Vec<T> {
    let mut all = items.to_vec();
    all.truncate(count);
    while all.len() < count {
        all.push(more(all.len()));
    }
    all
}

/// Mismatches collected over a whole kernel's results, reported together (the first few in
/// full) so that one run shows every op that is wrong.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        if !ok {
            self.0.push(message());
        }
    }

    fn assert_none(self, what: &str) {
        if !self.0.is_empty() {
            let shown = self.0.iter().take(24).map(String::as_str).collect::<Vec<_>>().join("\n  ");
            panic!("{what}: {} mismatches:\n  {shown}{}", self.0.len(), if self.0.len() > 24 { "\n  ..." } else { "" });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reference arithmetic the host has no type for: f16 and bf16, correctly rounded.
// ---------------------------------------------------------------------------------------------

mod soft {
    /// A binary floating-point format: fraction bits, the exponent of its smallest subnormal
    /// and its all-ones biased exponent.
    #[derive(Clone, Copy)]
    pub struct Format {
        pub fraction: u32,
        pub min_exp: i32,
        pub max_biased: i32,
    }

    pub const F16: Format = Format { fraction: 10, min_exp: -24, max_biased: 31 };
    pub const BF16: Format = Format { fraction: 7, min_exp: -133, max_biased: 255 };
    pub const F32: Format = Format { fraction: 23, min_exp: -149, max_biased: 255 };
    pub const F64: Format = Format { fraction: 52, min_exp: -1074, max_biased: 2047 };

    impl Format {
        /// The width in bits.
        pub fn bits(self) -> u32 {
            self.fraction
                + 1
                + match self.max_biased {
                    31 => 5,
                    255 => 8,
                    _ => 11,
                }
        }

        fn sign(self) -> u64 {
            1 << (self.bits() - 1)
        }

        pub fn infinity(self, negative: bool) -> u64 {
            (self.max_biased as u64) << self.fraction | if negative { self.sign() } else { 0 }
        }

        pub fn nan(self) -> u64 {
            self.infinity(false) | 1 << (self.fraction - 1)
        }

        pub fn is_nan(self, bits: u64) -> bool {
            let exponent = (bits >> self.fraction) & self.max_biased as u64;
            exponent == self.max_biased as u64 && bits & ((1 << self.fraction) - 1) != 0
        }

        pub fn is_infinite(self, bits: u64) -> bool {
            let exponent = (bits >> self.fraction) & self.max_biased as u64;
            exponent == self.max_biased as u64 && bits & ((1 << self.fraction) - 1) == 0
        }

        /// A finite value as (negative, magnitude, exponent): ±magnitude × 2^exponent.
        pub fn parts(self, bits: u64) -> (bool, u128, i32) {
            let negative = bits & self.sign() != 0;
            let exponent = ((bits >> self.fraction) & self.max_biased as u64) as i32;
            let fraction = (bits & ((1 << self.fraction) - 1)) as u128;
            if exponent == 0 {
                (negative, fraction, self.min_exp)
            } else {
                (negative, fraction | 1 << self.fraction, self.min_exp + exponent - 1)
            }
        }

        /// ±magnitude × 2^exponent rounded to nearest even (overflow to infinity; zero keeps
        /// the sign given).
        pub fn round(self, negative: bool, magnitude: u128, exponent: i32) -> u64 {
            assert!(magnitude < 1 << 126);
            let sign = if negative { self.sign() } else { 0 };
            if magnitude == 0 {
                return sign;
            }
            let length = 128 - magnitude.leading_zeros() as i32;
            let mut quantum = (length - 1 + exponent - self.fraction as i32).max(self.min_exp);
            let shift = quantum - exponent;
            let mut rounded = if shift <= 0 {
                magnitude << -shift
            } else if shift >= 127 {
                0
            } else {
                let kept = magnitude >> shift;
                let rest = magnitude & ((1 << shift) - 1);
                let half = 1u128 << (shift - 1);
                if rest > half || (rest == half && kept & 1 == 1) { kept + 1 } else { kept }
            };
            if rounded >> (self.fraction + 1) != 0 {
                rounded >>= 1;
                quantum += 1;
            }
            if rounded >> self.fraction == 0 {
                return sign | rounded as u64; // subnormal or zero
            }
            let biased = quantum - self.min_exp + 1;
            if biased >= self.max_biased {
                return self.infinity(negative);
            }
            sign | (biased as u64) << self.fraction | (rounded as u64 & ((1 << self.fraction) - 1))
        }

        /// An f64 rounded to this format (NaN to the default NaN).
        pub fn encode(self, value: f64) -> u64 {
            let bits = value.to_bits();
            if value.is_nan() {
                return self.nan();
            }
            if value.is_infinite() {
                return self.infinity(value < 0.0);
            }
            let (negative, magnitude, exponent) = F64.parts(bits);
            self.round(negative, magnitude, exponent)
        }

        /// A value of this format as an f64 (exact for the formats here).
        pub fn to_f64(self, bits: u64) -> f64 {
            if self.is_nan(bits) {
                return f64::NAN;
            }
            let (negative, magnitude, exponent) = self.parts(bits);
            if self.is_infinite(bits) {
                return if negative { f64::NEG_INFINITY } else { f64::INFINITY };
            }
            let value = magnitude as f64 * (exponent as f64).exp2();
            if negative { -value } else { value }
        }

        /// a × b + c with one rounding.
        pub fn fma(self, a: u64, b: u64, c: u64) -> u64 {
            if self.is_nan(a) || self.is_nan(b) || self.is_nan(c) {
                return self.nan();
            }
            let (na, ma, ea) = self.parts(a);
            let (nb, mb, eb) = self.parts(b);
            let (nc, mc, ec) = self.parts(c);
            let product_negative = na != nb;
            let product_zero = ma == 0 || mb == 0;
            let product_infinite = self.is_infinite(a) || self.is_infinite(b);
            if product_infinite {
                if product_zero && !(self.is_infinite(a) && self.is_infinite(b)) {
                    return self.nan(); // inf × 0
                }
                if self.is_infinite(c) && nc != product_negative {
                    return self.nan(); // inf − inf
                }
                return self.infinity(product_negative);
            }
            if self.is_infinite(c) {
                return c;
            }
            let product_exp = ea + eb;
            let common = product_exp.min(ec);
            let p = (ma * mb) as i128 * (1i128 << (product_exp - common));
            let p = if product_negative { -p } else { p };
            let q = mc as i128 * (1i128 << (ec - common));
            let q = if nc { -q } else { q };
            let sum = p + q;
            if sum == 0 {
                // An exact zero: −0 only when both addends are −0 (round to nearest).
                let negative = product_zero && mc == 0 && product_negative && nc;
                return if negative { self.sign() } else { 0 };
            }
            self.round(sum < 0, sum.unsigned_abs(), common)
        }
    }

    pub fn f16(value: f64) -> u16 {
        F16.encode(value) as u16
    }

    pub fn f16_value(bits: u16) -> f64 {
        F16.to_f64(u64::from(bits))
    }

    pub fn bf16(value: f64) -> u16 {
        BF16.encode(value) as u16
    }

    pub fn bf16_value(bits: u16) -> f64 {
        BF16.to_f64(u64::from(bits))
    }

    pub fn is_nan16(bits: u16) -> bool {
        F16.is_nan(u64::from(bits))
    }

    /// An f16 operation done exactly in f64 (exact for +, −, × of f16s), rounded once.
    pub fn f16_op(a: u16, b: u16, op: impl Fn(f64, f64) -> f64) -> u16 {
        f16(op(f16_value(a), f16_value(b)))
    }

    pub fn f16_fma(a: u16, b: u16, c: u16) -> u16 {
        F16.fma(u64::from(a), u64::from(b), u64::from(c)) as u16
    }
}

use soft::{bf16, bf16_value, f16, f16_value, is_nan16};

/// Bit equality, any NaN matching any NaN.
fn same_f16(got: u16, want: u16) -> bool {
    got == want || (is_nan16(got) && is_nan16(want))
}

fn same_f32(got: u32, want: u32) -> bool {
    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan())
}

// ---------------------------------------------------------------------------------------------
// DPP and the other cross-lane moves.
// ---------------------------------------------------------------------------------------------

mod lanes {
    pub type Wave = [u32; 32];

    pub const fn quad_perm(a: u32, b: u32, c: u32, d: u32) -> u32 {
        a | b << 2 | c << 4 | d << 6
    }

    /// DPP16 (`v_mov_b32_dpp` and the VOP DPP forms): `control` as the DppCtrl field, lanes in
    /// disabled rows or banks keep `old`, an invalid source lane gives 0 with `bound_ctrl` and
    /// leaves `old` without it.
    pub fn dpp16(src: &Wave, old: &Wave, control: u32, row_mask: u32, bank_mask: u32, bound_ctrl: bool) -> Wave {
        let mut out = *old;
        for (lane, out_lane) in out.iter_mut().enumerate() {
            let (row, bank) = (lane / 16, lane % 16 / 4);
            if row_mask >> row & 1 == 0 || bank_mask >> bank & 1 == 0 {
                continue;
            }
            let (base, index) = (lane & !15, lane % 16);
            let n = (control & 15) as usize;
            let source = match control {
                0x000..=0x0FF => Some((lane & !3) + (control as usize >> (2 * (lane & 3)) & 3)),
                0x101..=0x10F => (index + n < 16).then_some(base + index + n), // row_shl
                0x111..=0x11F => index.checked_sub(n).map(|from| base + from), // row_shr
                0x121..=0x12F => Some(base + (index + 16 - n) % 16),           // row_ror
                0x140 => Some(base + 15 - index),                              // row_mirror
                0x141 => Some((lane & !7) + 7 - (lane & 7)),                   // row_half_mirror
                0x150..=0x15F => Some(base + n),                               // row_share
                0x160..=0x16F => Some(base + (index ^ n)),                     // row_xmask
                _ => panic!("DPP control {control:#x} is not modelled"),
            };
            match source {
                Some(from) => *out_lane = src[from],
                None if bound_ctrl => *out_lane = 0,
                None => {}
            }
        }
        out
    }

    pub const fn dpp8_selects(s: [u32; 8]) -> u32 {
        s[0] | s[1] << 3 | s[2] << 6 | s[3] << 9 | s[4] << 12 | s[5] << 15 | s[6] << 18 | s[7] << 21
    }

    /// DPP8: lane i of each group of eight reads lane `selects[i]` of its group.
    pub fn dpp8(src: &Wave, selects: u32) -> Wave {
        std::array::from_fn(|lane| src[(lane & !7) + (selects as usize >> (3 * (lane & 7)) & 7)])
    }

    /// v_permlane16_b32 (`cross` false) and v_permlanex16_b32 (`cross` true), every lane active.
    pub fn permlane16(src: &Wave, select_lo: u32, select_hi: u32, cross: bool) -> Wave {
        std::array::from_fn(|lane| {
            let index = lane % 16;
            let select = if index < 8 { select_lo >> (4 * index) } else { select_hi >> (4 * (index - 8)) } & 15;
            let row = if cross { (lane & !15) ^ 16 } else { lane & !15 };
            src[row + select as usize]
        })
    }

    /// ds_bpermute_b32 in a wave of `width` lanes whose first 32 run: lane i reads lane
    /// address[i] / 4 (mod `width`), and 0 from a lane that is not running.
    pub fn bpermute(src: &Wave, address: &Wave, width: u32) -> Wave {
        std::array::from_fn(|lane| src.get((address[lane] / 4 % width) as usize).copied().unwrap_or(0))
    }

    /// ds_permute_b32: lane i writes lane address[i] / 4 (mod `width`); the highest writer wins
    /// and lanes nobody writes read 0.
    pub fn permute(src: &Wave, address: &Wave, width: u32) -> Wave {
        let mut out = [0; 32];
        for lane in 0..32 {
            if let Some(target) = out.get_mut((address[lane] / 4 % width) as usize) {
                *target = src[lane];
            }
        }
        out
    }

    /// ds_swizzle_b32 with `offset`: quad-perm mode (bit 15) or bitmask mode (and, or, xor).
    pub fn swizzle(src: &Wave, offset: u32) -> Wave {
        std::array::from_fn(|lane| {
            if offset & 0x8000 != 0 {
                src[(lane & !3) + (offset as usize >> (2 * (lane & 3)) & 3)]
            } else {
                let (and, or, xor) = (offset & 31, offset >> 5 & 31, offset >> 10 & 31);
                src[(((lane as u32 & and) | or) ^ xor) as usize]
            }
        })
    }

    pub const fn swizzle_mask(and: u32, or: u32, xor: u32) -> u32 {
        and | or << 5 | xor << 10
    }
}

#[test]
fn dpp_row_shifts_quad_perms_dpp8_permlanes_permutes_and_swizzles_match_the_host() {
    use lanes::*;
    let v: Wave =
        std::array::from_fn(|lane| (0x0100_0000 * (lane as u32 + 1)) ^ (lane as u32).wrapping_mul(0x9E37_79B9));
    let old: Wave = std::array::from_fn(|lane| 0xDEAD_0000 | lane as u32);
    let by_lane = |f: fn(u32) -> u32| -> Wave { std::array::from_fn(|lane| f(lane as u32)) };
    // Pattern k of `dpp_patterns`, in its order, for a wave of `width` lanes (32 work-items run:
    // in wave64 the lane exchanges reach 32 lanes that are not running).
    let expected = |width: u32| -> Vec<(&str, Wave)> {
        vec![
            ("quad_perm:[3,2,1,0]", dpp16(&v, &old, quad_perm(3, 2, 1, 0), 0xF, 0xF, false)),
            ("quad_perm:[1,1,0,2]", dpp16(&v, &old, quad_perm(1, 1, 0, 2), 0xF, 0xF, false)),
            ("row_shr:1", dpp16(&v, &old, 0x111, 0xF, 0xF, false)),
            ("row_shr:3 bound_ctrl", dpp16(&v, &old, 0x113, 0xF, 0xF, true)),
            ("row_shl:2", dpp16(&v, &old, 0x102, 0xF, 0xF, false)),
            ("row_ror:5", dpp16(&v, &old, 0x125, 0xF, 0xF, false)),
            ("row_mirror", dpp16(&v, &old, 0x140, 0xF, 0xF, false)),
            ("row_half_mirror", dpp16(&v, &old, 0x141, 0xF, 0xF, false)),
            ("row_share:5", dpp16(&v, &old, 0x155, 0xF, 0xF, false)),
            ("row_xmask:3", dpp16(&v, &old, 0x163, 0xF, 0xF, false)),
            ("row_shr:1 row_mask:0x1 bank_mask:0xa", dpp16(&v, &old, 0x111, 0x1, 0xA, false)),
            ("row_ror:15 row_mask:0x2 bank_mask:0x5 bound_ctrl", dpp16(&v, &old, 0x12F, 0x2, 0x5, true)),
            ("mov_dpp row_shl:1 bound_ctrl", dpp16(&v, &[0; 32], 0x101, 0xF, 0xF, true)),
            ("dpp8:[7,6,5,4,3,2,1,0]", dpp8(&v, dpp8_selects([7, 6, 5, 4, 3, 2, 1, 0]))),
            ("dpp8:[1,0,3,2,5,4,7,7]", dpp8(&v, dpp8_selects([1, 0, 3, 2, 5, 4, 7, 7]))),
            ("permlane16 0x01234567 0x89abcdef", permlane16(&v, 0x0123_4567, 0x89AB_CDEF, false)),
            ("permlane16 0x33333333 0xfedcba98", permlane16(&v, 0x3333_3333, 0xFEDC_BA98, false)),
            ("permlanex16 0x76543210 0xfedcba98", permlane16(&v, 0x7654_3210, 0xFEDC_BA98, true)),
            ("permlanex16 0xffffffff 0x0f0f0f0f", permlane16(&v, 0xFFFF_FFFF, 0x0F0F_0F0F, true)),
            ("ds_bpermute (7 lane + 3) % 32", bpermute(&v, &by_lane(|l| (l * 7 + 3) % 32 * 4), width)),
            ("ds_bpermute lane + 33 (offset:132)", bpermute(&v, &by_lane(|l| (l + 33) * 4), width)),
            ("ds_permute (5 lane + 1) % 32", permute(&v, &by_lane(|l| (l * 5 + 1) % 32 * 4), width)),
            ("ds_permute lane / 2 (collisions)", permute(&v, &by_lane(|l| l / 2 * 4), width)),
            ("ds_swizzle QUAD_PERM 2,3,0,1", swizzle(&v, 0x8000 | quad_perm(2, 3, 0, 1))),
            ("ds_swizzle QUAD_PERM 0,0,3,1", swizzle(&v, 0x8000 | quad_perm(0, 0, 3, 1))),
            ("ds_swizzle SWAP 16", swizzle(&v, swizzle_mask(0x1F, 0, 0x10))),
            ("ds_swizzle BROADCAST 8, 3", swizzle(&v, swizzle_mask(0x18, 3, 0))),
            ("ds_swizzle REVERSE 8", swizzle(&v, swizzle_mask(0x1F, 0, 7))),
            ("ds_swizzle BITMASK_PERM 1pppi", swizzle(&v, swizzle_mask(0x0F, 0x10, 1))),
        ]
    };
    for target in TARGETS.into_iter().chain(GFX12_TARGETS) {
        let expected = expected(wave_width(target));
        let out = Buf::zeroed(expected.len() * 32 * 4);
        let input = Buf::of(&v);
        run("dpp", target, "dpp_patterns", [32, 1, 1], [32, 1, 1], &[Arg::Buf(&out), Arg::Buf(&input)]);
        let got: Vec<u32> = out.read();
        let mut failures = Failures::default();
        for (k, (name, want)) in expected.iter().enumerate() {
            let got = &got[k * 32..k * 32 + 32];
            failures.check(got == want, || {
                format!("pattern {k} ({name}), lanes 0..32:\n    got  {got:08x?}\n    want {want:08x?}")
            });
        }
        failures.assert_none(&format!("{target}: dpp_patterns (input {v:08x?})"));
    }
}

#[test]
fn dpp_scans_butterflies_and_bpermute_reductions_match_the_host() {
    let mut rng = Rng(0x00D0_0D5C_A115);
    let n = 128;
    let ints: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let floats: Vec<f32> = (0..n).map(|_| rng.int(-1000, 1000) as f32).collect();
    let signed: Vec<i32> = (0..n).map(|_| rng.u32() as i32).collect();
    let wave = |i: usize| i / 32 * 32..i / 32 * 32 + 32;
    for target in TARGETS.into_iter().chain(GFX12_TARGETS) {
        // Inclusive prefix sums within each wave (two workgroups of 64: the kernel sizes its
        // index with __builtin_amdgcn_workgroup_size_x, an implicit argument).
        let (out_u, out_f) = (Buf::zeroed(n * 4), Buf::zeroed(n * 4));
        let (in_u, in_f) = (Buf::of(&ints), Buf::of(&floats));
        let args = [Arg::Buf(&out_u), Arg::Buf(&out_f), Arg::Buf(&in_u), Arg::Buf(&in_f)];
        run("dpp", target, "wave_prefix_sums", [n as u32, 1, 1], [64, 1, 1], &args);
        let (got_u, got_f): (Vec<u32>, Vec<f32>) = (out_u.read(), out_f.read());
        for i in 0..n {
            let range = wave(i).start..=i;
            let want_u = ints[range.clone()].iter().fold(0u32, |sum, &x| sum.wrapping_add(x));
            let want_f: f32 = floats[range].iter().sum();
            assert_eq!(got_u[i], want_u, "{target}: wave_prefix_sums u32 at work-item {i}");
            assert_eq!(got_f[i], want_f, "{target}: wave_prefix_sums f32 at work-item {i}");
        }

        // Butterfly reductions: every lane holds its wave's result.
        let (out_max, out_min, out_sum) = (Buf::zeroed(n * 4), Buf::zeroed(n * 4), Buf::zeroed(n * 4));
        let (in_i, in_f) = (Buf::of(&signed), Buf::of(&floats));
        let args = [Arg::Buf(&out_max), Arg::Buf(&out_min), Arg::Buf(&out_sum), Arg::Buf(&in_i), Arg::Buf(&in_f)];
        run("dpp", target, "wave_butterfly_reductions", [n as u32, 1, 1], [64, 1, 1], &args);
        let (got_max, got_min, got_sum): (Vec<i32>, Vec<u32>, Vec<f32>) =
            (out_max.read(), out_min.read(), out_sum.read());
        for i in 0..n {
            let max = signed[wave(i)].iter().max().copied().unwrap();
            let min = signed[wave(i)].iter().map(|&x| x as u32 ^ 0x8000_0000).min().unwrap();
            let sum: f32 = floats[wave(i)].iter().sum();
            assert_eq!(got_max[i], max, "{target}: wave_butterfly_reductions max at work-item {i}");
            assert_eq!(got_min[i], min, "{target}: wave_butterfly_reductions min at work-item {i}");
            assert_eq!(got_sum[i], sum, "{target}: wave_butterfly_reductions sum at work-item {i}");
        }

        // The shuffle-xor sum over ds_bpermute, and a DPP8 rotation added to the value. The
        // kernel's lane ids are 0-31 (`lane & 31`): a wave32 ladder, which wave64 waves' high
        // halves would run on the low half's lanes.
        if wave_width(target) == 64 {
            continue;
        }
        let (out, out_rot) = (Buf::zeroed(n * 4), Buf::zeroed(n * 4));
        let (in_f, in_u) = (Buf::of(&floats), Buf::of(&ints));
        let args = [Arg::Buf(&out), Arg::Buf(&out_rot), Arg::Buf(&in_f), Arg::Buf(&in_u)];
        run("dpp", target, "wave_sum_bpermute", [n as u32, 1, 1], [64, 1, 1], &args);
        let (got, got_rot): (Vec<f32>, Vec<u32>) = (out.read(), out_rot.read());
        for i in 0..n {
            let sum: f32 = floats[wave(i)].iter().sum();
            assert_eq!(got[i], sum, "{target}: wave_sum_bpermute at work-item {i}");
            let rotated = ints[(i & !7) + (i + 1) % 8];
            assert_eq!(got_rot[i], ints[i].wrapping_add(rotated), "{target}: dpp8 rotation at work-item {i}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// f16, packed 16-bit, dot products.
// ---------------------------------------------------------------------------------------------

const F16_QNAN: u16 = 0x7E00;

/// fminnum/fmaxnum as the kernels compile them (IEEE mode, quiet NaNs): a NaN operand yields the
/// other one.
fn f16_min_max(a: u16, b: u16, max: bool) -> u16 {
    match (is_nan16(a), is_nan16(b)) {
        (true, true) => F16_QNAN,
        (true, false) => b,
        (false, true) => a,
        _ => {
            let (x, y) = (f16_value(a), f16_value(b));
            if (x < y) != max { a } else { b }
        }
    }
}

/// f16 inputs with no pair of opposite zeros (min and max may return either) and quiet NaNs only.
fn f16_inputs(rng: &mut Rng, curated: &[u16], count: usize) -> Vec<u16> {
    padded(curated, count, |_| {
        let bits = rng.u32() as u16;
        if is_nan16(bits) { F16_QNAN } else { bits & 0xBFFF } // keep magnitudes below 2
    })
}

fn opposite_zeros(a: u16, b: u16) -> bool {
    a & 0x7FFF == 0 && b & 0x7FFF == 0 && a != b
}

#[test]
fn f16_scalar_packed_and_dot_product_math_matches_the_host() {
    let n = 64;
    let mut rng = Rng(0x000F_1616);
    // Curated (a, b, c): rounding of sums, overflow, underflow, fused vs. unfused, specials.
    let curated: [(u16, u16, u16); 16] = [
        (0x3C00, 0x1200, 0x0000), // 1 + 1.5 × 2^-11: rounds up
        (0x7BFF, 0x7BFF, 0xFBFF), // overflow to infinity
        (0x5C00, 0x5C00, 0xFBFF), // 256 × 256 − 65504 = 32 when fused
        (0x0001, 0x3800, 0x0000), // 2^-24 × 0.5: a tie, to 0
        (0x03FF, 0x0001, 0x8000), // subnormal sums
        (0x7C00, 0xFC00, 0x3C00), // inf − inf
        (0x7C00, 0x0000, 0x3C00), // inf × 0
        (F16_QNAN, 0x3C00, 0x4000),
        (0x8000, 0x8000, 0x8000), // −0
        (0x3C01, 0x3C01, 0xBC02), // (1 + 2^-10)^2 − (1 + 2^-9): 2^-20 only when fused
        (0x4200, 0x4500, 0x4700),
        (0xC100, 0x4400, 0x3400),
        (0x7BFF, 0x4000, 0xFBFF), // 65504 × 2 − 65504 fused
        (0x3C00, 0xBC00, 0x0000), // 1 − 1 = +0
        (0x3555, 0x3555, 0x3555),
        (0x5640, 0x211F, 0xBC00),
    ];
    let a = f16_inputs(&mut rng, &curated.map(|t| t.0), n);
    let mut b = f16_inputs(&mut rng, &curated.map(|t| t.1), n);
    let c = f16_inputs(&mut rng, &curated.map(|t| t.2), n);
    for i in 0..n {
        if opposite_zeros(a[i], b[i]) {
            b[i] = 0x3C00;
        }
    }
    let f32_inputs: Vec<f32> = padded(
        &[
            1.0,
            65504.0,
            65519.99,
            65520.0,
            70000.0,
            -70000.0,
            1e-8,
            3e-8,
            2f32.powi(-25),
            2f32.powi(-25) * 1.000_001,
            0.1,
            1.0 / 3.0,
            f32::NAN,
            f32::INFINITY,
            -0.0,
            6.1e-5,
            1.0 + 2f32.powi(-11),
            1.0 + 3.0 * 2f32.powi(-11),
            3.0e38,
            -1.5e-40,
        ],
        n,
        |_| (rng.float(-1.0, 1.0) * rng.float(-30.0, 30.0).exp2()) as f32,
    );
    let to_i16: Vec<u16> =
        padded(&[0.5, -0.5, 1.5, -1.5, -32768.0, 32752.0, 2047.0, -0.75, 1000.75], n, |_| rng.float(-32000.0, 32000.0))
            .iter()
            .map(|&x| f16(x))
            .collect();
    let to_u16: Vec<u16> = padded(&[0.0, 0.99, 65504.0, 1000.75, -0.5, 1.0], n, |_| rng.float(0.0, 65504.0))
        .iter()
        .map(|&x| f16(x))
        .collect();
    let from_i16: Vec<i16> =
        padded(&[0, 1, -1, 2049, 2051, -2051, 32767, -32768, 4097], n, |_| rng.int(-32768, 32767) as i16);
    let from_u16: Vec<u16> = padded(&[0, 1, 65535, 65519, 65520, 4097, 2049], n, |_| rng.int(0, 65535) as u16);

    // The scalar reference, result k of work-item i.
    let scalar16 = |i: usize| -> [u16; 15] {
        let (x, y, z) = (a[i], b[i], c[i]);
        let unary = |h: u16, f: fn(f64) -> f64| if is_nan16(h) { F16_QNAN } else { f16(f(f16_value(h))) };
        [
            soft::f16_op(x, y, |p, q| p + q),
            soft::f16_op(x, y, |p, q| p - q),
            soft::f16_op(x, y, |p, q| p * q),
            soft::f16_fma(x, y, z),
            f16_min_max(x, y, false),
            f16_min_max(x, y, true),
            f16(f64::from(f32_inputs[i])),
            f16_value(to_i16[i]).trunc() as i16 as u16,
            f16_value(to_u16[i]).trunc().max(0.0) as u16,
            f16(f64::from(from_i16[i])),
            f16(f64::from(from_u16[i])),
            unary(x, f64::floor),
            unary(x, f64::ceil),
            unary(y, f64::trunc),
            unary(z, f64::round_ties_even),
        ]
    };
    let scalar32 = |i: usize| -> [u32; 4] {
        let (x, y, z) = (f16_value(a[i]), f16_value(b[i]), f16_value(c[i]));
        let bf = bf16(f64::from(f32_inputs[i]));
        [
            (x as f32).to_bits(),
            u32::from(x < y) | u32::from(x == y) << 1 | u32::from(x.is_nan()) << 2 | u32::from(x >= z) << 3,
            u32::from(bf),
            (bf16_value(bf) as f32 * 2.0).to_bits(),
        ]
    };

    // Packed inputs: lanes pair differently chosen scalars.
    let pack = |lo: u16, hi: u16| u32::from(lo) | u32::from(hi) << 16;
    let pa: Vec<u32> = (0..n).map(|i| pack(a[i], a[(i + 5) % n])).collect();
    let mut pb: Vec<u32> = (0..n).map(|i| pack(b[i], b[(i + 9) % n])).collect();
    let pc: Vec<u32> = (0..n).map(|i| pack(c[i], c[(i + 3) % n])).collect();
    for i in 0..n {
        if opposite_zeros(pa[i] as u16, pb[i] as u16) || opposite_zeros((pa[i] >> 16) as u16, (pb[i] >> 16) as u16) {
            pb[i] = pack(0x3C00, 0x4000);
        }
    }
    let halves = |w: u32| (w as u16, (w >> 16) as u16);
    let packed = |i: usize| -> [u32; 8] {
        let ((xl, xh), (yl, yh), (zl, zh)) = (halves(pa[i]), halves(pb[i]), halves(pc[i]));
        let both = |f: &dyn Fn(u16, u16, u16, u16, u16, u16) -> (u16, u16)| {
            let (lo, hi) = f(xl, xh, yl, yh, zl, zh);
            pack(lo, hi)
        };
        let neg = |h: u16| h ^ 0x8000;
        [
            both(&|xl, xh, yl, yh, _, _| (soft::f16_op(xl, yl, |p, q| p + q), soft::f16_op(xh, yh, |p, q| p + q))),
            both(&|xl, xh, yl, yh, _, _| (soft::f16_op(xl, yl, |p, q| p - q), soft::f16_op(xh, yh, |p, q| p - q))),
            both(&|xl, xh, yl, yh, _, _| (soft::f16_op(xl, yl, |p, q| p * q), soft::f16_op(xh, yh, |p, q| p * q))),
            both(&|xl, xh, yl, yh, zl, zh| (soft::f16_fma(xl, yl, zl), soft::f16_fma(xh, yh, zh))),
            both(&|xl, xh, yl, yh, _, _| (f16_min_max(xl, yl, false), f16_min_max(xh, yh, false))),
            both(&|xl, xh, yl, yh, _, _| (f16_min_max(xl, yl, true), f16_min_max(xh, yh, true))),
            // fma(-x, y.yx, z)
            both(&|xl, xh, yl, yh, zl, zh| (soft::f16_fma(neg(xl), yh, zl), soft::f16_fma(neg(xh), yl, zh))),
            // fma(x.xx, y, -z.yy)
            both(&|xl, _, yl, yh, _, zh| (soft::f16_fma(xl, yl, neg(zh)), soft::f16_fma(xl, yh, neg(zh)))),
        ]
    };

    // Packed 16-bit integers.
    let ia: Vec<u32> = padded(&[0x7FFF_8000, 0xFFFF_0001, 0x1234_ABCD], n, |_| rng.u32());
    let ib: Vec<u32> = padded(&[0x0001_0001, 0x000F_0010, 0x8000_7FFF], n, |_| rng.u32());
    let ic: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let packed_i16 = |i: usize| -> [u32; 10] {
        let lanes = |w: u32| [w as u16, (w >> 16) as u16];
        let (x, y, z) = (lanes(ia[i]), lanes(ib[i]), lanes(ic[i]));
        let op = |f: &dyn Fn(u16, u16, u16) -> u16| pack(f(x[0], y[0], z[0]), f(x[1], y[1], z[1]));
        [
            op(&|x, y, _| x.wrapping_add(y)),
            op(&|x, y, _| x.wrapping_sub(y)),
            op(&|x, y, _| x.wrapping_mul(y)),
            op(&|x, y, z| x.wrapping_mul(y).wrapping_add(z)),
            op(&|x, y, _| x << (y & 15)),
            op(&|x, y, _| ((x as i16) >> (y & 15)) as u16),
            op(&|x, y, _| x >> (y & 15)),
            op(&|x, y, _| (x as i16).min(y as i16) as u16 ^ x.max(y)),
            op(&|x, y, _| (x as i16).max(y as i16) as u16),
            op(&|x, y, _| x.min(y)),
        ]
    };

    // Dot products: inputs on coarse grids, so every partial sum is exact in the result format
    // and the result does not depend on the unit's internal rounding (which the ISA guide does
    // not state).
    let dots_in: Vec<[u32; 10]> = (0..n)
        .map(|i| {
            let mut h = || f16(rng.int(-8, 8) as f64 / 4.0);
            let (ha, hb) = (pack(h(), h()), pack(h(), h()));
            let mut g = || bf16(rng.int(-8, 8) as f64 / 2.0);
            let (ba, bb) = (pack(g(), g()), pack(g(), g()));
            // Accumulators: some push the clamped results past 1 or below 0.
            let hc = (rng.int(-160, 160) as f32 / 16.0).to_bits();
            let bc = (rng.int(-400, 400) as f32 / 4.0).to_bits();
            let (x, y) = (rng.u32(), rng.u32());
            let acc = match i % 4 {
                0 => 0xFFFF_F000 | rng.u32() & 0xFFF, // near u32::MAX: unsigned saturation
                1 => 0x7FFF_F000 | rng.u32() & 0xFFF, // near i32::MAX
                2 => 0x8000_0000 | rng.u32() & 0xFFF, // near i32::MIN
                _ => rng.u32(),
            };
            let hc16 = f16(rng.int(-1000, 1000) as f64 / 16.0);
            let bc16 = bf16(rng.int(-64, 64) as f64 / 4.0);
            [ha, hb, hc, ba, bb, bc, x, y, acc, pack(hc16, bc16)]
        })
        .collect();
    let dots = |d: &[u32; 10]| -> [u32; 11] {
        let h = |w: u32| [f16_value(w as u16), f16_value((w >> 16) as u16)];
        let g = |w: u32| [bf16_value(w as u16), bf16_value((w >> 16) as u16)];
        let (ha, hb, ba, bb) = (h(d[0]), h(d[1]), g(d[3]), g(d[4]));
        let hdot = ha[0] * hb[0] + ha[1] * hb[1];
        let bdot = ba[0] * bb[0] + ba[1] * bb[1];
        let fdot2 = hdot + f64::from(f32::from_bits(d[2]));
        let bytes = |w: u32, signed: bool| -> [i64; 4] {
            std::array::from_fn(|k| {
                if signed { i64::from((w >> (8 * k)) as u8 as i8) } else { i64::from((w >> (8 * k)) as u8) }
            })
        };
        let nibbles = |w: u32, signed: bool| -> [i64; 8] {
            std::array::from_fn(|k| {
                let n = i64::from(w >> (4 * k) & 15);
                if signed && n >= 8 { n - 16 } else { n }
            })
        };
        let dot = |x: &[i64], y: &[i64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<i64>();
        let (x, y, acc) = (d[6], d[7], d[8]);
        let u4 = dot(&bytes(x, false), &bytes(y, false)) + i64::from(acc);
        let s4 = dot(&bytes(x, true), &bytes(y, true)) + i64::from(acc as i32);
        let us4 = dot(&bytes(x, false), &bytes(y, true)) + i64::from(acc as i32);
        let u8_ = dot(&nibbles(x, false), &nibbles(y, false)) + i64::from(acc);
        let s8 = dot(&nibbles(x, true), &nibbles(y, true)) + i64::from(acc as i32);
        [
            (fdot2 as f32).to_bits(),
            (fdot2.clamp(0.0, 1.0) as f32).to_bits(),
            u32::from(f16(hdot + f16_value(d[9] as u16))),
            ((bdot + f64::from(f32::from_bits(d[5]))) as f32).to_bits(),
            u32::from(bf16(bdot + bf16_value((d[9] >> 16) as u16))),
            u4 as u32,
            u4.min(i64::from(u32::MAX)) as u32,
            s4 as u32,
            us4.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32,
            u8_ as u32,
            s8 as u32,
        ]
    };

    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        let grid = [n as u32, 1, 1];
        let (out16, out32) = (Buf::zeroed(n * 15 * 2), Buf::zeroed(n * 4 * 4));
        let inputs = [
            Buf::of(&a),
            Buf::of(&b),
            Buf::of(&c),
            Buf::of(&f32_inputs),
            Buf::of(&to_i16),
            Buf::of(&to_u16),
            Buf::of(&from_i16),
            Buf::of(&from_u16),
        ];
        let mut args = vec![Arg::Buf(&out16), Arg::Buf(&out32)];
        args.extend(inputs.iter().map(Arg::Buf));
        // Each kernel runs even if another fails; every mismatch and error is reported at the end.
        let mut failures = Failures::default();
        match try_run("half", target, "half_scalar", grid, [32, 1, 1], &args) {
            Err(error) => failures.0.push(error),
            Ok(_) => {
                let (got16, got32): (Vec<u16>, Vec<u32>) = (out16.read(), out32.read());
                const NAMES16: [&str; 15] = [
                    "add",
                    "sub",
                    "mul",
                    "fma",
                    "min",
                    "max",
                    "cvt_f16_f32",
                    "cvt_i16_f16",
                    "cvt_u16_f16",
                    "cvt_f16_i16",
                    "cvt_f16_u16",
                    "floor",
                    "ceil",
                    "trunc",
                    "rndne",
                ];
                for i in 0..n {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    for (k, want) in scalar16(i).into_iter().enumerate() {
                        let got = got16[i * 15 + k];
                        failures.check(same_f16(got, want), || {
                            format!("half_scalar {} at work-item {i} (a {x:#06x}, b {y:#06x}, c {z:#06x}, f32 {:e}): got {got:#06x}, want {want:#06x}", NAMES16[k], f32_inputs[i])
                        });
                    }
                    for (k, want) in scalar32(i).into_iter().enumerate() {
                        let got = got32[i * 4 + k];
                        let bf16_nan = |bits: u32| soft::BF16.is_nan(u64::from(bits));
                        let ok =
                            if k == 2 { got == want || (bf16_nan(got) && bf16_nan(want)) } else { same_f32(got, want) };
                        let name = ["cvt_f32_f16", "compares", "f32 to bf16", "bf16 to f32 × 2"][k];
                        failures.check(ok, || {
                            format!("half_scalar {name} at work-item {i}: got {got:#010x}, want {want:#010x}")
                        });
                    }
                }
            }
        }

        let out = Buf::zeroed(n * 8 * 4);
        let (ba, bb, bc) = (Buf::of(&pa), Buf::of(&pb), Buf::of(&pc));
        match try_run(
            "half",
            target,
            "half_packed",
            grid,
            [64, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&ba), Arg::Buf(&bb), Arg::Buf(&bc)],
        ) {
            Err(error) => failures.0.push(error),
            Ok(_) => {
                let got: Vec<u32> = out.read();
                const NAMES_PK: [&str; 8] =
                    ["add", "sub", "mul", "fma", "min", "max", "fma(-x, y.yx, z)", "fma(x.xx, y, -z.yy)"];
                for i in 0..n {
                    for (k, want) in packed(i).into_iter().enumerate() {
                        let g = got[i * 8 + k];
                        let ok = same_f16(g as u16, want as u16) && same_f16((g >> 16) as u16, (want >> 16) as u16);
                        failures.check(ok, || {
                            format!(
                                "half_packed {} at work-item {i} (a {:#010x}, b {:#010x}, c {:#010x}): got {g:#010x}, want {want:#010x}",
                                NAMES_PK[k], pa[i], pb[i], pc[i]
                            )
                        });
                    }
                }
            }
        }

        let out = Buf::zeroed(n * 10 * 4);
        let (ba, bb, bc) = (Buf::of(&ia), Buf::of(&ib), Buf::of(&ic));
        match try_run(
            "half",
            target,
            "packed_i16",
            grid,
            [64, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&ba), Arg::Buf(&bb), Arg::Buf(&bc)],
        ) {
            Err(error) => failures.0.push(error),
            Ok(_) => {
                let got: Vec<u32> = out.read();
                const NAMES_I16: [&str; 10] =
                    ["add", "sub", "mul_lo", "mad", "lshl", "ashr", "lshr", "min_i16 ^ max_u16", "max_i16", "min_u16"];
                for i in 0..n {
                    for (k, want) in packed_i16(i).into_iter().enumerate() {
                        let g = got[i * 10 + k];
                        failures.check(g == want, || {
                            format!("packed_i16 {} at work-item {i} (a {:#010x}, b {:#010x}): got {g:#010x}, want {want:#010x}", NAMES_I16[k], ia[i], ib[i])
                        });
                    }
                }
            }
        }

        let out = Buf::zeroed(n * 11 * 4);
        let input = Buf::of(&dots_in);
        // `half_dots` is gfx11's (its dot builtins need gfx11's instructions): gfx1030 has none.
        let dot_run = if isa_of(target) == Isa::Gfx11 {
            try_run("half", target, "half_dots", grid, [64, 1, 1], &[Arg::Buf(&out), Arg::Buf(&input)])
        } else {
            Ok(0)
        };
        match dot_run {
            Err(error) => failures.0.push(error),
            Ok(_) if isa_of(target) != Isa::Gfx11 => {}
            Ok(_) => {
                let got: Vec<u32> = out.read();
                const NAMES_DOT: [&str; 11] = [
                    "v_dot2_f32_f16",
                    "v_dot2_f32_f16 clamp",
                    "v_dot2_f16_f16",
                    "v_dot2_f32_bf16",
                    "v_dot2_bf16_bf16",
                    "v_dot4_u32_u8",
                    "v_dot4_u32_u8 clamp",
                    "v_dot4_i32_iu8 (signed, signed)",
                    "v_dot4_i32_iu8 (unsigned, signed) clamp",
                    "v_dot8_u32_u4",
                    "v_dot8_i32_iu4 (signed, signed)",
                ];
                for i in 0..n {
                    for (k, want) in dots(&dots_in[i]).into_iter().enumerate() {
                        let g = got[i * 11 + k];
                        let g = if k == 2 || k == 4 { g & 0xFFFF } else { g };
                        failures.check(g == want, || {
                            format!(
                                "{} at work-item {i} (inputs {:08x?}): got {g:#010x}, want {want:#010x}",
                                NAMES_DOT[k], dots_in[i]
                            )
                        });
                    }
                }
            }
        }
        failures.assert_none(target);
    }
}

// ---------------------------------------------------------------------------------------------
// Transcendentals and the exponent ops.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Tolerance {
    /// Bit for bit (any NaN for a NaN).
    Exact,
    /// At most this many units in the last place from the correctly rounded result.
    Ulps(u64),
    /// At most this far from the exact result (for sin and cos, whose results pass through 0).
    Absolute(f64),
}
use Tolerance::{Absolute, Exact, Ulps};

/// What the test accepts of each approximate op, one row per op: the tolerance, and the note
/// the RDNA3 ISA guide gives for the instruction (its VOP1 chapter; quoted). Special results
/// (NaN, infinities; zeros outside absolute tolerances) are compared exactly, and the inputs
/// avoid the denormals the guide says an op flushes. Every op not listed here is exact.
const APPROXIMATE: &[(&str, Tolerance, &str)] = &[
    ("v_exp_f32", Ulps(1), "1ULP accuracy, denormals are flushed."),
    ("v_log_f32", Ulps(1), "1ULP accuracy, denormals are flushed."),
    ("v_rcp_f32", Ulps(1), "1ULP accuracy. [...] Denormals are flushed."),
    ("v_rsq_f32", Ulps(1), "1ULP accuracy, denormals are flushed."),
    ("v_sqrt_f32", Ulps(1), "1ULP accuracy, denormals are flushed."),
    // The guide states no accuracy for sine and cosine ("Denormals are supported. Full range
    // input is supported."); these bounds are this test's choice, not AMD's figure.
    ("v_sin_f32", Absolute(1.0 / (1 << 18) as f64), "no accuracy stated"),
    ("v_cos_f32", Absolute(1.0 / (1 << 18) as f64), "no accuracy stated"),
    ("v_rcp_f64", Ulps(1 << 29), "This opcode has (2**29)ULP accuracy and supports denormals."),
    ("v_rsq_f64", Ulps(1 << 29), "This opcode has (2**29)ULP accuracy and supports denormals."),
    ("v_sqrt_f64", Ulps(1 << 29), "This opcode has (2**29)ULP accuracy and supports denormals."),
    ("v_exp_f16", Ulps(1), "0.51ULP accuracy, denormals are supported."),
    ("v_log_f16", Ulps(1), "0.51ULP accuracy, denormals are supported."),
    ("v_rcp_f16", Ulps(1), "0.51ULP accuracy."),
    ("v_rsq_f16", Ulps(1), "0.51ULP accuracy, denormals are supported."),
    ("v_sqrt_f16", Ulps(1), "0.51ULP accuracy, denormals are supported."),
    ("v_sin_f16", Absolute(1.0 / (1 << 9) as f64), "no accuracy stated"),
    ("v_cos_f16", Absolute(1.0 / (1 << 9) as f64), "no accuracy stated"),
];

fn tolerance(op: &str) -> Tolerance {
    APPROXIMATE.iter().find(|(name, ..)| *name == op).map_or(Exact, |&(_, tolerance, _)| tolerance)
}

/// A result (bits of `format`) against the exact value `want` (an f64; NaN for NaN). NaN and
/// infinite results must match exactly; so must zeros, except under an absolute tolerance.
fn within(format: soft::Format, got: u64, want: f64, tolerance: Tolerance) -> bool {
    let want_bits = format.encode(want);
    if want.is_nan() || format.is_nan(got) {
        return want.is_nan() && format.is_nan(got);
    }
    if want.is_infinite() {
        return got == want_bits;
    }
    match tolerance {
        Exact => got == want_bits,
        Ulps(_) if want == 0.0 => got == want_bits,
        Ulps(ulps) => {
            // Distance on the ordered line of the format's values.
            let sign = 1u64 << (format.bits() - 1);
            let ordered = |bits: u64| if bits & sign != 0 { -((bits & !sign) as i128) } else { bits as i128 };
            (ordered(got) - ordered(want_bits)).unsigned_abs() <= u128::from(ulps)
        }
        Absolute(error) => !format.is_infinite(got) && (format.to_f64(got) - want).abs() <= error,
    }
}

/// frexp's mantissa and exponent (C semantics: 0, infinities and NaN give exponent 0 and
/// themselves as mantissa; denormals are normalized). The ISA guide's pseudocode for
/// v_frexp_exp_* is `exponent(S0) - bias + 1` outside infinities and NaN; LLVM lowers frexp to
/// these instructions with no fix-up for 0 or denormals on gfx9 and later, so they give C's answer.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // Denormals: scale into the normals first.
    let (x, bias) = if x.abs() < f64::MIN_POSITIVE { (x * 2f64.powi(64), -64) } else { (x, 0) };
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7FF) as i32 - 1022;
    (f64::from_bits(bits & !(0x7FF << 52) | 1022 << 52), exponent + bias)
}

/// x × 2^e rounded once to `format` (x given as bits of `format`).
fn ldexp(format: soft::Format, x: u64, e: i32) -> u64 {
    if format.is_nan(x) {
        return format.nan();
    }
    if format.is_infinite(x) {
        return x;
    }
    let (negative, magnitude, exponent) = format.parts(x);
    format.round(negative, magnitude, exponent + e.clamp(-4000, 4000))
}

/// v_cmp_class: which of the ten classes (bit 0 signaling NaN, 1 quiet NaN, 2 −∞, 3 −normal,
/// 4 −denormal, 5 −0, 6 +0, 7 +denormal, 8 +normal, 9 +∞) `bits` is in, as a one-bit mask.
fn class(format: soft::Format, bits: u64) -> u32 {
    let negative = bits >> (format.bits() - 1) & 1 == 1;
    let exponent = (bits >> format.fraction) & format.max_biased as u64;
    let fraction = bits & ((1 << format.fraction) - 1);
    let bit = if format.is_nan(bits) {
        u32::from(fraction >> (format.fraction - 1) & 1 == 1)
    } else if format.is_infinite(bits) {
        if negative { 2 } else { 9 }
    } else if exponent == 0 && fraction == 0 {
        if negative { 5 } else { 6 }
    } else if exponent == 0 {
        if negative { 4 } else { 7 }
    } else if negative {
        3
    } else {
        8
    };
    1 << bit
}

/// Row k of a transcendental kernel: op, inputs (bits of the kernel's format) and the expected
/// result of work-item i.
struct Row {
    op: &'static str,
    inputs: Vec<u64>,
    expected: Expected,
}

enum Expected {
    /// The exact value (an f64) of f(x), compared within the op's [`tolerance`].
    Value(Box<dyn Fn(f64) -> f64>),
    /// The result bits, from the input bits, e[i], mask[i] and i (exact ops).
    Bits(Box<dyn Fn(u64, i32, i32, usize) -> u64>),
}

const COUNT: usize = 64;

/// `items`, then random values in `[low, high)`, as bits of `format`.
fn inputs(format: soft::Format, rng: &mut Rng, items: &[f64], low: f64, high: f64) -> Vec<u64> {
    padded(items, COUNT, |_| rng.float(low, high)).iter().map(|&x| format.encode(x)).collect()
}

/// `items`, then log-uniform positive values in `[2^low, 2^high)` away from [0.5, 2).
fn log_inputs(format: soft::Format, rng: &mut Rng, items: &[f64], low: f64, high: f64) -> Vec<u64> {
    let more = |_| loop {
        let x = rng.float(low, high).exp2();
        if !(0.5..2.0).contains(&x) {
            break x;
        }
    };
    padded(items, COUNT, more).iter().map(|&x| format.encode(x)).collect()
}

fn value(op: &'static str, inputs: Vec<u64>, f: impl Fn(f64) -> f64 + 'static) -> Row {
    Row { op, inputs, expected: Expected::Value(Box::new(f)) }
}

fn exact_bits(op: &'static str, inputs: Vec<u64>, f: impl Fn(u64, i32, i32, usize) -> u64 + 'static) -> Row {
    Row { op, inputs, expected: Expected::Bits(Box::new(f)) }
}

/// The rows every format has: frexp mantissa and exponent, ldexp, fract, class.
fn exponent_rows(format: soft::Format, rng: &mut Rng, names: [&'static str; 5], extremes: &[f64]) -> Vec<Row> {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let smallest = (format.min_exp as f64).exp2();
    let min_normal = smallest * (format.fraction as f64).exp2();
    let mut frexp_items =
        vec![0.0, -0.0, 1.0, -1.0, 0.75, 3.5, 3.0 * smallest, -5.0 * smallest, inf, -inf, nan, min_normal];
    frexp_items.extend_from_slice(extremes);
    let frexp_inputs = inputs(format, rng, &frexp_items, -1000.0, 1000.0);
    let exponent_mask = if format.bits() == 16 { 0xFFFF } else { 0xFFFF_FFFF };
    // ldexp pairs with `exponents` (see the test): ties to even into the denormals, overflow,
    // underflow, NaN and infinity.
    let ldexp_items = [1.5, 1.5, 1.0, 1.0, 1.5, 3.0, 7.0, nan, inf, 0.0, -2.5, 1.0, 1.0, 1.0, -1.0, 1.0];
    let fract_items = [3.75, -2.25, 1000.0, -0.5, 0.1, -0.01, 0.0, 0.999, 123.456, -123.456, nan, 7.0, -7.0];
    // Every class in turn: sNaN, qNaN, −∞, −normal, −denormal, −0, +0, +denormal, +normal, +∞.
    let signaling = format.infinity(false) | 1 << (format.fraction - 2);
    let class_items = [nan, nan, -inf, -1.5, -3.0 * smallest, -0.0, 0.0, 5.0 * smallest, 2.5, inf];
    let class_inputs =
        (0..COUNT).map(|i| if i % 10 == 0 { signaling } else { format.encode(class_items[i % 10]) }).collect();
    vec![
        value(names[0], frexp_inputs.clone(), |x| frexp(x).0),
        exact_bits(names[1], frexp_inputs, move |x, _, _, _| (frexp(format.to_f64(x)).1 as i64 as u64) & exponent_mask),
        exact_bits(names[2], inputs(format, rng, &ldexp_items, -100.0, 100.0), move |x, e, _, _| ldexp(format, x, e)),
        // x − floor(x), one rounding (the guide: "0.5ULP accuracy", the result clamped below 1,
        // which these inputs never reach). A NaN gives NaN: LLVM's expansion for gfx6, whose
        // v_fract_f64 is broken, selects the input when v_cmp_class says NaN, to match the
        // instruction on later chips.
        value(
            names[3],
            inputs(format, rng, &fract_items, -1000.0, 1000.0),
            |x| if x.is_nan() { x } else { x - x.floor() },
        ),
        exact_bits(names[4], class_inputs, move |x, _, mask, _| u64::from(class(format, x) & mask as u32 != 0)),
    ]
}

/// Runs `symbol` with `rows` (row k reads and writes row k; `rows.len()` rows of inputs and of
/// outputs) and checks every result, returning the mismatches (or the interpreter's error).
fn check_rows(
    target: &str,
    symbol: &str,
    format: soft::Format,
    rows: &[Row],
    exponents: &[i32],
    masks: &[i32],
) -> Failures {
    let width = format.bits() as usize / 8;
    let mut input = vec![0u8; rows.len() * COUNT * width];
    for (k, row) in rows.iter().enumerate() {
        for (i, bits) in row.inputs.iter().enumerate() {
            input[(k * COUNT + i) * width..][..width].copy_from_slice(&bits.to_le_bytes()[..width]);
        }
    }
    let (out, input_buf) = (Buf::zeroed(input.len()), Buf::of(&input));
    let (e, m) = (Buf::of(exponents), Buf::of(masks));
    let args = [Arg::Buf(&out), Arg::Buf(&input_buf), Arg::Buf(&e), Arg::Buf(&m), Arg::U32(COUNT as u32)];
    let mut failures = Failures::default();
    if let Err(error) = try_run("transcendental", target, symbol, [COUNT as u32, 1, 1], [64, 1, 1], &args) {
        failures.0.push(error);
        return failures;
    }
    let got = out.bytes();
    for (k, row) in rows.iter().enumerate() {
        for i in 0..COUNT {
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(&got[(k * COUNT + i) * width..][..width]);
            let got = u64::from_le_bytes(word);
            let x = row.inputs[i];
            let (ok, want) = match &row.expected {
                Expected::Value(f) => {
                    let want = f(format.to_f64(x));
                    (within(format, got, want, tolerance(row.op)), format!("{want:e}"))
                }
                Expected::Bits(f) => {
                    let want = f(x, exponents[i], masks[i], i);
                    (got == want || (format.is_nan(got) && format.is_nan(want)), format!("{want:#x}"))
                }
            };
            failures.check(ok, || {
                format!(
                    "{symbol} row {k} ({}, tolerance {:?}) at work-item {i}: input {x:#x} ({:e}), e {}, mask {:#x}: got {got:#x} ({:e}), want {want}",
                    row.op,
                    tolerance(row.op),
                    format.to_f64(x),
                    exponents[i],
                    masks[i],
                    format.to_f64(got),
                )
            });
        }
    }
    failures
}

#[test]
fn transcendentals_are_within_their_stated_accuracy_and_exponent_ops_are_exact() {
    use soft::{F16, F32, F64};
    let mut rng = Rng(0x7A15_CE4D);
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let tau = std::f64::consts::TAU;
    let exponents: Vec<i32> =
        padded(&[3, -130, -149, -150, -150, 127, 0, 3, -1000, 100, 10, -20, 2000, -2000, 24, -24], COUNT, |_| {
            rng.int(-40, 40) as i32
        });
    let masks: Vec<i32> = (0..COUNT).map(|i| if i < 10 { 1 << i } else { rng.int(0, 0x3FF) as i32 }).collect();
    let trig = [0.0, 0.25, 0.5, -0.25, 0.125, 1.0, -1.7, 0.3, 2.0, -0.0, nan];

    // f32: rows 0..=12 as transcendental.c lists them; rows 13 and 14 are med3's other inputs.
    let min_normal = 2f64.powi(-126);
    let mut rows = vec![
        value(
            "v_exp_f32",
            inputs(
                F32,
                &mut rng,
                &[
                    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 10.0, -10.0, 3.7, -7.25, 126.5, 127.9, 128.0, 200.0, -126.0, -inf,
                    inf, nan,
                ],
                -20.0,
                20.0,
            ),
            f64::exp2,
        ),
        value(
            "v_log_f32",
            log_inputs(
                F32,
                &mut rng,
                &[1.0, 2.0, 0.5, 0.3, 0.7, 1.5, 3.0, 10.0, 1e-30, 1e30, 3e38, min_normal, 0.0, -0.0, -1.0, inf, nan],
                -120.0,
                120.0,
            ),
            f64::log2,
        ),
        value(
            "v_rcp_f32",
            inputs(
                F32,
                &mut rng,
                &[1.0, -1.0, 2.0, 3.0, 0.1, -7.5, 1e-30, 1e30, 8e37, 0.0, -0.0, inf, -inf, nan, min_normal],
                -1e6,
                1e6,
            ),
            |x| 1.0 / x,
        ),
        value(
            "v_rsq_f32",
            log_inputs(
                F32,
                &mut rng,
                &[1.0, 4.0, 2.0, 0.25, 1e-30, 1e30, 3e38, 0.0, -0.0, -1.0, inf, nan],
                -120.0,
                120.0,
            ),
            |x| 1.0 / x.sqrt(),
        ),
        value(
            "v_sqrt_f32",
            log_inputs(
                F32,
                &mut rng,
                &[1.0, 4.0, 2.0, 0.25, 1e-30, 1e30, 3e38, 0.0, -0.0, -1.0, inf, nan, min_normal],
                -120.0,
                120.0,
            ),
            f64::sqrt,
        ),
        value("v_sin_f32", inputs(F32, &mut rng, &trig, -2.0, 2.0), move |x| (x * tau).sin()),
        value("v_cos_f32", inputs(F32, &mut rng, &trig, -2.0, 2.0), move |x| (x * tau).cos()),
    ];
    rows.extend(exponent_rows(
        F32,
        &mut rng,
        ["v_frexp_mant_f32", "v_frexp_exp_i32_f32", "v_ldexp_f32", "v_fract_f32", "v_cmp_class_f32"],
        &[1e38, 3.4e38, -1e-42],
    ));
    // med3 of rows 12, 13, 14 (no NaNs, no zeros: both orders of ±0 are allowed).
    let med: [Vec<u64>; 3] = std::array::from_fn(|_| inputs(F32, &mut rng, &[inf, -inf, 1.0, -2.0], -100.0, 100.0));
    let (m1, m2) = (med[1].clone(), med[2].clone());
    rows.push(exact_bits("v_med3_f32", med[0].clone(), move |x, _, _, i| {
        let mut v = [x, m1[i], m2[i]].map(|bits| F32.to_f64(bits));
        v.sort_by(f64::total_cmp);
        F32.encode(v[1])
    }));
    rows.push(exact_bits("(med3 input)", med[1].clone(), |_, _, _, _| 0));
    rows.push(exact_bits("(med3 input)", med[2].clone(), |_, _, _, _| 0));
    let f32_rows = rows; // rows 13 and 14 are inputs only: their outputs must stay 0

    // f64.
    let mut f64_rows = vec![
        value(
            "v_rcp_f64",
            inputs(F64, &mut rng, &[1.0, -1.0, 3.0, 0.1, 1e-300, 1e300, 0.0, -0.0, inf, -inf, nan], -1e6, 1e6),
            |x| 1.0 / x,
        ),
        value(
            "v_rsq_f64",
            inputs(F64, &mut rng, &[1.0, 4.0, 2.0, 1e-300, 1e300, 0.0, -0.0, -1.0, inf, nan], 1e-6, 1e6),
            |x| 1.0 / x.sqrt(),
        ),
        value(
            "v_sqrt_f64",
            inputs(
                F64,
                &mut rng,
                &[1.0, 4.0, 2.0, 1e-300, 1e300, 0.0, -0.0, -1.0, inf, nan, 2f64.powi(-1022)],
                0.0,
                1e6,
            ),
            f64::sqrt,
        ),
    ];
    f64_rows.extend(exponent_rows(
        F64,
        &mut rng,
        ["v_frexp_mant_f64", "v_frexp_exp_i32_f64", "v_ldexp_f64", "v_fract_f64", "v_cmp_class_f64"],
        &[1e308, -1e-310],
    ));

    // f16: inputs kept where the results stay normal.
    let f16_exponents: Vec<i32> = exponents.iter().map(|&e| e.clamp(-30, 30)).collect();
    let min_normal = 2f64.powi(-14);
    let mut f16_rows = vec![
        value(
            "v_exp_f16",
            inputs(F16, &mut rng, &[0.0, -0.0, 1.0, -1.0, 0.5, 15.5, 16.0, -14.0, -13.5, -inf, inf, nan], -13.9, 15.9),
            f64::exp2,
        ),
        value(
            "v_log_f16",
            inputs(
                F16,
                &mut rng,
                &[1.0, 2.0, 0.3, 0.7, 3.0, 1000.0, 65504.0, min_normal, 0.0, -1.0, inf, nan],
                2.0,
                60000.0,
            ),
            f64::log2,
        ),
        value(
            "v_rcp_f16",
            inputs(F16, &mut rng, &[1.0, -1.0, 3.0, 0.1, 16384.0, 0.0, -0.0, inf, -inf, nan, min_normal], 1.0, 16000.0),
            |x| 1.0 / x,
        ),
        value(
            "v_rsq_f16",
            inputs(
                F16,
                &mut rng,
                &[1.0, 4.0, 2.0, 0.25, 65504.0, 0.0, -0.0, -1.0, inf, nan, min_normal],
                0.001,
                60000.0,
            ),
            |x| 1.0 / x.sqrt(),
        ),
        value(
            "v_sqrt_f16",
            inputs(
                F16,
                &mut rng,
                &[1.0, 4.0, 2.0, 0.25, 65504.0, 0.0, -0.0, -1.0, inf, nan, min_normal],
                0.001,
                60000.0,
            ),
            f64::sqrt,
        ),
        value("v_sin_f16", inputs(F16, &mut rng, &trig, -2.0, 2.0), move |x| (x * tau).sin()),
        value("v_cos_f16", inputs(F16, &mut rng, &trig, -2.0, 2.0), move |x| (x * tau).cos()),
    ];
    f16_rows.extend(exponent_rows(
        F16,
        &mut rng,
        ["v_frexp_mant_f16", "v_frexp_exp_i16_f16", "v_ldexp_f16", "v_fract_f16", "v_cmp_class_f16"],
        &[65504.0, -3e-6],
    ));

    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        let mut failures = check_rows(target, "transcendental_f32", F32, &f32_rows, &exponents, &masks);
        failures.0.extend(check_rows(target, "transcendental_f64", F64, &f64_rows, &exponents, &masks).0);
        failures.0.extend(check_rows(target, "transcendental_f16", F16, &f16_rows, &f16_exponents, &masks).0);
        failures.assert_none(target);
    }
}

// ---------------------------------------------------------------------------------------------
// WMMA.
// ---------------------------------------------------------------------------------------------

/// The wave32 register layout of RDNA3's WMMA (16x16x16), in one place. Lanes 16-31 repeat
/// lanes 0-15 for A and B (the hardware expects the copy):
/// - A (16 rows x 16 k): lane l holds row l % 16; element e of its register image (16-bit
///   element e at bits 16(e%2) of VGPR e/2; 8-bit at byte e%4 of VGPR e/4; 4-bit at nibble e%8
///   of VGPR e/8) is A[l % 16][e].
/// - B (16 k x 16 columns): lane l holds column l % 16; element e is B[e][l % 16].
/// - C and D, 32-bit: VGPR v of lane l is D[2v + l / 16][l % 16].
/// - C and D, 16-bit: the same place, in the low half of the VGPR (op_sel 0) or the high half
///   (op_sel 1); the other half is not written (the tied builtins keep C's there).
///
/// Source: AMD's "How to accelerate AI applications on RDNA 3 using WMMA" (GPUOpen), whose
/// sample loads `a_frag[e] = A[lane][e]`, `b_frag[e] = B[e][lane]` with lane = l % 16, and stores
/// `D[2e + l/16][lane] = c_frag[2e]`; the RDNA3 ISA guide's WMMA section shows the same.
mod wmma_layout {
    pub fn a(lane: usize, element: usize) -> (usize, usize) {
        (lane % 16, element)
    }

    pub fn b(lane: usize, element: usize) -> (usize, usize) {
        (element, lane % 16)
    }

    pub fn cd(lane: usize, vgpr: usize) -> (usize, usize) {
        (2 * vgpr + lane / 16, lane % 16)
    }
}

type Matrix = [[i64; 16]; 16];

fn matrix(rng: &mut Rng, low: i64, high: i64) -> Matrix {
    std::array::from_fn(|_| std::array::from_fn(|_| rng.int(low, high)))
}

fn matmul(a: &Matrix, b: &Matrix, c: &Matrix) -> Matrix {
    std::array::from_fn(|r| std::array::from_fn(|col| c[r][col] + (0..16).map(|k| a[r][k] * b[k][col]).sum::<i64>()))
}

/// A and B register images (per lane, `bits`-wide elements packed little-endian into 32-bit
/// VGPRs), of `waves` problems.
fn pack_ab(
    matrices: &[Matrix],
    which: fn(usize, usize) -> (usize, usize),
    bits: usize,
    encode: &dyn Fn(i64) -> u32,
) -> Vec<u32> {
    let vgprs = 16 * bits / 32;
    let mut image = Vec::new();
    for m in matrices {
        for lane in 0..32 {
            let mut words = vec![0u32; vgprs];
            for e in 0..16 {
                let (r, c) = which(lane, e);
                let value = encode(m[r][c]) & ((1u64 << bits) - 1) as u32;
                words[e * bits / 32] |= value << (e * bits % 32);
            }
            image.extend(words);
        }
    }
    image
}

/// C images, 32-bit elements.
fn pack_cd32(matrices: &[Matrix], encode: &dyn Fn(i64) -> u32) -> Vec<u32> {
    let mut image = Vec::new();
    for m in matrices {
        for lane in 0..32 {
            image.extend((0..8).map(|v| {
                let (r, c) = wmma_layout::cd(lane, v);
                encode(m[r][c])
            }));
        }
    }
    image
}

/// C images, 16-bit elements: `low` in the low halves, `high` in the high halves.
fn pack_cd16(low: &[Matrix], high: &[Matrix], encode: &dyn Fn(i64) -> u16) -> Vec<u32> {
    let mut image = Vec::new();
    for (lo, hi) in low.iter().zip(high) {
        for lane in 0..32 {
            image.extend((0..8).map(|v| {
                let (r, c) = wmma_layout::cd(lane, v);
                u32::from(encode(lo[r][c])) | u32::from(encode(hi[r][c])) << 16
            }));
        }
    }
    image
}

/// rocjitsu's four-chain loop (the bench's `wmma_chains` row) keeps each chain's sum: after n
/// rounds chain j holds n times its product, exactly (eighths in [-8, 8], sums below 2^24 units).
#[test]
fn four_wmma_chains_accumulate_their_products_round_after_round() {
    const WAVES: usize = 2;
    const ROUNDS: u32 = 128;
    let mut rng = Rng(0x5EED_C4A1);
    let f16_bits = |x: i64| u32::from(f16(x as f64 / 8.0));
    let transpose = |m: &Matrix| -> Matrix { std::array::from_fn(|r| std::array::from_fn(|c| m[c][r])) };
    let zero: Matrix = [[0; 16]; 16];
    for target in GFX11_TARGETS {
        let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -64, 64)).collect();
        let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -64, 64)).collect();
        let a_image = Buf::of(&pack_ab(&a, wmma_layout::a, 16, &f16_bits));
        let b_image = Buf::of(&pack_ab(&b, wmma_layout::b, 16, &f16_bits));
        let d_image = Buf::zeroed(WAVES * 4 * 32 * 8 * 4);
        run(
            "wmma",
            target,
            "wmma_chains",
            [32 * WAVES as u32, 1, 1],
            [32, 1, 1],
            &[Arg::Buf(&d_image), Arg::Buf(&a_image), Arg::Buf(&b_image), Arg::U32(ROUNDS)],
        );
        let d: Vec<f32> = d_image.read();
        for w in 0..WAVES {
            // A image read as B is A's transpose; B image read as A is B's transpose.
            let (ma, mb) = (&a[w], &b[w]);
            let products = [
                matmul(ma, mb, &zero),
                matmul(&transpose(mb), &transpose(ma), &zero),
                matmul(ma, &transpose(ma), &zero),
                matmul(&transpose(mb), mb, &zero),
            ];
            for (chain, product) in products.iter().enumerate() {
                for lane in 0..32 {
                    for v in 0..8 {
                        let (r, col) = wmma_layout::cd(lane, v);
                        let got = d[(4 * (w * 32 + lane) + chain) * 8 + v];
                        let want = (product[r][col] * i64::from(ROUNDS)) as f64 / 64.0;
                        assert_eq!(got, want as f32, "{target}: wave {w} chain {chain} D[{r}][{col}]");
                    }
                }
            }
        }
    }
}

#[test]
fn wmma_16x16x16_products_match_the_host_in_the_rdna3_wave32_layout() {
    const WAVES: usize = 2;
    let mut rng = Rng(0x3A7_21C5);
    let grid = [32 * WAVES as u32, 1, 1];
    let f16_bits = |x: i64| u32::from(f16(x as f64 / 8.0));
    let bf16_bits = |x: i64| u32::from(bf16(x as f64));
    for target in GFX11_TARGETS {
        // f32 += f16 x f16 and bf16 x bf16: eighths in [-8, 8] (f16) and small integers (bf16);
        // every product and partial sum is exact in f32.
        for (symbol, encode, scale, range) in [
            ("wmma_f32_f16", &f16_bits as &dyn Fn(i64) -> u32, 64.0, 64),
            ("wmma_f32_bf16", &bf16_bits as &dyn Fn(i64) -> u32, 1.0, 8),
        ] {
            let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            // C in the products' units (1/64 for f16 eighths).
            let c: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -5000, 5000)).collect();
            let a_image = Buf::of(&pack_ab(&a, wmma_layout::a, 16, encode));
            let b_image = Buf::of(&pack_ab(&b, wmma_layout::b, 16, encode));
            let c_image = Buf::of(&pack_cd32(&c, &|x| (x as f32 / scale as f32).to_bits()));
            let d_image = Buf::zeroed(WAVES * 32 * 8 * 4);
            run(
                "wmma",
                target,
                symbol,
                grid,
                [64, 1, 1],
                &[Arg::Buf(&d_image), Arg::Buf(&a_image), Arg::Buf(&b_image), Arg::Buf(&c_image)],
            );
            let d: Vec<f32> = d_image.read();
            for w in 0..WAVES {
                let want = matmul(&a[w], &b[w], &c[w]);
                for lane in 0..32 {
                    for v in 0..8 {
                        let (r, col) = wmma_layout::cd(lane, v);
                        let got = d[(w * 32 + lane) * 8 + v];
                        assert_eq!(
                            got,
                            (want[r][col] as f64 / scale) as f32,
                            "{target}: {symbol} wave {w} D[{r}][{col}] (lane {lane}, VGPR {v})"
                        );
                    }
                }
            }
        }

        // f16 and bf16 results: integers small enough to be exact in the result format.
        for (symbol, range, to_bits, encode) in [
            (
                "wmma_f16",
                4,
                &(|x: i64| f16(x as f64)) as &dyn Fn(i64) -> u16,
                &(|x: i64| u32::from(f16(x as f64))) as &dyn Fn(i64) -> u32,
            ),
            ("wmma_bf16", 3, &(|x: i64| bf16(x as f64)) as &dyn Fn(i64) -> u16, &bf16_bits as &dyn Fn(i64) -> u32),
        ] {
            let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            let c_low: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -100, 100)).collect();
            let c_high: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -100, 100)).collect();
            let a_image = Buf::of(&pack_ab(&a, wmma_layout::a, 16, encode));
            let b_image = Buf::of(&pack_ab(&b, wmma_layout::b, 16, encode));
            let c_image = Buf::of(&pack_cd16(&c_low, &c_high, to_bits));
            let d_image = Buf::zeroed(WAVES * 2 * 32 * 8 * 4);
            run(
                "wmma",
                target,
                symbol,
                grid,
                [64, 1, 1],
                &[Arg::Buf(&d_image), Arg::Buf(&a_image), Arg::Buf(&b_image), Arg::Buf(&c_image)],
            );
            let d: Vec<u32> = d_image.read();
            for w in 0..WAVES {
                let (want_low, want_high) = (matmul(&a[w], &b[w], &c_low[w]), matmul(&a[w], &b[w], &c_high[w]));
                for lane in 0..32 {
                    let i = w * 32 + lane;
                    for v in 0..8 {
                        let (r, col) = wmma_layout::cd(lane, v);
                        // d[2i]: op_sel 0, the low halves (the high halves are undefined).
                        let low = d[(2 * i) * 8 + v] as u16;
                        assert_eq!(
                            low,
                            to_bits(want_low[r][col]),
                            "{target}: {symbol} op_sel 0 wave {w} D[{r}][{col}] (lane {lane}, VGPR {v})"
                        );
                        // d[2i+1]: tied, op_sel 1: D in the high halves, C's low halves kept.
                        let word = d[(2 * i + 1) * 8 + v];
                        assert_eq!(
                            (word >> 16) as u16,
                            to_bits(want_high[r][col]),
                            "{target}: {symbol} op_sel 1 wave {w} D[{r}][{col}] (lane {lane}, VGPR {v})"
                        );
                        assert_eq!(
                            word as u16,
                            to_bits(c_low[w][r][col]),
                            "{target}: {symbol} tied op_sel 1 kept C's low half, wave {w} lane {lane} VGPR {v}"
                        );
                    }
                }
            }
        }

        // Integers: iu8 (signed x signed wrapping; unsigned x signed saturating) and iu4 (signed
        // wrapping; unsigned saturating).
        for (symbol, bits) in [("wmma_i32_iu8", 8usize), ("wmma_i32_iu4", 4)] {
            let half = 1i64 << (bits - 1);
            let a_raw: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, 0, 2 * half - 1)).collect();
            let b_raw: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, 0, 2 * half - 1)).collect();
            // C: some entries near the i32 limits, so the clamped form saturates.
            let c: Vec<Matrix> = (0..WAVES)
                .map(|_| {
                    std::array::from_fn(|r| {
                        std::array::from_fn(|col| match (r + col) % 4 {
                            0 => i64::from(i32::MAX) - rng.int(0, 1000),
                            1 => i64::from(i32::MIN) + rng.int(0, 1000),
                            _ => rng.int(-1 << 30, 1 << 30),
                        })
                    })
                })
                .collect();
            let raw = |x: i64| x as u32;
            let a_image = Buf::of(&pack_ab(&a_raw, wmma_layout::a, bits, &raw));
            let b_image = Buf::of(&pack_ab(&b_raw, wmma_layout::b, bits, &raw));
            let c_image = Buf::of(&pack_cd32(&c, &|x| x as i32 as u32));
            let d_image = Buf::zeroed(WAVES * 2 * 32 * 8 * 4);
            run(
                "wmma",
                target,
                symbol,
                grid,
                [64, 1, 1],
                &[Arg::Buf(&d_image), Arg::Buf(&a_image), Arg::Buf(&b_image), Arg::Buf(&c_image)],
            );
            let d: Vec<i32> = d_image.read();
            let signed = |m: &Matrix| -> Matrix { m.map(|row| row.map(|x| if x >= half { x - 2 * half } else { x })) };
            for w in 0..WAVES {
                // Both signed (wrapping), and the second form: iu8 unsigned A x signed B, iu4
                // unsigned x unsigned, saturating.
                let wrapped = matmul(&signed(&a_raw[w]), &signed(&b_raw[w]), &c[w]);
                let b_second = if bits == 8 { signed(&b_raw[w]) } else { b_raw[w] };
                let saturated = matmul(&a_raw[w], &b_second, &c[w]);
                for lane in 0..32 {
                    let i = w * 32 + lane;
                    for v in 0..8 {
                        let (r, col) = wmma_layout::cd(lane, v);
                        assert_eq!(
                            d[(2 * i) * 8 + v],
                            wrapped[r][col] as i32,
                            "{target}: {symbol} signed wave {w} D[{r}][{col}]"
                        );
                        let clamped = saturated[r][col].clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
                        assert_eq!(
                            d[(2 * i + 1) * 8 + v],
                            clamped,
                            "{target}: {symbol} clamped wave {w} D[{r}][{col}]"
                        );
                    }
                }
            }
        }
    }
}

/// gfx12's (RDNA4) wave32 WMMA layout: each lane holds 8 elements of A and B, lanes 16-31 the
/// other half of K (nothing repeated), and C/D rows 8 apart between the halves:
/// - A: element e of lane l is A[l % 16][8 (l / 16) + e]; B: B[8 (l / 16) + e][l % 16].
/// - C and D: element e of lane l is D[8 (l / 16) + e][l % 16] (32-bit: VGPR e; 16-bit: half
///   e % 2 of VGPR e / 2).
///
/// Source: llama.cpp `ggml/src/ggml-cuda/mma.cuh`, the RDNA4 tiles (`get_i` = 8 (lane / 16) + l
/// for the 16x16 accumulator, `get_j` = 4 (lane / 16) + l half2s for A/B), with LLVM's gfx12
/// register counts (`isa/src/interp/valu/wmma.rs` gives the full citation).
mod wmma_layout_gfx12 {
    pub fn a(lane: usize, element: usize) -> (usize, usize) {
        (lane % 16, 8 * (lane / 16) + element)
    }

    pub fn b(lane: usize, element: usize) -> (usize, usize) {
        (8 * (lane / 16) + element, lane % 16)
    }

    pub fn cd(lane: usize, element: usize) -> (usize, usize) {
        (8 * (lane / 16) + element, lane % 16)
    }
}

/// Per-lane images of 8 `bits`-wide elements placed by `which` (gfx12's A, B, C and D).
fn pack8(
    matrices: &[Matrix],
    which: fn(usize, usize) -> (usize, usize),
    bits: usize,
    encode: &dyn Fn(i64) -> u32,
) -> Vec<u32> {
    let mut image = Vec::new();
    for m in matrices {
        for lane in 0..32 {
            let mut words = vec![0u32; 8 * bits / 32];
            for e in 0..8 {
                let (r, c) = which(lane, e);
                let value = encode(m[r][c]) & ((1u64 << bits) - 1) as u32;
                words[e * bits / 32] |= value << (e * bits % 32);
            }
            image.extend(words);
        }
    }
    image
}

/// An OCP FP8 byte (`exponent_bits` 4: E4M3, bias 7; 5: E5M2, bias 15) of a small integer,
/// exact for |x| <= 8 (OCP 8-bit floating point specification v1.0).
fn fp8_of(x: i64, exponent_bits: u32) -> u32 {
    let mantissa_bits = 7 - exponent_bits;
    let bias = (1i64 << (exponent_bits - 1)) - 1;
    let sign = if x < 0 { 0x80 } else { 0 };
    let magnitude = x.unsigned_abs();
    if magnitude == 0 {
        return sign;
    }
    let exponent = 63 - magnitude.leading_zeros() as i64;
    let mantissa = ((magnitude << mantissa_bits) >> exponent) & ((1 << mantissa_bits) - 1);
    assert_eq!((((1 << mantissa_bits) | mantissa) << exponent) >> mantissa_bits, magnitude, "{x} is not exact");
    sign | ((exponent + bias) as u32) << mantissa_bits | mantissa as u32
}

/// The value of an OCP FP8 byte, normal or subnormal (the tests make no NaN or infinity).
fn fp8_value(bits: u32, exponent_bits: u32) -> f64 {
    let mantissa_bits = 7 - exponent_bits;
    let bias = (1i32 << (exponent_bits - 1)) - 1;
    let exponent = ((bits & 0x7F) >> mantissa_bits) as i32;
    let mantissa = (bits & ((1 << mantissa_bits) - 1)) as f64 / (1 << mantissa_bits) as f64;
    let magnitude = match exponent {
        0 => mantissa * 2f64.powi(1 - bias),
        _ => (1.0 + mantissa) * 2f64.powi(exponent - bias),
    };
    if bits & 0x80 != 0 { -magnitude } else { magnitude }
}

#[test]
fn gfx12_wmma_products_match_the_host_in_the_rdna4_wave32_layout() {
    const WAVES: usize = 2;
    let mut rng = Rng(0x5EED_1201);
    let grid = [32 * WAVES as u32, 1, 1];
    fn args<'a>(d: &'a Buf, a: &'a Buf, b: &'a Buf, c: &'a Buf) -> [Arg<'a>; 4] {
        [Arg::Buf(d), Arg::Buf(a), Arg::Buf(b), Arg::Buf(c)]
    }
    for target in ["gfx1200", "gfx1201"] {
        // f32 += f16 x f16 and bf16 x bf16 (small integers: every sum exact in f32).
        let f16_bits = |x: i64| u32::from(f16(x as f64));
        let bf16_bits = |x: i64| u32::from(bf16(x as f64));
        for (symbol, encode) in
            [("wmma_f32_f16", &f16_bits as &dyn Fn(i64) -> u32), ("wmma_f32_bf16", &bf16_bits as &dyn Fn(i64) -> u32)]
        {
            let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -8, 8)).collect();
            let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -8, 8)).collect();
            let c: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -5000, 5000)).collect();
            let a_image = Buf::of(&pack8(&a, wmma_layout_gfx12::a, 16, encode));
            let b_image = Buf::of(&pack8(&b, wmma_layout_gfx12::b, 16, encode));
            let c_image = Buf::of(&pack8(&c, wmma_layout_gfx12::cd, 32, &|x| (x as f32).to_bits()));
            let d_image = Buf::zeroed(WAVES * 32 * 8 * 4);
            run("wmma_gfx12", target, symbol, grid, [64, 1, 1], &args(&d_image, &a_image, &b_image, &c_image));
            let d: Vec<f32> = d_image.read();
            for w in 0..WAVES {
                let want = matmul(&a[w], &b[w], &c[w]);
                for lane in 0..32 {
                    for e in 0..8 {
                        let (r, col) = wmma_layout_gfx12::cd(lane, e);
                        let got = d[(w * 32 + lane) * 8 + e];
                        assert_eq!(got, want[r][col] as f32, "{target}: {symbol} wave {w} D[{r}][{col}]");
                    }
                }
            }
        }

        // f16 and bf16 results, two to a VGPR.
        for (symbol, range, encode) in
            [("wmma_f16", 4, &f16_bits as &dyn Fn(i64) -> u32), ("wmma_bf16", 3, &bf16_bits as &dyn Fn(i64) -> u32)]
        {
            let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -range, range)).collect();
            let c: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -100, 100)).collect();
            let a_image = Buf::of(&pack8(&a, wmma_layout_gfx12::a, 16, encode));
            let b_image = Buf::of(&pack8(&b, wmma_layout_gfx12::b, 16, encode));
            let c_image = Buf::of(&pack8(&c, wmma_layout_gfx12::cd, 16, encode));
            let d_image = Buf::zeroed(WAVES * 32 * 4 * 4);
            run("wmma_gfx12", target, symbol, grid, [64, 1, 1], &args(&d_image, &a_image, &b_image, &c_image));
            let d: Vec<u32> = d_image.read();
            for w in 0..WAVES {
                let want = matmul(&a[w], &b[w], &c[w]);
                for lane in 0..32 {
                    for e in 0..8 {
                        let (r, col) = wmma_layout_gfx12::cd(lane, e);
                        let got = (d[(w * 32 + lane) * 4 + e / 2] >> (16 * (e % 2))) & 0xFFFF;
                        assert_eq!(got, encode(want[r][col]), "{target}: {symbol} wave {w} D[{r}][{col}]");
                    }
                }
            }
        }

        // iu8: d[2i] signed x signed, wrapping; d[2i+1] unsigned A x signed B, saturating.
        let a_raw: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, 0, 255)).collect();
        let b_raw: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, 0, 255)).collect();
        let c: Vec<Matrix> = (0..WAVES)
            .map(|_| {
                std::array::from_fn(|r| {
                    std::array::from_fn(|col| match (r + col) % 4 {
                        0 => i64::from(i32::MAX) - rng.int(0, 1000),
                        1 => i64::from(i32::MIN) + rng.int(0, 1000),
                        _ => rng.int(-1 << 30, 1 << 30),
                    })
                })
            })
            .collect();
        let raw = |x: i64| x as u32;
        let a_image = Buf::of(&pack8(&a_raw, wmma_layout_gfx12::a, 8, &raw));
        let b_image = Buf::of(&pack8(&b_raw, wmma_layout_gfx12::b, 8, &raw));
        let c_image = Buf::of(&pack8(&c, wmma_layout_gfx12::cd, 32, &|x| x as i32 as u32));
        let d_image = Buf::zeroed(WAVES * 2 * 32 * 8 * 4);
        run("wmma_gfx12", target, "wmma_i32_iu8", grid, [64, 1, 1], &args(&d_image, &a_image, &b_image, &c_image));
        let d: Vec<i32> = d_image.read();
        let signed = |m: &Matrix| -> Matrix { m.map(|row| row.map(|x| if x >= 128 { x - 256 } else { x })) };
        for w in 0..WAVES {
            let wrapped = matmul(&signed(&a_raw[w]), &signed(&b_raw[w]), &c[w]);
            let saturated = matmul(&a_raw[w], &signed(&b_raw[w]), &c[w]);
            for lane in 0..32 {
                let i = w * 32 + lane;
                for e in 0..8 {
                    let (r, col) = wmma_layout_gfx12::cd(lane, e);
                    assert_eq!(
                        d[(2 * i) * 8 + e],
                        wrapped[r][col] as i32,
                        "{target}: iu8 signed wave {w} D[{r}][{col}]"
                    );
                    let clamped = saturated[r][col].clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
                    assert_eq!(d[(2 * i + 1) * 8 + e], clamped, "{target}: iu8 clamped wave {w} D[{r}][{col}]");
                }
            }
        }

        // fp8/bf8: A's bytes E4M3 and B's E5M2 encodings of small integers; the four forms read
        // the same bytes as (fp8, fp8), (fp8, bf8), (bf8, fp8), (bf8, bf8). Every value has at
        // most 4 significant bits and a small exponent, so every sum is exact in f32.
        let a: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -8, 8)).collect();
        let b: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -8, 8)).collect();
        let c: Vec<Matrix> = (0..WAVES).map(|_| matrix(&mut rng, -1000, 1000)).collect();
        let a_image = Buf::of(&pack8(&a, wmma_layout_gfx12::a, 8, &|x| fp8_of(x, 4)));
        let b_image = Buf::of(&pack8(&b, wmma_layout_gfx12::b, 8, &|x| fp8_of(x, 5)));
        let c_image = Buf::of(&pack8(&c, wmma_layout_gfx12::cd, 32, &|x| (x as f32).to_bits()));
        let d_image = Buf::zeroed(WAVES * 4 * 32 * 8 * 4);
        run("wmma_gfx12", target, "wmma_f32_fp8", grid, [64, 1, 1], &args(&d_image, &a_image, &b_image, &c_image));
        let d: Vec<f32> = d_image.read();
        for w in 0..WAVES {
            for (form, (a_bits, b_bits)) in [(4, 4), (4, 5), (5, 4), (5, 5)].into_iter().enumerate() {
                // Each byte as the form reads it.
                let a_value = |r: usize, k: usize| fp8_value(fp8_of(a[w][r][k], 4), a_bits);
                let b_value = |k: usize, col: usize| fp8_value(fp8_of(b[w][k][col], 5), b_bits);
                for lane in 0..32 {
                    for e in 0..8 {
                        let (r, col) = wmma_layout_gfx12::cd(lane, e);
                        let want = c[w][r][col] as f64 + (0..16).map(|k| a_value(r, k) * b_value(k, col)).sum::<f64>();
                        let got = d[(4 * (w * 32 + lane) + form) * 8 + e];
                        assert_eq!(got, want as f32, "{target}: fp8 form {form} wave {w} D[{r}][{col}]");
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// MUBUF.
// ---------------------------------------------------------------------------------------------

#[test]
fn raw_buffer_loads_and_stores_honour_offsets_and_num_records() {
    const NUM_RECORDS: usize = 128;
    let source: Vec<u8> = (0..1024u32).map(|k| (k * 37 + 11) as u8).collect();
    let word = |at: usize| u32::from_le_bytes(source[at..at + 4].try_into().unwrap());
    let half = |at: usize| u32::from(u16::from_le_bytes(source[at..at + 2].try_into().unwrap()));
    // An access wholly inside num_records reads memory; one wholly outside reads 0.
    let inside = |at: usize, value: u32| if at < NUM_RECORDS { value } else { 0 };
    let expected_loads = |i: usize| -> [u32; 16] {
        [
            inside(i * 4, word(i * 4)),
            inside(i * 3, u32::from(source[i * 3])),
            inside(i * 2, half(i * 2)),
            inside(i * 8, word(i * 8)),
            inside(i * 8, word(i * 8 + 4)),
            inside(i * 16, word(i * 16)),
            inside(i * 16, word(i * 16 + 4)),
            inside(i * 16, word(i * 16 + 8)),
            inside(i * 16, word(i * 16 + 12)),
            inside(i * 4 + 32, word(i * 4 + 32)),
            word(i % 16 * 4 + 16),
            inside(i * 16, word(i * 16)),
            inside(i * 16, word(i * 16 + 4)),
            inside(i * 16, word(i * 16 + 8)),
            inside(i * 2 + 64, half(i * 2 + 64)),
            0x600D_F00D,
        ]
    };
    // The stores: six resources over parts of a 1024-byte buffer, each smaller than its part.
    let mut expected_stores = vec![0xEEu8; 1024];
    for i in 0..64u32 {
        let mut put = |base: usize, records: usize, offset: usize, bytes: &[u8]| {
            if offset < records {
                expected_stores[base + offset..][..bytes.len()].copy_from_slice(bytes);
            }
        };
        let i_ = i as usize;
        put(0, 96, i_ * 4, &(0xC0DE_0000 | i).to_le_bytes());
        put(256, 40, i_, &[(0x80 | i) as u8]);
        put(320, 64, i_ * 2, &((0xB000 | i) as u16).to_le_bytes());
        put(448, 64, i_ * 8, &[(0x6400_0000 | i).to_le_bytes(), (!i).to_le_bytes()].concat());
        if i < 16 {
            put(576, 128, i_ * 16, &[i, i << 8, i << 16, i << 24].map(u32::to_le_bytes).concat());
        }
        if i < 8 {
            put(832, 48, i_ * 16, &[0x9600_0000 | i, 0x9600_0100 | i, 0x9600_0200 | i].map(u32::to_le_bytes).concat());
        }
    }
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        let out = Buf::zeroed(64 * 16 * 4);
        let src = Buf::of(&source);
        run(
            "buffer",
            target,
            "buffer_loads",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&src), Arg::U32(NUM_RECORDS as u32)],
        );
        let got: Vec<u32> = out.read();
        const NAMES: [&str; 16] = [
            "load_b32",
            "load_u8",
            "load_u16 slc",
            "load_b64 glc (low)",
            "load_b64 glc (high)",
            "load_b128 (0)",
            "load_b128 (1)",
            "load_b128 (2)",
            "load_b128 (3)",
            "load_b32 offset:32",
            "load_b32 soffset 16",
            "load_b96 (0)",
            "load_b96 (1)",
            "load_b96 (2)",
            "load_u16 offset:64",
            "marker",
        ];
        for i in 0..64 {
            for (k, want) in expected_loads(i).into_iter().enumerate() {
                assert_eq!(got[i * 16 + k], want, "{target}: buffer_loads {} at work-item {i}", NAMES[k]);
            }
        }

        let dst = Buf::filled(1024, 0xEE);
        run("buffer", target, "buffer_stores", [64, 1, 1], [64, 1, 1], &[Arg::Buf(&dst)]);
        let got = dst.bytes();
        for (at, (&g, &w)) in got.iter().zip(&expected_stores).enumerate() {
            assert_eq!(g, w, "{target}: buffer_stores byte {at} (0xee where no store may land)");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Atomics.
// ---------------------------------------------------------------------------------------------

/// The old values of n contended atomics on one word are consistent with some order of them:
/// each work-item's new value is another's old value or the final, i.e. the multisets
/// {new(old_i, v_i)} ∪ {initial} and {old_i} ∪ {final} agree.
fn check_chain<T: Ord + Copy + std::fmt::Debug>(
    what: &str,
    initial: T,
    last: T,
    olds: &[T],
    new: impl Fn(usize, T) -> T,
) {
    let mut produced: Vec<T> = olds.iter().enumerate().map(|(i, &old)| new(i, old)).collect();
    produced.push(initial);
    let mut consumed: Vec<T> = olds.to_vec();
    consumed.push(last);
    produced.sort();
    consumed.sort();
    assert_eq!(produced, consumed, "{what}: the old values do not chain from {initial:?} to {last:?}");
}

const AND_MASK: u64 = 0xF0F0_FFF0;
const OR_MASK: u64 = 0x0F0F_000F;
const INC_LIMIT: u64 = 37;
const DEC_LIMIT: u64 = 50;

/// Checks the fourteen shared-word ops of `RMW_SET` (atomics.c) and the per-work-item
/// compare-swaps, over words of `bits` bits (values held in u64, masked).
fn check_rmw_set(what: &str, bits: u32, initial: &[u64], words: &[u64], olds: &[u64], cas: &[u64], vals: &[u64]) {
    let n = vals.len();
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let signed = move |x: u64| if bits == 64 { x as i64 } else { i64::from(x as u32 as i32) };
    let and_mask = move |v: u64| (v | AND_MASK) & mask;
    let or_mask = |v: u64| v & OR_MASK;
    type Op = Box<dyn Fn(u64, u64, usize) -> u64>;
    let ops: [(&str, Op); 13] = [
        ("add", Box::new(move |old, v, _| old.wrapping_add(v) & mask)),
        ("sub", Box::new(move |old, v, _| old.wrapping_sub(v) & mask)),
        ("min_i", Box::new(move |old, v, _| if signed(v) < signed(old) { v } else { old })),
        ("max_i", Box::new(move |old, v, _| if signed(v) > signed(old) { v } else { old })),
        ("min_u", Box::new(|old, v, _| old.min(v))),
        ("max_u", Box::new(|old, v, _| old.max(v))),
        ("and", Box::new(move |old, v, _| old & and_mask(v))),
        ("or", Box::new(move |old, v, _| old | or_mask(v))),
        ("xor", Box::new(|old, v, _| old ^ v)),
        ("swap", Box::new(|_, v, _| v)),
        ("inc", Box::new(|old, _, _| if old >= INC_LIMIT { 0 } else { old + 1 })),
        ("dec", Box::new(|old, _, _| if old == 0 || old > DEC_LIMIT { DEC_LIMIT } else { old - 1 })),
        ("cmpswap", Box::new(|old, _, i| if old == i as u64 { i as u64 + 1 } else { old })),
    ];
    for (k, (name, op)) in ops.iter().enumerate() {
        let olds = &olds[k * n..(k + 1) * n];
        check_chain(&format!("{what} {name}"), initial[k], words[k], olds, |i, old| op(old, vals[i], i));
        // Ops whose final value does not depend on the order: the fold of all of them.
        if !matches!(*name, "swap" | "cmpswap") {
            let fold = (0..n).fold(initial[k], |acc, i| op(acc, vals[i], i));
            assert_eq!(words[k], fold, "{what} {name}: the final value");
        }
    }
    let fold = vals.iter().fold(initial[13], |acc, &v| acc.wrapping_add(v) & mask);
    assert_eq!(words[13], fold, "{what} add without return: the final value");
    for i in 0..n {
        let (initial_cas, success) = (i as u64 * 3, i % 2 == 0);
        assert_eq!(olds[14 * n + i], initial_cas, "{what} uncontended cmpswap {i}: the old value");
        let want = if success { 0x1000 + i as u64 } else { initial_cas };
        assert_eq!(cas[i], want, "{what} uncontended cmpswap {i}: the word");
    }
}

#[test]
fn global_and_lds_atomics_return_consistent_old_values_and_the_right_finals() {
    let mut rng = Rng(0xA70_41C5);
    let initial32: Vec<u32> =
        vec![7, 1000, 0x10, 0x8000_0010, 500, 500, 0xFFFF_FFFF, 0x1000_0000, 0x55AA_55AA, 99, 5, 3, 0, 11, 0];
    let initial64: Vec<u64> = vec![
        7,
        1 << 40,
        0x10,
        0x8000_0000_0000_0010,
        500,
        500,
        u64::MAX,
        0x1000_0000,
        0x55AA_55AA_55AA_55AA,
        99,
        5,
        3,
        0,
        11,
        0,
    ];
    let widen = |v: &[u32]| v.iter().map(|&x| u64::from(x)).collect::<Vec<_>>();
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        // Global, two workgroups of 64.
        let n = 128;
        let vals: Vec<u32> = (0..n).map(|i| if i % 3 == 0 { rng.u32() } else { rng.u32() % 1000 }).collect();
        let vals64: Vec<u64> = (0..n).map(|i| if i % 3 == 0 { rng.next() } else { rng.next() % 100_000 }).collect();
        let cas32: Vec<u32> = (0..n as u32).map(|i| i * 3).collect();
        let cas64: Vec<u64> = (0..n as u64).map(|i| i * 3).collect();

        let (words, olds, cas, v) = (Buf::of(&initial32), Buf::zeroed(15 * n * 4), Buf::of(&cas32), Buf::of(&vals));
        let args = [Arg::Buf(&words), Arg::Buf(&olds), Arg::Buf(&cas), Arg::Buf(&v), Arg::U32(n as u32)];
        run("atomics", target, "global_atomics_32", [n as u32, 1, 1], [64, 1, 1], &args);
        let what = format!("{target}: global_atomics_32");
        check_rmw_set(
            &what,
            32,
            &widen(&initial32),
            &widen(&words.read()),
            &widen(&olds.read()),
            &widen(&cas.read()),
            &widen(&vals),
        );

        let (words, olds, cas, v) = (Buf::of(&initial64), Buf::zeroed(15 * n * 8), Buf::of(&cas64), Buf::of(&vals64));
        let args = [Arg::Buf(&words), Arg::Buf(&olds), Arg::Buf(&cas), Arg::Buf(&v), Arg::U32(n as u32)];
        run("atomics", target, "global_atomics_64", [n as u32, 1, 1], [64, 1, 1], &args);
        check_rmw_set(
            &format!("{target}: global_atomics_64"),
            64,
            &initial64,
            &words.read(),
            &olds.read(),
            &cas.read(),
            &vals64,
        );

        // Floats: small integers, so every order gives the same sums.
        let valsf: Vec<f32> = (0..n).map(|_| rng.int(-500, 500) as f32).collect();
        let initialf = [0.5f32, -1000.0, 1000.0, 2.0];
        let (words, olds, word64, olds64, v) =
            (Buf::of(&initialf), Buf::zeroed(3 * n * 4), Buf::of(&[1.0f64]), Buf::zeroed(n * 8), Buf::of(&valsf));
        let args =
            [Arg::Buf(&words), Arg::Buf(&olds), Arg::Buf(&word64), Arg::Buf(&olds64), Arg::Buf(&v), Arg::U32(n as u32)];
        run("atomics", target, "global_atomics_float", [n as u32, 1, 1], [64, 1, 1], &args);
        check_float_atomics(&format!("{target}: global_atomics_float"), &initialf, &words.read(), &olds.read(), &valsf);
        let (last64, olds64): (f64, Vec<f64>) = (word64.read()[0], olds64.read());
        let bits = |x: f64| x.to_bits();
        check_chain(
            &format!("{target}: global f64 add (compare-swap loop)"),
            bits(1.0),
            bits(last64),
            &olds64.iter().map(|&x| bits(x)).collect::<Vec<_>>(),
            |i, old| bits(f64::from_bits(old) + f64::from(valsf[i]) * 0.25),
        );
        assert_eq!(
            last64,
            1.0 + valsf.iter().map(|&x| f64::from(x) * 0.25).sum::<f64>(),
            "{target}: global f64 add: the final value"
        );

        // LDS: one workgroup of 64 (words 15.. are the uncontended compare-swap words).
        let n = 64;
        let vals = &vals[..n];
        let vals64 = &vals64[..n];
        let valsf = &valsf[..n];
        let words32: Vec<u32> = initial32.iter().copied().chain((0..n as u32).map(|i| i * 3)).collect();
        let words64: Vec<u64> = initial64.iter().copied().chain((0..n as u64).map(|i| i * 3)).collect();
        let (w32, o32, w64, o64, wf, of) = (
            Buf::of(&words32),
            Buf::zeroed(15 * n * 4),
            Buf::of(&words64),
            Buf::zeroed(15 * n * 8),
            Buf::of(&initialf),
            Buf::zeroed(3 * n * 4),
        );
        let (v32, v64, vf) = (Buf::of(vals), Buf::of(vals64), Buf::of(valsf));
        let args = [
            Arg::Buf(&w32),
            Arg::Buf(&o32),
            Arg::Buf(&w64),
            Arg::Buf(&o64),
            Arg::Buf(&wf),
            Arg::Buf(&of),
            Arg::Buf(&v32),
            Arg::Buf(&v64),
            Arg::Buf(&vf),
            Arg::U32(n as u32),
        ];
        run("atomics", target, "lds_atomics", [n as u32, 1, 1], [64, 1, 1], &args);
        let (got32, got64): (Vec<u32>, Vec<u64>) = (w32.read(), w64.read());
        check_rmw_set(
            &format!("{target}: lds_atomics 32"),
            32,
            &widen(&initial32),
            &widen(&got32[..15]),
            &widen(&o32.read()),
            &widen(&got32[15..]),
            &widen(vals),
        );
        check_rmw_set(
            &format!("{target}: lds_atomics 64"),
            64,
            &initial64,
            &got64[..15],
            &o64.read(),
            &got64[15..],
            vals64,
        );
        check_float_atomics(&format!("{target}: lds_atomics float"), &initialf, &wf.read(), &of.read(), valsf);
    }
}

/// Float ops 0 add, 1 max, 2 min (with old values), 3 add (no return).
fn check_float_atomics(what: &str, initial: &[f32], words: &[f32], olds: &[f32], vals: &[f32]) {
    let n = vals.len();
    let bits = |x: f32| x.to_bits();
    type FloatOp = fn(f32, f32) -> f32;
    let ops: [(&str, FloatOp); 3] = [("add", |a, b| a + b), ("max", f32::max), ("min", f32::min)];
    for (k, (name, op)) in ops.iter().enumerate() {
        let olds: Vec<u32> = olds[k * n..(k + 1) * n].iter().map(|&x| bits(x)).collect();
        check_chain(&format!("{what} {name}"), bits(initial[k]), bits(words[k]), &olds, |i, old| {
            bits(op(f32::from_bits(old), vals[i]))
        });
        assert_eq!(words[k], vals.iter().fold(initial[k], |acc, &v| op(acc, v)), "{what} {name}: the final value");
    }
    assert_eq!(words[3], vals.iter().fold(initial[3], |acc, &v| acc + v), "{what} add without return: the final value");
}

// ---------------------------------------------------------------------------------------------
// The benchmark kernels: GEMM, reduction, half GEMM.
// ---------------------------------------------------------------------------------------------

#[test]
fn tiled_gemm_with_bias_and_relu_matches_the_host_bit_for_bit() {
    let mut rng = Rng(0x6E_3300);
    for (m, n, k) in [(32usize, 48usize, 64usize), (37, 29, 21)] {
        let a: Vec<f32> = (0..m * k).map(|_| rng.float(-1.0, 1.0) as f32).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.float(-1.0, 1.0) as f32).collect();
        let bias: Vec<f32> = (0..n).map(|_| rng.float(-2.0, 2.0) as f32).collect();
        // The kernel's order: fma over k (padded with zeros to a multiple of 16), then + bias, ReLU.
        let want: Vec<f32> = (0..m * n)
            .map(|at| {
                let (row, col) = (at / n, at % n);
                let mut acc = 0.0f32;
                for kk in 0..k.next_multiple_of(16) {
                    let (x, y) = if kk < k { (a[row * k + kk], b[kk * n + col]) } else { (0.0, 0.0) };
                    acc = x.mul_add(y, acc);
                }
                let v = acc + bias[col];
                if v > 0.0 { v } else { 0.0 }
            })
            .collect();
        for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
            let (c_buf, a_buf, b_buf, bias_buf) =
                (Buf::filled(m * n * 4, 0xFF), Buf::of(&a), Buf::of(&b), Buf::of(&bias));
            let grid = [n.next_multiple_of(16) as u32, m.next_multiple_of(16) as u32, 1];
            let args = [
                Arg::Buf(&c_buf),
                Arg::Buf(&a_buf),
                Arg::Buf(&b_buf),
                Arg::Buf(&bias_buf),
                Arg::U32(m as u32),
                Arg::U32(n as u32),
                Arg::U32(k as u32),
            ];
            run("gemm", target, "gemm_bias_relu", grid, [16, 16, 1], &args);
            let got: Vec<f32> = c_buf.read();
            for at in 0..m * n {
                assert_eq!(
                    got[at].to_bits(),
                    want[at].to_bits(),
                    "{target}: gemm {m}x{n}x{k} C[{}][{}]",
                    at / n,
                    at % n
                );
            }
        }
    }
}

/// Lanes paired by xor 1, 2, 4, 8 (each row of 16 ends with its sum), as `row_sum_f` does.
fn row_butterfly(v: &mut [f32; 32]) {
    for k in [1, 2, 4, 8] {
        let before = *v;
        for lane in 0..32 {
            v[lane] = before[lane] + before[lane ^ k];
        }
    }
}

#[test]
fn dpp_reduction_partials_and_atomic_total_match_the_host() {
    let mut rng = Rng(0x5ED_0CE);
    let n: usize = 256 * 5 + 77;
    let groups = n.div_ceil(256);
    let values: Vec<f32> = (0..n).map(|_| rng.float(-1.0, 1.0) as f32).collect();
    let ints: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    // The kernel's order, repeated.
    let partials: Vec<f32> = (0..groups)
        .map(|group| {
            let wave_sums: Vec<f32> = (0..8)
                .map(|wave| {
                    let mut v: [f32; 32] = std::array::from_fn(|lane| {
                        let i = group * 256 + wave * 32 + lane;
                        if i < n { values[i] } else { 0.0 }
                    });
                    row_butterfly(&mut v);
                    v[0] + v[16]
                })
                .collect();
            let mut v: [f32; 32] = std::array::from_fn(|lane| if lane < 8 { wave_sums[lane] } else { 0.0 });
            row_butterfly(&mut v);
            v[0] + v[16]
        })
        .collect();
    let total = ints.iter().fold(7u32, |sum, &x| sum.wrapping_add(x));
    for target in TARGETS.into_iter().chain(GFX12_TARGETS) {
        let (out, sum, input, input_u) = (Buf::zeroed(groups * 4), Buf::of(&[7u32]), Buf::of(&values), Buf::of(&ints));
        let args = [Arg::Buf(&out), Arg::Buf(&sum), Arg::Buf(&input), Arg::Buf(&input_u), Arg::U32(n as u32)];
        run("reduce", target, "reduce_sum", [(groups * 256) as u32, 1, 1], [256, 1, 1], &args);
        let got: Vec<f32> = out.read();
        for group in 0..groups {
            assert_eq!(
                got[group].to_bits(),
                partials[group].to_bits(),
                "{target}: reduce_sum partial of workgroup {group}"
            );
        }
        assert_eq!(sum.read::<u32>()[0], total, "{target}: reduce_sum atomic total");
    }
}

#[test]
fn half_gemms_with_dot2_and_packed_fma_match_the_host() {
    let mut rng = Rng(0x0004_6E33);
    let (m, n, k) = (20usize, 24usize, 64usize);
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        // v_dot2_f32_f16: eighths in [-2, 2]; every partial sum is exact in f32.
        let a: Vec<u16> = (0..m * k).map(|_| f16(rng.int(-16, 16) as f64 / 8.0)).collect();
        let bt: Vec<u16> = (0..n * k).map(|_| f16(rng.int(-16, 16) as f64 / 8.0)).collect();
        let exact =
            |r: usize, c: usize| (0..k).map(|kk| f16_value(a[r * k + kk]) * f16_value(bt[c * k + kk])).sum::<f64>();
        let grid = [n.next_multiple_of(16) as u32, m.next_multiple_of(16) as u32, 1];
        let (c_buf, a_buf, b_buf) = (Buf::filled(m * n * 4, 0xFF), Buf::of(&a), Buf::of(&bt));
        let args = [
            Arg::Buf(&c_buf),
            Arg::Buf(&a_buf),
            Arg::Buf(&b_buf),
            Arg::U32(m as u32),
            Arg::U32(n as u32),
            Arg::U32(k as u32),
        ];
        run("hgemm", target, "hgemm_dot2", grid, [16, 16, 1], &args);
        let got: Vec<f32> = c_buf.read();
        for (at, &g) in got.iter().enumerate() {
            assert_eq!(g, exact(at / n, at % n) as f32, "{target}: hgemm_dot2 C[{}][{}]", at / n, at % n);
        }

        // v_pk_fma_f16: arbitrary halves; the host repeats the f16 roundings in order.
        let a: Vec<u16> = (0..m * k).map(|_| f16(rng.float(-1.0, 1.0))).collect();
        let bt: Vec<u16> = (0..n * k).map(|_| f16(rng.float(-1.0, 1.0))).collect();
        let (c_buf, a_buf, b_buf) = (Buf::filled(m * n * 2, 0xFF), Buf::of(&a), Buf::of(&bt));
        let args = [
            Arg::Buf(&c_buf),
            Arg::Buf(&a_buf),
            Arg::Buf(&b_buf),
            Arg::U32(m as u32),
            Arg::U32(n as u32),
            Arg::U32(k as u32),
        ];
        run("hgemm", target, "hgemm_pk_fma", grid, [16, 16, 1], &args);
        let got: Vec<u16> = c_buf.read();
        for (at, &g) in got.iter().enumerate() {
            let (r, c) = (at / n, at % n);
            let (mut lo, mut hi) = (0u16, 0u16);
            for p in 0..k / 2 {
                lo = soft::f16_fma(a[r * k + 2 * p], bt[c * k + 2 * p], lo);
                hi = soft::f16_fma(a[r * k + 2 * p + 1], bt[c * k + 2 * p + 1], hi);
            }
            let want = soft::f16_op(lo, hi, |x, y| x + y);
            assert_eq!(g, want, "{target}: hgemm_pk_fma C[{r}][{c}]");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The MODE register and the clocks.
// ---------------------------------------------------------------------------------------------

#[test]
fn mode_register_round_and_denorm_fields_change_arithmetic_and_the_clocks_advance() {
    let inputs: [f32; 9] = [
        1.0,
        1.5 * 2f32.powi(-24),
        -1.0,
        -1.5 * 2f32.powi(-24),
        2f32.powi(-70),
        1.5 * 2f32.powi(-70),
        f32::from_bits(0x300),
        0.0,
        1.0 + 2f32.powi(-11) + 2f32.powi(-13),
    ];
    let inputs64 = [1.0f64, 1.5 * 2f64.powi(-53)];
    let inputs16 = [0x3C00u32, 0x1200, (1 << 24) + 1];
    for target in TARGETS.into_iter().chain(GFX9_TARGETS) {
        let (out, input, input64, input16) =
            (Buf::zeroed(40 * 4), Buf::of(&inputs), Buf::of(&inputs64), Buf::of(&inputs16));
        run(
            "mode",
            target,
            "mode_register",
            [1, 1, 1],
            [1, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&input), Arg::Buf(&input64), Arg::Buf(&input16)],
        );
        let got: Vec<u32> = out.read();
        let mut failures = Failures::default();
        let mut expect = |index: usize, want: u32, what: &str| {
            failures
                .check(got[index] == want, || format!("out[{index}]: {what}: got {:#x}, want {want:#x}", got[index]));
        };
        expect(0, 0x3F0, "MODE[9:0] at entry (round nearest, denormals kept, DX10_CLAMP, IEEE)");
        for (mode, (positive, negative)) in [
            (0x3F80_0001, 0xBF80_0001),
            (0x3F80_0001, 0xBF80_0000),
            (0x3F80_0000, 0xBF80_0001),
            (0x3F80_0000, 0xBF80_0000),
        ]
        .into_iter()
        .enumerate()
        {
            let name = ["nearest even", "toward +inf", "toward -inf", "toward zero"][mode];
            expect(1 + mode, positive, &format!("1 + 1.5 × 2^-24 rounded {name}"));
            expect(5 + mode, negative, &format!("-1 - 1.5 × 2^-24 rounded {name}"));
        }
        expect(9, 0x3F3, "MODE[9:0] while rounding f32 toward zero");
        expect(10, 0x0000_0001, "f64 1 + 1.5 × 2^-53 nearest even (low word)");
        expect(11, 0x3FF0_0000, "f64 1 + 1.5 × 2^-53 nearest even (high word)");
        expect(12, 0x0000_0000, "f64 1 + 1.5 × 2^-53 toward zero (low word)");
        expect(13, 0x3FF0_0000, "f64 1 + 1.5 × 2^-53 toward zero (high word)");
        expect(14, 0x0000_0300, "2^-70 × 1.5 × 2^-70 with denormals kept");
        expect(15, 0x0000_0000, "2^-70 × 1.5 × 2^-70 with f32 denormals flushed");
        expect(16, 0x0000_0000, "a denormal + 0 with f32 denormals flushed");
        expect(17, 0x3C0, "MODE[9:0] with f32 denormals flushed");
        expect(18, 0x0000_0300, "the denormal product after restoring the mode");
        expect(24, 0x3C01, "f16 1 + 1.5 × 2^-11 nearest even");
        expect(25, 0x3C00, "f16 1 + 1.5 × 2^-11 toward zero");
        expect(26, 0x0000_0000, "v_fma_f64 1 × 1 + 1.5 × 2^-53 toward zero (low word)");
        expect(27, 0x3FF0_0000, "v_fma_f64 1 × 1 + 1.5 × 2^-53 toward zero (high word)");
        expect(28, 0x3F80_0001, "v_cvt_f32_f64 of 1 + 1.5 × 2^-25 toward +inf");
        expect(29, 0xBF80_0001, "v_cvt_f32_f64 of -(1 + 1.5 × 2^-25) toward -inf");
        expect(30, 0x4B80_0001, "v_cvt_f32_u32 of 2^24 + 1 toward +inf (2^24 + 2)");
        expect(31, 0x4B80_0000, "v_cvt_f32_u32 of 2^24 + 1 toward zero (2^24)");
        expect(32, 0x3C01, "v_cvt_f16_f32 of 1 + 2^-11 + 2^-13 toward +inf");
        expect(33, 0x3C00, "v_cvt_f16_f32 of 1 + 2^-11 + 2^-13 toward zero");
        let (t0, t1) = (u64::from(got[19]) | u64::from(got[21]) << 32, u64::from(got[20]) | u64::from(got[22]) << 32);
        failures.check(t1 >= t0, || format!("the realtime clock went back: {t0} then {t1}"));
        if isa_of(target) == Isa::Gfx11 {
            // gfx10.3 reads s_memtime there: a 64-bit count.
            failures.check(got[23] < 1 << 20, || format!("SHADER_CYCLES is a 20-bit counter, got {:#x}", got[23]));
        }
        failures.assert_none(&format!("{target}: mode_register"));
    }
}

// ---------------------------------------------------------------------------------------------
// Wave64: lane masks in SGPR pairs, and the lane exchanges that cross the halves.
// ---------------------------------------------------------------------------------------------

#[test]
fn wave64_masks_lane_counts_readlanes_and_permutes_cross_the_halves() {
    let mut rng = Rng(0x0064_1A4E_5EED);
    let v: Vec<u32> = (0..64).map(|_| rng.u32() % 3000).collect();
    let lanes = 0..64usize;
    let low_mask_bits = |mask: u32, below: usize| (mask as u64 & ((1u64 << below) - 1)).count_ones();
    let first_high =
        lanes.clone().find(|&lane| lane >= 45 && v[lane] & 2 != 0).expect("test data: a lane past 44 with bit 1");
    let ballot = lanes.clone().filter(|&lane| v[lane] & 1 == 1).fold(0u64, |mask, lane| mask | 1 << lane);
    let mut permuted = [0u32; 64];
    for lane in lanes.clone() {
        permuted[(lane * 5 + 3) % 64] = v[lane];
    }
    for target in WAVE64_TARGETS {
        let (out, ballots, input) = (Buf::zeroed(14 * 64 * 4), Buf::zeroed(64 * 8), Buf::of(&v));
        run(
            "wave64",
            target,
            "wave64_lanes",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&ballots), Arg::Buf(&input)],
        );
        let got: Vec<u32> = out.read();
        let mut failures = Failures::default();
        let mut expect = |pattern: usize, what: &str, want: &dyn Fn(usize) -> u32| {
            let want: Vec<u32> = lanes.clone().map(want).collect();
            let got = &got[pattern * 64..pattern * 64 + 64];
            failures.check(got == want.as_slice(), || format!("{what}:\n    got  {got:08x?}\n    want {want:08x?}"));
        };
        expect(0, "mbcnt of all ones (the lane id)", &|lane| lane as u32);
        expect(1, "mbcnt_lo 0x12345678, mbcnt_hi 0xf0f0f0f0", &|lane| {
            if lane < 32 {
                low_mask_bits(0x1234_5678, lane)
            } else {
                0x1234_5678u32.count_ones() + low_mask_bits(0xF0F0_F0F0, lane - 32)
            }
        });
        expect(2, "readlane 40 + readlane 7", &|_| v[40].wrapping_add(v[7]));
        expect(3, "ds_bpermute (37 lane + 5) % 64", &|lane| v[(lane * 37 + 5) % 64]);
        expect(4, "ds_bpermute lane + 32 (the other half)", &|lane| v[(lane + 32) % 64]);
        expect(5, "ds_permute (5 lane + 3) % 64", &|lane| permuted[lane]);
        expect(6, "compare and cndmask", &|lane| if v[lane] > 1000 { v[lane] * 3 } else { v[lane] + 7 });
        let wide = |lane: usize| {
            (v[lane] as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add((v[(lane + 1) % 64] as u64) << 32 | lane as u64)
        };
        expect(7, "64-bit multiply-add, low (carry chains)", &|lane| wide(lane) as u32);
        expect(8, "64-bit multiply-add, high", &|lane| (wide(lane) >> 32) as u32);
        expect(9, "readfirstlane with only high lanes active", &|lane| {
            if lane >= 45 && v[lane] & 2 != 0 { v[first_high] } else { u32::MAX }
        });
        expect(10, "a loop each lane leaves on its own count", &|lane| {
            (0..v[lane] % 13).fold(0u32, |acc, i| acc.wrapping_mul(31).wrapping_add(i).wrapping_add(lane as u32))
        });
        expect(11, "row_xmask:5 in each row", &|lane| v[(lane & !15) | ((lane & 15) ^ 5)]);
        expect(12, "permlanex16: the other row of the half", &|lane| v[lane ^ 16]);
        if target.starts_with("gfx11") {
            expect(13, "permlane64: the other half", &|lane| v[lane ^ 32]);
        } else {
            expect(13, "v ^ 0x5a5a5a5a", &|lane| v[lane] ^ 0x5A5A_5A5A);
        }
        let got_ballots: Vec<u64> = ballots.read();
        failures.check(got_ballots.iter().all(|&mask| mask == ballot), || {
            format!("ballot of v & 1: got {got_ballots:016x?}, want {ballot:016x} in every lane")
        });
        failures.assert_none(&format!("{target}: wave64_lanes (input {v:?})"));
    }
}

#[test]
fn wave64_atomic_scans_hand_each_lane_its_prefix_across_both_halves() {
    let mut rng = Rng(0x0006_4A70_B1C5);
    // 1000 items in workgroups of 256: the last workgroup's last wave has 40 lanes, all in the
    // low half and the first 8 of the high.
    let n = 1000usize;
    let values: Vec<u32> = (0..n).map(|_| 1 + rng.u32() % 50).collect();
    for target in WAVE64_TARGETS {
        let (total, olds, input) = (Buf::of(&[7u32]), Buf::zeroed(n * 4), Buf::of(&values));
        let args = [Arg::Buf(&total), Arg::Buf(&olds), Arg::Buf(&input), Arg::U32(n as u32)];
        run("wave64", target, "wave64_atomic_scan", [n.next_multiple_of(256) as u32, 1, 1], [256, 1, 1], &args);
        let (total, olds): (Vec<u32>, Vec<u32>) = (total.read(), olds.read());
        let sum = 7 + values.iter().sum::<u32>();
        assert_eq!(total[0], sum, "{target}: the total");
        check_chain(&format!("{target}: wave64_atomic_scan"), 7, sum, &olds, |i, old| old + values[i]);
        // Within a wave the optimizer hands out prefixes in lane order.
        for i in (0..n - 1).filter(|i| (i + 1) % 64 != 0) {
            assert_eq!(olds[i + 1], olds[i] + values[i], "{target}: lanes {} and {} of a wave", i % 64, i % 64 + 1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Typed buffer accesses: MTBUF and the MUBUF format forms.
// ---------------------------------------------------------------------------------------------

/// The gfx11 targets the typed-buffer kernel is built for (gfx10 numbers its formats otherwise).
const TYPED_TARGETS: [&str; 5] = ["gfx1100", "gfx11-generic", "gfx1200", "gfx1201", "gfx12-generic"];

#[test]
fn typed_buffer_loads_and_stores_convert_each_format_as_the_guide_says() {
    let mut rng = Rng(0x0007_B0FF_E125);
    let lanes = 64usize;
    let input: Vec<u8> = (0..1024).map(|_| rng.u32() as u8).collect();
    let f16_at = |at: usize| soft::f16_value(u16::from_le_bytes([input[at], input[at + 1]])) as f32;
    for target in TYPED_TARGETS {
        let (out, inp) = (Buf::zeroed(lanes * 7 * 16), Buf::of(&input));
        run(
            "typed_buffer",
            target,
            "typed_loads",
            [lanes as u32, 1, 1],
            [lanes as u16, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&inp)],
        );
        let got: Vec<u32> = out.read();
        for lane in 0..lanes {
            let slot = |k: usize| &got[(lane * 7 + k) * 4..(lane * 7 + k) * 4 + 4];
            let bytes = |at: usize| -> [u8; 4] { input[at..at + 4].try_into().unwrap() };
            let floats = |values: [f32; 4]| values.map(f32::to_bits);
            let b4 = bytes(4 * lane);
            let want = [
                ("8_8_8_8_UNORM", floats(b4.map(|b| b as f32 / 255.0))),
                ("8_8_8_8_SNORM", floats(b4.map(|b| (b as i8 as f32 / 127.0).max(-1.0)))),
                ("8_8_8_8_SINT", b4.map(|b| b as i8 as i32 as u32)),
                ("16_16_FLOAT (z 0, w 1)", floats([f16_at(4 * lane), f16_at(4 * lane + 2), 0.0, 1.0])),
                ("16_16_16_16_FLOAT, d16", {
                    let w: [u8; 8] = input[8 * lane..8 * lane + 8].try_into().unwrap();
                    [
                        u32::from_le_bytes(w[..4].try_into().unwrap()),
                        u32::from_le_bytes(w[4..].try_into().unwrap()),
                        0,
                        0,
                    ]
                }),
                ("16_16_16_16_SNORM", {
                    let half = |k: usize| i16::from_le_bytes([input[8 * lane + 2 * k], input[8 * lane + 2 * k + 1]]);
                    floats([0, 1, 2, 3].map(|k| (half(k) as f32 / 32767.0).max(-1.0)))
                }),
                ("V# 8_8_8_8_USCALED, selects w z y x", floats([b4[3], b4[2], b4[1], b4[0]].map(|b| b as f32))),
            ];
            for (k, (what, want)) in want.iter().enumerate() {
                // A NaN half widens to some f32 NaN.
                let same = slot(k).iter().zip(want).all(|(&got, &want)| same_f32(got, want));
                assert!(same, "{target}: typed_loads lane {lane}: {what}: got {:08x?}, want {want:08x?}", slot(k));
            }
        }

        let mut specials = [f32::NAN, 0.5, -0.5, 1.0 / 510.0, 2.0, -2.0, 0.0, -0.0].into_iter().cycle();
        let floats: Vec<[f32; 4]> = (0..lanes)
            .map(|lane| {
                std::array::from_fn(|k| {
                    if (lane + k) % 5 == 0 { specials.next().unwrap() } else { rng.float(-1.5, 1.5) as f32 }
                })
            })
            .collect();
        let ints: Vec<[u32; 4]> = (0..lanes).map(|_| std::array::from_fn(|_| rng.u32())).collect();
        let (out, fin, iin) = (Buf::zeroed(2048), Buf::of(&floats), Buf::of(&ints));
        run(
            "typed_buffer",
            target,
            "typed_stores",
            [lanes as u32, 1, 1],
            [lanes as u16, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&fin), Arg::Buf(&iin)],
        );
        let got: Vec<u8> = out.read();
        let u16_at = |at: usize| u16::from_le_bytes([got[at], got[at + 1]]);
        let unorm = |x: f64, max: f64| if x.is_nan() { 0.0 } else { (x.clamp(0.0, 1.0) * max).round_ties_even() };
        let snorm = |x: f64, max: f64| if x.is_nan() { 0.0 } else { (x.clamp(-1.0, 1.0) * max).round_ties_even() };
        for lane in 0..lanes {
            for k in 0..4 {
                let (f, i) = (floats[lane][k] as f64, ints[lane][k]);
                let half = soft::f16(f);
                let cases = [
                    ("8_8_8_8_UNORM", got[4 * lane + k] as u32, unorm(f, 255.0) as u32),
                    (
                        "16_16_16_16_SNORM",
                        u16_at(256 + 8 * lane + 2 * k) as u32,
                        snorm(f, 32767.0) as i32 as u16 as u32,
                    ),
                    ("8_8_8_8_UINT", got[768 + 4 * lane + k] as u32, i & 0xFF),
                    (
                        "16_16_16_16_UNORM from halves",
                        u16_at(1024 + 8 * lane + 2 * k) as u32,
                        unorm(soft::f16_value(half), 65535.0) as u32,
                    ),
                ];
                for (what, got, want) in cases {
                    assert_eq!(got, want, "{target}: typed_stores lane {lane} component {k} ({f}): {what}");
                }
                if k < 2 {
                    let got = u16_at(1536 + 4 * lane + 2 * k);
                    assert!(
                        got == half || (f.is_nan() && soft::is_nan16(got)),
                        "{target}: V# 16_16_FLOAT lane {lane} component {k}: {got:04x}, want {half:04x}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// v_trig_preop_f64.
// ---------------------------------------------------------------------------------------------

/// The fraction bits of 2/π in 24-bit chunks, as fdlibm's `__kernel_rem_pio2` tables them
/// (`ipio2`, e_rem_pio2.c): 1,584 bits, a source independent of the interpreter's own table.
const IPIO2: [u32; 66] = [
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163, 0xABDEBB, 0xC561B7,
    0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129, 0xA73EE8, 0x8235F5, 0x2EBB44, 0x84E99C,
    0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C, 0x845F8B, 0xBDF928, 0x3B1FF8, 0x97FFDE, 0x05980F, 0xEF2F11,
    0x8B5A0A, 0x6D1F6D, 0x367ECF, 0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D, 0x7527BA, 0xC7EBE5, 0xF17B3D, 0x0739F7,
    0x8A5292, 0xEA6BFB, 0x5FB11F, 0x8D5D08, 0x560330, 0x46FC7B, 0x6BABF0, 0xCFBC20, 0x9AF436, 0x1DA9E3, 0x91615E,
    0xE61B08, 0x659985, 0x5F14A0, 0x68408D, 0xFFD880, 0x4D7327, 0x310606, 0x1556CA, 0x73A8C9, 0x60E27B, 0xC08C6B,
];

/// The RDNA3 ISA guide's V_TRIG_PREOP_F64, from `IPIO2`: the 53 fraction bits of 2/π from bit
/// `shift` (only the first 1,201 exist), times 2^(−53 − shift) (+128 for exponents ≥ 1968),
/// rounded toward zero.
fn trig_preop_reference(x: f64, segment: u32) -> f64 {
    let exponent = ((x.to_bits() >> 52) & 0x7FF) as i64;
    let shift = i64::from(segment & 31) * 53 + (exponent - 1077).max(0);
    let bit = |index: i64| -> u64 {
        if index > 1200 { 0 } else { u64::from(IPIO2[index as usize / 24] >> (23 - index % 24) & 1) }
    };
    let window = (0..53).fold(0u64, |value, offset| value << 1 | bit(shift + offset));
    let scale = -53 - shift + if exponent >= 1968 { 128 } else { 0 };
    if window == 0 {
        return 0.0;
    }
    // 2^e for e in [-1074, 1023], from its bits.
    let pow2 =
        |e: i64| if e >= -1022 { f64::from_bits(((e + 1023) as u64) << 52) } else { f64::from_bits(1 << (e + 1074)) };
    let top = 63 - i64::from(window.leading_zeros());
    if top + scale >= -1022 {
        // A normal result: exact (the window has 53 bits).
        return window as f64 * pow2(scale);
    }
    // A denormal one, in units of 2^-1074, the bits below them dropped.
    let units = if scale + 1074 >= 0 {
        window << (scale + 1074)
    } else {
        window.checked_shr((-(scale + 1074)) as u32).unwrap_or(0)
    };
    f64::from_bits(units)
}

#[test]
fn trig_preop_gives_the_segments_of_two_over_pi_that_fdlibm_tables() {
    let mut rng = Rng(0x0781_994E_0F64);
    let mut xs = vec![
        1.0,
        0.5,
        1e10,
        -3.5e22,
        1e300,
        f64::MAX,
        2f64.powi(1000),
        f64::from_bits(1078 << 52),
        f64::from_bits(1968 << 52),
    ];
    let mut segments = vec![0u32, 1, 2, 0, 1, 2, 0, 31, 3];
    while xs.len() < 32 {
        xs.push(f64::from_bits(
            rng.u32() as u64 | u64::from(rng.u32() % 0x7FF) << 52 | u64::from(rng.u32()) << 32 & 0x000F_FFFF_0000_0000,
        ));
        segments.push(rng.u32() % 32);
    }
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        let (out, x, segment) = (Buf::zeroed(32 * 8), Buf::of(&xs), Buf::of(&segments));
        run(
            "trig_preop",
            target,
            "trig_preop",
            [32, 1, 1],
            [32, 1, 1],
            &[Arg::Buf(&out), Arg::Buf(&x), Arg::Buf(&segment)],
        );
        let got: Vec<f64> = out.read();
        for i in 0..32 {
            let want = trig_preop_reference(xs[i], segments[i]);
            assert_eq!(
                got[i].to_bits(),
                want.to_bits(),
                "{target}: trig_preop({:e}, {}): got {:e}, want {want:e}",
                xs[i],
                segments[i],
                got[i]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `idioms.c`: what compilers emit that the interpreter's own kernels did not reach (issue 54).
// ---------------------------------------------------------------------------------------------

#[test]
fn abs_of_a_uniform_value_runs_as_the_scalar_abs() {
    let cases = [(0, 0), (5, 9), (-5, 9), (-7, -7), (i32::MAX, 1), (-i32::MAX, -1), (-123_456, 654_321)];
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        for (a, b) in cases {
            let out = Buf::zeroed(64 * 4);
            run(
                "idioms",
                target,
                "abs_uniform",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Buf(&out), Arg::U32(a as u32), Arg::U32(b as u32)],
            );
            let got: Vec<i32> = out.read();
            for (i, got) in got.into_iter().enumerate() {
                let want =
                    a.unsigned_abs().wrapping_add(a.wrapping_sub(b).unsigned_abs()).wrapping_add(i as u32) as i32;
                assert_eq!(got, want, "{target}: |{a}| + |{a} - {b}| + {i}");
            }
        }
    }
}

/// Pairs that reach every scaling case of the compiler's division sequence: subnormal, tiny,
/// huge and zero divisors and dividends, quotients that overflow to infinity and underflow to
/// zero or a subnormal, and infinities and NaN.
fn division_pairs<T: Copy>(edges: &[T], rng: &mut Rng, random: impl Fn(&mut Rng) -> T) -> (Vec<T>, Vec<T>) {
    let mut n = Vec::new();
    let mut d = Vec::new();
    for &x in edges {
        for &y in edges {
            n.push(x);
            d.push(y);
        }
    }
    while n.len() % 64 != 0 || n.len() < 512 {
        n.push(random(rng));
        d.push(random(rng));
    }
    (n, d)
}

#[test]
fn f64_and_f32_division_are_ieee_for_subnormal_huge_and_zero_operands() {
    let mut rng = Rng(0xD1_5C01);
    let edges64 = [
        0.0,
        -0.0,
        f64::from_bits(1),
        -f64::from_bits(7),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::MIN_POSITIVE,
        1e-300,
        0.1,
        1.0,
        -3.0,
        1e300,
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
    ];
    let (n, d) = division_pairs(&edges64, &mut rng, |rng| f64::from_bits(rng.next()));
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        let (out, n_buf, d_buf) = (Buf::zeroed(n.len() * 8), Buf::of(&n), Buf::of(&d));
        let args = [Arg::Buf(&out), Arg::Buf(&n_buf), Arg::Buf(&d_buf)];
        run("idioms", target, "divide_f64", [n.len() as u32, 1, 1], [64, 1, 1], &args);
        let got: Vec<f64> = out.read();
        for i in 0..n.len() {
            let want = n[i] / d[i];
            let same = got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan());
            assert!(same, "{target}: {:e} / {:e} gave {:e}, IEEE {want:e}", n[i], d[i], got[i]);
        }
    }
    let edges32 = [
        0.0,
        -0.0,
        f32::from_bits(1),
        f32::from_bits(0x007F_FFFF),
        f32::MIN_POSITIVE,
        1e-30,
        0.1,
        1.0,
        -3.0,
        1e30,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
    ];
    let (n, d) = division_pairs(&edges32, &mut rng, |rng| f32::from_bits(rng.u32()));
    for target in TARGETS.into_iter().chain(GFX12_TARGETS) {
        let (out, n_buf, d_buf) = (Buf::zeroed(n.len() * 4), Buf::of(&n), Buf::of(&d));
        let args = [Arg::Buf(&out), Arg::Buf(&n_buf), Arg::Buf(&d_buf)];
        run("idioms", target, "divide_f32", [n.len() as u32, 1, 1], [64, 1, 1], &args);
        let got: Vec<f32> = out.read();
        for i in 0..n.len() {
            let want = n[i] / d[i];
            let same = got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan());
            assert!(same, "{target}: {:e} / {:e} gave {:e}, IEEE {want:e}", n[i], d[i], got[i]);
        }
    }
}

#[test]
fn shared_and_private_memory_through_generic_pointers_reach_lds_and_scratch() {
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        for size in [64u32, 256] {
            for to_global in [0, 1] {
                let groups = 3u32;
                let n = size * groups;
                let (out, scratch) = (Buf::filled((n + groups) as usize * 4, 0xEE), Buf::zeroed(257 * 4));
                let args = [Arg::Buf(&out), Arg::Buf(&scratch), Arg::U32(to_global)];
                // One workgroup at a time shares `scratch` in the global form.
                run("idioms", target, "generic_shared", [n, 1, 1], [size as u16, 1, 1], &args);
                let got: Vec<i32> = out.read();
                for group in 0..groups {
                    for lane in 0..size {
                        let neighbour = group * size + (lane + 1) % size;
                        assert_eq!(
                            got[(group * size + lane) as usize],
                            (neighbour * 3 + 1) as i32,
                            "{target}: lane {lane}"
                        );
                    }
                    assert_eq!(got[(n + group) as usize], size as i32, "{target}: the counter of group {group}");
                }
            }
        }
        let order: Vec<u32> = (0..64u32).map(|k| (k * 37 + 11) % 64 + 64 * (k % 3)).collect();
        for to_global in [0, 1] {
            let n = 96u32;
            let (out, scratch, order_buf) =
                (Buf::zeroed(n as usize * 4), Buf::zeroed(n as usize * 64 * 4), Buf::of(&order));
            let args = [Arg::Buf(&out), Arg::Buf(&scratch), Arg::Buf(&order_buf), Arg::U32(to_global)];
            run("idioms", target, "generic_private", [n, 1, 1], [32, 1, 1], &args);
            let got: Vec<i32> = out.read();
            for i in 0..n {
                let mut slots = [0i32; 64];
                for (k, &at) in order.iter().enumerate() {
                    slots[(at & 63) as usize] = ((i ^ k as u32) * k as u32) as i32;
                }
                let want =
                    slots.iter().enumerate().map(|(s, v)| v.wrapping_mul(s as i32 + 1)).fold(0i32, i32::wrapping_add);
                assert_eq!(got[i as usize], want, "{target}: work-item {i} (global form: {to_global})");
            }
        }
    }
}

#[test]
fn a_wave_spinning_on_what_a_later_wave_of_its_workgroup_writes_sees_it() {
    for target in TARGETS.into_iter().chain(GFX9_TARGETS).chain(GFX12_TARGETS) {
        for symbol in ["wave_handoff", "wave_handoff_sleep"] {
            let (size, groups) = (4 * wave_width(target), 2u32);
            let out = Buf::zeroed((size * groups) as usize * 4);
            let value = 0x5A00;
            run(
                "idioms",
                target,
                symbol,
                [size * groups, 1, 1],
                [size as u16, 1, 1],
                &[Arg::Buf(&out), Arg::U32(value)],
            );
            let got: Vec<u32> = out.read();
            for (i, got) in got.into_iter().enumerate() {
                let first_wave = (i as u32 % size) < wave_width(target);
                let want = i as u32 + if first_wave { value } else { 0 };
                assert_eq!(got, want, "{target} {symbol}: work-item {i}");
            }
        }
    }
}
