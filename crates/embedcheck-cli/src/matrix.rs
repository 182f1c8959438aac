//! A vendor matrix: several servers in one run (`--endpoint` more than once, or
//! `--servers FILE`), audited with one seed so each gets the same requests.
//!
//! Audits run concurrently, at most `--parallel` at a time; each server's own
//! requests stay sequential in its own session, within its own budgets. A server
//! that cannot be reached becomes a column of "not audited", not an aborted run.
//!
//! ```toml
//! [[server]]
//! label = "vllm"
//! endpoint = "http://127.0.0.1:18002/v1"
//! model = "sentence-transformers/all-MiniLM-L6-v2"   # optional, as every field below
//! api_key_env = "VLLM_KEY"
//! overlength = "reject"
//! max_input_tokens = 256
//! reference = "fixtures/reference/all-MiniLM-L6-v2.jsonl"
//! same_model = "all-MiniLM-L6-v2"    # groups servers whose model ids differ
//! rerank_model = "tiny-rerank-bert"   # the model /v1/rerank is asked for
//! speech_model = "whisper-1"           # the model /v1/audio/transcriptions is asked for
//! rerank_reference = "fixtures/reference/tiny-rerank-bert.jsonl"
//! speech_reference = "fixtures/reference/whisper-tiny-random.jsonl"
//!
//! [[server]]
//! label = "azure"
//! endpoint = "https://r.openai.azure.com/openai/deployments/d/embeddings?api-version=2024-10-21"
//! vendor = "azure"                    # addressed as its profile says (specs/vendors/)
//! api_key_env = "AZURE_KEY"
//! api_key_header = "api-key"          # the profile's already; given here it wins
//! header = ["X-Team: search"]         # plain headers, shown in reports
//! header_env = ["x-gw-key=GW_KEY"]    # secret headers, never printed
//! ```

use crate::error::RunError;
use crate::options::Options;
use crate::plan;
use embedcheck_core::agreement::{self, ProbeVectors};
use embedcheck_core::audit::{self, ServerAudit};
use embedcheck_core::catalogue::Clause;
use embedcheck_core::contracts;
use embedcheck_core::contracts::{ServerOptionError, ServerOptions};
use embedcheck_core::expectations::Expectations;
use embedcheck_core::http::Transport;
use embedcheck_core::migration;
use embedcheck_core::migration::corpus::{BATCH_SIZE, Corpus};
use embedcheck_core::migration::latency::LoadPlan;
use embedcheck_core::migration::recording::{self, Recording};
use embedcheck_core::migration::replay::{self, rankings::LabelledQuality};
use embedcheck_core::migration::retrieval::Instruction;
use embedcheck_core::report::matrix::{CorpusResult, LatencySummary, ReplaySummary};
use embedcheck_core::session::{Interrupt, Session, Settings};
use futures::StreamExt;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One server of the matrix and what differs for it from the run's options.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerSpec {
    pub label: String,
    pub endpoint: String,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub api_key_header: Option<String>,
    #[serde(default)]
    pub header: Vec<String>,
    #[serde(default)]
    pub header_env: Vec<String>,
    /// A vendor profile's name or file (`--vendor`).
    pub vendor: Option<String>,
    pub expectations: Option<PathBuf>,
    /// Each contract's own values for this server (matryoshka, overlength,
    /// max_input_tokens, query_instruction, reference; rerank_model, rerank_reference,
    /// listwise; speech_model, speech_reference), when they differ from the run's.
    #[serde(flatten)]
    pub contracts: ServerOptions,
    /// The model it serves, when its model id differs from the others' for the same
    /// model (`BAAI/bge-m3` here, `bge-m3:latest` there): servers of one model are
    /// compared on the probe texts.
    pub same_model: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServersFile {
    server: Vec<ServerSpec>,
}

