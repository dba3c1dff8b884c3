//! Host builds written in Rust (`aqueduct_engine::host_build`) for kernels of a code object
//! built by clang: one whose declared arguments match the metadata runs a typed launch; one that
//! disagrees (a wrong size, a missing argument, a value where the kernel takes a pointer, a
//! symbol the code object lacks) is refused with a typed error naming the kernel and argument,
//! when it is registered and, if it got past the engine, when the code object loads.
//!
//! Each test registers for its own copy of the fixture code object (one extra byte, so another
//! identity), so no test's registration reaches another's kernels.

mod common;

use aqueduct_codeobject::{ArgPlacement, CodeObjectId};
use aqueduct_engine::host_build::{DevicePtr, HostArg, HostBuild, HostKernel, Workgroup, kernel_args};
use aqueduct_engine::{Engine, EngineConfig, EngineError, MemoryKind};
use common::{TEST_KERNELS_GFX1100, TIMEOUT};

/// The fixture code object (`soft-hsa/tests/fixtures/test_kernels.c`) with `tag` appended: the same
/// kernels under an identity no other test registers for.
fn code_object(tag: u8) -> &'static [u8] {
    let mut bytes = TEST_KERNELS_GFX1100.to_vec();
    bytes.push(tag);
    Box::leak(bytes.into_boxed_slice())
}

fn engine() -> Engine {
    common::open_engine(EngineConfig::default()).expect("test engine")
}

kernel_args! {
    /// `store_value(u32 *out, u32 value, u32 count)`.
    struct StoreValueArgs {
        out: DevicePtr<u32>,
        value: u32,
        count: u32,
    }
}

/// out[i] = value + i for i < count.
struct StoreValue;

impl HostKernel for StoreValue {
    const SYMBOL: &'static str = "store_value.kd";
    type Args = StoreValueArgs;

    fn workgroup(group: &mut Workgroup<'_, StoreValueArgs>) {
        let StoreValueArgs { out, value, count } = *group.args();
        for item in group.work_items() {
            let i = item.global_id()[0];
            if i < count {
                // SAFETY: the launch binds `out` to at least `count` u32s; one element each.
                unsafe { out.write(i as usize, value + i) };
            }
        }
    }
}

/// A host build of `store_value` whose argument struct is `S` and whose body never runs (every
/// test that uses it expects it refused).
struct Declares<S>(core::marker::PhantomData<S>);

impl<S: aqueduct_engine::host_build::KernelArgs> HostKernel for Declares<S> {
    const SYMBOL: &'static str = "store_value.kd";
    type Args = S;

