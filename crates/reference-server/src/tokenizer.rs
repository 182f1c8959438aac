//! A deterministic toy tokenizer standing in for a real BPE vocabulary.
//!
//! It only has to behave like one where the suite can observe it: token counts grow at
//! roughly one token per four characters, every script (Hangul, kana, Arabic, emoji) yields
//! at least one token, and ids are stable across runs, platforms and batch positions.
//!
//! ```
//! use reference_server::tokenize;
//! assert_eq!(tokenize("Hello, world!", 50_000).len(), 6); // hell o , worl d !
//! ```

/// Longest word piece in characters; the "four characters per token" rule of thumb of BPE.
const MAX_PIECE_CHARS: usize = 4;

/// Splits `text` into token ids below `vocab_size`.
///
/// The text is put in Unicode normalisation form C (as the NFC normaliser of a real
/// tokenizer does: a composed and a decomposed spelling are one input) and lower-cased,
/// then cut into words of alphanumeric characters (Unicode-aware)
/// and each word into pieces of at most four characters; every other character that is not
/// whitespace (punctuation, symbols, emoji, non-alphanumeric combining marks) is a token of
/// its own. A piece's id is the FNV-1a 64 hash of its UTF-8 bytes modulo `vocab_size`.
/// A `vocab_size` of 0 is treated as 1 rather than dividing by zero.
pub fn tokenize(text: &str, vocab_size: u32) -> Vec<u32> {
    let vocab = u64::from(vocab_size.max(1));
    let composed: String = unicode_normalization::UnicodeNormalization::nfc(text).collect();
    pieces(&composed.to_lowercase())
        .into_iter()
        // The remainder is below `vocab`, itself a u32, so the cast is lossless.
        .map(|piece| (fnv1a64(piece.as_bytes()) % vocab) as u32)
        .collect()
}

/// The pieces of an already lower-cased text, in order, as slices of it.
fn pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut word: Option<(usize, usize)> = None; // (byte start, chars so far)
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if c.is_alphanumeric() {
            let (start, chars) = word.map_or((at, 1), |(start, chars)| (start, chars + 1));
            if chars == MAX_PIECE_CHARS {
                pieces.push(&text[start..end]);
                word = None;
            } else {
                word = Some((start, chars));
            }
        } else {
            if let Some((start, _)) = word.take() {
                pieces.push(&text[start..at]);
            }
            if !c.is_whitespace() {
                pieces.push(&text[at..end]);
            }
        }
    }
    if let Some((start, _)) = word {
        pieces.push(&text[start..]);
    }
    pieces
}

/// 64-bit FNV-1a: tiny, well specified and identical on every platform. The rerank
/// scores' tie-breaker and response id use it too, for the same reasons.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VOCAB: u32 = 50_000;

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// A decomposed spelling (macOS file names, some PDFs) is the composed text.
    #[test]
    fn composed_and_decomposed_spellings_are_one_input() {
        let composed = "crêpe 내일";
        let decomposed = "cre\u{0302}pe \u{1102}\u{1162}\u{110b}\u{1175}\u{11af}";
        assert_eq!(tokenize(composed, VOCAB), tokenize(decomposed, VOCAB));
    }

    #[test]
    fn words_are_cut_into_pieces_of_at_most_four_chars() {
        assert_eq!(pieces("hello world"), ["hell", "o", "worl", "d"]);
        assert_eq!(pieces("abcd efgh"), ["abcd", "efgh"]);
    }

    #[test]
    fn punctuation_and_symbols_are_tokens_of_their_own() {
        assert_eq!(
            pieces("a,b!!  c-d"),
            ["a", ",", "b", "!", "!", "c", "-", "d"]
        );
    }

    #[test]
    fn pieces_count_chars_not_bytes() {
        assert_eq!(pieces("안녕하세요"), ["안녕하세", "요"]);
        assert_eq!(pieces("ñandúes"), ["ñand", "úes"]);
    }

    #[test]
    fn tokenization_is_deterministic() {
        let text = "The quick brown fox, 123 times!";
        assert_eq!(tokenize(text, VOCAB), tokenize(text, VOCAB));
    }

    #[test]
    fn tokenization_ignores_case() {
        assert_eq!(
            tokenize("Hello WORLD", VOCAB),
            tokenize("hello world", VOCAB)
        );
    }

    #[test]
    fn every_script_yields_at_least_one_token() {
        for text in [
            "안녕",
            "こんにちは",
            "مرحبا",
            "🙂",
            "漢字",
            "\u{301}",
            "Ωμέγα",
            "½",
        ] {
            assert!(!tokenize(text, VOCAB).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn an_emoji_is_one_token() {
        assert_eq!(tokenize("🙂", VOCAB).len(), 1);
    }

    #[test]
    fn whitespace_and_empty_text_yield_no_tokens() {
        assert!(tokenize("", VOCAB).is_empty());
        assert!(tokenize(" \t\n\u{3000}", VOCAB).is_empty());
    }

    #[test]
    fn ids_stay_below_the_vocabulary_size() {
        let text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit 🙂 한국어";
        for vocab in [1, 7, 1000, VOCAB] {
            assert!(tokenize(text, vocab).iter().all(|&id| id < vocab));
        }
    }

    #[test]
    fn a_zero_vocabulary_does_not_panic() {
        assert_eq!(tokenize("ab cd", 0), [0, 0]);
    }

    #[test]
    fn token_count_is_about_a_quarter_of_the_letters() {
        let text = "a".repeat(4000);
        assert_eq!(tokenize(&text, VOCAB).len(), 1000);
    }
}
