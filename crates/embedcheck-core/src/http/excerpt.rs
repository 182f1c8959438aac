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
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => of_json(&value),
        Err(_) => cut(&String::from_utf8_lossy(bytes), MAX_EXCERPT),
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

/// Cuts text to `max` characters, saying how much was left out.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…(+{} chars)", total - max)
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
