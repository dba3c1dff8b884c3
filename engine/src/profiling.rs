//! Tracy integration (the `tracy` feature): route every stage span to a Tracy client.
//!
//! With the feature on, `aqueduct-systems` opens a span per stage (`admission`,
//! `kernarg_patching`, `aql_publication`, `epoch_reclaim`, `fail_in_flight`) and the engine one per
//! submission and per completion drain; [`install_tracy`] makes them visible to a connected Tracy
//! profiler. GPU zones, occupancy plots and frame marks come from a profile capture
//! (`profile/tracy.rs`, `Device::frame_mark`). Without the feature none of this is compiled.

use tracing_subscriber::layer::SubscriberExt;

/// Installs a global tracing subscriber that forwards spans to Tracy. Fails if another global
/// subscriber is already set.
pub fn install_tracy() -> Result<(), tracing::subscriber::SetGlobalDefaultError> {
    let subscriber = tracing_subscriber::registry().with(tracing_tracy::TracyLayer::default());
    tracing::subscriber::set_global_default(subscriber)
}

/// Whether a Tracy profiler is connected to this process's client now (a study can wait for the
/// viewer before it measures, so its first points are not lost).
pub fn tracy_connected() -> bool {
    tracy_client::Client::is_connected()
}
