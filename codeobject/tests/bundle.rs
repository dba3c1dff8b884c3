//! Offload bundles (raw, in a host ELF, hand-built) and the inspect report.

mod common;

use aqueduct_codeobject::{
    BundleError, CodeObject, InspectError, inspect_json, inspect_text, parse_bundle, parse_bundles,
};
use common::*;
use serde_json::json;

#[path = "common/bundle_builder.rs"]
mod bundle_builder;
use bundle_builder::build_bundle;

#[test]
fn clang_built_bundle() {
    let bundle = parse_bundle(BUNDLE).unwrap();
    let triples: Vec<&str> = bundle.entries.iter().map(|e| e.triple.as_str()).collect();
    assert_eq!(
        triples,
        [
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx1100"
        ]
    );
    assert_eq!(bundle.entries[0].code_object, None);
    assert_eq!(bundle.entries[0].target_id(), None);
    assert_eq!(bundle.entries[1].code_object, Some(GFX90A_XNACK_ON_V4));
    assert_eq!(bundle.entries[2].code_object, Some(GFX1100_V5));
    assert_eq!(bundle.entries[1].target_id().unwrap().to_string(), "gfx90a:xnack+");
    assert_eq!(bundle.entries[2].target_id().unwrap().to_string(), "gfx1100");
}

#[test]
fn host_elf_with_two_bundles_in_hip_fatbin() {
    let bundles = parse_bundles(HOST_WITH_FATBIN).unwrap();
    assert_eq!(bundles.len(), 2);
    assert_eq!(bundles[0], parse_bundle(BUNDLE).unwrap());
    let second: Vec<&str> = bundles[1].entries.iter().map(|e| e.triple.as_str()).collect();
    assert_eq!(second, ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx11-generic"]);
    assert_eq!(bundles[1].entries[1].code_object, Some(GFX11_GENERIC_V6));
}

#[test]
fn hand_built_bundle_round_trips() {
    let bytes = build_bundle(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hip-amdgcn-amd-amdhsa--gfx942", GFX942_V5),
        ("openmp-amdgcn-amd-amdhsa--gfx9-generic", GFX9_GENERIC_V6),
    ]);
    let bundle = parse_bundle(&bytes).unwrap();
    assert_eq!(bundle.entries.len(), 3);
    assert_eq!(bundle.entries[1].code_object, Some(GFX942_V5));
    assert_eq!(bundle.entries[2].code_object, Some(GFX9_GENERIC_V6));
    let code_object = CodeObject::parse(bundle.entries[2].code_object.unwrap()).unwrap();
    assert_eq!(code_object.target().to_string(), "gfx9-generic");
}

#[test]
fn bundle_errors() {
    assert_eq!(parse_bundle(COMPRESSED_BUNDLE), Err(BundleError::Compressed));
    assert!(BundleError::Compressed.to_string().contains("compressed offload bundles (CCOB) are not supported"));
    assert_eq!(parse_bundle(b"__CLANG_OFFLOAD_BUNDLX__"), Err(BundleError::BadMagic { offset: 0 }));
    assert!(matches!(parse_bundles(GFX1100_V5), Err(BundleError::NoFatbinSection)));
    assert!(matches!(parse_bundles(b"not elf"), Err(BundleError::MalformedHostElf(_))));

    // Every truncation of a real bundle fails cleanly.
    for len in 0..BUNDLE.len() {
        assert!(parse_bundle(&BUNDLE[..len]).is_err(), "prefix {len}");
    }

    // Entry pointing past the end, and offset+size overflowing.
    let mut bytes = build_bundle(&[("hip-amdgcn-amd-amdhsa--gfx1100", GFX1100_V5)]);
    let entry = 32;
    bytes[entry + 8..entry + 16].copy_from_slice(&(GFX1100_V5.len() as u64 + 1000).to_le_bytes());
    assert!(matches!(parse_bundle(&bytes), Err(BundleError::EntryOutOfBounds { index: 0, .. })));
    bytes[entry..entry + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(parse_bundle(&bytes), Err(BundleError::EntryOutOfBounds { index: 0, .. })));

    // An absurd entry count must not allocate or loop.
    let mut count = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    count.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(parse_bundle(&count), Err(BundleError::Truncated(_))));

    // Triple length past the end.
    let mut triple = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    triple.extend_from_slice(&1u64.to_le_bytes());
    triple.extend_from_slice(&[0; 16]);
    triple.extend_from_slice(&u64::MAX.to_le_bytes());
    triple.extend_from_slice(&[0; 64]);
    assert!(matches!(parse_bundle(&triple), Err(BundleError::Truncated(_))));
}

#[test]
fn inspect_json_of_a_code_object_has_the_stable_shape() {
    let report = inspect_json(GFX1100_V5).unwrap();
    let object = report.as_object().unwrap();
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["code_object_version", "kernels", "target"]);
    assert_eq!(report["target"], "amdgcn-amd-amdhsa--gfx1100");
    assert_eq!(report["code_object_version"], json!([1, 2]));
    assert_eq!(
        report["kernels"][0],
        json!({
            "name": "fill",
            "symbol": "fill.kd",
            "kernarg_segment_size": 12,
            "kernarg_segment_align": 8,
            "group_segment_fixed_size": 0,
            "private_segment_fixed_size": 0,
            "wavefront_size": 32,
            "args": [
                {"offset": 0, "size": 8, "value_kind": "global_buffer"},
                {"offset": 8, "size": 4, "value_kind": "by_value"},
            ],
        })
    );
    assert_eq!(report["kernels"][3]["args"][1], json!({"offset": 8, "size": 4, "value_kind": "hidden_block_count_x"}));
    assert_eq!(report["kernels"].as_array().unwrap().len(), 4);
}

