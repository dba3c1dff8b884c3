//! The kernarg segment exactly as the device sees it. This binary replaces the CPU implementation
//! of the fixture's `store_value(u32* out, u32 value, u32 count)` with one that copies its own
//! kernarg segment (and its address, and its packet's setup dimensions) into `out`, so the test
//! can check binding pointers, constants, the hidden arguments at the offsets the code object's
//! metadata declares, raw kernargs, the segment's alignment as the kernarg ring wraps, and that a
//! direct dispatch and every way of running one from a command buffer give the kernel the same
//! segment and work dimension.

mod common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use aqueduct_abi::{HostBuild, WorkgroupContext};
use aqueduct_codeobject::{CodeObject, KernelArg, ValueKind};
use aqueduct_engine::{
    BindingTable, Buffer, BufferRef, CommandBufferUsage, Dispatch, Engine, EngineConfig, Kernel, MemoryKind, Queue,
    RawDispatch, Semaphore, WaitStrategy,
};
use common::*;

/// Bytes of the segment the capture kernel copies.
static CAPTURE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Engine creation registers the real `store_value` twin again; holding this from then until the
/// executable is loaded keeps another test from doing so between our registration and the load.
static SETUP: Mutex<()> = Mutex::new(());

const CONSTANTS: [u32; 2] = [0x1234_5678, 0x9ABC_DEF0];

/// Bytes `out` needs past the segment: the packet's setup field (u16), padded.
const SETUP_BYTES: usize = 8;

/// out[0..8] = the kernarg segment's address; out[8..8 + N] = the segment (N bytes); then the
/// dispatch packet's setup field (its dimension count). Workgroup 0 only.
unsafe extern "C" fn capture(context: *const WorkgroupContext) {
    // SAFETY: the runner passes a valid context.
    let context = unsafe { &*context };
    if context.workgroup_id != [0, 0, 0] {
        return;
    }
    // SAFETY: the segment starts with the `out` pointer; the test sizes `out` for the copy and
    // the setup word, and CAPTURE_BYTES never exceeds the kernel's kernarg segment; the runner
    // passes the fetched packet.
    unsafe {
        let out: u64 = context.kernarg(0);
        let out = out as *mut u8;
        let length = CAPTURE_BYTES.load(Ordering::Acquire);
        out.cast::<[u8; 8]>().write_unaligned((context.kernarg as u64).to_le_bytes());
        core::ptr::copy_nonoverlapping(context.kernarg, out.add(8), length);
        // What `dispatch_ptr` gives a GPU kernel: the packet, whose setup says its dimensions.
        out.add(8 + length).cast::<[u8; 2]>().write_unaligned((*context.packet).setup.to_le_bytes());
    }
}

struct Rig {
    engine: Engine,
    kernel: Kernel,
    args: Vec<KernelArg>,
    segment_size: usize,
    alignment: u64,
    queue: Queue,
    done: Semaphore,
    submitted: u64,
}

impl Rig {
    fn new(config: EngineConfig) -> Self {
        let setup = SETUP.lock().unwrap_or_else(|poison| poison.into_inner());
        let engine = engine_with(config);
        // Keyed by the fixture's identity, as every host build is: only this code object's
        // `store_value` changes.
        let capture = HostBuild { symbol: "store_value.kd", function: capture, args: None };
        engine.device().register_host_builds(TEST_KERNELS_GFX1100, &[capture]).unwrap();
        let executable = engine.device().load_executable(TEST_KERNELS_GFX1100).unwrap();
        drop(setup);
        let kernel = executable.kernel("store_value").unwrap();
        let metadata = CodeObject::parse(TEST_KERNELS_GFX1100).unwrap();
        let kernel_metadata = metadata.kernels().iter().find(|kernel| kernel.name == "store_value").unwrap().clone();
        let segment_size = kernel.kernarg_size() as usize;
        assert_eq!(segment_size, kernel_metadata.kernarg_segment_size as usize);
        CAPTURE_BYTES.store(segment_size, Ordering::Release);
        let queue = queue(engine.device());
        let done = engine.device().create_semaphore(0).unwrap();
        let alignment = u64::from(kernel_metadata.kernarg_segment_align).max(16);
        Self { engine, kernel, args: kernel_metadata.args, segment_size, alignment, queue, done, submitted: 0 }
    }

