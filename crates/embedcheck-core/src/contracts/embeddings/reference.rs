//! Known answers: the vectors the model's own library gives for a set of texts, which
//! the `reference` family holds a server's vectors against (`--reference FILE`).
//!
//! A server can answer every request 200 with unit vectors of the right length and
//! still embed wrongly (a pooling misconfiguration, a skipped Dense layer, a tokenizer
//! that drops Hangul syllables). Only the model's own vectors show it. The file is JSON
//! Lines, a header and one line per text, as `lab/reference.py` writes it:
//!
//! ```text
//! {"model": "sentence-transformers/all-MiniLM-L6-v2", "library": "sentence-transformers", "version": "3.4.1", "normalized": true}
//! {"id": "ko-busan", "text": "부산행 기차는 …", "embedding": [0.0123, …], "tokens": 21}
//! ```
//!
//! `id` and `tokens` are optional, as are a line's `query_embedding` and `query_tokens`
//! (the text embedded with the model's query prompt) and `ids` (its token ids, special
//! tokens included). The header may say more of the model: its `max_seq_length`, its
//! sentence-transformers `prompts`, and its `tokenizer` (the Unicode normalisation it
//! applies, the token it appends after a text); other keys (library versions, who made
//! it) are kept as they are.

use crate::reference::{JsonLines, ReferenceError, read};
use serde::Deserialize;
use std::path::Path;

/// Cosine with the reference below which a vector is not the model's: engines serving
/// the same weights agree far above it (the migration study measured at least 0.9996
/// between transformers and vLLM), broken pooling falls far below it (0.36–0.67).
pub const DEFAULT_THRESHOLD: f64 = 0.99;

/// The probe texts a reference is made of (`lab/reference.py` reads them): several
/// scripts, accents, all-caps, emoji and code, where engines that share weights but not
/// tokenizers part ways.
pub const PROBE_TEXTS: &str = include_str!("../../../fixtures/probe-texts.jsonl");

/// One probe text: its id and text.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ProbeText {
    pub id: String,
    pub text: String,
}

/// The shipped probe texts, in file order.
pub fn probe_texts() -> Vec<ProbeText> {
    PROBE_TEXTS
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// A reference file: who made it and the known answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub header: Header,
    pub answers: Vec<KnownAnswer>,
    /// Where it was read from, as reports show it.
    pub origin: String,
}

/// The header line.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Header {
    pub model: String,
    pub library: String,
    pub version: String,
    #[serde(default)]
    pub normalized: bool,
    /// The longest input the model reads, in tokens: what it declares, which outranks
    /// where a server happens to cut (LEN-006).
    #[serde(default)]
    pub max_seq_length: Option<u64>,
    /// The model's prompts by name (sentence-transformers' `prompts`): `query` is what an
    /// instruction-aware model puts before a query.
    #[serde(default)]
    pub prompts: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    pub tokenizer: Option<TokenizerFacts>,
}

/// What the model's tokenizer does that a server must do too.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct TokenizerFacts {
    /// The Unicode normalisation form it applies (`NFC`, `NFD`, `NFKC`, `NFKD`), if any:
    /// with one, two spellings of one text (composed and decomposed) are one input.
    #[serde(default)]
    pub normalizer: Option<String>,
    /// Whether it appends a special token after every text (Qwen3-Embedding's
    /// `<|endoftext|>`, which its last-token pooling reads).
    #[serde(default)]
    pub appends_eos: Option<bool>,
    #[serde(default)]
    pub eos_token: Option<String>,
    #[serde(default)]
    pub eos_token_id: Option<u64>,
}

impl Header {
    /// Whether the model's tokenizer reads canonically equivalent spellings as one text.
    pub fn normalises_unicode(&self) -> Option<&str> {
        let form = self.tokenizer.as_ref()?.normalizer.as_deref()?;
        ["NFC", "NFD", "NFKC", "NFKD"]
            .into_iter()
            .find(|f| f.eq_ignore_ascii_case(form))
    }

    /// The model's query prompt, where it has one.
    pub fn query_prompt(&self) -> Option<&str> {
        self.prompts.as_ref()?.get("query").map(String::as_str)
    }
}

/// One text and the model's own vector for it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnownAnswer {
    #[serde(default)]
    pub id: Option<String>,
    pub text: String,
    pub embedding: Vec<f64>,
    /// The model's own token count, special tokens included (what `usage` reports).
    #[serde(default)]
    pub tokens: Option<u64>,
    /// The text embedded with the model's query prompt.
    #[serde(default)]
    pub query_embedding: Option<Vec<f64>>,
    /// The token count of the text with the query prompt.
    #[serde(default)]
    pub query_tokens: Option<u64>,
    /// The text's token ids, special tokens included, as the tokenizer makes them.
    #[serde(default)]
    pub ids: Option<Vec<u64>>,
}

