//! A server compared with a recorded baseline (`--baseline DIR`), with no old server
//! running: the recording's requests sent again, batch by batch as recorded, and each
//! text's vector compared with its recorded self.
//!
//! Failures hit some texts, not the mean (llama.cpp's median cosine 0.999999 with a
//! minimum of 0.60 on Korean text, measured in the lab), so the verdict rests on each
//! text's cosine, in bands: identical (1 − cos ≤ 1e-5), equivalent (≥ 0.999: batch,
//! GPU and half-precision noise stays above 0.9995 in every case found, bge-m3 across
//! batch sizes in FlagEmbedding#542 among them, and vLLM's own tests use 0.999),
//! degraded (0.99 to 0.999, reported) and changed (below 0.99, named). The measured
//! noise of either server only ever loosens a band, never tightens it.

pub mod rankings;

use super::recording::{BARE, Recorded, Recording};
use crate::contracts::embeddings;
use crate::session::Session;
use crate::vectors::cosine;
use rankings::{QualityGate, Rankings};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// 1 − cosine at or below which a text's vector is its recorded self.
pub const IDENTICAL_GAP: f64 = 1e-5;

/// Cosine at or above which a text's vector is the same embedding: what noise
/// explains.
pub const EQUIVALENT: f64 = crate::vectors::NOISE_BOUND;

/// Cosine below which a text's vector changed.
pub const CHANGED: f64 = 0.99;

/// How many of the lowest cosines a replay names.
const WORST: usize = 10;

/// Where one text's cosine falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Changed,
    Degraded,
    Equivalent,
    Identical,
}

/// The replay's verdict: the band of its lowest text, unless nothing could be
/// compared or the vectors' shape changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayVerdict {
    Identical,
    Equivalent,
    Degraded,
    Changed,
    /// The whole space changed, so old and new vectors cannot share an index, but the
    /// new server ranks as well on its own.
    ReindexRequired,
    /// The whole space changed and the new server ranks worse on the corpus's labels.
    Broken,
    NotCompared,
}

impl fmt::Display for ReplayVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReplayVerdict::Identical => "identical",
            ReplayVerdict::Equivalent => "equivalent",
            ReplayVerdict::Degraded => "degraded",
            ReplayVerdict::Changed => "changed",
            ReplayVerdict::ReindexRequired => "re-index required",
            ReplayVerdict::Broken => "broken",
            ReplayVerdict::NotCompared => "not compared",
        })
    }
}

/// The bands' edges this replay judged with: the fixed ones, loosened where either
/// server's own repeat noise is wider.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    pub identical_gap: f64,
    pub equivalent: f64,
    pub changed: f64,
}

impl Thresholds {
    /// The fixed edges, loosened by `noise_gap` (1 − the lowest cosine of a repeat).
    pub fn loosened_by(noise_gap: f64) -> Thresholds {
        Thresholds {
            identical_gap: IDENTICAL_GAP.max(noise_gap),
            equivalent: EQUIVALENT.min(1.0 - noise_gap),
            changed: CHANGED.min(1.0 - noise_gap),
        }
    }

    fn band(&self, cosine: f64) -> Band {
        if 1.0 - cosine <= self.identical_gap {
            Band::Identical
        } else if cosine >= self.equivalent {
            Band::Equivalent
        } else if cosine >= self.changed {
            Band::Degraded
        } else {
            Band::Changed
        }
    }
}

/// One text's vector against its recorded self.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextCosine {
    /// `document en-01`, `query q-03 (bare)`.
    pub text: String,
    pub cosine: f64,
    pub band: Band,
}

/// A request whose usage count differs from the recorded one: a document batch, or
/// one form of the queries; every text it held is named.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TokenChange {
    /// The recorded document batch; `None` for the queries' request.
    pub batch: Option<usize>,
    /// The query form of the queries' request (`bare`, `prefixed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queries: Option<String>,
    pub ids: Vec<String>,
    pub recorded: u64,
    pub now: u64,
}

