//! From options to what a run needs: settings, keys, the baseline and the migration
//! plan. Nothing here sends a request.

use crate::error::RunError;
use crate::options::Options;
use embedcheck_core::contracts;
use embedcheck_core::declared::QueryTemplate;
use embedcheck_core::expectations::Expectations;
use embedcheck_core::http::{Access, Header, KeyHeader, Secret, Target, Transport};
use embedcheck_core::migration::corpus::Corpus;
use embedcheck_core::migration::latency::LoadPlan;
use embedcheck_core::migration::recording::{self, Recording, RecordingError};
use embedcheck_core::migration::retrieval::Instruction;
use embedcheck_core::migration::sample;
use embedcheck_core::migration::{Plan, Server};
use embedcheck_core::session::Settings;
use embedcheck_core::vendor::Profile;
use std::time::Duration;

/// How one server is reached, as its options name it: the key's variable and header,
/// other headers, and the vendor profile.
pub(crate) struct Addressing<'a> {
    pub api_key_env: Option<&'a str>,
    /// The option that named the key's variable, for the error when it is unset.
    pub key_flag: &'static str,
    pub api_key_header: Option<&'a str>,
    pub headers: &'a [String],
    pub header_env: &'a [String],
    pub vendor: Option<&'a str>,
}

impl<'a> Addressing<'a> {
    /// The audited endpoint's addressing, from the command line.
    pub(crate) fn of_endpoint(options: &'a Options) -> Self {
        Addressing {
            api_key_env: options.api_key_env.as_deref(),
            key_flag: "--api-key-env",
            api_key_header: options.api_key_header.as_deref(),
            headers: &options.headers,
            header_env: &options.header_env,
            vendor: options.vendor.as_deref(),
        }
    }
}

/// A server's way in: how to reach it, and the vendor profile that said so.
pub(crate) struct WayIn {
    pub access: Access,
    pub vendor: Option<Profile>,
}

/// The access for one server: its key (from the variable the user named; an unset
/// variable is a usage error rather than a silent unauthenticated run) in the header
/// `--api-key-header` or the vendor names, its headers, and the run's proxy and CA.
pub(crate) fn way_in(addressing: &Addressing, options: &Options) -> Result<WayIn, RunError> {
    let vendor = addressing.vendor.map(Profile::named).transpose()?;
    let key_header = match (addressing.api_key_header, &vendor) {
        (Some(name), _) => KeyHeader::parse(name)?,
        (None, Some(profile)) => profile.key_header()?,
        (None, None) => KeyHeader::Bearer,
    };
    let mut headers: Vec<Header> = addressing
        .headers
        .iter()
        .map(|line| Header::plain(line))
        .collect::<Result<_, _>>()?;
    for word in addressing.header_env {
        let (name, variable) = word.split_once('=').ok_or_else(|| {
            RunError::Usage(format!(
                "--header-env {word:?}: expected NAME=VAR (the header, and the environment variable holding its value)"
            ))
        })?;
        let value = key_from_env(Some(variable), "--header-env")?.expect("a variable was named");
        headers.push(Header::secret(name, variable, value)?);
    }
    let ca_cert = match &options.ca_cert {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| RunError::Usage(format!("--ca-cert {}: {e}", path.display())))?;
            Some((path.display().to_string(), pem))
        }
        None => None,
    };
    let access = Access {
        key: key_from_env(addressing.api_key_env, addressing.key_flag)?,
        key_header,
        headers,
        proxy: options.proxy.clone(),
        ca_cert,
        fields: vendor.as_ref().map(Profile::fields).unwrap_or_default(),
    };
    Ok(WayIn { access, vendor })
}

