//! consistency: reproducible vectors (CONS-001 … CONS-005).

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{BatchLimit, Noise};
use crate::contracts::embeddings::requests::{self, BATCH, SENTENCE, body};
use crate::contracts::embeddings::settings;
use crate::http::Reply;
use crate::session::{ProbeError, Session};
use crate::vectors::{NOISE_BOUND, cosine, norm};
use crate::verdict::Verdict;
use serde_json::json;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("CONS-001", same_request_same_vector),
        check!("CONS-002", batch_equals_alone),
        check!("CONS-003", unit_length),
        check!("CONS-004", survives_long_inputs_and_concurrency, aggregate),
        check!("CONS-005", mixed_lengths_keep_their_vectors, aggregate),
        check!("CONS-006", deep_positions_keep_their_vectors, aggregate),
    ]
}

/// Tolerances, as stated in the catalogue: a repeat and a batch may differ from the
/// text alone by what noise explains, no more.
const REPEAT_COSINE: f64 = NOISE_BOUND;
const BATCH_COSINE: f64 = NOISE_BOUND;
const NORM_TOLERANCE: f64 = 0.001;

/// The single probe and its repetition: two identical requests, the second sent
/// fresh (never from the cache).
async fn repeated(s: &Session) -> Result<(Arc<Reply>, Arc<Reply>), ProbeError> {
    let first = requests::single(s).await?;
    let second = s
        .send(requests::probe(body(s, json!(SENTENCE), &[])).fresh())
        .await?;
    Ok((first, second))
}

/// The server's own noise between identical requests, learned once as the `noise`
/// fact; `None` when the repeated request gave no vectors to compare.
pub(crate) async fn noise(s: &Session) -> Result<Option<Noise>, ProbeError> {
    if let Some(known) = embeddings::learned(s).noise {
        return Ok(Some(known.value));
    }
    let (first, second) = repeated(s).await?;
    let (Ok(a), Ok(b)) = (first.float_vectors(), second.float_vectors()) else {
        return Ok(None);
    };
    let (Some(a), Some(b)) = (a.first(), b.first()) else {
        return Ok(None);
    };
    let noise = Noise {
        cosine: cosine(a, b),
        max_abs: a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max),
    };
    let fact = s.searched(noise, 2);
    embeddings::learn(s, |facts| facts.noise = Some(fact));
    Ok(Some(noise))
}

/// CONS-001: "The same request sent twice returns vectors with cosine similarity of
/// at least 0.999."
///
/// The bound is noise's (contract 1.5; 0.9999 before): a GPU server batching the
/// repeat with other neighbours honestly lands between 0.9995 and 0.9999.
async fn same_request_same_vector(s: &Session) -> CheckResult {
    let (first, second) = repeated(s).await?;
    let (a, b) = match (
        super::vectors_or_verdict(&first, 1),
        super::vectors_or_verdict(&second, 1),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(verdict), _) | (_, Err(verdict)) => return Ok(verdict),
    };
    noise(s).await?;
    let similarity = cosine(&a[0], &b[0]);
    let verdict = if similarity >= REPEAT_COSINE {
        Verdict::pass(format!(
            "the same request twice: cosine {similarity:.6} (noise allows {REPEAT_COSINE})"
        ))
    } else {
        Verdict::fail(format!(
            "the same request gave vectors with cosine {similarity:.6} (< {REPEAT_COSINE}): further apart than batch, GPU and fp16 noise (0.9995 or closer in every engine measured)"
        ))
    };
    Ok(verdict.with(&first.exchange).with(&second.exchange))
}

