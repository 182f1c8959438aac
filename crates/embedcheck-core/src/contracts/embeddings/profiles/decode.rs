//! How each client turns a success body into vectors when it asked for base64 by default,
//! as its source does it:
//!
//! - openai-python 3.57.0, `lib/_parsing/_embeddings.py` `parse_embedding_response`:
//!   raises `ValueError("No embedding data received")` on an empty `data`; leaves the
//!   body alone unless some embedding is a string; then decodes each string with
//!   `base64.b64decode` (which skips characters outside the alphabet) into
//!   `array("f")`, which raises unless the byte count is a multiple of 4; anything
//!   else passes through as it came.
//! - openai-node 7.55.0, `lib/embeddings.js` `createEmbedding`: a body its
//!   `internal/parse.ts` does not parse as JSON (a media type without `application/json`
//!   or `+json`) reaches the caller as a string, without `data`; a body without `data`
//!   passes through; a `data` that is not an array raises a `TypeError`; every
//!   embedding that is not already an array goes to `toFloat32Array`, whose
//!   `Buffer.from(value, "base64")` raises a `TypeError` for anything but a string,
//!   accepts the URL-safe alphabet too, and raises a `RangeError` unless the byte count
//!   is a multiple of 4. Float arrays pass through untouched (since 7.11.0,
//!   openai-node#2549 and #2590).
//!
//! Both read little-endian float32, as OpenAI encodes.

use crate::http::Reply;
use serde_json::Value;
use std::fmt;

/// A client's decoder of default (base64) answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoder {
    Python,
    Node,
}

/// What a client made of a success body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decoded {
    /// One vector per `data` item.
    Vectors(Vec<Vec<f64>>),
    /// The client raises this error.
    Raises(String),
    /// The client returns without raising, but what it returns is not vectors.
    NotVectors(Wrong),
}

/// Why what a client got are not the vectors of its inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Wrong {
    /// The body has no `data` array.
    NoData,
    /// The body is not labelled JSON, so the client returns it as a string.
    NotLabelledJson { content_type: String },
    /// This many vectors for this many inputs.
    Count { got: usize, inputs: usize },
    /// A vector of `got` values where the float answer has `want`.
    Length {
        index: usize,
        got: usize,
        want: usize,
    },
    /// A vector this far from the float answer of the same input.
    Cosine { index: usize, cosine: f64 },
    /// The item's embedding is this JSON kind, passed through as it is.
    NotAVector { index: usize, kind: &'static str },
}

impl fmt::Display for Wrong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wrong::NoData => f.write_str("the body has no data array, so there are no vectors"),
            Wrong::NotLabelledJson { content_type } => write!(
                f,
                "the answer is labelled {content_type}, not JSON, so the body comes back as a string: no data and no vectors, without an error"
            ),
            Wrong::Count { got, inputs } => write!(f, "{got} vectors for {inputs} inputs"),
            Wrong::Length { index, got, want } if *got == 2 * want => write!(
                f,
                "data[{index}] decodes to {got} values, twice the float answer's {want}: float64 bytes read as float32"
            ),
            Wrong::Length { index, got, want } => write!(
                f,
                "data[{index}] decodes to {got} values where the float answer has {want}"
            ),
            Wrong::Cosine { index, cosine } => write!(
                f,
                "data[{index}] decodes to a vector with cosine {cosine:.6} to the float answer of the same input"
            ),
            Wrong::NotAVector { index, kind } => {
                write!(f, "data[{index}].embedding is {kind}, returned as it is")
            }
        }
    }
}

/// What `decoder` makes of the success body of a request sent without
/// `encoding_format` by the client (so base64 on the wire).
pub(crate) fn decode(decoder: Decoder, reply: &Reply) -> Decoded {
    let data = reply.json.as_ref().and_then(|j| j.get("data"));
    match decoder {
        Decoder::Python => python(data),
        Decoder::Node if !reply.is_parsed_as_json_by_node() => {
            Decoded::NotVectors(Wrong::NotLabelledJson {
                content_type: reply
                    .content_type
                    .clone()
                    .unwrap_or_else(|| "no content type".to_owned()),
            })
        }
        Decoder::Node => node(data),
    }
}

