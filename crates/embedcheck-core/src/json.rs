//! JSON bodies parsed by serde_json's own compiled code.
//!
//! `serde_json::from_slice::<Value>` is generic, so it is compiled into the calling
//! crate at that crate's optimisation level, and `cargo test` builds this crate
//! unoptimised (its dependencies at `opt-level = 1`). `Value`'s `FromStr` is compiled
//! inside serde_json: a batch answer of 2048 vectors (25 MB) parses about three times
//! faster through it, in every audit `cargo test -- --endpoint URL` runs.

use serde_json::Value;

/// `bytes` as JSON, if they are UTF-8 JSON.
pub fn parse(bytes: &[u8]) -> Option<Value> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// A JSON value's kind as reasons name it: `missing`, `null`, `a string`, `an object`.
pub fn kind(value: Option<&Value>) -> &'static str {
    match value {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_parses_and_anything_else_is_none() {
        assert_eq!(
            parse(br#"{"a": [1, 2.5]}"#),
            Some(serde_json::json!({"a": [1, 2.5]}))
        );
        assert_eq!(parse(b"{\"a\": 1"), None);
        assert_eq!(parse(b"\xff\"a\""), None);
    }
}
