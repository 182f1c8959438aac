//! reference: the server's vectors against the model's own (REF-001, REF-002).
//!
//! Every other family judges the envelope of an answer; this one judges what is inside
//! it, against known answers (`--reference FILE`, see [`crate::reference`]). A server
//! with the wrong pooling answers every request 200 with unit vectors of the right
//! length, and only a comparison with the model's own library shows that its vectors
//! are noise. Without a reference file both clauses skip.
//!
//! The texts go in batches of [`PER_REQUEST`]; a batch not embedded whole is sent again
//! one text a request, so a batch limit or one refused text hides nothing else. Where
//! `usage` counts tokens and the file gives the model's own counts, they are compared
//! (learned as the `reference_tokens` fact): a tokenizer that reads a script otherwise
//! shows there first, and a failing text's reason carries both counts.

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{TokenAgreement, TokenCount, TokenIdsAsSent};
use crate::contracts::embeddings::reference::{KnownAnswer, Reference};
use crate::contracts::embeddings::requests::{self, body};
use crate::contracts::embeddings::settings;
use crate::http::Reply;
use crate::session::{ProbeError, Session};
use crate::vectors::{cosine, median};
use crate::verdict::Verdict;
use serde_json::json;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("REF-001", reference_dimension),
        check!("REF-002", reference_vectors),
        check!("REF-003", spellings_embed_alike),
    ]
}

/// Texts per request: the batch size the migration study's client sent.
const PER_REQUEST: usize = 8;

/// Texts a failure names at most, worst first.
const NAMED: usize = 5;

/// One text's vector and the answer that carried it, or the answer that carried none.
pub(crate) type Item = Result<(Vec<f64>, Arc<Reply>), Arc<Reply>>;

/// What the server gave for the reference texts.
struct Embedded {
    /// Per known answer, in file order.
    items: Vec<Item>,
}

impl Embedded {
    /// The known answers that got a vector, with it.
    fn vectors<'a>(
        &'a self,
        reference: &'a Reference,
    ) -> impl Iterator<Item = (&'a KnownAnswer, &'a Vec<f64>, &'a Arc<Reply>)> {
        reference
            .answers
            .iter()
            .zip(&self.items)
            .filter_map(|(answer, item)| item.as_ref().ok().map(|(v, r)| (answer, v, r)))
    }

    /// The texts that got no vector, each with its answer: `en-long (413 "too long")`.
    fn missing(&self, reference: &Reference) -> Vec<String> {
        reference
            .answers
            .iter()
            .zip(&self.items)
            .filter_map(|(answer, item)| {
                item.as_ref()
                    .err()
                    .map(|reply| format!("{} ({})", answer.name(), reply.summary()))
            })
            .collect()
    }

    /// The first answer that carried no vector, as evidence of why.
    fn first_refusal(&self) -> Option<&Arc<Reply>> {
        self.items.iter().find_map(|item| item.as_ref().err())
    }
}

/// The reference the run compares with, or the skip verdict when there is none.
fn reference_or_skip(s: &Session) -> Result<Arc<Reference>, Verdict> {
    settings::of(s).reference.clone().ok_or_else(|| {
        Verdict::skip(
            "no --reference file: nothing to hold the vectors against (lab/reference.py makes one from the model's own library)",
        )
    })
}

/// Sends every reference text.
async fn embed(s: &Session, reference: &Reference) -> Result<Embedded, ProbeError> {
    let texts: Vec<&str> = reference.answers.iter().map(|a| a.text.as_str()).collect();
    Ok(Embedded {
        items: embed_texts(s, &texts).await?,
    })
}

/// Sends `texts` in batches of [`PER_REQUEST`], then alone for a batch not embedded
/// whole; one item per text, in order. The cross-server comparison of a matrix embeds
/// the probe texts the same way.
pub(crate) async fn embed_texts(s: &Session, texts: &[&str]) -> Result<Vec<Item>, ProbeError> {
    let mut items = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(PER_REQUEST) {
        let reply = s.send(requests::document_probe(s, json!(chunk))).await?;
        match vectors_of(&reply, chunk.len()) {
            Some(vectors) => items.extend(vectors.into_iter().map(|v| Ok((v, reply.clone())))),
            None => {
                for text in chunk {
                    items.push(embed_alone(s, text).await?);
                }
            }
        }
    }
    Ok(items)
}

/// One text sent alone: its vector, or the answer without one.
async fn embed_alone(s: &Session, text: &str) -> Result<Item, ProbeError> {
    let reply = s.send(requests::document_probe(s, json!(text))).await?;
    Ok(match vectors_of(&reply, 1) {
        Some(mut vectors) => Ok((vectors.remove(0), reply)),
        None => Err(reply),
    })
}

