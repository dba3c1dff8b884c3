//! Bad input to every operation: each is refused with its own typed error, and nothing changes —
//! queue statistics, semaphore values (and promises), buffer contents and live objects are
//! exactly as before, and the device never sees a packet.

mod common;

use aqueduct_builtins::PlanError;
use aqueduct_engine::{
    Buffer, Device, Dispatch, Engine, EngineConfig, EngineError, MAX_UPDATE_BYTES, MemoryKind, Queue, QueueStats,
    RawDispatch, Semaphore, WaitStrategy, wait_all, wait_any,
};
use aqueduct_hsa::ExecutableError;
use common::*;

/// A device with a queue, semaphores and buffers whose state every refusal must leave alone.
struct Rig {
    engine: Engine,
    kernels: TestKernels,
    queue: Queue,
    /// Holds the parked submission that promises `promised`.
    _holder: Queue,
    /// Host-signalled to 5.
    ready: Semaphore,
    /// Promised to reach 3 by a submission held back on `gate`.
    promised: Semaphore,
    gate: Semaphore,
    a: Buffer,
    b: Buffer,
    big: Buffer,
    local: Buffer,
}

#[derive(Debug, PartialEq)]
struct Snapshot {
    stats: QueueStats,
    semaphores: Vec<(u64, bool)>,
    contents: Vec<Vec<u8>>,
    live: (usize, usize, usize),
}

impl Rig {
    fn new() -> Self {
        let engine = engine(WaitStrategy::BarrierValue);
        let device = engine.device().clone();
        let kernels = test_kernels(&engine);
        let queue = queue(&device);
        let mut rng = Xorshift::new(99);
        let ready = device.create_semaphore(0).unwrap();
        ready.signal(5).unwrap();
        let (promised, gate) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let holder = device.create_queue().unwrap();
        holder.barrier().wait(gate.at(1)).signal(promised.at(3)).submit().unwrap();
        let a = host_buffer(&device, &rng.bytes(4096));
        let b = host_buffer(&device, &rng.bytes(4096));
        let big = host_buffer(&device, &rng.bytes(2 * MAX_UPDATE_BYTES));
        let local = device.allocate(MemoryKind::DeviceLocal, 4096).unwrap();
        Self { engine, kernels, queue, _holder: holder, ready, promised, gate, a, b, big, local }
    }

    fn device(&self) -> &Device {
        self.engine.device()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            stats: self.queue.stats(),
            semaphores: [&self.ready, &self.promised, &self.gate]
                .iter()
                .map(|semaphore| (semaphore.value(), semaphore.failure().is_some()))
                .collect(),
            contents: [&self.a, &self.b, &self.big].iter().map(|buffer| buffer.to_vec().unwrap()).collect(),
            live: self.device().live_objects(),
        }
    }

    /// Runs `attempt`, which must fail with an error `expected` accepts, and checks that nothing
    /// changed.
    #[track_caller]
    fn refused<T: std::fmt::Debug>(
        &self,
        what: &str,
        attempt: impl FnOnce() -> Result<T, EngineError>,
        expected: impl FnOnce(&EngineError) -> bool,
    ) {
        let before = self.snapshot();
        match attempt() {
            Ok(value) => panic!("{what}: accepted ({value:?})"),
            Err(error) => {
                assert!(expected(&error), "{what}: wrong error {error:?}");
                // Every refusal explains itself.
                assert!(!error.to_string().is_empty());
            }
        }
        assert_eq!(self.snapshot(), before, "{what}: something changed");
    }

    /// The end of every test: the held-back submission still runs once released, and the queue
    /// still works, so the refusals left it healthy.
    fn finish(self) {
        let before = self.snapshot();
        self.gate.signal(1).unwrap();
        self.promised.wait(3, TIMEOUT).unwrap();
        let done = self.device().create_semaphore(0).unwrap();
        self.queue.fill(self.a.range(0, 4), &[1, 2, 3, 4]).signal(done.at(1)).submit().unwrap();
        done.wait(1, TIMEOUT).unwrap();
        assert_eq!(self.queue.stats().submissions, before.stats.submissions + 1);
        assert_eq!(&self.a.to_vec().unwrap()[..4], &[1, 2, 3, 4]);
        assert_eq!(self.a.to_vec().unwrap()[4..], before.contents[0][4..]);
    }
}