/// CONS-002: "An input embedded inside a batch returns a vector with cosine similarity
/// of at least 0.999 to the same input embedded alone."
async fn batch_equals_alone(s: &Session) -> CheckResult {
    let batch = requests::batch(s).await?;
    let in_batch = match super::vectors_or_verdict(&batch, BATCH.len()) {
        Ok(v) => v,
        Err(verdict) => return Ok(verdict),
    };
    let alone = requests::batch_items_alone(s).await?;
    let (similarity, i) = match lowest_alone(&alone, &in_batch) {
        Ok(lowest) => lowest,
        Err(verdict) => return Ok(verdict),
    };
    let verdict = if similarity >= BATCH_COSINE {
        Verdict::pass(format!("lowest cosine {similarity:.6} (item {i})")).with(&batch.exchange)
    } else {
        Verdict::fail(format!(
            "item {i} inside the batch vs alone: cosine {similarity:.6} (< {BATCH_COSINE})"
        ))
        .with(&batch.exchange)
        .with(&alone[i].exchange)
    };
    Ok(verdict)
}

/// The lowest cosine between an item's vector in a batch and its vector alone, with
/// the item; the verdict to return when an answer alone has no vector.
fn lowest_alone(alone: &[Arc<Reply>], in_batch: &[Vec<f64>]) -> Result<(f64, usize), Verdict> {
    let mut worst = (1.0_f64, 0usize);
    for (i, reply) in alone.iter().enumerate() {
        let own = super::vectors_or_verdict(reply, 1)?;
        let similarity = cosine(&own[0], &in_batch[i]);
        if similarity < worst.0 {
            worst = (similarity, i);
        }
    }
    Ok(worst)
}

/// CONS-003: "Float vectors have an L2 norm of 1 within 0.001."
async fn unit_length(s: &Session) -> CheckResult {
    let single = requests::single(s).await?;
    let batch = requests::batch(s).await?;
    let mut judged = Vec::new();
    for (reply, count) in [(&single, 1), (&batch, BATCH.len())] {
        let vectors = match super::vectors_or_verdict(reply, count) {
            Ok(v) => v,
            Err(verdict) => return Ok(verdict),
        };
        if let Some((i, n)) = vectors
            .iter()
            .map(|v| norm(v))
            .enumerate()
            .find(|(_, n)| (n - 1.0).abs() > NORM_TOLERANCE)
        {
            return Ok(
                Verdict::fail(format!("data[{i}] has L2 norm {n:.6}, not 1")).with(&reply.exchange),
            );
        }
        judged.push(&reply.exchange);
    }
    Ok(Verdict::pass("every vector has unit L2 norm").with_all(judged))
}

/// Lengths, in stream words (about one token each), of CONS-005's batch: short to
/// long, so the short items carry most padding. Those not under the input limit are
/// left out.
/// Not multiples of the stream's 16-word cycle: a model that sums token vectors (the
/// reference server's) gives repetitions of one cycle one vector.
const MIXED_LENGTHS: [usize; 4] = [8, 130, 260, 520];

/// Tokens kept free under the limit for the special tokens a model adds.
const SPECIAL_TOKENS_ROOM: usize = 8;

/// CONS-005: "Each item of a batch mixing inputs of about 8, 128, 256 and 512 tokens
/// (those under the input limit, and one just under it) gets finite values and the
/// vector it gets alone (cosine at least 0.999)."
///
/// An aggregate check, so the input limit is known when the over-length family found
/// it. Padding is where batched kernels go wrong: items padded to the longest come
/// back as nulls (jundot/omlx#3507) or pooled over the padding.
async fn mixed_lengths_keep_their_vectors(s: &Session) -> CheckResult {
    let lengths = mixed_lengths(embeddings::learned(s).known_limit());
    if lengths.len() < 2 {
        return Ok(Verdict::skip(
            "the input limit leaves no room for a batch of mixed lengths",
        ));
    }
    let texts: Vec<String> = lengths.iter().map(|&n| requests::words(n)).collect();
    let batch = s.send(requests::probe(body(s, json!(texts), &[]))).await?;
    let in_batch = match super::vectors_or_verdict(&batch, texts.len()) {
        Ok(v) => v,
        Err(verdict) => return Ok(verdict),
    };
    let mut alone = Vec::with_capacity(texts.len());
    for text in &texts {
        alone.push(s.send(requests::probe(body(s, json!(text), &[]))).await?);
    }
    let (similarity, i) = match lowest_alone(&alone, &in_batch) {
        Ok(lowest) => lowest,
        Err(verdict) => return Ok(verdict.with(&batch.exchange)),
    };
    let words: Vec<String> = lengths.iter().map(ToString::to_string).collect();
    let shape = format!("a batch of {} words", words.join(", "));
    Ok(if similarity < BATCH_COSINE {
        Verdict::fail(format!(
            "in {shape}, item {i} ({} words) vs alone: cosine {similarity:.6} (< {BATCH_COSINE}): padding changes the shorter items",
            lengths[i]
        ))
        .with(&batch.exchange)
        .with(&alone[i].exchange)
    } else {
        Verdict::pass(format!(
            "every item of {shape} kept its vector: lowest cosine {similarity:.6} (item {i})"
        ))
        .with(&batch.exchange)
    })
}

