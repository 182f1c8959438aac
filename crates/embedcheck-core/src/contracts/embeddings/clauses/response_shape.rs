//! response-shape: the success body clients parse (RESP-001 … RESP-007).

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::requests::{self, BATCH};
use crate::http::Reply;
use crate::schemas::Schemas;
use crate::session::facts::describe_request;
use crate::session::{ProbeError, Session};
use crate::vectors::{SAME_EMBEDDING, cosine};
use crate::verdict::Verdict;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("RESP-001", matches_schema),
        check!("RESP-002", one_item_per_input),
        check!("RESP-003", items_in_input_order),
        check!("RESP-004", finite_numbers, log),
        check!("RESP-005", one_dimension),
        check!("RESP-006", json_content_type),
        check!("RESP-007", no_empty_or_shared_vectors, log),
    ]
}

/// The single and batch answers, the two every shape clause judges.
async fn success_replies(s: &Session) -> Result<Vec<Arc<Reply>>, ProbeError> {
    Ok(vec![requests::single(s).await?, requests::batch(s).await?])
}

/// Skip when no probe got a 200: IN-001 and IN-002 report that failure.
fn successful(replies: &[Arc<Reply>]) -> Result<Vec<&Reply>, Verdict> {
    let ok: Vec<&Reply> = replies
        .iter()
        .map(AsRef::as_ref)
        .filter(|r| r.is_success())
        .collect();
    if ok.is_empty() {
        return Err(Verdict::skip(
            "no probe was answered 200; nothing to judge (see IN-001, IN-002)",
        )
        .with_all(replies.iter().map(|r| &r.exchange)));
    }
    Ok(ok)
}

/// RESP-001: "A 200 answer to a valid request … validates against
/// specs/schemas/embedding-response.schema.json".
async fn matches_schema(s: &Session) -> CheckResult {
    let replies = success_replies(s).await?;
    let ok = match successful(&replies) {
        Ok(ok) => ok,
        Err(verdict) => return Ok(verdict),
    };
    for reply in ok.iter() {
        let Some(json) = &reply.json else {
            return Ok(Verdict::fail("the 200 body is not JSON").with(&reply.exchange));
        };
        let problems = Schemas::get().response_problems(json);
        if !problems.is_empty() {
            return Ok(Verdict::fail(format!(
                "the 200 body breaks the schema: {}",
                problems.join("; ")
            ))
            .with(&reply.exchange));
        }
    }
    Ok(
        Verdict::pass("single and batch answers match the response schema")
            .with_all(ok.iter().map(|r| &r.exchange)),
    )
}

/// RESP-002: "data holds exactly one item for each input of the request."
async fn one_item_per_input(s: &Session) -> CheckResult {
    let replies = success_replies(s).await?;
    let expected = [1, BATCH.len()];
    let mut judged = Vec::new();
    for (reply, want) in replies.iter().zip(expected) {
        if !reply.is_success() {
            continue;
        }
        match reply.data() {
            Ok(data) if data.len() == want => judged.push(&reply.exchange),
            Ok(data) => {
                return Ok(Verdict::fail(format!(
                    "{} items in data for {want} inputs",
                    data.len()
                ))
                .with(&reply.exchange));
            }
            Err(why) => return Ok(Verdict::fail(why).with(&reply.exchange)),
        }
    }
    if judged.is_empty() {
        return Ok(Verdict::skip(
            "no probe was answered 200; nothing to judge (see IN-001, IN-002)",
        ));
    }
    Ok(Verdict::pass("one item per input").with_all(judged))
}