fn out_of_bounds(what: &'static str) -> impl FnOnce(&EngineError) -> bool {
    move |error| matches!(error, EngineError::OutOfBounds { what: found, .. } if *found == what)
}

fn invalid(what: &'static str) -> impl FnOnce(&EngineError) -> bool {
    move |error| matches!(error, EngineError::InvalidArgument { what: found, .. } if *found == what)
}

fn invalid_grid(error: &EngineError) -> bool {
    matches!(error, EngineError::InvalidGrid { .. })
}

fn kernarg_mismatch(error: &EngineError) -> bool {
    matches!(error, EngineError::KernargMismatch { kernel, .. } if kernel == "store_value" || kernel == "add_from")
}

fn foreign(what: &'static str) -> impl FnOnce(&EngineError) -> bool {
    move |error| matches!(error, EngineError::ForeignObject { what: found } if found.starts_with(what))
}

#[test]
fn fills() {
    let rig = Rig::new();
    let (q, a) = (&rig.queue, &rig.a);
    rig.refused(
        "past the end",
        || q.fill(a.range(4090, 16), &[1]).submit(),
        |error| matches!(error, EngineError::OutOfBounds { what: "fill target", offset: 4090, length: 16, size: 4096 }),
    );
    rig.refused("offset past the end", || q.fill(a.range(4097, 0), &[1]).submit(), out_of_bounds("fill target"));
    rig.refused("wrapping range", || q.fill(a.range(u64::MAX, 2), &[1]).submit(), out_of_bounds("fill target"));
    rig.refused("huge length", || q.fill(a.range(8, u64::MAX), &[1]).submit(), out_of_bounds("fill target"));
    for (pattern, width) in [(&[1u8, 2, 3][..], 3u8), (&[][..], 0), (&[0; 5][..], 5), (&[0; 16][..], 16)] {
        rig.refused(&format!("pattern of width {width}"), || q.fill(a.range(0, 48), pattern).submit(), |error| {
            matches!(error, EngineError::Plan(PlanError::UnsupportedPatternWidth { width: found }) if *found == width)
        });
    }
    rig.refused(
        "length not a multiple of the pattern",
        || q.fill(a.range(0, 6), &[1, 2, 3, 4]).submit(),
        |error| matches!(error, EngineError::Plan(PlanError::LengthNotMultipleOfPattern { length: 6, width: 4 })),
    );
    rig.refused(
        "odd length for a 2-byte pattern",
        || q.fill(a.range(1, 3), &[1, 2]).submit(),
        |error| matches!(error, EngineError::Plan(PlanError::LengthNotMultipleOfPattern { length: 3, width: 2 })),
    );
    rig.finish();
}

#[test]
fn copies() {
    let rig = Rig::new();
    let (q, a, b) = (&rig.queue, &rig.a, &rig.b);
    rig.refused(
        "source past the end",
        || q.copy(a.range(4000, 100), b.range(0, 100)).submit(),
        out_of_bounds("copy source"),
    );
    rig.refused(
        "target past the end",
        || q.copy(a.range(0, 100), b.range(4000, 100)).submit(),
        out_of_bounds("copy target"),
    );
    rig.refused(
        "wrapping source",
        || q.copy(a.range(u64::MAX - 1, 4), b.range(0, 4)).submit(),
        out_of_bounds("copy source"),
    );
    rig.refused("mismatched lengths", || q.copy(a.range(0, 100), b.range(0, 99)).submit(), invalid("copy"));
    rig.refused("mismatched lengths, one empty", || q.copy(a.range(0, 0), b.range(0, 1)).submit(), invalid("copy"));
    for (from, to, length) in
        [(0u64, 0u64, 16u64), (0, 1, 16), (1, 0, 16), (100, 150, 100), (150, 100, 100), (4095, 4095, 1)]
    {
        rig.refused(&format!("overlapping copy {from} -> {to} of {length}"), || q.copy(a.range(from, length), a.range(to, length)).submit(), |error| {
            matches!(error, EngineError::Plan(PlanError::OverlappingCopy { length: found, .. }) if *found == length)
        });
    }
    rig.finish();
}