/// The lengths under the limit (`tokens`, and `over_words`, the stream words known to
/// be over it), with room for special tokens, and one just under it; without a known
/// limit, the two shortest.
fn mixed_lengths(limit: Option<(u64, usize)>) -> Vec<usize> {
    let Some((tokens, over_words)) = limit else {
        return MIXED_LENGTHS[..2].to_vec();
    };
    let room = (tokens as usize)
        .min(over_words)
        .saturating_sub(SPECIAL_TOKENS_ROOM);
    let mut lengths: Vec<usize> = MIXED_LENGTHS.into_iter().filter(|&n| n < room).collect();
    if room > lengths.last().copied().unwrap_or(0) && room >= MIXED_LENGTHS[0] {
        lengths.push(room);
    }
    lengths
}

/// Batch sizes where batched kernels and schedulers change paths: each is sampled on
/// both sides (its last position before and its first after). Ollama damaged every
/// item from position 16 on (ollama/ollama#6262: "a jump at batch sizes of 16 or
/// larger"); engines also split batches at powers of two (sequence and token limits).
const POSITION_BOUNDARIES: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

/// The positions of a batch of `size` that CONS-006 compares with their texts alone:
/// the first, both sides of every boundary inside the batch, and the last.
fn sampled_positions(size: usize) -> Vec<usize> {
    let mut positions = vec![0];
    for boundary in POSITION_BOUNDARIES.into_iter().filter(|&b| b < size) {
        positions.extend([boundary - 1, boundary]);
    }
    positions.push(size.saturating_sub(1));
    positions.dedup();
    positions
}

/// CONS-006: "Items at sampled positions of the large batch (IN-008's, or the largest
/// batch the server names), its first, both sides of 16, 32, 64 … 1024 and its last,
/// get the vector they get alone (cosine at least 0.999)."
///
/// An aggregate check, so the batch limit IN-008 found is known. CONS-002 compares
/// batches of four, and a server that damages positions 16 and beyond passes it.
async fn deep_positions_keep_their_vectors(s: &Session) -> CheckResult {
    let (size, batch) = match large_batch_past_the_first_boundary(s).await? {
        Ok(embedded) => embedded,
        Err(skipped) => return Ok(skipped),
    };
    let in_batch = match super::vectors_or_verdict(&batch, size) {
        Ok(v) => v,
        Err(verdict) => return Ok(verdict),
    };
    let texts = requests::numbered_documents(size);
    let positions = sampled_positions(size);
    let mut compared = Vec::with_capacity(positions.len());
    for &i in &positions {
        let alone = s
            .send(requests::probe(body(s, json!(texts[i]), &[])))
            .await?;
        let own = match super::vectors_or_verdict(&alone, 1) {
            Ok(v) => v,
            Err(verdict) => return Ok(verdict.with(&batch.exchange)),
        };
        compared.push((i, cosine(&own[0], &in_batch[i]), alone));
    }
    Ok(judge_positions(size, &compared).with(&batch.exchange))
}

