//! Vector equivalence: the fixture documents embedded by both servers, compared per
//! document.
//!
//! Documents go 8 per request through each server's session (so budgets count them),
//! which yields token counts per batch only. A batch whose counts differ is split in
//! halves and re-sent until the differing documents are single ones, so identical
//! tokenizers cost nothing extra and each differing document costs a few requests.
//!
//! ```text
//! dimensions 1024 / 1024 · norm 1.0000 / 1.0000 · tokens 3,375 / 3,375
//! cosine min 0.9996 · median 0.9998 · max 0.9999
//! ```

use super::corpus::{Corpus, Document};
use crate::contracts::embeddings::facts::EmbeddingsFacts;
use crate::contracts::embeddings::requests;
use crate::session::{Facts, Session};
use crate::vectors::{cosine, norm};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Lowest per-document cosine at which two servers count as giving the same vectors:
/// the study saw 0.9996 for one model under two runtimes ("the vectors matched"),
/// within what noise explains.
pub(crate) const EQUIVALENT_COSINE: f64 = crate::vectors::NOISE_BOUND;

/// The documents embedded by one server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Embedded {
    /// One entry per document, in corpus order; `None` where its batch failed.
    pub vectors: Vec<Option<Vec<f64>>>,
    /// `usage.prompt_tokens` of each batch, in batch order.
    pub batch_tokens: Vec<Option<u64>>,
    /// Why batches failed: `batch 3 (docs en-17…ko-02): 500 "…"`.
    pub failures: Vec<String>,
}

/// A document whose token count differs between the servers.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TokenDifference {
    pub id: String,
    pub baseline: Option<u64>,
    pub candidate: Option<u64>,
}

/// Whether the two servers give the same vectors for the same documents: judged on
/// the documents both embedded, with their count, and the rest listed apart.
#[derive(Clone, Debug, Serialize)]
pub struct VectorEquivalence {
    pub documents: usize,
    /// Documents both servers embedded, with vectors of the same length: every figure
    /// below (cosines, token totals) is over these.
    pub common: usize,
    pub dimensions_baseline: Option<usize>,
    pub dimensions_candidate: Option<usize>,
    /// L2 norm of the first document's vector.
    pub norm_baseline: Option<f64>,
    pub norm_candidate: Option<f64>,
    /// `usage.prompt_tokens` summed over the batches both servers embedded.
    pub tokens_baseline: u64,
    pub tokens_candidate: u64,
    /// Why token counts are not compared, when they are not (a server's usage does
    /// not count tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_not_comparable: Option<String>,
    /// Per-document cosine, baseline vs candidate; absent when no document could be
    /// compared (a side failed, or the dimensions differ).
    pub cosine_min: Option<f64>,
    pub cosine_median: Option<f64>,
    pub cosine_max: Option<f64>,
    /// The document with the lowest cosine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub least_similar: Option<String>,
    /// Every compared document's cosine, in corpus order: the distribution behind
    /// min / median / max, which the HTML report draws.
    pub cosines: Vec<DocumentCosine>,
    pub token_differences: Vec<TokenDifference>,
    pub failures_baseline: Vec<String>,
    pub failures_candidate: Vec<String>,
    /// The lowest cosine that counts as the same vector: [`EQUIVALENT_COSINE`], or
    /// lower where a server's own noise between identical requests is larger.
    pub same_at: f64,
    /// At least one document compared, and every compared cosine ≥ `same_at`.
    pub equivalent: bool,
}

/// A document's cosine between two embeddings of it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DocumentCosine {
    pub id: String,
    pub cosine: f64,
}

/// What each server's audit says about its usage counts and noise, for the comparison.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Judged<'a> {
    pub baseline: &'a Facts,
    pub candidate: &'a Facts,
    /// The embeddings side of each server's facts.
    pub baseline_embeddings: &'a EmbeddingsFacts,
    pub candidate_embeddings: &'a EmbeddingsFacts,
}

