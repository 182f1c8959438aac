//! The fixture corpus of a migration audit: documents to index and queries with the
//! documents relevant to them, as JSON Lines.
//!
//! The shipped corpus (`fixtures/corpus/`) is compiled in, so the installed command
//! needs no files; `--corpus DIR` reads another with the same two files:
//!
//! ```text
//! documents.jsonl  {"id": "en-01", "lang": "en", "text": "…"}
//! queries.jsonl    {"id": "q-01", "lang": "ko", "text": "…", "relevant": ["ko-03"]}
//! ```

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Documents per request: the study's client sent its corpus in batches of 8, and
/// latency figures are only comparable at the batch size real clients use.
pub const BATCH_SIZE: usize = 8;

const SHIPPED_DOCUMENTS: &str = include_str!("../../fixtures/corpus/documents.jsonl");
const SHIPPED_QUERIES: &str = include_str!("../../fixtures/corpus/queries.jsonl");

/// One document of the index.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub id: String,
    pub lang: String,
    pub text: String,
}

/// One query and the ids of the documents that answer it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Query {
    pub id: String,
    pub lang: String,
    pub text: String,
    pub relevant: Vec<String>,
}

/// Documents and queries, checked to refer to each other consistently.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub documents: Vec<Document>,
    pub queries: Vec<Query>,
    /// Where the corpus came from, as reports show it.
    pub origin: String,
}

/// What a report says about the corpus used.
#[derive(Clone, Debug, Serialize)]
pub struct CorpusSummary {
    pub origin: String,
    pub documents: usize,
    pub queries: usize,
    /// Documents per language tag.
    pub languages: BTreeMap<String, usize>,
    pub batch_size: usize,
}

/// Why a corpus cannot be used.
#[derive(Debug, Error)]
pub enum CorpusError {
    #[error("failed to read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file} line {line}: {message}")]
    Line {
        file: &'static str,
        line: usize,
        message: String,
    },
    #[error("invalid corpus: {0}")]
    Invalid(String),
}

impl Corpus {
    /// The corpus in `fixtures/corpus/`, compiled in.
    pub fn shipped() -> Corpus {
        // A self-test parses the same text, so this cannot fail in a released build.
        Corpus::parse(
            SHIPPED_DOCUMENTS,
            SHIPPED_QUERIES,
            "fixtures/corpus (shipped)",
        )
        .expect("the shipped corpus is valid")
    }

    /// Reads `documents.jsonl` and `queries.jsonl` from `dir`.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| CorpusError::Io { path, source })
        };
        let origin = dir.display().to_string();
        Corpus::parse(&read("documents.jsonl")?, &read("queries.jsonl")?, &origin)
    }

    /// Parses both files and checks ids: unique, and every relevant id a document.
    pub fn parse(documents: &str, queries: &str, origin: &str) -> Result<Corpus, CorpusError> {
        let corpus = Corpus {
            documents: lines("documents.jsonl", documents)?,
            queries: lines("queries.jsonl", queries)?,
            origin: origin.to_owned(),
        };
        corpus.check()?;
        Ok(corpus)
    }

    fn check(&self) -> Result<(), CorpusError> {
        if self.documents.is_empty() || self.queries.is_empty() {
            return Err(CorpusError::Invalid(
                "needs at least one document and one query".to_owned(),
            ));
        }
        let ids = unique_ids(self.documents.iter().map(|d| d.id.as_str()))?;
        unique_ids(self.queries.iter().map(|q| q.id.as_str()))?;
        for query in &self.queries {
            if query.relevant.is_empty() {
                return Err(CorpusError::Invalid(format!(
                    "query {} names no relevant document",
                    query.id
                )));
            }
            if let Some(unknown) = query.relevant.iter().find(|r| !ids.contains(r.as_str())) {
                return Err(CorpusError::Invalid(format!(
                    "query {} names unknown document {unknown}",
                    query.id
                )));
            }
        }
        Ok(())
    }

    /// The documents in request-sized batches, in corpus order.
    pub(crate) fn batches(&self) -> impl Iterator<Item = &[Document]> {
        self.documents.chunks(BATCH_SIZE)
    }

    pub(crate) fn summary(&self) -> CorpusSummary {
        let mut languages = BTreeMap::new();
        for document in &self.documents {
            *languages.entry(document.lang.clone()).or_insert(0) += 1;
        }
        CorpusSummary {
            origin: self.origin.clone(),
            documents: self.documents.len(),
            queries: self.queries.len(),
            languages,
            batch_size: BATCH_SIZE,
        }
    }
}

fn lines<T: for<'de> Deserialize<'de>>(
    file: &'static str,
    text: &str,
) -> Result<Vec<T>, CorpusError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| CorpusError::Line {
                file,
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

fn unique_ids<'a>(ids: impl Iterator<Item = &'a str>) -> Result<BTreeSet<&'a str>, CorpusError> {
    let mut seen = BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(CorpusError::Invalid(format!("id {id} appears twice")));
        }
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_corpus_is_large_enough_for_the_study() {
        let corpus = Corpus::shipped();
        let summary = corpus.summary();
        assert!(summary.documents >= 40, "{summary:?}");
        assert!(summary.queries >= 12, "{summary:?}");
        assert!(
            summary.languages.get("en").is_some_and(|&n| n >= 16),
            "{summary:?}"
        );
        assert!(
            summary.languages.get("ko").is_some_and(|&n| n >= 16),
            "{summary:?}"
        );
    }

    /// "About 80 tokens each", counted with the reference server's tokenizer (roughly
    /// four characters per token, like a real BPE vocabulary).
    #[test]
    fn shipped_documents_are_about_eighty_tokens() {
        let counts: Vec<usize> = Corpus::shipped()
            .documents
            .iter()
            .map(|d| reference_server::tokenize(&d.text, 50_000).len())
            .collect();
        let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
        assert!((70.0..=95.0).contains(&mean), "mean {mean}: {counts:?}");
        assert!(
            counts.iter().all(|&n| (50..=120).contains(&n)),
            "{counts:?}"
        );
    }

    #[test]
    fn batches_hold_eight_documents() {
        let corpus = Corpus::shipped();
        let sizes: Vec<usize> = corpus.batches().map(<[Document]>::len).collect();
        assert!(sizes[..sizes.len() - 1].iter().all(|&n| n == BATCH_SIZE));
        assert_eq!(sizes.iter().sum::<usize>(), corpus.documents.len());
    }

    #[test]
    fn unknown_relevant_ids_are_refused() {
        let docs = r#"{"id":"d1","lang":"en","text":"a"}"#;
        let queries = r#"{"id":"q1","lang":"en","text":"b","relevant":["d2"]}"#;
        let err = Corpus::parse(docs, queries, "test")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown document d2"), "{err}");
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let docs = "{\"id\":\"d1\",\"lang\":\"en\",\"text\":\"a\"}\n\n{\"id\":";
        let queries = r#"{"id":"q1","lang":"en","text":"b","relevant":["d1"]}"#;
        let err = Corpus::parse(docs, queries, "test")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("documents.jsonl line 3:"), "{err}");
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let docs = "{\"id\":\"d1\",\"lang\":\"en\",\"text\":\"a\"}\n{\"id\":\"d1\",\"lang\":\"en\",\"text\":\"b\"}";
        let queries = r#"{"id":"q1","lang":"en","text":"b","relevant":["d1"]}"#;
        assert!(Corpus::parse(docs, queries, "t").is_err());
    }
}
