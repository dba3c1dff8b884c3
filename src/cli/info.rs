//! `aqueduct info`: the provider and why it was chosen, then its agents and pools in rocminfo's
//! shape (`aqueduct::info`), or with `--json` the stable report (`aqueduct::info::InfoReport`).

use aqueduct_hsa::Hsa;
use aqueduct_hsa::soft::SoftConfig;

use super::CliResult;

pub fn run(provider: &str, json: bool) -> CliResult {
    let (hsa, reason) = match provider {
        "auto" => {
            let selection = Hsa::auto(SoftConfig::default())?;
            (selection.hsa, selection.reason)
        }
        "soft" => (Hsa::soft(SoftConfig::default())?, "requested with --provider soft".to_string()),
        "rocr" => (Hsa::rocr()?, "requested with --provider rocr".to_string()),
        other => return Err(format!("unknown provider `{other}` (expected auto, soft or rocr)").into()),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&aqueduct::info::info_report(&hsa, &reason)?)?);
        return Ok(());
    }
    println!("Provider: {}", hsa.kind().name());
    if let Some(path) = hsa.library_path() {
        println!("Library:  {path}");
    }
    println!("Reason:   {reason}");
    println!();
    print!("{}", aqueduct::info::rocminfo_report(&hsa)?);
    Ok(())
}
