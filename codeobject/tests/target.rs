//! Target ID parsing, display and compatibility, table-driven.

use FeatureState::{Any, Off, On, Unsupported};
use aqueduct_codeobject::{
    Feature, FeatureState, Fit, IncompatibilityReason, Processor, TargetError, TargetId, choose_target,
};

#[test]
fn parses_good_target_ids() {
    // (input, canonical display, processor, sramecc, xnack)
    let cases = [
        ("gfx90a", "gfx90a", "gfx90a", Any, Any),
        ("gfx90a:xnack+", "gfx90a:xnack+", "gfx90a", Any, On),
        ("gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-", "gfx90a", On, Off),
        ("gfx90a:sramecc-:xnack+", "gfx90a:sramecc-:xnack+", "gfx90a", Off, On),
        ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", "gfx90a", On, Off),
        ("gfx90c", "gfx90c", "gfx90c", Unsupported, Any),
        ("gfx90c:xnack-", "gfx90c:xnack-", "gfx90c", Unsupported, Off),
        ("gfx900", "gfx900", "gfx900", Unsupported, Any),
        ("gfx906:sramecc+", "gfx906:sramecc+", "gfx906", On, Any),
        ("gfx908", "gfx908", "gfx908", Any, Any),
        ("gfx942:sramecc+:xnack+", "gfx942:sramecc+:xnack+", "gfx942", On, On),
        ("gfx950", "gfx950", "gfx950", Any, Any),
        ("gfx1010:xnack+", "gfx1010:xnack+", "gfx1010", Unsupported, On),
        ("gfx1013", "gfx1013", "gfx1013", Unsupported, Any),
        ("gfx1030", "gfx1030", "gfx1030", Unsupported, Unsupported),
        ("gfx1036", "gfx1036", "gfx1036", Unsupported, Unsupported),
        ("gfx1100", "gfx1100", "gfx1100", Unsupported, Unsupported),
        ("amdgcn-amd-amdhsa--gfx1103", "gfx1103", "gfx1103", Unsupported, Unsupported),
        ("gfx1151", "gfx1151", "gfx1151", Unsupported, Unsupported),
        ("gfx1201", "gfx1201", "gfx1201", Unsupported, Unsupported),
        ("gfx9-generic", "gfx9-generic", "gfx9-generic", Unsupported, Any),
        ("gfx9-generic:xnack+", "gfx9-generic:xnack+", "gfx9-generic", Unsupported, On),
        ("gfx9-4-generic:sramecc-", "gfx9-4-generic:sramecc-", "gfx9-4-generic", Off, Any),
        ("gfx10-1-generic", "gfx10-1-generic", "gfx10-1-generic", Unsupported, Any),
        ("gfx10-3-generic", "gfx10-3-generic", "gfx10-3-generic", Unsupported, Unsupported),
        ("amdgcn-amd-amdhsa--gfx11-generic", "gfx11-generic", "gfx11-generic", Unsupported, Unsupported),
        ("gfx12-generic", "gfx12-generic", "gfx12-generic", Unsupported, Unsupported),
    ];
    for (input, canonical, processor, sramecc, xnack) in cases {
        let target = TargetId::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(target.to_string(), canonical, "{input}");
        assert_eq!(target.isa_name(), format!("amdgcn-amd-amdhsa--{canonical}"), "{input}");
        assert_eq!(target.processor().name(), processor, "{input}");
        assert_eq!(target.sramecc(), sramecc, "{input} sramecc");
        assert_eq!(target.xnack(), xnack, "{input} xnack");
        assert_eq!(target.generic_version(), None);
        // The canonical form parses back to the same target.
        assert_eq!(TargetId::parse(canonical).unwrap(), target, "{input}");
    }
}

