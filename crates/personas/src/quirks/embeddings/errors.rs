//! Quirks that restyle error answers. Each reads the OpenAI-shaped error the engine
//! (or an earlier quirk) wrote and leaves any other answer alone.

use super::shape::{self, SERDE};
use crate::quirks::Trigger;
use crate::wire::{Answer, Incoming};
use serde_json::{Value, json};

pub(in crate::quirks) fn in_stream_as_500(request: &Incoming, answer: &mut Answer) {
    let past_frontend = request.has_json_content_type()
        && request
            .fields()
            .is_some_and(|f| shape::problem(&Value::Object(f), SERDE).is_none());
    if answer.status == 400 && past_frontend {
        *answer = Answer::openai_error(500, "Failed to fold embeddings stream");
    }
}

pub(in crate::quirks) fn overlength_as_500(answer: &mut Answer, batch_size: usize) {
    if is_overlength(answer) {
        let message = format!(
            "input is too large to process. increase the physical batch size (current batch size: {batch_size})"
        );
        *answer = Answer::openai_error(500, &message);
    }
}

pub(in crate::quirks) fn overlength_says(answer: &mut Answer, message: &str) {
    if is_overlength(answer) {
        edit_error(answer, |error, _| {
            error.insert("message".to_owned(), json!(message));
            error.insert("code".to_owned(), Value::Null);
        });
    }
}

pub(in crate::quirks) fn flat(answer: &mut Answer) {
    if let Some(message) = message(answer) {
        let kind = reason_phrase(answer.status);
        answer.set_json(&json!({"message": message, "type": kind, "code": answer.status}));
    }
}

