//! The `speech-shape` family: what a transcription answer looks like to the clients
//! that read it.

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::speech::requests::{self, json_text};
use crate::http::excerpt;
use crate::session::Session;
use crate::verdict::Verdict;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("SPS-001", minimal_request),
        check!("SPS-002", text_is_bare),
    ]
}

/// SPS-001: "A multipart/form-data request with only file … and model is answered 200
/// with a JSON object whose text is a string."
async fn minimal_request(s: &Session) -> CheckResult {
    let reply = s.send(requests::minimal(s)).await?;
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "the minimal request (file and model, as Open WebUI sends it) was answered {}: file and model are the only required fields",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let what = match (&reply.json, json_text(&reply)) {
        (_, Some(text)) => {
            return Ok(Verdict::pass(format!(
                "200 with a JSON object whose text is a string of {} characters",
                text.chars().count()
            ))
            .with(&reply.exchange));
        }
        (None, None) => format!(
            "a body that is not JSON ({}: {})",
            reply.content_type.as_deref().unwrap_or("no content type"),
            shown(&reply.body)
        ),
        (Some(json), None) => format!(
            "JSON whose text is {}: {}",
            crate::json::kind(json.get("text")),
            shown(&reply.body)
        ),
    };
    Ok(Verdict::fail(format!(
        "answered 200 with {what}: the OpenAI SDKs parse Transcription(text) and Open WebUI reads r.json()['text']"
    ))
    .with(&reply.exchange))
}

/// SPS-002: "response_format text is answered 200 with the transcript itself as the
/// body …, or refused with a 4xx where the server does not offer the format; never
/// answered with the JSON envelope."
async fn text_is_bare(s: &Session) -> CheckResult {
    let reply = s.send(requests::in_format(s, "text")).await?;
    if reply.is_client_error() {
        return Ok(Verdict::pass(format!(
            "response_format text refused with {}: the server does not offer it, and says so",
            reply.status
        ))
        .with(&reply.exchange));
    }
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "response_format text was answered {}: answer the bare transcript, or refuse a format not offered with a 4xx",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    if json_text(&reply).is_some() {
        return Ok(Verdict::fail(format!(
            "response_format text was answered with the JSON envelope {}: the OpenAI SDKs return a text answer's body as the transcript, so every user gets that JSON as their text (as on vLLM, vllm#49095)",
            shown(&reply.body)
        ))
        .with(&reply.exchange));
    }
    Ok(Verdict::pass(format!(
        "200 with the bare transcript ({} characters, {})",
        String::from_utf8_lossy(&reply.body).chars().count(),
        reply.content_type.as_deref().unwrap_or("no content type")
    ))
    .with(&reply.exchange))
}

/// A body as a reason quotes it: short, vectors and long strings cut.
fn shown(body: &[u8]) -> String {
    excerpt::cut(&excerpt::of_body(body), 200)
}
