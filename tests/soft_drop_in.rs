//! The soft runtime as a drop-in `libhsa-runtime64.so.1` (`scripts/build-libhsa.sh`): its exports
//! against ROCr 5.2.3's, and Debian's unmodified `rocminfo` on it (`scripts/with-soft-gpu.sh`)
//! against `aqueduct info` and the layout of a published ROCr dump.
//!
//! `scripts/test.sh` builds the drop-in and names its directory in `AQUEDUCT_SOFT_LIBHSA_DIR`.
//! Without it, or without Debian's ROCr and rocminfo, these tests print SKIPPED, unless
//! `AQUEDUCT_REQUIRE_ROCR=1` (CI) makes that a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEBIAN_ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

/// What a test needs, or why it cannot run here (a failure when CI requires it).
fn require(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    if std::env::var_os("AQUEDUCT_REQUIRE_ROCR").is_some_and(|value| value == "1") {
        panic!("{what} is required (AQUEDUCT_REQUIRE_ROCR=1) but missing");
    }
    eprintln!("SKIPPED: {what} is missing");
    false
}

fn drop_in_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AQUEDUCT_SOFT_LIBHSA_DIR").map(PathBuf::from)?;
    dir.join("libhsa-runtime64.so.1").exists().then_some(dir)
}

/// `objdump -T` of a library: its defined dynamic symbols with their version node.
fn exports(library: &Path) -> BTreeMap<String, String> {
    let output = Command::new("objdump").arg("-T").arg(library).output().expect("objdump runs");
    assert!(output.status.success(), "objdump -T {}", library.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(" DF ") && !line.contains("*UND*"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (name, version) = (fields.last()?, fields.get(fields.len().checked_sub(2)?)?);
            Some((name.to_string(), version.trim_matches(|c| c == '(' || c == ')').to_string()))
        })
        .collect()
}

/// `objdump -T` of a library: its defined data objects with their size and version node.
fn data_exports(library: &Path) -> BTreeMap<String, (String, String)> {
    let output = Command::new("objdump").arg("-T").arg(library).output().expect("objdump runs");
    assert!(output.status.success(), "objdump -T {}", library.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(" DO ") && !line.contains("*ABS*") && !line.contains("*UND*"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let count = fields.len();
            let (name, version, size) =
                (fields.last()?, fields.get(count.checked_sub(2)?)?, fields.get(count.checked_sub(3)?)?);
            Some((name.to_string(), (size.to_string(), version.trim_matches(|c| c == '(' || c == ')').to_string())))
        })
        .collect()
}

#[test]
fn the_drop_in_exports_what_rocr_5_2_3_exports() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("Debian's libhsa-runtime64-1", Path::new(DEBIAN_ROCR).exists())
    {
        return;
    }
    let library = dir.unwrap().join("libhsa-runtime64.so.1");
    let ours = exports(&library);
    let rocr = exports(Path::new(DEBIAN_ROCR));
    assert_eq!(rocr.len(), 224, "ROCr 5.2.3 exports 224 functions");
    let missing: Vec<&String> = rocr.keys().filter(|name| !ours.contains_key(*name)).collect();
    assert!(missing.is_empty(), "ROCr 5.2.3 exports these and the drop-in does not: {missing:?}");
    // And its one data object, the loader's debugger list: same size, same version node.
    let (our_data, rocr_data) = (data_exports(&library), data_exports(Path::new(DEBIAN_ROCR)));
    assert_eq!(rocr_data.keys().collect::<Vec<_>>(), ["_amdgpu_r_debug"]);
    assert_eq!(our_data, rocr_data, "`_amdgpu_r_debug`, a 40-byte struct r_debug under ROCR_1");
}