#[test]
fn updates() {
    let rig = Rig::new();
    let (q, a, big) = (&rig.queue, &rig.a, &rig.big);
    rig.refused("past the end", || q.update(a, 4000, &[0; 100]).submit(), out_of_bounds("update target"));
    rig.refused("offset past the end", || q.update(a, 5000, &[]).submit(), out_of_bounds("update target"));
    rig.refused("over 64 KiB", || q.update(big, 0, &vec![0; MAX_UPDATE_BYTES + 1]).submit(), invalid("update"));
    rig.finish();
}

#[test]
fn dispatches() {
    let rig = Rig::new();
    let (q, a, b) = (&rig.queue, &rig.a, &rig.b);
    let store = &rig.kernels.store_value;
    let one = [a.range(0, 256)];
    let valid = |grid: [u32; 3]| Dispatch::grid(grid).bindings(&one).constants(&[1, 64]);
    rig.refused(
        "binding past the end",
        || q.dispatch(store, &Dispatch::grid([64, 1, 1]).bindings(&[a.range(4000, 256)]).constants(&[1, 64])).submit(),
        out_of_bounds("binding"),
    );
    rig.refused(
        "no bindings",
        || q.dispatch(store, &Dispatch::grid([64, 1, 1]).constants(&[1, 64])).submit(),
        kernarg_mismatch,
    );
    rig.refused(
        "two bindings",
        || {
            q.dispatch(store, &Dispatch::grid([64, 1, 1]).bindings(&[a.whole(), b.whole()]).constants(&[1, 64]))
                .submit()
        },
        kernarg_mismatch,
    );
    rig.refused(
        "one constant",
        || q.dispatch(store, &Dispatch::grid([64, 1, 1]).bindings(&one).constants(&[1])).submit(),
        kernarg_mismatch,
    );
    rig.refused(
        "three constants",
        || q.dispatch(store, &Dispatch::grid([64, 1, 1]).bindings(&one).constants(&[1, 2, 3])).submit(),
        kernarg_mismatch,
    );
    for grid in [[0, 1, 1], [64, 0, 1], [64, 1, 0], [0, 0, 0]] {
        rig.refused(&format!("grid {grid:?}"), || q.dispatch(store, &valid(grid)).submit(), invalid_grid);
    }
    // Totals above 2^32 - 1, including products that overflow 32 and 64 bits.
    for grid in [[65_536, 65_536, 1], [u32::MAX, 2, 1], [1 << 22, 1 << 22, 1 << 20], [u32::MAX, u32::MAX, u32::MAX]] {
        rig.refused(&format!("grid {grid:?}"), || q.dispatch(store, &valid(grid)).submit(), invalid_grid);
    }
    for workgroup in [[0, 1, 1], [64, 0, 1], [1, 1, 0]] {
        rig.refused(
            &format!("workgroup {workgroup:?}"),
            || q.dispatch(store, &valid([64, 1, 1]).workgroup(workgroup)).submit(),
            invalid_grid,
        );
    }
    // Oversized, including sizes whose product overflows 32 bits.
    for workgroup in [[1025, 1, 1], [32, 32, 2], [65_535, 65_535, 65_535], [4096, 4096, 256], [65_535, 1, 1]] {
        rig.refused(
            &format!("workgroup {workgroup:?}"),
            || q.dispatch(store, &valid([64, 1, 1]).workgroup(workgroup)).submit(),
            invalid_grid,
        );
    }
    // The grid's own limit is exactly 2^32 - 1 work-items; the largest workgroup is fine.
    let accepted = rig.device().create_semaphore(0).unwrap();
    q.dispatch(store, &valid([64, 1, 1]).workgroup([1024, 1, 1])).signal(accepted.at(1)).submit().unwrap();
    accepted.wait(1, TIMEOUT).unwrap();
    assert_eq!(words(&a.to_vec().unwrap())[..64], (1..65).collect::<Vec<u32>>()[..]);
    rig.finish();
}

