//! `aqueduct inspect FILE [--json]`.

use std::path::Path;

use super::CliResult;

pub fn run(file: &Path, json: bool) -> CliResult {
    let bytes = std::fs::read(file).map_err(|error| format!("cannot read {}: {error}", file.display()))?;
    if json {
        let report =
            aqueduct_codeobject::inspect_json(&bytes).map_err(|error| format!("{}: {error}", file.display()))?;
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let report =
            aqueduct_codeobject::inspect_text(&bytes).map_err(|error| format!("{}: {error}", file.display()))?;
        print!("{report}");
    }
    Ok(())
}
