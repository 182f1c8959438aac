//! With the fixes applied: the corpus and the queries sent again to the candidate as
//! a migrated client sends them once it follows "What to change", and compared with
//! what the old client got from the baseline. This turns the advice into a
//! demonstrated fix, or shows what still differs.
//!
//! Each client-side change is applied only when its finding is there:
//! - **over-length** (the baseline truncated silently, the candidate refuses): a
//!   document the candidate refuses alone is cut to the longest prefix it accepts.
//!   The suite has no tokenizer, so the cut is at whole characters, found by
//!   bisection against the candidate's own refusals (its limit, in its tokens);
//!   a document that failed only with its batch is sent whole;
//! - **instruction** (the baseline applied one for `input_type`, the candidate does
//!   not): the queries go with the instruction prefixed by the client;
//! - **dimensions** (the baseline honoured `dimensions`, the candidate does not): the
//!   old client's reduced-size request is sent without `dimensions`, and the vector
//!   is cut to that size and re-normalised in the client.
//!
//! ```text
//! 40 of 40 documents embedded (20 cut: 161–202 characters kept, 177 requests)
//! cosine with the old client's vectors: min 0.9934 (ko-17) · median 1.0000
//! rankings: overlap@5 1.00 · top hit changed for none of 14 queries
//! ```

use super::contract::{Expectation, Judgement, Topic};
use super::corpus::Corpus;
use super::retrieval::{self, QueryResult, QueryVectors, Scenario};
use super::vectors::{self, DocumentCosine, Embedded, Fields, Judged, Spread};
use crate::contracts::embeddings::facts::OverlengthPolicy;
use crate::contracts::embeddings::requests::{self, SENTENCE, body};
use crate::http::Reply;
use crate::session::Session;
use crate::vectors::{cosine, norm, renormalised_prefix};
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;

/// The re-run with the client-side fixes, and how close it comes to the old client.
#[derive(Clone, Debug, Serialize)]
pub struct FixesApplied {
    /// Each client-side change as applied.
    pub applied: Vec<String>,
    pub documents: usize,
    /// Documents the candidate embedded with the fixes.
    pub embedded: usize,
    /// Documents compared: embedded with the fixes and by the baseline.
    pub compared: usize,
    /// Documents cut before sending to the candidate, with how far.
    pub cut: Vec<Cut>,
    /// Documents the baseline refuses, cut as its client must already cut them (the
    /// candidate is sent the same text).
    pub old_client_cut: Vec<Cut>,
    /// Documents that had failed only with their batch and embed whole.
    pub whole: Vec<String>,
    /// Documents still not embedded, and why.
    pub not_embedded: Vec<String>,
    /// Documents the candidate embedded that the old client had no vector for.
    pub not_compared: Vec<String>,
    /// Per-document cosine, fixed candidate vs the baseline, over `compared`.
    pub cosine: Option<Spread>,
    /// Compared documents below `same_at`, lowest first.
    pub below: Vec<DocumentCosine>,
    /// Every compared document's cosine, in corpus order (the chart's points).
    pub cosines: Vec<DocumentCosine>,
    pub same_at: f64,
    /// k of recall@k and overlap@k.
    pub k: usize,
    /// The old client's rankings (the reference) and the migrated client's, over the
    /// compared documents; empty with `rankings_not_compared`.
    pub rankings: Vec<Scenario>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rankings_not_compared: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<DimensionsFix>,
    /// Every document embedded and compared, every cosine at least `same_at`, no top hit
    /// changed and the dimensions fix (when applied) at least `same_at`.
    pub restored: bool,
}

/// One document cut before sending.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cut {
    pub id: String,
    pub chars: usize,
    /// Characters kept: the longest prefix the candidate accepted.
    pub kept: usize,
    /// The candidate's `prompt_tokens` for the kept prefix, where its usage counts
    /// tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The candidate's answer to the whole document alone.
    pub refused: String,
    /// Requests the search for the cut took.
    pub requests: u32,
    /// Cosine of the cut document's vector with the old client's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
}

/// `dimensions` dropped: the candidate's full vector cut to `dimensions` values and
/// re-normalised, against the baseline's answer to `dimensions`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DimensionsFix {
    pub dimensions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
}

