//! Choosing the embedded code objects for an agent at device creation.
//!
//! Candidates, most specific first: the agent's full target ID with features
//! (`gfx90a:sramecc+:xnack-`), its bare processor (`gfx90a`), then its generic family
//! (`gfx11-generic`, from aqueduct-codeobject's processor table). A candidate is kept only if an
//! embedded code object carries that name and the code object's own target (read from its ELF
//! header, generic version included) passes [`TargetId::runs_on`] for the agent.
//!
//! The result is an ordered list, not one object, because runs-on is not the whole story: a
//! provider may refuse a code-object version (ROCr's loader refused v6, which generic targets need,
//! until early 2024). The engine loads the first candidate the provider accepts. Exact processors
//! come first: their code is tuned for the chip and their v5 objects load on older ROCr too.

use core::fmt;

use aqueduct_codeobject::{CodeObject, TargetError, TargetId};

use crate::toc::EMBEDDED_CODE_OBJECTS;

/// How the chosen code object matched the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    /// The full target ID, features included.
    FullTargetId,
    /// The processor without features.
    Processor,
    /// The processor's generic family.
    GenericFamily,
}

/// The device library's embedded code objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceLibrary;

/// One embedded code object that runs on an agent.
#[derive(Clone, Copy, Debug)]
pub struct SelectedLibrary {
    /// The embedded target it was built for (`gfx11-generic`).
    pub target: &'static str,
    /// Its code-object version (5 or 6), from the ELF header.
    pub code_object_version: u32,
    /// The HSACO, ready for `hsa_code_object_reader_create_from_memory`.
    pub code_object: &'static [u8],
    /// The agent's parsed ISA.
    pub agent: TargetId,
    pub matched_by: MatchKind,
}

/// A candidate that named an embedded code object but could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectedCandidate {
    pub target: &'static str,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("agent ISA `{isa}` is not a target ID: {source}")]
    InvalidAgentIsa { isa: String, source: TargetError },
    #[error("{}", NoMatchMessage(.0))]
    NoMatch(NoMatch),
}

/// Nothing embedded runs on the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoMatch {
    pub agent: String,
    /// The names looked for, in order.
    pub tried: Vec<String>,
    /// What the library embeds, in targets.txt order.
    pub embedded: Vec<&'static str>,
    pub rejected: Vec<RejectedCandidate>,
}

struct NoMatchMessage<'a>(&'a NoMatch);

impl fmt::Display for NoMatchMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let NoMatch { agent, tried, embedded, rejected } = self.0;
        write!(
            f,
            "no builtin code object for agent {agent} (tried {}); embedded targets: {}",
            tried.join(", "),
            embedded.join(", ")
        )?;
        for candidate in rejected {
            write!(f, "; {} rejected: {}", candidate.target, candidate.reason)?;
        }
        Ok(())
    }
}