#[test]
fn rejects_bad_target_ids() {
    let invalid = |s: &str| TargetError::InvalidProcessor(s.to_owned());
    let unknown = |s: &str| TargetError::UnknownProcessor(s.to_owned());
    let feature = |s: &str| TargetError::InvalidFeature(s.to_owned());
    let unsupported =
        |p: &str, feature| TargetError::UnsupportedFeature { processor: Processor::from_name(p).unwrap(), feature };
    let cases = [
        ("", TargetError::Empty),
        ("amdgcn-amd-amdhsa--", TargetError::Empty),
        ("gfx", invalid("gfx")),
        ("gpu900", invalid("gpu900")),
        ("GFX900", invalid("GFX900")),
        ("gfx90g", invalid("gfx90g")),
        ("gfx9x0", invalid("gfx9x0")),
        ("gfx-generic", invalid("gfx-generic")),
        ("gfx1-2-3-generic", invalid("gfx1-2-3-generic")),
        ("amdgcn-amd-amdhsa-gfx90a", invalid("amdgcn-amd-amdhsa-gfx90a")),
        (" gfx90a", invalid(" gfx90a")),
        ("gfx999", unknown("gfx999")),
        ("gfx90b", unknown("gfx90b")),
        ("gfx13-generic", unknown("gfx13-generic")),
        ("gfx90a:", feature("")),
        ("gfx90a:xnack", feature("xnack")),
        ("gfx90a:xnack*", feature("xnack*")),
        ("gfx90a:XNACK+", feature("XNACK+")),
        ("gfx90a:tgsplit+", feature("tgsplit+")),
        ("gfx90a:xnack+:xnack+", TargetError::DuplicateFeature(Feature::Xnack)),
        ("gfx90a:xnack+:xnack-", TargetError::DuplicateFeature(Feature::Xnack)),
        ("gfx90a:sramecc-:xnack+:sramecc-", TargetError::DuplicateFeature(Feature::Sramecc)),
        ("gfx1100:xnack+", unsupported("gfx1100", Feature::Xnack)),
        ("gfx1100:sramecc-", unsupported("gfx1100", Feature::Sramecc)),
        ("gfx900:sramecc+", unsupported("gfx900", Feature::Sramecc)),
        ("gfx9-generic:sramecc+", unsupported("gfx9-generic", Feature::Sramecc)),
        ("gfx11-generic:xnack-", unsupported("gfx11-generic", Feature::Xnack)),
    ];
    for (input, expected) in cases {
        assert_eq!(TargetId::parse(input), Err(expected), "{input:?}");
    }
}

#[test]
fn processor_table_lookups() {
    // (name, EF_AMDGPU_MACH, generic family, xnack, sramecc), per LLVM AMDGPUUsage.
    let cases = [
        ("gfx900", 0x02c, Some("gfx9-generic"), true, false),
        ("gfx906", 0x02f, Some("gfx9-generic"), true, true),
        ("gfx908", 0x030, None, true, true),
        ("gfx90a", 0x03f, None, true, true),
        ("gfx90c", 0x032, Some("gfx9-generic"), true, false),
        ("gfx940", 0x040, Some("gfx9-4-generic"), true, true),
        ("gfx942", 0x04c, Some("gfx9-4-generic"), true, true),
        ("gfx950", 0x04f, Some("gfx9-4-generic"), true, true),
        ("gfx1013", 0x042, Some("gfx10-1-generic"), true, false),
        ("gfx1034", 0x03e, Some("gfx10-3-generic"), false, false),
        ("gfx1100", 0x041, Some("gfx11-generic"), false, false),
        ("gfx1103", 0x044, Some("gfx11-generic"), false, false),
        ("gfx1152", 0x055, Some("gfx11-generic"), false, false),
        ("gfx1200", 0x048, Some("gfx12-generic"), false, false),
        ("gfx1201", 0x04e, Some("gfx12-generic"), false, false),
        ("gfx9-generic", 0x051, None, true, false),
        ("gfx9-4-generic", 0x05f, None, true, true),
        ("gfx10-1-generic", 0x052, None, true, false),
        ("gfx10-3-generic", 0x053, None, false, false),
        ("gfx11-generic", 0x054, None, false, false),
        ("gfx12-generic", 0x059, None, false, false),
    ];
    for (name, mach, family, xnack, sramecc) in cases {
        let processor = Processor::from_name(name).unwrap();
        assert_eq!(processor.mach(), mach, "{name}");
        assert_eq!(Processor::from_mach(mach), Some(processor), "{name}");
        assert_eq!(processor.generic_family().map(|p| p.name()), family, "{name}");
        assert_eq!(processor.is_generic(), name.ends_with("-generic"), "{name}");
        assert_eq!(processor.supports(Feature::Xnack), xnack, "{name}");
        assert_eq!(processor.supports(Feature::Sramecc), sramecc, "{name}");
    }
    assert_eq!(Processor::from_mach(0), None);
    assert_eq!(Processor::from_mach(0x049), None, "reserved value");
}

