//! Audits a persona the way `cargo test -- --endpoint URL --api-key-env …` audits a
//! server: every catalogued clause, the personas' key, a small large-batch size (fast)
//! and a fixed seed (reproducible).
//!
//! What a client relies on is declared as the study's client did: the Qwen3 query
//! instruction behind `input_type: "query"` (`--query-instruction`), and the
//! over-length policy the persona is configured with (`--overlength`), so a server
//! that does not apply its own policy is caught. `audit_with` takes other settings and
//! a few clauses instead, for tests of one hazard.

use embedcheck_core::audit::{ServerAudit, audit_session};
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::contracts::embeddings::facts::{EmbeddingsFacts, InputLimit};
use embedcheck_core::contracts::embeddings::reference::Reference;
use embedcheck_core::contracts::rerank::RerankSettings;
use embedcheck_core::contracts::rerank::reference::RerankReference;
use embedcheck_core::contracts::speech::SpeechSettings;
use embedcheck_core::contracts::speech::reference::SpeechReference;
use embedcheck_core::declared::{Overlength, QueryTemplate};
use embedcheck_core::http::Reply;
use embedcheck_core::http::{Secret, Transport};
use embedcheck_core::session::facts::UsageUnit;
use embedcheck_core::session::{ByContract, Interrupt, Logged, Session, Settings};
use embedcheck_core::verdict::Outcome;
use personas::{API_KEY, Persona};
use reference_server::{DEFAULT_QUERY_INSTRUCTION, OverlengthPolicy};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Audits `persona` on every catalogued clause with the run's settings. `aggressive`
/// also sends the probes that may take a server down.
pub async fn audit(persona: &Persona, aggressive: bool) -> ServerAudit {
    audit_with(persona, settings(persona, aggressive), &every_clause()).await
}

/// Every catalogued clause.
pub fn every_clause() -> Vec<&'static Clause> {
    Catalogue::shipped().clauses.iter().collect()
}

/// The settings [`audit`] audits `persona` with.
pub fn settings(persona: &Persona, aggressive: bool) -> Settings {
    Settings {
        seed: 7,
        aggressive,
        // A user of a server without a models listing (TEI) names its model.
        model: persona
            .quirks
            .contains(&personas::Quirk::ModelsListingEmpty404)
            .then(|| persona.config.model_id.clone()),
        contracts: ByContract::default()
            .with(EmbeddingsSettings {
                large_batch: 64,
                query_instruction: Some(qwen3_query_template()),
                overlength: match persona.config.overlength {
                    OverlengthPolicy::Reject => Overlength::Reject,
                    OverlengthPolicy::Truncate => Overlength::Truncate,
                    OverlengthPolicy::Aggregate => Overlength::Aggregate,
                },
                // A client of an aggregating server knows the limit it chunks to.
                max_input_tokens: (persona.config.overlength == OverlengthPolicy::Aggregate)
                    .then_some(persona.config.max_input_tokens as u64),
                reference: Some(known_answers(persona)),
                ..EmbeddingsSettings::default()
            })
            .with(RerankSettings {
                reference: Some(rerank_known_answers(persona)),
                // A user of a server that lists no model names the one it reranks with.
                model: persona
                    .quirks
                    .contains(&personas::Quirk::NoModelsRoute)
                    .then(|| persona.config.model_id.clone()),
                listwise: false,
            })
            .with(SpeechSettings {
                reference: Some(speech_known_answers(persona)),
                ..SpeechSettings::default()
            }),
        ..Settings::default()
    }
}

/// Starts `persona`, audits it on `clauses` with `settings` and the personas' key, and
/// stops it. The server's address is redacted from reasons, so results can be compared
/// across runs.
pub async fn audit_with(persona: &Persona, settings: Settings, clauses: &[&Clause]) -> ServerAudit {
    audit_logged(persona, settings, clauses, Duration::from_secs(10))
        .await
        .0
}

/// The audit of `persona` on the speech clauses alone, with `speech`'s options
/// (`--speech-model`, `--speech-model-class`).
pub async fn speech_audit(
    persona: &Persona,
    speech: embedcheck_core::contracts::speech::SpeechSettings,
) -> ServerAudit {
    let settings = settings(persona, false).with(speech);
    let speech: Vec<_> = every_clause()
        .into_iter()
        .filter(|c| c.contract() == embedcheck_core::contracts::speech::ID)
        .collect();
    audit_with(persona, settings, &speech).await
}