#[test]
fn the_drop_in_exports_only_rocr_entry_points_under_rocr_versions() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("Debian's libhsa-runtime64-1", Path::new(DEBIAN_ROCR).exists())
    {
        return;
    }
    let library = dir.unwrap().join("libhsa-runtime64.so.1");
    let ours = exports(&library);
    let rocr = exports(Path::new(DEBIAN_ROCR));
    let soname = Command::new("readelf").arg("-d").arg(&library).output().expect("readelf runs");
    assert!(String::from_utf8_lossy(&soname.stdout).contains("Library soname: [libhsa-runtime64.so.1]"));
    // Exactly the entry points the engine's table names and the drop-in's own, plus the vendor
    // extension.
    let mut expected: Vec<&str> = aqueduct_hsa::HsaApi::SYMBOLS.to_vec();
    expected.extend(aqueduct_soft_hsa::drop_in::DROP_IN_SYMBOLS);
    expected.extend([
        "aqueduct_soft_register_kernel",
        "aqueduct_soft_inject_fault",
        "aqueduct_soft_release_stall",
        "aqueduct_soft_set_queue_mode",
        "aqueduct_soft_queue_error_detail",
        "aqueduct_soft_configure",
    ]);
    expected.sort();
    assert_eq!(ours.keys().map(String::as_str).collect::<Vec<_>>(), expected);
    for (name, version) in &ours {
        if name.starts_with("aqueduct_soft_") {
            assert_eq!(version, "AQUEDUCT_SOFT_1", "{name}");
            continue;
        }
        assert_eq!(rocr.get(name), Some(version), "{name} is exported by ROCr 5.2.3 with the same version node");
    }
    // Everything rocminfo imports is there.
    let imports = Command::new("objdump").args(["-T", "/usr/bin/rocminfo"]).output().ok();
    if let Some(imports) = imports.filter(|output| output.status.success()) {
        for line in String::from_utf8_lossy(&imports.stdout).lines().filter(|line| line.contains("*UND*")) {
            let Some(name) = line.split_whitespace().last().filter(|name| name.starts_with("hsa_")) else { continue };
            assert!(ours.contains_key(name), "rocminfo imports {name}");
        }
    }
}

/// Agents of rocminfo-shaped text: per agent, `key: value` lines, pool and ISA lines prefixed
/// with their pool or ISA ("Pool 2/Segment").
fn agents(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut agents: Vec<BTreeMap<String, String>> = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("Agent ") && !trimmed.contains(':') {
            agents.push(BTreeMap::new());
            section.clear();
            continue;
        }
        let Some(agent) = agents.last_mut() else { continue };
        if (trimmed.starts_with("Pool ") || trimmed.starts_with("ISA ")) && !trimmed.contains(':') {
            section = format!("{trimmed}/");
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            agent.insert(format!("{section}{}", key.trim()), value.trim().to_string());
        }
    }
    agents
}

#[test]
fn rocminfo_runs_on_the_drop_in_and_agrees_with_aqueduct_info() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("Debian's rocminfo", Path::new("/usr/bin/rocminfo").exists())
    {
        return;
    }
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/with-soft-gpu.sh");
    // Both runtimes with the same agents (their unconfigured defaults differ: gfx1030 for the
    // drop-in, gfx1100 embedded).
    let soft_agents = "gfx1100,gfx1030";
    let output = Command::new(&harness)
        .arg("rocminfo")
        .env("AQUEDUCT_SOFT_AGENTS", soft_agents)
        .output()
        .expect("the harness runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() && stderr.contains("unshare") {
        // A private mount namespace needs root (CI runs as root).
        if !require("a private mount namespace (unshare -m)", false) {
            return;
        }
    }
    assert!(output.status.success(), "rocminfo failed:\n{text}\n{stderr}");
    assert!(text.contains("*** Done ***"), "{text}");
    let theirs = agents(&text);
    let info = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .args(["info", "--provider", "soft"])
        .env("AQUEDUCT_SOFT_AGENTS", soft_agents)
        .output()
        .unwrap();
    assert!(info.status.success());
    let ours = agents(&String::from_utf8_lossy(&info.stdout));
    assert_eq!(theirs.len(), ours.len(), "the same agents");
    assert!(theirs.len() >= 2);
    // The layout of a published ROCr dump: the CPU agent first with its fine-grained and
    // kernarg pools, then the GPU agents.
    assert_eq!(theirs[0]["Device Type"], "CPU");
    assert_eq!(theirs[0]["Pool 1/Segment"], "GLOBAL; FLAGS: FINE GRAINED");
    assert_eq!(theirs[0]["Pool 2/Segment"], "GLOBAL; FLAGS: KERNARG, FINE GRAINED");
    assert!(theirs[1..].iter().all(|agent| agent["Device Type"] == "GPU"));
    // Every field both print says the same.
    for (index, (rocminfo, aqueduct)) in theirs.iter().zip(&ours).enumerate() {
        let mut compared = 0;
        for (key, value) in aqueduct {
            if let Some(theirs) = rocminfo.get(key) {
                // rocminfo 5.2.3 predates the extended-scope fine-grained flag (ROCm 6 prints
                // it, as `aqueduct info` and the dump do): it prints no name for it.
                let value = value.replace(" EXTENDED FINE GRAINED", "");
                assert_eq!(*theirs, value, "agent {}: {key}", index + 1);
                compared += 1;
            }
        }
        assert!(compared >= 10, "agent {}: only {compared} fields in common", index + 1);
    }
    for gpu in &theirs[1..] {
        assert!(gpu["ISA 1/Name"].starts_with("amdgcn-amd-amdhsa--"), "{gpu:?}");
        assert_eq!(gpu["Wavefront Size"], format!("{}(0x{:x})", 32, 32));
        assert_eq!(gpu["Queue Min Size"], "64(0x40)");
    }
}

