//! What a typed request deserialiser refuses before any handler runs.
//!
//! Real servers parse the body into a typed struct (serde in Rust, pydantic in
//! Python) and refuse what does not fit with their framework's own error, long before
//! the model sees it. Personas need the same line between "refused by the framework"
//! and "refused by the engine": TEI's axum rejections are plain text, Infinity's are
//! FastAPI's 422, and Dynamo turns everything past its parser into a 500.

use serde_json::Value;

/// What the request struct accepts beyond plain strings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Typing {
    /// Token-id arrays (`[int]`, `[[int]]`) parse.
    pub(crate) token_ids: bool,
    /// `input: []` parses (and is refused later, or not at all).
    pub(crate) empty_batch: bool,
    /// An optional field sent as `null` parses as absent (`Option<T>`).
    pub(crate) null_is_absent: bool,
}

/// serde's `String | Vec<String> | Vec<u32> | Vec<Vec<u32>>` input (TEI, Dynamo's
/// async-openai types).
pub(crate) const SERDE: Typing = Typing {
    token_ids: true,
    empty_batch: true,
    null_is_absent: true,
};

/// pydantic's `str | conlist(str, min_length=1)` input (Infinity).
pub(crate) const PYDANTIC_STRINGS: Typing = Typing {
    token_ids: false,
    empty_batch: false,
    null_is_absent: false,
};

/// Why a typed deserialiser refuses `body`: the field and a message, or `None` when
/// the body parses.
pub(crate) fn problem(body: &Value, typing: Typing) -> Option<(&'static str, String)> {
    let Value::Object(fields) = body else {
        return Some(("body", "expected a JSON object".to_owned()));
    };
    let optional = |name: &'static str, fits: fn(&Value) -> bool, expected: &str| {
        let value = fields
            .get(name)
            .filter(|v| !(typing.null_is_absent && v.is_null()))?;
        (!fits(value)).then(|| (name, format!("{name}: expected {expected}, got {value}")))
    };
    input_problem(fields.get("input"), typing)
        .map(|why| ("input", why))
        .or_else(|| optional("model", Value::is_string, "a string"))
        .or_else(|| {
            optional(
                "encoding_format",
                |v| matches!(v.as_str(), Some("float" | "base64")),
                "one of `float`, `base64`",
            )
        })
        .or_else(|| optional("dimensions", Value::is_u64, "a non-negative integer"))
}

fn input_problem(input: Option<&Value>, typing: Typing) -> Option<String> {
    let Some(input) = input else {
        return Some("missing field `input`".to_owned());
    };
    let fits = match input {
        Value::String(_) => true,
        Value::Array(items) if items.is_empty() => typing.empty_batch,
        Value::Array(items) => {
            items.iter().all(Value::is_string)
                || (typing.token_ids && (all_ids(items) || items.iter().all(is_id_array)))
        }
        _ => false,
    };
    (!fits).then(|| format!("input: invalid type: {}", kind(input)))
}

fn all_ids(items: &[Value]) -> bool {
    items
        .iter()
        .all(|v| v.as_u64().is_some_and(|id| id <= u64::from(u32::MAX)))
}

fn is_id_array(item: &Value) -> bool {
    item.as_array().is_some_and(|ids| all_ids(ids))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serde_accepts_every_openai_input_form() {
        for input in [
            json!("a"),
            json!(["a", "b"]),
            json!([1, 2]),
            json!([[1], [2, 3]]),
            json!([]),
        ] {
            assert_eq!(problem(&json!({"input": input}), SERDE), None, "{input}");
        }
    }

    #[test]
    fn pydantic_strings_refuse_ids_and_empty_batches() {
        for input in [json!([1, 2]), json!([])] {
            let found = problem(&json!({"input": input}), PYDANTIC_STRINGS);
            assert_eq!(found.map(|(field, _)| field), Some("input"), "{input}");
        }
    }

    #[test]
    fn null_optionals_parse_only_as_option() {
        let body = json!({"input": "a", "dimensions": null});
        assert_eq!(problem(&body, SERDE), None);
        let found = problem(&body, PYDANTIC_STRINGS).map(|(field, _)| field);
        assert_eq!(found, Some("dimensions"));
    }

    #[test]
    fn ill_typed_fields_are_named() {
        let cases = [
            (json!({"model": "m"}), "input"),
            (json!({"input": 42}), "input"),
            (
                json!({"input": "a", "encoding_format": "int8"}),
                "encoding_format",
            ),
            (json!({"input": "a", "dimensions": -1}), "dimensions"),
            (json!(["a"]), "body"),
        ];
        for (body, field) in cases {
            assert_eq!(problem(&body, SERDE).map(|(f, _)| f), Some(field), "{body}");
        }
    }
}