impl TokenChange {
    /// The request, as reports name it: `batch 3`, `the bare queries`.
    pub fn request(&self) -> String {
        match (&self.queries, self.batch) {
            (Some(form), _) => format!("the {form} queries"),
            (None, Some(batch)) => format!("batch {}", batch + 1),
            (None, None) => "a request".to_owned(),
        }
    }
}

/// The vectors' L2 norms then and now: a normalisation change shows here, not in the
/// cosine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Norms {
    pub recorded_median: f64,
    pub now_median: f64,
}

impl Norms {
    /// Whether the norms moved by more than a thousandth of the recorded ones.
    pub fn changed(&self) -> bool {
        (self.now_median - self.recorded_median).abs() > 1e-3 * self.recorded_median.abs()
    }
}

/// What the recording says of itself, for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordedFrom {
    pub server: String,
    pub model: String,
    pub recorded_unix: u64,
    pub embedcheck: String,
    pub dimensions: usize,
    pub documents: usize,
    pub queries: usize,
}

/// A server compared with a recorded baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Replay {
    pub recorded: RecordedFrom,
    pub thresholds: Thresholds,
    pub verdict: ReplayVerdict,
    /// The verdict in one sentence a server author can act on.
    pub reason: String,
    /// Texts compared, and the lowest, first-percentile and median cosine.
    pub compared: usize,
    pub cosine_min: Option<f64>,
    pub cosine_p1: Option<f64>,
    pub cosine_median: Option<f64>,
    /// Texts per band.
    pub bands: BTreeMap<Band, usize>,
    /// The lowest cosines, lowest first.
    pub worst: Vec<TextCosine>,
    /// Requests that failed and vectors of the wrong shape, each a sentence.
    pub failures: Vec<String>,
    pub norms: Option<Norms>,
    pub tokens_changed: Vec<TokenChange>,
    /// What `GET /models` listed when recorded and now, where that differs: what the
    /// server says of itself, reported and never judged.
    pub listed_models: Option<(Vec<String>, Vec<String>)>,
    /// Every other field of what the server says of itself that changed: reported,
    /// never judged.
    pub fingerprint_changes: Vec<super::fingerprint::FingerprintChange>,
    /// Documents refused when recorded and refused again.
    pub refused_alike: usize,
    /// Documents the server answers otherwise than when recorded: refused then and
    /// answered now, each a sentence.
    pub answers_changed: Vec<String>,
    /// "Can I keep my index?": the rankings against the recorded ones, and their quality
    /// on the corpus's labels.
    pub rankings: Option<Rankings>,
    /// Requests the replay sent.
    pub requests: u64,
}

/// One answer's vectors and usage count, or why it has none.
async fn embed(
    s: &Session,
    texts: &[&str],
    fields: &Map<String, Value>,
) -> Result<(Vec<Vec<f64>>, Option<u64>), String> {
    let (vectors, tokens, _) = super::vectors::embed_with(s, texts, fields, false).await?;
    Ok((vectors, tokens))
}

/// What the replay gathers before judging.
#[derive(Default)]
struct Gathered {
    cosines: Vec<TextCosine>,
    failures: Vec<String>,
    norms: (Vec<f64>, Vec<f64>),
    tokens_changed: Vec<TokenChange>,
    width_changed: Option<(usize, usize)>,
    refused_alike: usize,
    answers_changed: Vec<String>,
    /// The new vectors by id: documents, and queries in their bare form.
    documents: BTreeMap<String, Vec<f64>>,
    queries: BTreeMap<String, Vec<f64>>,
}