/// The servers of a matrix run, or `None` for a single-server run.
pub(crate) fn specs(options: &Options) -> Result<Option<Vec<ServerSpec>>, RunError> {
    let specs = match &options.servers {
        Some(file) => read_file(file)?,
        None if options.endpoint.len() > 1 => options
            .endpoint
            .iter()
            .map(|word| from_word(word))
            .collect::<Result<_, _>>()?,
        None => return Ok(None),
    };
    let mut labels: Vec<&str> = specs.iter().map(|s| s.label.as_str()).collect();
    labels.sort_unstable();
    if let Some(twice) = labels.windows(2).find(|w| w[0] == w[1]) {
        return Err(RunError::Usage(format!(
            "two servers are labelled {:?}; labels name report folders and test lines, so they must differ",
            twice[0]
        )));
    }
    Ok(Some(specs))
}

/// `LABEL=URL` or a bare URL (labelled by host and port).
fn from_word(word: &str) -> Result<ServerSpec, RunError> {
    let (label, endpoint) = match word.split_once('=') {
        Some((label, url)) if !label.contains('/') && !label.contains(':') => {
            (label.to_owned(), url.to_owned())
        }
        _ => (contracts::target(word)?.label(), word.to_owned()),
    };
    Ok(ServerSpec {
        label,
        endpoint,
        ..ServerSpec::default()
    })
}

fn read_file(path: &Path) -> Result<Vec<ServerSpec>, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Usage(format!("--servers {}: {e}", path.display())))?;
    let file: ServersFile = toml::from_str(&text).map_err(|e| {
        RunError::Usage(format!(
            "--servers {}: {}",
            path.display(),
            crate::first_line(&e.to_string())
        ))
    })?;
    if file.server.is_empty() {
        return Err(RunError::Usage(format!(
            "--servers {}: no [[server]] entry",
            path.display()
        )));
    }
    Ok(file.server)
}

/// One server ready to audit: its session's parts and its known failures.
struct Prepared {
    label: String,
    same_model: Option<String>,
    transport: Transport,
    settings: Settings,
    expectations: Expectations,
}

/// The run's settings with this server's own values over them.
fn prepare(options: &Options, spec: &ServerSpec, seed: u64) -> Result<Prepared, RunError> {
    let mut settings = plan::settings(options, seed)?;
    over_run(spec, &mut settings)?;
    let run_wide = plan::Addressing::of_endpoint(options);
    let addressing = plan::Addressing {
        api_key_env: spec.api_key_env.as_deref().or(run_wide.api_key_env),
        key_flag: if spec.api_key_env.is_some() {
            "api_key_env"
        } else {
            "--api-key-env"
        },
        api_key_header: spec.api_key_header.as_deref().or(run_wide.api_key_header),
        headers: if spec.header.is_empty() {
            run_wide.headers
        } else {
            &spec.header
        },
        header_env: if spec.header_env.is_empty() {
            run_wide.header_env
        } else {
            &spec.header_env
        },
        vendor: spec.vendor.as_deref().or(run_wide.vendor),
    };
    let way_in = plan::way_in(&addressing, options)?;
    let target = contracts::target(&spec.endpoint)?;
    let expectations = plan::apply_vendor(
        way_in.vendor.as_ref(),
        &target,
        &mut settings,
        plan::known_failures(options, spec.expectations.as_deref(), &spec.label)?,
    )
    .map_err(|e| RunError::Usage(format!("server {:?}: {e}", spec.label)))?;
    Ok(Prepared {
        label: spec.label.clone(),
        same_model: spec.same_model.clone(),
        transport: plan::transport(target, way_in.access, options)?,
        settings,
        expectations,
    })
}

/// The run's settings with this server's own values (its model, each contract's)
/// over them; a value in error names the server.
fn over_run(spec: &ServerSpec, settings: &mut Settings) -> Result<(), RunError> {
    spec.contracts
        .over(&mut settings.contracts)
        .map_err(|e| match e {
            ServerOptionError::Reference(e) => RunError::Reference(e),
            value => RunError::Usage(format!("server {:?}: {value}", spec.label)),
        })?;
    settings.model = spec.model.clone().or(settings.model.take());
    Ok(())
}

/// Audits every server, at most `parallel` at a time, in the order given; each
/// result's gate is set against that server's known failures. After its clauses, each
/// audited server embeds the probe texts for the comparison of servers of one model.
/// One server of the matrix, audited: its audit, its vectors of the probe texts (for
/// the agreement of servers of one model) and its results on the user's corpus.
pub(crate) struct Audited {
    pub audit: ServerAudit,
    pub vectors: Option<ProbeVectors>,
    pub corpus: Option<CorpusResult>,
    /// Its session, kept with `--load` only (its log holds every answer) for the load
    /// measured after every audit.
    session: Option<Session>,
    /// The corpus as it embedded it: which batches the load may send.
    own: Option<Recording>,
}

