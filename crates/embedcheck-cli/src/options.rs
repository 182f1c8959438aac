//! embedcheck's own options, given after `--` (each also from an `EMBEDCHECK_*`
//! environment variable).

use clap::Parser;
use embedcheck_core::catalogue::ContractPin;
use embedcheck_core::contracts::ContractOptions;
use embedcheck_core::session::DEFAULT_CASES;
use std::path::PathBuf;

/// Audits an OpenAI-compatible /v1/embeddings endpoint against the embedcheck contract.
///
/// Without --endpoint, audits the bundled reference server on 127.0.0.1.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "embedcheck",
    version,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Options {
    /// Endpoint to audit: a base URL (http://127.0.0.1:8000/v1) or the full .../v1/embeddings.
    /// Given more than once (each optionally LABEL=URL), a matrix of servers side by side.
    #[arg(long, env = "EMBEDCHECK_ENDPOINT", value_name = "[LABEL=]URL")]
    pub endpoint: Vec<String>,

    /// A matrix of servers from a TOML file: [[server]] entries with label, endpoint and
    /// optionally model, api_key_env, matryoshka, overlength, max_input_tokens,
    /// query_instruction, expectations, reference, rerank_model, rerank_reference, listwise,
    /// speech_model, speech_reference.
    #[arg(long, env = "EMBEDCHECK_SERVERS", value_name = "FILE", conflicts_with_all = ["endpoint", "baseline"])]
    pub servers: Option<PathBuf>,

    /// In a matrix, how many servers are audited at once.
    #[arg(long, env = "EMBEDCHECK_PARALLEL", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub parallel: u64,

    /// In a matrix, a note kept in matrix.json and shown atop matrix.md and matrix.html
    /// (versions, model, date, the command that produced it).
    #[arg(long, env = "EMBEDCHECK_MATRIX_NOTE", value_name = "TEXT")]
    pub matrix_note: Option<String>,

    /// Model to request (default: the first id from GET /v1/models).
    #[arg(long, env = "EMBEDCHECK_MODEL", value_name = "ID")]
    pub model: Option<String>,

    /// Name of the environment variable holding the API key, sent as a Bearer token
    /// (or in --api-key-header). No key is ever read otherwise.
    #[arg(long, env = "EMBEDCHECK_API_KEY_ENV", value_name = "NAME")]
    pub api_key_env: Option<String>,

    /// Send the key in this header instead of `Authorization: Bearer` (Azure OpenAI: api-key).
    #[arg(long, env = "EMBEDCHECK_API_KEY_HEADER", value_name = "NAME")]
    pub api_key_header: Option<String>,

    /// A header sent with every request, shown in reports as given (repeatable):
    /// --header 'HTTP-Referer: https://example.com'.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    /// A header whose value is a secret, read from an environment variable and never
    /// printed (repeatable): --header-env x-portkey-api-key=PORTKEY_KEY.
    #[arg(long = "header-env", value_name = "NAME=VAR")]
    pub header_env: Vec<String>,

    /// Address a hosted API as its documentation says: the header carrying the key,
    /// whether `model` is sent, its field names, its limits off this machine; deviations it
    /// documents show as `fail (documented)`. A shipped name (openai, azure, azure-v1,
    /// gemini-openai, mistral, voyage, jina, cohere-compat, together, fireworks,
    /// deepinfra, openrouter, nebius) or a profile FILE.toml.
    #[arg(long, env = "EMBEDCHECK_VENDOR", value_name = "NAME|FILE")]
    pub vendor: Option<String>,

    /// Send every request through this proxy (http:// or https://). Proxies from the
    /// environment (HTTPS_PROXY, ALL_PROXY) are never used, so a key only travels
    /// through a proxy named here.
    #[arg(long, env = "EMBEDCHECK_PROXY", value_name = "URL")]
    pub proxy: Option<String>,

    /// Trust the CA certificates in this PEM file beside the platform's store (a
    /// server behind a company's private CA).
    #[arg(long, env = "EMBEDCHECK_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// Name of this server in reports (default: "reference" or the endpoint's host and port).
    #[arg(long, env = "EMBEDCHECK_LABEL", value_name = "NAME")]
    pub label: Option<String>,

    /// The shortest deadline of a request, in seconds; a request carrying more work
    /// than the server has shown it does in that time (a large batch on a slow
    /// server) waits as long as the server's pace predicts, twice over, up to 600 s.
    #[arg(long, env = "EMBEDCHECK_TIMEOUT", value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,

    /// Most requests the whole run may send; when spent, remaining clauses end inconclusive.
    #[arg(long, env = "EMBEDCHECK_MAX_REQUESTS", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_requests: u64,

    /// Most tokens the whole run may spend (by the server's usage counts).
    #[arg(long, env = "EMBEDCHECK_MAX_TOKENS", value_name = "N", default_value_t = 500_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: u64,

    /// Most megabytes of files (audio clips) the whole run uploads.
    #[arg(long, env = "EMBEDCHECK_MAX_UPLOAD_MB", value_name = "MB", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_upload_mb: u64,

    /// Most requests per second the run sends (a hosted API's rate limit); default: as
    /// fast as answers come, one at a time.
    #[arg(long, env = "EMBEDCHECK_RATE", value_name = "N", value_parser = positive)]
    pub rate: Option<f64>,

    /// Price of a million tokens in dollars: the run's cost is printed before
    /// anything is sent, and its spend after.
    #[arg(long, env = "EMBEDCHECK_PRICE_PER_MTOK", value_name = "USD", value_parser = positive)]
    pub price_per_mtok: Option<f64>,

    /// Most dollars the run may spend (needs --price-per-mtok): lowers the token budget
    /// so no request is sent that could take the spend past it.
    #[arg(long, env = "EMBEDCHECK_MAX_COST", value_name = "USD", value_parser = positive,
          requires = "price_per_mtok")]
    pub max_cost: Option<f64>,

    /// Print each clause's first request as curl (secrets as $KEY) and the run's budget,
    /// and send nothing.
    #[arg(long, env = "EMBEDCHECK_DRY_RUN")]
    pub dry_run: bool,

    /// Longest total wait for 429 answers (per Retry-After) over the run; then 429s end probes inconclusive.
    #[arg(
        long,
        env = "EMBEDCHECK_MAX_RETRY_WAIT",
        value_name = "SECS",
        default_value_t = 60
    )]
    pub max_retry_wait: u64,

    /// Each contract's own options (embeddings' --matryoshka, rerank's --rerank-model, …),
    /// declared by the contract.
    #[command(flatten)]
    pub contracts: ContractOptions,

    /// Generated cases per property clause; more find rarer failures and cost more requests.
    #[arg(long, env = "EMBEDCHECK_CASES", value_name = "N", default_value_t = DEFAULT_CASES,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub cases: u32,

    /// Where reports go (default: target/embedcheck/<label>/).
    #[arg(long, env = "EMBEDCHECK_REPORT_DIR", value_name = "DIR")]
    pub report_dir: Option<PathBuf>,

    /// Seed of generated inputs; a run with the same seed sends the same requests
    /// (printed at the start of every run).
    #[arg(long, env = "EMBEDCHECK_SEED", value_name = "N")]
    pub seed: Option<u64>,

    /// SHOULD failures fail the run too.
    #[arg(long, env = "EMBEDCHECK_STRICT")]
    pub strict: bool,

    /// Also send probes that may take a server down (e.g. token ids in no vocabulary).
    /// Use only on a server you may crash.
    #[arg(long, env = "EMBEDCHECK_AGGRESSIVE")]
    pub aggressive: bool,

    /// Record every probe's exchange, normalised, under snapshots/<label>/ and show what
    /// changed since the accepted snapshots (review with `cargo insta review`). Uses
    /// seed 0 unless --seed is given. Not with --baseline.
    #[arg(long, env = "EMBEDCHECK_SNAPSHOT", conflicts_with = "baseline")]
    pub snapshot: bool,

    /// Known-failures file (default: expectations/<label>.toml when it exists).
    #[arg(long, env = "EMBEDCHECK_EXPECTATIONS", value_name = "FILE")]
    pub expectations: Option<PathBuf>,

    /// Score only the clauses of this contract version (e.g. 1.0, or rerank=1.0 for the
    /// rerank contract; repeatable): clauses added or changed later still run and are
    /// reported as not scored, so a server's CI stays green when the suite learns a new
    /// clause. Default: this build's contracts.
    #[arg(
        long,
        env = "EMBEDCHECK_CONTRACT",
        value_name = "[rerank=]VERSION",
        value_delimiter = ','
    )]
    pub contract: Vec<ContractPin>,

    /// A known failure that now passes does not fail the run (by default it does, until
    /// the known-failures file is updated).
    #[arg(long, env = "EMBEDCHECK_ALLOW_FIXED")]
    pub allow_fixed: bool,

    /// Migration audit: --baseline URL and how to compare it with --endpoint.
    #[command(flatten)]
    pub migration: crate::migration_options::MigrationOptions,

    /// Print this help.
    #[arg(long, short = 'h')]
    pub help: bool,
}