/// RESP-003: "data[i].index equals i and data is in input order."
///
/// The index fields are checked directly; the order of the vectors themselves is
/// checked by matching each batch vector to the same document embedded alone, which
/// catches a server that renumbers a shuffled list.
async fn items_in_input_order(s: &Session) -> CheckResult {
    let batch = requests::batch(s).await?;
    if !batch.is_success() {
        return Ok(Verdict::skip(format!(
            "the batch was answered {}, not 200; see IN-002",
            batch.summary()
        ))
        .with(&batch.exchange));
    }
    let data = match batch.data() {
        Ok(data) => data,
        Err(why) => return Ok(Verdict::fail(why).with(&batch.exchange)),
    };
    let indices: Vec<Option<u64>> = data
        .iter()
        .map(|d| d.get("index").and_then(|i| i.as_u64()))
        .collect();
    if let Some(pos) = indices
        .iter()
        .enumerate()
        .position(|(i, idx)| *idx != Some(i as u64))
    {
        return Ok(Verdict::fail(format!(
            "data[{pos}].index is {}, expected {pos} (indices {})",
            fmt_index(indices[pos]),
            indices
                .iter()
                .map(|i| fmt_index(*i))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with(&batch.exchange));
    }
    let vectors = match super::vectors_or_verdict(&batch, BATCH.len()) {
        Ok(v) => v,
        Err(verdict) => return Ok(verdict),
    };
    let alone = requests::batch_items_alone(s).await?;
    for (i, reply) in alone.iter().enumerate() {
        let Ok(own) = super::vectors_or_verdict(reply, 1) else {
            continue;
        };
        let best = nearest(&own[0], &vectors);
        if best != i {
            return Ok(Verdict::fail(format!(
                "input {i} embedded alone is closest to data[{best}], not data[{i}]: items are out of order"
            ))
            .with(&batch.exchange)
            .with(&reply.exchange));
        }
    }
    Ok(
        Verdict::pass("indices 0..n in order, and each item matches its input embedded alone")
            .with(&batch.exchange),
    )
}

fn fmt_index(index: Option<u64>) -> String {
    index.map_or_else(|| "missing".to_owned(), |i| i.to_string())
}

/// The position of the vector most similar to `v`.
fn nearest(v: &[f64], candidates: &[Vec<f64>]) -> usize {
    candidates
        .iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| cosine(v, a).total_cmp(&cosine(v, b)))
        .map_or(0, |(i, _)| i)
}

/// RESP-004: "Every value of every embedding in every 200 answer of the run is a
/// finite number: a JSON number in a float array, a finite float32 in a base64 string."
///
/// Every answer, not only this clause's: a server that answers the shorter items of a
/// mixed-length batch with `null`s (jundot/omlx#3507) does so for requests other
/// clauses send, and a report must not say "every value is a finite number" beside
/// one of them.
async fn finite_numbers(s: &Session) -> CheckResult {
    let own = success_replies(s).await?;
    let unreadable = own
        .iter()
        .find(|r| r.is_success() && r.json.is_none() && r.non_finite_value().is_none());
    if let Some(reply) = unreadable {
        return Ok(Verdict::fail("the 200 body is not valid JSON").with(&reply.exchange));
    }
    let answered: Vec<Arc<Reply>> = s
        .log()
        .into_iter()
        .filter_map(|logged| logged.reply)
        .filter(|r| r.is_success() && (r.data().is_ok() || r.non_finite_value().is_some()))
        .collect();
    if answered.is_empty() {
        return Ok(successful(&own).err().unwrap_or_else(|| {
            Verdict::skip("no 200 with embeddings to judge (see IN-001, IN-002)")
        }));
    }
    let broken: Vec<(&Arc<Reply>, String)> = answered
        .iter()
        .filter_map(|r| r.non_finite_value().map(|why| (r, why)))
        .collect();
    let vectors: usize = answered
        .iter()
        .filter_map(|r| r.data().ok().map(<[_]>::len))
        .sum();
    let Some((first, why)) = broken.first() else {
        return Ok(Verdict::pass(format!(
            "every value of all {} answers with embeddings ({vectors} vectors) this run received is a finite number",
            answered.len()
        ))
        .with_all(own.iter().map(|r| &r.exchange)));
    };
    Ok(Verdict::fail(format!(
        "{} of {} answers with embeddings carry values that are not finite numbers; the first, to {}: {why}",
        broken.len(),
        answered.len(),
        describe_request(&first.exchange)
    ))
    .with_all(broken.iter().take(3).map(|(r, _)| &r.exchange)))
}

/// RESP-005: "All vectors in a response have the same non-zero length, and that
/// length is the same across requests …"
async fn one_dimension(s: &Session) -> CheckResult {
    let replies = success_replies(s).await?;
    let ok = match successful(&replies) {
        Ok(ok) => ok,
        Err(verdict) => return Ok(verdict),
    };
    let mut seen: Option<(usize, &Reply)> = None;
    for reply in ok.iter() {
        let vectors = match reply.float_vectors() {
            Ok(v) => v,
            Err(why) => {
                return Ok(
                    Verdict::skip(format!("vectors unreadable ({why}); see RESP-004"))
                        .with(&reply.exchange),
                );
            }
        };
        for (i, v) in vectors.iter().enumerate() {
            match seen {
                _ if v.is_empty() => {
                    return Ok(Verdict::fail(format!("data[{i}].embedding is empty"))
                        .with(&reply.exchange));
                }
                None => seen = Some((v.len(), reply)),
                Some((dim, first)) if dim != v.len() => {
                    return Ok(Verdict::fail(format!(
                        "data[{i}].embedding has {} values where an earlier vector had {dim}",
                        v.len()
                    ))
                    .with(&first.exchange)
                    .with(&reply.exchange));
                }
                Some(_) => {}
            }
        }
    }
    let dim = seen.map_or(0, |(d, _)| d);
    if let Some(first) = ok.first() {
        let fact = s.detected(dim, &first.exchange);
        embeddings::learn(s, |facts| facts.native_dimension = Some(fact));
    }
    Ok(Verdict::pass(format!("every vector has {dim} values"))
        .with_all(ok.iter().map(|r| &r.exchange)))
}

/// RESP-006: "A 200 answer is served with Content-Type application/json."
async fn json_content_type(s: &Session) -> CheckResult {
    let replies = success_replies(s).await?;
    let ok = match successful(&replies) {
        Ok(ok) => ok,
        Err(verdict) => return Ok(verdict),
    };
    if let Some(bad) = ok.iter().find(|r| !r.has_json_content_type()) {
        return Ok(Verdict::fail(format!(
            "200 served with Content-Type {}",
            bad.content_type.as_deref().unwrap_or("(none)")
        ))
        .with(&bad.exchange));
    }
    Ok(Verdict::pass("Content-Type application/json").with_all(ok.iter().map(|r| &r.exchange)))
}

/// RESP-007: "No embedding the server returns is all zeros, and two distinct inputs of
/// one request never get the identical vector."
///
/// First the look-alike request ([`requests::LOOK_ALIKES`]): all-caps phrases, accented
/// words, Hangul words that share leading consonants, which a broken tokenizer reads as
/// the same tokens; a pair whose control the server also merges says nothing (its
/// vocabulary may rightly lack the script). Then every 200 of the run with its
/// request's string inputs. A pair counts only
/// when both inputs differ after lower-casing and collapsing whitespace (uncased models
/// rightly merge case variants), are mostly ASCII letters (text of an unknown script
/// can rightly become one unknown token) and stay apart when every word with a
/// character outside ASCII is one unknown word (WordPiece reads such a word as
/// `[UNK]`), were not sent by an over-length clause (a
/// truncating server rightly gives inputs with one beginning one vector) and belong to
/// a request of at most [`DISTINCT_UP_TO`] inputs.
async fn no_empty_or_shared_vectors(s: &Session) -> CheckResult {
    requests::batch(s).await?;
    let look_alikes = requests::look_alikes(s).await?;
    if let Some(merged) = merged_look_alike(&look_alikes) {
        return Ok(merged);
    }
    let log = s.log();
    let mut judged = 0usize;
    for logged in &log {
        let Some(reply) = logged.reply.as_ref().filter(|r| r.is_success()) else {
            continue;
        };
        let Ok(embeddings) = reply.embeddings() else {
            continue;
        };
        judged += 1;
        if let Some(i) = embeddings
            .vectors
            .iter()
            .position(|v| v.iter().all(|x| *x == 0.0))
        {
            return Ok(Verdict::fail(format!(
                "item {i} is all zeros ({} values): a client stores it without noticing",
                embeddings.vectors[i].len()
            ))
            .with(&reply.exchange));
        }
        if logged.clause.is_some_and(|c| c.starts_with("LEN-")) {
            continue;
        }
        let inputs = string_inputs(logged.request_body.as_deref());
        // The look-alikes were judged above, with their controls: an uncased model
        // rightly gives "ostéoporose" and "osteoporose" one vector.
        if inputs.len() > DISTINCT_UP_TO || inputs == requests::look_alike_inputs() {
            continue;
        }
        let limit = embeddings::learned(s)
            .known_limit()
            .map(|(tokens, _)| tokens);
        if let Some((a, b)) = shared_vector(&inputs, &embeddings.vectors, limit) {
            return Ok(Verdict::fail(format!(
                "inputs {a} and {b} of one request ({:?} and {:?}) got the identical vector: the server does not embed what it is sent",
                judging_text(&inputs[a]),
                judging_text(&inputs[b])
            ))
            .with(&reply.exchange));
        }
    }
    if judged == 0 {
        return Ok(Verdict::skip(
            "no request of the run was answered 200 with vectors: nothing to judge",
        ));
    }
    Ok(Verdict::pass(format!(
        "none of {judged} successful answers holds an all-zero vector or one vector for two distinct inputs"
    )))
}

/// The failure for the first look-alike pair the server gives one vector while it
/// keeps the pair's control apart; `None` when there is none, or no vectors to judge.
fn merged_look_alike(reply: &Reply) -> Option<Verdict> {
    let inputs = requests::look_alike_inputs();
    let vectors = reply
        .is_success()
        .then(|| reply.embeddings().ok())??
        .vectors;
    // One vector for everything is no tokenizer's doing: the scan of the run names it.
    if vectors.len() != inputs.len() || vectors.iter().all(|v| *v == vectors[0]) {
        return None;
    }
    let vector = |text: &str| inputs.iter().position(|t| *t == text).map(|i| &vectors[i]);
    let same = |[a, b]: [&str; 2]| -> Option<(bool, f64)> {
        let c = cosine(vector(a)?, vector(b)?);
        Some((vector(a)? == vector(b)? || c >= SAME_EMBEDDING, c))
    };
    requests::LOOK_ALIKES.iter().find_map(|look| {
        let (merged, c) = same(look.pair)?;
        let control_apart = look.control.is_none_or(|control| same(control).is_some_and(|(m, _)| !m));
        (merged && control_apart).then(|| {
            let control = look.control.map_or(String::new(), |[a, b]| {
                format!(", while {a:?} and {b:?} got two")
            });
            Verdict::fail(format!(
                "{} of one request, {:?} and {:?}, got one vector (cosine {c:.6}){control}: the server reads them as the same tokens (as {})",
                look.what, look.pair[0], look.pair[1], look.seen
            ))
            .with(&reply.exchange)
        })
    })
}

/// Requests of up to this many inputs are judged for shared vectors. In a larger batch
/// a tokenizer that hashes pieces into its vocabulary (the reference server's does)
/// gives some distinct inputs one vector by collision; the constant-vector worker this
/// clause is for shows in every batch.
const DISTINCT_UP_TO: usize = 64;

/// The string inputs of a request body, in order; empty for any other input.
fn string_inputs(body: Option<&[u8]>) -> Vec<String> {
    let Some(value) = body.and_then(crate::json::parse) else {
        return Vec::new();
    };
    match value.get("input") {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    }
}

/// The first pair of distinct, judgeable inputs with bit-identical vectors. Two inputs
/// that may both be over the input `limit` are not a pair: a truncating server rightly
/// gives two texts with the same beginning one vector (a mixed-length batch's long
/// items). A text of fewer UTF-8 bytes than the limit has fewer tokens than it.
fn shared_vector(
    inputs: &[String],
    vectors: &[Vec<f64>],
    limit: Option<u64>,
) -> Option<(usize, usize)> {
    let judgeable: Vec<usize> = (0..inputs.len().min(vectors.len()))
        .filter(|&i| mostly_ascii_letters(&inputs[i]))
        .collect();
    let maybe_cut = |text: &str| limit.is_some_and(|l| text.len() as u64 + 2 >= l);
    for (n, &a) in judgeable.iter().enumerate() {
        for &b in &judgeable[n + 1..] {
            if maybe_cut(&inputs[a]) && maybe_cut(&inputs[b]) {
                continue;
            }
            let apart = normalised(&inputs[a]) != normalised(&inputs[b])
                && as_wordpiece_may_read(&inputs[a]) != as_wordpiece_may_read(&inputs[b]);
            if apart && vectors[a] == vectors[b] {
                return Some((a, b));
            }
        }
    }
    None
}

/// A text as one input: composed (two Unicode spellings of a text are one text, which a
/// normalising tokenizer rightly embeds alike), lower-cased, whitespace collapsed.
fn normalised(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfc()
        .collect::<String>()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A text as the least a WordPiece tokenizer may keep of it: each word with a
/// character outside ASCII becomes one unknown token (WordPiece turns a whole word it
/// cannot spell from its vocabulary into `[UNK]`: "YtมZアF🔧" and "R💹BE😹" are both
/// `[UNK]` to all-MiniLM-L6-v2, and the model's own library embeds them alike).
fn as_wordpiece_may_read(text: &str) -> Vec<String> {
    normalised(text)
        .split(' ')
        .map(|word| match word.chars().all(|c| c.is_ascii_graphic()) {
            true => word.to_owned(),
            false => "[UNK]".to_owned(),
        })
        .collect()
}

/// At least half the non-space characters are ASCII letters, and there are some.
fn mostly_ascii_letters(text: &str) -> bool {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let letters = chars.iter().filter(|c| c.is_ascii_alphabetic()).count();
    letters >= 3 && letters * 2 >= chars.len()
}

/// An input as a reason shows it: at most 40 characters.
fn judging_text(text: &str) -> String {
    let short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn texts_a_wordpiece_vocabulary_reads_as_one_unknown_word_may_share_a_vector() {
        let same = vec![vec![0.6, 0.8], vec![0.6, 0.8]];
        // LiteLLM in front of Infinity with all-MiniLM-L6-v2 (measured in the lab): both
        // are one word with characters outside the vocabulary, so both are `[UNK]`.
        let unknown = texts(&["YtมZアF🔧", "R💹BE😹"]);
        assert_eq!(shared_vector(&unknown, &same, None), None);
        let known = texts(&["quick brown fox", "lazy sleeping dog"]);
        assert_eq!(shared_vector(&known, &same, None), Some((0, 1)));
        let one_word_apart = texts(&["quick brown 😀", "quick green 😀"]);
        assert_eq!(shared_vector(&one_word_apart, &same, None), Some((0, 1)));
    }
}
