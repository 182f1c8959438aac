//! From options to what a run needs: settings, keys, the baseline and the migration
//! plan. Nothing here sends a request.

use crate::error::RunError;
use crate::options::Options;
use embedcheck_core::declared::QueryTemplate;
use embedcheck_core::http::{Secret, Target, Transport};
use embedcheck_core::migration::corpus::Corpus;
use embedcheck_core::migration::latency::LoadPlan;
use embedcheck_core::migration::retrieval::Instruction;
use embedcheck_core::migration::{Plan, Server};
use embedcheck_core::reference::Reference;
use embedcheck_core::session::Settings;
use std::sync::Arc;
use std::time::Duration;

/// The key from the variable the user named; an unset variable is a usage error
/// rather than a silent unauthenticated run.
pub(crate) fn api_key(options: &Options) -> Result<Option<Secret>, RunError> {
    key_from_env(options.api_key_env.as_deref(), "--api-key-env")
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
        max_tokens: options.max_tokens,
        large_batch: options.large_batch as usize,
        max_retry_wait: Duration::from_secs(options.max_retry_wait),
        seed,
        aggressive: options.aggressive,
        cases: options.cases,
        matryoshka: options.matryoshka,
        overlength: options.overlength,
        max_input_tokens: options.max_input_tokens,
        query_instruction: options.query_instruction.clone(),
        query_task: options.query_task.clone(),
        reference: options.reference.as_deref().map(reference).transpose()?,
        reference_threshold: options.reference_threshold,
    })
}

/// A reference file, read once and shared by every server that uses it.
pub(crate) fn reference(path: &std::path::Path) -> Result<Arc<Reference>, RunError> {
    Ok(Arc::new(Reference::load(path)?))
}

/// The baseline server and the plan, when `--baseline` asks for a migration audit.
pub(crate) fn migration(
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
            key_from_env(m.baseline_api_key_env.as_deref(), "--baseline-api-key-env")?,
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
    let candidate = options
        .endpoint
        .first()
        .map(|e| Target::parse(e))
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

    #[test]
    fn load_is_refused_for_servers_off_this_machine() {
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