impl Judged<'_> {
    /// The cosine at or above which two servers' vectors count as the same: the
    /// study's tolerance, widened by the noisier server's own noise.
    pub(crate) fn same_at(&self) -> f64 {
        let noise = self
            .baseline_embeddings
            .noise()
            .threshold()
            .max(self.candidate_embeddings.noise().threshold());
        EQUIVALENT_COSINE.min(1.0 - noise)
    }

    /// What the old client sends with every document: the baseline's document value of
    /// `input_type` where the baseline embeds bare input as a query (UNK-003's finding),
    /// else nothing. The address swap sends the candidate the same request.
    pub(crate) fn document_fields(&self) -> Fields {
        fields_of(self.baseline_embeddings.document_field())
    }

    /// What the migrated client sends with every document: the old client's fields,
    /// unless the candidate refuses `input_type`.
    pub(crate) fn migrated_document_fields(&self) -> Fields {
        let refused = matches!(
            self.candidate_embeddings.input_type(),
            Some(crate::contracts::embeddings::facts::FieldHandling::Refused { .. })
        );
        if refused {
            Vec::new()
        } else {
            self.document_fields()
        }
    }

    /// What the migrated client sends with a query it prefixes itself: the candidate's
    /// document value where the candidate embeds bare input as a query, so that its own
    /// instruction does not come on top of the client's.
    pub(crate) fn prefixed_query_fields(&self) -> Fields {
        fields_of(self.candidate_embeddings.document_field())
    }

    /// Whether the old server applied a query instruction for `input_type: "query"`
    /// (UNK-003's finding), so that a migrated client must prefix it itself.
    pub(crate) fn baseline_applied_instruction(&self) -> bool {
        matches!(
            self.baseline_embeddings.input_type(),
            Some(crate::contracts::embeddings::facts::FieldHandling::Honoured { .. })
        )
    }

    /// Why token counts cannot be compared, if they cannot.
    pub(crate) fn tokens_not_comparable(&self) -> Option<String> {
        let side = |name: &str, f: &Facts| {
            (!f.usage_counts_tokens()).then(|| {
                let unit = f
                    .usage_unit
                    .as_ref()
                    .map_or("unknown".to_owned(), |u| u.value.to_string());
                format!("the {name}'s usage counts {unit}")
            })
        };
        let reasons: Vec<String> = [
            side("baseline", self.baseline),
            side("candidate", self.candidate),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }
}

/// Embeds `texts` in one request with extra body fields; the vectors (float or
/// base64) and the request's prompt tokens.
pub(crate) async fn embed(
    s: &Session,
    texts: &[&str],
    extra: &[(&str, Value)],
) -> Result<(Vec<Vec<f64>>, Option<u64>), String> {
    let fields: Map<String, Value> = extra
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect();
    let (vectors, tokens, _) = embed_with(s, texts, &fields, false).await?;
    Ok((vectors, tokens))
}

/// Embeds `texts` in one request with `fields` beside `input`, from the session's
/// cache unless `fresh`: the vectors, the usage count and the `model` the server
/// answered with (recordings keep it).
pub(crate) async fn embed_with(
    s: &Session,
    texts: &[&str],
    fields: &Map<String, Value>,
    fresh: bool,
) -> Result<(Vec<Vec<f64>>, Option<u64>, Option<String>), String> {
    let mut body = requests::body(s, json!(texts), &[]);
    for (name, value) in fields {
        body[name] = value.clone();
    }
    let probe = match fresh {
        true => requests::probe(body).fresh(),
        false => requests::probe(body),
    };
    let reply = s.send(probe).await.map_err(|e| e.to_string())?;
    if !reply.is_success() {
        return Err(reply.summary());
    }
    let vectors = reply.embeddings()?.vectors;
    if vectors.len() != texts.len() {
        return Err(format!(
            "{} vectors for {} inputs",
            vectors.len(),
            texts.len()
        ));
    }
    let answered = reply
        .json
        .as_ref()
        .and_then(|b| b.get("model")?.as_str().map(str::to_owned));
    Ok((vectors, reply.prompt_tokens(), answered))
}