    fn workgroup(_: &mut Workgroup<'_, S>) {}
}

/// Registers `kernel` for a fresh copy of the fixture; returns the error and that nothing was
/// registered.
fn refused(tag: u8, kernel: HostBuild) -> EngineError {
    let engine = engine();
    let bytes = code_object(tag);
    let error = engine.device().register_host_builds(bytes, &[kernel]).expect_err("a mismatch is refused");
    assert!(
        aqueduct_soft_hsa::registered_kernel(CodeObjectId::of(bytes), kernel.symbol).is_none(),
        "a refused host build is not registered"
    );
    error
}

#[test]
fn a_rust_host_build_that_matches_the_metadata_runs_a_typed_launch() {
    let engine = engine();
    let device = engine.device();
    let bytes = code_object(1);
    let taken = device.register_host_builds(bytes, &[HostBuild::of::<StoreValue>()]).expect("matches");
    assert!(taken, "the soft runtime (embedded or the drop-in) takes host builds");
    let kernel = device.load_executable(bytes).expect("loads").kernel("store_value").expect("kernel");
    // 1000 is no multiple of the 64-item workgroup: the last one is partial, and the buffer's
    // tail past `count` must stay untouched.
    let out = device.buffer_from(MemoryKind::HostVisible, &[u32::MAX; 1024]).expect("buffer");
    let queue = device.create_queue().expect("queue");
    let done = device.create_semaphore(0).expect("semaphore");
    queue
        .launch(&kernel)
        .grid([1000, 1, 1])
        .workgroup([64, 1, 1])
        .arg(&out)
        .arg(7u32)
        .arg(1000u32)
        .signal(done.at(1))
        .submit()
        .expect("launch");
    done.wait(1, TIMEOUT).expect("the dispatch completes");
    let values = out.to_vec().expect("read back");
    for (index, value) in values.iter().enumerate() {
        let expected = if index < 1000 { 7 + index as u32 } else { u32::MAX };
        assert_eq!(*value, expected, "element {index}");
    }
}

/// `SoftKernel` and `register_host_kernels`, the names before issue 56's renames, still work: code written against
/// them registers and runs unchanged (with a deprecation warning).
#[test]
#[allow(deprecated)]
fn the_old_name_soft_kernel_still_registers_a_host_build() {
    use aqueduct_engine::host_build::SoftKernel;
    let engine = engine();
    let device = engine.device();
    let bytes = code_object(10);
    let old: SoftKernel = SoftKernel::of::<StoreValue>();
    assert_eq!(old.symbol, HostBuild::of::<StoreValue>().symbol);
    assert!(device.register_host_kernels(bytes, &[old]).expect("matches"), "the soft runtime takes it");
    let kernel = device.load_executable(bytes).expect("loads").kernel("store_value").expect("kernel");
    let out = device.buffer_from(MemoryKind::HostVisible, &[u32::MAX; 64]).expect("buffer");
    let queue = device.create_queue().expect("queue");
    let done = device.create_semaphore(0).expect("semaphore");
    let launch = queue.launch(&kernel).grid([64, 1, 1]).workgroup([64, 1, 1]).arg(&out).arg(3u32).arg(64u32);
    launch.signal(done.at(1)).submit().expect("launch");
    done.wait(1, TIMEOUT).expect("the dispatch completes");
    let expected: Vec<u32> = (0..64).map(|index| 3 + index).collect();
    assert_eq!(out.to_vec().expect("read back"), expected);
}

#[test]
fn a_declaration_built_from_host_args_by_hand_is_checked_the_same_way() {
    static MATCHING: [HostArg; 3] =
        [HostArg::pointer(0).named(c"out"), HostArg::value(8, 4).named(c"value"), HostArg::value(12, 4)];
    static NULLABLE_VALUE_AT_12: [HostArg; 3] =
        [HostArg::pointer(0).nullable(), HostArg::value(8, 4), HostArg::value(12, 8).named(c"count")];
    let function = HostBuild::of::<StoreValue>().function;
    let engine = engine();
    let bytes = code_object(2);
    let matching = HostBuild { symbol: "store_value.kd", function, args: Some(&MATCHING) };
    assert!(engine.device().register_host_builds(bytes, &[matching]).expect("matches"));

    let wrong = HostBuild { symbol: "store_value.kd", function, args: Some(&NULLABLE_VALUE_AT_12) };
    let EngineError::HostBuildMismatch(mismatch) = refused(3, wrong) else { panic!("not a host-build mismatch") };
    assert_eq!((mismatch.index, mismatch.name.as_deref()), (2, Some("count")));
    assert_eq!(mismatch.declared, Some(ArgPlacement { offset: 12, size: 8, pointer: false }));
    assert_eq!(mismatch.metadata, Some(ArgPlacement { offset: 12, size: 4, pointer: false }));
}

#[test]
fn a_wrongly_sized_argument_is_refused_naming_the_kernel_and_the_argument() {
    kernel_args! {
        struct WideValue {
            out: DevicePtr<u32>,
            value: u64,
            count: u32,
        }
    }
    let error = refused(4, HostBuild::of::<Declares<WideValue>>());
    let EngineError::HostBuildMismatch(mismatch) = &error else { panic!("not a host-build mismatch: {error}") };
    assert_eq!(mismatch.symbol, "store_value.kd");
    assert_eq!((mismatch.index, mismatch.name.as_deref()), (1, Some("value")));
    assert_eq!(mismatch.declared, Some(ArgPlacement { offset: 8, size: 8, pointer: false }));
    assert_eq!(mismatch.metadata, Some(ArgPlacement { offset: 8, size: 4, pointer: false }));
    let message = error.to_string();
    assert!(message.contains("store_value.kd") && message.contains("argument 1 `value`"), "{message}");
}

#[test]
fn a_declaration_missing_an_argument_is_refused() {
    kernel_args! {
        struct NoCount {
            out: DevicePtr<u32>,
            value: u32,
        }
    }
    let EngineError::HostBuildMismatch(mismatch) = refused(5, HostBuild::of::<Declares<NoCount>>()) else {
        panic!("not a host-build mismatch")
    };
    assert_eq!(mismatch.index, 2);
    assert_eq!(mismatch.declared, None);
    assert_eq!(mismatch.metadata, Some(ArgPlacement { offset: 12, size: 4, pointer: false }));
    assert!(mismatch.to_string().contains("it declares no such argument"), "{mismatch}");
}

#[test]
fn a_value_where_the_kernel_takes_a_pointer_is_refused() {
    kernel_args! {
        struct AddressAsNumber {
            out: u64,
            value: u32,
            count: u32,
        }
    }
    let EngineError::HostBuildMismatch(mismatch) = refused(6, HostBuild::of::<Declares<AddressAsNumber>>()) else {
        panic!("not a host-build mismatch")
    };
    assert_eq!((mismatch.index, mismatch.name.as_deref()), (0, Some("out")));
    assert_eq!(mismatch.declared.map(|arg| arg.pointer), Some(false));
    assert_eq!(mismatch.metadata.map(|arg| arg.pointer), Some(true));
}

#[test]
fn a_host_build_for_a_symbol_the_code_object_lacks_is_refused() {
    /// `store_value` without `.kd`: the soft runtime keys host builds by descriptor symbol, so
    /// this one would never be found.
    struct BareName;
    impl HostKernel for BareName {
        const SYMBOL: &'static str = "store_value";
        type Args = StoreValueArgs;
        fn workgroup(_: &mut Workgroup<'_, StoreValueArgs>) {}
    }
    let EngineError::UnknownKernel(unknown) = refused(7, HostBuild::of::<BareName>()) else {
        panic!("not an unknown kernel")
    };
    assert_eq!(unknown.requested, "store_value");
    assert!(unknown.available.iter().any(|symbol| symbol == "store_value.kd"), "{unknown}");
}

#[test]
fn a_mismatch_registered_below_the_engine_fails_the_load() {
    kernel_args! {
        struct ShiftedCount {
            out: DevicePtr<u32>,
            value: u32,
            padding: u32,
            count: u32,
        }
    }
    // The registry of the embedded soft runtime, whichever device the other tests use.
    let engine = Engine::new("soft").expect("soft engine");
    let bytes = code_object(8);
    aqueduct_soft_hsa::register_kernels(CodeObjectId::of(bytes), &[HostBuild::of::<Declares<ShiftedCount>>()]);
    let error = engine.device().load_executable(bytes).err().expect("the load is refused");
    let EngineError::HostBuildMismatch(mismatch) = &error else { panic!("not a host-build mismatch: {error}") };
    assert_eq!(mismatch.symbol, "store_value.kd");
    // `padding` sits where the metadata's `count` does, 4 bytes at 12, so the first difference is
    // the extra fourth argument, named from the declaration.
    assert_eq!((mismatch.index, mismatch.name.as_deref()), (3, Some("count")));
    assert_eq!((mismatch.declared.map(|arg| arg.offset), mismatch.metadata), (Some(16), None));
}

/// A host build of `store_value` that panics in workgroup 1.
struct PanicsInSecondWorkgroup;

impl HostKernel for PanicsInSecondWorkgroup {
    const SYMBOL: &'static str = "store_value.kd";
    type Args = StoreValueArgs;

    fn workgroup(group: &mut Workgroup<'_, StoreValueArgs>) {
        assert!(group.id()[0] != 1, "workgroup 1 refuses to run");
    }
}

#[test]
fn a_panicking_rust_host_build_fails_its_queue_and_the_process_goes_on() {
    let engine = engine();
    let device = engine.device();
    let bytes = code_object(9);
    device.register_host_builds(bytes, &[HostBuild::of::<PanicsInSecondWorkgroup>()]).expect("matches");
    let kernel = device.load_executable(bytes).expect("loads").kernel("store_value").expect("kernel");
    let out = device.buffer_from(MemoryKind::HostVisible, &[0u32; 256]).expect("buffer");
    let queue = device.create_queue().expect("queue");
    let done = device.create_semaphore(0).expect("semaphore");
    let launch = queue.launch(&kernel).grid([256, 1, 1]).workgroup([64, 1, 1]).arg(&out).arg(1u32).arg(256u32);
    launch.signal(done.at(1)).submit().expect("launch");
    // A GPU kernel that traps fails its queue with HSA_STATUS_ERROR_EXCEPTION; so does this.
    let Err(EngineError::SemaphoreFailed(record)) = done.wait(1, TIMEOUT) else { panic!("the dispatch fails") };
    assert_eq!(record.status, Some(0x1016), "{}", record.message);
    // The panic's text reaches the error in-process; through the drop-in (another copy of the
    // runner) only the failure does, and the text went to stderr.
    let said =
        if common::test_device() == "soft" { "workgroup 1 refuses to run" } else { "its panic message went to stderr" };
    assert!(record.message.contains(said), "{}", record.message);
    // The process, the device and other queues are fine.
    let other = device.create_queue().expect("another queue");
    let again = device.create_semaphore(0).expect("semaphore");
    other.fill(out.whole(), &5u32.to_le_bytes()).signal(again.at(1)).submit().expect("fill");
    again.wait(1, TIMEOUT).expect("the other queue runs");
}