/// What a vendor profile changes in a server's run: its settings (limits off this
/// machine) and known failures (its documented deviations, under the team's own
/// file). Without `--model`, a vendor that sends a model and has no models route is a
/// usage error: nothing else would name the model.
pub(crate) fn apply_vendor(
    vendor: Option<&Profile>,
    target: &Target,
    settings: &mut Settings,
    expectations: Expectations,
) -> Result<Expectations, RunError> {
    let Some(profile) = vendor else {
        return Ok(expectations);
    };
    if profile.send_model && !profile.models_route && settings.model.is_none() {
        return Err(RunError::Usage(format!(
            "vendor {} documents no models route to learn the model from; pass --model ID",
            profile.name
        )));
    }
    profile.adjust(settings, target.is_loopback());
    Ok(expectations.over(profile.expectations()))
}

/// A server's known failures (`explicit`, else `expectations/<label>.toml`), with
/// `--allow-fixed` and the pinned `--contract`.
pub(crate) fn known_failures(
    options: &Options,
    explicit: Option<&std::path::Path>,
    label: &str,
) -> Result<Expectations, RunError> {
    Ok(Expectations::load(explicit, label)?
        .allowing_fixed(options.allow_fixed)
        .pinned_to(&options.contract))
}

/// The transport for `target`, reached as `access` says.
pub(crate) fn transport(
    target: Target,
    access: Access,
    options: &Options,
) -> Result<Transport, RunError> {
    Ok(Transport::with_access(
        target,
        access,
        Duration::from_secs(options.timeout),
    )?)
}

/// The key in the variable `name`, named by option `flag`; none when no variable
/// was named.
pub(crate) fn key_from_env(
    name: Option<&str>,
    flag: &'static str,
) -> Result<Option<Secret>, RunError> {
    let Some(name) = name else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(Secret::new(key.trim().to_owned()))),
        _ => Err(RunError::MissingKey {
            variable: name.to_owned(),
            flag,
        }),
    }
}

/// The clause run's settings from the options; fails on an unreadable reference file.
pub(crate) fn settings(options: &Options, seed: u64) -> Result<Settings, RunError> {
    Ok(Settings {
        model: options.model.clone(),
        max_requests: options.max_requests,
        max_tokens: token_budget(options),
        max_upload_bytes: options.max_upload_mb * 1_000_000,
        max_retry_wait: Duration::from_secs(options.max_retry_wait),
        seed,
        aggressive: options.aggressive,
        cases: options.cases,
        rate: options.rate,
        dry_run: options.dry_run,
        contracts: options.contracts.settings()?,
    })
}

/// `--max-tokens`, lowered to what `--max-cost` buys at `--price-per-mtok`.
fn token_budget(options: &Options) -> u64 {
    match (options.max_cost, options.price_per_mtok) {
        (Some(cost), Some(price)) => options
            .max_tokens
            .min((cost / price * 1_000_000.0).floor() as u64),
        _ => options.max_tokens,
    }
}

/// What the run may cost, printed before anything is sent: its budgets, and at
/// `--price-per-mtok` the dollars they allow.
pub(crate) fn cost_line(options: &Options) -> String {
    let tokens = token_budget(options);
    let mut line = format!(
        "budget: at most {} requests and {tokens} tokens",
        options.max_requests
    );
    if let Some(price) = options.price_per_mtok {
        line.push_str(&format!(
            ", at most ${:.4} at ${price}/M tokens",
            tokens as f64 * price / 1_000_000.0
        ));
    }
    if options.max_cost.is_some() {
        line.push_str(" (--max-cost)");
    }
    line
}

/// What an audit prints and writes once it has run: where its reports go, and the
/// price its spend is told at.
#[derive(Debug)]
pub(crate) struct Outputs {
    /// `--report-dir`, else `target/embedcheck/<label>/`.
    pub report_dir: std::path::PathBuf,
    /// `--price-per-mtok`.
    price_per_mtok: Option<f64>,
}

impl Outputs {
    fn of(options: &Options, label: &str) -> Outputs {
        Outputs {
            report_dir: options.report_dir.clone().unwrap_or_else(|| {
                std::path::PathBuf::from("target")
                    .join("embedcheck")
                    .join(label)
            }),
            price_per_mtok: options.price_per_mtok,
        }
    }

