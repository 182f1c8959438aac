//! encoding: `encoding_format` (ENC-001 … ENC-005).
//!
//! The OpenAI SDKs send `encoding_format: "base64"` unless told otherwise and decode
//! the strings as little-endian float32, so base64 is checked to the bit against the
//! float answer, on generated batches of 1 to 32 texts in any script. A mismatch names
//! its kind (float arrays, big-endian, float64, wrong values) so a server author knows
//! what to fix; the `base64` observation says what the server does.

use super::consistency;
use crate::clauses::judging;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{Base64, Noise, Unrepeatable, VariedAnswer};
use crate::contracts::embeddings::requests::{self, BATCH, SENTENCE, body};
use crate::http::{Body, Probe, Reply};
use crate::property::{Case, Property};
use crate::session::{ProbeError, Session};
use crate::vectors::base64_bytes;
use crate::vectors::cosine;
use crate::verdict::Verdict;
use proptest::prelude::{Strategy, prop_oneof};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("ENC-001", float_by_default),
        check!("ENC-002", base64_decodes_to_floats),
        check!("ENC-003", never_arrays_for_base64),
        check!("ENC-004", unsupported_format_refused),
        check!("ENC-005", refusal_names_the_field),
    ]
}

/// The property label of generated batches.
const GENERATED_BATCHES: &str = "unicode-batches";

/// Letters of many scripts: Latin, Greek, Cyrillic, Hebrew, Arabic, Devanagari, Thai,
/// kana, CJK and Hangul. Every generated text starts with one, so no text is blank.
const LETTERS: &[RangeInclusive<char>] = &[
    'a'..='z',
    'A'..='Z',
    'À'..='ÿ',
    'Α'..='ω',
    'А'..='я',
    'א'..='ת',
    'ء'..='ي',
    'अ'..='ह',
    'ก'..='ฮ',
    'ぁ'..='ゖ',
    'ァ'..='ヺ',
    '一'..='鿿',
    '가'..='힣',
];

/// What else texts contain: spaces, digits, punctuation, combining marks and emoji.
const OTHERS: &[RangeInclusive<char>] = &[
    ' '..=' ',
    '0'..='9',
    '!'..='/',
    '\u{300}'..='\u{36f}',
    '\u{1f300}'..='\u{1f5ff}',
    '\u{1f600}'..='\u{1f64f}',
];

/// Batches of 1 to 32 texts of up to 24 characters in any script.
fn unicode_batches() -> impl Strategy<Value = Vec<String>, Tree: Send> {
    let letter = || proptest::char::ranges(Cow::Borrowed(LETTERS));
    let other = proptest::char::ranges(Cow::Borrowed(OTHERS));
    let text = (
        letter(),
        proptest::collection::vec(prop_oneof![letter(), other], 0..24),
    )
        .prop_map(|(first, rest)| std::iter::once(first).chain(rest).collect::<String>());
    proptest::collection::vec(text, 1..=32)
}

fn show_batch(texts: &Vec<String>) -> String {
    format!("a batch of {} {}", texts.len(), json!(texts))
}

/// How a base64 embedding differs from the float answer.
#[derive(Debug, PartialEq)]
enum Mismatch {
    NotAString(&'static str),
    NotBase64,
    Length {
        bytes: usize,
        values: usize,
    },
    BigEndian,
    /// Laid out right, but the decoded vector is not the float answer's, beyond the
    /// server's own noise between identical requests.
    Values {
        cosine: f64,
        noise: Noise,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::NotAString(kind) => write!(f, "is {kind}, not a base64 string"),
            Mismatch::NotBase64 => f.write_str("is not valid standard base64"),
            Mismatch::Length { bytes, values } if *bytes == 8 * values => write!(
                f,
                "decodes to {bytes} bytes, 8 per value: float64, not the float32 clients decode"
            ),
            Mismatch::Length { bytes, values } => {
                write!(f, "decodes to {bytes} bytes, not 4 x {values}")
            }
            Mismatch::BigEndian => {
                f.write_str("holds big-endian float32; clients decode little-endian")
            }
            Mismatch::Values { cosine, noise } if noise.deterministic() => write!(
                f,
                "decodes to a vector with cosine {cosine:.6} to the float answer of the same input"
            ),
            Mismatch::Values { cosine, noise } => write!(
                f,
                "decodes to a vector with cosine {cosine:.6} to the float answer of the same input, beyond this nondeterministic server's own noise (identical requests: cosine {:.6})",
                noise.cosine
            ),
        }
    }
}