/// What the pair's comparison already holds, for the re-run.
pub(crate) struct Findings<'a> {
    pub corpus: &'a Corpus,
    pub documents: &'a (Embedded, Embedded),
    pub queries: &'a QueryVectors,
    pub contract: &'a [Expectation],
    pub judged: Judged<'a>,
    pub k: usize,
}

/// Re-runs the corpus and queries with the fixes the findings call for; `None` when
/// there is nothing to fix.
pub(crate) async fn run(b: &Session, c: &Session, f: Findings<'_>) -> Option<FixesApplied> {
    let broken = |topic: Topic| {
        f.contract
            .iter()
            .find(|e| e.topic == topic && e.judgement == Judgement::Broken)
    };
    let truncate = broken(Topic::OVERLENGTH).and_then(|e| e.findings.truncates_at);
    let instruction = broken(Topic::INSTRUCTION).is_some();
    let reduced = broken(Topic::MATRYOSHKA).and_then(|e| e.findings.reduced);
    let failed = f.documents.1.vectors.iter().any(Option::is_none);
    if truncate.is_none() && !instruction && reduced.is_none() && !failed {
        return None;
    }
    let old_cuts = f
        .judged
        .baseline_embeddings
        .overlength_policy
        .as_ref()
        .is_some_and(|p| !matches!(p.value, OverlengthPolicy::Truncate));
    let clients = Clients {
        old: Client {
            session: b,
            cuts: old_cuts,
            counts_tokens: f.judged.baseline.usage_counts_tokens(),
            fields: f.judged.document_fields(),
        },
        new: Client {
            session: c,
            cuts: old_cuts || truncate.is_some(),
            counts_tokens: c.facts().usage_counts_tokens(),
            fields: f.judged.migrated_document_fields(),
        },
    };
    let texts = prepare(&clients, f.corpus, f.documents).await;
    let applied = changes(truncate, instruction, reduced, &texts);
    let old = embed_fixed(&clients.old, f.corpus, &texts.old_texts).await;
    let fixed = embed_fixed(&clients.new, f.corpus, &texts.texts).await;
    let queries = migrated_queries(f.queries, f.judged);
    let dimensions = match reduced {
        Some(d) => Some(dimensions_fix(b, c, d).await),
        None => None,
    };
    Some(judge(f, texts, (old, fixed), queries, dimensions, applied))
}

/// Each client-side change as applied, in words.
fn changes(
    truncate: Option<u64>,
    instruction: bool,
    reduced: Option<usize>,
    texts: &Prepared,
) -> Vec<String> {
    let mut applied = Vec::new();
    if !texts.old_client_cut.is_empty() {
        applied.push(format!(
            "the {} documents the baseline refuses are cut as its client must already cut them, to the longest prefix of whole characters the baseline accepts; the candidate is sent the same cut text",
            texts.old_client_cut.len()
        ));
    }
    match (truncate, texts.cut.len()) {
        (Some(tokens), 0) => applied.push(format!(
            "inputs over {tokens} tokens are to be cut before sending (the baseline truncated them); no corpus document is over the candidate's limit, so none was cut"
        )),
        (Some(tokens), _) => applied.push(format!(
            "documents the candidate refuses are cut before sending (the baseline truncated at {tokens} tokens): to the longest prefix of whole characters the candidate accepts"
        )),
        (None, 0) => {}
        (None, _) => applied.push(
            "documents the candidate still refuses are cut further, to the longest prefix of whole characters it accepts".to_owned(),
        ),
    }
    if instruction {
        applied.push("queries are sent with the instruction prefixed by the client".to_owned());
    }
    if let Some(d) = reduced {
        applied.push(format!(
            "`dimensions: {d}` is not sent; the client keeps the first {d} values and re-normalises them"
        ));
    }
    applied
}

/// The old client and the migrated one: which server each talks to, and whether it
/// cuts what its server refuses.
struct Clients<'a> {
    old: Client<'a>,
    new: Client<'a>,
}

struct Client<'a> {
    session: &'a Session,
    /// Cutting is this client's practice: its server refuses over-length input (the
    /// old client), or the old server truncated it (the migrated client).
    cuts: bool,
    /// Whether the server's usage counts tokens, so a cut's count can be shown.
    counts_tokens: bool,
    /// What the client sends beside each document (`input_type: "document"` to a server
    /// that embeds bare input as a query).
    fields: Fields,
}