#[test]
fn a_c_program_written_against_hsa_h_dispatches_the_fill_kernel_on_the_drop_in() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("the HSA headers (libhsa-runtime-dev)", Path::new("/usr/include/hsa/hsa.h").exists())
    {
        return;
    }
    let dir = dir.unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary = build_c("fill", &dir);
    // It resolves libhsa-runtime64.so.1 to the drop-in, not to Debian's ROCr.
    let ldd = Command::new("ldd").arg(&binary).env("LD_LIBRARY_PATH", &dir).output().expect("ldd runs");
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.contains(&format!("{}/libhsa-runtime64.so.1", dir.display())), "{ldd}");
    // The device library built for the soft GPU the drop-in starts: the first agent of
    // AQUEDUCT_SOFT_AGENTS (scripts/test.sh runs this on a gfx1100 too), else the drop-in's own
    // default, gfx1030.
    let agents = std::env::var("AQUEDUCT_SOFT_AGENTS").unwrap_or_default();
    let first = agents.split(',').next().and_then(|agent| agent.split(['@', ':']).next()).map(str::trim);
    let target = first.filter(|target| !target.is_empty()).unwrap_or("gfx1030");
    let code_object = root.join(format!("builtins/prebuilt/amdgcn-amd-amdhsa--{target}.hsaco"));
    let run = Command::new(&binary).arg(code_object).env("LD_LIBRARY_PATH", &dir).output().expect("it runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains("fill_x4: 1000 words of 0xa5c3e1f0, all correct"), "{stdout}");
}

#[test]
fn the_demo_and_command_buffers_run_through_the_rocr_provider_on_the_drop_in() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some()) {
        return;
    }
    let library = dir.unwrap().join("libhsa-runtime64.so.1");
    let run = |arguments: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .args(arguments)
            .env("AQUEDUCT_LIBHSA_PATH", &library)
            .output()
            .expect("the binary runs");
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{arguments:?}:\n{text}");
        text
    };
    // The libloading table, ROCr's queue, signal, memory and executable paths, on the drop-in.
    let demo = run(&["demo", "--device", "amdgpu", "--handoffs", "64"]);
    assert!(demo.contains(&format!("provider:    rocr (requested ROCr ({}))", library.display())), "{demo}");
    assert!(demo.contains("all correct"), "{demo}");
    // `auto` picks it as ROCr with a GPU agent.
    let info = run(&["info"]);
    assert!(info.contains("Provider: rocr"), "{info}");
    // Command-buffer recording and execution, checked by the bench shapes themselves.
    let bench = run(&["bench", "--quick", "--device", "amdgpu", "--filter", "cb/static/512"]);
    assert!(bench.contains("cb/static/512"), "{bench}");
}