#[test]
fn compatibility_table() {
    use IncompatibilityReason::*;
    let ok = Ok::<(), IncompatibilityReason>(());
    // (code object target, generic version, agent, expected)
    type Case = (&'static str, Option<u32>, &'static str, Result<(), IncompatibilityReason>);
    let cases: &[Case] = &[
        ("gfx90a", None, "gfx90a:sramecc+:xnack-", ok),
        ("gfx90a:xnack+", None, "gfx90a:xnack+", ok),
        ("gfx90a:xnack+", None, "gfx90a", ok),
        ("gfx90a:xnack+", None, "gfx90a:xnack-", Err(FeatureMismatch(Feature::Xnack))),
        ("gfx90a:xnack-", None, "gfx90a:sramecc+:xnack+", Err(FeatureMismatch(Feature::Xnack))),
        ("gfx90a:sramecc+", None, "gfx90a:sramecc-:xnack+", Err(FeatureMismatch(Feature::Sramecc))),
        ("gfx90a:sramecc-:xnack-", None, "gfx90a:sramecc-:xnack-", ok),
        ("gfx90a", None, "gfx908", Err(ProcessorMismatch)),
        ("gfx1100", None, "gfx1101", Err(ProcessorMismatch)),
        ("gfx1100", None, "gfx1100", ok),
        ("gfx11-generic", Some(1), "gfx1100", ok),
        ("gfx11-generic", Some(1), "gfx1103", ok),
        ("gfx11-generic", Some(1), "gfx1151", ok),
        ("gfx11-generic", None, "gfx1102", ok),
        ("gfx11-generic", Some(0), "gfx1100", Err(GenericVersionTooOld { found: 0, required: 1 })),
        ("gfx11-generic", Some(1), "gfx1030", Err(NotInGenericFamily)),
        ("gfx11-generic", Some(1), "gfx1200", Err(NotInGenericFamily)),
        ("gfx12-generic", Some(1), "gfx1201", ok),
        ("gfx9-generic", Some(1), "gfx900:xnack-", ok),
        ("gfx9-generic", Some(1), "gfx906:sramecc+:xnack+", ok),
        ("gfx9-generic:xnack+", Some(1), "gfx906:sramecc+:xnack-", Err(FeatureMismatch(Feature::Xnack))),
        ("gfx9-generic", Some(1), "gfx908", Err(NotInGenericFamily)),
        ("gfx9-generic", Some(1), "gfx90a", Err(NotInGenericFamily)),
        ("gfx9-generic", Some(1), "gfx942", Err(NotInGenericFamily)),
        ("gfx9-4-generic", Some(1), "gfx942:sramecc+:xnack-", ok),
        ("gfx9-4-generic:sramecc+", Some(1), "gfx950:sramecc-", Err(FeatureMismatch(Feature::Sramecc))),
        ("gfx9-4-generic", Some(1), "gfx90a", Err(NotInGenericFamily)),
        ("gfx10-1-generic", Some(1), "gfx1013", ok),
        ("gfx10-3-generic", Some(1), "gfx1036", ok),
        ("gfx10-3-generic", Some(1), "gfx1010", Err(NotInGenericFamily)),
        // Exact code never runs on another processor of its family, nor on a generic "agent".
        ("gfx1100", None, "gfx11-generic", Err(GenericAgent)),
        ("gfx11-generic", Some(1), "gfx11-generic", Err(GenericAgent)),
    ];
    for (code, version, agent, expected) in cases {
        let mut code_target = TargetId::parse(code).unwrap();
        if let Some(version) = version {
            code_target = code_target.with_generic_version(*version);
        }
        let agent_target = TargetId::parse(agent).unwrap();
        let result = code_target.runs_on(&agent_target).map_err(|e| {
            assert_eq!(e.code_object, code_target);
            assert_eq!(e.agent, agent_target);
            e.reason
        });
        assert_eq!(&result, expected, "{code} (v{version:?}) on {agent}");
    }
}

