//! Quirks for request fields a vendor names or checks its own way: a size or task
//! field under another name, a prompt a vendor prepends, a `model` the URL already
//! names, and pydantic's 422 for fields and values outside the vendor's schema.

use crate::wire::{Answer, Incoming};
use serde_json::{Map, Value, json};

/// Inserts the served model into a body that has no `model`.
pub(in crate::quirks) fn model_optional(request: &mut Incoming, served: &str) {
    request.edit_fields(|fields| {
        fields
            .entry("model")
            .or_insert_with(|| Value::String(served.to_owned()));
    });
}

/// Moves field `from` to `to`, where the engine reads it.
pub(in crate::quirks) fn rename(request: &mut Incoming, from: &str, to: &str) {
    request.edit_fields(|fields| {
        if let Some(value) = fields.remove(from) {
            fields.insert(to.to_owned(), value);
        }
    });
}

/// Names `from` again in an error the engine wrote about `to`, for a request that
/// sent `from`: the client never sent a field called `to`.
pub(in crate::quirks) fn rename_in_error(
    request: &Incoming,
    answer: &mut Answer,
    from: &str,
    to: &str,
) {
    let sent_from = request.fields().is_some_and(|f| f.contains_key(from));
    let Some(mut error) = answer.openai_error_object().filter(|_| sent_from) else {
        return;
    };
    if error.get("param") == Some(&json!(to)) {
        error.insert("param".to_owned(), json!(from));
    }
    if let Some(Value::String(message)) = error.get_mut("message") {
        *message = message.replace(&format!("'{to}'"), &format!("'{from}'"));
    }
    answer.set_json(&json!({ "error": error }));
}

/// Replaces `field` by the engine's `input_type`: `"query"` when it is `query`,
/// `"document"` for any other value; a `null` one is dropped.
pub(in crate::quirks) fn as_input_type(request: &mut Incoming, field: &str, query: &str) {
    request.edit_fields(|fields| {
        let kind = match fields.remove(field) {
            Some(Value::Null) | None => return,
            Some(value) if value == query => "query",
            Some(_) => "document",
        };
        fields.insert("input_type".to_owned(), json!(kind));
    });
}

/// Sets `input_type: "query"` on every request of text but one whose `input_type` is
/// `"passage"` or `"document"`, which is embedded as the engine's plain input; token
/// ids are embedded as they are.
pub(in crate::quirks) fn query_by_default(request: &mut Incoming) {
    if request.texts().iter().any(Option::is_none) {
        return;
    }
    request.edit_fields(|fields| {
        let passage = matches!(
            fields.get("input_type").and_then(Value::as_str),
            Some("passage" | "document")
        );
        if passage {
            fields.remove("input_type");
        } else {
            fields.insert("input_type".to_owned(), json!("query"));
        }
    });
}

/// Prepends `prefix` to every text input of a request whose `field` is `value`.
pub(in crate::quirks) fn prefix_when(
    request: &mut Incoming,
    field: &str,
    value: &str,
    prefix: &str,
) {
    let applies = request
        .fields()
        .is_some_and(|f| f.get(field).and_then(Value::as_str) == Some(value));
    if applies {
        request.map_texts(|text| format!("{prefix}{text}"));
    }
}

/// pydantic's 422 for the first top-level field outside `known` (a model with
/// `extra="forbid"`), in FastAPI's `{"detail": [...]}`.
pub(in crate::quirks) fn forbid_extra(request: &Incoming, known: &[&str]) -> Option<Answer> {
    let fields = request.fields()?;
    let (name, value) = fields.iter().find(|(k, _)| !known.contains(&k.as_str()))?;
    Some(validation_error(
        "extra_forbidden",
        name,
        "Extra inputs are not permitted",
        value,
    ))
}

/// pydantic's 422 `literal_error` for a `field` outside `allowed`; `null` and absence
/// pass (an `Optional[Literal[...]]`).
pub(in crate::quirks) fn literal(
    request: &Incoming,
    field: &str,
    allowed: &[&str],
) -> Option<Answer> {
    let fields: Map<String, Value> = request.fields()?;
    let value = fields.get(field).filter(|v| !v.is_null())?;
    if value.as_str().is_some_and(|v| allowed.contains(&v)) {
        return None;
    }
    let quoted: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
    let message = match quoted.split_last() {
        Some((last, [])) => format!("Input should be {last}"),
        Some((last, rest)) => format!("Input should be {} or {last}", rest.join(", ")),
        None => "Input should be absent".to_owned(),
    };
    Some(validation_error("literal_error", field, &message, value))
}