/// The vectors of a 200 with exactly `count` items (float or base64 alike).
fn vectors_of(reply: &Reply, count: usize) -> Option<Vec<Vec<f64>>> {
    let vectors = reply
        .is_success()
        .then(|| reply.embeddings().ok())
        .flatten()?
        .vectors;
    (vectors.len() == count).then_some(vectors)
}

/// The verdict when no reference text got a vector: nothing to judge.
fn nothing_embedded(embedded: &Embedded) -> Verdict {
    let verdict = Verdict::skip(
        "no reference text was embedded, so there is no vector to compare (see IN-002)",
    );
    match embedded.first_refusal() {
        Some(reply) => Verdict {
            reason: format!(
                "no reference text was embedded ({}), so there is no vector to compare",
                reply.summary()
            ),
            ..verdict
        }
        .with(&reply.exchange),
        None => verdict,
    }
}

/// REF-001: "For every reference text, the server's vector has as many values as the
/// reference vector."
async fn reference_dimension(s: &Session) -> CheckResult {
    let reference = match reference_or_skip(s) {
        Ok(r) => r,
        Err(verdict) => return Ok(verdict),
    };
    let embedded = embed(s, &reference).await?;
    let expected = reference.dimension();
    let vectors: Vec<_> = embedded.vectors(&reference).collect();
    if vectors.is_empty() {
        return Ok(nothing_embedded(&embedded));
    }
    let made_by = reference.made_by();
    match vectors.iter().find(|(_, v, _)| v.len() != expected) {
        Some((answer, v, reply)) => Ok(Verdict::fail(format!(
            "{}: {} values where the model's own library ({made_by}) gives {expected}: another model, or a projection layer skipped or added",
            answer.name(),
            v.len()
        ))
        .with(&reply.exchange)),
        None => Ok(Verdict::pass(format!(
            "all {} embedded reference texts have {expected} values, as in {made_by}",
            vectors.len()
        ))
        .with_all(distinct_exchanges(vectors.iter().map(|(_, _, r)| *r)))),
    }
}

/// REF-002: "For every reference text, the server's vector has cosine similarity of at
/// least the threshold (default 0.99) with the reference vector."
async fn reference_vectors(s: &Session) -> CheckResult {
    let reference = match reference_or_skip(s) {
        Ok(r) => r,
        Err(verdict) => return Ok(verdict),
    };
    let embedded = embed(s, &reference).await?;
    if embedded.vectors(&reference).next().is_none() {
        return Ok(nothing_embedded(&embedded));
    }
    let expected = reference.dimension();
    let mut compared: Vec<(&KnownAnswer, f64, &Arc<Reply>)> = embedded
        .vectors(&reference)
        .filter(|(_, v, _)| v.len() == expected)
        .map(|(answer, v, reply)| (answer, cosine(v, &answer.embedding), reply))
        .collect();
    if compared.is_empty() {
        return Ok(Verdict::skip(format!(
            "no vector has the reference's {expected} values (see REF-001): cosine is not defined"
        )));
    }
    compared.sort_by(|a, b| a.1.total_cmp(&b.1));
    let tokens = token_agreement(s, &reference, &embedded).await?;
    token_ids_as_sent(s, &reference).await?;
    let judged = Judged {
        reference: &reference,
        threshold: settings::of(s).reference_threshold,
        compared: &compared,
        missing: embedded.missing(&reference),
        tokens: tokens.as_ref(),
        model: s.model(),
        sent_as: requests::documents_sent_as(s),
    };
    Ok(judged.verdict())
}

/// REF-002's comparison, ready to be worded.
struct Judged<'a> {
    reference: &'a Reference,
    threshold: f64,
    /// Each compared text with its cosine and answer, lowest cosine first.
    compared: &'a [(&'a KnownAnswer, f64, &'a Arc<Reply>)],
    missing: Vec<String>,
    tokens: Option<&'a TokenAgreement>,
    model: &'a str,
    /// How the texts were sent, where not bare (see `requests::document_probe`).
    sent_as: String,
}