#[test]
fn incompatibility_message_names_both_targets_and_the_reason() {
    let code = TargetId::parse("gfx90a:xnack+").unwrap();
    let agent = TargetId::parse("gfx90a:xnack-").unwrap();
    let error = code.runs_on(&agent).unwrap_err();
    assert_eq!(error.to_string(), "code object target gfx90a:xnack+ cannot run on agent gfx90a:xnack-: xnack mismatch");
}

#[test]
fn with_feature_rejects_states_the_processor_cannot_have() {
    let gfx1100 = TargetId::parse("gfx1100").unwrap();
    assert!(gfx1100.with_feature(Feature::Xnack, On).is_err());
    assert!(gfx1100.with_feature(Feature::Xnack, Unsupported).is_ok());
    let gfx90a = TargetId::parse("gfx90a").unwrap();
    assert!(gfx90a.with_feature(Feature::Sramecc, Unsupported).is_err());
    assert_eq!(gfx90a.with_feature(Feature::Sramecc, Off).unwrap().to_string(), "gfx90a:sramecc-");
}

/// A target on a processor of the table, with each feature it has Any, On or Off.
fn arbitrary_target(exact_only: bool) -> impl proptest::strategy::Strategy<Value = TargetId> {
    use proptest::prelude::*;
    let processors: Vec<Processor> = Processor::all().filter(|p| !exact_only || !p.is_generic()).collect();
    (proptest::sample::select(processors), 0..3usize, 0..3usize)
        .prop_map(|(processor, sramecc, xnack)| with_features(processor, sramecc, xnack))
}

/// A target on `processor` with each feature it has Any, On or Off (picks 0, 1, 2).
fn with_features(processor: Processor, sramecc: usize, xnack: usize) -> TargetId {
    let mut target = TargetId::new(processor);
    for (feature, pick) in [(Feature::Sramecc, sramecc), (Feature::Xnack, xnack)] {
        if processor.supports(feature) {
            target = target.with_feature(feature, [Any, On, Off][pick]).expect("a feature the processor has");
        }
    }
    target
}

proptest::proptest! {
    /// `choose_target` against the target-ID rules: the choice runs on every agent, no candidate
    /// fits better, none before it fits as well; with no choice, every candidate is rejected.
    /// A fit is found exactly when `runs_on` allows it, and is generic exactly for a generic
    /// processor.
    #[test]
    fn the_chosen_code_object_is_the_best_fit_that_runs(
        specs in proptest::collection::vec((0..4usize, arbitrary_target(false), 0..3usize, 0..3usize), 0..10),
        agents in proptest::collection::vec(arbitrary_target(true), 1..3),
    ) {
        // Most candidates are drawn near the first agent (its processor or its family), so that
        // the ranking among runnable ones is exercised, not only rejection.
        let candidates: Vec<Option<TargetId>> = specs
            .iter()
            .map(|&(kind, random, sramecc, xnack)| match kind {
                0 => None,
                1 => Some(random),
                2 => Some(with_features(agents[0].processor(), sramecc, xnack)),
                _ => Some(agents[0].processor().generic_family().map_or(random, |family| with_features(family, sramecc, xnack))),
            })
            .collect();
        let fit_on_all = |target: &Option<TargetId>| -> Option<Fit> {
            let target = target.as_ref()?;
            agents.iter().map(|agent| {
                let fit = target.fit(agent);
                assert_eq!(fit.is_ok(), target.runs_on(agent).is_ok());
                if let Ok(fit) = fit {
                    assert_eq!(matches!(fit, Fit::Generic | Fit::GenericAnyFeatures), target.processor().is_generic());
                }
                fit.ok()
            }).try_fold(Fit::Exact, |worst, fit| fit.map(|fit| worst.max(fit)))
        };
        let fits: Vec<Option<Fit>> = candidates.iter().map(fit_on_all).collect();
        match choose_target(&candidates, &agents) {
            Ok(choice) => {
                proptest::prop_assert_eq!(fits[choice.index], Some(choice.fit));
                for (index, fit) in fits.iter().enumerate() {
                    if let Some(fit) = fit {
                        proptest::prop_assert!(*fit >= choice.fit);
                        proptest::prop_assert!(index >= choice.index || *fit > choice.fit);
                    }
                }
            }
            Err(rejections) => {
                proptest::prop_assert!(fits.iter().all(Option::is_none));
                proptest::prop_assert_eq!(rejections.len(), candidates.len());
            }
        }
    }
}
