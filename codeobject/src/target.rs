//! AMDGPU target IDs (`gfx90a:sramecc+:xnack-`, `gfx11-generic`) and the
//! compatibility rule between a code object's target and an agent's ISA.
//!
//! Every fact about a processor (ELF `EF_AMDGPU_MACH` value, generic family,
//! feature support) lives in the single [`PROCESSORS`] table; all lookups
//! derive from it.

use std::fmt;

/// The prefix of a full ISA name (`amdgcn-amd-amdhsa--gfx90a`).
pub const ISA_PREFIX: &str = "amdgcn-amd-amdhsa--";

/// One row of the processor table.
struct ProcessorEntry {
    name: &'static str,
    /// `EF_AMDGPU_MACH_*` value (low 8 bits of ELF `e_flags`).
    mach: u32,
    /// Name of the generic processor whose code runs here, if any.
    generic_family: Option<&'static str>,
    /// The lowest generic version (ELF `EF_AMDGPU_GENERIC_VERSION`) of the
    /// family that supports this processor; 0 when there is no family.
    min_generic_version: u32,
    is_generic: bool,
    supports_xnack: bool,
    supports_sramecc: bool,
}

const fn exact(
    name: &'static str,
    mach: u32,
    generic_family: Option<&'static str>,
    supports_xnack: bool,
    supports_sramecc: bool,
) -> ProcessorEntry {
    ProcessorEntry {
        name,
        mach,
        generic_family,
        // Every family LLVM defines so far starts supporting its members at
        // generic version 1.
        min_generic_version: if generic_family.is_some() { 1 } else { 0 },
        is_generic: false,
        supports_xnack,
        supports_sramecc,
    }
}

const fn generic(name: &'static str, mach: u32, supports_xnack: bool, supports_sramecc: bool) -> ProcessorEntry {
    ProcessorEntry {
        name,
        mach,
        generic_family: None,
        min_generic_version: 0,
        is_generic: true,
        supports_xnack,
        supports_sramecc,
    }
}

const GFX9: Option<&str> = Some("gfx9-generic");
const GFX9_4: Option<&str> = Some("gfx9-4-generic");
const GFX10_1: Option<&str> = Some("gfx10-1-generic");
const GFX10_3: Option<&str> = Some("gfx10-3-generic");
const GFX11: Option<&str> = Some("gfx11-generic");
const GFX12: Option<&str> = Some("gfx12-generic");

/// The processor table. MACH values, generic families and feature support
/// follow LLVM's AMDGPUUsage ("AMDGPU EF_AMDGPU_MACH Values" and "AMDGPU
/// Generic Processors" tables) and the ROCm loader's feature table.
#[rustfmt::skip]
const PROCESSORS: &[ProcessorEntry] = &[
    //     name       mach   family   xnack  sramecc
    exact("gfx600",  0x020, None,    false, false),
    exact("gfx601",  0x021, None,    false, false),
    exact("gfx602",  0x03a, None,    false, false),
    exact("gfx700",  0x022, None,    false, false),
    exact("gfx701",  0x023, None,    false, false),
    exact("gfx702",  0x024, None,    false, false),
    exact("gfx703",  0x025, None,    false, false),
    exact("gfx704",  0x026, None,    false, false),
    exact("gfx705",  0x03b, None,    false, false),
    exact("gfx801",  0x028, None,    true,  false),
    exact("gfx802",  0x029, None,    false, false),
    exact("gfx803",  0x02a, None,    false, false),
    exact("gfx805",  0x03c, None,    false, false),
    exact("gfx810",  0x02b, None,    true,  false),
    exact("gfx900",  0x02c, GFX9,    true,  false),
    exact("gfx902",  0x02d, GFX9,    true,  false),
    exact("gfx904",  0x02e, GFX9,    true,  false),
    exact("gfx906",  0x02f, GFX9,    true,  true),
    exact("gfx908",  0x030, None,    true,  true),
    exact("gfx909",  0x031, GFX9,    true,  false),
    exact("gfx90a",  0x03f, None,    true,  true),
    exact("gfx90c",  0x032, GFX9,    true,  false),
    exact("gfx940",  0x040, GFX9_4,  true,  true),
    exact("gfx941",  0x04b, GFX9_4,  true,  true),
    exact("gfx942",  0x04c, GFX9_4,  true,  true),
    exact("gfx950",  0x04f, GFX9_4,  true,  true),
    exact("gfx1010", 0x033, GFX10_1, true,  false),
    exact("gfx1011", 0x034, GFX10_1, true,  false),
    exact("gfx1012", 0x035, GFX10_1, true,  false),
    exact("gfx1013", 0x042, GFX10_1, true,  false),
    exact("gfx1030", 0x036, GFX10_3, false, false),
    exact("gfx1031", 0x037, GFX10_3, false, false),
    exact("gfx1032", 0x038, GFX10_3, false, false),
    exact("gfx1033", 0x039, GFX10_3, false, false),
    exact("gfx1034", 0x03e, GFX10_3, false, false),
    exact("gfx1035", 0x03d, GFX10_3, false, false),
    exact("gfx1036", 0x045, GFX10_3, false, false),
    exact("gfx1100", 0x041, GFX11,   false, false),
    exact("gfx1101", 0x046, GFX11,   false, false),
    exact("gfx1102", 0x047, GFX11,   false, false),
    exact("gfx1103", 0x044, GFX11,   false, false),
    exact("gfx1150", 0x043, GFX11,   false, false),
    exact("gfx1151", 0x04a, GFX11,   false, false),
    exact("gfx1152", 0x055, GFX11,   false, false),
    exact("gfx1153", 0x058, GFX11,   false, false),
    exact("gfx1200", 0x048, GFX12,   false, false),
    exact("gfx1201", 0x04e, GFX12,   false, false),
    generic("gfx9-generic",    0x051, true,  false),
    generic("gfx9-4-generic",  0x05f, true,  true),
    generic("gfx10-1-generic", 0x052, true,  false),
    generic("gfx10-3-generic", 0x053, false, false),
    generic("gfx11-generic",   0x054, false, false),
    generic("gfx12-generic",   0x059, false, false),
];

