//! `coflowkit-runtime coordinator|agent`: the runtime's processes
//! ([`coflowkit_runtime::cli::run`], which the Python extension runs too).

fn main() -> std::process::ExitCode {
    let code = coflowkit_runtime::cli::run(std::env::args_os());
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
