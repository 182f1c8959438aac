//! Judging answers the same way in every family: refusals of client mistakes, vectors
//! of a 200, refusals that name a field, throttling answers that say when to come back.

use crate::http::{AskedWait, Probe, Reply};
use crate::session::{ProbeError, Session, Throttled};
use crate::verdict::Verdict;

/// Sends each labelled client mistake and passes only if every one is refused with a
/// 4xx; a failure lists each mistake that was not, with its answer.
pub(crate) async fn expect_all_refused(
    s: &Session,
    mistakes: Vec<(String, Probe)>,
    pass_reason: &str,
) -> Result<Verdict, ProbeError> {
    let mut refused = Vec::new();
    let mut wrong = Vec::new();
    for (label, probe) in mistakes {
        let reply = s.send(probe).await?;
        if reply.is_client_error() {
            refused.push(reply);
        } else {
            wrong.push((format!("{label} answered {}", reply.summary()), reply));
        }
    }
    Ok(if wrong.is_empty() {
        Verdict::pass(pass_reason).with_all(refused.iter().map(|r| &r.exchange))
    } else {
        let reasons: Vec<&str> = wrong.iter().map(|(why, _)| why.as_str()).collect();
        Verdict::fail(format!("{}; expected a 4xx", reasons.join("; ")))
            .with_all(wrong.iter().map(|(_, r)| &r.exchange))
    })
}

/// A 4xx whose message (or `param`) names `field`, or why the answer is not one.
pub(crate) fn refused_naming(reply: &Reply, field: &str) -> Result<(), String> {
    if !reply.is_client_error() {
        return Err(format!("answered {}, expected a 4xx", reply.summary()));
    }
    if names(&reply.error_text(), field) {
        return Ok(());
    }
    Err(format!(
        "refused with {} but the message does not name {field}: {:?}",
        reply.status,
        reply.error_message().unwrap_or_default()
    ))
}

/// Whether `text` has `field` as a whole word: a short field name found inside another
/// word ("dim" in "dimensions") does not count.
fn names(text: &str, field: &str) -> bool {
    let field = field.to_lowercase();
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == field)
}

/// The longest Retry-After the OpenAI SDKs wait for; beyond it they do not retry.
const MAX_RETRY_AFTER_SECONDS: f64 = 120.0;

/// Whether every one of a contract's throttling answers (429 or 503) says when to come
/// back, in a Retry-After of seconds or an HTTP date or a retry-after-ms, within
/// [`MAX_RETRY_AFTER_SECONDS`]; skip when there were none (ERR-012, RRL-007).
pub(crate) fn throttling_says_when(throttled: &[Throttled]) -> Verdict {
    if throttled.is_empty() {
        return Verdict::skip("not observed: no request of the run was answered 429 or 503");
    }
    let bad: Vec<(&Reply, String)> = throttled
        .iter()
        .filter_map(|t| retry_after_problem(&t.reply).map(|why| (t.reply.as_ref(), why)))
        .collect();
    let exchanges = throttled.iter().map(|t| &t.reply.exchange);
    match bad.first() {
        Some((reply, why)) => Verdict::fail(format!(
            "{} of {} throttling answers do not say when to come back; {}: {why}",
            bad.len(),
            throttled.len(),
            reply.status
        ))
        .with_all(exchanges),
        None => Verdict::pass(format!(
            "all {} throttling answers carry a Retry-After of at most {MAX_RETRY_AFTER_SECONDS} s",
            throttled.len()
        ))
        .with_all(exchanges),
    }
}

/// What is wrong with a throttling answer's retry headers, if anything.
fn retry_after_problem(reply: &Reply) -> Option<String> {
    let wait = match reply.asked_wait() {
        AskedWait::Seconds(seconds) => seconds,
        // Valid, and how far ahead it is cannot be judged reliably against an unknown
        // server clock.
        AskedWait::HttpDate => return None,
        AskedWait::Unreadable(v) => {
            return Some(format!(
                "Retry-After {v:?} is neither seconds nor an HTTP date"
            ));
        }
        AskedWait::NotSaid => return Some("no Retry-After and no retry-after-ms".to_owned()),
    };
    (wait > MAX_RETRY_AFTER_SECONDS).then(|| {
        format!("asks for {wait} s, beyond the {MAX_RETRY_AFTER_SECONDS} s after which the OpenAI SDKs stop retrying")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_named_only_as_a_whole_word() {
        assert!(names("unrecognized request argument supplied: abc", "abc"));
        assert!(names(
            "'dimensions' must be at most 256 body.dimensions",
            "dimensions"
        ));
        assert!(!names("a bad request about abcd", "abc"));
        assert!(!names("invalid dimensions", "dim"));
    }

    #[test]
    fn throttling_passes_only_when_every_answer_says_when() {
        use crate::http::Validity;
        use crate::http::probe::Resource;
        use crate::session::Persisted;
        use crate::verdict::Outcome;
        let throttled = |retry_after: Option<&str>| {
            let mut reply =
                Reply::json_for_test(429, serde_json::json!({"error": {"message": "slow down"}}));
            reply.retry_after = retry_after.map(str::to_owned);
            Throttled {
                validity: Validity::Valid,
                resource: Resource::Contract(crate::http::route::TESTING),
                reply: std::sync::Arc::new(reply),
                persisted: Persisted::No,
            }
        };
        let kept = throttling_says_when(&[throttled(Some("2")), throttled(Some("1.5"))]);
        assert_eq!(kept.outcome, Outcome::Pass, "{}", kept.reason);
        let broken = throttling_says_when(&[throttled(Some("2")), throttled(None)]);
        assert_eq!(broken.outcome, Outcome::Fail, "{}", broken.reason);
        assert!(
            broken.reason.starts_with("1 of 2 throttling answers"),
            "{}",
            broken.reason
        );
        let far = throttling_says_when(&[throttled(Some("600"))]);
        assert_eq!(far.outcome, Outcome::Fail, "{}", far.reason);
        assert_eq!(throttling_says_when(&[]).outcome, Outcome::Skip);
    }
}
