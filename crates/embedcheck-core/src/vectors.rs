//! Vector arithmetic for the consistency, dimensions and reference clauses and the
//! comparisons of servers, and how vectors travel (float arrays or base64).

use base64::Engine as _;
use serde::Serialize;

/// Cosine at or above which two vectors count as the same embedding of the same
/// tokens: a field that changed nothing, two truncations of one input, two inputs a
/// server could not tell apart.
pub(crate) const SAME_EMBEDDING: f64 = 0.9999;

/// The least cosine between two answers for one text that noise alone explains:
/// batch composition, GPU reductions and fp16 stay above 0.9995 in every case
/// measured (bge-m3 in fp16 across batch sizes, FlagEmbedding#542), and the engines'
/// own parity tests hold 0.999 (TEI's snapshots, vLLM's `check_embeddings_close`).
pub(crate) const NOISE_BOUND: f64 = 0.999;

/// Euclidean (L2) norm.
pub(crate) fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Cosine similarity; 0 when either vector is zero or the lengths differ.
pub(crate) fn cosine(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / (na * nb)
}

/// The first `d` components, re-normalised: what a Matryoshka server returns.
pub(crate) fn renormalised_prefix(v: &[f64], d: usize) -> Vec<f64> {
    let prefix = &v[..d.min(v.len())];
    let n = norm(prefix);
    if n == 0.0 {
        return prefix.to_vec();
    }
    prefix.iter().map(|x| x / n).collect()
}

/// The median of `values` (the mean of the middle two for an even count); NaN for none.
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// How the embeddings of a body are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// Arrays of numbers.
    Float,
    /// Base64 strings of little-endian float32, as OpenAI encodes them.
    Base64,
}

/// A base64 embedding as floats (little-endian float32).
pub(crate) fn decode_base64(text: &str) -> Result<Vec<f64>, String> {
    let bytes = base64_bytes(text)?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{} base64 bytes is not a whole number of f32",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect())
}

/// The bytes of a base64 string.
pub(crate) fn base64_bytes(text: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("invalid base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_a_vector_with_itself_is_one() {
        let v = [0.3, -0.4, 0.5];
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn cosine_of_mismatched_lengths_is_zero() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn prefix_is_unit_length() {
        let p = renormalised_prefix(&[3.0, 4.0, 12.0], 2);
        assert!((norm(&p) - 1.0).abs() < 1e-12);
        assert!((p[0] - 0.6).abs() < 1e-12);
    }
}