fn python(data: Option<&Value>) -> Decoded {
    let Some(data) = data else {
        return Decoded::Raises("AttributeError: the response has no data".to_owned());
    };
    let Some(items) = data.as_array() else {
        return Decoded::Raises(format!(
            "TypeError: data is {}, not a list",
            crate::json::kind(Some(data))
        ));
    };
    if items.is_empty() {
        return Decoded::Raises("ValueError: No embedding data received".to_owned());
    }
    let mut vectors = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let vector = match item.get("embedding") {
            None => {
                return Decoded::Raises(
                    "AttributeError: an item of data has no embedding".to_owned(),
                );
            }
            Some(Value::String(text)) => match python_b64decode(text) {
                Ok(bytes) if bytes.len().is_multiple_of(4) => float32(&bytes),
                Ok(_) => {
                    return Decoded::Raises(
                        "ValueError: bytes length not a multiple of item size".to_owned(),
                    );
                }
                Err(why) => return Decoded::Raises(format!("binascii.Error: {why}")),
            },
            other => match numbers(other) {
                Some(vector) => vector,
                None => {
                    let kind = crate::json::kind(other);
                    return Decoded::NotVectors(Wrong::NotAVector { index, kind });
                }
            },
        };
        vectors.push(vector);
    }
    Decoded::Vectors(vectors)
}

fn node(data: Option<&Value>) -> Decoded {
    let Some(data) = data else {
        return Decoded::NotVectors(Wrong::NoData);
    };
    let Some(items) = data.as_array() else {
        return Decoded::Raises(
            "TypeError: Expected embeddings response data to be an array".to_owned(),
        );
    };
    let mut vectors = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let embedding = item.get("embedding");
        let vector = match embedding {
            Some(Value::Array(_)) => match numbers(embedding) {
                Some(vector) => vector,
                None => {
                    return Decoded::NotVectors(Wrong::NotAVector {
                        index,
                        kind: "an array with values that are not numbers",
                    });
                }
            },
            Some(Value::String(text)) => {
                let bytes = node_buffer_from_base64(text);
                if !bytes.len().is_multiple_of(4) {
                    return Decoded::Raises(
                        "RangeError: Invalid base64-encoded float32 array: byte length must be a multiple of 4"
                            .to_owned(),
                    );
                }
                float32(&bytes)
            }
            other => {
                return Decoded::Raises(format!(
                    "TypeError: Buffer.from is given {} instead of a base64 string",
                    crate::json::kind(other)
                ));
            }
        };
        vectors.push(vector);
    }
    Decoded::Vectors(vectors)
}

/// The numbers of a JSON array, if every value is one.
fn numbers(value: Option<&Value>) -> Option<Vec<f64>> {
    value?.as_array()?.iter().map(Value::as_f64).collect()
}

fn float32(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(4)
        .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect()
}

/// The value of a base64 character in `alphabet` (standard or URL-safe), if it is one.
fn sextet(c: u8, url_safe: bool) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        b'-' if url_safe => Some(62),
        b'_' if url_safe => Some(63),
        _ => None,
    }
}

