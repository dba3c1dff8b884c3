//! What every subcommand prints for people: tables (comfy-table), durations and sizes in the
//! unit that reads best, progress bars on stderr, and the line that says what a command wrote.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use comfy_table::{CellAlignment, LineStyle, Table, TableStyle};

/// Columns apart, the header underlined: quiet enough for a terminal, still readable in a log.
const STYLE: TableStyle = TableStyle::new().header_separator(LineStyle::none().fill('─').junction(' '));

/// A table with `header`; the first `left` columns align left (names), the rest right (numbers).
pub fn table(header: &[&str], left: usize) -> Table {
    let mut table = Table::new();
    table.load_style(STYLE).set_header(header.iter().copied());
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_cell_alignment(if index < left { CellAlignment::Left } else { CellAlignment::Right });
        // Two spaces between columns, none before the first or after the last.
        column.set_padding(if index == 0 { (0, 0) } else { (2, 0) });
    }
    table
}

/// A duration given in nanoseconds, with three significant digits in ns, µs, ms or s
/// (`29155560` is `29.2 ms`).
pub fn duration_ns(nanoseconds: f64) -> String {
    let magnitude = nanoseconds.abs();
    let (value, unit) = if magnitude < 1e3 {
        (nanoseconds, "ns")
    } else if magnitude < 1e6 {
        (nanoseconds / 1e3, "µs")
    } else if magnitude < 1e9 {
        (nanoseconds / 1e6, "ms")
    } else {
        (nanoseconds / 1e9, "s")
    };
    let decimals = match value.abs() {
        value if value < 10.0 && unit != "ns" => 2,
        value if value < 100.0 && unit != "ns" => 1,
        _ => 0,
    };
    format!("{value:.decimals$} {unit}")
}

/// [`duration_ns`] of a `Duration`.
pub fn duration(duration: Duration) -> String {
    duration_ns(duration.as_secs_f64() * 1e9)
}

/// A byte count in B, KiB, MiB or GiB.
pub fn bytes(count: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if count < 1024 {
        return format!("{count} B");
    }
    let mut value = count as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A progress bar on stderr with a time estimate, drawn only when stderr is a terminal and the
/// command's stdout is not a machine-readable report (`quiet`).
pub fn progress_bar(length: u64, quiet: bool) -> indicatif::ProgressBar {
    let target = if quiet || !std::io::stderr().is_terminal() {
        indicatif::ProgressDrawTarget::hidden()
    } else {
        indicatif::ProgressDrawTarget::stderr()
    };
    let bar = indicatif::ProgressBar::with_draw_target(Some(length), target);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} [{elapsed} elapsed, ~{eta} left] {msg}")
            .expect("the template is valid"),
    );
    bar
}

/// `aqueduct: wrote WHAT to PATH (SIZE)`, on stderr so stdout stays the data.
pub fn wrote(what: &str, path: &Path) {
    let size = std::fs::metadata(path).map(|metadata| bytes(metadata.len())).unwrap_or_else(|_| "size unknown".into());
    eprintln!("aqueduct: wrote {what} to {} ({size})", path.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_their_own_unit() {
        assert_eq!(duration_ns(29_155_560.0), "29.2 ms");
        assert_eq!(duration_ns(950.0), "950 ns");
        assert_eq!(duration_ns(1_500.0), "1.50 µs");
        assert_eq!(duration_ns(123_456.0), "123 µs");
        assert_eq!(duration_ns(2_500_000_000.0), "2.50 s");
        assert_eq!(duration(Duration::from_millis(5)), "5.00 ms");
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(bytes(12), "12 B");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }

    #[test]
    fn tables_keep_alignment_past_any_width() {
        let mut table = table(&["name", "median (ns/op)"], 1);
        table.add_row(["a/very/long/shape/name/well/past/thirty/six/characters", "1.5"]);
        table.add_row(["short", "1234.5"]);
        let lines: Vec<String> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{lines:#?}");
        let widths: Vec<usize> = lines.iter().map(|line| line.trim_end().chars().count()).collect();
        assert_eq!(widths[2], widths[3], "numbers right-aligned to one edge: {lines:#?}");
    }

    #[test]
    fn quiet_bars_are_hidden() {
        assert!(progress_bar(3, true).is_hidden());
    }
}