/// The large batch and its size: IN-008's when it was embedded, else one of the
/// largest size the server named; the skip when neither reaches past the first
/// boundary.
async fn large_batch_past_the_first_boundary(
    s: &Session,
) -> Result<Result<(usize, Arc<Reply>), Verdict>, ProbeError> {
    let configured = settings::of(s).large_batch;
    let named = match embeddings::learned(s).max_batch.map(|f| f.value) {
        Some(BatchLimit::Named { limit, .. }) => Some(limit),
        _ => None,
    };
    let size = named.unwrap_or(configured).min(configured);
    let first = POSITION_BOUNDARIES[0];
    if size <= first {
        let why = match named {
            Some(limit) if limit < configured => {
                format!("the server takes at most {limit} inputs per request (IN-008)")
            }
            _ => format!("the large batch has {configured} inputs (--large-batch)"),
        };
        return Ok(Err(Verdict::skip(format!(
            "{why}: no position past {first} to compare"
        ))));
    }
    let batch = requests::large_batch(s, size).await?;
    if !batch.is_success() {
        return Ok(Err(Verdict::skip(format!(
            "a batch of {size} answered {}: no deep positions to compare (see IN-008)",
            batch.summary()
        ))
        .with(&batch.exchange)));
    }
    Ok(Ok((size, batch)))
}

/// The verdict on the compared positions `(position, cosine to alone, answer alone)`:
/// a failure names the first position below the bound, how many are, and the lowest.
fn judge_positions(size: usize, compared: &[(usize, f64, Arc<Reply>)]) -> Verdict {
    let listed: Vec<String> = compared.iter().map(|(i, ..)| i.to_string()).collect();
    let lowest = compared
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("position 0 is always compared");
    let below: Vec<&(usize, f64, Arc<Reply>)> = compared
        .iter()
        .filter(|(_, c, _)| *c < BATCH_COSINE)
        .collect();
    let Some(first) = below.first() else {
        return Verdict::pass(format!(
            "positions {} of a batch of {size} kept the vectors their texts get alone: lowest cosine {:.6} (position {})",
            listed.join(", "),
            lowest.1,
            lowest.0
        ));
    };
    let kept: Vec<String> = compared
        .iter()
        .filter(|(_, c, _)| *c >= BATCH_COSINE)
        .map(|(i, ..)| i.to_string())
        .collect();
    let kept = match kept.as_slice() {
        [] => String::new(),
        some => format!("; positions {} kept theirs", some.join(", ")),
    };
    Verdict::fail(format!(
        "in a batch of {size}, position {} vs its text alone: cosine {:.6} (< {BATCH_COSINE}); {} of {} sampled positions below, lowest {:.6} at position {}{kept}: documents indexed in large batches get other vectors than queries embedded alone",
        first.0,
        first.1,
        below.len(),
        compared.len(),
        lowest.1,
        lowest.0
    ))
    .with(&first.2.exchange)
}

/// Requests in flight beside CONS-004's probe.
const IN_FLIGHT: usize = 4;