#[test]
fn raw_dispatches() {
    let rig = Rig::new();
    let (q, a) = (&rig.queue, &rig.a);
    let store = &rig.kernels.store_value;
    let raw = |kernargs: &[u8], grid: [u32; 3], workgroup: Option<[u16; 3]>| {
        q.dispatch_raw(store, &RawDispatch { grid, workgroup, kernargs }).submit()
    };
    let mut kernargs = a.device_address().to_le_bytes().to_vec();
    kernargs.extend_from_slice(&[0; 8]);
    rig.refused("too short", || raw(&kernargs[..15], [1, 1, 1], None), kernarg_mismatch);
    rig.refused("empty", || raw(&[], [1, 1, 1], None), kernarg_mismatch);
    let long = vec![0u8; store.kernarg_size() as usize + 1];
    rig.refused("longer than the segment", || raw(&long, [1, 1, 1], None), kernarg_mismatch);
    rig.refused("zero grid", || raw(&kernargs, [0, 1, 1], None), invalid_grid);
    rig.refused("zero workgroup", || raw(&kernargs, [1, 1, 1], Some([1, 0, 1])), invalid_grid);
    rig.refused("oversized workgroup", || raw(&kernargs, [1, 1, 1], Some([2048, 1, 1])), invalid_grid);
    rig.finish();
}

#[test]
fn kernels_and_code_objects() {
    let rig = Rig::new();
    let device = rig.device();
    rig.refused(
        "unknown kernel",
        || rig.kernels.executable.kernel("nope").map(|kernel| kernel.name().to_string()),
        |error| match error {
            EngineError::UnknownKernel(unknown) => {
                unknown.requested == "nope"
                    && ["store_value", "add_from"]
                        .iter()
                        .all(|name| unknown.available.iter().any(|found| found == name))
            }
            _ => false,
        },
    );
    let error = rig.kernels.executable.kernel("store_valu").err().unwrap();
    assert!(error.to_string().contains("store_value"), "the error lists what exists: {error}");
    let isa = &device.agents()[0].isa;
    assert!(isa.ends_with("gfx1100"), "{isa}");
    rig.refused(
        "a gfx90a code object on a gfx1100 agent",
        || device.load_executable(TEST_KERNELS_GFX90A).map(|_| ()),
        |error| {
            matches!(error, EngineError::Executable(ExecutableError::Incompatible(_)))
                && error.to_string().contains("gfx90a")
        },
    );
    let mut garbage = Xorshift::new(5).bytes(4096);
    rig.refused(
        "garbage bytes",
        || device.load_executable(&garbage).map(|_| ()),
        |error| matches!(error, EngineError::Executable(ExecutableError::CodeObject(_))),
    );
    garbage[..4].copy_from_slice(b"\x7fELF");
    rig.refused(
        "garbage behind an ELF magic",
        || device.load_executable(&garbage).map(|_| ()),
        |error| matches!(error, EngineError::Executable(ExecutableError::CodeObject(_))),
    );
    rig.refused(
        "no bytes",
        || device.load_executable(&[]).map(|_| ()),
        |error| matches!(error, EngineError::Executable(ExecutableError::CodeObject(_))),
    );
    let truncated = &TEST_KERNELS_GFX1100[..TEST_KERNELS_GFX1100.len() / 2];
    rig.refused(
        "a truncated code object",
        || device.load_executable(truncated).map(|_| ()),
        |error| matches!(error, EngineError::Executable(_)),
    );
    rig.finish();
}