impl Gathered {
    /// Compares one text's new vector with its recorded self.
    fn compare(&mut self, text: String, recorded: &Recorded, now: &[f64], thresholds: &Thresholds) {
        let Ok(then) = recorded.values() else {
            self.failures
                .push(format!("{text}: the recorded vector cannot be read"));
            return;
        };
        if then.len() != now.len() {
            self.width_changed.get_or_insert((then.len(), now.len()));
            return;
        }
        let norm: f64 = now.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            self.failures.push(format!(
                "{text}: a vector of norm {norm} (zero or not finite)"
            ));
            return;
        }
        self.norms.0.push(recorded.norm);
        self.norms.1.push(norm);
        let cosine = cosine(&then, now);
        self.cosines.push(TextCosine {
            text,
            cosine,
            band: thresholds.band(cosine),
        });
    }
}

/// Sends the recording's requests to the server of `s` and compares every text.
pub async fn replay(s: &Session, recording: &Recording) -> Replay {
    let before = s.requests_sent();
    let recorded_gap = recording
        .header
        .noise
        .min_cosine
        .map_or(0.0, |c| (1.0 - c).max(0.0));
    // The audit's own repeat (CONS-001's), where it measured one: 0 when it did not.
    let audited_gap = (1.0 - embeddings::learned(s).noise().cosine).max(0.0);
    let thresholds = Thresholds::loosened_by(recorded_gap.max(audited_gap));
    let mut gathered = Gathered::default();
    let listed_now = super::recording::listed_models(s).await;
    replay_documents(s, recording, &thresholds, &mut gathered).await;
    replay_queries(s, recording, &thresholds, &mut gathered).await;
    // After the documents, so the log holds an embeddings answer's `Server` header;
    // the identity pages' requests are counted with the replay's.
    let fingerprint_now = super::fingerprint::of(s).await;
    let mut replay = judge(recording, thresholds, gathered, s.requests_sent() - before);
    let listed_then = &recording.header.listed_models;
    if *listed_then != listed_now {
        replay.listed_models = Some((listed_then.clone(), listed_now));
    }
    replay.fingerprint_changes =
        super::fingerprint::changes(&recording.header.fingerprint, &fingerprint_now);
    replay
}

/// Every recorded batch, with the recorded fields and the same documents in the same
/// order.
async fn replay_documents(s: &Session, recording: &Recording, t: &Thresholds, g: &mut Gathered) {
    let fields = &recording.header.template.document_fields;
    for batch in &recording.batches {
        if batch.alone {
            replay_alone(s, recording, batch, t, g).await;
            continue;
        }
        let documents: Vec<_> = recording
            .documents
            .iter()
            .filter(|d| d.batch == batch.index)
            .collect();
        let texts: Vec<&str> = documents.iter().map(|d| d.text.as_str()).collect();
        match embed(s, &texts, fields).await {
            Ok((vectors, tokens)) => {
                for (document, vector) in documents.iter().zip(&vectors) {
                    g.compare(
                        format!("document {}", document.id),
                        &document.recorded,
                        vector,
                        t,
                    );
                    g.documents.insert(document.id.clone(), vector.clone());
                }
                if let (Some(recorded), Some(now)) = (batch.tokens, tokens)
                    && recorded != now
                {
                    g.tokens_changed.push(TokenChange {
                        batch: Some(batch.index),
                        queries: None,
                        ids: documents.iter().map(|d| d.id.clone()).collect(),
                        recorded,
                        now,
                    });
                }
            }
            Err(why) => g
                .failures
                .push(format!("document batch {} answered {why}", batch.index + 1)),
        }
    }
}

