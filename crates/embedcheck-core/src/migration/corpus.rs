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
//!
//! or in BEIR's layout, which BEIR and MTEB read (a document's title and text joined by
//! a space, as MTEB joins them; the queries with a relevant document in the qrels, the
//! `test` split where there are several):
//!
//! ```text
//! corpus.jsonl        {"_id": "d1", "title": "…", "text": "…"}
//! queries.jsonl       {"_id": "q1", "text": "…"}
//! qrels/test.tsv      query-id<TAB>corpus-id<TAB>score   (a score above 0 is relevant)
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

    /// Reads `documents.jsonl` and `queries.jsonl` from `dir`, or BEIR's layout where
    /// `dir` holds a `corpus.jsonl`.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        if dir.join("corpus.jsonl").is_file() {
            return beir::load(dir);
        }
        let origin = dir.display().to_string();
        Corpus::parse(
            &read(dir, "documents.jsonl")?,
            &read(dir, "queries.jsonl")?,
            &origin,
        )
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
    pub fn batches(&self) -> impl Iterator<Item = &[Document]> {
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

fn read(dir: &Path, name: &str) -> Result<String, CorpusError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|source| CorpusError::Io { path, source })
}

/// BEIR's layout: `corpus.jsonl`, `queries.jsonl` and `qrels/*.tsv`.
mod beir {
    use super::{Corpus, CorpusError, Document, Query, lines, read};
    use serde::Deserialize;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// BEIR has no language tag: BCP 47's "undetermined".
    const UNDETERMINED: &str = "und";

    #[derive(Deserialize)]
    struct BeirDocument {
        #[serde(rename = "_id")]
        id: String,
        #[serde(default)]
        title: String,
        text: String,
    }

    #[derive(Deserialize)]
    struct BeirQuery {
        #[serde(rename = "_id")]
        id: String,
        text: String,
    }

    pub(super) fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let qrels_file = qrels_file(dir)?;
        let relevant = qrels(&read(dir, &qrels_file)?)?;
        let documents = lines::<BeirDocument>("corpus.jsonl", &read(dir, "corpus.jsonl")?)?
            .into_iter()
            .map(|d| Document {
                id: d.id,
                lang: UNDETERMINED.to_owned(),
                text: format!("{} {}", d.title, d.text).trim().to_owned(),
            })
            .collect();
        let queries = lines::<BeirQuery>("queries.jsonl", &read(dir, "queries.jsonl")?)?
            .into_iter()
            .filter_map(|q| {
                Some(Query {
                    relevant: relevant.get(&q.id)?.clone(),
                    id: q.id,
                    lang: UNDETERMINED.to_owned(),
                    text: q.text,
                })
            })
            .collect();
        let corpus = Corpus {
            documents,
            queries,
            origin: format!("{} (BEIR, {qrels_file})", dir.display()),
        };
        corpus.check()?;
        Ok(corpus)
    }

    /// `qrels/test.tsv`, else the one split there is.
    fn qrels_file(dir: &Path) -> Result<String, CorpusError> {
        if dir.join("qrels/test.tsv").is_file() {
            return Ok("qrels/test.tsv".to_owned());
        }
        let mut splits: Vec<String> = std::fs::read_dir(dir.join("qrels"))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|name| name.ends_with(".tsv"))
                    .collect()
            })
            .unwrap_or_default();
        splits.sort();
        match splits.as_slice() {
            [one] => Ok(format!("qrels/{one}")),
            [] => Err(CorpusError::Invalid(
                "a BEIR corpus needs its relevance judgements, qrels/test.tsv".to_owned(),
            )),
            several => Err(CorpusError::Invalid(format!(
                "qrels/ holds {} and no test.tsv: which split to use is unclear",
                several.join(", ")
            ))),
        }
    }

    /// Each query's relevant documents (score above 0), in file order.
    fn qrels(text: &str) -> Result<BTreeMap<String, Vec<String>>, CorpusError> {
        let mut relevant: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
            if line.trim().is_empty() || (i == 0 && fields[0] == "query-id") {
                continue;
            }
            let [query, document, score] = fields[..] else {
                return Err(CorpusError::Line {
                    file: "qrels",
                    line: i + 1,
                    message: "expected query-id, corpus-id and score, tab-separated".to_owned(),
                });
            };
            let score: f64 = score.parse().map_err(|_| CorpusError::Line {
                file: "qrels",
                line: i + 1,
                message: format!("the score {score:?} is not a number"),
            })?;
            if score > 0.0 {
                relevant
                    .entry(query.to_owned())
                    .or_default()
                    .push(document.to_owned());
            }
        }
        Ok(relevant)
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

    fn beir_dir(qrels: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\": \"d1\", \"title\": \"Harbours\", \"text\": \"Boats rest at dawn.\", \"metadata\": {}}\n{\"_id\": \"d2\", \"text\": \"Cats sleep.\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\": \"q1\", \"text\": \"where do boats rest\"}\n{\"_id\": \"q2\", \"text\": \"unjudged\"}\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        for (name, text) in qrels {
            std::fs::write(dir.path().join("qrels").join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_beir_corpus_reads_with_titles_joined_and_only_judged_queries() {
        let dir = beir_dir(&[(
            "test.tsv",
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n",
        )]);
        let corpus = Corpus::load(dir.path()).unwrap();
        assert_eq!(corpus.documents[0].text, "Harbours Boats rest at dawn.");
        assert_eq!(corpus.documents[1].text, "Cats sleep.");
        assert_eq!(corpus.queries.len(), 1, "q2 has no judgement");
        assert_eq!(corpus.queries[0].relevant, ["d1"]);
        assert!(
            corpus.origin.ends_with("(BEIR, qrels/test.tsv)"),
            "{}",
            corpus.origin
        );
    }

    #[test]
    fn a_beir_corpus_without_a_clear_split_or_with_a_bad_line_is_refused() {
        let none = beir_dir(&[]);
        let err = Corpus::load(none.path()).unwrap_err().to_string();
        assert!(err.contains("qrels/test.tsv"), "{err}");
        let two = beir_dir(&[("dev.tsv", "q1\td1\t1\n"), ("train.tsv", "q1\td1\t1\n")]);
        let err = Corpus::load(two.path()).unwrap_err().to_string();
        assert!(err.contains("dev.tsv, train.tsv"), "{err}");
        let one = beir_dir(&[("dev.tsv", "q1\td1\t1\n")]);
        assert!(
            Corpus::load(one.path())
                .unwrap()
                .origin
                .ends_with("qrels/dev.tsv)")
        );
        let bad = beir_dir(&[("test.tsv", "q1 d1 1\n")]);
        let err = Corpus::load(bad.path()).unwrap_err().to_string();
        assert_eq!(
            err,
            "qrels line 1: expected query-id, corpus-id and score, tab-separated"
        );
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let docs = "{\"id\":\"d1\",\"lang\":\"en\",\"text\":\"a\"}\n{\"id\":\"d1\",\"lang\":\"en\",\"text\":\"b\"}";
        let queries = r#"{"id":"q1","lang":"en","text":"b","relevant":["d1"]}"#;
        assert!(Corpus::parse(docs, queries, "t").is_err());
    }
}
