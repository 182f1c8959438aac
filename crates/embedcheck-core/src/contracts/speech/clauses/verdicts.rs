//! What the speech families' verdicts share: a refusal read as the server's policy or
//! its model class's contract, and a body, a count or a list as a reason quotes it.

use crate::contracts::speech::classify;
use crate::http::{Reply, excerpt};
use crate::session::{ProbeError, Session};
use crate::verdict::Verdict;

/// The verdict where a format's answer is not a 200: a 4xx is the server saying it
/// does not offer the format (its policy, or its model class's contract, which the
/// reason names), anything else fails.
pub(super) async fn refused_or_failed(
    s: &Session,
    reply: &Reply,
    format: &str,
) -> Result<Option<Verdict>, ProbeError> {
    if reply.is_client_error()
        && let Some(why) = classify::of(s).await?.not_in_contract(format)
    {
        return Ok(Some(
            Verdict::pass(format!(
                "response_format {format} refused with {}: {why}",
                reply.summary()
            ))
            .with(&reply.exchange),
        ));
    }
    Ok(refused_or_answered(
        reply,
        &format!("response_format {format}"),
        "does not offer it",
        "answer it, or refuse a format not offered with a 4xx",
    ))
}

/// The verdict where the answer to an option (`asked`) is not a 200: a 4xx is the
/// server saying it `declines` (its policy, which passes), anything else fails with
/// `remedy`.
pub(super) fn refused_or_answered(
    reply: &Reply,
    asked: &str,
    declines: &str,
    remedy: &str,
) -> Option<Verdict> {
    if reply.is_success() {
        return None;
    }
    let verdict = if reply.is_client_error() {
        Verdict::pass(format!(
            "{asked} refused with {}: the server {declines}, and says so",
            reply.summary()
        ))
    } else {
        Verdict::fail(format!(
            "{asked} was answered {}: {remedy}",
            reply.summary()
        ))
    };
    Some(verdict.with(&reply.exchange))
}

/// A body as a reason quotes it: on one line, short, long strings cut (text quoted,
/// its line breaks written `\n`).
pub(super) fn shown(body: &[u8]) -> String {
    let shown = excerpt::cut(&excerpt::of_body(body), 200);
    match crate::json::parse(body) {
        Some(_) => shown,
        None => format!("{shown:?}"),
    }
}

/// `1 cue`, `3 cues`.
pub(in crate::contracts::speech) fn counted(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn listed(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
