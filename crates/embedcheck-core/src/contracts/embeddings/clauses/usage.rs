//! usage: token accounting (USE-001 … USE-003, USE-005).
//!
//! USE-005 also establishes the `usage_unit` fact that everything leaning on usage
//! reads first: the over-length limit search, the token budget, the migration's
//! tokenizer remark. A count that is not in tokens is never read as one.

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings::requests::{self, BATCH, body};
use crate::http::Reply;
use crate::session::facts::UsageUnit;
use crate::session::{ProbeError, Session};
use crate::verdict::Verdict;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("USE-001", integer_counts),
        check!("USE-002", positive_counts),
        check!("USE-003", batch_is_sum_of_items),
        check!("USE-004", token_ids_counted),
        check!("USE-005", counts_tokens),
    ]
}

/// The word USE-005's text repeats: the commonest English word, one token in every
/// subword vocabulary (WordPiece, BPE, SentencePiece) and in the reference server's.
const COUNTED_WORD: &str = "the";

/// How many times it is repeated: enough that characters (4 per word with the space)
/// and tokens (1 per word, plus a few special ones) cannot be mistaken for each other.
const COUNTED_WORDS: u64 = 200;

/// What `usage.prompt_tokens` counts, and the answer that shows it; learned as the
/// `usage_unit` fact (the request is cached, so asking again costs nothing).
pub(crate) async fn usage_unit(s: &Session) -> Result<(UsageUnit, Arc<Reply>), ProbeError> {
    let text = vec![COUNTED_WORD; COUNTED_WORDS as usize].join(" ");
    let reply = s.send(requests::probe(body(s, json!(text), &[]))).await?;
    let unit = unit_of(reply.prompt_tokens().filter(|_| reply.is_success()), &text);
    if s.facts().usage_unit.is_none() {
        let fact = s.detected(unit.clone(), &reply.exchange);
        s.learn(|facts| facts.usage_unit = Some(fact));
    }
    Ok((unit, reply))
}

fn unit_of(reported: Option<u64>, text: &str) -> UsageUnit {
    let Some(reported) = reported else {
        return UsageUnit::Absent;
    };
    let (words, chars) = (COUNTED_WORDS, text.chars().count() as u64);
    // Special tokens ([CLS], [SEP], BOS, EOS) add a few; a tokenizer that splits the
    // word adds at most a quarter more.
    if (words..=words * 5 / 4 + 8).contains(&reported) {
        UsageUnit::Tokens { reported, words }
    } else if reported.abs_diff(chars) <= 4 {
        UsageUnit::Characters { reported, chars }
    } else {
        UsageUnit::Other {
            reported,
            words,
            chars,
        }
    }
}

/// USE-005: "usage.prompt_tokens counts tokens, not characters or bytes."
async fn counts_tokens(s: &Session) -> CheckResult {
    let (unit, reply) = usage_unit(s).await?;
    if !reply.is_success() {
        return Ok(no_success(&[reply]));
    }
    let verdict = match &unit {
        UsageUnit::Tokens { .. } => Verdict::pass(format!("prompt_tokens counts {unit}")),
        UsageUnit::Absent => Verdict::skip("no integer usage.prompt_tokens to judge; see USE-001"),
        UsageUnit::Characters { .. } | UsageUnit::Other { .. } => Verdict::fail(format!(
            "prompt_tokens counts {unit}: clients budgeting tokens or chunking by these counts are misled; report tokens"
        )),
    };
    Ok(verdict.with(&reply.exchange))
}

fn no_success(replies: &[Arc<Reply>]) -> Verdict {
    Verdict::skip("no probe was answered 200; nothing to judge (see IN-001, IN-002)")
        .with_all(replies.iter().map(|r| &r.exchange))
}

/// USE-001: "usage.prompt_tokens and usage.total_tokens are non-negative integers."
async fn integer_counts(s: &Session) -> CheckResult {
    let replies = [requests::single(s).await?, requests::batch(s).await?];
    let ok: Vec<&Arc<Reply>> = replies.iter().filter(|r| r.is_success()).collect();
    if ok.is_empty() {
        return Ok(no_success(&replies));
    }
    for reply in &ok {
        for field in ["prompt_tokens", "total_tokens"] {
            let value = reply
                .json
                .as_ref()
                .and_then(|j| j.pointer(&format!("/usage/{field}")));
            if !value.is_some_and(Value::is_u64) {
                let shown = value.map_or("missing".to_owned(), Value::to_string);
                return Ok(Verdict::fail(format!(
                    "usage.{field} is {shown}, not a non-negative integer"
                ))
                .with(&reply.exchange));
            }
        }
    }
    Ok(Verdict::pass("both counts are integers").with_all(ok.iter().map(|r| &r.exchange)))
}