/// FastAPI's default answer to a pydantic `ValidationError` on the body.
fn validation_error(kind: &str, field: &str, message: &str, input: &Value) -> Answer {
    let detail = json!([{"type": kind, "loc": ["body", field], "msg": message, "input": input}]);
    Answer::json_body(422, &json!({ "detail": detail }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(body: Value) -> Incoming {
        Incoming::embed_post(&body)
    }

    fn body(request: &Incoming) -> Value {
        request.json().unwrap()
    }

    #[test]
    fn a_missing_model_is_the_served_one_and_a_given_one_stays() {
        let mut bare = post(json!({"input": "a"}));
        model_optional(&mut bare, "served");
        assert_eq!(body(&bare)["model"], "served");
        let mut named = post(json!({"input": "a", "model": "other"}));
        model_optional(&mut named, "served");
        assert_eq!(body(&named)["model"], "other");
    }

    #[test]
    fn a_renamed_field_reaches_the_engine_under_its_name() {
        let mut request = post(json!({"input": "a", "output_dimension": 256}));
        rename(&mut request, "output_dimension", "dimensions");
        assert_eq!(body(&request), json!({"input": "a", "dimensions": 256}));
    }

    #[test]
    fn errors_about_a_renamed_field_name_the_field_sent() {
        let request = post(json!({"input": "a", "output_dimension": 0}));
        let mut answer = Answer::openai_error(400, "'dimensions' must be at least 1, but got 0");
        let mut error = answer.openai_error_object().unwrap();
        error.insert("param".to_owned(), json!("dimensions"));
        answer.set_json(&json!({ "error": error }));
        rename_in_error(&request, &mut answer, "output_dimension", "dimensions");
        let error = answer.openai_error_object().unwrap();
        assert_eq!(error["param"], "output_dimension");
        assert_eq!(
            error["message"],
            "'output_dimension' must be at least 1, but got 0"
        );
    }

    #[test]
    fn a_task_becomes_an_input_type() {
        for (task, kind) in [
            (json!("retrieval.query"), Some("query")),
            (json!("retrieval.passage"), Some("document")),
            (json!("text-matching"), Some("document")),
            (Value::Null, None),
        ] {
            let mut request = post(json!({"input": "a", "task": task}));
            as_input_type(&mut request, "task", "retrieval.query");
            let sent = body(&request);
            assert_eq!(sent.get("task"), None, "{task}");
            assert_eq!(sent["input_type"].as_str(), kind, "{task}");
        }
    }

    #[test]
    fn the_prefix_goes_before_every_text_of_the_named_kind_only() {
        let mut document = post(json!({"input": ["a", "b"], "input_type": "document"}));
        prefix_when(&mut document, "input_type", "document", "D: ");
        assert_eq!(body(&document)["input"], json!(["D: a", "D: b"]));
        let mut query = post(json!({"input": "a", "input_type": "query"}));
        prefix_when(&mut query, "input_type", "document", "D: ");
        assert_eq!(body(&query)["input"], "a");
    }

    #[test]
    fn an_extra_field_is_pydantics_422_naming_it() {
        let request = post(json!({"input": "a", "dimensions": 8}));
        let answer = forbid_extra(&request, &["input", "output_dimension"]).unwrap();
        assert_eq!(answer.status, 422);
        let detail = &answer.json().unwrap()["detail"][0];
        assert_eq!(detail["type"], "extra_forbidden");
        assert_eq!(detail["loc"], json!(["body", "dimensions"]));
        assert_eq!(detail["msg"], "Extra inputs are not permitted");
        assert_eq!(forbid_extra(&request, &["input", "dimensions"]), None);
    }

    #[test]
    fn a_value_outside_the_literal_is_refused_and_null_passes() {
        let allowed = ["retrieval.query", "retrieval.passage"];
        let bad = post(json!({"input": "a", "task": "query"}));
        let answer = literal(&bad, "task", &allowed).unwrap();
        let detail = &answer.json().unwrap()["detail"][0];
        assert_eq!(
            detail["msg"],
            "Input should be 'retrieval.query' or 'retrieval.passage'"
        );
        for fine in [json!("retrieval.query"), Value::Null] {
            let request = post(json!({"input": "a", "task": fine}));
            assert_eq!(literal(&request, "task", &allowed), None, "{fine}");
        }
    }
}