#[test]
fn semaphore_signals_must_increase() {
    let rig = Rig::new();
    let (q, a) = (&rig.queue, &rig.a);
    let (ready, promised) = (&rig.ready, &rig.promised);
    for value in [0, 4, 5] {
        rig.refused(&format!("host signal to {value} at 5"), || ready.signal(value), |error| {
            matches!(error, EngineError::SemaphoreNotIncreasing { current: 5, requested } if *requested == value)
        });
    }
    for value in [1, 3] {
        rig.refused(&format!("host signal to {value} with 3 promised"), || promised.signal(value), |error| {
            matches!(error, EngineError::SemaphoreNotIncreasing { current: 3, requested } if *requested == value)
        });
    }
    rig.refused(
        "queue signal at the current value",
        || q.fill(a.range(0, 4), &[0]).signal(ready.at(5)).submit(),
        |error| matches!(error, EngineError::SemaphoreNotIncreasing { current: 5, requested: 5 }),
    );
    rig.refused(
        "queue signal below a promise",
        || q.barrier().signal(promised.at(2)).submit(),
        |error| matches!(error, EngineError::SemaphoreNotIncreasing { current: 3, requested: 2 }),
    );
    rig.refused(
        "the same value twice in one submission",
        || q.barrier().signal(ready.at(7)).signal(ready.at(7)).submit(),
        |error| matches!(error, EngineError::SemaphoreNotIncreasing { current: 7, requested: 7 }),
    );
    rig.refused(
        "decreasing within one submission",
        || q.barrier().signal(ready.at(8)).signal(ready.at(6)).submit(),
        |error| matches!(error, EngineError::SemaphoreNotIncreasing { current: 8, requested: 6 }),
    );
    // A refused signal list refuses the whole submission, even its valid points.
    rig.refused(
        "one bad point among good ones",
        || q.fill(a.range(0, 4), &[0]).wait(ready.at(1)).signal(promised.at(9)).signal(ready.at(1)).submit(),
        |error| matches!(error, EngineError::SemaphoreNotIncreasing { current: 5, requested: 1 }),
    );
    rig.finish();
}

#[test]
fn objects_from_another_engine() {
    let rig = Rig::new();
    let other = engine(WaitStrategy::BarrierValue);
    let other_device = other.device();
    let other_kernels = test_kernels(&other);
    let other_buffer = host_buffer(other_device, &[0; 4096]);
    let other_semaphore = other_device.create_semaphore(0).unwrap();
    let other_queue = queue(other_device);
    let (q, a) = (&rig.queue, &rig.a);
    let before_other = (other_queue.stats(), other_buffer.to_vec().unwrap(), other_semaphore.value());

    rig.refused("fill of a foreign buffer", || q.fill(other_buffer.whole(), &[1]).submit(), foreign("buffer"));
    rig.refused(
        "copy from a foreign buffer",
        || q.copy(other_buffer.range(0, 16), a.range(0, 16)).submit(),
        foreign("buffer"),
    );
    rig.refused(
        "copy to a foreign buffer",
        || q.copy(a.range(0, 16), other_buffer.range(0, 16)).submit(),
        foreign("buffer"),
    );
    rig.refused("update of a foreign buffer", || q.update(&other_buffer, 0, &[1]).submit(), foreign("buffer"));
    let foreign_binding = [other_buffer.range(0, 256)];
    rig.refused(
        "dispatch binding a foreign buffer",
        || {
            q.dispatch(
                &rig.kernels.store_value,
                &Dispatch::grid([64, 1, 1]).bindings(&foreign_binding).constants(&[1, 64]),
            )
            .submit()
        },
        foreign("buffer"),
    );
    let mut kernargs = a.device_address().to_le_bytes().to_vec();
    kernargs.extend_from_slice(&[0; 8]);
    let binding = [a.range(0, 256)];
    rig.refused(
        "a foreign kernel",
        || {
            q.dispatch(&other_kernels.store_value, &Dispatch::grid([64, 1, 1]).bindings(&binding).constants(&[1, 64]))
                .submit()
        },
        foreign("kernel"),
    );
    rig.refused(
        "a foreign kernel, raw",
        || {
            q.dispatch_raw(
                &other_kernels.store_value,
                &RawDispatch { grid: [1, 1, 1], workgroup: None, kernargs: &kernargs },
            )
            .submit()
        },
        foreign("kernel"),
    );
    rig.refused(
        "waiting on a foreign semaphore",
        || q.barrier().wait(other_semaphore.at(0)).submit(),
        foreign("semaphore"),
    );
    rig.refused(
        "signalling a foreign semaphore",
        || q.barrier().signal(other_semaphore.at(1)).submit(),
        foreign("semaphore"),
    );
    rig.refused(
        "wait_all across engines",
        || wait_all(&[rig.ready.at(1), other_semaphore.at(0)], TIMEOUT),
        foreign("semaphore"),
    );
    rig.refused(
        "wait_any across engines",
        || wait_any(&[rig.ready.at(1), other_semaphore.at(0)], TIMEOUT),
        foreign("semaphore"),
    );
    // The other engine's queue refuses this engine's objects the same way.
    rig.refused(
        "this engine's buffer on the other queue",
        || other_queue.fill(a.whole(), &[1]).submit(),
        foreign("buffer"),
    );
    rig.refused(
        "this engine's semaphore on the other queue",
        || other_queue.barrier().wait(rig.ready.at(1)).submit(),
        foreign("semaphore"),
    );
    assert_eq!((other_queue.stats(), other_buffer.to_vec().unwrap(), other_semaphore.value()), before_other);
    rig.finish();
}

