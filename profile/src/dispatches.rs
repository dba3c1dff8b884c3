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

/// A row as a CSV record: the arrays spread over one column per axis, an absent command as
/// empty fields.
#[derive(Serialize)]
struct CsvRow<'a> {
    queue: u32,
    epoch: u64,
    kernel: &'a str,
    executable: u64,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    workgroup_x: u32,
    workgroup_y: u32,
    workgroup_z: u32,
    command_buffer: Option<u64>,
    command_index: Option<u32>,
    begin_ns: u64,
    end_ns: u64,
    duration_ns: u64,
}

impl<'a> From<&DispatchRow<'a>> for CsvRow<'a> {
    fn from(row: &DispatchRow<'a>) -> Self {
        CsvRow {
            queue: row.queue,
            epoch: row.epoch,
            kernel: row.kernel,
            executable: row.executable,
            grid_x: row.grid[0],
            grid_y: row.grid[1],
            grid_z: row.grid[2],
            workgroup_x: row.workgroup[0],
            workgroup_y: row.workgroup[1],
            workgroup_z: row.workgroup[2],
            command_buffer: row.command_buffer,
            command_index: row.command_index,
            begin_ns: row.begin_ns,
            end_ns: row.end_ns,
            duration_ns: row.duration_ns,
        }
    }
}

/// Writes every dispatch of `reader` to `out`; returns how many.
pub fn write_dispatches<R: Read, W: Write>(
    reader: ProfileReader<R>,
    format: DispatchFormat,
    mut out: W,
) -> Result<u64> {
    let dispatches = reader.filter_map(|record| match record {
        Ok(Record::Dispatch(event)) => Some(Ok(event)),
        Ok(_) => None,
        Err(error) => Some(Err(error)),
    });
    let mut written = 0u64;
    match format {
        DispatchFormat::Jsonl => {
            for event in dispatches {
                serde_json::to_writer(&mut out, &DispatchRow::of(&event?)).map_err(io::Error::other)?;
                writeln!(out)?;
                written += 1;
            }
            out.flush()?;
        }
        DispatchFormat::Csv => {
            let csv_error = |error: csv::Error| CaptureFileError::Io(io::Error::other(error));
            // The csv writer quotes what needs it (demangled C++ symbols hold commas) and writes
            // the header from the first record's field names.
            let mut writer = csv::Writer::from_writer(out);
            for event in dispatches {
                writer.serialize(CsvRow::from(&DispatchRow::of(&event?))).map_err(csv_error)?;
                written += 1;
            }
            if written == 0 {
                // No record wrote the header: a listing with no rows still names its columns.
                writer.write_record(CSV_COLUMNS).map_err(csv_error)?;
            }
            writer.flush()?;
        }
    }
    Ok(written)
}

/// The CSV header, as `CsvRow`'s field names write it.
const CSV_COLUMNS: [&str; 15] = [
    "queue",
    "epoch",
    "kernel",
    "executable",
    "grid_x",
    "grid_y",
    "grid_z",
    "workgroup_x",
    "workgroup_y",
    "workgroup_z",
    "command_buffer",
    "command_index",
    "begin_ns",
    "end_ns",
    "duration_ns",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_bundle;

    #[test]
    fn csv_quotes_only_fields_that_need_it() {
        let mut writer = crate::ProfileWriter::new(Vec::new(), &crate::sample::sample_header()).unwrap();
        for mut record in crate::sample::sample_records() {
            if let Record::Dispatch(event) = &mut record
                && event.kernel == "add"
            {
                event.kernel = "add<int, \"fast\">(int*)".into();
            }
            writer.append(&record).unwrap();
        }
        let bundle = writer.finish().unwrap();
        let mut out = Vec::new();
        write_dispatches(ProfileReader::new(bundle.as_slice()).unwrap(), DispatchFormat::Csv, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("0,1,scale,7,"), "{text}");
        assert!(lines[2].contains(",\"add<int, \"\"fast\"\">(int*)\",7,"), "{text}");
    }

    #[test]
    fn the_header_names_every_column_once() {
        let mut out = Vec::new();
        write_dispatches(ProfileReader::new(sample_bundle().as_slice()).unwrap(), DispatchFormat::Csv, &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().next(), Some(CSV_COLUMNS.join(",").as_str()));
    }
}