    /// What the run spent, at `--price-per-mtok`.
    pub(crate) fn spend_line(&self, requests: u64, tokens: u64) -> String {
        let mut line = format!("spent: {requests} requests, {tokens} tokens");
        if let Some(price) = self.price_per_mtok {
            line.push_str(&format!(
                " (${:.4} at ${price}/M tokens)",
                tokens as f64 * price / 1_000_000.0
            ));
        }
        line
    }
}

/// What `--baseline` names, decided once where the plan is made: a live server (a
/// URL) to audit beside `--endpoint`, or a recording (a folder on this machine) to
/// replay against it, read once.
pub(crate) enum Baseline {
    Live(Box<Target>),
    Recorded(Box<Recording>),
}

/// `--baseline`, decided: a URL (it has a scheme) is a live server, an existing path a
/// recording; a word that is neither, or both, is a usage error rather than a guess.
pub(crate) fn baseline(options: &Options) -> Result<Option<Baseline>, RunError> {
    let Some(word) = options.migration.baseline.as_deref() else {
        return Ok(None);
    };
    let is_url = word.contains("://");
    let is_path = std::path::Path::new(word).exists();
    match (is_url, is_path) {
        (true, false) => Ok(Some(Baseline::Live(Box::new(contracts::target(word)?)))),
        (false, true) => Ok(Some(Baseline::Recorded(Box::new(recording(
            options,
            std::path::Path::new(word),
        )?)))),
        (true, true) => Err(RunError::Usage(format!(
            "--baseline {word:?} is both a URL and a path on this machine: name the folder as ./{word} or the server by its full URL"
        ))),
        (false, false) => Err(RunError::Usage(format!(
            "--baseline {word:?} is neither a server's URL (http://host:port/v1) nor a recording on this machine (a folder written by --record-baseline)"
        ))),
    }
}

/// The baseline server, its known failures and the plan, for a migration audit of
/// `target` beside `--endpoint`.
pub(crate) fn migration(
    options: &Options,
    settings: &Settings,
    target: Target,
) -> Result<(Server, Expectations, Plan), RunError> {
    let m = &options.migration;
    let label = m.baseline_label.clone().unwrap_or_else(|| target.label());
    check_load_targets(options, &target)?;
    let timeout = Duration::from_secs(options.timeout);
    let way_in = way_in(
        &Addressing {
            api_key_env: m.baseline_api_key_env.as_deref(),
            key_flag: "--baseline-api-key-env",
            api_key_header: m.baseline_api_key_header.as_deref(),
            headers: &m.baseline_headers,
            header_env: &m.baseline_header_env,
            vendor: m.baseline_vendor.as_deref(),
        },
        options,
    )?;
    let mut settings = Settings {
        model: m.baseline_model.clone(),
        ..settings.clone()
    };
    let expectations = apply_vendor(
        way_in.vendor.as_ref(),
        &target,
        &mut settings,
        known_failures(options, None, &label)?,
    )?;
    let server = Server {
        transport: transport(target, way_in.access, options)?,
        settings,
        label,
    };
    let plan = Plan {
        corpus: corpus(options)?,
        instruction: instruction(options),
        top_k: m.top_k as usize,
        load: load_plan(options),
        timeout,
    };
    Ok((server, expectations, plan))
}

/// One audit as the plan makes it from the options, before anything is sent: what
/// the runner reads, instead of the command line.
pub(crate) struct AuditPlan {
    /// The run's seed: `--seed`, else 0 for `--snapshot` (snapshots compare runs request
    /// by request), else one from the clock.
    pub seed: u64,
    /// What the vendor profile says it changes, where `--vendor` named one.
    pub vendor_summary: Option<String>,
    /// The budgets, and what they may cost.
    pub cost_line: String,
    pub transport: Transport,
    pub settings: Settings,
    pub expectations: Expectations,
    /// A live baseline's server, known failures and migration plan.
    pub live: Option<(Server, Expectations, Plan)>,
    /// A recorded baseline to replay against the audited server.
    pub recorded: Option<Recording>,
    /// Where `--record-baseline` writes.
    pub recorder: Option<Recorder>,
    pub snapshot: bool,
    pub strict: bool,
    /// Where its reports go, and how its spend is told.
    pub outputs: Outputs,
}