/// A known AMDGPU processor (exact like `gfx90a`, or generic like
/// `gfx11-generic`): a cheap handle into the processor table.
#[derive(Clone, Copy)]
pub struct Processor(&'static ProcessorEntry);

impl Processor {
    /// Looks a processor up by its LLVM name (`gfx1100`, `gfx9-generic`).
    pub fn from_name(name: &str) -> Option<Processor> {
        PROCESSORS.iter().find(|p| p.name == name).map(Processor)
    }

    /// Looks a processor up by its ELF `EF_AMDGPU_MACH` value.
    pub fn from_mach(mach: u32) -> Option<Processor> {
        PROCESSORS.iter().find(|p| p.mach == mach).map(Processor)
    }

    /// All processors in the table.
    pub fn all() -> impl Iterator<Item = Processor> {
        PROCESSORS.iter().map(Processor)
    }

    /// The LLVM processor name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The ELF `EF_AMDGPU_MACH` value.
    pub fn mach(self) -> u32 {
        self.0.mach
    }

    /// Whether this is a generic processor (`gfx11-generic`).
    pub fn is_generic(self) -> bool {
        self.0.is_generic
    }

    /// The generic processor whose code runs on this exact processor.
    pub fn generic_family(self) -> Option<Processor> {
        self.0.generic_family.and_then(Processor::from_name)
    }

    /// The lowest generic version of [`Self::generic_family`] that supports
    /// this processor (0 when there is no family).
    pub fn min_generic_version(self) -> u32 {
        self.0.min_generic_version
    }

    /// Whether the processor has the given feature at all.
    pub fn supports(self, feature: Feature) -> bool {
        match feature {
            Feature::Xnack => self.0.supports_xnack,
            Feature::Sramecc => self.0.supports_sramecc,
        }
    }
}

impl PartialEq for Processor {
    fn eq(&self, other: &Self) -> bool {
        self.0.mach == other.0.mach
    }
}

impl Eq for Processor {}

impl fmt::Debug for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// A target feature that appears in target IDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// SRAM ECC: error correction of on-chip SRAM (`sramecc`).
    Sramecc,
    /// XNACK: replaying memory accesses that page-faulted (`xnack`).
    Xnack,
}

impl Feature {
    /// The feature's name in target IDs.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Sramecc => "sramecc",
            Feature::Xnack => "xnack",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The state of a feature in a target ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureState {
    /// The processor does not have the feature.
    Unsupported,
    /// Supported but not specified: code works either way.
    Any,
    /// Explicitly enabled (`+`).
    On,
    /// Explicitly disabled (`-`).
    Off,
}

/// A parsed target ID: processor plus feature states, and for code objects
/// with a generic processor, the generic version from the ELF header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetId {
    processor: Processor,
    sramecc: FeatureState,
    xnack: FeatureState,
    generic_version: Option<u32>,
}

/// Why a target ID string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The string is empty (after removing any ISA prefix).
    #[error("empty target ID")]
    Empty,
    /// The processor part does not have the syntax of a processor name; holds that part.
    #[error("`{0}` is not a processor name (expected e.g. gfx90a or gfx11-generic)")]
    InvalidProcessor(String),
    /// The processor name is well-formed but not in the processor table; holds the name.
    #[error("unknown processor `{0}`")]
    UnknownProcessor(String),
    /// A feature part is not `sramecc+`, `sramecc-`, `xnack+` or `xnack-`; holds that part.
    #[error("invalid feature `{0}` (expected sramecc+, sramecc-, xnack+ or xnack-)")]
    InvalidFeature(String),
    /// The same feature appears twice.
    #[error("feature {0} given more than once")]
    DuplicateFeature(Feature),
    #[error("processor {processor} does not support {feature}")]
    /// A feature is set for a processor that lacks it (or a feature the
    /// processor has is set to [`FeatureState::Unsupported`]).
    UnsupportedFeature {
        /// The target's processor.
        processor: Processor,
        /// The feature.
        feature: Feature,
    },
}