/// Asserts that every clause of `audit` was skipped with a reason holding each of
/// `words`.
pub fn assert_all_skipped(audit: &ServerAudit, words: &[&str]) {
    for result in &audit.results {
        assert_eq!(
            result.outcome,
            embedcheck_core::verdict::Outcome::Skip,
            "{}: {}",
            result.id,
            result.reason
        );
        for word in words {
            assert!(
                result.reason.contains(word),
                "{}: {}",
                result.id,
                result.reason
            );
        }
    }
}

/// [`audit_with`] with `--timeout` set to `timeout`, keeping the run's log: every
/// exchange and answer, for [`contradictions`].
pub async fn audit_logged(
    persona: &Persona,
    settings: Settings,
    clauses: &[&Clause],
    timeout: Duration,
) -> (ServerAudit, Vec<Logged>) {
    let server = persona.start().await;
    let target = contracts::target(&server.base_url()).expect("a persona URL is valid");
    let transport = Transport::new(target, Some(Secret::new(API_KEY.to_owned())), timeout);
    let mut session = Session::new(transport, settings, Interrupt::default());
    let mut audit = audit_session(&mut session, persona.name.to_owned(), clauses).await;
    let redact = |text: &mut String| *text = text.replace(&server.addr().to_string(), "[addr]");
    audit.results.iter_mut().for_each(|r| redact(&mut r.reason));
    (audit, session.log())
}

/// What the run's own log contradicts in the audit's reasons, one line each; empty
/// when nothing does. Read from the raw answers, not through the clauses' code:
/// - a 200 with a value that is not a finite number means RESP-004 cannot pass;
/// - a 200 to one input counting more tokens than the found limit, where usage counts
///   tokens, means LEN-005 cannot say no answer did;
/// - a cut a reason names ("after about N words") lies within what LEN-006's own
///   requests show: after the most words whose replacement changed the vector, at or
///   before the fewest whose replacement did not.
pub fn contradictions(audit: &ServerAudit, log: &[Logged]) -> Vec<String> {
    let mut found = Vec::new();
    let outcome = |id: &str| audit.results.iter().find(|r| r.id == id);
    let answers: Vec<&Reply> = log
        .iter()
        .filter_map(|l| l.reply.as_deref())
        .filter(|r| (200..300).contains(&r.status))
        .collect();
    if let Some(bad) = answers.iter().find_map(|r| not_finite(r))
        && outcome("RESP-004").is_some_and(|r| r.outcome == Outcome::Pass)
    {
        found.push(format!("RESP-004 passes, but a 200 of the run has {bad}"));
    }
    if let Some(limit) = known_limit(audit).filter(|_| usage_counts_tokens(audit)) {
        let over = answers.iter().find_map(|r| {
            let one = r.json.as_ref()?.get("data")?.as_array()?.len() == 1;
            let tokens = r.json.as_ref()?.pointer("/usage/prompt_tokens")?.as_u64()?;
            (one && tokens > limit + 2).then_some(tokens)
        });
        if let (Some(tokens), Some(r)) = (over, outcome("LEN-005"))
            && r.outcome == Outcome::Skip
        {
            found.push(format!(
                "LEN-005 skips ({}), but a 200 to one input counted {tokens} tokens for a {limit}-token limit",
                r.reason
            ));
        }
    }
    if let Some(r) = outcome("LEN-006").filter(|r| r.outcome == Outcome::Fail)
        && let (Some(named), Some((differs, same))) =
            (number_after(&r.reason, "after about "), cut_bound(log))
        && !(differs < named && named <= same)
    {
        found.push(format!(
            "LEN-006 names a cut after about {named} words, but its requests show the cut after {differs} and at or before {same} words"
        ));
    }
    found
}

/// A value of an embedding in `reply` that is not a finite number, described.
fn not_finite(reply: &Reply) -> Option<String> {
    let Some(json) = &reply.json else {
        let text = String::from_utf8_lossy(&reply.body);
        return (text.contains("NaN") || text.contains("Infinity"))
            .then(|| "a bare NaN or Infinity".to_owned());
    };
    json.get("data")?
        .as_array()?
        .iter()
        .find_map(|item| match item.get("embedding")? {
            Value::Array(values) => values
                .iter()
                .find(|v| !v.is_number())
                .map(|v| format!("the value {v}")),
            Value::String(text) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .ok()?;
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .find(|v| !v.is_finite())
                    .map(|v| format!("the base64 value {v}"))
            }
            _ => None,
        })
}