#[test]
fn host_access_and_allocation() {
    let rig = Rig::new();
    let device = rig.device();
    let (a, local) = (&rig.a, &rig.local);
    rig.refused(
        "write to device-local memory",
        || local.write(0, &[1]),
        |error| matches!(error, EngineError::NotHostAccessible { kind: MemoryKind::DeviceLocal }),
    );
    rig.refused(
        "read of device-local memory",
        || local.read(0, &mut [0; 4]),
        |error| matches!(error, EngineError::NotHostAccessible { kind: MemoryKind::DeviceLocal }),
    );
    rig.refused(
        "device-local to_vec",
        || local.to_vec(),
        |error| matches!(error, EngineError::NotHostAccessible { .. }),
    );
    rig.refused("host write past the end", || a.write(4095, &[1, 2]), out_of_bounds("buffer write"));
    rig.refused("host write at a wrapping offset", || a.write(u64::MAX, &[1]), out_of_bounds("buffer write"));
    rig.refused("host read past the end", || a.read(4000, &mut [0; 97]), out_of_bounds("buffer read"));
    rig.refused("zero-size allocation", || device.allocate(MemoryKind::HostVisible, 0), invalid("buffer size"));
    rig.refused(
        "zero-size device-local allocation",
        || device.allocate(MemoryKind::DeviceLocal, 0),
        invalid("buffer size"),
    );
    rig.refused(
        "allocation on a missing agent",
        || device.allocate_on(7, MemoryKind::HostVisible, 64),
        invalid("agent"),
    );
    rig.refused("queue on a missing agent", || device.create_queue_on(7).map(|_| ()), invalid("agent"));
    rig.finish();
}

#[test]
fn device_specs_and_configuration() {
    for spec in
        ["", "cuda", "Soft", "soft ", "amdgpu:", "amdgpu:x", "amdgpu:-1", "amdgpu://", "amdgpu://a,,b", "amdgpu://a, "]
    {
        match Engine::new(spec) {
            Err(EngineError::InvalidDeviceSpec { spec: found, reason }) => {
                assert_eq!(found, spec);
                assert!(!reason.is_empty());
            }
            Err(other) => panic!("`{spec}`: wrong error {other:?}"),
            Ok(_) => panic!("`{spec}` was accepted"),
        }
    }
    let soft = |config: EngineConfig| Engine::with_config(EngineConfig { device: "soft".parse().unwrap(), ..config });
    let bad = [
        (EngineConfig { queue_packets: 0, ..EngineConfig::default() }, "queue_packets"),
        (EngineConfig { queue_packets: 2, ..EngineConfig::default() }, "queue_packets"),
        (EngineConfig { queue_packets: 100, ..EngineConfig::default() }, "queue_packets"),
        (EngineConfig { kernarg_ring_bytes: 4095, ..EngineConfig::default() }, "kernarg_ring_bytes"),
        (EngineConfig { epochs_in_flight: 0, ..EngineConfig::default() }, "epochs_in_flight"),
        (EngineConfig { semaphore_capacity: usize::MAX, ..EngineConfig::default() }, "semaphore_capacity"),
    ];
    for (config, what) in bad {
        match soft(config) {
            Err(EngineError::InvalidArgument { what: found, .. }) => assert_eq!(found, what),
            Err(other) => panic!("{what}: wrong error {other:?}"),
            Ok(_) => panic!("{what}: accepted"),
        }
    }
    // A ring bigger than the agent allows is refused when the queue is made.
    let engine = engine_with(EngineConfig { queue_packets: 1 << 18, ..EngineConfig::default() });
    assert!(matches!(engine.device().create_queue(), Err(EngineError::InvalidArgument { what: "queue_packets", .. })));
    assert_eq!(engine.device().live_objects(), (0, 0, 0));
}