fn kind(value: Option<&Value>) -> &'static str {
    match value {
        None => "missing",
        Some(Value::Array(_)) => "an array of numbers",
        Some(Value::Null) => "null",
        Some(Value::Object(_)) => "an object",
        Some(_) => "a scalar",
    }
}

/// Checks one base64 embedding against the float vector of the same input: exactly
/// on its layout (a string of 4 x d bytes, little-endian float32), and on its values
/// at the consistency tolerance, widened by the server's own noise, since the two
/// answers come from two requests.
fn decode_against(embedding: Option<&Value>, floats: &[f64], noise: Noise) -> Result<(), Mismatch> {
    let Some(Value::String(text)) = embedding else {
        return Err(Mismatch::NotAString(kind(embedding)));
    };
    let bytes = base64_bytes(text).map_err(|_| Mismatch::NotBase64)?;
    if bytes.len() != 4 * floats.len() {
        return Err(Mismatch::Length {
            bytes: bytes.len(),
            values: floats.len(),
        });
    }
    let little = cosine(&decode(&bytes, f32::from_le_bytes), floats);
    if noise.same(little) {
        return Ok(());
    }
    if noise.same(cosine(&decode(&bytes, f32::from_be_bytes), floats)) {
        return Err(Mismatch::BigEndian);
    }
    Err(Mismatch::Values {
        cosine: little,
        noise,
    })
}

fn decode(bytes: &[u8], from: fn([u8; 4]) -> f32) -> Vec<f64> {
    bytes
        .chunks_exact(4)
        .map(|b| f64::from(from([b[0], b[1], b[2], b[3]])))
        .collect()
}

/// Why a base64 answer does not carry the float vectors, if it does not.
fn base64_problem(reply: &Reply, floats: &[Vec<f64>], noise: Noise) -> Option<String> {
    if !reply.is_success() {
        return Some(format!(
            "encoding_format \"base64\" answered {}: the OpenAI SDKs send base64 by default",
            reply.summary()
        ));
    }
    let data = match reply.data() {
        Ok(data) => data,
        Err(why) => return Some(why),
    };
    if data.len() != floats.len() {
        return Some(format!("{} items for {} inputs", data.len(), floats.len()));
    }
    data.iter()
        .zip(floats)
        .enumerate()
        .find_map(|(i, (item, expected))| {
            decode_against(item.get("embedding"), expected, noise)
                .err()
                .map(|m| format!("data[{i}].embedding {m}"))
        })
}

/// ENC-001: "Without encoding_format, and with encoding_format \"float\", every
/// embedding is a JSON array of numbers."
async fn float_by_default(s: &Session) -> CheckResult {
    let plain = requests::single(s).await?;
    if !plain.is_success() {
        return Ok(Verdict::skip(format!(
            "the plain probe was answered {}; see IN-001",
            plain.summary()
        ))
        .with(&plain.exchange));
    }
    let explicit = s
        .send(requests::probe(body(
            s,
            json!(SENTENCE),
            &[("encoding_format", json!("float"))],
        )))
        .await?;
    for (label, reply) in [
        ("without encoding_format", &plain),
        ("with encoding_format \"float\"", &explicit),
    ] {
        let problem = if reply.is_success() {
            reply.float_vectors().err()
        } else {
            Some(format!("answered {}", reply.summary()))
        };
        if let Some(why) = problem {
            return Ok(Verdict::fail(format!("{label}: {why}")).with(&reply.exchange));
        }
    }
    Ok(
        Verdict::pass("arrays of numbers without encoding_format and with \"float\"")
            .with(&plain.exchange)
            .with(&explicit.exchange),
    )
}

