//! The migration options (`--baseline URL` and its companions) and the migration
//! audit they set up; without `--baseline` none of this runs.

use super::error::RunError;
use super::options::Options;
use crate::declared::QueryTemplate;
use crate::http::{Target, Transport};
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
    let label = m.baseline_label.clone().unwrap_or_else(|| target.label());
    check_load_targets(options, &target)?;
    let timeout = Duration::from_secs(options.timeout);
    let server = Server {
        transport: Transport::new(
            target,
            super::run::key_from_env(m.baseline_api_key_env.as_deref(), "--baseline-api-key-env")?,
            timeout,
        ),
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

/// Load tests only ever target this machine: a load on someone's production endpoint
/// is not an audit.
fn check_load_targets(options: &Options, baseline: &Target) -> Result<(), RunError> {
    if !options.migration.load {
        return Ok(());
    }
    let candidate = options.endpoint.as_deref().map(Target::parse).transpose()?;
    match [Some(baseline), candidate.as_ref()]
        .into_iter()
        .flatten()
        .find(|t| !t.is_loopback())
    {
        Some(remote) => Err(RunError::LoadOffLoopback(remote.display())),
        None => Ok(()),
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
    fn load_is_refused_for_servers_off_this_machine() {
        use clap::Parser;
        let parse = |words: &str| {
            Options::try_parse_from(std::iter::once("embedcheck").chain(words.split_whitespace()))
                .unwrap()
        };
        let local = Target::parse("http://127.0.0.1:1/v1").unwrap();
        let remote = Target::parse("https://api.example.com/v1").unwrap();
        let with_load = parse("--endpoint http://127.0.0.1:2/v1 --baseline http://x/v1 --load");
        assert!(check_load_targets(&with_load, &local).is_ok());
        let err = check_load_targets(&with_load, &remote)
            .unwrap_err()
            .to_string();
        assert!(err.contains("api.example.com"), "{err}");
        let remote_candidate =
            parse("--endpoint https://api.example.com/v1 --baseline http://x/v1 --load");
        assert!(check_load_targets(&remote_candidate, &local).is_err());
        let no_load = parse("--endpoint https://api.example.com/v1 --baseline http://x/v1");
        assert!(check_load_targets(&no_load, &remote).is_ok());
    }
}
