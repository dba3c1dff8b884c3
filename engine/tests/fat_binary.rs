//! Fat binaries: `Device::load_executable` given a clang offload bundle (or a host ELF with a
//! `.hip_fatbin`) loads the entry HIP would pick for the device's agents, and runs it from its
//! machine code. The soft runtime is process-wide and reads its agent list when it starts, so
//! each test holds one lock for its whole run, as in `multi_agent.rs`.

mod common;

use std::sync::{Mutex, MutexGuard};

use aqueduct_engine::{EngineConfig, EngineError, MemoryKind};
use aqueduct_hsa::ExecutableError;
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig};
use common::*;

#[path = "../../codeobject/tests/common/bundle_builder.rs"]
mod bundle_builder;
use bundle_builder::build_bundle as bundle;

static RUNTIME: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    RUNTIME.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// `saxpy(y, x, a, count)`, clang-19 `-mcpu=gfx11-generic` (`kernels/saxpy.c`).
const SAXPY_GFX11_GENERIC: &[u8] = include_bytes!("../../kernels/saxpy_gfx11-generic.hsaco");
/// `saxpy` again, for the gfx10.3 family.
const SAXPY_GFX10_3_GENERIC: &[u8] = include_bytes!("../../kernels/saxpy_gfx10-3-generic.hsaco");
/// The ISA suite's GEMM kernels, one build per exact processor: other kernels than saxpy, so
/// which entry was loaded shows in the kernel names.
const GEMM_GFX1100: &[u8] = include_bytes!("../../isa/tests/kernels/gemm_gfx1100.hsaco");
const GEMM_GFX1030: &[u8] = include_bytes!("../../isa/tests/kernels/gemm_gfx1030.hsaco");
const HOST_ENTRY: &str = "host-x86_64-unknown-linux-gnu-";

fn names(executable: &aqueduct_engine::Executable) -> Vec<String> {
    let mut names: Vec<String> = executable.kernel_names().map(str::to_owned).collect();
    names.sort();
    names
}

fn engine_on(isa: &str) -> aqueduct_engine::Engine {
    let agents = vec![SoftAgentConfig::with_isa(&format!("amdgcn-amd-amdhsa--{isa}"), 32)];
    engine_with(EngineConfig { soft: SoftConfig { agents, ..SoftConfig::default() }, ..EngineConfig::default() })
}

/// On a gfx1100 agent the gfx1100 entry wins over the gfx11-generic one listed before it, and a
/// bundle without one takes the family's; on a gfx1030 agent the gfx1030 entry wins.
#[test]
fn the_agents_processor_wins_over_its_family_whatever_the_order() {
    let _runtime = exclusive();
    let fat = bundle(&[
        (HOST_ENTRY, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", SAXPY_GFX11_GENERIC),
        ("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", SAXPY_GFX10_3_GENERIC),
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", GEMM_GFX1030),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", GEMM_GFX1100),
    ]);
    for (isa, exact) in [("gfx1100", GEMM_GFX1100), ("gfx1030", GEMM_GFX1030)] {
        let engine = engine_on(isa);
        let device = engine.device();
        let expected = names(&device.load_executable(exact).expect("the exact build alone"));
        assert_eq!(names(&device.load_executable(&fat).expect("the bundle")), expected, "{isa}");
        assert_eq!(device.select_code_object(&[SAXPY_GFX11_GENERIC, GEMM_GFX1030, exact]).unwrap(), exact);
    }
    let engine = engine_on("gfx1100");
    let family_only = bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", GEMM_GFX1030),
        ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", SAXPY_GFX11_GENERIC),
    ]);
    let loaded = engine.device().load_executable(&family_only).expect("the family's entry");
    assert_eq!(names(&loaded), ["saxpy"]);
}

/// The entry picked from a bundle runs from its own machine code: saxpy, every element checked.
#[test]
fn a_kernel_from_a_bundle_runs() {
    let _runtime = exclusive();
    let engine = engine_on("gfx1100");
    let device = engine.device();
    let fat = bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", GEMM_GFX1030),
        ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", SAXPY_GFX11_GENERIC),
    ]);
    let saxpy = device.load_executable(&fat).expect("the bundle").kernel("saxpy").expect("saxpy");
    let count = 1000u32;
    let x_values: Vec<f32> = (0..count).map(|i| i as f32).collect();
    let y_values: Vec<f32> = (0..count).map(|i| (i % 5) as f32).collect();
    let x = device.buffer_from(MemoryKind::HostVisible, &x_values).unwrap();
    let y = device.buffer_from(MemoryKind::HostVisible, &y_values).unwrap();
    let queue = device.create_queue().unwrap();
    let done = device.create_semaphore(0).unwrap();
    queue
        .launch(&saxpy)
        .grid([count, 1, 1])
        .arg(&y)
        .arg(&x)
        .arg(2.0f32)
        .arg(count)
        .signal(done.at(1))
        .submit()
        .unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let result = y.to_vec().unwrap();
    for (index, got) in result.iter().enumerate() {
        assert_eq!(*got, 2.0 * x_values[index] + y_values[index], "element {index}");
    }
}