/// ENC-002: "With encoding_format \"base64\", every embedding is a base64 string of
/// 4 x dimension bytes that decode as little-endian IEEE-754 float32 to the float
/// vector of the same input (cosine at least the consistency tolerance, widened by the
/// server's own noise). A batch whose decoded values differ is sent again, both
/// requests: the difference fails the clause only when the float answer repeats and
/// the base64 answer differs from it again."
async fn base64_decodes_to_floats(s: &Session) -> CheckResult {
    let noise = consistency::noise(s).await?.unwrap_or(Noise::unmeasured());
    let finding = Property::new(s.settings(), GENERATED_BATCHES)
        .check(&unicode_batches(), move |texts| async move {
            let floats = s.send(requests::probe(body(s, json!(texts), &[]))).await?;
            let Ok(expected) = super::vectors_or_verdict(&floats, texts.len()) else {
                return Ok::<_, ProbeError>(Case::Inapplicable);
            };
            let encoded = s.send(requests::base64(s, json!(texts))).await?;
            match base64_problem(&encoded, &expected, noise) {
                None => Ok(Case::Holds),
                // Values that differ may be the server's variation, not the encoding.
                Some(_) if only_values_differ(&encoded, &expected, noise) => {
                    repeated_batch(s, &texts, [&floats, &encoded], &expected, noise).await
                }
                Some(why) => Ok(Case::Fails(
                    Verdict::fail(why)
                        .with(&encoded.exchange)
                        .with(&floats.exchange),
                )),
            }
        })
        .await?;
    Ok(finding.into_verdict(show_batch, |cases, applicable| match applicable {
        0 => Verdict::skip(format!(
            "none of {cases} generated batches got float vectors to compare with (see IN-006)"
        )),
        _ => Verdict::pass(format!(
            "{applicable} generated batches of 1 to 32 texts in any script: base64 decodes to the float vectors"
        )),
    }))
}

/// Whether a base64 answer is laid out right (strings of little-endian float32, one
/// per input) and only its values differ from the float answer's.
fn only_values_differ(reply: &Reply, floats: &[Vec<f64>], noise: Noise) -> bool {
    let Ok(data) = reply.data() else {
        return false;
    };
    reply.is_success()
        && data.len() == floats.len()
        && data.iter().zip(floats).all(|(item, expected)| {
            matches!(
                decode_against(item.get("embedding"), expected, noise),
                Ok(()) | Err(Mismatch::Values { .. })
            )
        })
}

/// A batch whose base64 answer decoded to other values than its float answer, both
/// requests sent again: the difference is the encoding's only when the float answer repeats
/// and the base64 answer differs from it again. Otherwise one of the first answers
/// varied, whatever the encoding: that is learned as `unrepeatable`, and the batch is
/// judged on the repeat (the encoding holds when the repeat agrees).
async fn repeated_batch(
    s: &Session,
    texts: &[String],
    [floats, encoded]: [&Reply; 2],
    expected: &[Vec<f64>],
    noise: Noise,
) -> Result<Case<Verdict>, ProbeError> {
    let floats_again = s
        .send(requests::probe(body(s, json!(texts), &[])).fresh())
        .await?;
    let encoded_again = s.send(requests::base64(s, json!(texts)).fresh()).await?;
    let Ok(again) = super::vectors_or_verdict(&floats_again, texts.len()) else {
        return Ok(Case::Inapplicable);
    };
    let (item, cosine) = least_cosine(expected, &again);
    let floats_repeat = noise.same(cosine);
    let problem = base64_problem(&encoded_again, &again, noise);
    if let Some(why) = problem.as_ref().filter(|_| floats_repeat) {
        return Ok(Case::Fails(
            Verdict::fail(format!("{why}, again when both requests were sent again"))
                .with(&encoded.exchange)
                .with(&floats.exchange)
                .with(&encoded_again.exchange)
                .with(&floats_again.exchange),
        ));
    }
    let varied = if floats_repeat {
        let first = encoded.embeddings().map(|e| e.vectors).unwrap_or_default();
        let (item, cosine) = least_cosine(&first, &again);
        (VariedAnswer::Base64, item, cosine)
    } else {
        (VariedAnswer::Float, item, cosine)
    };
    learn_unrepeatable(s, texts, varied, &floats_again.exchange);
    Ok(match problem {
        None => Case::Holds,
        Some(_) => Case::Inapplicable,
    })
}