/// The texts both clients send, and what was done to them.
struct Prepared {
    /// What the old client sends, one per document; `None` where it had no vector.
    old_texts: Vec<Option<String>>,
    /// What the migrated client sends; `None` where it cannot be sent at all.
    texts: Vec<Option<String>>,
    old_client_cut: Vec<Cut>,
    cut: Vec<Cut>,
    whole: Vec<String>,
    not_embedded: Vec<String>,
}

/// One document as a client sends it to its server.
enum Sent {
    /// Embedded in the corpus run, as it is.
    AsIs(String),
    /// Failed only with its batch: embedded alone, whole.
    Whole(String),
    Cut(String, Cut),
    Refused(String),
}

impl Sent {
    fn text(&self) -> Option<&str> {
        match self {
            Sent::AsIs(t) | Sent::Whole(t) | Sent::Cut(t, _) => Some(t),
            Sent::Refused(_) => None,
        }
    }
}

/// Each document as the old client sent it (its server's refusals cut, when that is
/// its practice), then the same text as the migrated client sends it to the
/// candidate.
async fn prepare(
    clients: &Clients<'_>,
    corpus: &Corpus,
    (b, c): &(Embedded, Embedded),
) -> Prepared {
    let mut p = Prepared {
        old_texts: Vec::with_capacity(corpus.documents.len()),
        texts: Vec::with_capacity(corpus.documents.len()),
        old_client_cut: Vec::new(),
        cut: Vec::new(),
        whole: Vec::new(),
        not_embedded: Vec::new(),
    };
    let embedded = |e: &Embedded, i: usize| e.vectors.get(i).is_some_and(Option::is_some);
    for (i, doc) in corpus.documents.iter().enumerate() {
        let old = as_sent(&clients.old, &doc.id, &doc.text, embedded(b, i)).await;
        let start = old.text().unwrap_or(&doc.text).to_owned();
        let in_batch = embedded(c, i) && start == doc.text;
        let new = as_sent(&clients.new, &doc.id, &start, in_batch).await;
        p.old_texts.push(old.text().map(str::to_owned));
        p.texts.push(new.text().map(str::to_owned));
        if let Sent::Cut(_, cut) = old {
            p.old_client_cut.push(cut);
        }
        match new {
            Sent::Cut(_, cut) => p.cut.push(cut),
            // Whole as the corpus has it; the old client's cut text accepted as it is
            // needs no mention of its own.
            Sent::Whole(_) if start == doc.text => p.whole.push(doc.id.clone()),
            Sent::Whole(_) => {}
            Sent::Refused(why) => p.not_embedded.push(format!("{}: {why}", doc.id)),
            Sent::AsIs(_) => {}
        }
    }
    p
}

/// A document as `client` sends it: as it is when the corpus run embedded it, else
/// alone, and cut to the longest accepted prefix when refused and cutting is the
/// client's practice.
async fn as_sent(client: &Client<'_>, id: &str, text: &str, embedded: bool) -> Sent {
    if embedded {
        return Sent::AsIs(text.to_owned());
    }
    let reply = match send(client, text).await {
        Ok(reply) => reply,
        Err(why) => return Sent::Refused(why),
    };
    if reply.is_success() {
        return Sent::Whole(text.to_owned());
    }
    if !client.cuts || reply.status == 429 {
        return Sent::Refused(format!("{} when sent alone", reply.summary()));
    }
    match longest_accepted(client, text).await {
        Ok(found) => Sent::Cut(
            text.chars().take(found.kept).collect(),
            Cut {
                id: id.to_owned(),
                chars: text.chars().count(),
                kept: found.kept,
                tokens: found.tokens.filter(|_| client.counts_tokens),
                refused: reply.summary(),
                requests: found.requests,
                cosine: None,
            },
        ),
        Err(why) => Sent::Refused(why),
    }
}

async fn send(client: &Client<'_>, text: &str) -> Result<Arc<Reply>, String> {
    let s = client.session;
    s.send(requests::probe(body(s, json!(text), &client.fields)))
        .await
        .map_err(|e| e.to_string())
}

/// The longest accepted prefix of a refused text.
struct Found {
    kept: usize,
    tokens: Option<u64>,
    requests: u32,
}

