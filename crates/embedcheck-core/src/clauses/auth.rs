//! auth: credentials (AUTH-001).

use super::probes::{SENTENCE, body};
use super::{Check, CheckResult, check};
use crate::http::Probe;
use crate::model::Verdict;
use crate::session::Session;
use serde_json::json;

pub(crate) fn checks() -> Vec<Check> {
    vec![check!("AUTH-001", missing_credentials_refused)]
}

/// AUTH-001: "When the endpoint requires an API key, a request without one is refused
/// with 401 (or 403)."
///
/// Only judged when the user gave a key: without one the suite cannot know whether
/// the endpoint wants one, and it never reads a key implicitly.
async fn missing_credentials_refused(s: &Session) -> CheckResult {
    if s.transport().key().is_none() {
        return Ok(Verdict::skip(
            "no --api-key-env given; the endpoint was audited without credentials",
        ));
    }
    let probe = Probe::embed(body(s, json!(SENTENCE), &[])).unauthenticated();
    let reply = s.send(probe).await?;
    Ok(match reply.status {
        401 | 403 => Verdict::pass(format!("refused without a key: {}", reply.summary())),
        200..=299 => {
            s.observe("auth", "not required (answered 200 without a key)");
            Verdict::skip("the endpoint answers without a key: it does not require one")
        }
        _ => Verdict::fail(format!(
            "answered {} without a key, expected 401 or 403",
            reply.summary()
        )),
    }
    .with(&reply.exchange))
}