/// The first answer the run found unrepeatable, as the `unrepeatable` fact.
fn learn_unrepeatable(
    s: &Session,
    texts: &[String],
    (answer, item, cosine): (VariedAnswer, usize, f64),
    shown: &crate::http::Exchange,
) {
    if embeddings::learned(s).unrepeatable.is_some() {
        return;
    }
    let value = Unrepeatable {
        request: format!("a batch of {} texts", texts.len()),
        answer,
        item,
        cosine,
    };
    let fact = s.detected(value, shown);
    embeddings::learn(s, |facts| facts.unrepeatable = Some(fact));
}

/// The item whose two vectors are furthest apart, and their cosine (1 when there are
/// none to compare).
fn least_cosine(first: &[Vec<f64>], second: &[Vec<f64>]) -> (usize, f64) {
    first
        .iter()
        .zip(second)
        .map(|(a, b)| cosine(a, b))
        .enumerate()
        .fold(
            (0, 1.0),
            |least, (i, c)| if c < least.1 { (i, c) } else { least },
        )
}

/// The `base64` fact: what the server does with a base64 request.
fn base64_behaviour(encoded: &Reply, floats: &Reply, noise: Noise) -> Base64 {
    if !encoded.is_success() {
        return Base64::Refused(encoded.status);
    }
    let Ok(expected) = floats.float_vectors() else {
        return Base64::NotCompared;
    };
    let embedding = encoded
        .data()
        .ok()
        .and_then(|d| d.first())
        .and_then(|item| item.get("embedding"));
    let floats = expected.first().map_or(&[][..], Vec::as_slice);
    match decode_against(embedding, floats, noise) {
        Ok(()) => Base64::Float32,
        Err(Mismatch::NotAString(kind)) => Base64::Ignored(kind.to_string()),
        Err(mismatch) => Base64::Mismatch(mismatch.to_string()),
    }
}

/// ENC-003: "With encoding_format \"base64\", no embedding is returned as an array of
/// numbers."
async fn never_arrays_for_base64(s: &Session) -> CheckResult {
    let single = s.send(requests::base64(s, json!(SENTENCE))).await?;
    let noise = consistency::noise(s).await?.unwrap_or(Noise::unmeasured());
    let behaviour = base64_behaviour(&single, &*requests::single(s).await?, noise);
    let fact = s.detected(behaviour, &single.exchange);
    embeddings::learn(s, |facts| facts.base64 = Some(fact));
    let batch = s.send(requests::base64(s, json!(BATCH))).await?;
    let mut verdict = Verdict::pass("every embedding is a string when base64 is asked for");
    for reply in [&single, &batch] {
        if !reply.is_success() {
            return Ok(Verdict::skip(format!(
                "base64 was answered {}; see ENC-002",
                reply.summary()
            ))
            .with(&reply.exchange));
        }
        let data = match reply.data() {
            Ok(data) => data,
            Err(why) => return Ok(Verdict::fail(why).with(&reply.exchange)),
        };
        let arrays = data
            .iter()
            .position(|item| item.get("embedding").is_some_and(Value::is_array));
        if let Some(i) = arrays {
            return Ok(Verdict::fail(format!(
                "encoding_format \"base64\" answered data[{i}].embedding as an array of numbers: the OpenAI Node SDK before 7.11 decodes it as base64 anyway and gets garbage vectors; clients that asked for base64 expect a string"
            ))
            .with(&reply.exchange));
        }
        verdict = verdict.with(&reply.exchange);
    }
    Ok(verdict)
}

/// ENC-004: "An encoding_format other than \"float\" or \"base64\" (such as \"bogus\",
/// \"\" or 123) is refused with a 4xx."
async fn unsupported_format_refused(s: &Session) -> CheckResult {
    let mistakes = UNSUPPORTED_FORMATS
        .into_iter()
        .map(|format| {
            let format = format();
            (
                format!("encoding_format {format}"),
                unsupported_probe(s, format),
            )
        })
        .collect();
    judging::expect_all_refused(s, mistakes, "\"bogus\", \"\" and 123 were refused with 4xx").await
}

/// ENC-004's values, each built when sent.
const UNSUPPORTED_FORMATS: [fn() -> Value; 3] = [|| json!("bogus"), || json!(""), || json!(123)];