/// Bisection on characters between the empty prefix and the whole (refused) text:
/// at most ⌈log₂ chars⌉ requests. A refusal is any answer but 200; no answer at all
/// ends the search with its reason.
async fn longest_accepted(client: &Client<'_>, text: &str) -> Result<Found, String> {
    let chars: Vec<char> = text.chars().collect();
    let (mut accepted, mut refused) = (0usize, chars.len());
    let mut found = Found {
        kept: 0,
        tokens: None,
        requests: 0,
    };
    while refused - accepted > 1 {
        let mid = accepted + (refused - accepted) / 2;
        let prefix: String = chars[..mid].iter().collect();
        let reply = send(client, &prefix).await?;
        found.requests += 1;
        if reply.is_success() {
            accepted = mid;
            found.tokens = reply.prompt_tokens();
        } else {
            refused = mid;
        }
    }
    if accepted == 0 {
        return Err("no prefix of it was accepted".to_owned());
    }
    found.kept = accepted;
    Ok(found)
}

/// The fixed corpus in the corpus's own batches, as the client sends it; a document
/// left out leaves its batch shorter and moves no other. So a batch the fixes did not
/// change is the corpus run's request again, which the session cache answers.
async fn embed_fixed(client: &Client<'_>, corpus: &Corpus, texts: &[Option<String>]) -> Embedded {
    let mut embedded = Embedded {
        vectors: vec![None; texts.len()],
        ..Embedded::default()
    };
    let indices: Vec<usize> = (0..texts.len()).collect();
    for batch_indices in indices.chunks(super::corpus::BATCH_SIZE) {
        let chunk: Vec<usize> = batch_indices
            .iter()
            .copied()
            .filter(|&i| texts[i].is_some())
            .collect();
        if chunk.is_empty() {
            continue;
        }
        let batch: Vec<&str> = chunk.iter().filter_map(|&i| texts[i].as_deref()).collect();
        match vectors::embed(client.session, &batch, &client.fields).await {
            Ok((vectors, _)) => {
                for (&i, v) in chunk.iter().zip(vectors) {
                    embedded.vectors[i] = Some(v);
                }
            }
            Err(why) => {
                let ids: Vec<&str> = chunk
                    .iter()
                    .map(|&i| corpus.documents[i].id.as_str())
                    .collect();
                embedded.failures.push(format!("{}: {why}", ids.join(", ")));
            }
        }
    }
    embedded
}

/// The old client's queries and the migrated client's: the baseline with
/// `input_type: "query"`, the candidate as the migrated scenario sends them.
fn migrated_queries(q: &QueryVectors, judged: Judged<'_>) -> (QueryResult, QueryResult) {
    let migrated = if judged.baseline_applied_instruction() {
        &q.candidate_prefixed
    } else {
        &q.candidate_bare
    };
    (q.baseline_instructed.clone(), migrated.clone())
}

/// The old client's reduced-size request on the baseline (its cached answer), and the
/// same text without `dimensions` on the candidate, cut and re-normalised.
async fn dimensions_fix(b: &Session, c: &Session, d: usize) -> DimensionsFix {
    let old = b.send(requests::sentence_with_dimensions(b, d)).await;
    let new = c
        .send(requests::probe(body(c, json!(SENTENCE), &[])))
        .await
        .map_err(|e| e.to_string());
    let vector = |r: Result<Arc<Reply>, String>| -> Result<Vec<f64>, String> {
        let reply = r?;
        if !reply.is_success() {
            return Err(reply.summary());
        }
        reply
            .embeddings()?
            .vectors
            .into_iter()
            .next()
            .ok_or_else(|| "no vector".to_owned())
    };
    let old = vector(old.map_err(|e| e.to_string()));
    let new = vector(new).and_then(|v| cut_and_normalise(&v, d));
    match (old, new) {
        (Ok(old), Ok(new)) if old.len() == d => DimensionsFix {
            dimensions: d,
            cosine: Some(cosine(&old, &new)),
            not_compared: None,
        },
        (Ok(old), Ok(_)) => DimensionsFix {
            dimensions: d,
            cosine: None,
            not_compared: Some(format!("the baseline returned {} values", old.len())),
        },
        (Err(why), _) => not_compared(d, format!("baseline: {why}")),
        (_, Err(why)) => not_compared(d, format!("candidate: {why}")),
    }
}

