//! `embedcheck-reference-server`: runs the reference server standalone until Ctrl-C.
//!
//! ```text
//! $ embedcheck-reference-server --port 0 --overlength reject
//! listening on http://127.0.0.1:41234/v1
//! ```

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use reference_server::{Config, OverlengthPolicy, spawn};
use thiserror::Error;

/// A strictly conforming, deterministic OpenAI-compatible /v1/embeddings server that
/// answers Cohere/Jina-style /v1/rerank too.
#[derive(Debug, Parser)]
#[command(name = "embedcheck-reference-server", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// The model id served (any other `model` gets 404).
    #[arg(long, default_value_t = Config::default().model_id)]
    model: String,
    /// Native length of the vectors.
    #[arg(long, default_value_t = Config::default().native_dimensions, value_parser = positive)]
    dimensions: usize,
    /// Token limit per input.
    #[arg(long, default_value_t = Config::default().max_input_tokens, value_parser = positive)]
    max_input_tokens: usize,
    /// Reject `dimensions` below the native size.
    #[arg(long)]
    no_matryoshka: bool,
    /// What to do with over-length inputs: reject (400) or truncate.
    #[arg(long, default_value_t = Config::default().overlength)]
    overlength: OverlengthPolicy,
    /// Maximum number of inputs per request.
    #[arg(long, default_value_t = Config::default().max_batch, value_parser = positive)]
    max_batch: usize,
    /// Maximum number of documents per rerank request.
    #[arg(long, default_value_t = Config::default().max_rerank_documents, value_parser = positive)]
    max_rerank_documents: usize,
    /// Require `Authorization: Bearer <key>`, the key read from this environment variable.
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
}

/// Why the binary stopped; each kind has its own exit code.
#[derive(Debug, Error)]
enum CliError {
    /// Exit 2: the command line cannot be served.
    #[error("{0}")]
    Usage(String),
    /// Exit 1: binding or serving failed.
    #[error("failed to serve: {0}")]
    Serve(#[from] std::io::Error),
}

impl CliError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::Usage(_) => ExitCode::from(2),
            Self::Serve(_) => ExitCode::FAILURE,
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) => return report(&CliError::Usage(clap_message(&e))),
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(&e),
    }
}

async fn run(args: Args) -> Result<(), CliError> {
    let addr = SocketAddr::new(args.host, args.port);
    let server = spawn(config(args)?, addr).await?;
    println!("listening on {}", server.base_url());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await?;
    Ok(())
}

/// The server configuration the options describe; the API key is read, never printed.
fn config(args: Args) -> Result<Config, CliError> {
    let api_key = args.api_key_env.map(|name| read_key(&name)).transpose()?;
    Ok(Config {
        model_id: args.model,
        native_dimensions: args.dimensions,
        max_input_tokens: args.max_input_tokens,
        matryoshka: !args.no_matryoshka,
        overlength: args.overlength,
        api_key,
        max_batch: args.max_batch,
        max_rerank_documents: args.max_rerank_documents,
        ..Config::default()
    })
}

fn read_key(name: &str) -> Result<String, CliError> {
    match std::env::var(name) {
        Ok(key) if !key.is_empty() => Ok(key),
        Ok(_) => Err(CliError::Usage(format!(
            "error: environment variable {name} is empty"
        ))),
        Err(_) => Err(CliError::Usage(format!(
            "environment variable {name} is not set or not unicode"
        ))),
    }
}

/// Zero would make every request fail, so it is refused at start-up instead.
fn positive(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// clap's errors span several lines (usage, hints) and carry their own `error: ` prefix;
/// the binary promises one line, prefixed once by [`report`].
fn clap_message(error: &clap::Error) -> String {
    let rendered = error.to_string();
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

fn report(error: &CliError) -> ExitCode {
    eprintln!("error: {error}");
    error.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(
            std::iter::once("embedcheck-reference-server").chain(args.iter().copied()),
        )
    }

    #[test]
    fn defaults_match_the_library_config() {
        let args = parse(&[]).expect("no options are needed");
        assert_eq!(
            SocketAddr::new(args.host, args.port).to_string(),
            "127.0.0.1:8000"
        );
        let config = config(args).expect("valid");
        let default = Config::default();
        assert_eq!(format!("{config:?}"), format!("{default:?}"));
    }

    #[test]
    fn options_map_onto_the_config() {
        let args = parse(&[
            "--model",
            "m",
            "--dimensions",
            "64",
            "--max-input-tokens",
            "8",
            "--no-matryoshka",
            "--overlength",
            "reject",
            "--max-batch",
            "3",
            "--max-rerank-documents",
            "5",
        ])
        .expect("valid options");
        let config = config(args).expect("valid");
        assert_eq!(config.model_id, "m");
        assert_eq!(config.native_dimensions, 64);
        assert_eq!(config.max_input_tokens, 8);
        assert!(!config.matryoshka);
        assert_eq!(config.overlength, OverlengthPolicy::Reject);
        assert_eq!(config.max_batch, 3);
        assert_eq!(config.max_rerank_documents, 5);
    }

    #[test]
    fn bad_options_are_usage_errors_on_one_line() {
        for bad in [
            &["--overlength", "drop"][..],
            &["--dimensions", "0"],
            &["--max-rerank-documents", "0"],
            &["--port", "x"],
            &["--bogus"],
        ] {
            let message = clap_message(&parse(bad).expect_err("invalid"));
            assert!(
                !message.is_empty() && !message.contains('\n'),
                "{message:?}"
            );
            assert!(!message.starts_with("error:"), "{message}");
            assert_eq!(CliError::Usage(message).exit_code(), ExitCode::from(2));
        }
    }

    #[test]
    fn a_missing_key_variable_is_a_usage_error() {
        let error = read_key("EMBEDCHECK_TEST_SURELY_UNSET_VARIABLE").expect_err("unset");
        assert!(matches!(error, CliError::Usage(_)));
    }
}
