//! What every contract's request parser shares: the body as a JSON object, unknown
//! fields refused, required fields, the served `model`, a batch limit, JSON types named
//! in messages as OpenAI names them.

use serde_json::{Map, Number, Value};

use super::ApiError;

/// The top-level fields of a JSON body, which must be an object.
pub(in crate::protocol) fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::MalformedJson(e.to_string()))?;
    match value {
        Value::Object(fields) => Ok(fields),
        other => Err(ApiError::BodyNotObject(json_kind(&other))),
    }
}

pub(in crate::protocol) fn reject_unknown_fields(
    fields: &Map<String, Value>,
    known: &[&str],
) -> Result<(), ApiError> {
    match fields.keys().find(|k| !known.contains(&k.as_str())) {
        Some(name) => Err(ApiError::UnrecognizedArgument(name.clone())),
        None => Ok(()),
    }
}

pub(in crate::protocol) fn required(
    fields: &mut Map<String, Value>,
    name: &'static str,
) -> Result<Value, ApiError> {
    fields.remove(name).ok_or(ApiError::MissingParameter(name))
}

pub(in crate::protocol) fn check_model(value: Value, served: &str) -> Result<(), ApiError> {
    let model = expect_string(value, "model")?;
    if model == served {
        Ok(())
    } else {
        Err(ApiError::ModelNotFound(model))
    }
}

/// At most `max` items in the array `param`.
pub(in crate::protocol) fn check_batch_size(
    param: &'static str,
    len: usize,
    max: usize,
) -> Result<(), ApiError> {
    if len > max {
        Err(ApiError::TooManyInputs { param, len, max })
    } else {
        Ok(())
    }
}

pub(in crate::protocol) fn expect_string(
    value: Value,
    param: &'static str,
) -> Result<String, ApiError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(invalid_type(param, param.to_owned(), "a string", &other)),
    }
}

pub(in crate::protocol) fn invalid_type(
    param: &'static str,
    location: String,
    expected: &'static str,
    actual: &Value,
) -> ApiError {
    ApiError::InvalidType {
        param,
        location,
        expected,
        actual: json_kind(actual),
    }
}

/// An integer in JSON Schema's sense: a number with an integral value, so `256.0` counts
/// and `256.5` does not. Huge floats saturate, which still fails every range check.
pub(in crate::protocol) fn json_integer(number: &Number) -> Option<i128> {
    if let Some(n) = number.as_i64() {
        return Some(n.into());
    }
    if let Some(n) = number.as_u64() {
        return Some(n.into());
    }
    number
        .as_f64()
        .filter(|f| f.fract() == 0.0)
        .map(|f| f as i128)
}

/// How a JSON value is named in error messages.
pub(in crate::protocol) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
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
    fn json_kinds_read_naturally_in_messages() {
        assert_eq!(json_kind(&json!(1)), "an integer");
        assert_eq!(json_kind(&json!(1.5)), "a number");
        assert_eq!(json_kind(&json!(null)), "null");
    }
}