    fn capture_buffer(&self) -> Buffer {
        host_buffer(self.engine.device(), &vec![0xCC; 8 + self.segment_size + 64])
    }

    /// The range of `out` at `offset` the capture kernel writes.
    fn capture_range<'b>(&self, out: &'b Buffer, offset: u64) -> aqueduct_engine::Binding<'b> {
        out.range(offset, (8 + self.segment_size + SETUP_BYTES) as u64)
    }

    /// Dispatches with HAL kernargs and returns (segment address, segment bytes).
    fn dispatch(&mut self, out: &Buffer, offset: u64, grid: [u32; 3], workgroup: Option<[u16; 3]>) -> (u64, Vec<u8>) {
        let bindings = [self.capture_range(out, offset)];
        let mut dispatch = Dispatch::grid(grid).bindings(&bindings).constants(&CONSTANTS);
        if let Some(workgroup) = workgroup {
            dispatch = dispatch.workgroup(workgroup);
        }
        self.submitted += 1;
        self.queue.dispatch(&self.kernel, &dispatch).signal(self.done.at(self.submitted)).submit().unwrap();
        self.read(out, offset)
    }

    fn read(&self, out: &Buffer, offset: u64) -> (u64, Vec<u8>) {
        self.done.wait(self.submitted, TIMEOUT).unwrap();
        let bytes = out.to_vec().unwrap();
        let offset = offset as usize;
        let address = u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap());
        (address, bytes[offset + 8..offset + 8 + self.segment_size].to_vec())
    }

    /// The dimension count in the setup field of the packet the last capture at `offset` ran from.
    fn packet_dimensions(&self, out: &Buffer, offset: u64) -> u16 {
        let at = offset as usize + 8 + self.segment_size;
        let bytes = out.to_vec().unwrap();
        u16::from_le_bytes([bytes[at], bytes[at + 1]]) & 3
    }

    /// The `hidden_grid_dims` argument of a captured segment, at the metadata's offset.
    fn grid_dims(&self, segment: &[u8]) -> u64 {
        let arg = self.args.iter().find(|arg| arg.value_kind == ValueKind::HiddenGridDims);
        Self::value(segment, arg.expect("the fixture's metadata lists hidden_grid_dims"))
    }

    /// The value at `arg`'s offset, as little-endian, `arg.size` bytes wide.
    fn value(segment: &[u8], arg: &KernelArg) -> u64 {
        let mut word = [0u8; 8];
        let size = (arg.size as usize).min(8);
        word[..size].copy_from_slice(&segment[arg.offset as usize..arg.offset as usize + size]);
        u64::from_le_bytes(word)
    }

    /// Checks every argument the metadata declares against what a dispatch of `grid` and
    /// `workgroup` must have put there.
    fn check_hidden(&self, segment: &[u8], out: u64, grid: [u32; 3], workgroup: [u16; 3]) {
        // Every dispatch says three dimensions, whatever its grid's shape.
        let dims = u64::from(aqueduct_abi::DISPATCH_DIMENSIONS);
        let mut checked = 0;
        let mut constants = CONSTANTS.iter();
        for arg in &self.args {
            let axis = |x: usize| (u64::from(grid[x]), u64::from(workgroup[x]));
            let expected = match arg.value_kind {
                ValueKind::GlobalBuffer => out,
                ValueKind::ByValue => u64::from(*constants.next().unwrap()),
                ValueKind::HiddenBlockCountX => axis(0).0 / axis(0).1,
                ValueKind::HiddenBlockCountY => axis(1).0 / axis(1).1,
                ValueKind::HiddenBlockCountZ => axis(2).0 / axis(2).1,
                ValueKind::HiddenGroupSizeX => axis(0).1,
                ValueKind::HiddenGroupSizeY => axis(1).1,
                ValueKind::HiddenGroupSizeZ => axis(2).1,
                ValueKind::HiddenRemainderX => axis(0).0 % axis(0).1,
                ValueKind::HiddenRemainderY => axis(1).0 % axis(1).1,
                ValueKind::HiddenRemainderZ => axis(2).0 % axis(2).1,
                ValueKind::HiddenGridDims => dims,
                ValueKind::HiddenGlobalOffsetX | ValueKind::HiddenGlobalOffsetY | ValueKind::HiddenGlobalOffsetZ => 0,
                _ => continue,
            };
            assert_eq!(
                Self::value(segment, arg),
                expected,
                "{} at offset {} for grid {grid:?} workgroup {workgroup:?}",
                arg.value_kind,
                arg.offset
            );
            checked += 1;
        }
        // The pointer, both constants, and at least the block counts, group sizes and remainders.
        assert!(checked >= 3 + 9, "only {checked} arguments checked: {:?}", self.args);
    }
}