fn not_compared(d: usize, why: String) -> DimensionsFix {
    DimensionsFix {
        dimensions: d,
        cosine: None,
        not_compared: Some(why),
    }
}

/// The first `d` values at unit length, as a client does for a Matryoshka model; an
/// error where there is no such prefix to compare.
fn cut_and_normalise(v: &[f64], d: usize) -> Result<Vec<f64>, String> {
    if v.len() < d {
        return Err(format!("{} values, fewer than {d}", v.len()));
    }
    if norm(&v[..d]) == 0.0 {
        return Err("the first values are all zero".to_owned());
    }
    Ok(renormalised_prefix(v, d))
}

fn judge(
    f: Findings<'_>,
    prepared: Prepared,
    (baseline, fixed): (Embedded, Embedded),
    queries: (QueryResult, QueryResult),
    dimensions: Option<DimensionsFix>,
    applied: Vec<String>,
) -> FixesApplied {
    let baseline = &baseline;
    let mut not_embedded = prepared.not_embedded;
    not_embedded.extend(
        baseline
            .failures
            .iter()
            .map(|why| format!("baseline: {why}")),
    );
    not_embedded.extend(fixed.failures.iter().cloned());
    let mut cosines: Vec<DocumentCosine> = Vec::new();
    let mut not_compared = Vec::new();
    for (i, doc) in f.corpus.documents.iter().enumerate() {
        match (baseline.vectors.get(i), fixed.vectors.get(i)) {
            (Some(Some(old)), Some(Some(new))) if old.len() == new.len() => {
                cosines.push(DocumentCosine {
                    id: doc.id.clone(),
                    cosine: cosine(old, new),
                })
            }
            (Some(None), Some(Some(_))) => not_compared.push(doc.id.clone()),
            _ => {}
        }
    }
    let (mut cut, mut old_client_cut) = (prepared.cut, prepared.old_client_cut);
    for c in cut.iter_mut().chain(old_client_cut.iter_mut()) {
        c.cosine = cosines.iter().find(|d| d.id == c.id).map(|d| d.cosine);
    }
    let same_at = f.judged.same_at();
    let mut below: Vec<DocumentCosine> = cosines
        .iter()
        .filter(|d| d.cosine < same_at)
        .cloned()
        .collect();
    below.sort_by(|x, y| x.cosine.total_cmp(&y.cosine));
    let ranked =
        retrieval::against_reference(f.corpus, (baseline, &fixed), (&queries.0, &queries.1), f.k);
    let (rankings, rankings_not_compared) = match ranked {
        Ok(scenarios) => (scenarios.to_vec(), None),
        Err(why) => (Vec::new(), Some(why)),
    };
    let embedded = fixed.vectors.iter().filter(|v| v.is_some()).count();
    let unchanged = rankings
        .last()
        .and_then(|s| s.versus_reference.as_ref())
        .is_some_and(|a| a.top_hit_changed.is_empty());
    let dimensions_ok = dimensions
        .as_ref()
        .is_none_or(|d| d.cosine.is_some_and(|x| x >= same_at));
    FixesApplied {
        applied,
        documents: f.corpus.documents.len(),
        embedded,
        compared: cosines.len(),
        cut,
        old_client_cut,
        whole: prepared.whole,
        restored: embedded == f.corpus.documents.len()
            && cosines.len() == f.corpus.documents.len()
            && below.is_empty()
            && unchanged
            && dimensions_ok,
        not_embedded,
        not_compared,
        cosine: Spread::of(cosines.iter().map(|d| d.cosine).collect()),
        below,
        cosines,
        same_at,
        k: f.k,
        rankings,
        rankings_not_compared,
        dimensions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_vector_is_unit_length_and_keeps_direction() {
        let v = cut_and_normalise(&[3.0, 4.0, 12.0], 2).unwrap();
        assert!((v[0] - 0.6).abs() < 1e-12 && (v[1] - 0.8).abs() < 1e-12);
        assert!(cut_and_normalise(&[1.0], 2).is_err());
        assert!(cut_and_normalise(&[0.0, 0.0, 1.0], 2).is_err());
    }
}
