//! The `hookpack` command: parse the arguments, run, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    let code = hookpack::cli::main(std::env::args_os());
    std::process::ExitCode::from(code as u8)
}
