//! Which of several code objects a device loads: the fat-binary rule.
//!
//! HIP picks a fat binary's entry for each GPU in two tiers (clr,
//! `hipamd/src/hip_code_object.cpp`, `extractCodeObjectFromFatBinaryUsingComgr`): an entry for
//! the agent's own processor wins over one for its generic family (`gfx9-4-generic` for a
//! gfx942), whatever their order; within a tier the first compatible entry wins. Compatibility is
//! the target-ID rule of [`TargetId::runs_on`] (comgr's `isCompatibleIsaName`, clang's
//! `isCompatibleTargetID`): a feature the code object names must equal the agent's, and one it
//! leaves out is "any".
//!
//! [`Fit`] refines HIP's tiers by one step, inside each: an entry that names the agent's
//! `sramecc`/`xnack` states is preferred over one that leaves them "any". A build for
//! `gfx90a:xnack-` is the one made for an agent running with XNACK off; HIP would take a
//! `gfx90a` entry listed before it. Where the entries differ only in order, the first wins, as in
//! HIP.

use crate::target::{Feature, FeatureState, Incompatibility, TargetId};

/// How closely a code object's target fits an agent that can run it; better fits order first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fit {
    /// The agent's processor, naming each feature state the agent has (`gfx90a:sramecc+:xnack-`
    /// for that agent, or `gfx1100`, which has no such features).
    Exact,
    /// The agent's processor, leaving one or both features "any" (`gfx90a` for
    /// `gfx90a:sramecc+:xnack-`).
    ProcessorAnyFeatures,
    /// The agent's generic family, naming each feature state the agent has.
    Generic,
    /// The agent's generic family, leaving one or both features "any".
    GenericAnyFeatures,
}

impl TargetId {
    /// How well code built for `self` fits an agent whose ISA is `agent`, or why it cannot run
    /// there ([`TargetId::runs_on`]).
    pub fn fit(&self, agent: &TargetId) -> Result<Fit, Incompatibility> {
        self.runs_on(agent)?;
        let names_agent_features = [Feature::Sramecc, Feature::Xnack].into_iter().all(|feature| {
            // A feature the processor lacks is named by everyone; one the agent runs either way
            // (Any) is met by any code.
            matches!(agent.feature(feature), FeatureState::Unsupported | FeatureState::Any)
                || self.feature(feature) == agent.feature(feature)
        });
        Ok(match (self.processor().is_generic(), names_agent_features) {
            (false, true) => Fit::Exact,
            (false, false) => Fit::ProcessorAnyFeatures,
            (true, true) => Fit::Generic,
            (true, false) => Fit::GenericAnyFeatures,
        })
    }
}

/// Why a candidate was passed over by [`choose_target`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The candidate has no target (it is not a code object, or its target could not be read).
    NoTarget,
    /// The candidate's target cannot run on an agent.
    Incompatible(Incompatibility),
    /// There is no agent to run it on.
    NoAgent,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoTarget => f.write_str("no AMDGPU target"),
            Self::Incompatible(incompatibility) => incompatibility.fmt(f),
            Self::NoAgent => f.write_str("no agent to run on"),
        }
    }
}

/// The candidate chosen by [`choose_target`]: its index and its fit (the worst over the agents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The candidate's position in the list given.
    pub index: usize,
    /// Its fit on the agent it fits worst.
    pub fit: Fit,
}

/// Chooses among `candidates` (each a code object's target, `None` where it has none) the one
/// that runs on every agent of `agents` with the best [`Fit`], the first of equals. A candidate's
/// fit on several agents is its worst among them. When none runs (or there is no agent), the
/// error holds one rejection per candidate, in the candidates' order: each one's first. Pure.
pub fn choose_target(candidates: &[Option<TargetId>], agents: &[TargetId]) -> Result<Choice, Vec<Rejection>> {
    if agents.is_empty() {
        return Err(vec![Rejection::NoAgent; candidates.len()]);
    }
    let mut best: Option<Choice> = None;
    let mut rejections = Vec::with_capacity(candidates.len());
    for (index, candidate) in candidates.iter().enumerate() {
        let fit = match candidate {
            None => Err(Rejection::NoTarget),
            Some(target) => agents.iter().try_fold(Fit::Exact, |worst, agent| {
                target.fit(agent).map(|fit| worst.max(fit)).map_err(Rejection::Incompatible)
            }),
        };
        match fit {
            Ok(fit) if best.is_none_or(|best| fit < best.fit) => best = Some(Choice { index, fit }),
            Ok(_) => {}
            Err(rejection) => rejections.push(rejection),
        }
    }
    best.ok_or(rejections)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> TargetId {
        TargetId::parse(text).expect("a target ID")
    }

    #[test]
    fn fits_order_processor_before_family_and_named_features_before_any() {
        let agent = target("gfx942:sramecc+:xnack-");
        assert_eq!(target("gfx942:sramecc+:xnack-").fit(&agent), Ok(Fit::Exact));
        assert_eq!(target("gfx942:xnack-").fit(&agent), Ok(Fit::ProcessorAnyFeatures));
        assert_eq!(target("gfx942").fit(&agent), Ok(Fit::ProcessorAnyFeatures));
        assert_eq!(target("gfx9-4-generic:sramecc+:xnack-").fit(&agent), Ok(Fit::Generic));
        assert_eq!(target("gfx9-4-generic").fit(&agent), Ok(Fit::GenericAnyFeatures));
        assert!(target("gfx942:xnack+").fit(&agent).is_err());
        // A processor without the features: its plain name is exact.
        assert_eq!(target("gfx1100").fit(&target("gfx1100")), Ok(Fit::Exact));
        assert_eq!(target("gfx11-generic").fit(&target("gfx1100")), Ok(Fit::Generic));
    }

    #[test]
    fn a_processor_entry_wins_over_its_family_whatever_the_order() {
        let agents = [target("gfx1100")];
        let candidates = [Some(target("gfx11-generic")), None, Some(target("gfx1030")), Some(target("gfx1100"))];
        assert_eq!(choose_target(&candidates, &agents), Ok(Choice { index: 3, fit: Fit::Exact }));
        let without = &candidates[..3];
        assert_eq!(choose_target(without, &agents), Ok(Choice { index: 0, fit: Fit::Generic }));
    }

    #[test]
    fn several_agents_take_the_worst_fit_and_none_running_lists_every_rejection() {
        let agents = [target("gfx1100"), target("gfx1101")];
        let candidates = [Some(target("gfx1100")), Some(target("gfx11-generic"))];
        assert_eq!(choose_target(&candidates, &agents), Ok(Choice { index: 1, fit: Fit::Generic }));
        let rejected = choose_target(&[None, Some(target("gfx1030"))], &agents).unwrap_err();
        assert_eq!(rejected.len(), 2);
        assert_eq!(rejected[0], Rejection::NoTarget);
        assert!(matches!(rejected[1], Rejection::Incompatible(_)));
        assert_eq!(choose_target(&candidates, &[]), Err(vec![Rejection::NoAgent; 2]));
    }
}