/// Builds `tests/c/SOURCE` (C++ against HIP's headers, linked with Debian's libamdhip64 and
/// `libraries`) and runs it on the drop-in under `scripts/with-soft-gpu.sh`, with `agents` as
/// `AQUEDUCT_SOFT_AGENTS` (`None`: no soft-runtime variable set, the drop-in's default gfx1030);
/// returns its stdout, or `None` where what it needs is missing here (a failure in CI, which
/// sets the requirements).
fn run_hip_program(source: &str, libraries: &[&str], headers: &[&str], agents: Option<&str>) -> Option<String> {
    const HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("Debian's HIP runtime (libamdhip64-5)", Path::new(HIP).exists())
        || !require("HIP's headers (libamdhip64-dev)", Path::new("/usr/include/hip/hip_runtime_api.h").exists())
        || !headers.iter().all(|header| require(header, Path::new(header).exists()))
    {
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // One binary per test: the tests of one source on different agents run at once, and one
    // must not execute the file while the other's compiler is still writing it.
    let agent = agents.and_then(|agents| agents.split([':', ',']).next()).unwrap_or("default");
    let name = format!("{}-{agent}-{}", source.replace('.', "-"), std::process::id());
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let build = Command::new("c++")
        .args(["-std=c++17", "-Wall", "-Werror", "-O1", "-D__HIP_PLATFORM_AMD__", "-o"])
        .arg(&binary)
        .arg(root.join("tests/c").join(source))
        .args(libraries.iter().map(|library| format!("-l{library}")))
        .arg("-lamdhip64")
        .output()
        .expect("c++ runs");
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let (text, stderr) = run_on_drop_in(&dir.unwrap(), &binary, &[], agents)?;
    eprint!("{stderr}");
    Some(text)
}

/// Runs `program` with `arguments` under scripts/with-soft-gpu.sh on the drop-in in `dir`, with
/// `agents` as `AQUEDUCT_SOFT_AGENTS` (`None`: no soft-runtime variable): its stdout and
/// stderr, or `None` where the harness cannot make its private mount namespace here. Any other
/// failure fails the test.
fn run_on_drop_in(dir: &Path, program: &Path, arguments: &[&Path], agents: Option<&str>) -> Option<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut command = Command::new(root.join("scripts/with-soft-gpu.sh"));
    command.arg(program).args(arguments).env("AQUEDUCT_SOFT_LIBHSA_DIR", dir);
    match agents {
        Some(agents) => command.env("AQUEDUCT_SOFT_AGENTS", agents),
        None => command.env_remove("AQUEDUCT_SOFT_AGENTS"),
    };
    let output = command.output().expect("the harness runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success()
        && stderr.contains("unshare")
        && !require("a private mount namespace (unshare -m)", false)
    {
        return None;
    }
    assert!(output.status.success(), "{} failed:\n{text}\n{stderr}", program.display());
    Some((text, stderr))
}

const HIPCC: &str = "/usr/bin/hipcc";

/// The drop-in's directory where it and Debian's hipcc are here (else `None`, said once).
fn hipcc_and_drop_in() -> Option<std::path::PathBuf> {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("Debian's hipcc and rocm-device-libs", Path::new(HIPCC).exists())
    {
        return None;
    }
    dir
}

/// Builds `source` (under tests/hip) with hipcc and `arguments` into the test's temporary
/// directory as `name`, as a user builds it.
fn hipcc(source: &str, arguments: &[&str], name: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let build = Command::new(HIPCC)
        .args(arguments)
        .arg(root.join("tests/hip").join(source))
        .arg("-o")
        .arg(&output)
        .output()
        .expect("hipcc runs");
    assert!(build.status.success(), "hipcc {source}: {}", String::from_utf8_lossy(&build.stderr));
    output
}

/// Debian's HIP runtime (`libamdhip64-5`), unmodified, starts on the drop-in, copies every way and
/// fills with its own kernels. HIP 5.2.3 supports gfx1030 as its newest RDNA target (it refuses
/// gfx1100 as "Unsupported HSA device" on hardware too): the drop-in's default GPU is a gfx1030,
/// so the program runs with no soft-runtime variable set.
#[test]
fn hip_s_runtime_finds_the_soft_gpu_and_copies_through_it() {
    let Some(text) = run_hip_program("hip_memcpy.cpp", &[], &[], None) else { return };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "devices 1",
            "name aqueduct soft agent (gfx1030)",
            "gcnArchName gfx1030",
            "totalGlobalMem 17179869184",
            "memcpy ok",
            "memcpy aligned ok",
            "memset ok",
            "memsetD32 ok",
            "memset2D ok",
            "memset3D ok",
            "memcpyAsync ok",
            "elapsed ok",
            "pinned ok",
            "meminfo ok",
            "done",
        ]
    );
}

/// HIP programs built as a user builds them, with Debian's hipcc for gfx1030: `<<<>>>` and
/// hipLaunchKernelGGL launches, device math, shared memory with `__syncthreads`, dynamic shared
/// memory, hipModuleLaunchKernel on a `--genco` code object, and registered host memory through
/// its own device address (register, kernel, copies, unregister, twice), every result checked by
/// the program (`tests/hip/`).
#[test]
fn hipcc_built_programs_run_unmodified_on_the_drop_in() {
    hipcc_built_programs_run_on("gfx1030", None);
}

/// [`hipcc_built_programs_run_unmodified_on_the_drop_in`]'s programs built for gfx90a (CDNA2,
/// wave64) and run on a gfx90a soft agent: gfx9 machine code, translated to gfx11's.
#[test]
fn hipcc_built_programs_run_unmodified_on_a_gfx90a_drop_in() {
    hipcc_built_programs_run_on("gfx90a", Some(GFX90A));
}

/// The soft agent list naming one gfx90a (wave64, as HIP 5.2.3's MI200 code objects are built:
/// sramecc on, xnack off, as MI200s run by default; Debian's libraries ship `gfx90a:xnack-`), for
/// the gfx90a versions of the HIP tests.
const GFX90A: &str = "gfx90a:sramecc+:xnack-";

/// Builds `tests/hip/programs.hip` and `module.hip` for `arch` and runs them on the drop-in
/// with `agents` (see [`run_on_drop_in`]), every line of their report checked.
fn hipcc_built_programs_run_on(arch: &str, agents: Option<&str>) {
    let Some(dir) = hipcc_and_drop_in() else { return };
    let offload = format!("--offload-arch={arch}");
    let program = hipcc("programs.hip", &[&offload, "-O2", "-Wall"], &format!("hip-programs-{arch}"));
    let module = hipcc("module.hip", &["--genco", &offload, "-O2"], &format!("hip-module-{arch}.co"));
    let Some((text, stderr)) = run_on_drop_in(&dir, &program, &[&module], agents) else { return };
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        ["math ok", "sum ok", "dynamic shared ok", "module launch ok", "registered ok", "done"],
        "{stderr}"
    );
}

