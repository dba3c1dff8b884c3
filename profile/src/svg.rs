//! `aqueduct profile export --format svg`: a self-contained picture of the timeline that opens in
//! any browser, without a trace viewer. Two tracks per queue: host submissions (submit entry →
//! published) and device execution (submissions in the track's upper part, their dispatches below);
//! lines join each signal to the waits it satisfied, as in the Chrome export.
//!
//! Like the Chrome export it reads the file twice (the index, then the events). Its size stays
//! bounded by the picture, not the capture: neighbouring slices thinner than a pixel merge into one
//! block ("N submissions"), and at most `MAX_FLOW_LINES` dependency lines are drawn.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use crate::format::{ProfileReader, Result};
use crate::record::Record;
use crate::timeline::TimelineIndex;

const WIDTH: f64 = 1600.0;
const LABEL_WIDTH: f64 = 150.0;
const RIGHT_MARGIN: f64 = 30.0;
const TOP: f64 = 56.0;
const TRACK_HEIGHT: f64 = 20.0;
const TRACK_GAP: f64 = 3.0;
const QUEUE_GAP: f64 = 12.0;
/// Slices narrower than this (pixels) merge with their thin neighbours.
const THIN_PX: f64 = 1.0;
pub const MAX_FLOW_LINES: usize = 5000;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum TrackSlice {
    Host,
    Device,
    Dispatch,
}

impl TrackSlice {
    fn class(self) -> &'static str {
        match self {
            TrackSlice::Host => "host",
            TrackSlice::Device => "device",
            TrackSlice::Dispatch => "dispatch",
        }
    }
    fn plural(self) -> &'static str {
        match self {
            TrackSlice::Host => "host submissions",
            TrackSlice::Device => "device submissions",
            TrackSlice::Dispatch => "dispatches",
        }
    }
}

/// A run of thin slices being merged, or one slice waiting to be drawn.
struct PendingRun {
    x0: f64,
    x1: f64,
    count: u64,
    title: String,
    fill: Option<String>,
}

struct Picture {
    origin_ns: u64,
    ns_per_px: f64,
    track_of_queue: HashMap<u32, f64>,
    pending: HashMap<(u32, TrackSlice), PendingRun>,
    body: String,
}

impl Picture {
    fn x(&self, ns: u64) -> f64 {
        LABEL_WIDTH + ns.saturating_sub(self.origin_ns) as f64 / self.ns_per_px
    }

    fn track_top(&self, queue: u32, slice: TrackSlice) -> f64 {
        let host_top = self.track_of_queue.get(&queue).copied().unwrap_or(TOP);
        match slice {
            TrackSlice::Host => host_top,
            TrackSlice::Device => host_top + TRACK_HEIGHT + TRACK_GAP,
            TrackSlice::Dispatch => host_top + TRACK_HEIGHT + TRACK_GAP + TRACK_HEIGHT * 0.4,
        }
    }

    fn slice(&mut self, queue: u32, slice: TrackSlice, span: (u64, u64), title: String, fill: Option<String>) {
        let (x0, x1) = (self.x(span.0), self.x(span.1.max(span.0)));
        let thin = x1 - x0 < THIN_PX;
        if let Some(run) = self.pending.get_mut(&(queue, slice)) {
            let run_thin = run.x1 - run.x0 < THIN_PX || run.count > 1;
            if thin && run_thin && x0 >= run.x0 && x0 <= run.x1 + THIN_PX {
                run.x1 = run.x1.max(x1);
                run.count += 1;
                return;
            }
        }
        let run = PendingRun { x0, x1, count: 1, title, fill };
        if let Some(previous) = self.pending.insert((queue, slice), run) {
            self.draw(queue, slice, previous);
        }
    }

    fn draw(&mut self, queue: u32, slice: TrackSlice, run: PendingRun) {
        let top = self.track_top(queue, slice);
        // A device track: submissions in its upper 40%, their dispatches below, so neither hides the
        // other whatever order they are drawn in.
        let height = match slice {
            TrackSlice::Host => TRACK_HEIGHT,
            TrackSlice::Device => TRACK_HEIGHT * 0.4,
            TrackSlice::Dispatch => TRACK_HEIGHT * 0.6,
        };
        let width = (run.x1 - run.x0).max(0.5);
        let title = if run.count > 1 { format!("{} {}", run.count, slice.plural()) } else { run.title };
        let fill = run.fill.map(|fill| format!(" fill=\"{fill}\"")).unwrap_or_default();
        let _ = writeln!(
            self.body,
            "<rect class=\"{}\" x=\"{:.2}\" y=\"{top:.1}\" width=\"{width:.2}\" height=\"{height:.1}\"{fill}><title>{}</title></rect>",
            slice.class(),
            run.x0,
            escape(&title)
        );
    }

