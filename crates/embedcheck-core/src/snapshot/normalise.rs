//! The normalised, diffable form of one exchange.
//!
//! A behaviour snapshot must change when the server's behaviour changes and only then:
//! vectors become their dimension, L2 norm and a rounded three-value prefix; ids,
//! timestamps and timings are redacted; long inputs are cut. What remains (status,
//! content type, field names, token counts, error messages) is what a client sees.

use crate::http::Reply;
use crate::http::excerpt::cut;
use crate::vectors::norm;
use crate::vectors::{base64_bytes, decode_base64};
use serde_json::{Map, Value, json};

/// Fields whose values differ on every call without any change in behaviour.
const VOLATILE_FIELDS: [&str; 3] = ["id", "created", "system_fingerprint"];
const MAX_STRING: usize = 80;
const MAX_ITEMS: usize = 8;

/// The snapshot text of one request and its answer (or its transport error).
pub(crate) fn exchange(
    method: &str,
    path: &str,
    request: Option<&[u8]>,
    reply: Option<&Reply>,
    error: Option<&str>,
) -> String {
    let mut lines = vec![format!("{method} {path}")];
    if let Some(body) = request {
        lines.push(format!("request: {}", body_text(body)));
    }
    match (reply, error) {
        (Some(reply), _) => {
            lines.push(format!("status: {}", reply.status));
            lines.push(format!(
                "content-type: {}",
                reply.content_type.as_deref().unwrap_or("(none)")
            ));
            lines.push(format!("response: {}", body_text(&reply.body)));
        }
        (None, Some(error)) => lines.push(format!("no answer: {error}")),
        (None, None) => lines.push("no answer".to_owned()),
    }
    lines.join("\n")
}

fn body_text(bytes: &[u8]) -> String {
    match crate::json::parse(bytes) {
        Some(value) => serde_json::to_string_pretty(&normalise(&value)).unwrap_or_default(),
        None => cut(&String::from_utf8_lossy(bytes), 400),
    }
}

/// The normalised form of a JSON body.
pub(crate) fn normalise(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(normalise_object(map)),
        Value::Array(items) if items.len() > MAX_ITEMS && items.iter().all(Value::is_number) => {
            summary(&floats(items), None)
        }
        Value::Array(items) if items.len() > MAX_ITEMS => {
            let mut kept: Vec<Value> = items[..MAX_ITEMS].iter().map(normalise).collect();
            kept.push(json!(format!("…(+{} more items)", items.len() - MAX_ITEMS)));
            Value::Array(kept)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        Value::String(s) => Value::String(cut(s, MAX_STRING)),
        other => other.clone(),
    }
}

fn normalise_object(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .map(|(key, value)| {
            let normalised = match value {
                _ if VOLATILE_FIELDS.contains(&key.as_str()) => json!("[redacted]"),
                Value::Array(items) if key == "embedding" && items.iter().all(Value::is_number) => {
                    summary(&floats(items), None)
                }
                Value::String(encoded) if key == "embedding" => base64_summary(encoded),
                other => normalise(other),
            };
            (key.clone(), normalised)
        })
        .collect()
}

fn floats(items: &[Value]) -> Vec<f64> {
    items.iter().filter_map(Value::as_f64).collect()
}

/// `{"dim": 256, "norm": 1.0, "prefix": [0.012, -0.034, 0.101]}`.
fn summary(v: &[f64], encoding: Option<&str>) -> Value {
    let mut summary = json!({
        "dim": v.len(),
        "norm": round(norm(v), 4),
        "prefix": v.iter().take(3).map(|x| round(*x, 3)).collect::<Vec<_>>(),
    });
    if let Some(encoding) = encoding {
        summary["encoding"] = json!(encoding);
    }
    summary
}

fn base64_summary(encoded: &str) -> Value {
    match base64_bytes(encoded) {
        Ok(bytes) if bytes.len() % 4 == 0 => match decode_base64(encoded) {
            Ok(v) => summary(&v, Some("base64 float32 little-endian")),
            Err(why) => json!(why),
        },
        Ok(bytes) => json!(format!("<base64 of {} bytes, not float32>", bytes.len())),
        Err(_) => json!(cut(encoded, MAX_STRING)),
    }
}

fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    let rounded = (x * scale).round() / scale;
    // -0.0 and 0.0 print differently; the difference is noise.
    if rounded == 0.0 { 0.0 } else { rounded }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;

    #[test]
    fn vectors_become_dimension_norm_and_prefix() {
        let v: Vec<f64> = (0..256).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
        let body = json!({"data": [{"embedding": v, "index": 0}], "id": "embd-123", "created": 1700000000});
        let normalised = normalise(&body);
        assert_eq!(
            normalised["data"][0]["embedding"],
            json!({"dim": 256, "norm": 1.0, "prefix": [1.0, 0.0, 0.0]})
        );
        assert_eq!(normalised["id"], json!("[redacted]"));
        assert_eq!(normalised["created"], json!("[redacted]"));
    }

    #[test]
    fn base64_vectors_are_decoded_before_summarising() {
        let bytes: Vec<u8> = [0.6f32, 0.8].iter().flat_map(|x| x.to_le_bytes()).collect();
        let body = json!({"embedding": BASE64.encode(bytes)});
        let summary = &normalise(&body)["embedding"];
        assert_eq!(summary["dim"], json!(2));
        assert_eq!(summary["norm"], json!(1.0));
        assert_eq!(summary["encoding"], json!("base64 float32 little-endian"));
    }

    #[test]
    fn tiny_float_noise_does_not_change_the_snapshot() {
        let a = normalise(&json!({"embedding": [0.12341, -0.00001, 0.5]}));
        let b = normalise(&json!({"embedding": [0.12339, 0.00002, 0.5]}));
        assert_eq!(a, b);
    }
}
