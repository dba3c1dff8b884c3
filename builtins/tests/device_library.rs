//! The embedded library matches targets.txt, and the host build of every kernel reads the kernarg
//! layout that every prebuilt code object declares.

use std::collections::BTreeSet;
use std::path::Path;

use aqueduct_builtins::{ArgKind, Builtin, DeviceLibrary, host_kernels};
use aqueduct_codeobject::{CodeObject, ValueKind};

/// (target, code-object version) per line of targets.txt.
fn listed() -> Vec<(String, u32)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("device/targets.txt");
    let text = std::fs::read_to_string(&path).expect("targets.txt is readable");
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (target, version) = line.split_once(' ').expect("`<target> <version>`");
            (target.to_owned(), version.trim().parse().expect("version"))
        })
        .collect()
}

fn listed_targets() -> Vec<String> {
    listed().into_iter().map(|(target, _)| target).collect()
}

#[test]
fn toc_matches_targets_txt_and_every_file_exists() {
    let listed = listed_targets();
    let embedded: Vec<&str> = DeviceLibrary::targets().collect();
    assert_eq!(embedded, listed, "src/toc.rs is stale: run builtins/device/regen.sh");
    assert_eq!(
        embedded,
        [
            "gfx9-generic",
            "gfx90a",
            "gfx942",
            "gfx10-1-generic",
            "gfx1030",
            "gfx10-3-generic",
            "gfx1100",
            "gfx11-generic",
            "gfx12-generic"
        ]
    );
    let prebuilt = Path::new(env!("CARGO_MANIFEST_DIR")).join("prebuilt");
    for target in &listed {
        let file = prebuilt.join(format!("amdgcn-amd-amdhsa--{target}.hsaco"));
        let on_disk = std::fs::read(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        assert_eq!(
            Some(&on_disk[..]),
            DeviceLibrary::code_object(target),
            "{target}: embedded bytes differ from the file"
        );
    }
    // Nothing stray in prebuilt/ that the TOC does not know about.
    let mut files: Vec<String> = std::fs::read_dir(&prebuilt)
        .expect("prebuilt/ is readable")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = listed.iter().map(|target| format!("amdgcn-amd-amdhsa--{target}.hsaco")).collect();
    expected.sort();
    assert_eq!(files, expected);
}

#[test]
fn every_code_object_is_built_for_its_listed_target_and_version() {
    for (target, version) in listed() {
        let code_object = CodeObject::parse(DeviceLibrary::code_object(&target).expect("embedded")).expect("parses");
        assert_eq!(code_object.target().to_string(), target);
        assert_eq!(code_object.abi_version().code_object_version(), version, "{target}");
        if target.ends_with("-generic") {
            assert_eq!(code_object.target().generic_version(), Some(1), "{target}");
            assert_eq!(version, 6, "{target}: generic targets need v6");
        } else {
            assert_eq!(version, 5, "{target}: exact targets ship as v5");
        }
    }
}

#[test]
fn host_builds_read_the_kernarg_layout_every_code_object_declares() {
    let cpu_symbols: BTreeSet<&str> = host_kernels().iter().map(|kernel| kernel.symbol).collect();
    assert_eq!(cpu_symbols.len(), host_kernels().len(), "duplicate host build symbols");
    let builtin_symbols: BTreeSet<&str> = Builtin::ALL.iter().map(|builtin| builtin.symbol()).collect();
    assert_eq!(cpu_symbols, builtin_symbols);

    for target in DeviceLibrary::targets() {
        let code_object = CodeObject::parse(DeviceLibrary::code_object(target).expect("embedded")).expect("parses");
        let device_symbols: BTreeSet<&str> =
            code_object.kernels().iter().map(|kernel| kernel.symbol.as_str()).collect();
        assert_eq!(device_symbols, cpu_symbols, "{target}: code-object kernels vs host builds");

        for kernel in code_object.kernels() {
            let builtin =
                Builtin::from_name(&kernel.name).unwrap_or_else(|| panic!("{target}: unknown kernel {}", kernel.name));
            assert_eq!(kernel.symbol, builtin.symbol(), "{target}");
            let declared: Vec<(u32, u32, ArgKind)> = kernel
                .args
                .iter()
                .filter(|arg| !arg.value_kind.is_hidden())
                .map(|arg| {
                    let kind = match arg.value_kind {
                        ValueKind::GlobalBuffer => ArgKind::Pointer,
                        ValueKind::ByValue => ArgKind::Value,
                        ref other => panic!("{target}/{builtin}: unexpected value kind {other}"),
                    };
                    (arg.offset, arg.size, kind)
                })
                .collect();
            let rust: Vec<(u32, u32, ArgKind)> =
                builtin.fields().iter().map(|field| (field.offset as u32, field.size as u32, field.kind)).collect();
            assert_eq!(declared, rust, "{target}/{builtin}: (offset, size, kind) of each explicit argument");
            // The C host build's argument struct (exported by blit.c) must agree too; the soft
            // runtime refuses to bind it otherwise.
            let host = host_kernels().iter().find(|kernel| kernel.symbol == builtin.symbol()).expect("host build");
            let host: Vec<(u32, u32, ArgKind)> = host
                .args
                .expect("C kernels declare their layout")
                .iter()
                .map(|arg| {
                    let kind = if arg.is_pointer() { ArgKind::Pointer } else { ArgKind::Value };
                    (arg.offset, arg.size, kind)
                })
                .collect();
            assert_eq!(declared, host, "{target}/{builtin}: host build layout");
            let segment = kernel.kernarg_segment_size as usize;
            assert!(segment >= builtin.kernarg_size(), "{target}/{builtin}: segment {segment}");
            // The kernels take sizes from the dispatch packet, so no hidden arguments are needed:
            // the host never has to fill implicit kernargs for a builtin.
            assert_eq!(segment, builtin.kernarg_size(), "{target}/{builtin}: unexpected hidden arguments");
            assert!(kernel.args.iter().all(|arg| !arg.value_kind.is_hidden()), "{target}/{builtin}");
            assert!(kernel.kernarg_segment_align <= 8, "{target}/{builtin}");
            assert_eq!(
                (kernel.group_segment_fixed_size, kernel.private_segment_fixed_size),
                (0, 0),
                "{target}/{builtin}"
            );
            assert!(
                kernel.max_flat_workgroup_size >= u32::from(aqueduct_builtins::WORKGROUP_SIZE),
                "{target}/{builtin}"
            );
        }
    }
}

/// `patch_indirect` is in every code object with exactly the parameter list the engine relies on
/// (pinned here independently of `PatchIndirectArgs`, which the test above compares with).
#[test]
fn every_code_object_has_patch_indirect_with_its_pinned_layout() {
    use ArgKind::{Pointer, Value};
    let pinned = [
        (0, 8, Pointer),  // packet
        (8, 8, Pointer),  // counts
        (16, 8, Pointer), // implicit_args
        (24, 4, Value),   // header
        (28, 4, Value),   // reserved
    ];
    assert_eq!(Builtin::PatchIndirect.kernarg_size(), 32);
    for target in DeviceLibrary::targets() {
        let code_object = CodeObject::parse(DeviceLibrary::code_object(target).expect("embedded")).expect("parses");
        let kernel = code_object
            .kernels()
            .iter()
            .find(|kernel| kernel.name == "patch_indirect")
            .unwrap_or_else(|| panic!("{target}: no patch_indirect"));
        assert_eq!(kernel.symbol, "patch_indirect.kd", "{target}");
        let declared: Vec<(u32, u32, ArgKind)> = kernel
            .args
            .iter()
            .map(|arg| {
                let kind = match arg.value_kind {
                    ValueKind::GlobalBuffer => Pointer,
                    ValueKind::ByValue => Value,
                    ref other => panic!("{target}: unexpected value kind {other}"),
                };
                (arg.offset, arg.size, kind)
            })
            .collect();
        assert_eq!(declared, pinned, "{target}");
        assert_eq!(kernel.kernarg_segment_size, 32, "{target}");
    }
}
