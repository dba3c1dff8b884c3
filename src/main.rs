//! The `aqueduct` command-line tool: the aqueduct-cli crate's `main`.

fn main() -> std::process::ExitCode {
    aqueduct_cli::main()
}
