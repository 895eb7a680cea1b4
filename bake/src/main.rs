//! `kiln`: the headless world baker and its pack tools. See `kiln --help`.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(kiln_bake::cli::run(std::env::args_os()) as u8)
}
