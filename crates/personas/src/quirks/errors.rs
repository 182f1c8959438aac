//! Quirks that restyle error answers. Each reads the OpenAI-shaped error the engine
//! (or an earlier quirk) wrote and leaves any other answer alone.

use super::Trigger;
use super::shape::{self, SERDE};
use crate::wire::{Answer, Incoming};
use serde_json::{Value, json};

pub(super) fn in_stream_as_500(request: &Incoming, answer: &mut Answer) {
    let past_frontend = request.has_json_content_type()
        && request
            .fields()
            .is_some_and(|f| shape::problem(&Value::Object(f), SERDE).is_none());
    if answer.status == 400 && past_frontend {
        *answer = Answer::openai_error(500, "Failed to fold embeddings stream");
    }
}

pub(super) fn overlength_as_500(answer: &mut Answer, batch_size: usize) {
    if is_overlength(answer) {
        let message = format!(
            "input is too large to process. increase the physical batch size (current batch size: {batch_size})"
        );
        *answer = Answer::openai_error(500, &message);
    }
}

pub(super) fn overlength_says(answer: &mut Answer, message: &str) {
    if is_overlength(answer) {
        edit_error(answer, |error, _| {
            error.insert("message".to_owned(), json!(message));
            error.insert("code".to_owned(), Value::Null);
        });
    }
}

pub(super) fn flat(answer: &mut Answer) {
    if let Some(message) = message(answer) {
        let kind = reason_phrase(answer.status);
        answer.set_json(&json!({"message": message, "type": kind, "code": answer.status}));
    }
}

/// TEI's status and `type` for a 400: `Empty` stays 400, every other validation
/// failure is 422 `Validation`.
pub(super) fn tei(request: &Incoming, answer: &mut Answer) {
    if answer.status != 400 {
        return;
    }
    let Some(message) = message(answer) else {
        return;
    };
    let empty = Trigger::EmptyString.fires(request) || request.input() == Some(json!([]));
    let (status, kind) = if empty {
        (400, "Empty")
    } else {
        (422, "Validation")
    };
    answer.status = status;
    answer.set_json(&json!({"message": message, "code": status, "type": kind}));
}

pub(super) fn code_is_status(answer: &mut Answer) {
    edit_error(answer, |error, status| {
        error.insert("code".to_owned(), json!(status));
    });
}

pub(super) fn no_param(answer: &mut Answer) {
    edit_error(answer, |error, _| {
        error.remove("param");
    });
}

pub(super) fn plain_text(answer: &mut Answer) {
    if answer.status < 400 {
        return;
    }
    let text =
        message(answer).unwrap_or_else(|| String::from_utf8_lossy(&answer.body).into_owned());
    *answer = Answer {
        headers: std::mem::take(&mut answer.headers),
        ..Answer::plain_text(answer.status, &text)
    };
}

/// Whether `answer` is the engine's refusal of over-length input.
fn is_overlength(answer: &Answer) -> bool {
    answer
        .openai_error_object()
        .is_some_and(|e| e.get("code") == Some(&json!("context_length_exceeded")))
}

/// The `error.message` of an OpenAI-shaped error answer.
fn message(answer: &Answer) -> Option<String> {
    answer
        .openai_error_object()?
        .get("message")?
        .as_str()
        .map(str::to_owned)
}

fn edit_error(answer: &mut Answer, edit: impl FnOnce(&mut serde_json::Map<String, Value>, u16)) {
    if let Some(mut error) = answer.openai_error_object() {
        edit(&mut error, answer.status);
        answer.set_json(&json!({ "error": error }));
    }
}

/// The reason phrase Dynamo writes as `type` (RFC 9110 wording), for the statuses
/// personas answer.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}