/// HIP 5.2.3's `__smid()` (HW_ID's CU_ID and SE_ID through `s_getreg_b32`), built with hipcc for
/// gfx90a and run on a gfx90a soft agent of 8 CUs (`tests/hip/smid.hip`): every thread of a
/// block reports its block's value, every value is below `multiProcessorCount`, and the 64
/// blocks, dealt to the CUs in turn, report 8 distinct values.
#[test]
fn hip_smid_reads_in_range_compute_units_that_a_block_agrees_on() {
    let Some(dir) = hipcc_and_drop_in() else { return };
    let program = hipcc("smid.hip", &["--offload-arch=gfx90a", "-O2", "-Wall"], "hip-smid-gfx90a");
    let Some((text, stderr)) = run_on_drop_in(&dir, &program, &[], Some(GFX90A)) else { return };
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        ["compute units 8", "blocks agree", "in range", "distinct 8"],
        "{stderr}"
    );
}

/// Device printf, built with hipcc as a user builds it: HIP 5.2.3 routes it through ROCclr's
/// hostcall buffer and listener thread, which the kernel reaches with global atomics and the
/// listener's signal; the kernel's scratch (gfx10 reaches it through the private segment buffer)
/// holds the format's arguments. Every line is checked, the kernel's in any order.
#[test]
fn device_printf_reaches_the_host_through_hostcall() {
    let Some(dir) = hipcc_and_drop_in() else { return };
    let program = hipcc("printf.hip", &["--offload-arch=gfx1030", "-O2", "-Wall"], "hip-printf");
    let Some((text, stderr)) = run_on_drop_in(&dir, &program, &[], None) else { return };
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.pop(), Some("sync ok"), "{text}\n{stderr}");
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["lane 0: 40 0.00 even", "lane 1: 41 0.50 odd", "lane 2: 42 1.00 even", "lane 3: 43 1.50 odd"],
        "{stderr}"
    );
}

/// Debian's rocSPARSE, unmodified: its shipped gfx1030 kernels run from their machine code, CSR
/// SpMV and CSR to dense checked against a CPU computation.
#[test]
fn debian_s_rocsparse_runs_its_gfx1030_kernels_on_the_drop_in() {
    rocsparse_runs_on(None);
}

/// Debian's rocSPARSE, unmodified, on a gfx90a soft agent: HIP picks its shipped gfx90a code
/// objects (wave64 gfx9 machine code, translated to gfx11's), checked as on gfx1030.
#[test]
fn debian_s_rocsparse_runs_its_gfx90a_kernels_on_the_drop_in() {
    rocsparse_runs_on(Some(GFX90A));
}

/// `tests/c/rocsparse.cpp` on the drop-in with `agents` ([`run_hip_program`]).
fn rocsparse_runs_on(agents: Option<&str>) {
    let headers = ["/usr/include/rocsparse/rocsparse.h"];
    let Some(text) = run_hip_program("rocsparse.cpp", &["rocsparse"], &headers, agents) else { return };
    assert_eq!(text.lines().collect::<Vec<_>>(), ["csrmv ok", "csr2dense ok", "done"]);
}

/// Debian's rocRAND, unmodified: Philox4x32-10, XORWOW and MRG32k3a against their published
/// algorithms, every number (each work-item's subsequence jump computed in the test, not taken
/// from rocRAND's tables), from rocRAND's shipped gfx1030 machine code.
#[test]
fn debian_s_rocrand_runs_its_gfx1030_kernels_on_the_drop_in() {
    rocrand_runs_on(None);
}

/// Debian's rocRAND, unmodified, on a gfx90a soft agent: its shipped gfx90a code objects, every
/// number checked as on gfx1030.
#[test]
fn debian_s_rocrand_runs_its_gfx90a_kernels_on_the_drop_in() {
    rocrand_runs_on(Some(GFX90A));
}

/// `tests/c/rocrand.cpp` on the drop-in with `agents` ([`run_hip_program`]).
fn rocrand_runs_on(agents: Option<&str>) {
    let headers = ["/usr/include/rocrand/rocrand.h"];
    let Some(text) = run_hip_program("rocrand.cpp", &["rocrand"], &headers, agents) else { return };
    assert_eq!(text.lines().collect::<Vec<_>>(), ["philox4x32-10 ok", "xorwow ok", "mrg32k3a ok", "done"]);
}

