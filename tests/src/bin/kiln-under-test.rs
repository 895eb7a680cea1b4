//! The `kiln` command line, built inside this crate so that its tests can run it as a separate
//! process (to kill it mid-bake) and know its path (`CARGO_BIN_EXE_kiln-under-test`).

fn main() {
    std::process::exit(kiln_bake::cli::run(std::env::args_os()));
}
