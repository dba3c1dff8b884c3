//! The device library's code-object versions against what the loader accepts: the engine loads
//! the first candidate the provider takes (exact-target v5 objects first, generic v6 families
//! next) and, when none loads, reports every refusal. The soft runtime's configuration applies at
//! its next initialization and is process-wide, so this binary holds one sequential test.

mod common;

use aqueduct_engine::{EngineConfig, EngineError};
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig};

/// Opens a soft device with one gfx1100 agent whose loader accepts `versions`, and returns the
/// device-library target it chose (the engine is dropped, shutting the runtime down again).
fn open(versions: std::ops::RangeInclusive<u32>) -> Result<&'static str, EngineError> {
    let config = EngineConfig {
        soft: SoftConfig {
            agents: vec![SoftAgentConfig::gfx1100()],
            code_object_versions: versions,
            ..SoftConfig::default()
        },
        ..EngineConfig::default()
    };
    let engine = common::open_engine(config)?;
    let agents = engine.device().agents();
    assert_eq!(agents.len(), 1);
    Ok(agents[0].library_target)
}

#[test]
fn the_engine_falls_back_between_device_library_code_objects() {
    // ROCr's current loader takes v1..=v6: the preferred candidate, the exact v5 object.
    assert_eq!(open(1..=6).expect("opens"), "gfx1100");
    // A pre-2024 ROCr (v5 at most) takes the same exact v5 object.
    assert_eq!(open(4..=5).expect("opens"), "gfx1100");
    // A loader that refused v5 falls back to the generic v6 family object.
    assert_eq!(open(6..=6).expect("opens"), "gfx11-generic");
    // One that takes neither reports both refusals.
    let Err(EngineError::NoDevice { reason }) = open(4..=4) else {
        panic!("no device-library object is v4");
    };
    for part in ["gfx1100 (code object v5)", "gfx11-generic (code object v6)", "INVALID_CODE_OBJECT"] {
        assert!(reason.contains(part), "`{part}` missing from: {reason}");
    }
}