impl Judged<'_> {
    fn verdict(&self) -> Verdict {
        let below: Vec<_> = self
            .compared
            .iter()
            .take_while(|(_, c, _)| *c < self.threshold)
            .collect();
        let made_by = self.reference.made_by();
        let lowest = self.compared[0];
        let median = median(self.compared.iter().map(|c| c.1).collect());
        let mut reason = if below.is_empty() {
            format!(
                "all {} compared texts at cosine ≥ {} with {made_by}'s vectors: lowest {:.4} ({}), median {median:.4}",
                self.compared.len(),
                self.threshold,
                lowest.1,
                lowest.0.name()
            )
        } else {
            let named: Vec<String> = below
                .iter()
                .take(NAMED)
                .map(|(answer, c, _)| format!("{} {c:.4}{}", answer.name(), self.tokens_of(answer)))
                .collect();
            format!(
                "{} of {} texts below cosine {} with {made_by}'s vectors: {}{}; median {median:.4}",
                below.len(),
                self.compared.len(),
                self.threshold,
                named.join(", "),
                if below.len() > NAMED { ", …" } else { "" }
            )
        };
        reason.push_str(&self.sent_as);
        if !self.missing.is_empty() {
            reason.push_str(&format!("; not embedded: {}", self.missing.join(", ")));
        }
        if self.reference.header.model != self.model {
            reason.push_str(&format!(
                "; the reference is of {:?}, the run asked for {:?}",
                self.reference.header.model, self.model
            ));
        }
        if below.is_empty() {
            Verdict::pass(reason)
                .with_all(distinct_exchanges(self.compared.iter().map(|(_, _, r)| *r)))
        } else {
            Verdict::fail(reason).with_all(distinct_exchanges(
                below.iter().take(NAMED).map(|(_, _, r)| *r),
            ))
        }
    }

    /// ` (20 tokens; the model's tokenizer: 47)` where the counts of a text differ.
    fn tokens_of(&self, answer: &KnownAnswer) -> String {
        let Some(TokenAgreement::Compared { differing, .. }) = self.tokens else {
            return String::new();
        };
        differing
            .iter()
            .find(|count| count.text == answer.name())
            .map(|count| {
                format!(
                    " ({} tokens; the model's tokenizer: {})",
                    count.reported, count.reference
                )
            })
            .unwrap_or_default()
    }
}

/// REF-003: "Where the reference file says the model's tokenizer normalises Unicode
/// (normalizer NFC, NFD, NFKC or NFKD), each text that is not in normalisation form C
/// (the decomposed probe texts, and any such reference text) gets the vector of its
/// composed spelling, within the server's noise."
///
/// The model's own normaliser makes the two spellings one input, so this needs no
/// reference vector: the server is held against itself. llama.cpp's servers tokenise
/// the decomposed bytes as they come (measured in the lab: 41 tokens for 13, cosine 0.71
/// on Korean with the tiny Qwen3-Embedding).
async fn spellings_embed_alike(s: &Session) -> CheckResult {
    let reference = match reference_or_skip(s) {
        Ok(r) => r,
        Err(verdict) => return Ok(verdict),
    };
    let Some(form) = reference.header.normalises_unicode() else {
        return Ok(Verdict::skip(
            "the reference file does not say that the model's tokenizer normalises Unicode (its header's tokenizer.normalizer): two spellings of a text may rightly be two inputs",
        ));
    };
    let pairs = spelling_pairs(&reference);
    let noise = super::consistency::noise(s)
        .await?
        .unwrap_or(crate::contracts::embeddings::facts::Noise::unmeasured());
    let mut apart = Vec::new();
    let mut compared = 0;
    let mut evidence = Vec::new();
    for (name, decomposed, composed) in &pairs {
        let (Ok((a, ra)), Ok((b, rb))) = (
            embed_alone(s, decomposed).await?,
            embed_alone(s, composed).await?,
        ) else {
            continue;
        };
        compared += 1;
        let similarity = cosine(&a, &b);
        if !noise.same(similarity) {
            let count = |r: &Reply| r.prompt_tokens().map_or("no".to_owned(), |t| t.to_string());
            apart.push(format!(
                "{name} cosine {similarity:.4} ({} prompt tokens; composed {})",
                count(&ra),
                count(&rb)
            ));
            evidence.extend([ra.exchange.clone(), rb.exchange.clone()]);
        }
    }
    if compared == 0 {
        return Ok(Verdict::skip(
            "no text and its composed spelling were both embedded (see REF-002)",
        ));
    }
    let sent_as = requests::documents_sent_as(s);
    Ok(if apart.is_empty() {
        Verdict::pass(format!(
            "all {compared} decomposed texts got the vector of their composed spelling, as the model's tokenizer ({form}) reads them{sent_as}"
        ))
    } else {
        Verdict::fail(format!(
            "{} of {compared} decomposed texts embed otherwise than their composed spelling, which the model's tokenizer ({form}) reads as the same text: {}{sent_as}: the server does not apply the tokenizer's normaliser",
            apart.len(),
            apart.join(", ")
        ))
        .with_all(evidence.iter().take(4))
    })
}

