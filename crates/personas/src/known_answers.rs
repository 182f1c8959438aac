//! The reference file a persona's model would have: what `lab/reference.py` writes from
//! a real model's own library, written here from the reference engine, which is every
//! persona's model. The `reference` family's self-tests hold personas against it.

// The suite's probe texts (one JSON object a line with `id` and `text`), as the engine
// ships them.
use embedcheck_core::contracts::embeddings::reference::PROBE_TEXTS;
use embedcheck_core::contracts::rerank::reference::{RERANK_DOCUMENTS, RERANK_QUERY};
use embedcheck_core::contracts::speech::audio;
use reference_server::{Config, embed_tokens, rerank_logit, rerank_score, tokenize, transcript};
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The known answers of the engine under `config` for the probe texts, as the JSON
/// Lines of a reference file (header first).
pub fn known_answers(config: &Config) -> String {
    let header = json!({
        "model": config.model_id,
        "library": "reference-server",
        "version": env!("CARGO_PKG_VERSION"),
        "normalized": true,
        "max_seq_length": config.max_input_tokens,
        "prompts": {"query": config.query_instruction, "document": ""},
        // The engine's tokenizer composes every text and appends nothing.
        "tokenizer": {"normalizer": "NFC", "appends_eos": false},
    });
    let lines = PROBE_TEXTS.lines().map(|line| {
        let probe: Value = serde_json::from_str(line).expect("the probe texts are JSON lines");
        let text = probe["text"].as_str().expect("every probe text has a text");
        let ids = tokenize(text, config.vocab_size);
        let query = tokenize(
            &format!("{}{text}", config.query_instruction),
            config.vocab_size,
        );
        json!({
            "id": probe["id"],
            "text": text,
            "embedding": embed_tokens(&ids, config.native_dimensions),
            "tokens": ids.len(),
            "query_embedding": embed_tokens(&query, config.native_dimensions),
            "query_tokens": query.len(),
            "ids": ids,
        })
    });
    json_lines(std::iter::once(header).chain(lines))
}

/// The rerank cases of a persona's known answers: the canonical case RRQ-006 ranks by,
/// the same documents shuffled, and copies of one document (ties the library scores alike).
fn rerank_cases() -> Vec<(&'static str, String, Vec<String>)> {
    let canonical: Vec<String> = RERANK_DOCUMENTS.iter().map(|d| d.to_string()).collect();
    let mut shuffled = canonical.clone();
    shuffled.reverse();
    let copies = ["Paris is in France.", "Cats sleep.", "Paris is in France."];
    vec![
        ("canonical", RERANK_QUERY.to_owned(), canonical),
        ("shuffled", RERANK_QUERY.to_owned(), shuffled),
        (
            "duplicates",
            "Where is Paris?".to_owned(),
            copies.iter().map(|d| d.to_string()).collect(),
        ),
    ]
}

/// The rerank reference file of the engine under `config`, as `lab/rerank_reference.py`
/// writes one from a cross-encoder's own library: raw logits and their sigmoid.
pub fn rerank_known_answers(config: &Config) -> String {
    let header = json!({
        "kind": "rerank",
        "model": config.model_id,
        "library": "reference-server",
        "version": env!("CARGO_PKG_VERSION"),
        "activation": "sigmoid",
        "max_length": config.max_input_tokens,
    });
    let cases = rerank_cases().into_iter().map(|(id, query, documents)| {
        json!({
            "id": id,
            "query": query,
            "raw": documents.iter().map(|d| rerank_logit(&query, d, config)).collect::<Vec<_>>(),
            "scores": documents.iter().map(|d| rerank_score(&query, d, config)).collect::<Vec<_>>(),
            "documents": documents,
        })
    });
    json_lines(std::iter::once(header).chain(cases))
}

/// The speech reference file of the engine under `config`, as `lab/speech_reference.py`
/// writes one from a Whisper's own library: the transcriber's text of the suite's clip.
pub fn speech_known_answers(config: &Config) -> String {
    let header = json!({
        "kind": "speech",
        "model": config.model_id,
        "library": "reference-server",
        "version": env!("CARGO_PKG_VERSION"),
        "language": "en",
    });
    let (file_name, sha256, text) = heard_clip();
    let case = json!({
        "id": "speech-notimestamps",
        "clip": file_name,
        "sha256": sha256,
        "mode": "notimestamps",
        "text": text,
        // The transcriber chooses words, not tokens.
        "tokens": [],
    });
    json_lines([header, case])
}

/// Values as the JSON Lines of a reference file, one a line.
fn json_lines(values: impl IntoIterator<Item = Value>) -> String {
    values
        .into_iter()
        .map(|value| format!("{value}\n"))
        .collect()
}

/// The suite's clip as every persona's transcriber hears it: its name, its digest and
/// its text, made once (synthesising the clip takes a while in a debug build, and
/// every audit of the self-tests asks).
fn heard_clip() -> &'static (&'static str, String, String) {
    static HEARD: OnceLock<(&'static str, String, String)> = OnceLock::new();
    HEARD.get_or_init(|| {
        let clip = audio::speech_wav();
        let text = transcript(clip.upload.bytes()).expect("the transcriber hears the suite's clip");
        (clip.file_name, clip.upload.digest().to_owned(), text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_probe_text_after_the_header() {
        let config = Config::default();
        let file = known_answers(&config);
        assert_eq!(file.lines().count(), PROBE_TEXTS.lines().count() + 1);
        let first: Value = serde_json::from_str(file.lines().nth(1).unwrap()).unwrap();
        assert_eq!(
            first["embedding"].as_array().unwrap().len(),
            config.native_dimensions
        );
    }

    #[test]
    fn the_rerank_file_holds_the_canonical_case_first() {
        let file = rerank_known_answers(&Config::default());
        let reference = embedcheck_core::contracts::rerank::reference::RerankReference::parse(
            &file,
            "known answers",
        )
        .unwrap();
        assert_eq!(reference.cases[0].query, RERANK_QUERY);
        assert_eq!(reference.cases.len(), 3);
        let copies = &reference.cases[2].scores;
        assert_eq!(copies[0], copies[2]);
    }
}