/// Builds `tests/c/NAME.c` against the drop-in in `dir`.
fn build_c(name: &str, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hsa-{name}-{}", std::process::id()));
    let build = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-o"])
        .arg(&binary)
        .arg(root.join(format!("tests/c/{name}.c")))
        .arg(format!("-I{}", root.join("soft-hsa/include").display()))
        .arg(format!("-L{}", dir.display()))
        .arg("-lhsa-runtime64")
        .arg("-pthread")
        .output()
        .expect("cc runs");
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    binary
}

/// `call=status` lines of a bad_input run.
fn statuses(binary: &Path, mode: &str, library_dir: Option<&Path>) -> Vec<(String, u32)> {
    let mut command = Command::new(binary);
    command.arg(mode);
    match library_dir {
        Some(dir) => command.env("LD_LIBRARY_PATH", dir),
        None => command.env_remove("LD_LIBRARY_PATH"),
    };
    let output = command.output().expect("it runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().map(call_status).collect()
}

/// A `call=0xSTATUS` line.
fn call_status(line: &str) -> (String, u32) {
    let (call, status) = line.rsplit_once('=').expect("call=status");
    (call.to_string(), u32::from_str_radix(status.trim_start_matches("0x"), 16).expect("hex status"))
}

#[test]
fn bad_input_through_the_c_abi_gets_rocr_s_and_the_specification_s_statuses() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("the HSA headers (libhsa-runtime-dev)", Path::new("/usr/include/hsa/hsa.h").exists())
        || !require("Debian's libhsa-runtime64-1", Path::new(DEBIAN_ROCR).exists())
    {
        return;
    }
    let dir = dir.unwrap();
    let binary = build_c("bad_input", &dir);
    // Before hsa_init, ROCr itself answers without a GPU: the drop-in must answer the same.
    let ours = statuses(&binary, "before-init", Some(&dir));
    let rocr = statuses(&binary, "before-init", None);
    assert_eq!(ours, rocr, "the drop-in and Debian's ROCr disagree before hsa_init");
    assert!(ours.iter().all(|(_, status)| *status == 0x100B), "NOT_INITIALIZED: {ours:?}");
    // After it, what the HSA specification (hsa.h, hsa_ext_amd.h) gives for each.
    const INVALID_ARGUMENT: u32 = 0x1001;
    let expected = [
        ("hsa_iterate_agents", INVALID_ARGUMENT),
        ("hsa_agent_get_info(stale", 0x1004), // INVALID_AGENT
        ("hsa_agent_get_info(gpu", INVALID_ARGUMENT),
        ("hsa_queue_create(gpu, 100", INVALID_ARGUMENT), // not a power of two
        ("hsa_queue_create(gpu, 64", INVALID_ARGUMENT),  // null out-pointer
        ("hsa_queue_destroy", 0x1007),                   // INVALID_QUEUE
        ("hsa_signal_create", INVALID_ARGUMENT),
        ("hsa_signal_destroy", 0x1006), // INVALID_SIGNAL
        ("hsa_amd_memory_pool_free", INVALID_ARGUMENT),
        ("hsa_amd_memory_pool_allocate", 0x28), // HSA_STATUS_ERROR_INVALID_MEMORY_POOL
        ("hsa_code_object_reader_create_from_memory", INVALID_ARGUMENT),
        ("hsa_shut_down", 0),
    ];
    let after = statuses(&binary, "after-init", Some(&dir));
    assert_eq!(after.len(), expected.len(), "{after:?}");
    for ((call, status), (prefix, want)) in after.iter().zip(expected) {
        assert!(call.starts_with(prefix), "{call} where {prefix} was expected");
        assert_eq!(*status, want, "{call}");
    }
}

