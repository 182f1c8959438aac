//! Short, readable excerpts of bodies for evidence.
//!
//! A 2048-item batch or a 3072-float vector would drown the one fact a server author
//! needs; long strings and arrays are cut, and vectors become a summary such as
//! `"<1024 floats>"` or `"<base64: 4096 bytes>"`.

use serde_json::Value;

/// Longest excerpt kept, in characters.
const MAX_EXCERPT: usize = 1500;
const MAX_STRING: usize = 120;
const MAX_ARRAY: usize = 8;

/// An excerpt of a body: JSON is summarised structurally, anything else is cut text.
pub(crate) fn of_body(bytes: &[u8]) -> String {
    match crate::json::parse(bytes) {
        Some(value) => of_json(&value),
        None => cut(&String::from_utf8_lossy(bytes), MAX_EXCERPT),
    }
}

/// An excerpt of a JSON value.
pub(crate) fn of_json(value: &Value) -> String {
    cut(&summarise(value).to_string(), MAX_EXCERPT)
}

fn summarise(value: &Value) -> Value {
    match value {
        Value::Array(items) if is_vector(items) => {
            Value::String(format!("<{} floats>", items.len()))
        }
        Value::Array(items) if is_broken_vector(items) => Value::String(broken_vector(items)),
        Value::Array(items) => summarise_array(items),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), summarise_field(k, v)))
                .collect(),
        ),
        Value::String(s) => Value::String(cut(s, MAX_STRING)),
        other => other.clone(),
    }
}

fn summarise_field(key: &str, value: &Value) -> Value {
    match value {
        Value::String(s) if key == "embedding" && s.len() > 16 => {
            Value::String(format!("<base64: {} chars>", s.len()))
        }
        _ => summarise(value),
    }
}

fn summarise_array(items: &[Value]) -> Value {
    if items.len() <= MAX_ARRAY {
        return Value::Array(items.iter().map(summarise).collect());
    }
    let mut kept: Vec<Value> = items[..3].iter().map(summarise).collect();
    kept.push(Value::String(format!("…(+{} more items)", items.len() - 3)));
    Value::Array(kept)
}

/// A float vector: more than a handful of numbers, at least one not an integer.
/// Token-id arrays (all integers) stay visible, since they are often the point.
fn is_vector(items: &[Value]) -> bool {
    items.len() > MAX_ARRAY
        && items.iter().all(Value::is_number)
        && items.iter().any(|v| v.is_f64())
}

/// A vector with values that are not numbers (`null` for NaN, `"NaN"`): mostly
/// floats, so summarising it as its first items would hide the one fact that matters.
fn is_broken_vector(items: &[Value]) -> bool {
    let value = |v: &Value| v.is_number() || v.is_null() || v.is_string();
    items.len() > MAX_ARRAY
        && items.iter().all(value)
        && items.iter().any(|v| !v.is_number())
        && (items.iter().any(Value::is_f64) || items.iter().all(Value::is_null))
}

/// `<384 values, 2 not numbers: null at [0], "NaN" at [17]>`.
fn broken_vector(items: &[Value]) -> String {
    let odd: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_number())
        .map(|(i, v)| format!("{v} at [{i}]"))
        .collect();
    let shown: Vec<&str> = odd.iter().take(3).map(String::as_str).collect();
    let more = if odd.len() > shown.len() { ", …" } else { "" };
    format!(
        "<{} values, {} not numbers: {}{more}>",
        items.len(),
        odd.len(),
        shown.join(", ")
    )
}

/// Cuts text to `max` characters, saying how much was left out.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…(+{} chars)", total - max)
}

/// The length of an array before excerpting cut it (`…(+2045 more items)`).
pub(crate) fn array_len(items: &[Value]) -> usize {
    let more = items
        .last()
        .and_then(Value::as_str)
        .and_then(|s| s.strip_prefix("…(+"))
        .and_then(|s| s.strip_suffix(" more items)"))
        .and_then(|n| n.parse::<usize>().ok());
    match more {
        Some(n) => items.len() - 1 + n,
        None => items.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vectors_are_summarised() {
        let v: Vec<f64> = (0..1024).map(|i| i as f64 / 1000.0 + 0.5).collect();
        let body = json!({"data": [{"embedding": v, "index": 0}]});
        assert_eq!(
            of_json(&body),
            r#"{"data":[{"embedding":"<1024 floats>","index":0}]}"#
        );
    }

    /// A NaN serialised as null (jundot/omlx#3507) shows in the evidence.
    #[test]
    fn values_that_are_not_numbers_are_named() {
        let mut v: Vec<Value> = (0..384).map(|i| json!(i as f64 / 1000.0 + 0.5)).collect();
        v[17] = Value::Null;
        assert_eq!(
            of_json(&json!({"embedding": v})),
            r#"{"embedding":"<384 values, 1 not numbers: null at [17]>"}"#
        );
        let nulls = vec![Value::Null; 384];
        let text = of_json(&json!({"embedding": nulls}));
        assert!(
            text.contains(
                "<384 values, 384 not numbers: null at [0], null at [1], null at [2], …>"
            ),
            "{text}"
        );
    }

    #[test]
    fn base64_vectors_are_summarised() {
        let body = json!({"embedding": "A".repeat(400)});
        assert_eq!(of_json(&body), r#"{"embedding":"<base64: 400 chars>"}"#);
    }

    #[test]
    fn token_ids_stay_visible_when_short() {
        assert_eq!(
            of_json(&json!({"input": [[999999]]})),
            r#"{"input":[[999999]]}"#
        );
    }

    #[test]
    fn long_batches_and_strings_are_cut() {
        let body = json!({"input": vec!["x".repeat(500); 2048]});
        let text = of_json(&body);
        assert!(text.contains("+2045 more items"), "{text}");
        assert!(text.contains("(+380 chars)"), "{text}");
    }

    #[test]
    fn non_json_is_cut_text() {
        let html = format!("<html>{}</html>", "x".repeat(5000));
        let text = of_body(html.as_bytes());
        assert!(text.starts_with("<html>") && text.ends_with("chars)"));
    }
}