/// TEI's status and `type` for a 400: `Empty` stays 400, every other validation
/// failure is 422 `Validation`.
pub(in crate::quirks) fn tei(request: &Incoming, answer: &mut Answer) {
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

pub(in crate::quirks) fn code_is_status(answer: &mut Answer) {
    edit_error(answer, |error, status| {
        error.insert("code".to_owned(), json!(status));
    });
}

pub(in crate::quirks) fn no_param(answer: &mut Answer) {
    edit_error(answer, |error, _| {
        error.remove("param");
    });
}

pub(in crate::quirks) fn plain_text(answer: &mut Answer) {
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

/// Python's `http.server` error page for `status`, as `BaseHTTPRequestHandler.send_error`
/// writes it (`DEFAULT_ERROR_MESSAGE`).
pub(in crate::quirks) fn html(answer: &mut Answer) {
    if answer.status < 400 {
        return;
    }
    let status = answer.status;
    let page = format!(
        "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: {status}</p>\n        <p>Message: Bad Request.</p>\n        <p>Error code explanation: {status}.</p>\n    </body>\n</html>\n"
    );
    *answer = Answer {
        headers: std::mem::take(&mut answer.headers),
        content_type: "text/html;charset=utf-8".to_owned(),
        body: page.into_bytes(),
        status,
    };
}

/// Azure OpenAI's gateway answer to a key it does not accept (langchain-ai/langchain#14018).
const AZURE_ACCESS_DENIED: &str = "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.";

/// Azure's `{"error": {"code": "<status>", "message"}}`, with Azure's own wording for
/// 401 and 404.
pub(in crate::quirks) fn azure(answer: &mut Answer) {
    let Some(message) = message(answer) else {
        return;
    };
    let message = match answer.status {
        401 => AZURE_ACCESS_DENIED.to_owned(),
        404 => "Resource not found".to_owned(),
        _ => message,
    };
    let error = json!({"code": answer.status.to_string(), "message": message});
    answer.set_json(&json!({ "error": error }));
}

/// Mistral's flat error object; a FastAPI validation `detail` goes inside `message`.
pub(in crate::quirks) fn mistral(answer: &mut Answer) {
    if let Some(detail) = fastapi_detail(answer) {
        let message = json!({ "detail": detail });
        answer.set_json(&json!({
            "object": "error",
            "message": message,
            "type": "invalid_request_error",
            "param": null,
            "code": null,
        }));
    } else if let Some(error) = answer.openai_error_object() {
        let field = |name: &str| error.get(name).cloned().unwrap_or(Value::Null);
        answer.set_json(&json!({
            "object": "error",
            "message": field("message"),
            "type": field("type"),
            "param": field("param"),
            "code": field("code"),
            "raw_status_code": answer.status,
        }));
    }
}

/// Jina's errors: a request id in `detail`, and a validation failure's items as
/// `errors` whose `field` names the model's schema.
pub(in crate::quirks) fn jina(request: &Incoming, answer: &mut Answer, model: &str) {
    let rid = format!("[RID: {:032x}]", request.number);
    if let Some(detail) = fastapi_detail(answer) {
        let errors: Vec<Value> = detail
            .iter()
            .map(|item| {
                let place = item["loc"].as_array().map_or_else(Vec::new, |loc| {
                    loc.iter()
                        .skip(1)
                        .map(|p| p.to_string().replace('"', ""))
                        .collect()
                });
                json!({
                    "field": format!("body -> {model} -> {}", place.join(" -> ")),
                    "message": item["msg"],
                    "type": item["type"],
                    "input": item["input"],
                })
            })
            .collect();
        let summary = format!("{rid} Validation errors in {} fields", errors.len());
        answer.set_json(&json!({"detail": summary, "errors": errors}));
    } else if let Some(message) = message(answer) {
        answer.set_json(&json!({"detail": format!("{rid} {message}")}));
    }
}

/// FastAPI's `HTTPException` body, `{"detail": "message"}`.
pub(in crate::quirks) fn detail(answer: &mut Answer) {
    if let Some(message) = message(answer) {
        answer.set_json(&json!({ "detail": message }));
    }
}

/// The items of FastAPI's `{"detail": [...]}` error body.
fn fastapi_detail(answer: &Answer) -> Option<Vec<Value>> {
    if answer.status < 400 {
        return None;
    }
    match answer.json()?.get_mut("detail")?.take() {
        Value::Array(items) => Some(items),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(status: u16) -> Answer {
        Answer::openai_error(status, "Incorrect API key provided.")
    }

    fn validation() -> Answer {
        let detail = json!([{"type": "extra_forbidden", "loc": ["body", "dimensions"],
            "msg": "Extra inputs are not permitted", "input": 8}]);
        Answer::json_body(422, &json!({ "detail": detail }))
    }

    #[test]
    fn azure_errors_carry_the_status_as_code_and_azures_wording() {
        let mut denied = refusal(401);
        azure(&mut denied);
        let body = denied.json().unwrap();
        assert_eq!(body["error"]["code"], "401");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Access denied")
        );
        assert_eq!(body["error"].as_object().unwrap().len(), 2, "{body}");
        let mut missing = Answer::openai_error(404, "Invalid URL (GET /v1/models)");
        azure(&mut missing);
        let expected = json!({"error": {"code": "404", "message": "Resource not found"}});
        assert_eq!(missing.json().unwrap(), expected);
    }

    #[test]
    fn mistral_errors_are_flat_and_validation_detail_goes_in_the_message() {
        let mut bad = Answer::openai_error(400, "nope");
        mistral(&mut bad);
        let body = bad.json().unwrap();
        assert_eq!(body["object"], "error");
        assert_eq!(body["message"], "nope");
        assert_eq!(body["raw_status_code"], 400);
        assert_eq!(body.get("error"), None);
        let mut extra = validation();
        mistral(&mut extra);
        let body = extra.json().unwrap();
        assert_eq!(extra.status, 422);
        assert_eq!(
            body["message"]["detail"][0]["msg"],
            "Extra inputs are not permitted"
        );
        assert_eq!(body["type"], "invalid_request_error");
    }

    #[test]
    fn detail_errors_keep_the_status_and_the_message_only() {
        let mut denied = refusal(401);
        detail(&mut denied);
        assert_eq!(denied.status, 401);
        let expected = json!({"detail": "Incorrect API key provided."});
        assert_eq!(denied.json().unwrap(), expected);
    }

    #[test]
    fn jina_errors_name_the_models_field_and_a_request_id() {
        let request = Incoming::embed_post(&json!({"input": "a"}));
        let mut extra = validation();
        jina(&request, &mut extra, "jina-embeddings-v3");
        let body = extra.json().unwrap();
        assert!(
            body["detail"].as_str().unwrap().starts_with("[RID: "),
            "{body}"
        );
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .ends_with("Validation errors in 1 fields")
        );
        let expected = "body -> jina-embeddings-v3 -> dimensions";
        assert_eq!(body["errors"][0]["field"], expected);
        assert_eq!(body["errors"][0]["type"], "extra_forbidden");
        let mut denied = refusal(401);
        jina(&request, &mut denied, "jina-embeddings-v3");
        let detail = denied.json().unwrap()["detail"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            detail.ends_with("] Incorrect API key provided."),
            "{detail}"
        );
    }
}