#[test]
fn the_metadata_declares_hidden_arguments() {
    let rig = Rig::new(EngineConfig::default());
    let hidden: Vec<&ValueKind> = rig.args.iter().map(|arg| &arg.value_kind).filter(|kind| kind.is_hidden()).collect();
    assert!(
        hidden.contains(&&ValueKind::HiddenBlockCountX) && hidden.contains(&&ValueKind::HiddenGroupSizeX),
        "{hidden:?}"
    );
    let layout = rig.kernel.hal_layout().unwrap();
    assert_eq!((layout.bindings, layout.constants), (1, 2));
}

#[test]
fn hal_kernargs_carry_bindings_and_hidden_arguments() {
    let mut rig = Rig::new(EngineConfig::default());
    let out = rig.capture_buffer();
    let cases: &[([u32; 3], Option<[u16; 3]>)] = &[
        ([1, 1, 1], None),
        ([100, 1, 1], None),
        ([100, 1, 1], Some([7, 1, 1])),
        ([1000, 3, 1], Some([64, 2, 1])),
        ([33, 5, 7], Some([8, 2, 3])),
        ([4096, 1, 1], Some([1024, 1, 1])),
    ];
    for &(grid, workgroup) in cases {
        let (address, segment) = rig.dispatch(&out, 0, grid, workgroup);
        assert_eq!(address % rig.alignment, 0, "segment at {address:#x}");
        let workgroup = workgroup.unwrap_or([32, 1, 1]);
        rig.check_hidden(&segment, out.device_address(), grid, workgroup);
        assert_eq!(rig.packet_dimensions(&out, 0), 3, "grid {grid:?}: the packet's setup");
    }
    // A binding at an offset passes the offset address.
    let (_, segment) = rig.dispatch(&out, 24, [1, 1, 1], Some([1, 1, 1]));
    assert_eq!(u64::from_le_bytes(segment[..8].try_into().unwrap()), out.device_address() + 24);
}

#[test]
fn raw_kernargs_arrive_verbatim_and_zero_padded() {
    let mut rig = Rig::new(EngineConfig::default());
    let out = rig.capture_buffer();
    // A full segment of chosen bytes: exactly these bytes arrive.
    let mut full: Vec<u8> = (0..rig.segment_size).map(|index| (index * 7 + 1) as u8).collect();
    full[..8].copy_from_slice(&out.device_address().to_le_bytes());
    rig.submitted += 1;
    rig.queue
        .dispatch_raw(&rig.kernel, &RawDispatch { grid: [1, 1, 1], workgroup: None, kernargs: &full })
        .signal(rig.done.at(rig.submitted))
        .submit()
        .unwrap();
    let (address, segment) = rig.read(&out, 0);
    assert_eq!(address % rig.alignment, 0);
    assert_eq!(segment, full);
    // Only the explicit arguments: the rest of the segment is zeroed, whatever was there before.
    let mut short = out.device_address().to_le_bytes().to_vec();
    short.extend_from_slice(&[0xEE; 8]);
    for _ in 0..3 {
        rig.submitted += 1;
        rig.queue
            .dispatch_raw(&rig.kernel, &RawDispatch { grid: [1, 1, 1], workgroup: None, kernargs: &short })
            .signal(rig.done.at(rig.submitted))
            .submit()
            .unwrap();
        let (_, segment) = rig.read(&out, 0);
        assert_eq!(segment[..16], short[..]);
        assert!(segment[16..].iter().all(|&byte| byte == 0), "the tail is zeroed");
    }
}

