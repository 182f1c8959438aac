//! Reports: views of one [`Report`], never a second source of truth.
//!
//! Every format renders the same records, so a verdict reads the same wherever it is
//! looked at: a compact table for the terminal ([`terminal`]), `report.json` for other
//! tools ([`json`], shaped by `specs/schemas/report.schema.json`), `report.md` for a
//! person to paste into a design doc ([`markdown`]), `junit.xml` for CI ([`junit`]) and
//! `report.html` to look at (`html`, built from the matrix page's components in
//! `page`). [`write_all`] writes the file formats side by side with a copy of the
//! schema, so a report directory describes itself:
//!
//! ```text
//! out/
//! ├── report.json         # the machine contract
//! ├── report.schema.json  # the schema report.json validates against
//! ├── report.md
//! ├── report.html         # one page: charts, the matrix column(s), report.md as text
//! └── junit.xml
//! ```

pub mod diff;
mod document;
mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub mod markdown;
pub mod matrix;
mod page;
pub mod site;
pub mod terminal;
mod text;

use crate::schemas::Schemas;
pub use document::{Comparison, ContractScore, MigrationView, Report, Tool};
use std::fs;
use std::path::{Path, PathBuf};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A directory or file could not be created or written.
    #[error("failed to write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Where [`write_all`] put each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub json: PathBuf,
    pub markdown: PathBuf,
    pub junit: PathBuf,
    pub schema: PathBuf,
    /// The report as one page: its server's matrix column, or a migration's charts
    /// and both servers side by side.
    pub html: PathBuf,
    /// The summary table and totals line the terminal printed, kept for CI logs and
    /// for the documentation's excerpts, which a test holds to it.
    pub summary: PathBuf,
}

/// Creates `dir` (and its parents) and writes every file format of `report` into it.
///
/// Existing files of the same names are replaced, so re-running into one directory
/// always leaves one consistent set rather than a mix of two runs' formats.
pub fn write_all(report: &Report, dir: &Path) -> Result<Written, ReportError> {
    fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_owned(),
        source,
    })?;
    Ok(Written {
        json: write(dir, "report.json", &json::render(report))?,
        markdown: write(dir, "report.md", &markdown::render(report))?,
        junit: write(dir, "junit.xml", &junit::render(report))?,
        schema: write(dir, "report.schema.json", Schemas::report_schema_text())?,
        html: write(dir, "report.html", &html::render(report))?,
        summary: write(dir, "summary.txt", &terminal::render(report))?,
    })
}

fn write(dir: &Path, name: &str, contents: &str) -> Result<PathBuf, ReportError> {
    let path = dir.join(name);
    fs::write(&path, contents).map_err(|source| ReportError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_all_creates_the_directory_and_every_format() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("nested");
        let written = write_all(&sample::report(), &dir).unwrap();
        for path in [
            &written.json,
            &written.markdown,
            &written.junit,
            &written.summary,
            &written.schema,
        ] {
            assert!(
                path.starts_with(&dir) && path.is_file(),
                "{}",
                path.display()
            );
        }
        let schema = fs::read_to_string(&written.schema).unwrap();
        assert_eq!(schema, Schemas::report_schema_text());
    }

    #[test]
    fn write_error_names_the_path() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("not-a-directory");
        fs::write(&file, "").unwrap();
        let error = write_all(&sample::report(), &file.join("out")).unwrap_err();
        assert!(
            error.to_string().contains(&*file.to_string_lossy()),
            "{error}"
        );
    }
}

/// A small fixed report covering every outcome, shared by the renderers' snapshots.
#[cfg(test)]
pub(crate) mod sample {
    use crate::audit::{ClauseResult, Gate, ServerAudit};
    use crate::catalogue::{Family, Level};
    use crate::contracts::embeddings::facts::{BatchLimit, EmbeddingsFacts};
    use crate::contracts::embeddings::profiles::{Call, EmbeddingsFinding};
    use crate::expectations::Expectations;
    use crate::http::{Encoding, Exchange};
    use crate::profiles::{Client, ClientProfile, Finding};
    use crate::report::{Report, Tool};
    use crate::session::ByContract;
    use crate::session::facts::{Fact, Facts, Learned};
    use crate::verdict::Outcome;

