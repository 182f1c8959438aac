//! Quirks that edit the 200 answers to embeddings requests.

use crate::quirks::Quirk;
use crate::wire::{Answer, Incoming};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use reference_server::{Config, embed_tokens, tokenize};
use serde_json::{Value, json};

/// `created` of the extra response fields: fixed, so that answers are reproducible.
const CREATED: u64 = 1_767_225_600;

/// Weight of the padding vector leaking into batch items: cosine to the item alone ≈
/// 1/√1.04 ≈ 0.98.
const PAD_WEIGHT: f64 = 0.2;

/// Length of the first token's vector mixed into each vector by
/// `Quirk::FirstTokenPooling`, relative to the pooled one: cosine ≈ 1/√(1 + 1.5²) ≈
/// 0.55 where the two are far apart.
const FIRST_TOKEN_WEIGHT: f64 = 1.5;

/// How far a long input turns later vectors (`Quirk::ChangedAfterLongInput`).
const CHANGED_COSINE: f64 = 0.99;

/// The decimal digits of every token id in `input` (`[int]` or `[[int]]`); 0 for text.
fn id_digits(input: &Value) -> usize {
    match input {
        Value::Number(n) => n.to_string().len(),
        Value::Array(items) => items.iter().map(id_digits).sum(),
        _ => 0,
    }
}

/// The token id whose vector stands for padding.
const PAD_TOKEN: u32 = 0;

/// Whether `answer` is a success body these quirks edit (not `GET /models`).
pub(in crate::quirks) fn applies(request: &Incoming, answer: &Answer) -> bool {
    request.is_embed_post() && answer.status == 200
}

/// Adds `max_model_len` to every model of a `GET /models` answer.
pub(in crate::quirks) fn advertise_max_model_len(
    request: &Incoming,
    answer: &mut Answer,
    tokens: usize,
) {
    let listing = request.method == "GET" && request.path.ends_with("/models");
    let Some(mut body) = answer.json().filter(|_| listing && answer.status == 200) else {
        return;
    };
    if let Some(models) = body.get_mut("data").and_then(Value::as_array_mut) {
        models
            .iter_mut()
            .for_each(|m| m["max_model_len"] = json!(tokens));
    }
    answer.set_json(&body);
}

