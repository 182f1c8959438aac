//! The one parser of success bodies: `data[*].embedding` as float arrays or base64
//! strings, and `usage`.
//!
//! Clauses that judge the float format read [`Reply::float_vectors`], which refuses
//! anything but numbers; everything that only needs the vectors (the migration's
//! comparisons, behaviour summaries) reads [`Reply::embeddings`], which accepts either
//! encoding, because the comparison is about the vectors, not how they travelled.

use crate::http::Reply;
use crate::vectors::{Encoding, decode_base64};
use serde_json::Value;

/// The vectors of a success body, whatever their encoding.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Embeddings {
    pub vectors: Vec<Vec<f64>>,
    /// The encoding of the first item (`None` for an empty `data`).
    pub encoding: Option<Encoding>,
}

impl Reply {
    /// The `data` array of a success body.
    pub(crate) fn data(&self) -> Result<&[Value], String> {
        self.json
            .as_ref()
            .and_then(|j| j.get("data"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| "the body has no data array".to_owned())
    }

    /// Every item's embedding as floats; any non-float embedding is an error naming
    /// the item.
    pub(crate) fn float_vectors(&self) -> Result<Vec<Vec<f64>>, String> {
        self.data()?
            .iter()
            .enumerate()
            .map(|(i, item)| float_vector(item).map_err(|why| format!("data[{i}].embedding {why}")))
            .collect()
    }

    /// The first item's vector of a successful answer (float or base64), if it has
    /// one.
    pub(crate) fn first_vector(&self) -> Option<Vec<f64>> {
        self.is_success()
            .then(|| self.embeddings().ok()?.vectors.into_iter().next())
            .flatten()
    }

    /// Every item's embedding, float arrays or base64 strings alike.
    pub(crate) fn embeddings(&self) -> Result<Embeddings, String> {
        let data = self.data()?;
        let vectors = data
            .iter()
            .enumerate()
            .map(|(i, item)| match item.get("embedding") {
                Some(Value::String(text)) => {
                    decode_base64(text).map_err(|e| format!("data[{i}]: {e}"))
                }
                Some(Value::Array(_)) => {
                    float_vector(item).map_err(|why| format!("data[{i}].embedding {why}"))
                }
                _ => Err(format!(
                    "data[{i}].embedding is neither an array nor base64"
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Embeddings {
            vectors,
            encoding: data.first().and_then(encoding),
        })
    }

    /// The first value of any embedding that is not a finite number, named: a float
    /// array's `null` (a NaN serialised) or string, a base64 string's NaN or infinity,
    /// a bare `NaN` or `Infinity` that made the body invalid JSON. `None` when every
    /// value of every embedding is finite, or the body has none to read.
    pub(crate) fn non_finite_value(&self) -> Option<String> {
        let Some(json) = &self.json else {
            let text = String::from_utf8_lossy(&self.body);
            return ["NaN", "Infinity"]
                .iter()
                .find(|bad| text.contains(**bad))
                .map(|bad| format!("the body contains a bare {bad}, which is not JSON"));
        };
        let data = json.get("data")?.as_array()?;
        data.iter()
            .enumerate()
            .find_map(|(i, item)| match item.get("embedding")? {
                Value::Array(values) => values.iter().enumerate().find_map(|(j, v)| {
                    (!v.is_number())
                        .then(|| format!("data[{i}].embedding [{j}] is {v}, not a number"))
                }),
                Value::String(text) => {
                    let values = decode_base64(text).ok()?;
                    values.iter().enumerate().find_map(|(j, v)| {
                        (!v.is_finite())
                            .then(|| format!("data[{i}].embedding (base64) value [{j}] is {v}"))
                    })
                }
                _ => None,
            })
    }

    /// `usage.prompt_tokens` when it is a non-negative integer.
    pub(crate) fn prompt_tokens(&self) -> Option<u64> {
        self.usage_field("prompt_tokens")
    }
}

/// The encoding of one `data` item, if its embedding is an array or a string.
pub(crate) fn encoding(item: &Value) -> Option<Encoding> {
    match item.get("embedding")? {
        Value::Array(_) => Some(Encoding::Float),
        Value::String(_) => Some(Encoding::Base64),
        _ => None,
    }
}

fn float_vector(item: &Value) -> Result<Vec<f64>, String> {
    let values = item
        .get("embedding")
        .ok_or("is missing")?
        .as_array()
        .ok_or("is not an array of numbers")?;
    values
        .iter()
        .enumerate()
        .map(|(j, v)| v.as_f64().ok_or(format!("[{j}] is {v}, not a number")))
        .collect()
}

/// The first item's `embedding`, as it came (an array, or a base64 string).
pub(crate) fn first_embedding(json: &Value) -> Option<&Value> {
    json.pointer("/data/0/embedding")
}

/// Whether a body is an embeddings list: a `data` array.
pub(crate) fn is_list(json: &Value) -> bool {
    json.get("data").is_some_and(Value::is_array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use serde_json::json;

    fn reply(body: Value) -> Reply {
        Reply::json_for_test(200, body)
    }

    fn base64_of(values: &[f32]) -> String {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn non_numbers_inside_vectors_are_named() {
        let body = json!({"data": [{"embedding": [0.1, "NaN"]}]});
        let err = reply(body).float_vectors().unwrap_err();
        assert_eq!(err, "data[0].embedding [1] is \"NaN\", not a number");
    }

    #[test]
    fn both_encodings_give_the_same_vectors() {
        let floats = reply(json!({"data": [{"embedding": [0.5, -0.25]}]}));
        let strings = reply(json!({"data": [{"embedding": base64_of(&[0.5, -0.25])}]}));
        let (f, s) = (floats.embeddings().unwrap(), strings.embeddings().unwrap());
        assert_eq!(f.vectors, s.vectors);
        assert_eq!(
            (f.encoding, s.encoding),
            (Some(Encoding::Float), Some(Encoding::Base64))
        );
        assert!(
            strings.float_vectors().is_err(),
            "the float view refuses strings"
        );
    }

    #[test]
    fn base64_of_a_partial_float_is_refused() {
        let text = base64::engine::general_purpose::STANDARD.encode([0u8; 6]);
        assert!(decode_base64(&text).unwrap_err().contains("6 base64 bytes"));
    }
}
