//! The soft runtime keys host builds by code object (a content hash of its bytes) and symbol:
//! a code object with no registered host build still loads with its metadata, and dispatching
//! one of its kernels faults the queue naming the kernel and the code object; two code objects
//! with the same symbols but different bytes get different implementations; a host build whose
//! argument layout disagrees with the metadata is refused.

mod common;

use std::sync::OnceLock;

use aqueduct_abi::{HostArg, HostBuild, WorkgroupContext};
use aqueduct_builtins::{Builtin, DeviceLibrary, plan_fill};
use aqueduct_codeobject::{CodeObject, CodeObjectId};
use aqueduct_hsa::sys::status;
use common::{Client, SENTINEL};

/// The gfx1100 device library with a few bytes appended: the same kernels, symbols, metadata and
/// machine code, but other bytes, so another identity.
fn altered_library() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let mut bytes = DeviceLibrary::code_object("gfx1100").expect("embedded").to_vec();
        bytes.extend_from_slice(b"\0aqueduct: same kernels, other bytes");
        bytes
    })
}

/// These tests are about host builds, so they run kernels through them whatever
/// `AQUEDUCT_SOFT_EXEC` says: every test sets this before the soft runtime first initializes.
fn host_builds_only() {
    use aqueduct_soft_hsa::{KernelExecution, SoftConfig, configure};
    configure(SoftConfig { kernel_execution: KernelExecution::Host, ..SoftConfig::default() });
}

/// Fills a 64-byte buffer with `fill_x1` through `client` and returns it.
fn fill_64(client: &Client) -> &mut [u8] {
    let buffer = client.alloc(64);
    buffer.fill(SENTINEL);
    let plan = plan_fill(buffer.as_ptr() as u64, 63, 0x5A, 1).expect("valid");
    assert_eq!(plan.kernel, Builtin::FillX1);
    client.run(&[plan]);
    buffer
}

#[test]
fn a_code_object_without_host_builds_loads_and_its_dispatch_names_kernel_and_code_object() {
    host_builds_only();
    let bytes = altered_library();
    let id = CodeObjectId::of(bytes);
    assert_ne!(id, CodeObjectId::of(DeviceLibrary::code_object("gfx1100").expect("embedded")));
    // Loads, with every kernel and its metadata.
    let client = Client::loading(0, Some(bytes));
    let metadata = CodeObject::parse(bytes).expect("parses");
    for builtin in Builtin::ALL {
        let kernel = metadata.kernel(builtin.name()).expect("listed");
        assert_eq!(client.kernel(builtin).kernarg_segment_size, kernel.kernarg_segment_size, "{builtin}");
    }
    // But `copy_x1.kd` of these bytes has no host build (nothing is registered for `id` with
    // that symbol; another test here registers only `fill_x1.kd`).
    let source = client.alloc(16);
    let target = client.alloc(16);
    let plan = aqueduct_builtins::plan_copy(source.as_ptr() as u64 + 1, target.as_ptr() as u64, 3).expect("valid");
    assert_eq!(plan.kernel, Builtin::CopyX1);
    let (code, detail) = client.run_faulting(&plan);
    assert_eq!(code, status::ERROR_INVALID_CODE_SYMBOL, "{detail}");
    for part in ["copy_x1.kd", &id.to_string(), "gfx1100", "no CPU implementation"] {
        assert!(detail.contains(part), "`{part}` missing from: {detail}");
    }
}

/// Writes 0xA5 over the first 8 bytes of its target, whatever the pattern: visibly not fill_x1.
unsafe extern "C" fn marker(context: *const WorkgroupContext) {
    // SAFETY: the runner passes a valid context whose kernarg segment starts with the fill
    // target, which the test made 64 bytes long.
    unsafe {
        let context = &*context;
        if context.workgroup_id == [0, 0, 0] {
            let target = context.kernarg::<u64>(0) as *mut u8;
            target.write_bytes(0xA5, 8);
        }
    }
}

/// The fill layout (target, element_count, pattern) as a Rust kernel can declare it.
static FILL_LAYOUT: [HostArg; 3] = [
    HostArg { name: c"target".as_ptr(), offset: 0, size: 8, flags: HostArg::POINTER },
    HostArg { name: c"element_count".as_ptr(), offset: 8, size: 8, flags: 0 },
    HostArg { name: c"pattern".as_ptr(), offset: 16, size: 8, flags: 0 },
];

#[test]
fn the_same_symbol_in_other_bytes_gets_its_own_implementation() {
    host_builds_only();
    let bytes = altered_library();
    aqueduct_soft_hsa::register_kernels(
        CodeObjectId::of(bytes),
        &[HostBuild { symbol: Builtin::FillX1.symbol(), function: marker, args: Some(&FILL_LAYOUT) }],
    );
    // The embedded object still runs the C fill ...
    // Each client stays alive while its buffer is read: dropping the last one shuts the runtime
    // down, which frees every allocation.
    let client = Client::new();
    let original = fill_64(&client);
    assert!(original[..63].iter().all(|byte| *byte == 0x5A), "{:?}", &original[..]);
    assert_eq!(original[63], SENTINEL);
    // ... and the altered one runs what was registered for its bytes.
    let altered_client = Client::loading(0, Some(bytes));
    let altered = fill_64(&altered_client);
    assert_eq!(&altered[..8], &[0xA5; 8]);
    assert!(altered[8..].iter().all(|byte| *byte == SENTINEL));
}

#[test]
fn a_host_build_whose_layout_disagrees_with_the_metadata_is_refused() {
    host_builds_only();
    // Its own identity, so the registration cannot disturb the other tests.
    let mut bytes = altered_library().to_vec();
    bytes.push(1);
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    static WRONG: [HostArg; 3] = [
        HostArg { name: c"target".as_ptr(), offset: 0, size: 8, flags: HostArg::POINTER },
        HostArg { name: c"element_count".as_ptr(), offset: 8, size: 4, flags: 0 },
        HostArg { name: c"pattern".as_ptr(), offset: 16, size: 8, flags: 0 },
    ];
    aqueduct_soft_hsa::register_kernels(
        CodeObjectId::of(bytes),
        &[HostBuild { symbol: Builtin::FillX1.symbol(), function: marker, args: Some(&WRONG) }],
    );
    let client = Client::loading(0, Some(bytes));
    let buffer = client.alloc(64);
    buffer.fill(SENTINEL);
    let plan = plan_fill(buffer.as_ptr() as u64, 63, 0x5A, 1).expect("valid");
    let (code, detail) = client.run_faulting(&plan);
    assert_eq!(code, status::ERROR_INVALID_CODE_SYMBOL, "{detail}");
    assert!(detail.contains("fill_x1.kd") && detail.contains("metadata declares"), "{detail}");
    assert!(buffer.iter().all(|byte| *byte == SENTINEL), "the refused kernel did not run");
}