/// Sextets to bytes, dropping the bits of an incomplete last byte.
fn bytes_of(sextets: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(sextets.len() * 3 / 4);
    let (mut bits, mut held) = (0u32, 0u32);
    for &s in sextets {
        bits = (bits << 6) | u32::from(s);
        held += 6;
        if held >= 8 {
            held -= 8;
            // Only the low 8 bits past `held` are the byte.
            bytes.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    bytes
}

/// Python's `base64.b64decode(text)` (`validate=False`): characters outside the
/// standard alphabet are discarded, and the data must be padded to whole quanta.
fn python_b64decode(text: &str) -> Result<Vec<u8>, String> {
    let mut sextets = Vec::with_capacity(text.len());
    let mut padding = 0usize;
    for c in text.bytes() {
        match (c, sextet(c, false)) {
            (b'=', _) => padding += 1,
            (_, Some(s)) if padding == 0 => sextets.push(s),
            // Data after padding ends the quantum in binascii's lenient mode.
            (_, Some(_)) => break,
            (_, None) => {}
        }
    }
    match sextets.len() % 4 {
        0 => Ok(bytes_of(&sextets)),
        1 => Err(format!(
            "Invalid base64-encoded string: number of data characters ({}) cannot be 1 more than a multiple of 4",
            sextets.len()
        )),
        rest if padding >= 4 - rest => Ok(bytes_of(&sextets)),
        _ => Err("Incorrect padding".to_owned()),
    }
}

/// Node's `Buffer.from(text, "base64")`: both alphabets, anything else skipped, stops
/// at the first `=`, never fails.
fn node_buffer_from_base64(text: &str) -> Vec<u8> {
    let sextets: Vec<u8> = text
        .bytes()
        .take_while(|&c| c != b'=')
        .filter_map(|c| sextet(c, true))
        .collect();
    bytes_of(&sextets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use serde_json::json;

    fn reply(body: Value) -> Reply {
        Reply::json_for_test(200, body)
    }

    fn le(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    const VALUES: [f32; 3] = [0.5, -0.25, 0.125];

    #[test]
    fn both_decode_little_endian_float32_strings() {
        let body = json!({"data": [{"embedding": STANDARD.encode(le(&VALUES))}]});
        let want = Decoded::Vectors(vec![vec![0.5, -0.25, 0.125]]);
        assert_eq!(decode(Decoder::Python, &reply(body.clone())), want);
        assert_eq!(decode(Decoder::Node, &reply(body)), want);
    }

    /// openai-python parses a JSON body whatever its label; openai-node only one
    /// labelled JSON, and returns any other as a string.
    #[test]
    fn node_alone_needs_the_json_label() {
        let body = json!({"data": [{"embedding": STANDARD.encode(le(&VALUES))}]});
        let mut labelled = reply(body);
        labelled.content_type = Some("text/plain; charset=utf-8".to_owned());
        assert!(matches!(
            decode(Decoder::Python, &labelled),
            Decoded::Vectors(_)
        ));
        assert_eq!(
            decode(Decoder::Node, &labelled),
            Decoded::NotVectors(Wrong::NotLabelledJson {
                content_type: "text/plain; charset=utf-8".to_owned()
            })
        );
    }

    #[test]
    fn both_pass_float_arrays_through() {
        let body = json!({"data": [{"embedding": [0.5, -0.25]}, {"embedding": [1.0, 0.0]}]});
        let want = Decoded::Vectors(vec![vec![0.5, -0.25], vec![1.0, 0.0]]);
        assert_eq!(decode(Decoder::Python, &reply(body.clone())), want);
        assert_eq!(decode(Decoder::Node, &reply(body)), want);
    }

    #[test]
    fn an_empty_data_raises_in_python_and_passes_in_node() {
        let body = json!({"data": []});
        assert_eq!(
            decode(Decoder::Python, &reply(body.clone())),
            Decoded::Raises("ValueError: No embedding data received".to_owned())
        );
        assert_eq!(
            decode(Decoder::Node, &reply(body)),
            Decoded::Vectors(Vec::new())
        );
    }

    #[test]
    fn a_partial_float_raises_in_both() {
        let body = json!({"data": [{"embedding": STANDARD.encode([0u8; 6])}]});
        assert!(
            matches!(decode(Decoder::Python, &reply(body.clone())), Decoded::Raises(m) if m.starts_with("ValueError"))
        );
        assert!(
            matches!(decode(Decoder::Node, &reply(body)), Decoded::Raises(m) if m.starts_with("RangeError"))
        );
    }

    #[test]
    fn float64_bytes_decode_to_twice_as_many_values() {
        let bytes: Vec<u8> = [0.5f64, -0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let body = json!({"data": [{"embedding": STANDARD.encode(bytes)}]});
        let Decoded::Vectors(v) = decode(Decoder::Node, &reply(body)) else {
            panic!("decodes");
        };
        assert_eq!(v[0].len(), 4);
    }

    #[test]
    fn url_safe_base64_decodes_in_node_only() {
        // Bytes chosen so that the encoding needs both URL-safe characters.
        let bytes = [0xfbu8, 0xff, 0xbf, 0x3e];
        let text = URL_SAFE_NO_PAD.encode(bytes);
        assert!(text.contains('-') && text.contains('_'), "{text}");
        assert_eq!(node_buffer_from_base64(&text), bytes);
        assert!(python_b64decode(&text).is_err());
    }

    #[test]
    fn python_skips_characters_outside_the_alphabet() {
        let text = STANDARD.encode(le(&VALUES));
        let spaced: String = text.chars().flat_map(|c| [c, '\n']).collect();
        assert_eq!(python_b64decode(&spaced).unwrap(), le(&VALUES));
        assert_eq!(python_b64decode("QUJD").unwrap(), b"ABC");
        assert_eq!(python_b64decode("QUI=").unwrap(), b"AB");
        assert_eq!(python_b64decode("QUI").unwrap_err(), "Incorrect padding");
    }

    #[test]
    fn null_embeddings_pass_through_python_and_raise_in_node() {
        let body = json!({"data": [{"embedding": null}]});
        assert_eq!(
            decode(Decoder::Python, &reply(body.clone())),
            Decoded::NotVectors(Wrong::NotAVector {
                index: 0,
                kind: "null"
            })
        );
        assert!(
            matches!(decode(Decoder::Node, &reply(body)), Decoded::Raises(m) if m.starts_with("TypeError"))
        );
    }
}
