//! `aqueduct info`: the provider and why it was chosen, then its agents and pools in rocminfo's
//! shape (`crate::info`), or with `--json` the stable report (`crate::info::InfoReport`).

use aqueduct_hsa::Hsa;
use aqueduct_soft_hsa::SoftConfig;

use super::CliResult;

/// The HSA provider `info` opens.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Provider {
    /// ROCr's GPU agents if it has any, else the soft runtime.
    Auto,
    /// The embedded soft HSA runtime.
    Soft,
    /// ROCr (libhsa-runtime64), or an error saying why it cannot be used.
    Rocr,
}

pub fn run(provider: Provider, json: bool) -> CliResult {
    let (hsa, reason) = match provider {
        Provider::Auto => {
            let selection = aqueduct_soft_hsa::auto(SoftConfig::default())?;
            (selection.hsa, selection.reason)
        }
        Provider::Soft => {
            (aqueduct_soft_hsa::open(SoftConfig::default())?, "requested with --provider soft".to_string())
        }
        Provider::Rocr => (
            Hsa::rocr().map_err(|error| aqueduct_hsa::rocr_unusable_reason(&error))?,
            "requested with --provider rocr".to_string(),
        ),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&crate::info::info_report(&hsa, &reason)?)?);
        return Ok(());
    }
    println!("Provider: {}", hsa.kind().name());
    if let Some(path) = hsa.library_path() {
        println!("Library:  {path}");
    }
    println!("Reason:   {reason}");
    println!();
    print!("{}", crate::info::rocminfo_report(&hsa)?);
    Ok(())
}