impl TargetId {
    /// Parses `gfx90a`, `gfx90a:sramecc+:xnack-`, `gfx11-generic` or any of
    /// them prefixed with `amdgcn-amd-amdhsa--`. Features may come in any
    /// order, each at most once, and only if the processor supports them.
    pub fn parse(text: &str) -> Result<TargetId, TargetError> {
        let text = text.strip_prefix(ISA_PREFIX).unwrap_or(text);
        if text.is_empty() {
            return Err(TargetError::Empty);
        }
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default();
        if !is_processor_syntax(name) {
            return Err(TargetError::InvalidProcessor(name.to_owned()));
        }
        let processor = Processor::from_name(name).ok_or_else(|| TargetError::UnknownProcessor(name.to_owned()))?;
        let mut target = TargetId::new(processor);
        let mut seen_sramecc = false;
        let mut seen_xnack = false;
        for part in parts {
            let (feature, state) = match part {
                "sramecc+" => (Feature::Sramecc, FeatureState::On),
                "sramecc-" => (Feature::Sramecc, FeatureState::Off),
                "xnack+" => (Feature::Xnack, FeatureState::On),
                "xnack-" => (Feature::Xnack, FeatureState::Off),
                _ => return Err(TargetError::InvalidFeature(part.to_owned())),
            };
            let seen = match feature {
                Feature::Sramecc => &mut seen_sramecc,
                Feature::Xnack => &mut seen_xnack,
            };
            if std::mem::replace(seen, true) {
                return Err(TargetError::DuplicateFeature(feature));
            }
            target = target.with_feature(feature, state)?;
        }
        Ok(target)
    }

    /// A target for `processor` with every supported feature set to Any.
    pub fn new(processor: Processor) -> TargetId {
        let default_state = |feature| {
            if processor.supports(feature) { FeatureState::Any } else { FeatureState::Unsupported }
        };
        TargetId {
            processor,
            sramecc: default_state(Feature::Sramecc),
            xnack: default_state(Feature::Xnack),
            generic_version: None,
        }
    }

    /// Returns a copy with `feature` set to `state`. Setting a feature the
    /// processor lacks to anything but [`FeatureState::Unsupported`] (or
    /// vice versa) is an error.
    pub fn with_feature(mut self, feature: Feature, state: FeatureState) -> Result<TargetId, TargetError> {
        let supported = self.processor.supports(feature);
        if supported == (state == FeatureState::Unsupported) {
            return Err(TargetError::UnsupportedFeature { processor: self.processor, feature });
        }
        match feature {
            Feature::Sramecc => self.sramecc = state,
            Feature::Xnack => self.xnack = state,
        }
        Ok(self)
    }

    /// Returns a copy carrying a generic version (meaningful only for
    /// generic processors; it comes from the ELF header, not the string).
    pub fn with_generic_version(mut self, version: u32) -> TargetId {
        self.generic_version = Some(version);
        self
    }

    /// The processor.
    pub fn processor(&self) -> Processor {
        self.processor
    }

    /// The state of `feature`.
    pub fn feature(&self, feature: Feature) -> FeatureState {
        match feature {
            Feature::Sramecc => self.sramecc,
            Feature::Xnack => self.xnack,
        }
    }

    /// The state of [`Feature::Sramecc`].
    pub fn sramecc(&self) -> FeatureState {
        self.sramecc
    }

    /// The state of [`Feature::Xnack`].
    pub fn xnack(&self) -> FeatureState {
        self.xnack
    }

    /// The generic version, if this target came from a code object.
    pub fn generic_version(&self) -> Option<u32> {
        self.generic_version
    }

