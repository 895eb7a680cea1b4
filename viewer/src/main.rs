//! `kiln-view`: see the library crate (`kiln_view`) for the parts and `--help` for the options.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Start-up milestones (`--stats`) count from here.
    let launched = std::time::Instant::now();
    let args = kiln_view::cli::Args::parse();
    match kiln_view::cli::run(args, launched) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln-view: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
