//! Tracy's view of a capture (the `tracy` feature): one GPU context per queue, whose zones are
//! the same device times the bundle records, plus plots of each queue's occupancy.
//!
//! Device times reach the host only when an epoch is drained, so a queue's zones are opened,
//! closed and given their timestamps together, at the drain. The context's clock is the bundle's
//! (host `CLOCK_MONOTONIC` ns, period 1): the context is created with the host time of its
//! creation, which is how Tracy calibrates it against its own clock. Tracy needs each context's
//! timestamps in increasing order, nested zones included: [`GpuTimeline::nest`] makes them so.

/// A zone on a queue's GPU timeline, in host nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Zone<'a> {
    pub name: &'a str,
    pub begin_ns: u64,
    pub end_ns: u64,
}

/// The last timestamp a queue's context was given: the next ones may not go back before it.
#[derive(Debug, Default)]
pub(crate) struct GpuTimeline {
    last_ns: u64,
}

impl GpuTimeline {
    /// Orders one submission's zones for upload: the submission, then each of its dispatches in
    /// order of begin, inside it and one after another. Times that would go back (clock
    /// calibration error, packets that overlap in relaxed order) are clamped forward, never
    /// dropped, so Tracy's order holds and every zone is shown.
    pub fn nest<'a>(&mut self, outer: Zone<'a>, mut inner: Vec<Zone<'a>>) -> (Zone<'a>, Vec<Zone<'a>>) {
        inner.sort_by_key(|zone| zone.begin_ns);
        let begin = outer.begin_ns.max(self.last_ns);
        let mut cursor = begin;
        for zone in &mut inner {
            zone.begin_ns = zone.begin_ns.max(cursor);
            zone.end_ns = zone.end_ns.max(zone.begin_ns);
            cursor = zone.end_ns;
        }
        let end = outer.end_ns.max(cursor);
        self.last_ns = end;
        (Zone { begin_ns: begin, end_ns: end, ..outer }, inner)
    }
}

#[cfg(feature = "tracy")]
pub(crate) use emitter::TracyQueue;

#[cfg(feature = "tracy")]
mod emitter {
    use std::sync::Mutex;

    use tracy_client::{Client, GpuContext, GpuContextType, PlotName};

    use super::{GpuTimeline, Zone};
    use crate::profile::host_now_ns;

    /// One queue's GPU context and plots.
    pub(crate) struct TracyQueue {
        client: Client,
        context: GpuContext,
        timeline: Mutex<GpuTimeline>,
        depth: PlotName,
        kernargs: PlotName,
        parked: PlotName,
    }

    impl TracyQueue {
        /// A GPU context for queue `index`; `None` (logged) when Tracy has no context left (it
        /// allows 255 per process).
        pub fn new(index: u16) -> Option<Self> {
            let client = Client::start();
            let name = format!("aqueduct queue {index}");
            let context =
                match client.clone().new_gpu_context(Some(&name), GpuContextType::Invalid, host_now_ns() as i64, 1.0) {
                    Ok(context) => context,
                    Err(error) => {
                        tracing::warn!(%error, queue = index, "no Tracy GPU context for the queue");
                        return None;
                    }
                };
            Some(Self {
                client,
                context,
                timeline: Mutex::new(GpuTimeline::default()),
                depth: PlotName::new_leak(format!("queue {index} epochs in flight")),
                kernargs: PlotName::new_leak(format!("queue {index} kernarg bytes")),
                parked: PlotName::new_leak(format!("queue {index} parked submissions")),
            })
        }

        /// One submission's zone, with its dispatches nested inside.
        pub fn submission(&self, outer: Zone<'_>, inner: Vec<Zone<'_>>) {
            let (outer, inner) = self.timeline.lock().unwrap_or_else(|poison| poison.into_inner()).nest(outer, inner);
            let Ok(mut span) = self.context.span_alloc(outer.name, "", "aqueduct", 0) else { return };
            span.upload_timestamp_start(outer.begin_ns as i64);
            for zone in inner {
                let Ok(mut nested) = self.context.span_alloc(zone.name, "", "aqueduct", 0) else { continue };
                nested.end_zone();
                nested.upload_timestamp_start(zone.begin_ns as i64);
                nested.upload_timestamp_end(zone.end_ns as i64);
            }
            span.end_zone();
            span.upload_timestamp_end(outer.end_ns as i64);
        }

        /// The queue's occupancy after a pass.
        pub fn plot(&self, epochs_in_flight: u64, kernarg_bytes: u64, parked: u64) {
            self.client.plot(self.depth, epochs_in_flight as f64);
            self.client.plot(self.kernargs, kernarg_bytes as f64);
            self.client.plot(self.parked, parked as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, begin_ns: u64, end_ns: u64) -> Zone<'_> {
        Zone { name, begin_ns, end_ns }
    }

    #[test]
    fn zones_nest_inside_their_submission_in_increasing_order() {
        let mut timeline = GpuTimeline::default();
        let (outer, inner) = timeline.nest(zone("execute", 100, 200), vec![zone("b", 150, 180), zone("a", 110, 160)]);
        assert_eq!(outer, zone("execute", 100, 200));
        // Sorted by begin, and the overlapping second one starts when the first ends.
        assert_eq!(inner, vec![zone("a", 110, 160), zone("b", 160, 180)]);
    }

    #[test]
    fn a_later_submission_never_goes_back_before_the_last_upload() {
        let mut timeline = GpuTimeline::default();
        timeline.nest(zone("first", 100, 300), Vec::new());
        // Calibration error puts the next begin 20 ns early, and a dispatch past the end.
        let (outer, inner) = timeline.nest(zone("second", 280, 400), vec![zone("k", 290, 450)]);
        assert_eq!(outer, zone("second", 300, 450));
        assert_eq!(inner, vec![zone("k", 300, 450)]);
        let (outer, _) = timeline.nest(zone("third", 10, 20), Vec::new());
        assert_eq!(outer, zone("third", 450, 450), "clamped, never dropped");
    }
}