    fn flush(&mut self) {
        let mut runs: Vec<((u32, TrackSlice), PendingRun)> = self.pending.drain().collect();
        // In a fixed order: the same bundle always gives the same picture.
        runs.sort_by_key(|((queue, slice), _)| (*queue, slice.class()));
        for ((queue, slice), run) in runs {
            self.draw(queue, slice, run);
        }
    }
}

/// Writes an SVG picture of the bundle read from `input` to `out`. Reads `input` twice.
pub fn export_svg<R: Read + Seek, W: Write>(mut input: R, out: W) -> Result<()> {
    let start = input.stream_position()?;
    let index = TimelineIndex::build(ProfileReader::new(&mut input)?)?;
    input.seek(SeekFrom::Start(start))?;
    let reader = ProfileReader::new(&mut input)?;

    let origin_ns = index.origin_ns.unwrap_or(0);
    let span_ns = index.end_ns.saturating_sub(origin_ns).max(1);
    let plot_width = WIDTH - LABEL_WIDTH - RIGHT_MARGIN;
    let queue_height = 2.0 * TRACK_HEIGHT + TRACK_GAP + QUEUE_GAP;
    let track_of_queue: HashMap<u32, f64> =
        index.queues.iter().enumerate().map(|(row, &queue)| (queue, TOP + row as f64 * queue_height)).collect();
    let height = TOP + index.queues.len() as f64 * queue_height + 40.0;
    let mut picture = Picture {
        origin_ns,
        ns_per_px: span_ns as f64 / plot_width,
        track_of_queue,
        pending: HashMap::new(),
        body: String::new(),
    };

    let mut out = BufWriter::new(out);
    writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    )?;
    writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 6 6\" refX=\"6\" refY=\"3\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L6,3 L0,6 z\" fill=\"#c0392b\"/></marker></defs>"
    )?;
    writeln!(
        out,
        "<style>.host{{fill:#4e79a7}} .device{{fill:#a0cbe8}} .dispatch{{fill:#f28e2b;stroke:white;stroke-width:0.5}} .flow{{stroke:#c0392b;stroke-width:1;opacity:0.7;fill:none}} .grid{{stroke:#ddd}} .label{{fill:#333}}</style>"
    )?;
    writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")?;
    let header = reader.header();
    writeln!(
        out,
        "<text x=\"10\" y=\"18\" font-size=\"13\">{}</text>",
        escape(&format!(
            "aqueduct profile: {} on {}, {} queues, {} from the first event",
            header.device.provider,
            header.device.agents.iter().map(|agent| agent.isa.as_str()).collect::<Vec<_>>().join(", "),
            index.queues.len(),
            format_duration(span_ns as f64),
        ))
    )?;
    write_axis(&mut out, span_ns, plot_width, height)?;
    for &queue in &index.queues {
        let top = picture.track_top(queue, TrackSlice::Host);
        writeln!(out, "<text class=\"label\" x=\"10\" y=\"{:.1}\">queue {queue} host</text>", top + 14.0)?;
        writeln!(
            out,
            "<text class=\"label\" x=\"10\" y=\"{:.1}\">queue {queue} device</text>",
            top + TRACK_HEIGHT + TRACK_GAP + 14.0
        )?;
    }

    let mut flows = String::new();
    let mut flow_lines = 0usize;
    let mut flows_left_out = 0usize;
    for record in reader {
        match record? {
            Record::QueueEvent(event) => {
                let title = format!(
                    "queue {} epoch {}: {}, submit {}",
                    event.queue,
                    event.epoch,
                    event.operation.name(),
                    format_duration(event.published_ns.saturating_sub(event.submit_entry_ns) as f64)
                );
                picture.slice(event.queue, TrackSlice::Host, (event.submit_entry_ns, event.published_ns), title, None);
                for wait in &event.waits {
                    let Some(producer) = index.producer_of(wait) else { continue };
                    let Some(endpoints) = index.flow_endpoints(producer, (event.queue, event.epoch)) else { continue };
                    if flow_lines == MAX_FLOW_LINES {
                        flows_left_out += 1;
                        continue;
                    }
                    flow_lines += 1;
                    let track = if endpoints.on_device { TrackSlice::Device } else { TrackSlice::Host };
                    let y = |queue| picture.track_top(queue, track) + TRACK_HEIGHT / 2.0;
                    let _ = writeln!(
                        flows,
                        "<line class=\"flow\" x1=\"{:.2}\" y1=\"{:.1}\" x2=\"{:.2}\" y2=\"{:.1}\" marker-end=\"url(#arrow)\"><title>semaphore {} ≥ {}</title></line>",
                        picture.x(endpoints.from_ns),
                        y(producer.0),
                        picture.x(endpoints.to_ns),
                        y(event.queue),
                        wait.semaphore,
                        wait.value
                    );
                }
            }
            Record::DeviceQueueEvent(event) => {
                let operation = index
                    .operations
                    .get(&(event.queue, event.epoch))
                    .map_or("submission", |operation| operation.name());
                let title = format!(
                    "queue {} epoch {}: {}, device {}",
                    event.queue,
                    event.epoch,
                    operation,
                    format_duration(event.end_ns.saturating_sub(event.begin_ns) as f64)
                );
                picture.slice(event.queue, TrackSlice::Device, (event.begin_ns, event.end_ns), title, None);
            }
            Record::Dispatch(event) => {
                let title = format!(
                    "{} (queue {} epoch {}), {}",
                    event.kernel,
                    event.queue,
                    event.epoch,
                    format_duration(event.end_ns.saturating_sub(event.begin_ns) as f64)
                );
                let fill = kernel_colour(&event.kernel);
                picture.slice(event.queue, TrackSlice::Dispatch, (event.begin_ns, event.end_ns), title, Some(fill));
            }
            Record::Counter(_) | Record::Executable(_) | Record::Dropped(_) => {}
        }
        if picture.body.len() > 64 << 10 {
            out.write_all(picture.body.as_bytes())?;
            picture.body.clear();
        }
    }
    picture.flush();
    out.write_all(picture.body.as_bytes())?;
    out.write_all(flows.as_bytes())?;

    let mut notes = Vec::new();
    let dropped: u64 = index.dropped.values().sum();
    if dropped > 0 {
        notes.push(format!("{dropped} records were dropped during capture"));
    }
    if flows_left_out > 0 {
        notes.push(format!("{flows_left_out} dependency lines left out (at most {MAX_FLOW_LINES} are drawn)"));
    }
    if !notes.is_empty() {
        writeln!(
            out,
            "<text class=\"label\" x=\"10\" y=\"{:.1}\">{}</text>",
            height - 10.0,
            escape(&notes.join("; "))
        )?;
    }
    writeln!(out, "</svg>")?;
    out.flush()?;
    Ok(())
}

