//! One file per subcommand.

pub mod bench;
pub mod demo;
pub mod info;
pub mod inspect;
pub mod output;
pub mod profile;
pub mod replay;
pub mod stress;

pub type CliResult = Result<(), Box<dyn std::error::Error>>;