#[test]
fn the_vendor_extension_configures_the_runtime_and_refuses_bad_input_through_the_c_abi() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("the HSA headers (libhsa-runtime-dev)", Path::new("/usr/include/hsa/hsa.h").exists())
    {
        return;
    }
    let dir = dir.unwrap();
    let binary = build_c("vendor_extension", &dir);
    let run = Command::new(&binary).env("LD_LIBRARY_PATH", &dir).output().expect("it runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    const INVALID_ARGUMENT: u32 = 0x1001;
    const INVALID_QUEUE: u32 = 0x1007;
    const NOT_INITIALIZED: u32 = 0x100B;
    let expected = [
        ("aqueduct_soft_release_stall", NOT_INITIALIZED),
        ("aqueduct_soft_queue_error_detail(NULL", NOT_INITIALIZED),
        ("aqueduct_soft_configure(NULL", INVALID_ARGUMENT),
        ("aqueduct_soft_configure(\"{\\\"agents\\\": 3\")", INVALID_ARGUMENT), // not JSON
        ("aqueduct_soft_configure(\"{\\\"agents\\\": 3}", INVALID_ARGUMENT),   // wrong type
        ("aqueduct_soft_configure(\"{\\\"no_such_field", INVALID_ARGUMENT),
        ("aqueduct_soft_configure(\"{\\\"default_mode", INVALID_ARGUMENT),
        ("aqueduct_soft_register_kernel(NULL", INVALID_ARGUMENT),
        ("aqueduct_soft_configure(\"{\\\"agents\\\":[\" AGENT", 0),
        ("aqueduct_soft_set_queue_mode(queue, 7", INVALID_ARGUMENT),
        ("aqueduct_soft_set_queue_mode(&stale", INVALID_QUEUE),
        ("aqueduct_soft_inject_fault(queue, 0, 9", INVALID_ARGUMENT),
        ("aqueduct_soft_queue_error_detail(queue, NULL, 8", INVALID_ARGUMENT),
        ("aqueduct_soft_queue_error_detail(queue, detail, sizeof detail, NULL", INVALID_ARGUMENT),
        ("aqueduct_soft_queue_error_detail(&stale", INVALID_QUEUE),
        ("aqueduct_soft_queue_error_detail(queue, NULL, 0", 0),
        ("aqueduct_soft_inject_fault(queue, 0, AQUEDUCT_SOFT_FAULT_KERNEL", 0),
        ("aqueduct_soft_queue_error_detail(queue, NULL, 0", 0),
        ("aqueduct_soft_queue_error_detail(queue, detail, 4", 0),
        ("aqueduct_soft_queue_error_detail(queue, detail, sizeof detail, &length", 0),
        ("hsa_queue_destroy", 0),
        ("hsa_shut_down", 0),
    ];
    let calls: Vec<_> = stdout.lines().filter(|line| line.contains('(')).map(call_status).collect();
    assert_eq!(calls.len(), expected.len(), "{stdout}");
    for ((call, status), (prefix, want)) in calls.iter().zip(expected) {
        assert!(call.starts_with(prefix), "{call} where {prefix} was expected");
        assert_eq!(*status, want, "{call}");
    }
    // The configuration set before hsa_init is the one the runtime started with, and the bad
    // ones before it changed nothing.
    assert!(stdout.contains("gpu=first\ngpu=second\ngpus=2\n"), "{stdout}");
    assert!(stdout.contains("length_before=0\n"), "{stdout}");
    // The fault reached the queue's error callback with its status, and the detail says why.
    assert!(stdout.contains("callback_status=0x1016\n"), "{stdout}");
    assert!(stdout.contains("detail=injected kernel fault at packet 0\n"), "{stdout}");
    let truncated = stdout.lines().find(|line| line.starts_with("truncated=")).expect("a truncated read");
    assert_eq!(truncated, format!("truncated=inje length={}", "injected kernel fault at packet 0".len()));
}

