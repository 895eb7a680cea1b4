//! `kiln-view`: see the library crate (`kiln_view`) for the parts and `--help` for the options.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = kiln_view::cli::Args::parse();
    match kiln_view::cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln-view: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