/// Applies a success-body quirk; any other quirk leaves the answer as it is.
pub(in crate::quirks) fn edit(
    quirk: Quirk,
    request: &Incoming,
    answer: &mut Answer,
    config: &Config,
) {
    if !applies(request, answer) {
        return;
    }
    let Some(mut body) = answer.json() else {
        return;
    };
    match quirk {
        Quirk::ExtraResponseFields {
            id_prefix,
            completion_tokens,
        } => {
            body["id"] = json!(format!("{id_prefix}{}", request.number));
            body["created"] = json!(CREATED);
            if completion_tokens {
                set_usage(&mut body, "completion_tokens", json!(0));
            }
        }
        Quirk::DropModelField => drop_key(&mut body, "model"),
        Quirk::DropLastItem => drop_last_item(&mut body),
        Quirk::IndicesFromOne => renumber_from_one(&mut body),
        Quirk::StringInVector => {
            if let Some(value) = body.pointer_mut("/data/0/embedding/0") {
                *value = json!("NaN");
            }
        }
        Quirk::PerTokenVectors => per_token_vectors(&mut body, request, config.vocab_size),
        Quirk::FloatUsage => map_usage(&mut body, |n| json!(n as f64)),
        Quirk::ZeroUsage => map_usage(&mut body, |_| json!(0)),
        Quirk::PaddedUsage(extra) => map_usage(&mut body, |n| json!(n + extra)),
        Quirk::UsagePerCharOutsideAscii(per_char) => {
            let outside: usize = request
                .texts()
                .iter()
                .flatten()
                .map(|t| t.chars().filter(|c| !c.is_ascii()).count())
                .sum();
            map_usage(&mut body, |n| json!(n + per_char * outside as u64));
        }
        Quirk::UsageCountsWholeInput => {
            let tokens: usize = request
                .texts()
                .iter()
                .flatten()
                .map(|t| tokenize(t, config.vocab_size).len())
                .sum();
            map_usage(&mut body, |_| json!(tokens));
        }
        Quirk::UsageInCharacters => {
            let chars: usize = request
                .texts()
                .iter()
                .flatten()
                .map(|t| t.chars().count())
                .sum();
            map_usage(&mut body, |_| json!(chars));
        }
        Quirk::NoisyAnswers {
            least_cosine,
            repeats_only,
        } if request.repeat > 0 || !repeats_only => {
            let weight = noise_weight(least_cosine, request.number);
            map_vectors(&mut body, |i, v| {
                // Any id distinct per request and item gives independent errors.
                let seed = (request.number * 4096 + i as u64) as u32;
                within(
                    least_cosine,
                    &v,
                    |w| with_relative_error(&v, &unit(seed, v.len()), w),
                    weight,
                )
            })
        }
        Quirk::BatchPaddingLeak if batch_len(&body) > 1 => {
            map_vectors(&mut body, |_, v| {
                mix(&v, &unit(PAD_TOKEN, v.len()), PAD_WEIGHT)
            });
        }
        Quirk::SliceDimensions {
            suffix,
            renormalise,
        } => {
            if let Some(d) = sliced_dimensions(request, config.native_dimensions) {
                map_vectors(&mut body, |_, v| slice(v, d, suffix, renormalise));
            }
        }
        Quirk::Base64Float64 => base64_as_float64(&mut body),
        Quirk::Base64BigEndian => base64_big_endian(&mut body),
        Quirk::Base64Drifted { cosine } => {
            let angle = cosine.clamp(-1.0, 1.0).acos();
            for item in items(&mut body) {
                if let Some(Value::String(text)) = item.get_mut("embedding")
                    && let Some(vector) = decode_f32(text)
                {
                    let turned = rotate_pairs(vector, angle);
                    *text = encode(turned.into_iter().flat_map(|x| (x as f32).to_le_bytes()));
                }
            }
        }
        Quirk::DriftedVectors { cosine } => {
            let angle = cosine.clamp(-1.0, 1.0).acos();
            map_vectors(&mut body, |_, v| rotate_pairs(v, angle));
        }
        Quirk::FirstTokenPooling => {
            let texts = request.texts();
            map_vectors(&mut body, |i, v| {
                let first = texts
                    .get(i)
                    .and_then(Option::as_deref)
                    .and_then(|t| tokenize(t, config.vocab_size).first().copied());
                match first {
                    Some(id) => mix(&v, &unit(id, v.len()), FIRST_TOKEN_WEIGHT),
                    None => v,
                }
            });
        }
        Quirk::DamagedFromBatchPosition { position, cosine } => {
            let angle = cosine.clamp(-1.0, 1.0).acos();
            map_vectors(&mut body, |i, v| {
                if i >= position {
                    rotate_pairs(v, angle)
                } else {
                    v
                }
            });
        }
        Quirk::NullsForPaddedItems { longest_at_least } => {
            nulls_for_padded_items(&mut body, request, config.vocab_size, longest_at_least);
        }
        Quirk::SkippedProjection { dims } => {
            map_vectors(&mut body, |_, v| slice(v, dims, false, true));
        }
        Quirk::ScaledVectors { factor } => {
            map_vectors(&mut body, |_, v| v.iter().map(|x| x * factor).collect());
        }
        Quirk::ConstantVectors => {
            let mut first: Option<Vec<f64>> = None;
            map_vectors(&mut body, |_, v| first.get_or_insert(v).clone());
        }
        Quirk::TokenIdsCountedAsDigits => {
            let digits = request.input().map_or(0, |input| id_digits(&input));
            if digits > 0 {
                map_usage(&mut body, |_| json!(digits));
            }
        }
        Quirk::ChangedAfterLongInput { bytes } if request.longest_before > bytes => {
            let angle = CHANGED_COSINE.acos();
            map_vectors(&mut body, |_, v| rotate_pairs(v, angle));
        }
        _ => return,
    }
    answer.set_json(&body);
}

fn drop_key(body: &mut Value, key: &str) {
    if let Some(fields) = body.as_object_mut() {
        fields.remove(key);
    }
}

fn items(body: &mut Value) -> &mut [Value] {
    body.get_mut("data")
        .and_then(Value::as_array_mut)
        .map_or(&mut [][..], Vec::as_mut_slice)
}

/// Every item shorter than the longest of its batch becomes nulls, when the longest
/// has at least `longest_at_least` tokens.
fn nulls_for_padded_items(
    body: &mut Value,
    request: &Incoming,
    vocab: u32,
    longest_at_least: usize,
) {
    let lengths: Vec<usize> = request
        .texts()
        .iter()
        .map(|t| t.as_deref().map_or(0, |t| tokenize(t, vocab).len()))
        .collect();
    let longest = lengths.iter().copied().max().unwrap_or(0);
    if lengths.len() < 2 || longest < longest_at_least {
        return;
    }
    for (item, length) in items(body).iter_mut().zip(&lengths) {
        if *length < longest
            && let Some(Value::Array(values)) = item.get_mut("embedding")
        {
            values.iter_mut().for_each(|v| *v = Value::Null);
        }
    }
}