fn known_limit(audit: &ServerAudit) -> Option<u64> {
    let embeddings = audit.facts.contracts.get::<EmbeddingsFacts>()?;
    match &embeddings.input_limit.as_ref()?.value {
        InputLimit::Known { tokens, .. } => Some(*tokens),
        InputLimit::Unknown { .. } => None,
    }
}

fn usage_counts_tokens(audit: &ServerAudit) -> bool {
    matches!(
        audit.facts.usage_unit.as_ref().map(|f| &f.value),
        Some(UsageUnit::Tokens { .. })
    )
}

/// The number right after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> Option<usize> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Where LEN-006's own requests place the cut: each of its inputs is `m` words of one
/// stream then other words, all of one length `n`; the one of the stream alone (`m =
/// n`) is the whole input's vector. `(most m that changed it, fewest m that did not)`.
fn cut_bound(log: &[Logged]) -> Option<(usize, usize)> {
    let sent: Vec<(Vec<String>, Vec<f64>)> = log
        .iter()
        .filter(|l| l.clause == Some("LEN-006"))
        .filter_map(|l| {
            let body: Value = serde_json::from_slice(l.request_body.as_deref()?).ok()?;
            let words = body
                .get("input")?
                .as_str()?
                .split(' ')
                .map(str::to_owned)
                .collect();
            let vector = first_vector(l.reply.as_deref()?)?;
            Some((words, vector))
        })
        .collect();
    let (stream, whole) = sent.first()?;
    let n = stream.len();
    let vocabulary: std::collections::BTreeSet<&String> = stream.iter().collect();
    let (mut differs, mut same) = (0, n);
    for (words, vector) in sent.iter().filter(|(w, _)| w.len() == n) {
        let m = words.iter().take_while(|w| vocabulary.contains(w)).count();
        if cosine(whole, vector) > 0.999_999 {
            same = same.min(m);
        } else {
            differs = differs.max(m);
        }
    }
    Some((differs, same))
}

fn first_vector(reply: &Reply) -> Option<Vec<f64>> {
    let values = reply
        .json
        .as_ref()?
        .pointer("/data/0/embedding")?
        .as_array()?;
    values.iter().map(Value::as_f64).collect()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The model's own vectors for the probe texts, as `--reference` would read them.
pub fn known_answers(persona: &Persona) -> Arc<Reference> {
    let file = personas::known_answers(&persona.config);
    Arc::new(Reference::parse(&file, "the persona's known answers").expect("a valid reference"))
}

/// The persona's reranker's own scores, as `--rerank-reference` would read them.
pub fn rerank_known_answers(persona: &Persona) -> Arc<RerankReference> {
    let file = personas::rerank_known_answers(&persona.config);
    Arc::new(
        RerankReference::parse(&file, "the persona's rerank known answers")
            .expect("a valid rerank reference"),
    )
}

/// The persona's transcriber's own text of the suite's clip, as `--speech-reference`
/// would read it.
pub fn speech_known_answers(persona: &Persona) -> Arc<SpeechReference> {
    let file = personas::speech_known_answers(&persona.config);
    Arc::new(
        SpeechReference::parse(&file, "the persona's speech known answers")
            .expect("a valid speech reference"),
    )
}

/// `Instruct: {task}\nQuery: {text}`, which the default task fills to the reference
/// server's own query instruction.
fn qwen3_query_template() -> QueryTemplate {
    format!("{DEFAULT_QUERY_INSTRUCTION}{{text}}")
        .parse()
        .expect("the template has a {text} placeholder")
}

/// `reason` with the count of throttling answers replaced: how many requests land in a
/// gateway's cooldown depends on the pace of the run (4 one run, 6 the next, for
/// RRL-007's breaker), while the reason's point does not.
pub fn paced(reason: &str) -> String {
    match reason.split_once(" throttling answers ") {
        Some((counts, rest)) if counts.split(" of ").all(|n| n.parse::<u32>().is_ok()) => {
            format!("[n] of [n] throttling answers {rest}")
        }
        _ => reason.to_owned(),
    }
}
