//! Tracy integration (the `tracy` feature): route every stage span to a Tracy client.
//!
//! With the feature on, `aqueduct-systems` opens a span per stage (`admission`,
//! `kernarg_patching`, `aql_publication`, `epoch_reclaim`, `fail_in_flight`) and the engine one per
//! submission and per completion drain; [`install_tracy`] makes them visible to a connected Tracy
//! profiler, or [`tracy_layer`] adds them to a subscriber the program already builds. GPU zones
//! of every timed dispatch and occupancy plots come without any setup: with the feature, every
//! device times its packets and shows the times in Tracy while no profile capture runs (a
//! capture shows the same zones and also writes its bundle; `profile/tracy.rs`). Frame marks are
//! `Device::frame_mark`. Without the feature none of this is compiled.

use tracing_subscriber::layer::SubscriberExt;

/// Installs a global tracing subscriber that forwards spans to Tracy. Fails if another global
/// subscriber is already set: then add [`tracy_layer`] to that one instead.
pub fn install_tracy() -> Result<(), tracing::subscriber::SetGlobalDefaultError> {
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(tracy_layer()))
}

/// The layer that forwards spans to Tracy, for a subscriber the program builds itself
/// (`tracing_subscriber::registry().with(fmt_layer).with(aqueduct::profiling::tracy_layer())`).
pub fn tracy_layer() -> tracing_tracy::TracyLayer {
    tracing_tracy::TracyLayer::default()
}

/// Whether a Tracy profiler is connected to this process's client now (a study can wait for the
/// viewer before it measures, so its first points are not lost).
pub fn tracy_connected() -> bool {
    tracy_client::Client::is_connected()
}