    /// Settings for snapshot assertions: explicit names, stored in the repository's
    /// top-level `snapshots/report/` where reviewers look for them.
    pub(crate) fn snapshots() -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../snapshots/report"
        ));
        settings.set_prepend_module_to_snapshot(false);
        settings
    }

    /// Four results in catalogue order: a pass, a MUST failure with two exchanges and a
    /// curl reproducer, a skip without evidence and an inconclusive with a transport error.
    pub(crate) fn report() -> Report {
        judged(vec![audit()], false)
    }

    /// A report of `servers` judged as the run does, with or without `--strict`.
    pub(crate) fn judged(servers: Vec<ServerAudit>, strict: bool) -> Report {
        judged_with(servers, &Expectations::default(), strict)
    }

    /// A report of `servers` judged against a known-failures file.
    pub(crate) fn judged_with(
        mut servers: Vec<ServerAudit>,
        expectations: &Expectations,
        strict: bool,
    ) -> Report {
        for server in &mut servers {
            server.judge(expectations, strict);
        }
        // Fixed rather than `Tool::this()`, so a version bump does not churn snapshots.
        let tool = Tool {
            name: "embedcheck",
            version: "0.0.0-sample",
        };
        Report::new(tool, strict, 42, servers, Vec::new(), false)
    }

    /// The sample's one server.
    pub(crate) fn audit() -> ServerAudit {
        let detected = |clause: &'static str, request: &str| Learned::Detected {
            clause: Some(clause),
            request: request.to_owned(),
        };
        ServerAudit {
            label: "staging | tei".to_owned(),
            endpoint: "http://127.0.0.1:8080/v1/embeddings".to_owned(),
            model: Some("bge-small-en-v1.5".to_owned()),
            results: vec![pass(), fail(), skip(), inconclusive()],
            requests_sent: 1234,
            tokens_used: 56789,
            wall_seconds: 2.125,
            facts: Facts {
                contracts: ByContract::default().with(EmbeddingsFacts {
                    native_dimension: Some(Fact {
                        value: 384,
                        learned: detected("RESP-005", r#"POST /v1/embeddings {"input":"hello"}"#),
                    }),
                    max_batch: Some(Fact {
                        value: BatchLimit::Named {
                            limit: 32,
                            refused: 64,
                            status: 413,
                        },
                        learned: detected(
                            "IN-008",
                            r#"POST /v1/embeddings {"input":["document number 0", …]}"#,
                        ),
                    }),
                    ..EmbeddingsFacts::default()
                }),
                ..Facts::default()
            },
            clients: clients(),
            aborted: None,
        }
    }

    /// One profile of each verdict: a warning, a clean pass and a break with evidence.
    fn clients() -> Vec<ClientProfile> {
        let decoded = |call| {
            Finding::from(EmbeddingsFinding::Decoded {
                call,
                encoding: Some(Encoding::Base64),
                cosine: 1.0,
                attempts: 1,
            })
        };
        let ids = exchange(
            r#"{"encoding_format":"base64","input":[[15339,1917]],"model":"bge-small-en-v1.5"}"#,
            Some(200),
            r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":"[384 floats as base64]"}]}"#,
            4,
        );
        vec![
            ClientProfile::of(
                Client::OPENAI_PYTHON,
                vec![
                    decoded(Call::One),
                    decoded(Call::Batch),
                    EmbeddingsFinding::RetryHazard {
                        clause: "ERR-011",
                        requests: 3,
                    }
                    .into(),
                ],
                Vec::new(),
            ),
            ClientProfile::of(Client::OPENAI_NODE, vec![decoded(Call::One)], Vec::new()),
            ClientProfile::of(
                Client::LANGCHAIN_OPENAI,
                vec![
                    EmbeddingsFinding::ForeignVocabulary {
                        text: "hello world",
                        ids: &[15339, 1917],
                        cosine: 0.1302,
                    }
                    .into(),
                ],
                vec![ids],
            ),
        ]
    }

    fn exchange(request: &str, status: Option<u16>, response: &str, millis: u64) -> Exchange {
        Exchange {
            method: "POST".to_owned(),
            path: "/v1/embeddings".to_owned(),
            request_body: Some(request.to_owned()),
            status,
            response_body: (!response.is_empty()).then(|| response.to_owned()),
            millis,
            transport_error: None,
            curl: format!(
                "curl -sS -i -X POST 'http://127.0.0.1:8080/v1/embeddings' -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data-binary '{request}'"
            ),
        }
    }

    fn result(
        id: &str,
        family: Family,
        level: Level,
        outcome: Outcome,
        reason: &str,
    ) -> ClauseResult {
        let level_evidence = crate::catalogue::Catalogue::shipped()
            .get(id)
            .map(|c| c.level_evidence.clone())
            .unwrap_or_default();
        ClauseResult {
            id: id.to_owned(),
            family,
            level,
            title: format!("{id} title"),
            statement: format!("The server {level} keep clause {id}."),
            level_line: level_evidence.line(level, crate::contracts::release_of),
            level_evidence,
            outcome,
            reason: reason.to_owned(),
            evidence: Vec::new(),
            curl: None,
            expectation: None,
            not_scored: None,
            gate: Gate::Clear,
        }
    }

    fn pass() -> ClauseResult {
        let mut result = result(
            "RESP-001",
            Family::named("response-shape"),
            Level::Must,
            Outcome::Pass,
            "response matches the schema",
        );
        result.evidence.push(exchange(
            r#"{"model":"bge-small-en-v1.5","input":"hello"}"#,
            Some(200),
            r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":"[384 floats]"}],"model":"bge-small-en-v1.5","usage":{"prompt_tokens":3,"total_tokens":3}}"#,
            12,
        ));
        result
    }

    fn fail() -> ClauseResult {
        let mut result = result(
            "IN-003",
            Family::named("input"),
            Level::Must,
            Outcome::Fail,
            "token-id input rejected with 422 | expected 200\nsee evidence",
        );
        result.statement = "The server MUST accept `input` as an array of token ids.".to_owned();
        result.evidence = vec![
            exchange(
                r#"{"model":"bge-small-en-v1.5","input":[101,7592,102]}"#,
                Some(422),
                "{\"error\":\"Input validation error: `inputs` must be a string\"}\n```",
                7,
            ),
            exchange(
                r#"{"model":"bge-small-en-v1.5","input":[[101,7592,102]]}"#,
                Some(422),
                r#"{"error":"Input validation error"}"#,
                5,
            ),
        ];
        result.curl = Some(result.evidence[0].curl.clone());
        result
    }

    fn skip() -> ClauseResult {
        result(
            "DIM-002",
            Family::named("dimensions"),
            Level::Should,
            Outcome::Skip,
            "the server does not support `dimensions`",
        )
    }

    fn inconclusive() -> ClauseResult {
        let mut result = result(
            "CONS-001",
            Family::named("consistency"),
            Level::Should,
            Outcome::Inconclusive,
            "no answer within the 30 s timeout",
        );
        let mut timed_out = exchange(r#"{"input":"hello"}"#, None, "", 30000);
        timed_out.transport_error = Some("timed out after 30 s".to_owned());
        result.evidence.push(timed_out);
        result
    }
}
