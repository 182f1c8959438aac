//! auth: credentials (AUTH-001).

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings::requests;
use crate::session::Session;
use crate::verdict::Verdict;

pub(crate) fn checks() -> Vec<Check> {
    vec![check!("AUTH-001", missing_credentials_refused)]
}

/// AUTH-001: "When the endpoint requires an API key, a request without one is refused
/// with 401 (or 403)."
///
/// Only judged when the user gave a key: without one the suite cannot know whether
/// the endpoint wants one, and it never reads a key implicitly.
async fn missing_credentials_refused(s: &Session) -> CheckResult {
    if !s.transport().access().has_credentials() {
        return Ok(Verdict::skip(
            "no --api-key-env or --header-env given; the endpoint was audited without credentials",
        ));
    }
    let reply = s.send(requests::single_without_credentials(s)).await?;
    let answered = reply.is_success();
    let fact = s.detected(!answered, &reply.exchange);
    s.learn(|facts| facts.auth_required = Some(fact));
    Ok(match reply.status {
        401 | 403 => Verdict::pass(format!("refused without a key: {}", reply.summary())),
        200..=299 => Verdict::skip("the endpoint answers without a key: it does not require one"),
        _ => Verdict::fail(format!(
            "answered {} without a key, expected 401 or 403",
            reply.summary()
        )),
    }
    .with(&reply.exchange))
}