impl DeviceLibrary {
    /// The embedded targets, in targets.txt order.
    pub fn targets() -> impl ExactSizeIterator<Item = &'static str> {
        EMBEDDED_CODE_OBJECTS.iter().map(|(target, _)| *target)
    }

    /// The embedded code object built for exactly `target` (`gfx90a`, `gfx11-generic`).
    pub fn code_object(target: &str) -> Option<&'static [u8]> {
        EMBEDDED_CODE_OBJECTS.iter().find(|(name, _)| *name == target).map(|(_, bytes)| *bytes)
    }

    /// Every embedded code object that runs on an agent ISA such as `amdgcn-amd-amdhsa--gfx1100`
    /// or `gfx90a:sramecc+:xnack-` (the prefix is optional), best first. Never empty: when nothing
    /// runs on the agent the error says what was tried and what is embedded.
    pub fn candidates(agent_isa_name: &str) -> Result<Vec<SelectedLibrary>, SelectionError> {
        Self::candidates_from(EMBEDDED_CODE_OBJECTS, agent_isa_name)
    }

    /// The preferred candidate ([`DeviceLibrary::candidates`]' first), for callers that cannot
    /// fall back.
    pub fn select(agent_isa_name: &str) -> Result<SelectedLibrary, SelectionError> {
        Self::candidates(agent_isa_name).map(|candidates| candidates[0])
    }

    fn candidates_from(
        embedded: &'static [(&'static str, &'static [u8])],
        agent_isa_name: &str,
    ) -> Result<Vec<SelectedLibrary>, SelectionError> {
        let agent = TargetId::parse(agent_isa_name)
            .map_err(|source| SelectionError::InvalidAgentIsa { isa: agent_isa_name.to_owned(), source })?;
        let processor = agent.processor();
        let mut candidates = Vec::with_capacity(3);
        let full = agent.to_string();
        // Without explicit features the full ID is the bare processor: try it once, as that.
        if full != processor.name() {
            candidates.push((full, MatchKind::FullTargetId));
        }
        candidates.push((processor.name().to_owned(), MatchKind::Processor));
        if let Some(family) = processor.generic_family() {
            candidates.push((family.name().to_owned(), MatchKind::GenericFamily));
        }

        let mut rejected = Vec::new();
        let mut accepted = Vec::new();
        for (name, matched_by) in &candidates {
            let Some(&(target, code_object)) = embedded.iter().find(|(embedded, _)| embedded == name) else {
                continue;
            };
            let verdict = CodeObject::parse(code_object).map_err(|error| error.to_string()).and_then(|parsed| {
                parsed
                    .target()
                    .runs_on(&agent)
                    .map(|()| parsed.abi_version().code_object_version())
                    .map_err(|error| error.to_string())
            });
            match verdict {
                Ok(code_object_version) => accepted.push(SelectedLibrary {
                    target,
                    code_object_version,
                    code_object,
                    agent,
                    matched_by: *matched_by,
                }),
                Err(reason) => rejected.push(RejectedCandidate { target, reason }),
            }
        }
        if !accepted.is_empty() {
            return Ok(accepted);
        }
        Err(SelectionError::NoMatch(NoMatch {
            agent: agent.to_string(),
            tried: candidates.into_iter().map(|(name, _)| name).collect(),
            embedded: embedded.iter().map(|(target, _)| *target).collect(),
            rejected,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_table() {
        let cases = [
            ("amdgcn-amd-amdhsa--gfx1100", "gfx1100", MatchKind::Processor),
            ("gfx1100", "gfx1100", MatchKind::Processor),
            ("gfx1103", "gfx11-generic", MatchKind::GenericFamily),
            ("gfx1151", "gfx11-generic", MatchKind::GenericFamily),
            ("gfx90a:xnack+", "gfx90a", MatchKind::Processor),
            ("gfx90a", "gfx90a", MatchKind::Processor),
            ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a", MatchKind::Processor),
            ("gfx942:sramecc+:xnack-", "gfx942", MatchKind::Processor),
            ("gfx1030", "gfx1030", MatchKind::Processor),
            ("gfx1031", "gfx10-3-generic", MatchKind::GenericFamily),
            ("gfx1010:xnack-", "gfx10-1-generic", MatchKind::GenericFamily),
            ("gfx1201", "gfx12-generic", MatchKind::GenericFamily),
            ("gfx900", "gfx9-generic", MatchKind::GenericFamily),
            ("gfx906:sramecc-:xnack+", "gfx9-generic", MatchKind::GenericFamily),
        ];
        for (isa, expected, matched_by) in cases {
            let selected = DeviceLibrary::select(isa).unwrap_or_else(|error| panic!("{isa}: {error}"));
            assert_eq!((selected.target, selected.matched_by), (expected, matched_by), "{isa}");
            assert_eq!(Some(selected.code_object), DeviceLibrary::code_object(expected));
            let parsed = CodeObject::parse(selected.code_object).expect("embedded code object parses");
            assert!(parsed.target().runs_on(&selected.agent).is_ok());
        }
    }

    #[test]
    fn exact_v5_objects_come_before_their_generic_v6_family() {
        for (isa, exact) in [("amdgcn-amd-amdhsa--gfx1100", "gfx1100"), ("gfx1030", "gfx1030")] {
            let candidates = DeviceLibrary::candidates(isa).expect("candidates");
            let listed: Vec<(&str, u32)> =
                candidates.iter().map(|candidate| (candidate.target, candidate.code_object_version)).collect();
            let family = TargetId::parse(exact).expect("target").processor().generic_family().expect("family");
            assert_eq!(listed, [(exact, 5), (family.name(), 6)], "{isa}");
        }
        // Exact-only targets have a single candidate; family-only ones get the generic object.
        let gfx90a = DeviceLibrary::candidates("gfx90a:sramecc+:xnack-").expect("gfx90a");
        assert_eq!(gfx90a.len(), 1);
        assert_eq!(gfx90a[0].code_object_version, 5);
        let gfx1101 = DeviceLibrary::candidates("gfx1101").expect("gfx1101");
        assert_eq!(gfx1101.iter().map(|candidate| candidate.target).collect::<Vec<_>>(), ["gfx11-generic"]);
    }

    #[test]
    fn an_unshipped_processor_lists_what_is_embedded() {
        // gfx908 has no generic family and is not shipped.
        let Err(SelectionError::NoMatch(no_match)) = DeviceLibrary::select("gfx908:sramecc+:xnack-") else {
            panic!("gfx908 must not select anything");
        };
        assert_eq!(no_match.tried, ["gfx908:sramecc+:xnack-", "gfx908"]);
        assert_eq!(no_match.embedded, DeviceLibrary::targets().collect::<Vec<_>>());
        let message = SelectionError::NoMatch(no_match).to_string();
        for target in DeviceLibrary::targets() {
            assert!(message.contains(target), "{message}");
        }
        assert!(message.contains("gfx908"), "{message}");
    }

    #[test]
    fn bad_agent_isa_is_a_typed_error() {
        for isa in ["", "gfx", "nvptx", "gfx9999", "gfx90a:bogus+", "gfx11-generic"] {
            let result = DeviceLibrary::select(isa);
            assert!(result.is_err(), "{isa}: {result:?}");
        }
        assert!(matches!(DeviceLibrary::select("sm_90"), Err(SelectionError::InvalidAgentIsa { .. })));
    }

    #[test]
    fn a_candidate_that_fails_runs_on_is_skipped_and_reported() {
        // A library that only has a gfx90a object filed under the gfx11-generic name.
        static MISFILED: [(&str, &[u8]); 1] =
            [("gfx11-generic", include_bytes!("../prebuilt/amdgcn-amd-amdhsa--gfx90a.hsaco"))];
        let Err(SelectionError::NoMatch(no_match)) = DeviceLibrary::candidates_from(&MISFILED, "gfx1100") else {
            panic!("a gfx90a object must not be chosen for gfx1100");
        };
        assert_eq!(no_match.rejected.len(), 1);
        assert_eq!(no_match.rejected[0].target, "gfx11-generic");
    }
}
