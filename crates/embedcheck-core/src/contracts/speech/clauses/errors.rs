//! The `speech-errors` family: how a transcription request a server cannot answer is
//! refused, as the clients that retry 5xx answers and read `error.message` need.

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::speech::requests;
use crate::http::Reply;
use crate::session::Session;
use crate::verdict::Verdict;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("SPE-001", bad_uploads),
        check!("SPE-002", refusals_in_envelope),
        check!("SPE-003", oversize_upload),
        check!("SPE-004", language_by_name),
    ]
}

/// SPE-001: "A request without file, with an empty file, or with a file that is not
/// audio … is refused with a 4xx; never a 5xx."
async fn bad_uploads(s: &Session) -> CheckResult {
    let mut evidence: Vec<Arc<Reply>> = Vec::new();
    let mut wrong = Vec::new();
    for (what, probe) in requests::bad_uploads(s) {
        let reply = s.send(probe).await?;
        if !reply.is_client_error() {
            wrong.push(format!("{what} was answered {}", reply.summary()));
        }
        evidence.push(reply);
    }
    let exchanges = evidence.iter().map(|r| &r.exchange);
    if wrong.is_empty() {
        let statuses: Vec<String> = evidence.iter().map(|r| r.status.to_string()).collect();
        return Ok(Verdict::pass(format!(
            "no file, an empty file and a text file were refused with {}",
            statuses.join(", ")
        ))
        .with_all(exchanges));
    }
    Ok(Verdict::fail(format!(
        "{}: refuse an upload that cannot be transcribed with a 4xx (OpenAI answers 400 invalid_request_error); the OpenAI SDKs retry a 5xx twice, uploading it again",
        wrong.join("; ")
    ))
    .with_all(exchanges))
}

/// SPE-002: "Every refusal of a transcription request is JSON in OpenAI's error
/// envelope, an object error with a string message."
async fn refusals_in_envelope(s: &Session) -> CheckResult {
    let mut refusals: Vec<(&str, Arc<Reply>)> = Vec::new();
    for (what, probe) in requests::bad_uploads(s) {
        let reply = s.send(probe).await?;
        if reply.is_client_error() || reply.is_server_error() {
            refusals.push((what, reply));
        }
    }
    if refusals.is_empty() {
        return Ok(Verdict::skip(
            "no bad upload was refused, so no refusal's body to judge (SPE-001 judges the answers)",
        ));
    }
    let wrong: Vec<String> = refusals
        .iter()
        .filter(|(_, reply)| !in_envelope(reply))
        .map(|(what, reply)| format!("{what} was refused with {}", reply.summary()))
        .collect();
    let exchanges = refusals.iter().map(|(_, r)| &r.exchange);
    if wrong.is_empty() {
        return Ok(Verdict::pass(format!(
            "{} refusals, each JSON with error.message",
            refusals.len()
        ))
        .with_all(exchanges));
    }
    Ok(Verdict::fail(format!(
        "{}, not OpenAI's envelope {{\"error\": {{\"message\": …}}}}: the OpenAI SDKs and Open WebUI read error.message, and show the user nothing else",
        wrong.join("; ")
    ))
    .with_all(exchanges))
}

/// Whether a refusal is JSON with a string `error.message`.
fn in_envelope(reply: &Reply) -> bool {
    reply
        .json
        .as_ref()
        .and_then(|j| j.pointer("/error/message"))
        .is_some_and(serde_json::Value::is_string)
}

/// SPE-003: "An upload over OpenAI's 25 MiB limit … is refused with a 4xx (OpenAI
/// answers 413) or transcribed; never a 5xx or a dropped connection. Which of these
/// the server does is recorded."
async fn oversize_upload(s: &Session) -> CheckResult {
    let reply = s.send(requests::oversize_upload(s)).await?;
    Ok(refused_or_transcribed(
        &reply,
        |r| match r.status {
            413 => "26,240,044 bytes refused with 413, as OpenAI refuses them".to_owned(),
            _ => format!(
                "26,240,044 bytes refused with {} (OpenAI answers 413)",
                r.summary()
            ),
        },
        "26,240,044 bytes transcribed: the server has no limit at OpenAI's 25 MiB",
        |r| {
            format!(
                "26,240,044 bytes (past OpenAI's 25 MiB) were answered {}: refuse them with 413 as OpenAI does, or transcribe them; the OpenAI SDKs retry a 5xx twice, uploading 26 MB each time",
                r.summary()
            )
        },
    ))
}

/// A request a server may refuse or transcribe, its policy recorded: a 4xx passes as
/// `refused` words it, a 2xx as `transcribed`, anything else fails as `fault` says.
fn refused_or_transcribed(
    reply: &Reply,
    refused: impl Fn(&Reply) -> String,
    transcribed: &str,
    fault: impl Fn(&Reply) -> String,
) -> Verdict {
    match reply.status {
        400..=499 => Verdict::pass(refused(reply)),
        200..=299 => Verdict::pass(transcribed),
        _ => Verdict::fail(fault(reply)),
    }
    .with(&reply.exchange)
}

/// SPE-004: "A transcription request whose language is a language's name (english)
/// rather than its ISO-639-1 code (en) is refused with a 4xx … or transcribed; never a
/// 5xx. Which of these the server does is recorded."
async fn language_by_name(s: &Session) -> CheckResult {
    let reply = s.send(requests::language_by_name(s)).await?;
    Ok(refused_or_transcribed(
        &reply,
        |r| {
            format!(
                "language \"english\" refused with {}: the server holds language to ISO-639-1 codes",
                r.summary()
            )
        },
        "language \"english\" accepted and transcribed: the server does not hold language to ISO-639-1 codes",
        |r| {
            format!(
                "language \"english\" (a name where OpenAI documents the ISO-639-1 code \"en\") was answered {}: refuse it with a 4xx naming the codes, or transcribe; the OpenAI SDKs retry a 5xx twice, uploading the clip each time",
                r.summary()
            )
        },
    ))
}