/// Every text of the reference file and of the probe texts that is not in Unicode
/// normalisation form C, with its composed spelling: `(name, text, composed)`.
fn spelling_pairs(reference: &Reference) -> Vec<(String, String, String)> {
    use unicode_normalization::UnicodeNormalization;
    let from_reference = reference.answers.iter().map(|a| (a.name(), a.text.clone()));
    let from_probes = crate::contracts::embeddings::reference::probe_texts()
        .into_iter()
        .map(|p| (p.id, p.text));
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    for (name, text) in from_reference.chain(from_probes) {
        let composed: String = text.nfc().collect();
        if composed != text && !pairs.iter().any(|(_, t, _)| *t == text) {
            pairs.push((name, text, composed));
        }
    }
    pairs
}

/// How the server embeds a reference text's own token ids, with and without the
/// token the tokenizer appends after a text (Qwen3-Embedding's `<|endoftext|>`, which
/// its last-token pooling reads), learned as the `token_ids_as_sent` fact: not a
/// verdict. OpenAI's schema makes token ids the model's input as they are, and vLLM
/// and llama.cpp embed them so (no token appended), so a client that sends ids must
/// send the EOS too; the fact shows whether this server expects that.
async fn token_ids_as_sent(s: &Session, reference: &Reference) -> Result<(), ProbeError> {
    let Some((answer, ids)) = reference
        .answers
        .iter()
        .find_map(|a| Some((a, a.ids.as_ref()?)))
    else {
        return Ok(());
    };
    let eos = reference
        .header
        .tokenizer
        .as_ref()
        .filter(|t| t.appends_eos == Some(true))
        .and_then(|t| t.eos_token_id)
        .filter(|eos| ids.last() == Some(eos));
    let sent = s
        .send(requests::either(
            body(s, json!(ids), &[]),
            "token ids: a server may refuse them",
        ))
        .await?;
    let with_ids = sent.first_vector().map(|v| cosine(&v, &answer.embedding));
    let without_eos = match eos {
        Some(_) => {
            let cut = &ids[..ids.len() - 1];
            let reply = s
                .send(requests::either(
                    body(s, json!(cut), &[]),
                    "token ids: a server may refuse them",
                ))
                .await?;
            reply.first_vector().map(|v| cosine(&v, &answer.embedding))
        }
        None => None,
    };
    let fact = s.detected(
        TokenIdsAsSent {
            text: answer.name(),
            status: sent.status,
            with_ids,
            without_eos,
            eos_token: eos.and(
                reference
                    .header
                    .tokenizer
                    .as_ref()
                    .and_then(|t| t.eos_token.clone()),
            ),
        },
        &sent.exchange,
    );
    embeddings::learn(s, |facts| facts.token_ids_as_sent = Some(fact));
    Ok(())
}

/// Each answer once, in order (a batch carries several texts).
fn distinct_exchanges<'a>(
    replies: impl Iterator<Item = &'a Arc<Reply>>,
) -> Vec<&'a crate::http::Exchange> {
    let mut seen: Vec<&crate::http::Exchange> = Vec::new();
    for reply in replies {
        if !seen.contains(&&reply.exchange) {
            seen.push(&reply.exchange);
        }
    }
    seen
}

/// The server's token counts against the model's own, learned once as the
/// `reference_tokens` fact; `None` when the file gives no counts.
async fn token_agreement(
    s: &Session,
    reference: &Reference,
    embedded: &Embedded,
) -> Result<Option<TokenAgreement>, ProbeError> {
    if let Some(known) = embeddings::learned(s).reference_tokens {
        return Ok(Some(known.value));
    }
    if reference.answers.iter().all(|a| a.tokens.is_none()) {
        return Ok(None);
    }
    let (unit, unit_reply) = super::usage::usage_unit(s).await?;
    let agreement = if unit.counts_tokens() {
        compare_counts(s, reference, embedded).await?
    } else {
        TokenAgreement::NotCompared {
            why: format!("usage counts {unit}"),
        }
    };
    let fact = s.detected(agreement.clone(), &unit_reply.exchange);
    embeddings::learn(s, |facts| facts.reference_tokens = Some(fact));
    Ok(Some(agreement))
}

