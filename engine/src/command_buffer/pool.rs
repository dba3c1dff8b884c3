//! Recorders kept for reuse: a resource of the device World, so recording a program of the same
//! shape again (a game's per-frame buffer, a one-shot chain) allocates nothing for its commands.
//! The block Worlds and published images finished programs give back are the device's
//! (`device/programs.rs`).

use bevy_ecs::resource::Resource;

use super::recorder::Recorder;
use crate::device::DeviceShared;

/// Recorders kept for reuse, at most.
const KEPT_RECORDERS: usize = 4;
/// A recorder whose buffers grew past this many bytes is dropped rather than kept.
const KEPT_RECORDER_BYTES: usize = 64 << 20;

/// Boxed as a command buffer holds them, so handing one out allocates nothing.
#[derive(Resource, Default)]
#[allow(clippy::vec_box)]
pub(crate) struct KeptRecorders(Vec<Box<Recorder>>);

/// A recorder with empty buffers (that may keep the capacity of earlier recordings).
pub(crate) fn take_recorder(device: &DeviceShared) -> Box<Recorder> {
    device.world().get_resource_mut::<KeptRecorders>().and_then(|mut kept| kept.0.pop()).unwrap_or_default()
}

/// Keeps `recorder`'s buffers for the next command buffer, unless enough are kept.
pub(crate) fn give_recorder(device: &DeviceShared, mut recorder: Box<Recorder>) {
    if recorder.capacity_bytes() > KEPT_RECORDER_BYTES {
        return;
    }
    let mut world = device.world();
    let mut kept = world.get_resource_or_init::<KeptRecorders>();
    if kept.0.len() < KEPT_RECORDERS {
        recorder.clear();
        kept.0.push(recorder);
    }
}