fn write_axis<W: Write>(out: &mut W, span_ns: u64, plot_width: f64, height: f64) -> std::io::Result<()> {
    let step = tick_step(span_ns as f64 / 10.0);
    let mut tick = 0.0;
    while tick <= span_ns as f64 {
        let x = LABEL_WIDTH + tick / span_ns as f64 * plot_width;
        writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.2}\" y1=\"{:.1}\" x2=\"{x:.2}\" y2=\"{:.1}\"/>",
            TOP - 14.0,
            height - 30.0
        )?;
        writeln!(
            out,
            "<text class=\"label\" x=\"{x:.2}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP - 18.0,
            format_duration(tick)
        )?;
        tick += step;
    }
    Ok(())
}

/// The 1-2-5 step at or above `rough` (ns).
fn tick_step(rough: f64) -> f64 {
    let mut decade = 1.0;
    while decade * 10.0 <= rough {
        decade *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|factor| factor * decade).find(|step| *step >= rough).unwrap_or(decade * 10.0)
}

fn format_duration(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.3} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.3} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.2} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

/// A stable colour per kernel, so one kernel reads the same across tracks.
fn kernel_colour(kernel: &str) -> String {
    const PALETTE: [&str; 8] = ["#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
    // FNV-1a: small, and stable across runs (std's hasher is not guaranteed to be).
    let hash = kernel
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3));
    PALETTE[(hash % PALETTE.len() as u64) as usize].to_string()
}

fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            character => escaped.push(character),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_follow_one_two_five() {
        assert_eq!(tick_step(630.0), 1000.0);
        assert_eq!(tick_step(150.0), 200.0);
        assert_eq!(tick_step(4.0), 5.0);
        assert_eq!(tick_step(1.0), 1.0);
        assert_eq!(format_duration(1500.0), "1.50 µs");
        assert_eq!(format_duration(2.5e6), "2.500 ms");
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
    }
}