fn unsupported_probe(s: &Session, format: Value) -> Probe {
    let why = format!("encoding_format {format} is neither \"float\" nor \"base64\"");
    let request = body(s, json!(SENTENCE), &[("encoding_format", format)]);
    requests::invalid(Body::Json(request), why)
}

/// ENC-005: "Refusing an unsupported encoding_format (ENC-004's probe) names
/// encoding_format in the error message or param."
///
/// Judged on ENC-004's own refusals (answered from the cache); whether the accepted
/// values are named too is said in the reason.
async fn refusal_names_the_field(s: &Session) -> CheckResult {
    let mut refused = Vec::new();
    for format in UNSUPPORTED_FORMATS {
        let reply = s.send(unsupported_probe(s, format())).await?;
        if reply.is_client_error() {
            refused.push((format(), reply));
        }
    }
    if refused.is_empty() {
        return Ok(Verdict::skip(
            "no unsupported encoding_format was refused (ENC-004 judges that)",
        ));
    }
    let unnamed: Vec<&(Value, Arc<Reply>)> = refused
        .iter()
        .filter(|(_, r)| judging::refused_naming(r, "encoding_format").is_err())
        .collect();
    let exchanges = refused.iter().map(|(_, r)| &r.exchange);
    if let Some((format, reply)) = unnamed.first() {
        return Ok(Verdict::fail(format!(
            "{} of {} refusals do not name encoding_format; encoding_format {format}: {}",
            unnamed.len(),
            refused.len(),
            reply.summary()
        ))
        .with_all(exchanges));
    }
    let values = refused.iter().all(|(_, r)| {
        let text = r.error_text();
        text.contains("float") && text.contains("base64")
    });
    Ok(Verdict::pass(format!(
        "{} refusals name encoding_format{}",
        refused.len(),
        if values {
            " and the accepted values"
        } else {
            " (without listing float and base64)"
        }
    ))
    .with_all(exchanges))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;

    fn encode(values: &[f32], to: fn(f32) -> [u8; 4]) -> Value {
        let bytes: Vec<u8> = values.iter().flat_map(|v| to(*v)).collect();
        Value::String(BASE64.encode(bytes))
    }

    const FLOATS: [f64; 3] = [0.5, -0.25, 0.125];

    fn quiet() -> Noise {
        Noise::unmeasured()
    }
    const F32: [f32; 3] = [0.5, -0.25, 0.125];

    #[test]
    fn little_endian_float32_matches() {
        assert_eq!(
            decode_against(Some(&encode(&F32, f32::to_le_bytes)), &FLOATS, quiet()),
            Ok(())
        );
    }

    #[test]
    fn big_endian_is_named() {
        assert_eq!(
            decode_against(Some(&encode(&F32, f32::to_be_bytes)), &FLOATS, quiet()),
            Err(Mismatch::BigEndian)
        );
    }

    #[test]
    fn float64_is_named() {
        let bytes: Vec<u8> = FLOATS.iter().flat_map(|v| v.to_le_bytes()).collect();
        let err = decode_against(Some(&Value::String(BASE64.encode(bytes))), &FLOATS, quiet())
            .unwrap_err();
        assert!(err.to_string().contains("float64"), "{err}");
    }

    #[test]
    fn arrays_and_bad_values_are_named() {
        assert_eq!(
            decode_against(Some(&json!(FLOATS)), &FLOATS, quiet()),
            Err(Mismatch::NotAString("an array of numbers"))
        );
        let off = [0.5f32, 0.25, 0.125];
        assert!(matches!(
            decode_against(Some(&encode(&off, f32::to_le_bytes)), &FLOATS, quiet()),
            Err(Mismatch::Values { .. })
        ));
        assert_eq!(
            decode_against(Some(&json!("not base64!")), &FLOATS, quiet()),
            Err(Mismatch::NotBase64)
        );
    }

    #[test]
    fn a_noisy_server_is_judged_against_its_own_noise() {
        // Values off by 1e-3, as a GPU server's two requests can be: within its noise.
        let drifted = [0.501f32, -0.249, 0.125];
        let noisy = Noise {
            cosine: 0.9995,
            max_abs: 1e-3,
        };
        let encoded = encode(&drifted, f32::to_le_bytes);
        assert_eq!(decode_against(Some(&encoded), &FLOATS, noisy), Ok(()));
    }
}