/// A batch the recording sent one document at a time, because the server refused it
/// whole: each document alone again, answered or refused as it was then.
async fn replay_alone(
    s: &Session,
    recording: &Recording,
    batch: &super::recording::Batch,
    t: &Thresholds,
    g: &mut Gathered,
) {
    let fields = &recording.header.template.document_fields;
    for id in &batch.ids {
        let recorded = recording.documents.iter().find(|d| &d.id == id);
        let refused = recording.refused.iter().find(|r| &r.id == id);
        let text = match (recorded, refused) {
            (Some(d), _) => d.text.as_str(),
            (None, Some(r)) => r.text.as_str(),
            (None, None) => continue,
        };
        let now = embed(s, &[text], fields).await;
        match (recorded, refused, now) {
            (Some(d), _, Ok((vectors, _))) => {
                g.compare(format!("document {id}"), &d.recorded, &vectors[0], t);
                g.documents.insert(id.clone(), vectors[0].clone());
            }
            (Some(_), _, Err(why)) => g
                .failures
                .push(format!("document {id} (alone, as recorded) answered {why}")),
            (None, Some(_), Err(_)) => g.refused_alike += 1,
            (None, Some(r), Ok(_)) => g.answers_changed.push(format!(
                "document {id}: answered now, refused when recorded ({})",
                r.answer
            )),
            (None, None, _) => {}
        }
    }
}