#[test]
fn inspect_json_of_bundles() {
    let single = inspect_json(GFX90A_XNACK_ON_V4).unwrap();
    let raw = inspect_json(BUNDLE).unwrap();
    assert_eq!(raw.as_object().unwrap().keys().collect::<Vec<_>>(), ["bundles"]);
    let entries = raw["bundles"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0], json!({"triple": "host-x86_64-unknown-linux-gnu-", "code_object": null}));
    assert_eq!(entries[1]["triple"], "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
    assert_eq!(entries[1]["code_object"], single);
    assert_eq!(entries[2]["code_object"]["target"], "amdgcn-amd-amdhsa--gfx1100");

    let host = inspect_json(HOST_WITH_FATBIN).unwrap();
    let entries = host["bundles"].as_array().unwrap();
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[4]["code_object"]["target"], "amdgcn-amd-amdhsa--gfx11-generic");
    assert_eq!(entries[4]["code_object"]["kernels"][2]["name"], "mixed");

    assert!(matches!(inspect_json(COMPRESSED_BUNDLE), Err(InspectError::Bundle(BundleError::Compressed))));
    // A bundled object that fails to parse names its triple.
    let broken = build_bundle(&[("hip-amdgcn-amd-amdhsa--gfx1100", &GFX1100_V5[..100])]);
    match inspect_json(&broken) {
        Err(InspectError::BundledCodeObject { triple, .. }) => assert_eq!(triple, "hip-amdgcn-amd-amdhsa--gfx1100"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn inspect_text_renders_kernels_and_args() {
    let text = inspect_text(GFX1100_V5).unwrap();
    assert!(text.starts_with("target amdgcn-amd-amdhsa--gfx1100 (code object v5, metadata v1.2)\n"), "{text}");
    assert!(text.contains("kernel fill (fill.kd)\n"), "{text}");
    assert!(text.contains("  kernarg 12 bytes (align 8), group 0 bytes, private 0 bytes, wavefront 32\n"), "{text}");
    assert!(text.contains("  arg  1: offset    8 size   4 by_value\n"), "{text}");
    let bundle_text = inspect_text(HOST_WITH_FATBIN).unwrap();
    assert!(bundle_text.contains("bundle entry host-x86_64-unknown-linux-gnu-\n  (no code object)\n"), "{bundle_text}");
    assert!(bundle_text.contains("bundle entry hipv4-amdgcn-amd-amdhsa--gfx11-generic\n  target"), "{bundle_text}");
}

/// Debian's rocSPARSE (5.3): every bundle of its `.hip_fatbin` has entries for gfx1030, gfx803,
/// gfx900/906/908 with `xnack-`, and gfx90a with `xnack+` listed before `xnack-`. For each
/// bundle, `choose_target` over the entries' ELF targets picks the one a GPU of each kind runs
/// (its XNACK mode decides gfx90a's), and refuses an agent with nothing, naming every entry.
/// Skipped when the library is absent, unless `AQUEDUCT_REQUIRE_ROCR=1` (CI installs it).
#[test]
fn rocsparse_bundles_yield_the_entry_each_agent_runs() {
    use aqueduct_codeobject::{FeatureState, Fit, TargetId, choose_target};
    const LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0";
    let Ok(library) = std::fs::read(LIBRARY) else {
        let required = std::env::var_os("AQUEDUCT_REQUIRE_ROCR").is_some_and(|value| value == "1");
        assert!(!required, "{LIBRARY} is required (AQUEDUCT_REQUIRE_ROCR=1) but missing");
        eprintln!("skipped: {LIBRARY} is not installed (apt-get install librocsparse0)");
        return;
    };
    let bundles = parse_bundles(&library).expect("rocSPARSE's fat binary");
    assert!(bundles.len() >= 100, "{} bundles", bundles.len());
    let agent = |text: &str| TargetId::parse(text).unwrap();
    for bundle in &bundles {
        let code_objects: Vec<&[u8]> = bundle.entries.iter().filter_map(|entry| entry.code_object).collect();
        let targets: Vec<Option<TargetId>> = code_objects
            .iter()
            .map(|bytes| Some(*CodeObject::parse(bytes).expect("an entry of rocSPARSE").target()))
            .collect();
        let chosen = |isa: &str| {
            choose_target(&targets, &[agent(isa)]).map(|choice| (targets[choice.index].unwrap(), choice.fit))
        };
        let (gfx90a, fit) = chosen("gfx90a:sramecc+:xnack-").expect("a gfx90a entry");
        assert_eq!(
            (gfx90a.processor().name(), gfx90a.xnack(), fit),
            ("gfx90a", FeatureState::Off, Fit::ProcessorAnyFeatures)
        );
        let (gfx90a, _) = chosen("gfx90a:sramecc-:xnack+").expect("a gfx90a entry");
        assert_eq!(gfx90a.xnack(), FeatureState::On);
        let (gfx906, _) = chosen("gfx906:sramecc+:xnack-").expect("a gfx906 entry");
        assert_eq!(gfx906.processor().name(), "gfx906");
        assert_eq!(
            chosen("gfx1030").map(|(target, fit)| (target.to_string(), fit)),
            Ok(("gfx1030".into(), Fit::Exact))
        );
        for nothing in ["gfx1100", "gfx900:xnack+", "gfx942:sramecc+:xnack-"] {
            let rejected = chosen(nothing).expect_err(nothing);
            assert_eq!(rejected.len(), code_objects.len(), "{nothing}");
        }
    }
}
