//! `cargo test -- --endpoint URL`: audits an embeddings endpoint, one test per clause.
//! Without `--endpoint`, audits the bundled reference server.

fn main() -> std::process::ExitCode {
    embedcheck_cli::main()
}
