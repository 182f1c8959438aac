//! The reranker's own scores, which the `rerank-scores` family holds a server's scores
//! against (`--rerank-reference FILE`), and the canonical case every rerank clause
//! sends.

use crate::reference::{JsonLines, ReferenceError, read};
use serde::Deserialize;
use std::path::Path;

/// The rerank contract's canonical query: a question with one clear answer.
pub const RERANK_QUERY: &str = "What is the capital of France?";

/// The canonical documents: the second answers [`RERANK_QUERY`] (it shares its words),
/// the other four do not. A rerank reference file holding this case tells RRQ-006 which
/// document the model itself ranks first.
pub const RERANK_DOCUMENTS: [&str; 5] = [
    "Berlin is the largest city in Germany.",
    "The capital of France is Paris.",
    "Bananas are rich in potassium.",
    "The Eiffel Tower was completed in 1889.",
    "Cats sleep for most of the day.",
];

/// A reranker's known answers: what the model's own library (sentence-transformers'
/// `CrossEncoder`, as `lab/rerank_reference.py` writes it) scores for each case of a
/// query and its documents, raw and with the activation.
///
/// ```text
/// {"kind": "rerank", "model": "embedcheck/tiny-rerank-bert", "library": "sentence-transformers", "version": "3.4.1", "activation": "sigmoid", "max_length": 512}
/// {"id": "en-basic", "query": "…", "documents": ["…", …], "raw": [0.32, …], "scores": [0.58, …]}
/// ```
///
/// Other keys (notes, token counts, the library's ranking) are kept by the writer for
/// people and are not read.
#[derive(Clone, Debug, PartialEq)]
pub struct RerankReference {
    pub header: RerankHeader,
    pub cases: Vec<RerankCase>,
    /// Where it was read from, as reports show it.
    pub origin: String,
}

/// The header of a rerank reference file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct RerankHeader {
    pub kind: String,
    pub model: String,
    pub library: String,
    pub version: String,
    /// The activation the library applies to the raw logit (`sigmoid` for one label).
    #[serde(default)]
    pub activation: Option<String>,
    /// The longest (query, document) pair the model reads, in tokens.
    #[serde(default)]
    pub max_length: Option<u64>,
}

/// One case: a query, its documents, and the library's score for each.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct RerankCase {
    pub id: String,
    pub query: String,
    pub documents: Vec<String>,
    /// The classifier's raw logits.
    pub raw: Vec<f64>,
    /// The library's scores: the activation of `raw`.
    pub scores: Vec<f64>,
    /// Which pairs the library truncated to fit `max_length`.
    #[serde(default)]
    pub truncated: Option<Vec<bool>>,
}

impl RerankReference {
    /// Reads a rerank reference file.
    pub fn load(path: &Path) -> Result<RerankReference, ReferenceError> {
        let text = read(path)?;
        RerankReference::parse(&text, &path.display().to_string())
    }

    /// Parses the JSON Lines of a rerank reference file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<RerankReference, ReferenceError> {
        let lines = JsonLines::of(text, origin);
        let (header, cases) = lines.read::<RerankHeader, RerankCase>(
            "a rerank header {kind, model, library, version}",
            "a case {id, query, documents, raw, scores}",
        )?;
        lines.expect_kind(&header.kind, "rerank")?;
        for (n, case) in &cases {
            let count = case.documents.len();
            if count == 0 || case.raw.len() != count || case.scores.len() != count {
                return Err(lines.bad(
                    *n,
                    format!(
                        "{} documents, {} raw and {} scores: one of each per document",
                        count,
                        case.raw.len(),
                        case.scores.len()
                    ),
                ));
            }
        }
        Ok(RerankReference {
            header,
            cases: cases.into_iter().map(|(_, case)| case).collect(),
            origin: origin.to_owned(),
        })
    }

    /// Who made the scores, as reasons name it: `sentence-transformers 3.4.1`.
    pub fn made_by(&self) -> String {
        let RerankHeader {
            library, version, ..
        } = &self.header;
        format!("{library} {version}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab's reranker files parse, each case with a score per document.
    #[test]
    fn the_lab_rerank_reference_files_parse() {
        for file in ["tiny-rerank-bert.jsonl", "tiny-rerank-roberta.jsonl"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/reference")
                .join(file);
            let reference = RerankReference::load(&path).unwrap();
            assert_eq!(reference.header.activation.as_deref(), Some("sigmoid"));
            assert!(reference.cases.len() > 10);
        }
        let embeddings = "{\"model\": \"m\", \"library\": \"l\", \"version\": \"1\"}\n".to_owned();
        assert!(RerankReference::parse(&embeddings, "r").is_err());
    }
}