impl AuditPlan {
    /// The plan of one audit of `target` named `label`, with the `baseline` decided.
    pub(crate) fn of(
        options: &Options,
        target: Target,
        label: &str,
        baseline: Option<Baseline>,
        fresh_seed: impl FnOnce() -> u64,
    ) -> Result<AuditPlan, RunError> {
        let way_in = way_in(&Addressing::of_endpoint(options), options)?;
        let seed = options
            .seed
            .unwrap_or_else(|| if options.snapshot { 0 } else { fresh_seed() });
        let mut settings = settings(options, seed)?;
        let expectations = apply_vendor(
            way_in.vendor.as_ref(),
            &target,
            &mut settings,
            known_failures(options, options.expectations.as_deref(), label)?,
        )?;
        let (live, recorded) = match baseline {
            None => (None, None),
            Some(Baseline::Live(target)) => (Some(migration(options, &settings, *target)?), None),
            Some(Baseline::Recorded(_)) if options.migration.load => {
                return Err(RunError::Usage(
                    "--load measures two servers alive at once; a recorded baseline (--baseline DIR) has no server to load".into(),
                ));
            }
            Some(Baseline::Recorded(recording)) => (None, Some(*recording)),
        };
        Ok(AuditPlan {
            seed,
            vendor_summary: way_in.vendor.as_ref().map(Profile::summary),
            cost_line: cost_line(options),
            transport: transport(target, way_in.access, options)?,
            settings,
            expectations,
            live,
            recorded,
            recorder: Recorder::of(options),
            snapshot: options.snapshot,
            strict: options.strict,
            outputs: Outputs::of(options, label),
        })
    }
}

/// What `--record-baseline` asks: where to write, whether texts stay, and the corpus
/// and query instruction to record (read only when the audit reached the server).
pub(crate) struct Recorder {
    dir: std::path::PathBuf,
    hashes_only: bool,
    corpus: Option<std::path::PathBuf>,
    corpus_sample: usize,
    instruction: Instruction,
}

impl Recorder {
    fn of(options: &Options) -> Option<Recorder> {
        let m = &options.migration;
        m.record_baseline.as_ref().map(|dir| Recorder {
            dir: dir.clone(),
            hashes_only: m.record_hashes_only,
            corpus: m.corpus.clone(),
            corpus_sample: m.corpus_sample as usize,
            instruction: instruction(options),
        })
    }

    /// The corpus as the audited server embeds it, recorded and written, after an
    /// audit that reached the server (its facts decide the requests).
    pub(crate) async fn record_and_write(
        &self,
        session: &embedcheck_core::session::Session,
        audit: &embedcheck_core::audit::ServerAudit,
    ) -> Result<String, RunError> {
        if let Some(why) = &audit.aborted {
            return Err(RecordingError::Server(why.clone()).into());
        }
        let corpus = corpus_of(self.corpus.as_deref(), self.corpus_sample)?;
        let recording =
            recording::record(session, &corpus, &self.instruction, &audit.label).await?;
        self.write(recording)
    }

    /// Writes `recording` (its texts as hashes only with `--record-hashes-only`) and
    /// says what it holds.
    pub(crate) fn write(&self, mut recording: Recording) -> Result<String, RunError> {
        if self.hashes_only {
            recording = recording.without_texts();
        }
        let bytes = recording.write(&self.dir)?;
        let refused = match recording.refused.len() {
            0 => String::new(),
            n => format!(" ({n} more refused even alone, recorded as refused)"),
        };
        Ok(format!(
            "recorded: {} documents{refused} and {} queries as {} embeds them, {} dimensions, in {} requests, into {} ({bytes} bytes)",
            recording.documents.len(),
            recording.queries.len(),
            recording.header.server,
            recording.header.dimensions,
            recording.header.requests,
            self.dir.join(recording::FILE).display()
        ))
    }
}