/// A bundle with nothing for the agent names every entry's reason; bytes that start as a bundle
/// but are not one, and a compressed bundle, are typed errors.
#[test]
fn a_bundle_with_nothing_for_the_agent_is_refused_with_each_reason() {
    let _runtime = exclusive();
    let engine = engine_on("gfx1100");
    let device = engine.device();
    let fat = bundle(&[
        (HOST_ENTRY, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", GEMM_GFX1030),
        ("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", SAXPY_GFX10_3_GENERIC),
    ]);
    match device.load_executable(&fat) {
        Err(EngineError::NoCodeObjectForAgents { agents, rejected }) => {
            assert!(agents.contains("gfx1100"), "{agents}");
            // The host entry has no code object and is not a candidate.
            assert_eq!(rejected.len(), 2, "{rejected:?}");
            assert!(rejected[0].contains("gfx1030") && rejected[1].contains("gfx10-3-generic"), "{rejected:?}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let mut truncated = fat.clone();
    truncated.truncate(40);
    assert!(matches!(
        device.load_executable(&truncated),
        Err(EngineError::Executable(ExecutableError::Bundle(aqueduct_codeobject::BundleError::Truncated(_))))
    ));
    assert!(matches!(
        device.load_executable(b"CCOB\x01\x00\x02\x00rest"),
        Err(EngineError::Executable(ExecutableError::Bundle(aqueduct_codeobject::BundleError::Compressed)))
    ));
}

/// A minimal x86-64 relocatable ELF whose only sections are `.hip_fatbin`, holding `fatbin`, and
/// the section-name table: the shape the loader reads from a HIP host object.
fn host_elf(fatbin: &[u8]) -> Vec<u8> {
    let names = b"\0.hip_fatbin\0.shstrtab\0";
    let fatbin_at = 64usize;
    let names_at = fatbin_at + fatbin.len();
    let headers_at = (names_at + names.len()).next_multiple_of(8);
    let mut elf = vec![0u8; headers_at];
    elf[..16].copy_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    let put = |elf: &mut Vec<u8>, at: usize, bytes: &[u8]| elf[at..at + bytes.len()].copy_from_slice(bytes);
    put(&mut elf, 16, &1u16.to_le_bytes()); // ET_REL
    put(&mut elf, 18, &62u16.to_le_bytes()); // EM_X86_64
    put(&mut elf, 20, &1u32.to_le_bytes()); // EV_CURRENT
    put(&mut elf, 40, &(headers_at as u64).to_le_bytes()); // e_shoff
    put(&mut elf, 52, &64u16.to_le_bytes()); // e_ehsize
    put(&mut elf, 58, &64u16.to_le_bytes()); // e_shentsize
    put(&mut elf, 60, &3u16.to_le_bytes()); // e_shnum
    put(&mut elf, 62, &2u16.to_le_bytes()); // e_shstrndx
    put(&mut elf, fatbin_at, fatbin);
    put(&mut elf, names_at, names);
    // Section headers: null; .hip_fatbin (PROGBITS); .shstrtab (STRTAB).
    for (name, kind, offset, size) in
        [(0u32, 0u32, 0usize, 0usize), (1, 1, fatbin_at, fatbin.len()), (13, 3, names_at, names.len())]
    {
        let mut header = [0u8; 64];
        header[..4].copy_from_slice(&name.to_le_bytes());
        header[4..8].copy_from_slice(&kind.to_le_bytes());
        header[24..32].copy_from_slice(&(offset as u64).to_le_bytes());
        header[32..40].copy_from_slice(&(size as u64).to_le_bytes());
        header[48..56].copy_from_slice(&1u64.to_le_bytes());
        elf.extend_from_slice(&header);
    }
    elf
}

/// A host object whose `.hip_fatbin` holds one bundle loads the entry for the agent, as HIP's
/// registration of that bundle would. One with several bundles (one a translation unit; the
/// codeobject crate's hipcc-built fixture has two) is refused, naming the count: each is its own
/// module.
#[test]
fn a_host_objects_fatbin_loads_the_entry_for_the_agent() {
    let _runtime = exclusive();
    let engine = engine_on("gfx1100");
    let device = engine.device();
    let fat = bundle(&[
        (HOST_ENTRY, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", SAXPY_GFX11_GENERIC),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", GEMM_GFX1100),
    ]);
    let host = host_elf(&fat);
    assert_eq!(aqueduct_codeobject::parse_bundles(&host).expect("the host ELF reads").len(), 1);
    let expected = names(&device.load_executable(GEMM_GFX1100).unwrap());
    assert_eq!(names(&device.load_executable(&host).expect("the host object")), expected);

    const HIPCC_HOST_OBJECT: &[u8] = include_bytes!("../../codeobject/tests/fixtures/host-with-fatbin.o");
    assert!(matches!(
        device.load_executable(HIPCC_HOST_OBJECT),
        Err(EngineError::Executable(ExecutableError::BundleCount(2)))
    ));
    assert!(matches!(
        device.load_executable(&host_elf(b"")),
        Err(EngineError::Executable(ExecutableError::BundleCount(0)))
    ));
    // A host ELF without `.hip_fatbin` holds no device code: the code-object parser refuses it.
    let mut renamed = host.clone();
    let at = renamed.windows(11).position(|window| window == b".hip_fatbin").expect("the section name");
    renamed[at + 10] = b'x';
    assert!(matches!(device.load_executable(&renamed), Err(EngineError::Executable(ExecutableError::CodeObject(_)))));
}