/// Issue 29, finding 4: no drop-in entry point aborts the process, whatever its arguments. The
/// campaign's kinds of hostile calls (`tests/c/hostile.c`) run in one process, which must exit
/// cleanly, and the deviations it found from `hsa.h` and ROCr are gone.
#[test]
fn hostile_calls_through_the_c_abi_never_abort_and_get_rocr_s_statuses() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("the HSA headers (libhsa-runtime-dev)", Path::new("/usr/include/hsa/hsa.h").exists())
    {
        return;
    }
    let dir = dir.unwrap();
    let binary = build_c("hostile", &dir);
    let code_object = Path::new(env!("CARGO_MANIFEST_DIR")).join("builtins/prebuilt/amdgcn-amd-amdhsa--gfx1100.hsaco");
    let output = Command::new(&binary)
        .arg(code_object)
        .env("LD_LIBRARY_PATH", &dir)
        .env("AQUEDUCT_SOFT_AGENTS", "gfx1100")
        .output()
        .expect("it runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<(String, u32)> = stdout
        .lines()
        .map(|line| {
            let (call, value) = line.rsplit_once('=').expect("call=value");
            (call.to_string(), u64::from_str_radix(value.trim_start_matches("0x"), 16).expect("hex") as u32)
        })
        .collect();
    let kinds: std::collections::BTreeSet<&str> = lines.iter().map(|(call, _)| call.as_str()).collect();
    assert!(kinds.len() >= 75, "{} kinds of hostile calls", kinds.len());
    let status_of = |call: &str| {
        let found: Vec<u32> = lines.iter().filter(|(line, _)| line == call).map(|(_, status)| *status).collect();
        assert!(!found.is_empty(), "{call} ran");
        found
    };
    // The three deviations the campaign found: a SIZE_MAX reader panicked (an abort through
    // `extern "C"`); a rounding mode of 99 and a second load of one reader both succeeded.
    assert_eq!(status_of("hsa_code_object_reader_create_from_memory(code_object, SIZE_MAX, &reader)"), [0x1001]);
    assert_eq!(
        status_of(
            "hsa_executable_create_alt(HSA_PROFILE_FULL, (hsa_default_float_rounding_mode_t)99, NULL, &executable)"
        ),
        [0x1001],
        "ROCr's IS_BAD_ROUNDING_MODE: INVALID_ARGUMENT"
    );
    assert_eq!(
        status_of("hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL)"),
        [0, 0x1014, 0x1012],
        "loaded, then VARIABLE_ALREADY_DEFINED (ROCr's LoadDefinitionSymbol), then FROZEN_EXECUTABLE"
    );
    // Double destroys are refused by handle, and calls before init and after shutdown are
    // NOT_INITIALIZED (twice each: both ends of the run).
    assert_eq!(status_of("hsa_signal_destroy(signal)"), [0, 0x1006]);
    assert_eq!(status_of("hsa_queue_destroy(queue)"), [0, 0x1007]);
    assert_eq!(status_of("hsa_executable_destroy(executable)"), [0, 0x1011]);
    assert_eq!(status_of("hsa_code_object_reader_destroy(reader)"), [0, 0x1021]);
    assert_eq!(status_of("hsa_amd_memory_pool_free(pointer)"), [0, 0x1001]);
    assert_eq!(status_of("hsa_shut_down()"), [0x100b, 0, 0x100b]);
    assert_eq!(status_of("hsa_signal_create(1, 0, NULL, &signal)"), [0x100b, 0, 0x100b]);
    assert_eq!(status_of("churn_threads"), [32], "every churn thread ran and joined");
}

/// Issue 55: hostile packets and kernels through the drop-in, each case in its own process
/// (`tests/c/hostile_kernels.c`): the process survives, the queue gets ROCr's status, host
/// memory the agent was never given (a global, the stack, the heap) is untouched, and a valid
/// dispatch on a new queue completes afterwards.
#[test]
fn hostile_kernels_through_the_drop_in_end_as_rocr_ends_them() {
    let dir = drop_in_dir();
    if !require("the drop-in (AQUEDUCT_SOFT_LIBHSA_DIR)", dir.is_some())
        || !require("the HSA headers (libhsa-runtime-dev)", Path::new("/usr/include/hsa/hsa.h").exists())
    {
        return;
    }
    let dir = dir.unwrap();
    let binary = build_c("hostile_kernels", &dir);
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("soft-hsa/tests/fixtures/hostile_kernels_gfx1100.hsaco");
    let run = |case: &str, environment: &[(&str, &str)]| {
        let mut command = Command::new(&binary);
        command.arg(&kernels).arg(case).env("LD_LIBRARY_PATH", &dir).env("AQUEDUCT_SOFT_AGENTS", "gfx1100");
        for (key, value) in environment {
            command.env(key, value);
        }
        let output = command.output().expect("it runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{case}: the process survives\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let values: BTreeMap<String, String> = stdout
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        eprintln!("{case}: {values:?}");
        assert_eq!(values["canaries"], "intact", "{case}");
        assert_eq!(values["after"], "ok", "{case}: a new queue's dispatch completes");
        values
    };
    let refused = |case: &str, status: u32| {
        let values = run(case, &[]);
        assert_eq!(values["status"], format!("{status:#x}"), "{case}");
        assert_eq!(values["completed"], "0", "{case}: a refused packet does not complete");
    };
    refused("private", 0x1008); // OUT_OF_RESOURCES
    refused("grid", 0x100d); // INCOMPATIBLE_ARGUMENTS
    let forged = run("forged_signal", &[]);
    assert_eq!(forged["completed"], "1", "the completion decremented the signal's own value");
    let wild = run("wild_store", &[]);
    assert_eq!(wild["fault_events"], "1", "a memory-fault event, as ROCr raises one");
    assert_eq!(wild["completed"], "0");
    let spin = run("spin_destroy", &[]);
    let destroy_ms: f64 = spin["destroy_ms"].parse().expect("a time");
    assert!(destroy_ms < 10_000.0, "hsa_queue_destroy of a spinning queue took {destroy_ms} ms");
    assert_eq!(spin["status"], "0x0", "teardown is not an error the client hears of");
    let watchdog = run("watchdog", &[("AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS", "300")]);
    assert_eq!(watchdog["status"], "0x1016", "the watchdog's ERROR_EXCEPTION");
    assert_eq!(watchdog["completed"], "0");
}