#[test]
fn device_limits() {
    let engine = engine_with(EngineConfig {
        semaphore_capacity: 1024,
        queue_packets: 4,
        kernarg_ring_bytes: 4096,
        epochs_in_flight: 1,
        ..EngineConfig::default()
    });
    let device = engine.device();
    let semaphores: Vec<_> = (0..1024).map(|value| device.create_semaphore(value).unwrap()).collect();
    assert!(matches!(device.create_semaphore(0), Err(EngineError::LimitReached { limit: 1024, .. })));
    assert_eq!(device.live_objects().1, 1024);
    // A released slot is reused, with its new initial value and no trace of the old state.
    semaphores[10].fail("old failure");
    drop(semaphores);
    let fresh = device.create_semaphore(3).unwrap();
    assert_eq!((fresh.value(), fresh.failure().is_none()), (3, true));

    let queues: Vec<_> = (0..aqueduct_components::MAX_QUEUES).map(|_| device.create_queue().unwrap()).collect();
    assert!(matches!(
        device.create_queue(),
        Err(EngineError::LimitReached { limit: aqueduct_components::MAX_QUEUES, .. })
    ));
    assert_eq!(device.live_objects().0, aqueduct_components::MAX_QUEUES);
    drop(queues);
    assert_eq!(device.live_objects().0, 0);
}

#[test]
fn a_promise_outlives_a_lower_parked_signal_being_published() {
    // A parked submission promising 3 is published after another queue promised 5: the higher
    // promise still bounds host and queue signals until it is kept.
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let (parked, stalled) = (queue(device), queue(device));
    let (semaphore, gate) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    parked.barrier().wait(gate.at(1)).signal(semaphore.at(3)).submit().unwrap();
    stall_next(&stalled);
    stalled.barrier().signal(semaphore.at(5)).submit().unwrap();
    gate.signal(1).unwrap();
    semaphore.wait(3, TIMEOUT).unwrap();
    assert_eq!(semaphore.value(), 3);
    for value in [3, 4, 5] {
        assert!(
            matches!(semaphore.signal(value), Err(EngineError::SemaphoreNotIncreasing { current: 5, requested }) if requested == value),
            "host signal to {value} below the outstanding promise of 5"
        );
        let before = parked.stats();
        assert!(matches!(
            parked.barrier().signal(semaphore.at(value)).submit(),
            Err(EngineError::SemaphoreNotIncreasing { current: 5, .. })
        ));
        assert_eq!(parked.stats(), before);
    }
    release(&stalled, || semaphore.value() == 5);
    semaphore.signal(6).unwrap();
    assert_eq!(semaphore.query().unwrap(), 6);
}

#[test]
fn a_queue_whose_kernarg_ring_cannot_be_allocated() {
    // Larger than the soft agent's kernarg pool: refused with the provider's error, no queue.
    let engine = engine_with(EngineConfig { kernarg_ring_bytes: 1 << 46, ..EngineConfig::default() });
    let device = engine.device();
    for _ in 0..3 {
        match device.create_queue() {
            Err(EngineError::Hsa(_)) => {}
            Err(other) => panic!("wrong error {other:?}"),
            Ok(_) => panic!("a {}-byte kernarg ring was allocated", 1u64 << 46),
        }
        assert_eq!(device.live_objects(), (0, 0, 0));
    }
    let buffer = device.allocate(MemoryKind::HostVisible, 16).unwrap();
    buffer.write(0, &[1; 16]).unwrap();
    assert_eq!(buffer.to_vec().unwrap(), [1; 16]);
}