/// CONS-004: "The probe sentence keeps its vector when re-embedded after the run's
/// longest inputs, and while 4 other requests are in flight."
///
/// An aggregate check, so it runs after every over-length probe. The sentence's first
/// vector is the one the run began with (IN-001's answer, from the cache); the later
/// ones are fresh requests. Concurrency is sent only to a loopback server: a remote
/// one is not loaded without being asked.
async fn survives_long_inputs_and_concurrency(s: &Session) -> CheckResult {
    let first = first_answer_to_the_sentence(s).await?;
    let Some(before) = first.first_vector() else {
        return Ok(
            Verdict::skip("the probe sentence got no vector (see IN-001)").with(&first.exchange),
        );
    };
    let probe = || requests::probe(body(s, json!(SENTENCE), &[])).fresh();
    let later = s.send(probe()).await?;
    let noise = embeddings::learned(s).noise();
    let mut verdict = Verdict::pass("")
        .with(&first.exchange)
        .with(&later.exchange);
    let mut found = Vec::new();
    match later.first_vector() {
        Some(v) if noise.same(cosine(&before, &v)) => {
            found.push(format!(
                "after the run's longest inputs: cosine {:.6}",
                cosine(&before, &v)
            ));
        }
        Some(v) => {
            return Ok(verdict_changed(
                verdict,
                "after the run's longest inputs",
                cosine(&before, &v),
                noise,
            ));
        }
        None => return Ok(no_vector(verdict, &later)),
    }
    if s.transport().target().is_loopback() {
        let others = (0..IN_FLIGHT).map(|i| {
            let text = BATCH[i % BATCH.len()];
            s.send(requests::probe(body(s, json!([text, SENTENCE]), &[])).fresh())
        });
        let (during, _) = tokio::join!(s.send(probe()), futures::future::join_all(others));
        let during = during?;
        verdict = verdict.with(&during.exchange);
        match during.first_vector() {
            Some(v) if noise.same(cosine(&before, &v)) => found.push(format!(
                "with {IN_FLIGHT} requests in flight: cosine {:.6}",
                cosine(&before, &v)
            )),
            Some(v) => {
                let label = format!("with {IN_FLIGHT} requests in flight");
                return Ok(verdict_changed(verdict, &label, cosine(&before, &v), noise));
            }
            None => return Ok(no_vector(verdict, &during)),
        }
    } else {
        found.push("concurrency not tried: the server is not on this machine".to_owned());
    }
    verdict.reason = format!("the probe sentence kept its vector {}", found.join("; "));
    Ok(verdict)
}

/// The run's first answer to the probe sentence, from the log: the cache holds the
/// latest (CONS-001 sends the sentence again), which a changed server has already
/// changed. Sent now when the run never sent it.
async fn first_answer_to_the_sentence(s: &Session) -> Result<Arc<Reply>, ProbeError> {
    // The log keeps bodies as sent, so the same request has the same bytes.
    let sentence = requests::probe(body(s, json!(SENTENCE), &[]))
        .payload()
        .map(|(bytes, _)| bytes);
    let sent_before = s.log().into_iter().find_map(|logged| {
        (logged.request_body == sentence)
            .then_some(logged.reply)
            .flatten()
    });
    match sent_before {
        Some(reply) => Ok(reply),
        None => requests::single(s).await,
    }
}

fn no_vector(verdict: Verdict, reply: &Reply) -> Verdict {
    let mut none = Verdict::inconclusive(format!(
        "the probe sentence got no vector when sent again: {}",
        reply.summary()
    ));
    none.evidence = verdict.evidence;
    none
}

fn verdict_changed(verdict: Verdict, when: &str, similarity: f64, noise: Noise) -> Verdict {
    let mut failed = Verdict::fail(format!(
        "the probe sentence changed its vector {when}: cosine {similarity:.6} with its first vector (the server's noise allows 1 - {:.6})",
        noise.threshold()
    ));
    failed.evidence = verdict.evidence;
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_sampled_on_both_sides_of_each_boundary_inside_the_batch() {
        assert_eq!(sampled_positions(17), vec![0, 15, 16]);
        assert_eq!(sampled_positions(64), vec![0, 15, 16, 31, 32, 63]);
        assert_eq!(
            sampled_positions(2048),
            vec![
                0, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 511, 512, 1023, 1024, 2047
            ]
        );
    }

    #[test]
    fn mixed_lengths_stay_under_the_limit_and_reach_it() {
        assert_eq!(mixed_lengths(Some((256, 255))), vec![8, 130, 247]);
        assert_eq!(mixed_lengths(Some((512, 470))), vec![8, 130, 260, 462]);
        assert_eq!(
            mixed_lengths(Some((8192, 8200))),
            vec![8, 130, 260, 520, 8184]
        );
        assert_eq!(mixed_lengths(None), vec![8, 130]);
        assert_eq!(mixed_lengths(Some((4, 5))), Vec::<usize>::new());
    }
}
