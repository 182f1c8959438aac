//! The migration options (`--baseline URL` and its companions) and the migration
//! audit they set up; without `--baseline` none of this runs.

use super::error::RunError;
use super::options::Options;
use crate::declared::QueryTemplate;
use crate::http::{Secret, Target, Transport};
use crate::migration::corpus::Corpus;
use crate::migration::latency::LoadPlan;
use crate::migration::retrieval::Instruction;
use crate::migration::{Plan, Server};
use crate::session::Settings;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Options of a migration audit: the old server, and how to compare it.
#[derive(Clone, Debug, clap::Args)]
pub struct MigrationOptions {
    /// Baseline (old) server to compare --endpoint with: a migration audit.
    #[arg(long, env = "EMBEDCHECK_BASELINE", value_name = "URL")]
    pub baseline: Option<String>,

    /// Model to request from the baseline (default: the first id of its GET /v1/models).
    #[arg(long, env = "EMBEDCHECK_BASELINE_MODEL", value_name = "ID")]
    pub baseline_model: Option<String>,

    /// Name of the environment variable holding the baseline's API key.
    #[arg(long, env = "EMBEDCHECK_BASELINE_API_KEY_ENV", value_name = "NAME")]
    pub baseline_api_key_env: Option<String>,

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

/// The baseline server and the plan, when `--baseline` asks for a migration audit.
pub(super) fn prepare(
    options: &Options,
    settings: &Settings,
) -> Result<Option<(Server, Plan)>, RunError> {
    let m = &options.migration;
    let Some(url) = &m.baseline else {
        return Ok(None);
    };
    let target = Target::parse(url)?;
    let label = m
        .baseline_label
        .clone()
        .unwrap_or_else(|| host_label(&target));
    let timeout = Duration::from_secs(options.timeout);
    let server = Server {
        transport: Transport::new(target, baseline_key(m)?, timeout),
        settings: Settings {
            model: m.baseline_model.clone(),
            ..settings.clone()
        },
        label,
    };
    let corpus = match &m.corpus {
        Some(dir) => Corpus::load(dir)?,
        None => Corpus::shipped(),
    };
    let plan = Plan {
        corpus,
        instruction: Instruction {
            template: template(options),
            task: options.query_task.clone(),
        },
        top_k: m.top_k as usize,
        load: m.load.then(|| LoadPlan {
            concurrency: m.concurrency as usize,
            sequential: m.load_requests.sequential,
            concurrent: m.load_requests.concurrent,
            ..LoadPlan::default()
        }),
        timeout,
    };
    Ok(Some((server, plan)))
}

/// `--query-instruction` when given, else Qwen3's template (with the default task,
/// the reference server's own instruction).
fn template(options: &Options) -> QueryTemplate {
    options.query_instruction.clone().unwrap_or_else(|| {
        Instruction::QWEN3_TEMPLATE
            .parse()
            .expect("the built-in template has {text}")
    })
}

fn baseline_key(m: &MigrationOptions) -> Result<Option<Secret>, RunError> {
    let Some(name) = &m.baseline_api_key_env else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(Secret::new(key.trim().to_owned()))),
        _ => Err(RunError::Usage(format!(
            "environment variable {name} (named by --baseline-api-key-env) is not set or empty"
        ))),
    }
}

/// `127.0.0.1-8000`: the default label, as for --endpoint.
fn host_label(target: &Target) -> String {
    let url = target.embeddings_url();
    let host = url.host_str().unwrap_or("baseline");
    let shown = match url.port() {
        Some(port) => format!("{host}-{port}"),
        None => host.to_owned(),
    };
    shown
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
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
        let split = super::super::args::split(words.split(' ').map(str::to_owned));
        assert_eq!(split.libtest, ["RESP-001"]);
        let options =
            Options::try_parse_from(std::iter::once("embedcheck".to_owned()).chain(split.ours))
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

    #[test]
    fn baseline_labels_name_host_and_port() {
        let target = Target::parse("http://127.0.0.1:8000/v1").unwrap();
        assert_eq!(host_label(&target), "127.0.0.1-8000");
    }
}