fn batch_len(body: &Value) -> usize {
    body.get("data")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

fn drop_last_item(body: &mut Value) {
    if let Some(data) = body.get_mut("data").and_then(Value::as_array_mut)
        && data.len() > 1
    {
        data.pop();
    }
}

fn renumber_from_one(body: &mut Value) {
    for item in items(body) {
        if let Some(index) = item.get("index").and_then(Value::as_u64) {
            item["index"] = json!(index + 1);
        }
    }
}

fn set_usage(body: &mut Value, field: &str, value: Value) {
    if let Some(usage) = body.get_mut("usage").and_then(Value::as_object_mut) {
        usage.insert(field.to_owned(), value);
    }
}

fn map_usage(body: &mut Value, map: impl Fn(u64) -> Value) {
    for field in ["prompt_tokens", "total_tokens"] {
        if let Some(n) = body
            .pointer(&format!("/usage/{field}"))
            .and_then(Value::as_u64)
        {
            set_usage(body, field, map(n));
        }
    }
}

/// Rewrites every vector, float array or base64 string alike: a server's numbers do
/// not depend on how they are written.
fn map_vectors(body: &mut Value, mut map: impl FnMut(usize, Vec<f64>) -> Vec<f64>) {
    for (i, item) in items(body).iter_mut().enumerate() {
        let Some(embedding) = item.get_mut("embedding") else {
            continue;
        };
        match embedding {
            Value::Array(values) => {
                let floats: Option<Vec<f64>> = values.iter().map(Value::as_f64).collect();
                if let Some(vector) = floats {
                    *embedding = json!(map(i, vector));
                }
            }
            Value::String(text) => {
                if let Some(vector) = decode_f32(text) {
                    *text = encode(
                        map(i, vector)
                            .into_iter()
                            .flat_map(|x| (x as f32).to_le_bytes()),
                    );
                }
            }
            _ => {}
        }
    }
}

/// The little-endian float32 values of a base64 embedding.
fn decode_f32(text: &str) -> Option<Vec<f64>> {
    let bytes = BASE64.decode(text).ok()?;
    let chunks = bytes.chunks_exact(4);
    chunks.remainder().is_empty().then(|| {
        chunks
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect()
    })
}

fn encode(bytes: impl Iterator<Item = u8>) -> String {
    BASE64.encode(bytes.collect::<Vec<u8>>())
}

/// Rewrites base64 embeddings as little-endian float64, the bytes of a NumPy array
/// of Python floats.
fn base64_as_float64(body: &mut Value) {
    for item in items(body) {
        if let Some(Value::String(text)) = item.get_mut("embedding")
            && let Some(vector) = decode_f32(text)
        {
            *text = encode(vector.into_iter().flat_map(f64::to_le_bytes));
        }
    }
}

/// Rewrites base64 embeddings as big-endian float32: each value's four bytes reversed.
fn base64_big_endian(body: &mut Value) {
    for item in items(body) {
        if let Some(Value::String(text)) = item.get_mut("embedding")
            && let Some(vector) = decode_f32(text)
        {
            *text = encode(vector.into_iter().flat_map(|x| (x as f32).to_be_bytes()));
        }
    }
}

/// Turns `v` by `angle` in each plane of consecutive components (0 and 1, 2 and 3, …;
/// an odd last one stays). The same orthogonal map for every vector: norms and the
/// cosines between turned vectors are unchanged, and each has cosine cos(`angle`) to
/// the vector it was (exactly so for even lengths).
fn rotate_pairs(mut v: Vec<f64>, angle: f64) -> Vec<f64> {
    let (sin, cos) = angle.sin_cos();
    for pair in v.chunks_exact_mut(2) {
        let (x, y) = (pair[0], pair[1]);
        pair[0] = x * cos - y * sin;
        pair[1] = x * sin + y * cos;
    }
    v
}

/// Turns the last vector of a success answer by the angle of `cosine` (see
/// [`Quirk::VariesOnce`]).
pub(crate) fn turn_last_item(answer: &mut Answer, cosine: f64) {
    let Some(mut body) = answer.json() else {
        return;
    };
    let last = batch_len(&body).saturating_sub(1);
    let angle = cosine.clamp(-1.0, 1.0).acos();
    map_vectors(&mut body, |i, v| match i == last {
        true => rotate_pairs(v, angle),
        false => v,
    });
    answer.set_json(&body);
}

/// Each text's vector becomes its tokens' own vectors, concatenated.
fn per_token_vectors(body: &mut Value, request: &Incoming, vocab_size: u32) {
    let texts = request.texts();
    map_vectors(body, |i, pooled| match texts.get(i) {
        Some(Some(text)) => {
            let rows = tokenize(text, vocab_size)
                .into_iter()
                .flat_map(|id| embed_tokens(&[id], pooled.len()))
                .map(f64::from)
                .collect();
            normalise(rows)
        }
        _ => pooled,
    })
}

/// The `dimensions` a [`Quirk::SliceDimensions`] serves itself: those in `1..native`.
fn sliced_dimensions(request: &Incoming, native: usize) -> Option<usize> {
    let d = request.fields()?.get("dimensions")?.as_u64()? as usize;
    (1..native).contains(&d).then_some(d)
}

fn slice(mut v: Vec<f64>, d: usize, suffix: bool, renormalise: bool) -> Vec<f64> {
    let kept = if suffix {
        v.split_off(v.len().saturating_sub(d))
    } else {
        v.into_iter().take(d).collect()
    };
    if renormalise { normalise(kept) } else { kept }
}

/// A pseudo-random unit vector, the reference server's vector of token `id`.
fn unit(id: u32, len: usize) -> Vec<f64> {
    embed_tokens(&[id], len)
        .into_iter()
        .map(f64::from)
        .collect()
}

/// `v + weight · other`, normalised to unit length.
/// The weight of the relative errors that move answer `number` of a
/// `Quirk::NoisyAnswers { least_cosine, .. }` server: 1 − cosine to the exact vector
/// between a half and the whole of `1 - least_cosine`, picked by the request number.
/// With relative errors of weight w, a unit vector keeps cosine about 1/√(1 + w²), so
/// w = √(1/c² − 1).
fn noise_weight(least_cosine: f64, number: u64) -> f64 {
    let spread = (1.0 - least_cosine).max(0.0);
    let share = (number.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
    let cosine = 1.0 - spread * (0.5 + 0.5 * share);
    (1.0 / (cosine * cosine) - 1.0).sqrt()
}

/// `noisy(weight)`, with the weight cut by tenths until the answer keeps `least_cosine`
/// to `v`: the estimate behind [`noise_weight`] is close, not a bound, and the quirk
/// promises the bound.
fn within(least_cosine: f64, v: &[f64], noisy: impl Fn(f64) -> Vec<f64>, weight: f64) -> Vec<f64> {
    let mut weight = weight;
    loop {
        let answer = noisy(weight);
        let cosine: f64 = answer.iter().zip(v).map(|(a, b)| a * b).sum::<f64>()
            / (v.iter().map(|x| x * x).sum::<f64>().sqrt()).max(f64::MIN_POSITIVE);
        if cosine >= least_cosine || weight < 1e-9 {
            return answer;
        }
        weight *= 0.9;
    }
}

/// `v` with each component off by its own relative error (`weight` × √len × the
/// matching component of the unit vector `errors`), re-normalised: rounding and
/// reduction errors scale with each value, so every prefix of the vector is as noisy
/// as the whole, as a Matryoshka server's truncations are.
fn with_relative_error(v: &[f64], errors: &[f64], weight: f64) -> Vec<f64> {
    let scale = weight * (v.len() as f64).sqrt();
    normalise(
        v.iter()
            .zip(errors)
            .map(|(x, e)| x * (1.0 + scale * e))
            .collect(),
    )
}

fn mix(v: &[f64], other: &[f64], weight: f64) -> Vec<f64> {
    normalise(v.iter().zip(other).map(|(a, b)| a + weight * b).collect())
}

fn normalise(v: Vec<f64>) -> Vec<f64> {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        return v;
    }
    v.into_iter().map(|x| x / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f64], b: &[f64]) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        dot / (norm(a) * norm(b))
    }

    #[test]
    fn drift_moves_every_vector_alike_and_keeps_their_own_geometry() {
        let (a, b) = (unit(1, 1024), unit(2, 1024));
        let angle = 0.9998_f64.acos();
        let (ta, tb) = (
            rotate_pairs(a.clone(), angle),
            rotate_pairs(b.clone(), angle),
        );
        assert!((cosine(&ta, &a) - 0.9998).abs() < 1e-12);
        assert!((cosine(&tb, &b) - 0.9998).abs() < 1e-12);
        assert!((cosine(&ta, &tb) - cosine(&a, &b)).abs() < 1e-12);
        assert!((cosine(&ta, &ta) - 1.0).abs() < 1e-12);
        let moved = ta.iter().zip(&a).map(|(x, y)| (x - y).abs());
        assert!(
            moved.fold(0.0, f64::max) < 0.01,
            "moved in the third decimal or below"
        );
    }
}