/// A positive, finite number.
fn positive(word: &str) -> Result<f64, String> {
    match word.parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n),
        _ => Err(format!("expected a positive number, got {word:?}")),
    }
}

impl Options {
    /// The label reports use.
    pub fn label(&self, target_label: Option<String>) -> String {
        self.label
            .clone()
            .or(target_label)
            .unwrap_or_else(|| "reference".to_owned())
    }

    /// The manual's reference of these options (`docs/manual/src/options.md`): one
    /// table row per option, built from the definitions the command parses, so the
    /// manual cannot name an option, a variable or a default the command does not have
    /// (a test holds the committed page to it).
    pub fn reference() -> String {
        use clap::CommandFactory;
        let mut page = String::from(
            "# Options\n\n<!-- Built from the command's own definitions: \
             `EMBEDCHECK_RENDER_PUBLISHED=1 cargo test -p embedcheck-cli options_reference` \
             writes it again. -->\n\n\
             Given after `--` (or to the `embedcheck` command); each can also come from the \
             environment variable shown.\n\n\
             | option | env | default | meaning |\n|---|---|---|---|\n",
        );
        for arg in Options::command().get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            let value = match arg.get_action().takes_values() {
                true => arg
                    .get_value_names()
                    .map(|names| format!(" {}", names.join(" ")))
                    .unwrap_or_default(),
                false => String::new(),
            };
            let env = arg
                .get_env()
                .map_or(String::new(), |e| format!("`{}`", e.to_string_lossy()));
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|d| format!("`{}`", d.to_string_lossy()))
                .collect();
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let cell = |text: &str| {
                text.replace('\n', " ")
                    .replace('|', "\\|")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            };
            page.push_str(&format!(
                "| `--{long}{}` | {env} | {} | {} |\n",
                cell(&value),
                defaults.join(", "),
                cell(&help)
            ));
        }
        page.push_str(
            "\nlibtest's own arguments keep working: a filter by clause ID or family, `--exact`, \
             `--skip FILTER`, `--list`, `--nocapture`.\n",
        );
        page
    }

    /// The help text: our options, then how libtest's own arguments still work.
    pub fn help_text() -> String {
        use clap::CommandFactory;
        let ours = Options::command().render_help().to_string();
        format!(
            "{ours}\n`embedcheck diff OLD NEW` (or `cargo test -- diff OLD NEW`) compares two runs' \
             report.json: the verdicts that changed and what is behind each.\n\n\
             Libtest arguments work as usual: a filter by clause ID or family \
             (e.g. `dimensions`, `RESP-003`), --exact, --skip FILTER, --list, --nocapture.\n\n\
             Exit status: 0 no failing clause; 101 a clause failed (MUST, or any with --strict; \
             in a matrix, on any server), or a known failure passes (update the file or --allow-fixed); \
             2 bad options; 3 an endpoint could not be audited; 4 the filter selects no clause; 130 interrupted.\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manual's options page is the one the definitions build: an option added,
    /// renamed or given another default fails this test until the page is written again
    /// (with EMBEDCHECK_RENDER_PUBLISHED=1).
    #[test]
    fn options_reference_is_the_manuals_page() {
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/manual/src/options.md");
        let built = Options::reference();
        if std::env::var_os("EMBEDCHECK_RENDER_PUBLISHED").is_some() {
            std::fs::write(&page, &built).unwrap();
        }
        let committed = std::fs::read_to_string(&page).unwrap_or_default();
        assert!(
            committed == built,
            "docs/manual/src/options.md differs from the options: write it again \
             (EMBEDCHECK_RENDER_PUBLISHED=1 cargo test -p embedcheck-cli options_reference)"
        );
        for option in ["--endpoint", "--baseline", "--reference", "--contract"] {
            assert!(built.contains(&format!("| `{option} ")), "{option}");
        }
    }
}
