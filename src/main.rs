//! `embedcheck`: the installable runner (`cargo install --path .`), taking the same
//! options as `cargo test -- …`.

fn main() -> std::process::ExitCode {
    embedcheck_cli::main()
}
