//! Names the file gives engine enums: each enum lists its names beside its definition (a
//! [`Named`] implementation), one table serving both ways.

use aqueduct_components::device_entities::MemoryKind;

use crate::error::{EngineError, EngineResult};

/// An enum the replay file names by a fixed table.
pub(crate) trait Named: Copy + PartialEq + 'static {
    /// What one is called in an error ("memory kind").
    const WHAT: &'static str;
    /// Every value with its name in the file.
    const NAMES: &'static [(Self, &'static str)];
}

/// `value`'s name in the file.
pub(crate) fn name<T: Named>(value: T) -> String {
    T::NAMES.iter().find(|(entry, _)| *entry == value).map_or("?", |(_, name)| name).to_string()
}

/// The value the file names `text`.
pub(crate) fn parse<T: Named>(text: &str) -> EngineResult<T> {
    T::NAMES.iter().find(|(_, entry)| *entry == text).map(|(value, _)| *value).ok_or_else(|| {
        EngineError::InvalidArgument {
            what: T::WHAT,
            reason: format!("`{text}` is not a {} this aqueduct knows", T::WHAT),
        }
    })
}

impl Named for MemoryKind {
    const WHAT: &'static str = "memory kind";
    const NAMES: &'static [(Self, &'static str)] = &[
        (MemoryKind::DeviceLocal, "device-local"),
        (MemoryKind::HostVisible, "host-visible"),
        (MemoryKind::HostVisibleDevice, "host-visible-device"),
    ];
}