#[test]
fn kernarg_segments_stay_aligned_as_the_ring_wraps() {
    // Ring sizes that are and are not multiples of the alignment; each wraps many times.
    for ring in [4096u64, 4100, 4104, 5000, 8192 + 48] {
        let mut rig = Rig::new(EngineConfig {
            kernarg_ring_bytes: ring,
            wait_strategy: WaitStrategy::BarrierValue,
            ..EngineConfig::default()
        });
        let out = rig.capture_buffer();
        let update_target = rig.engine.device().allocate(MemoryKind::HostVisible, 1024).unwrap();
        let mut rng = Xorshift::new(ring);
        for round in 0..120u32 {
            // Vary the amount of ring each round uses so segment starts land everywhere.
            let length = 1 + rng.below(700) as usize;
            let update = rng.bytes(length);
            rig.submitted += 1;
            rig.queue.update(&update_target, 0, &update).signal(rig.done.at(rig.submitted)).submit().unwrap();
            let grid = [1 + round, 1, 1];
            let (address, segment) = rig.dispatch(&out, 0, grid, Some([32, 1, 1]));
            assert_eq!(address % rig.alignment, 0, "ring of {ring} bytes, round {round}: segment at {address:#x}");
            rig.check_hidden(&segment, out.device_address(), grid, [32, 1, 1]);
            assert_eq!(
                update_target.to_vec().unwrap()[..update.len()],
                update[..],
                "ring of {ring}, round {round}: enqueued update"
            );
        }
    }
}

#[test]
fn direct_dispatches_and_replays_see_the_same_segment_and_three_dimensions() {
    // A one-dimensional grid: before one rule covered both paths, a direct dispatch said 1 here
    // (in `hidden_grid_dims` and the packet's setup) and a replay said 3.
    let mut rig = Rig::new(EngineConfig::default());
    let out = rig.capture_buffer();
    let (grid, workgroup) = ([64, 1, 1], [32, 1, 1]);
    let (_, direct) = rig.dispatch(&out, 0, grid, Some(workgroup));
    assert_eq!(rig.grid_dims(&direct), 3, "hidden_grid_dims of a direct dispatch");
    assert_eq!(rig.packet_dimensions(&out, 0), 3, "setup of a direct dispatch");
    rig.check_hidden(&direct, out.device_address(), grid, workgroup);

    let device = rig.engine.device().clone();
    // Two workgroups of 32: the indirect dispatch's patched grid is the direct one.
    let counts: Vec<u8> = [2u32, 1, 1].iter().flat_map(|count| count.to_le_bytes()).collect();
    let counts = host_buffer(&device, &counts);
    let capture = rig.capture_range(&out, 0);
    let table = BindingTable::from_bindings(&[capture]).unwrap();
    let slot = [BufferRef::slot(0, 0, capture.length)];
    let fixed = [BufferRef::Static(capture)];
    // (usage, bindings, indirect, strategy the recorder must pick)
    let cases: [(CommandBufferUsage, &[BufferRef], bool, &str); 4] = [
        (CommandBufferUsage::Reusable, &fixed, false, "prepublished"),
        (CommandBufferUsage::OneShot, &fixed, false, "patched template"),
        (CommandBufferUsage::Reusable, &slot, false, "patched template"),
        (CommandBufferUsage::Reusable, &fixed, true, "indirect"),
    ];
    for (usage, bindings, indirect, strategy) in cases {
        out.write(0, &vec![0xCC; 8 + rig.segment_size + SETUP_BYTES]).unwrap();
        let mut cb = device.create_command_buffer(usage).unwrap();
        let dispatch = Dispatch::grid(grid).workgroup(workgroup).bindings(bindings).constants(&CONSTANTS);
        if indirect {
            cb.dispatch_indirect(&rig.kernel, &dispatch, BufferRef::Static(counts.whole())).unwrap();
        } else {
            cb.dispatch(&rig.kernel, &dispatch).unwrap();
        }
        cb.finish().unwrap();
        let facts = cb.facts().unwrap().clone();
        let picked = match () {
            _ if facts.prepublished == 1 => "prepublished",
            _ if facts.patched_template == 1 => "patched template",
            _ if facts.indirect == 1 => "indirect",
            _ => "other",
        };
        assert_eq!(picked, strategy, "{facts:?}");
        rig.submitted += 1;
        rig.queue.execute(&cb, &table).signal(rig.done.at(rig.submitted)).submit().unwrap();
        let (_, executed) = rig.read(&out, 0);
        assert_eq!(rig.grid_dims(&executed), 3, "{strategy}: hidden_grid_dims");
        assert_eq!(rig.packet_dimensions(&out, 0), 3, "{strategy}: the packet's setup");
        assert_eq!(executed, direct, "{strategy}: the executed segment differs from the direct one");
    }
}