/// What the matrix measures on the user's corpus, when it was asked to (`--corpus` or
/// a recorded baseline): the corpus, the query instruction and the recording.
pub(crate) struct OnCorpus {
    pub corpus: Corpus,
    pub instruction: Instruction,
    pub recording: Option<Recording>,
    /// `--load`: the study's load on each server after every audit.
    load: Option<LoadPlan>,
    timeout: std::time::Duration,
}

impl OnCorpus {
    pub(crate) fn of(
        options: &Options,
        recording: Option<Recording>,
    ) -> Result<Option<OnCorpus>, RunError> {
        let m = &options.migration;
        if m.corpus.is_none() && recording.is_none() && !m.load {
            return Ok(None);
        }
        Ok(Some(OnCorpus {
            corpus: plan::corpus(options)?,
            instruction: plan::instruction(options),
            recording,
            load: plan::load_plan(options),
            timeout: std::time::Duration::from_secs(options.timeout),
        }))
    }

    /// The server's quality on the corpus's labels (the corpus recorded in memory, as
    /// `--record-baseline` records it) and its replay against the recording.
    async fn measure(&self, session: &Session, label: &str) -> (CorpusResult, Option<Recording>) {
        let replay = match &self.recording {
            Some(recording) => Some(ReplaySummary::of(&replay::replay(session, recording).await)),
            None => None,
        };
        match recording::record(session, &self.corpus, &self.instruction, label).await {
            Ok(own) => {
                let result = CorpusResult {
                    quality: LabelledQuality::of(&own),
                    replay,
                    ..CorpusResult::default()
                };
                (result, Some(own))
            }
            Err(why) => {
                let result = CorpusResult {
                    replay,
                    not_measured: Some(format!("not measured: {why}")),
                    ..CorpusResult::default()
                };
                (result, None)
            }
        }
    }