/// The load `--load` asks for, with its `--concurrency` and `--load-requests`.
pub(crate) fn load_plan(options: &Options) -> Option<LoadPlan> {
    let m = &options.migration;
    m.load.then(|| LoadPlan {
        concurrency: m.concurrency as usize,
        sequential: m.load_requests.sequential,
        concurrent: m.load_requests.concurrent,
        ..LoadPlan::default()
    })
}

/// The recording at `path`, read and checked, with its texts read back from
/// `--corpus` where it keeps them as hashes only.
fn recording(options: &Options, path: &std::path::Path) -> Result<Recording, RunError> {
    let recording = Recording::read(path)?;
    if recording.header.texts {
        return Ok(recording);
    }
    if options.migration.corpus.is_none() {
        return Err(RunError::Usage(
            "the recording keeps its texts as SHA-256 hashes only: give the corpus it was recorded from with --corpus".into(),
        ));
    }
    let corpus = Corpus::load(options.migration.corpus.as_deref().expect("checked"))?;
    recording
        .with_texts_from(&corpus)
        .map_err(|why| RunError::Usage(format!("--corpus is not the recording's: {why}")))
}

/// The corpus a migration compares or a recording records: `--corpus` (a stratified
/// sample of `--corpus-sample` documents where it holds more), else the shipped one.
pub(crate) fn corpus(options: &Options) -> Result<Corpus, RunError> {
    let m = &options.migration;
    corpus_of(m.corpus.as_deref(), m.corpus_sample as usize)
}

fn corpus_of(dir: Option<&std::path::Path>, sample: usize) -> Result<Corpus, RunError> {
    Ok(match dir {
        Some(dir) => sample::stratified(Corpus::load(dir)?, sample),
        None => Corpus::shipped(),
    })
}

/// How a client prefixes the query instruction itself: `--query-instruction` and
/// `--query-task`.
pub(crate) fn instruction(options: &Options) -> Instruction {
    Instruction {
        template: template(options),
        task: options.contracts.embeddings.query_task.clone(),
    }
}

/// `--query-instruction` when given, else Qwen3's template (with the default task,
/// the reference server's own instruction).
fn template(options: &Options) -> QueryTemplate {
    options
        .contracts
        .embeddings
        .query_instruction
        .clone()
        .unwrap_or_else(|| {
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
    let candidate = options
        .endpoint
        .first()
        .map(|e| contracts::target(e))
        .transpose()?;
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
    use clap::Parser;

    fn parse(words: &str) -> Options {
        Options::try_parse_from(std::iter::once("embedcheck").chain(words.split_whitespace()))
            .unwrap()
    }

    /// `--baseline` is decided once: a URL is a live server; a word that is neither a
    /// URL nor a path here, or both, is refused rather than guessed.
    #[test]
    fn the_baseline_is_a_server_or_a_recording_never_a_guess() {
        let live = baseline(&parse("--baseline http://127.0.0.1:9/v1")).unwrap();
        assert!(matches!(live, Some(Baseline::Live(_))));
        assert!(baseline(&parse("")).unwrap().is_none());
        let typo = baseline(&parse("--baseline no-such-recording"))
            .err()
            .unwrap()
            .to_string();
        assert!(typo.contains("neither a server's URL"), "{typo}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("http:").join("host")).unwrap();
        let both = format!("--baseline {}/http://host", dir.path().display());
        let both = baseline(&parse(&both)).err().unwrap().to_string();
        assert!(both.contains("both a URL and a path"), "{both}");
    }

    #[test]
    fn load_is_refused_for_servers_off_this_machine() {
        let local = contracts::target("http://127.0.0.1:1/v1").unwrap();
        let remote = contracts::target("https://api.example.com/v1").unwrap();
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