impl KnownAnswer {
    /// How reasons name the text: its id, else its first words.
    pub fn name(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => {
                let short: String = self.text.chars().take(32).collect();
                if short.len() < self.text.len() {
                    format!("{short:?}…")
                } else {
                    format!("{short:?}")
                }
            }
        }
    }
}

impl Reference {
    /// Reads a reference file.
    pub fn load(path: &Path) -> Result<Reference, ReferenceError> {
        let text = read(path)?;
        Reference::parse(&text, &path.display().to_string())
    }

    /// Parses the JSON Lines of a reference file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Reference, ReferenceError> {
        let lines = JsonLines::of(text, origin);
        let (header, records) = lines.read::<Header, KnownAnswer>(
            "a header {model, library, version}",
            "a text line {text, embedding}",
        )?;
        let mut answers: Vec<KnownAnswer> = Vec::new();
        for (n, answer) in records {
            if answer.embedding.is_empty() || answer.embedding.iter().any(|x| !x.is_finite()) {
                return Err(lines.bad(n, "the embedding is empty or not finite".to_owned()));
            }
            if let Some(expected) = answers.first().map(|a| a.embedding.len())
                && expected != answer.embedding.len()
            {
                return Err(ReferenceError::MixedDimensions {
                    origin: origin.to_owned(),
                    line: n + 1,
                    expected,
                    got: answer.embedding.len(),
                });
            }
            answers.push(answer);
        }
        Ok(Reference {
            header,
            answers,
            origin: origin.to_owned(),
        })
    }

    /// The length of every reference vector.
    pub fn dimension(&self) -> usize {
        self.answers[0].embedding.len()
    }

    /// Who made the vectors, as reasons name it: `sentence-transformers 3.4.1`.
    pub fn made_by(&self) -> String {
        let Header {
            library, version, ..
        } = &self.header;
        format!("{library} {version}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"model": "m", "library": "sentence-transformers", "version": "3.4.1", "normalized": true, "versions": {"torch": "2.13.0"}}"#;
    #[test]
    fn a_reference_file_parses_with_optional_fields() {
        let text = format!(
            "{HEADER}\n{}\n\n{}\n",
            r#"{"id": "a", "text": "hello", "embedding": [0.6, 0.8], "tokens": 3}"#,
            r#"{"text": "world", "embedding": [1.0, 0.0]}"#
        );
        let reference = Reference::parse(&text, "r.jsonl").unwrap();
        assert_eq!(reference.dimension(), 2);
        assert_eq!(reference.answers[0].tokens, Some(3));
        assert_eq!(reference.answers[1].name(), "\"world\"");
        assert_eq!(reference.made_by(), "sentence-transformers 3.4.1");
    }

    /// A reference of an instruction-aware decoder (lab/reference.py on the tiny
    /// Qwen3-Embedding) says what its tokenizer does and carries the query side.
    #[test]
    fn the_model_facts_of_a_header_and_the_query_side_of_a_line_are_read() {
        let header = r#"{"model": "q", "library": "sentence-transformers", "version": "3.4.1", "max_seq_length": 32768, "prompts": {"query": "Instruct: x\nQuery:", "document": ""}, "tokenizer": {"normalizer": "NFC", "appends_eos": true, "eos_token": "<|endoftext|>", "eos_token_id": 151643, "padding_side": "left"}}"#;
        let line = r#"{"id": "a", "text": "hi", "embedding": [1.0, 0.0], "tokens": 2, "query_embedding": [0.0, 1.0], "query_tokens": 9, "ids": [6023, 151643]}"#;
        let reference = Reference::parse(&format!("{header}\n{line}\n"), "q.jsonl").unwrap();
        assert_eq!(reference.header.max_seq_length, Some(32768));
        assert_eq!(reference.header.normalises_unicode(), Some("NFC"));
        assert_eq!(reference.header.query_prompt(), Some("Instruct: x\nQuery:"));
        let answer = &reference.answers[0];
        assert_eq!(answer.ids.as_deref(), Some(&[6023, 151643][..]));
        assert_eq!(answer.query_tokens, Some(9));
    }

    #[test]
    fn mixed_dimensions_and_missing_texts_are_refused_with_the_line() {
        let mixed = format!(
            "{HEADER}\n{}\n{}\n",
            r#"{"text": "a", "embedding": [1.0, 0.0]}"#, r#"{"text": "b", "embedding": [1.0]}"#
        );
        let err = Reference::parse(&mixed, "r.jsonl").unwrap_err().to_string();
        assert!(err.contains("line 3 has 1 values"), "{err}");
        let empty = Reference::parse(HEADER, "r.jsonl").unwrap_err().to_string();
        assert!(empty.contains("no texts"), "{empty}");
        let garbage = Reference::parse("{\"text\": 1}", "r.jsonl")
            .unwrap_err()
            .to_string();
        assert!(garbage.contains("line 1"), "{garbage}");
    }

    #[test]
    fn every_probe_text_is_a_json_line_with_an_id() {
        for line in PROBE_TEXTS.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(
                value["id"].is_string() && value["text"].is_string(),
                "{line}"
            );
        }
    }
}