    /// The corpus batches of the study's size that every measured server embedded
    /// whole: the load sends only these, so no server is timed on refusals.
    fn batches_all_embedded(&self, audited: &[Audited]) -> Vec<usize> {
        let own: Vec<&Recording> = audited.iter().filter_map(|a| a.own.as_ref()).collect();
        self.corpus
            .batches()
            .enumerate()
            .filter(|(_, batch)| batch.len() == BATCH_SIZE)
            .filter(|(_, batch)| {
                own.iter().all(|r| {
                    batch
                        .iter()
                        .all(|d| r.documents.iter().any(|recorded| recorded.id == d.id))
                })
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// With `--load`, the study's load on each server in turn, alone on the machine,
    /// after every audit.
    pub(crate) async fn measure_load(&self, audited: &mut [Audited]) {
        let Some(load) = self.load else {
            return;
        };
        let batches = self.batches_all_embedded(audited);
        let timeout = self.timeout;
        for one in audited.iter_mut() {
            let (Some(result), Some(session)) = (one.corpus.as_mut(), one.session.as_ref()) else {
                continue;
            };
            let label = one.audit.label.clone();
            let measured =
                migration::load_alone(session, &label, &self.corpus, &batches, timeout, load).await;
            match measured {
                Ok(latency) => {
                    result.latency =
                        Some(LatencySummary::of(&latency, load.concurrency, BATCH_SIZE));
                }
                Err(why) => result.latency_not_measured = Some(why),
            }
        }
    }
}

/// `--load` sends only to this machine: every server of the matrix must be on it.
pub(crate) fn check_load_targets(specs: &[ServerSpec]) -> Result<(), RunError> {
    for spec in specs {
        let target = contracts::target(&spec.endpoint)?;
        if !target.is_loopback() {
            return Err(RunError::LoadOffLoopback(target.display()));
        }
    }
    Ok(())
}

/// A matrix run as the plan makes it from the options, before anything is sent:
/// every server prepared, what is measured on the corpus, and how the audits run.
pub(crate) struct MatrixPlan {
    servers: Vec<Prepared>,
    on_corpus: Option<OnCorpus>,
    strict: bool,
    /// How many servers are audited at once.
    parallel: usize,
    /// `--load`: each server's session is kept for the load after every audit.
    keeps_sessions: bool,
}

impl MatrixPlan {
    pub(crate) fn of(
        options: &Options,
        specs: &[ServerSpec],
        seed: u64,
        recording: Option<Recording>,
    ) -> Result<MatrixPlan, RunError> {
        Ok(MatrixPlan {
            servers: specs
                .iter()
                .map(|spec| prepare(options, spec, seed))
                .collect::<Result<_, _>>()?,
            on_corpus: OnCorpus::of(options, recording)?,
            strict: options.strict,
            parallel: usize::try_from(options.parallel).unwrap_or(1).max(1),
            keeps_sessions: options.migration.load,
        })
    }
}

pub(crate) async fn audit_all(
    plan: MatrixPlan,
    selected: &[&Clause],
    interrupt: Interrupt,
) -> Vec<Audited> {
    let on_corpus = plan.on_corpus.as_ref();
    let (strict, keeps_sessions) = (plan.strict, plan.keeps_sessions);
    let audits = futures::stream::iter(plan.servers.into_iter().map(|p| {
        let interrupt = interrupt.clone();
        async move {
            let mut session = Session::new(p.transport, p.settings, interrupt);
            let mut audit = audit::audit_session(&mut session, p.label, selected).await;
            audit.judge(&p.expectations, strict);
            let model = p.same_model.or_else(|| audit.model.clone());
            let vectors = match (&audit.aborted, model) {
                (None, Some(model)) => {
                    Some(agreement::probe_vectors(&session, &audit.label, &model).await)
                }
                _ => None,
            };
            let (corpus, own) = match (&audit.aborted, on_corpus) {
                (None, Some(on)) => {
                    let (result, own) = on.measure(&session, &audit.label).await;
                    (Some(result), own)
                }
                _ => (None, None),
            };
            Audited {
                audit,
                vectors,
                corpus,
                session: keeps_sessions.then_some(session),
                own,
            }
        }
    }))
    .buffered(plan.parallel)
    .collect::<Vec<Audited>>()
    .await;
    let mut audits = audits;
    if let Some(on) = on_corpus {
        on.measure_load(&mut audits).await;
    }
    audits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_may_carry_its_label() {
        let spec = from_word("vllm=http://127.0.0.1:8000/v1").unwrap();
        assert_eq!(
            (spec.label.as_str(), spec.endpoint.as_str()),
            ("vllm", "http://127.0.0.1:8000/v1")
        );
        let bare = from_word("http://127.0.0.1:8000/v1").unwrap();
        assert_eq!(bare.endpoint, "http://127.0.0.1:8000/v1");
        assert!(!bare.label.is_empty());
    }

    #[test]
    fn a_servers_file_names_each_server_and_refuses_unknown_keys() {
        let file: ServersFile = toml::from_str(
            "[[server]]\nlabel = \"a\"\nendpoint = \"http://127.0.0.1:1/v1\"\nmax_input_tokens = 256\n",
        )
        .unwrap();
        let mut settings = Settings::default();
        over_run(&file.server[0], &mut settings).unwrap();
        let embeddings = settings
            .contracts
            .get::<embedcheck_core::contracts::embeddings::EmbeddingsSettings>()
            .unwrap();
        assert_eq!(embeddings.max_input_tokens, Some(256));
        assert!(
            toml::from_str::<ServersFile>(
                "[[server]]\nlabel = \"a\"\nendpoint = \"x\"\ncolour = 1\n"
            )
            .is_err()
        );
    }

    #[test]
    fn a_misspelt_declared_option_names_its_server_and_the_words() {
        let file: ServersFile = toml::from_str(
            "[[server]]\nlabel = \"vllm\"\nendpoint = \"x\"\noverlength = \"chunk\"\n",
        )
        .unwrap();
        let error = over_run(&file.server[0], &mut Settings::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "server \"vllm\": overlength: expected one of any, reject, truncate, aggregate, got \"chunk\""
        );
    }
}