    /// The full ISA name: `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub fn isa_name(&self) -> String {
        format!("{ISA_PREFIX}{self}")
    }

    /// Same processor and feature states (the generic version is ignored).
    pub fn same_target(&self, other: &TargetId) -> bool {
        self.processor == other.processor && self.sramecc == other.sramecc && self.xnack == other.xnack
    }

    /// Whether code built for `self` can run on an agent whose ISA is
    /// `agent`: same processor, or `self` is generic and the agent belongs
    /// to that family at a sufficient generic version; each explicit
    /// feature setting of the code must match the agent's (an agent state
    /// of Any accepts either).
    pub fn runs_on(&self, agent: &TargetId) -> Result<(), Incompatibility> {
        let fail = |reason| Err(Incompatibility { code_object: *self, agent: *agent, reason });
        if agent.processor.is_generic() {
            return fail(IncompatibilityReason::GenericAgent);
        }
        if self.processor != agent.processor {
            if !self.processor.is_generic() {
                return fail(IncompatibilityReason::ProcessorMismatch);
            }
            if agent.processor.generic_family() != Some(self.processor) {
                return fail(IncompatibilityReason::NotInGenericFamily);
            }
            let required = agent.processor.min_generic_version();
            // A target parsed from a string carries no version; only a
            // version read from a code object can be too old.
            if let Some(found) = self.generic_version
                && found < required
            {
                return fail(IncompatibilityReason::GenericVersionTooOld { found, required });
            }
        }
        for feature in [Feature::Sramecc, Feature::Xnack] {
            let code_state = self.feature(feature);
            let agent_state = agent.feature(feature);
            let compatible = match code_state {
                FeatureState::Any | FeatureState::Unsupported => true,
                FeatureState::On | FeatureState::Off => agent_state == FeatureState::Any || agent_state == code_state,
            };
            if !compatible {
                return fail(IncompatibilityReason::FeatureMismatch(feature));
            }
        }
        Ok(())
    }
}

/// `gfx` + digits + one hex stepping digit, or `gfx<N>[-<M>]-generic`.
fn is_processor_syntax(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("gfx") else {
        return false;
    };
    if let Some(version) = rest.strip_suffix("-generic") {
        let mut numbers = version.split('-');
        let all_numeric = numbers.by_ref().take(2).all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        return all_numeric && numbers.next().is_none();
    }
    let bytes = rest.as_bytes();
    match bytes.split_last() {
        Some((stepping, version)) => {
            !version.is_empty()
                && version.iter().all(u8::is_ascii_digit)
                && (stepping.is_ascii_digit() || (b'a'..=b'f').contains(stepping))
        }
        None => false,
    }
}

impl fmt::Display for TargetId {
    /// Canonical form: processor, then `sramecc`, then `xnack`, each only
    /// when explicitly On or Off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor.name())?;
        for (feature, state) in [(Feature::Sramecc, self.sramecc), (Feature::Xnack, self.xnack)] {
            match state {
                FeatureState::On => write!(f, ":{feature}+")?,
                FeatureState::Off => write!(f, ":{feature}-")?,
                FeatureState::Any | FeatureState::Unsupported => {}
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for TargetId {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        TargetId::parse(text)
    }
}

/// Why a code object cannot run on an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncompatibilityReason {
    /// Different exact processors.
    ProcessorMismatch,
    /// The code object is generic, but the agent's processor is not in its family.
    NotInGenericFamily,
    /// The code object's generic version predates support for the agent.
    GenericVersionTooOld {
        /// The code object's generic version.
        found: u32,
        /// The lowest generic version that supports the agent's processor.
        required: u32,
    },
    /// An explicit feature setting differs from the agent's.
    FeatureMismatch(Feature),
    /// Agents always have exact processors.
    GenericAgent,
}

impl fmt::Display for IncompatibilityReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ProcessorMismatch => f.write_str("processor mismatch"),
            Self::NotInGenericFamily => f.write_str("agent processor is not in the generic family"),
            Self::GenericVersionTooOld { found, required } => {
                write!(f, "generic version {found} is older than the required {required}")
            }
            Self::FeatureMismatch(feature) => write!(f, "{feature} mismatch"),
            Self::GenericAgent => f.write_str("agent ISA must name an exact processor"),
        }
    }
}

/// A code object target that cannot run on an agent, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("code object target {code_object} cannot run on agent {agent}: {reason}")]
pub struct Incompatibility {
    /// The code object's target.
    pub code_object: TargetId,
    /// The agent's ISA as a target.
    pub agent: TargetId,
    /// Why the code cannot run there.
    pub reason: IncompatibilityReason,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_unique_names_and_mach_values() {
        for (i, a) in PROCESSORS.iter().enumerate() {
            for b in &PROCESSORS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.mach, b.mach, "{} and {}", a.name, b.name);
            }
        }
    }

    #[test]
    fn every_family_is_a_generic_processor_with_matching_features() {
        for processor in Processor::all() {
            assert!(is_processor_syntax(processor.name()), "{processor}");
            if let Some(family) = processor.0.generic_family {
                let family = Processor::from_name(family).expect("family in table");
                assert!(family.is_generic());
                assert!(processor.min_generic_version() >= 1);
                // Code built for the family must be able to express every
                // feature the family supports on each member.
                for feature in [Feature::Xnack, Feature::Sramecc] {
                    if family.supports(feature) {
                        assert!(processor.supports(feature), "{processor} {feature}");
                    }
                }
            }
        }
    }
}