/// Compares each answer's `prompt_tokens` with the sum of its texts' known counts; the
/// texts of an answer that disagrees are sent alone (cached when they already were), so
/// the difference is named by text.
async fn compare_counts(
    s: &Session,
    reference: &Reference,
    embedded: &Embedded,
) -> Result<TokenAgreement, ProbeError> {
    let mut compared = 0;
    let mut differing = Vec::new();
    let mut i = 0;
    while i < reference.answers.len() {
        let Ok((_, reply)) = &embedded.items[i] else {
            i += 1;
            continue;
        };
        // The texts this answer carried: the run of items with the same answer.
        let carried = embedded.items[i..]
            .iter()
            .take_while(|item| matches!(item, Ok((_, r)) if Arc::ptr_eq(r, reply)))
            .count();
        let answers = &reference.answers[i..i + carried];
        let expected: Option<u64> = answers.iter().map(|a| a.tokens).sum();
        if let (Some(expected), Some(reported)) = (expected, reply.prompt_tokens()) {
            compared += carried;
            if expected != reported {
                differing.extend(counts_alone(s, answers).await?);
            }
        }
        i += carried;
    }
    Ok(TokenAgreement::Compared {
        texts: compared,
        differing,
    })
}

/// Each text's own count, where it differs from the model's.
async fn counts_alone(s: &Session, answers: &[KnownAnswer]) -> Result<Vec<TokenCount>, ProbeError> {
    let mut differing = Vec::new();
    for answer in answers {
        let reply = s
            .send(requests::document_probe(s, json!(answer.text)))
            .await?;
        if let (Some(reported), Some(reference)) = (reply.prompt_tokens(), answer.tokens)
            && reported != reference
        {
            differing.push(TokenCount {
                text: answer.name(),
                reported,
                reference,
            });
        }
    }
    Ok(differing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: &str) -> KnownAnswer {
        KnownAnswer {
            id: Some(id.to_owned()),
            text: id.to_owned(),
            embedding: vec![1.0, 0.0],
            tokens: Some(5),
            query_embedding: None,
            query_tokens: None,
            ids: None,
        }
    }

    fn reference(answers: Vec<KnownAnswer>) -> Reference {
        Reference {
            header: crate::contracts::embeddings::reference::Header {
                model: "m".to_owned(),
                library: "lib".to_owned(),
                version: "1".to_owned(),
                normalized: true,
                max_seq_length: None,
                prompts: None,
                tokenizer: None,
            },
            answers,
            origin: "test".to_owned(),
        }
    }

    #[test]
    fn a_failure_names_the_worst_texts_their_counts_and_the_median() {
        let reference = reference(vec![answer("ko"), answer("en"), answer("ja")]);
        let reply = Arc::new(Reply::json_for_test(200, json!({})));
        let compared = [
            (&reference.answers[0], 0.6042, &reply),
            (&reference.answers[2], 0.98, &reply),
            (&reference.answers[1], 1.0, &reply),
        ];
        let tokens = TokenAgreement::Compared {
            texts: 3,
            differing: vec![TokenCount {
                text: "ko".to_owned(),
                reported: 20,
                reference: 47,
            }],
        };
        let judged = Judged {
            reference: &reference,
            threshold: 0.99,
            compared: &compared,
            missing: vec!["long (413)".to_owned()],
            tokens: Some(&tokens),
            model: "m",
            sent_as: String::new(),
        };
        let verdict = judged.verdict();
        assert_eq!(verdict.outcome, crate::verdict::Outcome::Fail);
        assert_eq!(
            verdict.reason,
            "2 of 3 texts below cosine 0.99 with lib 1's vectors: ko 0.6042 (20 tokens; the model's tokenizer: 47), ja 0.9800; median 0.9800; not embedded: long (413)"
        );
    }

    #[test]
    fn a_pass_names_the_lowest_and_the_median() {
        let reference = reference(vec![answer("a"), answer("b")]);
        let reply = Arc::new(Reply::json_for_test(200, json!({})));
        let compared = [
            (&reference.answers[0], 0.9995, &reply),
            (&reference.answers[1], 1.0, &reply),
        ];
        let judged = Judged {
            reference: &reference,
            threshold: 0.99,
            compared: &compared,
            missing: Vec::new(),
            tokens: None,
            model: "other",
            sent_as: String::new(),
        };
        let verdict = judged.verdict();
        assert_eq!(verdict.outcome, crate::verdict::Outcome::Pass);
        assert_eq!(
            verdict.reason,
            "all 2 compared texts at cosine ≥ 0.99 with lib 1's vectors: lowest 0.9995 (a), median 0.9998; the reference is of \"m\", the run asked for \"other\""
        );
    }
}