/// Fields sent beside `input` with a request: the instruction field that asks for
/// documents, where a server needs one.
pub(crate) type Fields = Vec<(&'static str, Value)>;

fn fields_of(field: Option<(&'static str, String)>) -> Fields {
    field
        .map(|(name, value)| (name, Value::String(value)))
        .into_iter()
        .collect()
}

/// Embeds the corpus on one server, batch by batch, with `fields` beside each batch.
pub(crate) async fn embed_documents(s: &Session, corpus: &Corpus, fields: &Fields) -> Embedded {
    let mut embedded = Embedded::default();
    for (i, batch) in corpus.batches().enumerate() {
        let texts: Vec<&str> = batch.iter().map(|d| d.text.as_str()).collect();
        match embed(s, &texts, fields).await {
            Ok((vectors, tokens)) => {
                embedded.vectors.extend(vectors.into_iter().map(Some));
                embedded.batch_tokens.push(tokens);
            }
            Err(why) => {
                embedded.vectors.extend(batch.iter().map(|_| None));
                embedded.batch_tokens.push(None);
                embedded
                    .failures
                    .push(format!("batch {} ({}): {why}", i + 1, span(batch)));
            }
        }
    }
    embedded
}

fn span(batch: &[Document]) -> String {
    match (batch.first(), batch.last()) {
        (Some(first), Some(last)) => format!("{}…{}", first.id, last.id),
        _ => String::new(),
    }
}

/// Compares both servers' document vectors, localising token-count differences
/// where both servers' usage counts tokens.
pub(crate) async fn compare(
    baseline: &Session,
    candidate: &Session,
    corpus: &Corpus,
    (b, c): (&Embedded, &Embedded),
    judged: Judged<'_>,
) -> VectorEquivalence {
    let differences = match judged.tokens_not_comparable() {
        None => token_differences(baseline, candidate, corpus, b, c).await,
        Some(_) => Vec::new(),
    };
    equivalence(corpus, (b, c), differences, judged)
}

/// The comparison of two embedded corpora, given the token differences found.
pub(crate) fn equivalence(
    corpus: &Corpus,
    (b, c): (&Embedded, &Embedded),
    token_differences: Vec<TokenDifference>,
    judged: Judged<'_>,
) -> VectorEquivalence {
    let first = |e: &Embedded| e.vectors.iter().flatten().next().cloned();
    let (first_b, first_c) = (first(b), first(c));
    let cosines = per_document(corpus, b, c);
    let stats = Spread::of(cosines.iter().map(|d| d.cosine).collect());
    let same_at = judged.same_at();
    let common_batches = |e: &Embedded, other: &Embedded| -> u64 {
        e.batch_tokens
            .iter()
            .zip(&other.batch_tokens)
            .filter_map(|(mine, theirs)| theirs.and(*mine))
            .sum()
    };
    VectorEquivalence {
        documents: corpus.documents.len(),
        common: cosines.len(),
        dimensions_baseline: first_b.as_ref().map(Vec::len),
        dimensions_candidate: first_c.as_ref().map(Vec::len),
        norm_baseline: first_b.as_deref().map(norm),
        norm_candidate: first_c.as_deref().map(norm),
        tokens_baseline: common_batches(b, c),
        tokens_candidate: common_batches(c, b),
        tokens_not_comparable: judged.tokens_not_comparable(),
        cosine_min: stats.map(|s| s.min),
        cosine_median: stats.map(|s| s.median),
        cosine_max: stats.map(|s| s.max),
        least_similar: cosines
            .iter()
            .min_by(|x, y| x.cosine.total_cmp(&y.cosine))
            .map(|d| d.id.clone()),
        cosines,
        token_differences,
        failures_baseline: b.failures.clone(),
        failures_candidate: c.failures.clone(),
        same_at,
        equivalent: stats.is_some_and(|s| s.min >= same_at),
    }
}

/// Cosine per document embedded by both, with equal lengths.
fn per_document(corpus: &Corpus, b: &Embedded, c: &Embedded) -> Vec<DocumentCosine> {
    corpus
        .documents
        .iter()
        .zip(b.vectors.iter().zip(&c.vectors))
        .filter_map(|(doc, pair)| match pair {
            (Some(x), Some(y)) if x.len() == y.len() => Some(DocumentCosine {
                id: doc.id.clone(),
                cosine: cosine(x, y),
            }),
            _ => None,
        })
        .collect()
}

/// Minimum, median and maximum of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for an empty sample; the median of an even sample is the mean of the
    /// middle two.
    pub(crate) fn of(mut values: Vec<f64>) -> Option<Spread> {
        values.retain(|v| v.is_finite());
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Some(Spread {
            min: values[0],
            median,
            max: values[n - 1],
        })
    }
}

/// The documents whose token counts differ: batches with equal totals are taken as
/// equal (a tokenizer that miscounts two documents by opposite amounts in one batch
/// would escape; the totals row still shows any net difference).
async fn token_differences(
    baseline: &Session,
    candidate: &Session,
    corpus: &Corpus,
    b: &Embedded,
    c: &Embedded,
) -> Vec<TokenDifference> {
    let mut differences = Vec::new();
    let totals = b.batch_tokens.iter().zip(&c.batch_tokens);
    for (batch, (tb, tc)) in corpus.batches().zip(totals) {
        if let (Some(tb), Some(tc)) = (tb, tc)
            && tb != tc
        {
            bisect(baseline, candidate, batch, &mut differences).await;
        }
    }
    differences.retain(|d| d.baseline != d.candidate);
    differences
}

/// Splits `docs` (whose totals differ) until single documents, re-sending each half
/// to both servers.
async fn bisect(
    baseline: &Session,
    candidate: &Session,
    docs: &[Document],
    found: &mut Vec<TokenDifference>,
) {
    let mut pending = vec![docs];
    while let Some(docs) = pending.pop() {
        if let [doc] = docs {
            found.push(single_counts(baseline, candidate, doc).await);
            continue;
        }
        // Only the left half is sent: when it counts alike, the whole difference is
        // in the right half, which then needs no request of its own.
        let (left, right) = docs.split_at(docs.len() / 2);
        pending.push(right);
        match both_counts(baseline, candidate, left).await {
            Some((lb, lc)) if lb == lc => {}
            _ => pending.push(left),
        }
    }
}

async fn both_counts(
    baseline: &Session,
    candidate: &Session,
    docs: &[Document],
) -> Option<(u64, u64)> {
    let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
    let b = embed(baseline, &texts, &[]).await.ok()?.1?;
    let c = embed(candidate, &texts, &[]).await.ok()?.1?;
    Some((b, c))
}

async fn single_counts(baseline: &Session, candidate: &Session, doc: &Document) -> TokenDifference {
    let text = [doc.text.as_str()];
    let count = |r: Result<(Vec<Vec<f64>>, Option<u64>), String>| r.ok().and_then(|(_, t)| t);
    TokenDifference {
        id: doc.id.clone(),
        baseline: count(embed(baseline, &text, &[]).await),
        candidate: count(embed(candidate, &text, &[]).await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_an_even_sample_averages_the_middle() {
        let s = Spread::of(vec![0.4, 0.1, 0.3, 0.2]).unwrap();
        assert_eq!((s.min, s.max), (0.1, 0.4));
        assert!((s.median - 0.25).abs() < 1e-12);
        assert_eq!(Spread::of(vec![]), None);
    }
}