/// USE-002: "For non-empty input, prompt_tokens is positive and total_tokens is at
/// least prompt_tokens."
async fn positive_counts(s: &Session) -> CheckResult {
    let replies = [requests::single(s).await?, requests::batch(s).await?];
    let ok: Vec<&Arc<Reply>> = replies.iter().filter(|r| r.is_success()).collect();
    if ok.is_empty() {
        return Ok(no_success(&replies));
    }
    for reply in &ok {
        let (Some(prompt), Some(total)) = (reply.prompt_tokens(), reply.total_tokens()) else {
            return Ok(
                Verdict::skip("usage counts are not integers; see USE-001").with(&reply.exchange)
            );
        };
        if prompt == 0 {
            return Ok(
                Verdict::fail("prompt_tokens is 0 for non-empty input").with(&reply.exchange)
            );
        }
        if total < prompt {
            return Ok(Verdict::fail(format!(
                "total_tokens {total} is below prompt_tokens {prompt}"
            ))
            .with(&reply.exchange));
        }
    }
    Ok(
        Verdict::pass("counts are positive and consistent")
            .with_all(ok.iter().map(|r| &r.exchange)),
    )
}

/// USE-003: "The prompt_tokens of a batch equals the sum of the prompt_tokens of its
/// items sent alone."
async fn batch_is_sum_of_items(s: &Session) -> CheckResult {
    let batch = requests::batch(s).await?;
    let alone = requests::batch_items_alone(s).await?;
    let evidence = std::iter::once(&batch.exchange).chain(alone.iter().map(|r| &r.exchange));
    let counts: Option<Vec<u64>> = alone
        .iter()
        .map(|r| r.prompt_tokens().filter(|_| r.is_success()))
        .collect();
    let (Some(batch_tokens), Some(counts)) =
        (batch.prompt_tokens().filter(|_| batch.is_success()), counts)
    else {
        return Ok(
            Verdict::skip("the batch or an item alone has no integer usage; see USE-001")
                .with_all(evidence),
        );
    };
    let sum: u64 = counts.iter().sum();
    let shown = counts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" + ");
    Ok(if batch_tokens == sum {
        Verdict::pass(format!("batch {batch_tokens} = {shown}"))
    } else {
        Verdict::fail(format!(
            "batch of {} counts {batch_tokens} prompt tokens, items alone {shown} = {sum}",
            BATCH.len()
        ))
    }
    .with_all(evidence))
}

/// Special tokens a model adds around each input ([CLS] and [SEP]): what a token-id
/// input may count beyond its ids, and what the over-length clauses leave free below
/// the limit.
pub(super) const SPECIAL_TOKENS: u64 = 2;

/// USE-004: "For token-id input, usage.prompt_tokens equals the number of ids sent (a
/// server that adds special tokens to ids may add at most two)."
///
/// Judged on IN-003's own requests (from the cache); skipped when the server refuses
/// token ids or reports no usage.
async fn token_ids_counted(s: &Session) -> CheckResult {
    let mut counted = Vec::new();
    for form in requests::token_id_forms() {
        let reply = s
            .send(requests::probe(body(s, form.input.clone(), &[])))
            .await?;
        if let (true, Some(tokens)) = (reply.is_success(), reply.prompt_tokens()) {
            counted.push((form, tokens, reply));
        }
    }
    if counted.is_empty() {
        return Ok(Verdict::skip(
            "no token-id input was embedded with a usage count (IN-003 shows the answers)",
        ));
    }
    let wrong = counted.iter().find(|(form, tokens, _)| {
        *tokens < form.ids || *tokens > form.ids + SPECIAL_TOKENS * form.inputs as u64
    });
    let exchanges = counted.iter().map(|(_, _, r)| &r.exchange);
    let line = |(form, tokens, _): &(requests::TokenIds, u64, Arc<Reply>)| {
        format!("{} ids counted as {tokens}", form.ids)
    };
    let lines: Vec<String> = counted.iter().map(line).collect();
    Ok(match wrong {
        Some(found) => Verdict::fail(format!(
            "{}: expected the number of ids (at most {} more per input for special tokens)",
            line(found),
            SPECIAL_TOKENS
        )),
        None => Verdict::pass(lines.join("; ")),
    }
    .with_all(exchanges))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_as_tokens_characters_or_neither() {
        let text = vec![COUNTED_WORD; COUNTED_WORDS as usize].join(" ");
        assert!(unit_of(Some(202), &text).counts_tokens());
        assert_eq!(
            unit_of(Some(799), &text),
            UsageUnit::Characters {
                reported: 799,
                chars: 799
            }
        );
        assert_eq!(
            reference_server::tokenize(&text, 50_000).len() as u64,
            COUNTED_WORDS,
            "one token a word for the reference server too"
        );
        assert!(matches!(unit_of(Some(50), &text), UsageUnit::Other { .. }));
        assert_eq!(unit_of(None, &text), UsageUnit::Absent);
    }
}
