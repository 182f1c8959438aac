//! usage: token accounting (USE-001 … USE-003).

use super::{Check, CheckResult, check};
use crate::http::Reply;
use crate::session::Session;
use crate::session::requests::{self, BATCH};
use crate::verdict::Verdict;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("USE-001", integer_counts),
        check!("USE-002", positive_counts),
        check!("USE-003", batch_is_sum_of_items),
    ]
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
