//! The migration options: `--baseline URL` and how to compare it with `--endpoint`;
//! without `--baseline` none of them is used but `--corpus` and `--record-baseline`,
//! which records a baseline for a later migration.

use std::path::PathBuf;
use std::str::FromStr;

/// Options of a migration audit: the old server, and how to compare it.
#[derive(Clone, Debug, clap::Args)]
pub struct MigrationOptions {
    /// Baseline to compare --endpoint with: the old server's URL (a migration audit), or
    /// a folder --record-baseline wrote (replayed against --endpoint).
    #[arg(long, env = "EMBEDCHECK_BASELINE", value_name = "URL|DIR")]
    pub baseline: Option<String>,

    /// Model to request from the baseline (default: the first id of its GET /v1/models).
    #[arg(long, env = "EMBEDCHECK_BASELINE_MODEL", value_name = "ID")]
    pub baseline_model: Option<String>,

    /// Name of the environment variable holding the baseline's API key.
    #[arg(long, env = "EMBEDCHECK_BASELINE_API_KEY_ENV", value_name = "NAME")]
    pub baseline_api_key_env: Option<String>,

    /// --api-key-header for the baseline.
    #[arg(long, env = "EMBEDCHECK_BASELINE_API_KEY_HEADER", value_name = "NAME")]
    pub baseline_api_key_header: Option<String>,

    /// --header for the baseline (repeatable).
    #[arg(long = "baseline-header", value_name = "'NAME: VALUE'")]
    pub baseline_headers: Vec<String>,

    /// --header-env for the baseline (repeatable).
    #[arg(long = "baseline-header-env", value_name = "NAME=VAR")]
    pub baseline_header_env: Vec<String>,

    /// --vendor for the baseline.
    #[arg(long, env = "EMBEDCHECK_BASELINE_VENDOR", value_name = "NAME|FILE")]
    pub baseline_vendor: Option<String>,

    /// Name of the baseline in reports (default: its host and port).
    #[arg(long, env = "EMBEDCHECK_BASELINE_LABEL", value_name = "NAME")]
    pub baseline_label: Option<String>,

    /// Also measure latency and throughput on both servers (spends the load's requests).
    #[arg(long, env = "EMBEDCHECK_LOAD")]
    pub load: bool,

    /// Concurrent workers of the load's concurrent phase.
    #[arg(long, env = "EMBEDCHECK_CONCURRENCY", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub concurrency: u64,

    /// Load requests per server and run: SEQUENTIAL,CONCURRENT (one number sets both).
    #[arg(
        long,
        env = "EMBEDCHECK_LOAD_REQUESTS",
        value_name = "SEQ,CONC",
        default_value = "30,40"
    )]
    pub load_requests: LoadRequests,

    /// k of the retrieval comparison's top-k and overlap@k.
    #[arg(long, env = "EMBEDCHECK_TOP_K", value_name = "K", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub top_k: u64,

    /// Corpus directory with documents.jsonl and queries.jsonl (default: the shipped one).
    #[arg(long, env = "EMBEDCHECK_CORPUS", value_name = "DIR")]
    pub corpus: Option<PathBuf>,

    /// Documents of --corpus embedded at most: a larger corpus is sampled, stratified by
    /// script, length and risky texts, keeping the documents its queries judge relevant.
    #[arg(long, env = "EMBEDCHECK_CORPUS_SAMPLE", value_name = "N",
          default_value_t = embedcheck_core::migration::sample::DEFAULT_DOCUMENTS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub corpus_sample: u64,

    /// After the audit, record the corpus as --endpoint embeds it into DIR (baseline.jsonl):
    /// a baseline to compare another server with once this one is gone. Beside
    /// --baseline URL, the baseline server is recorded as it is compared.
    #[arg(long, env = "EMBEDCHECK_RECORD_BASELINE", value_name = "DIR")]
    pub record_baseline: Option<PathBuf>,

    /// With --record-baseline: keep each text as its SHA-256 only; a replay then reads
    /// the texts from the same --corpus.
    #[arg(
        long,
        env = "EMBEDCHECK_RECORD_HASHES_ONLY",
        requires = "record_baseline"
    )]
    pub record_hashes_only: bool,
}

/// `--load-requests`: sequential and concurrent requests per server and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadRequests {
    pub sequential: usize,
    pub concurrent: usize,
}

impl FromStr for LoadRequests {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let number = |s: &str| match s.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "expected a positive number or SEQ,CONC, got {raw:?}"
            )),
        };
        match raw.split_once(',') {
            Some((s, c)) => Ok(LoadRequests {
                sequential: number(s)?,
                concurrent: number(c)?,
            }),
            None => number(raw).map(|n| LoadRequests {
                sequential: n,
                concurrent: n,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_requests_take_one_or_two_numbers() {
        assert_eq!(
            "30,40".parse(),
            Ok(LoadRequests {
                sequential: 30,
                concurrent: 40
            })
        );
        assert_eq!(
            "7".parse(),
            Ok(LoadRequests {
                sequential: 7,
                concurrent: 7
            })
        );
        assert!("0,4".parse::<LoadRequests>().is_err());
        assert!("x".parse::<LoadRequests>().is_err());
    }

    #[test]
    fn migration_options_are_ours_and_parse() {
        use clap::Parser;
        let words = "--endpoint http://n/v1 --baseline http://o/v1 --load --top-k 3 RESP-001";
        let split = crate::args::split(words.split(' ').map(str::to_owned));
        assert_eq!(split.libtest, ["RESP-001"]);
        let options = crate::options::Options::try_parse_from(
            std::iter::once("embedcheck".to_owned()).chain(split.ours),
        )
        .unwrap();
        let m = &options.migration;
        assert_eq!(m.baseline.as_deref(), Some("http://o/v1"));
        assert!(m.load);
        assert_eq!((m.top_k, m.concurrency), (3, 4));
        assert_eq!(
            m.load_requests,
            LoadRequests {
                sequential: 30,
                concurrent: 40
            }
        );
    }
}