/// Each recorded query form, one request a form, as recorded.
async fn replay_queries(s: &Session, recording: &Recording, t: &Thresholds, g: &mut Gathered) {
    let template = &recording.header.template;
    let forms: Vec<&String> = recording
        .queries
        .first()
        .map(|q| q.forms.keys().collect())
        .unwrap_or_default();
    let instruction = super::retrieval::Instruction {
        template: template.query_template.parse().unwrap_or_else(|_| {
            super::retrieval::Instruction::QWEN3_TEMPLATE
                .parse()
                .expect("{text}")
        }),
        task: template.query_task.clone(),
    };
    for form in forms {
        let texts: Vec<String> = recording
            .queries
            .iter()
            .map(|q| match form.as_str() {
                super::recording::PREFIXED => instruction.prefixed(&q.text),
                _ => q.text.clone(),
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        match embed(s, &texts, &Map::new()).await {
            Ok((vectors, tokens)) => {
                if let (Some(recorded), Some(now)) =
                    (recording.header.query_tokens.get(form.as_str()), tokens)
                    && *recorded != now
                {
                    g.tokens_changed.push(TokenChange {
                        batch: None,
                        queries: Some(form.clone()),
                        ids: recording.queries.iter().map(|q| q.id.clone()).collect(),
                        recorded: *recorded,
                        now,
                    });
                }
                for (query, vector) in recording.queries.iter().zip(&vectors) {
                    if let Some(recorded) = query.forms.get(form) {
                        g.compare(format!("query {} ({form})", query.id), recorded, vector, t);
                    }
                    if form == BARE {
                        g.queries.insert(query.id.clone(), vector.clone());
                    }
                }
            }
            Err(why) => g
                .failures
                .push(format!("the {form} queries answered {why}")),
        }
    }
}

/// The value at fraction `q` of sorted `values` (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[((last as f64) * q).round() as usize])
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    quantile(&values, 0.5)
}

/// The replay's verdict and figures from what it gathered.
fn judge(recording: &Recording, thresholds: Thresholds, mut g: Gathered, requests: u64) -> Replay {
    g.cosines.sort_by(|a, b| a.cosine.total_cmp(&b.cosine));
    let sorted: Vec<f64> = g.cosines.iter().map(|c| c.cosine).collect();
    let mut bands: BTreeMap<Band, usize> = BTreeMap::new();
    for c in &g.cosines {
        *bands.entry(c.band).or_default() += 1;
    }
    let lowest = g.cosines.first().map(|c| c.band);
    let (verdict, reason) = match (g.width_changed, lowest) {
        (Some((then, now)), _) => (
            ReplayVerdict::Changed,
            format!(
                "the vectors have {now} values where {then} were recorded: a different model or `dimensions`; every index built from the recording must be rebuilt"
            ),
        ),
        (None, _) if !g.failures.is_empty() && g.failures.iter().any(|f| f.contains("norm")) => (
            ReplayVerdict::Changed,
            format!(
                "{}: the server answers vectors no index can use",
                g.failures[0]
            ),
        ),
        (None, None) => (
            ReplayVerdict::NotCompared,
            format!(
                "no text could be compared: {}",
                g.failures
                    .first()
                    .map_or("nothing was recorded", String::as_str)
            ),
        ),
        (None, Some(band)) => verdict_of(band, &g.cosines, &bands),
    };
    let rankings = rankings::compare(recording, &g.documents, &g.queries);
    let whole_space = g.width_changed.is_some()
        || quantile(&sorted, 0.5).is_some_and(|median| median < thresholds.changed);
    let (verdict, reason) = match &rankings {
        Some(r) if verdict == ReplayVerdict::Changed && whole_space => {
            let moved = match (g.width_changed, quantile(&sorted, 0.5)) {
                (None, Some(median)) => format!(
                    "the whole space moved: {} of {} texts below {} with their recorded vectors (median cosine {median:.4})",
                    bands.get(&Band::Changed).copied().unwrap_or(0),
                    sorted.len(),
                    thresholds.changed
                ),
                _ => reason,
            };
            space_verdict(&moved, r)
        }
        _ => (verdict, reason),
    };
    let norms = match (median(g.norms.0.clone()), median(g.norms.1.clone())) {
        (Some(recorded_median), Some(now_median)) => Some(Norms {
            recorded_median,
            now_median,
        }),
        _ => None,
    };
    Replay {
        recorded: RecordedFrom {
            server: recording.header.server.clone(),
            model: recording.header.model.clone(),
            recorded_unix: recording.header.recorded_unix,
            embedcheck: recording.header.embedcheck.clone(),
            dimensions: recording.header.dimensions,
            documents: recording.documents.len(),
            queries: recording.queries.len(),
        },
        thresholds,
        verdict,
        reason,
        compared: g.cosines.len(),
        cosine_min: sorted.first().copied(),
        cosine_p1: quantile(&sorted, 0.01),
        cosine_median: quantile(&sorted, 0.5),
        bands,
        worst: g.cosines.iter().take(WORST).cloned().collect(),
        failures: g.failures,
        norms,
        tokens_changed: g.tokens_changed,
        listed_models: None,
        fingerprint_changes: Vec::new(),
        refused_alike: g.refused_alike,
        answers_changed: g.answers_changed,
        rankings,
        requests,
    }
}

/// When the whole space changed, which of re-index required and broken the rankings
/// show, or that they cannot tell: `changed` names the change.
fn space_verdict(changed: &str, r: &Rankings) -> (ReplayVerdict, String) {
    let mixed = r.mixed_overlap.map_or(String::new(), |m| {
        format!(
            " (new queries against the recorded vectors: {:.0} %)",
            100.0 * m
        )
    });
    let agreement = format!(
        "its fresh rankings keep {:.0} % of the recorded top 10{mixed}",
        100.0 * r.fresh_overlap
    );
    let figures = |q: &rankings::Quality| {
        format!(
            "nDCG@10 {:.3} recorded, {:.3} now (difference {:+.3}, 95 % interval {:+.3} to {:+.3}, {} judged queries)",
            q.recorded.ndcg_10,
            q.fresh.ndcg_10,
            q.ndcg_delta,
            q.interval.0,
            q.interval.1,
            q.queries
        )
    };
    match r.quality.map(|q| (q.gate, q)) {
        Some((QualityGate::Lower, q)) => {
            return (
                ReplayVerdict::Broken,
                format!(
                    "{changed}; the new server ranks worse on the corpus's labels: {}, the whole interval below zero",
                    figures(&q)
                ),
            );
        }
        Some((QualityGate::NotLower, q)) => {
            return (
                ReplayVerdict::ReindexRequired,
                format!(
                    "{changed}; the new server ranks as well on the corpus's labels: {}, the interval above the margin of -{}; re-embed the corpus, old and new vectors cannot share an index",
                    figures(&q),
                    rankings::MARGIN
                ),
            );
        }
        _ => {}
    }
    if r.fresh_agree() {
        return (
            ReplayVerdict::ReindexRequired,
            format!(
                "{changed}; {agreement}, as under a rotation of the space: re-embed the corpus, old and new vectors cannot share an index"
            ),
        );
    }
    let labels = match r.quality {
        Some(q) if q.gate == QualityGate::Undecided => format!(
            "the labels cannot tell: {}, the interval reaching below the margin of -{} and above zero",
            figures(&q),
            rankings::MARGIN
        ),
        Some(q) => format!(
            "{} judged queries are too few for an interval (at least {} needed)",
            q.queries,
            rankings::FLOOR_QUERIES
        ),
        None => "there are no labels".to_owned(),
    };
    (
        ReplayVerdict::Changed,
        format!("{changed}; {agreement}, and {labels}: quality unknown"),
    )
}

/// The verdict of the lowest text's band, in a sentence naming the figures.
fn verdict_of(
    lowest: Band,
    cosines: &[TextCosine],
    bands: &BTreeMap<Band, usize>,
) -> (ReplayVerdict, String) {
    let n = cosines.len();
    let count = |band| bands.get(&band).copied().unwrap_or(0);
    let worst = &cosines[0];
    match lowest {
        Band::Identical => (
            ReplayVerdict::Identical,
            format!(
                "all {n} texts identical to the recording (lowest cosine {:.6})",
                worst.cosine
            ),
        ),
        Band::Equivalent => (
            ReplayVerdict::Equivalent,
            format!(
                "all {n} texts the same embeddings as recorded (lowest cosine {:.6}, {}): an index built from the recording keeps working",
                worst.cosine, worst.text
            ),
        ),
        Band::Degraded => (
            ReplayVerdict::Degraded,
            format!(
                "{} of {n} texts moved to a cosine between 0.99 and 0.999 with their recorded vectors (lowest {:.4}, {}), none below",
                count(Band::Degraded),
                worst.cosine,
                worst.text
            ),
        ),
        Band::Changed => {
            let named: Vec<String> = cosines
                .iter()
                .take_while(|c| c.band == Band::Changed)
                .take(3)
                .map(|c| format!("{} {:.4}", c.text, c.cosine))
                .collect();
            (
                ReplayVerdict::Changed,
                format!(
                    "{} of {n} texts changed (cosine below 0.99 with their recorded vectors): {}",
                    count(Band::Changed),
                    named.join(", ")
                ),
            )
        }
    }
}

impl Replay {
    /// `against the baseline recorded from vllm (40 documents, 14 queries): equivalent; …`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "against the baseline recorded from {} ({} documents, {} queries): {}; {}",
            self.recorded.server,
            self.recorded.documents,
            self.recorded.queries,
            self.verdict,
            self.reason
        );
        if let Some(norms) = self.norms.filter(Norms::changed) {
            line.push_str(&format!(
                "; norms changed (median {:.4} recorded, {:.4} now): a dot-product or L2 index ranks differently",
                norms.recorded_median, norms.now_median
            ));
        }
        if !self.tokens_changed.is_empty() {
            let texts: usize = self.tokens_changed.iter().map(|c| c.ids.len()).sum();
            line.push_str(&format!(
                "; usage counts changed in {} recorded requests ({texts} texts)",
                self.tokens_changed.len()
            ));
        }
        if let Some((then, now)) = &self.listed_models {
            line.push_str(&format!(
                "; GET /models listed {then:?} when recorded, {now:?} now (what the server says of itself, not judged)"
            ));
        }
        if let Some(first) = self.fingerprint_changes.first() {
            line.push_str(&format!(
                "; {} of what the server says of itself changed, first {} (not judged)",
                self.fingerprint_changes.len(),
                first.sentence()
            ));
        }
        if self.refused_alike > 0 {
            line.push_str(&format!(
                "; {} documents refused as when recorded",
                self.refused_alike
            ));
        }
        if let Some(first) = self.answers_changed.first() {
            line.push_str(&format!(
                "; {} answered otherwise: {first}",
                self.answers_changed.len()
            ));
        }
        if !self.failures.is_empty() {
            line.push_str(&format!(
                "; {} not compared: {}",
                self.failures.len(),
                self.failures[0]
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_follow_the_stated_edges_and_noise_only_loosens_them() {
        let fixed = Thresholds::loosened_by(0.0);
        assert_eq!(fixed.band(1.0 - 1e-6), Band::Identical);
        assert_eq!(fixed.band(0.9995), Band::Equivalent);
        assert_eq!(fixed.band(0.995), Band::Degraded);
        assert_eq!(fixed.band(0.95), Band::Changed);
        let noisy = Thresholds::loosened_by(2e-3);
        assert_eq!(
            noisy.band(0.9985),
            Band::Identical,
            "within the server's own noise"
        );
        assert!(noisy.equivalent <= EQUIVALENT && noisy.changed <= CHANGED);
        let quiet = Thresholds::loosened_by(1e-9);
        assert_eq!(quiet, fixed, "a quieter server never tightens a band");
    }

    fn cosines(values: &[f64]) -> Gathered {
        let t = Thresholds::loosened_by(0.0);
        Gathered {
            cosines: values
                .iter()
                .enumerate()
                .map(|(i, c)| TextCosine {
                    text: format!("document d{i}"),
                    cosine: *c,
                    band: t.band(*c),
                })
                .collect(),
            ..Gathered::default()
        }
    }

    fn recording() -> Recording {
        super::super::recording::tests::sample(4, 0, 8)
    }

    #[test]
    fn the_lowest_text_decides_and_is_named() {
        let t = Thresholds::loosened_by(0.0);
        let r = judge(&recording(), t, cosines(&[1.0, 0.99999999, 0.9999]), 3);
        assert_eq!(r.verdict, ReplayVerdict::Equivalent);
        let r = judge(&recording(), t, cosines(&[1.0, 0.995, 0.9999]), 3);
        assert_eq!(r.verdict, ReplayVerdict::Degraded);
        assert!(r.reason.starts_with("1 of 3 texts moved"), "{}", r.reason);
        let r = judge(&recording(), t, cosines(&[1.0, 0.60, 0.98, 0.9999]), 4);
        assert_eq!(r.verdict, ReplayVerdict::Changed);
        assert_eq!(
            r.reason,
            "2 of 4 texts changed (cosine below 0.99 with their recorded vectors): document d1 0.6000, document d2 0.9800"
        );
        assert_eq!(r.worst[0].text, "document d1");
        let r = judge(&recording(), t, cosines(&[1.0, 1.0]), 2);
        assert_eq!(r.verdict, ReplayVerdict::Identical);
    }

    #[test]
    fn another_width_is_changed_and_nothing_compared_is_not_a_pass() {
        let t = Thresholds::loosened_by(0.0);
        let mut g = cosines(&[]);
        g.width_changed = Some((384, 256));
        assert_eq!(judge(&recording(), t, g, 1).verdict, ReplayVerdict::Changed);
        let mut g = cosines(&[]);
        g.failures.push("document batch 1 answered 500".to_owned());
        let r = judge(&recording(), t, g, 1);
        assert_eq!(r.verdict, ReplayVerdict::NotCompared);
        assert_eq!(
            r.reason,
            "no text could be compared: document batch 1 answered 500"
        );
    }

    #[test]
    fn a_zero_vector_is_named() {
        let t = Thresholds::loosened_by(0.0);
        let mut g = Gathered::default();
        let recorded = Recorded::of(&[0.6, 0.8]);
        g.compare("document d0".to_owned(), &recorded, &[0.0, 0.0], &t);
        let r = judge(&recording(), t, g, 1);
        assert_eq!(r.verdict, ReplayVerdict::Changed);
        assert!(
            r.reason.starts_with("document d0: a vector of norm 0"),
            "{}",
            r.reason
        );
    }
}
