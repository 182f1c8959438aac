//! Deterministic pseudo-embeddings with the properties the suite checks on real servers.
//!
//! A text's vector is the sum of one pseudo-random vector per token, L2-normalised. That
//! makes it depend only on the multiset of token ids: a batch item equals the same input
//! sent alone, repeated calls agree bit for bit, truncating an input changes the vector
//! predictably, and the first `d` components re-normalised are the Matryoshka vector of
//! size `d` (clause EMB-DIM-06).
//!
//! Each component is a 24-bit integer scaled by 2⁻²³, so the per-token sums are exact
//! integer sums: the result does not depend on token order even in the last bit.

/// Bits of randomness per component; 24 fit exactly in both `f32` and `f64`.
const COMPONENT_BITS: u32 = 24;

/// Scales a component from `[-2²³, 2²³)` to `[-1, 1)`.
const COMPONENT_SCALE: f64 = 1.0 / (1u64 << (COMPONENT_BITS - 1)) as f64;

/// The unit vector of `dims` components for the token ids `ids`.
///
/// Returns the zero vector when `ids` is empty (or `dims` is 0), since there is no
/// direction to normalise; the server never embeds an empty input.
pub fn embed_tokens(ids: &[u32], dims: usize) -> Vec<f32> {
    let mut sums = vec![0i64; dims];
    for &id in ids {
        add_token_components(&mut sums, id);
    }
    normalize(sums.iter().map(|&sum| sum as f64 * COMPONENT_SCALE))
}

/// The first `dims` components of `vector`, re-normalised to unit length.
///
/// A `dims` beyond the vector's length keeps the whole vector; a prefix that is all zeros
/// stays zero.
pub fn truncate_dimensions(vector: &[f32], dims: usize) -> Vec<f32> {
    let prefix = &vector[..dims.min(vector.len())];
    normalize(prefix.iter().map(|&x| f64::from(x)))
}

/// Adds the first `sums.len()` of one token's integer components, each in `[-2²³,
/// 2²³)`, the stream SplitMix64 seeded with the token id gives.
///
/// A plain loop, not iterator adapters: the personas serve this engine in unoptimised
/// test builds, where every audit's vectors are made here and adapters cost several
/// times the arithmetic.
fn add_token_components(sums: &mut [i64], id: u32) {
    let mut state = u64::from(id);
    let mut i = 0;
    while i < sums.len() {
        let bits = splitmix64(&mut state) >> (64 - COMPONENT_BITS);
        // `bits` is below 2²⁴, so it fits an i64 exactly.
        sums[i] += bits as i64 - (1i64 << (COMPONENT_BITS - 1));
        i += 1;
    }
}

/// One step of SplitMix64 (Steele, Lea & Flood 2014): a fast generator whose output is
/// well mixed even for small, consecutive seeds such as token ids.
#[inline(always)]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Divides by the L2 norm in `f64` and rounds once to `f32`; the zero vector stays zero.
fn normalize(values: impl Iterator<Item = f64> + Clone) -> Vec<f32> {
    let norm = values.clone().map(|x| x * x).sum::<f64>().sqrt();
    let scale = if norm > 0.0 { norm.recip() } else { 0.0 };
    values.map(|x| (x * scale) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(v: &[f32]) -> f64 {
        v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt()
    }

    fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut state), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn components_lie_in_the_half_open_unit_interval() {
        let limit = 1i64 << (COMPONENT_BITS - 1);
        let mut components = vec![0; 10_000];
        add_token_components(&mut components, 7);
        assert!(components.iter().all(|c| (-limit..limit).contains(c)));
    }

    /// A token's components are its SplitMix64 stream's top 24 bits, centred.
    #[test]
    fn components_are_the_top_bits_of_the_token_ids_stream() {
        let mut components = vec![0; 3];
        add_token_components(&mut components, 0);
        let mut state = 0;
        let expected: Vec<i64> = (0..3)
            .map(|_| (splitmix64(&mut state) >> 40) as i64 - (1 << 23))
            .collect();
        assert_eq!(components, expected);
        assert_eq!(components[0], 0x00e2_20a8_i64 - (1 << 23));
    }

    #[test]
    fn vectors_have_the_requested_length_and_unit_norm() {
        for dims in [1, 3, 256, 1024] {
            let v = embed_tokens(&[1, 2, 3], dims);
            assert_eq!(v.len(), dims);
            assert!((norm(&v) - 1.0).abs() < 1e-6, "dims {dims}");
        }
    }

    #[test]
    fn embedding_is_deterministic() {
        assert_eq!(
            embed_tokens(&[5, 9, 42], 256),
            embed_tokens(&[5, 9, 42], 256)
        );
    }

    #[test]
    fn embedding_ignores_token_order_exactly() {
        assert_eq!(
            embed_tokens(&[5, 9, 42, 9], 256),
            embed_tokens(&[9, 42, 9, 5], 256)
        );
    }

    #[test]
    fn different_tokens_give_different_vectors() {
        let a = embed_tokens(&[1], 64);
        let b = embed_tokens(&[2], 64);
        assert!(max_abs_diff(&a, &b) > 0.1);
    }

    #[test]
    fn every_value_is_finite() {
        let ids: Vec<u32> = (0..512).collect();
        assert!(embed_tokens(&ids, 256).iter().all(|x| x.is_finite()));
    }

    #[test]
    fn no_tokens_give_the_zero_vector() {
        assert_eq!(embed_tokens(&[], 4), [0.0; 4]);
    }

    #[test]
    fn matryoshka_prefix_equals_the_smaller_native_vector() {
        let ids = [17, 4_000, 49_999, 3];
        let full = embed_tokens(&ids, 256);
        for dims in [1, 8, 64, 255] {
            let truncated = truncate_dimensions(&full, dims);
            assert_eq!(truncated.len(), dims);
            assert!((norm(&truncated) - 1.0).abs() < 1e-6);
            assert!(max_abs_diff(&truncated, &embed_tokens(&ids, dims)) < 1e-6);
        }
    }

    #[test]
    fn truncating_to_the_full_length_keeps_the_vector() {
        let full = embed_tokens(&[1, 2], 16);
        assert!(max_abs_diff(&truncate_dimensions(&full, 16), &full) < 1e-7);
        assert_eq!(truncate_dimensions(&full, 99).len(), 16);
    }

    #[test]
    fn truncating_a_zero_prefix_stays_zero() {
        assert_eq!(truncate_dimensions(&[0.0, 0.0, 1.0], 2), [0.0, 0.0]);
    }
}
