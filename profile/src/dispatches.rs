//! `aqueduct profile dispatches`: every dispatch record as one row, streamed as it is read.

use std::io::{self, Read, Write};

use serde::Serialize;

use crate::format::{CaptureFileError, ProfileReader, Result};
use crate::record::{DispatchEvent, Record};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispatchFormat {
    /// One JSON object per line.
    Jsonl,
    /// RFC 4180 CSV with a header line.
    Csv,
}

/// One dispatch, flat, as both formats print it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DispatchRow<'a> {
    pub queue: u32,
    pub epoch: u64,
    pub kernel: &'a str,
    pub executable: u64,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub command_buffer: Option<u64>,
    pub command_index: Option<u32>,
    pub begin_ns: u64,
    pub end_ns: u64,
    pub duration_ns: u64,
}

impl<'a> DispatchRow<'a> {
    pub fn of(event: &'a DispatchEvent) -> Self {
        DispatchRow {
            queue: event.queue,
            epoch: event.epoch,
            kernel: &event.kernel,
            executable: event.executable,
            grid: event.grid,
            workgroup: event.workgroup,
            command_buffer: event.command.map(|command| command.command_buffer),
            command_index: event.command.map(|command| command.command_index),
            begin_ns: event.begin_ns,
            end_ns: event.end_ns,
            duration_ns: event.end_ns.saturating_sub(event.begin_ns),
        }
    }
}

const CSV_HEADER: &str = "queue,epoch,kernel,executable,grid_x,grid_y,grid_z,workgroup_x,workgroup_y,workgroup_z,\
command_buffer,command_index,begin_ns,end_ns,duration_ns";

/// Writes every dispatch of `reader` to `out`; returns how many.
pub fn write_dispatches<R: Read, W: Write>(
    reader: ProfileReader<R>,
    format: DispatchFormat,
    mut out: W,
) -> Result<u64> {
    if format == DispatchFormat::Csv {
        writeln!(out, "{CSV_HEADER}")?;
    }
    let mut written = 0u64;
    for record in reader {
        let Record::Dispatch(event) = record? else { continue };
        let row = DispatchRow::of(&event);
        match format {
            DispatchFormat::Jsonl => {
                serde_json::to_writer(&mut out, &row).map_err(|error| CaptureFileError::Io(io::Error::other(error)))?;
                writeln!(out)?;
            }
            DispatchFormat::Csv => write_csv_row(&mut out, &row)?,
        }
        written += 1;
    }
    out.flush()?;
    Ok(written)
}

fn write_csv_row<W: Write>(out: &mut W, row: &DispatchRow<'_>) -> io::Result<()> {
    let optional = |value: Option<String>| value.unwrap_or_default();
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        row.queue,
        row.epoch,
        csv_field(row.kernel),
        row.executable,
        row.grid[0],
        row.grid[1],
        row.grid[2],
        row.workgroup[0],
        row.workgroup[1],
        row.workgroup[2],
        optional(row.command_buffer.map(|value| value.to_string())),
        optional(row.command_index.map(|value| value.to_string())),
        row.begin_ns,
        row.end_ns,
        row.duration_ns
    )
}

/// Quotes a field that holds a comma, a quote or a line break (demangled C++ symbols can).
fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_fields_that_need_it() {
        assert_eq!(csv_field("scale"), "scale");
        assert_eq!(csv_field("f(int, float)"), "\"f(int, float)\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
