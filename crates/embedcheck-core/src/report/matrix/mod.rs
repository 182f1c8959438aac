//! The vendor matrix: N servers audited with one seed, side by side.
//!
//! `matrix.json` is the document: each server's `report.json`, unchanged, with its
//! pass/fail counts per level. `matrix.md` and `matrix.html` are rendered from that
//! document as read back ([`Document::parse`]), never from the run's memory, so a
//! published table can be checked against the JSON it came from, byte for byte.
//!
//! ```text
//! matrix.json   {"schema_version": "1.0", "servers": [{"label": "vllm", "levels": […], "report": {…}}]}
//! matrix.md     | clause | vllm | dynamo | … |   grouped by family, a legend, summary rows
//! matrix.html   the same table, self-contained: colours, filters, evidence per cell
//! ```

pub mod html;
pub mod markdown;

use super::{ContractScore, Report, json};
use crate::agreement::{Group, Pair};
use crate::audit::ServerAudit;
use crate::migration::replay::ReplayVerdict;
use crate::migration::replay::rankings::LabelledQuality;
use crate::verdict::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of `specs/schemas/matrix.schema.json` this build writes.
/// 1.1 added `agreement`; 1.2 `contract`; 1.3 `contract.rerank`; 1.4 `corpus` per
/// server; 1.5 `contract.speech`.
pub(crate) const MATRIX_SCHEMA_VERSION: &str = "1.5";

/// The levels, in the order every view shows them.
pub(crate) const LEVELS: [&str; 3] = ["MUST", "SHOULD", "MAY"];

/// `matrix.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Document {
    pub schema_version: String,
    pub tool: ToolRef,
    pub seed: u64,
    pub strict: bool,
    /// The contract the servers were audited and scored against (schema 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<ContractScore>,
    /// How the document was produced, when the user said (the published table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
    pub servers: Vec<Server>,
    /// The servers of one model compared on the probe texts (schema 1.1), one group
    /// per model served by two servers or more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agreement: Vec<Group>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolRef {
    pub name: String,
    pub version: String,
}

/// One column: a server's label, its counts and its whole report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Server {
    pub label: String,
    /// Why the server could not be audited (a column of "not audited"), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_audited: Option<String>,
    pub levels: Vec<LevelCounts>,
    /// What its vectors do on the user's corpus, with `--corpus` or `--baseline DIR`
    /// (schema 1.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<CorpusResult>,
    /// The server's `report.json`, as a single audit writes it.
    pub report: Value,
}

/// One server on the user's corpus: its retrieval quality on the corpus's labels and,
/// against a recorded baseline, the replay's verdict and lowest cosine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CorpusResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<LabelledQuality>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySummary>,
    /// Why the corpus could not be embedded, if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// With `--load`: the study's load on this server alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// Why `--load` was asked for and not measured, if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_not_measured: Option<String>,
}

/// The study's load on one server, as a matrix cell shows it: the medians over the
/// runs of each phase.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub documents_per_request: usize,
    pub sequential_p50_ms: f64,
    pub sequential_p99_ms: f64,
    pub concurrency: usize,
    pub concurrent_p50_ms: f64,
    pub concurrent_p99_ms: f64,
    pub concurrent_docs_per_second: f64,
    pub errors: usize,
}

impl LatencySummary {
    pub fn of(
        latency: &crate::migration::latency::ServerLatency,
        concurrency: usize,
        documents_per_request: usize,
    ) -> LatencySummary {
        let (seq, con) = (&latency.sequential, &latency.concurrent);
        LatencySummary {
            documents_per_request,
            sequential_p50_ms: seq.p50_ms,
            sequential_p99_ms: seq.p99_ms,
            concurrency,
            concurrent_p50_ms: con.p50_ms,
            concurrent_p99_ms: con.p99_ms,
            concurrent_docs_per_second: con.docs_per_second,
            errors: seq.errors + con.errors,
        }
    }

    /// `p50 12.3 ms sequential, 40.1 ms at 4 concurrent (250 documents/s)`.
    pub fn cell(&self) -> String {
        let errors = match self.errors {
            0 => String::new(),
            n => format!(", {n} errors"),
        };
        format!(
            "p50 {:.1} ms sequential, {:.1} ms at {} concurrent ({:.0} documents/s){errors}",
            self.sequential_p50_ms,
            self.concurrent_p50_ms,
            self.concurrency,
            self.concurrent_docs_per_second
        )
    }
}

/// The replay against a recorded baseline, as a matrix cell shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReplaySummary {
    pub verdict: ReplayVerdict,
    pub cosine_min: Option<f64>,
    pub reason: String,
}

impl ReplaySummary {
    pub fn of(replay: &crate::migration::replay::Replay) -> ReplaySummary {
        ReplaySummary {
            verdict: replay.verdict,
            cosine_min: replay.cosine_min,
            reason: replay.reason.clone(),
        }
    }
}

/// Outcomes of one level's clauses on one server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LevelCounts {
    pub level: String,
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub inconclusive: usize,
}

/// What the views read of one result in a server's report.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Cell {
    pub id: String,
    pub family: String,
    pub level: String,
    pub title: String,
    pub statement: String,
    pub outcome: String,
    pub reason: String,
    pub gate: String,
    /// The level and its evidence on one line (schema 1.13; absent before).
    #[serde(default)]
    pub level_line: Option<String>,
    #[serde(default)]
    pub curl: Option<String>,
    #[serde(default)]
    pub evidence: Vec<Value>,
}

/// A client profile as the views read it from a server's report.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Profile {
    pub client: String,
    /// The client's version the profile was written for.
    #[serde(default)]
    pub version: String,
    /// `None` (JSON `null`) when the deciding requests got no answer.
    pub works: Option<bool>,
    #[serde(default)]
    pub because: Vec<String>,
}

/// One row: a clause and its cell on every server (`None`: not run there).
pub(crate) struct Row {
    pub id: String,
    pub family: String,
    pub level: String,
    pub title: String,
    pub statement: String,
    pub cells: Vec<Option<Cell>>,
}

impl Row {
    /// Whether the servers that ran the clause disagree on its outcome.
    pub(crate) fn differs(&self) -> bool {
        let mut outcomes = self.cells.iter().flatten().map(|c| c.outcome.as_str());
        let first = outcomes.next();
        outcomes.any(|o| Some(o) != first)
    }
}

impl Document {
    /// The matrix of a run's servers, each as its own single-server report.
    pub fn of(report: &Report, provenance: Option<String>) -> Document {
        let servers = report
            .servers
            .iter()
            .map(|audit| server(report, audit))
            .collect();
        Document {
            schema_version: MATRIX_SCHEMA_VERSION.to_owned(),
            tool: ToolRef {
                name: report.tool.name.to_owned(),
                version: report.tool.version.to_owned(),
            },
            seed: report.seed,
            strict: report.strict,
            contract: Some(report.contract.clone()),
            provenance,
            servers,
            agreement: Vec::new(),
        }
    }

    /// `, contract 1.2` for the views' first line; nothing for a document written
    /// before schema 1.2.
    pub(crate) fn contract_words(&self) -> String {
        self.contract
            .as_ref()
            .map(|c| format!(", {}", c.line()))
            .unwrap_or_default()
    }

    /// The document with the cross-server comparison of the probe texts.
    pub fn with_agreement(self, agreement: Vec<Group>) -> Document {
        Document { agreement, ..self }
    }

    /// The document with each server's results on the corpus, in server order.
    pub fn with_corpus(mut self, results: Vec<Option<CorpusResult>>) -> Document {
        for (server, result) in self.servers.iter_mut().zip(results) {
            server.corpus = result;
        }
        self
    }

    /// The rows every view shows under the clients: each contract's that adds one
    /// (the rerank dialect each server speaks, where any serves rerank), then the rows
    /// on the user's corpus.
    pub(crate) fn summary_rows(&self) -> Vec<(&'static str, Vec<String>)> {
        let reports: Vec<&Value> = self.servers.iter().map(|s| &s.report).collect();
        let mut rows = crate::contracts::matrix_rows(&reports);
        rows.extend(self.corpus_rows());
        rows
    }

    /// The rows every view shows on the user's corpus, each a name and a cell per
    /// server, where any server has a result: nDCG@10 with its interval (the servers
    /// the labels cannot tell from the best marked as its group), and the replay
    /// against the recording when there is one.
    pub(crate) fn corpus_rows(&self) -> Vec<(&'static str, Vec<String>)> {
        let results: Vec<Option<&CorpusResult>> =
            self.servers.iter().map(|s| s.corpus.as_ref()).collect();
        if results.iter().all(Option::is_none) {
            return Vec::new();
        }
        let group = self.best_quality_group();
        let quality = results
            .iter()
            .zip(&group)
            .map(|(r, &best)| match (r.and_then(|r| r.quality), r) {
                (Some(q), _) => format!(
                    "{:.3} ({:.3}–{:.3}) over {} queries{}",
                    q.metrics.ndcg_10,
                    q.ndcg_interval.0,
                    q.ndcg_interval.1,
                    q.queries,
                    if best { ", best group" } else { "" }
                ),
                (None, Some(r)) => r
                    .not_measured
                    .clone()
                    .unwrap_or_else(|| "no judged queries".to_owned()),
                (None, None) => "—".to_owned(),
            })
            .collect();
        let mut rows = vec![("nDCG@10 on the corpus's labels (95 % interval)", quality)];
        if results
            .iter()
            .flatten()
            .any(|r| r.latency.is_some() || r.latency_not_measured.is_some())
        {
            let latency = results
                .iter()
                .map(|r| match r {
                    Some(r) => r.latency.map(|l| l.cell()).unwrap_or_else(|| {
                        r.latency_not_measured
                            .clone()
                            .unwrap_or_else(|| "—".to_owned())
                    }),
                    None => "—".to_owned(),
                })
                .collect();
            rows.push(("latency under the study's load, each server alone", latency));
        }
        if results.iter().flatten().any(|r| r.replay.is_some()) {
            let replays = results
                .iter()
                .map(|r| match r.and_then(|r| r.replay.as_ref()) {
                    Some(replay) => match replay.cosine_min {
                        Some(c) => format!("{}, lowest cosine {c:.4}", replay.verdict),
                        None => replay.verdict.to_string(),
                    },
                    None => "—".to_owned(),
                })
                .collect();
            rows.push(("against the recorded baseline", replays));
        }
        rows
    }

    /// Per server, whether its labelled quality cannot be told apart from the best
    /// one's (its nDCG@10 interval overlaps the best's): one group, shown as such.
    pub(crate) fn best_quality_group(&self) -> Vec<bool> {
        let quality = |s: &Server| s.corpus.as_ref().and_then(|c| c.quality);
        let best = self
            .servers
            .iter()
            .filter_map(quality)
            .max_by(|a, b| a.metrics.ndcg_10.total_cmp(&b.metrics.ndcg_10));
        self.servers
            .iter()
            .map(|s| match (quality(s), best) {
                (Some(q), Some(best)) => q.overlaps(&best),
                _ => false,
            })
            .collect()
    }

    /// Reads a written `matrix.json` back.
    pub fn parse(text: &str) -> Result<Document, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Pretty-printed, newline-terminated.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Every profiled client (in the first server's order), with each server's profile.
    pub(crate) fn clients(&self) -> Vec<(String, Vec<Option<Profile>>)> {
        let per_server: Vec<Vec<Profile>> = self.servers.iter().map(Server::profiles).collect();
        let mut names: Vec<String> = Vec::new();
        for p in per_server.iter().flatten() {
            if !names.contains(&p.client) {
                names.push(p.client.clone());
            }
        }
        names
            .into_iter()
            .map(|name| {
                let cells = per_server
                    .iter()
                    .map(|column| column.iter().find(|p| p.client == name).cloned())
                    .collect();
                (name, cells)
            })
            .collect()
    }

    pub(crate) fn labels(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.label.as_str()).collect()
    }

    /// Every clause any server ran, in catalogue order (the first server that ran it
    /// decides where), with each server's cell.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let cells: Vec<Vec<Cell>> = self.servers.iter().map(Server::cells).collect();
        let mut rows: Vec<Row> = Vec::new();
        for cell in cells.iter().flatten() {
            if rows.iter().any(|r| r.id == cell.id) {
                continue;
            }
            rows.push(Row {
                id: cell.id.clone(),
                family: cell.family.clone(),
                level: cell.level.clone(),
                title: cell.title.clone(),
                statement: cell.statement.clone(),
                cells: cells
                    .iter()
                    .map(|column| column.iter().find(|c| c.id == cell.id).cloned())
                    .collect(),
            });
        }
        let order = crate::catalogue::Catalogue::shipped();
        let position = |id: &str| order.clauses.iter().position(|c| c.id == id);
        rows.sort_by_key(|r| position(&r.id).unwrap_or(usize::MAX));
        rows
    }
}

/// The square table of a group's pairs, as both views show it: one row and one column
/// per server, each cell `lowest (text) · median` (or `—` on the diagonal and where
/// the two shared no text).
pub(crate) fn agreement_table(group: &Group) -> Vec<Vec<String>> {
    group
        .servers
        .iter()
        .map(|a| {
            group
                .servers
                .iter()
                .map(|b| {
                    pair_of(group, a, b).map_or("—".to_owned(), |p| {
                        format!(
                            "{:.4} ({}) · {:.4}",
                            p.lowest.cosine, p.lowest.text, p.median
                        )
                    })
                })
                .collect()
        })
        .collect()
}

/// The pair of servers `a` and `b` in either order, if they shared a text.
pub(crate) fn pair_of<'g>(group: &'g Group, a: &str, b: &str) -> Option<&'g Pair> {
    group
        .pairs
        .iter()
        .find(|p| (p.a == a && p.b == b) || (p.a == b && p.b == a))
}

/// What a group's table shows, in one sentence.
pub(crate) fn agreement_caption(group: &Group) -> String {
    format!(
        "{} servers serve {}: the cosine between their vectors of the {} probe texts both embedded, lowest (its text) · median; vectors of one text agree at {} or more.",
        group.servers.len(),
        group.model,
        group.texts,
        group.threshold
    )
}

impl Server {
    /// Its report's results, as the views read them.
    pub(crate) fn cells(&self) -> Vec<Cell> {
        self.report
            .get("results")
            .and_then(|r| serde_json::from_value(r.clone()).ok())
            .unwrap_or_default()
    }

    /// Its clients' profiles, as the views read them.
    pub(crate) fn profiles(&self) -> Vec<Profile> {
        self.report
            .get("clients")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default()
    }
}

fn server(report: &Report, audit: &ServerAudit) -> Server {
    let single = report.single(audit);
    let not_audited = audit.aborted.clone().filter(|_| {
        audit
            .results
            .iter()
            .all(|r| r.outcome != Outcome::Pass && r.outcome != Outcome::Fail)
    });
    Server {
        label: audit.label.clone(),
        not_audited,
        levels: levels(audit),
        corpus: None,
        report: serde_json::from_str(&json::render(&single)).unwrap_or(Value::Null),
    }
}

fn levels(audit: &ServerAudit) -> Vec<LevelCounts> {
    LEVELS
        .iter()
        .map(|&level| {
            let mut counts = LevelCounts {
                level: level.to_owned(),
                ..LevelCounts::default()
            };
            for r in audit
                .results
                .iter()
                .filter(|r| r.level.to_string() == level)
            {
                match r.outcome {
                    Outcome::Pass => counts.pass += 1,
                    Outcome::Fail => counts.fail += 1,
                    Outcome::Skip => counts.skip += 1,
                    Outcome::Inconclusive => counts.inconclusive += 1,
                }
            }
            counts
        })
        .collect()
}

/// The short word of an outcome in a cell, with the gate where it matters.
pub(crate) fn cell_word(cell: &Cell) -> &'static str {
    match (cell.outcome.as_str(), cell.gate.as_str()) {
        ("fail", "known_failure") => "known",
        ("fail", "tolerated") => "fail*",
        ("fail", _) => "FAIL",
        ("pass", _) => "pass",
        ("skip", _) => "skip",
        _ => "?",
    }
}

/// The style class of a cell word, for every page that colours outcomes.
pub(crate) fn class_of(word: &str) -> &'static str {
    match word {
        "pass" => "pass",
        "FAIL" => "fail",
        "fail*" => "tolerated",
        "known" => "known",
        "skip" => "skip",
        _ => "inconclusive",
    }
}

/// What each cell word means, for both views' legends.
pub(crate) const LEGEND: [(&str, &str); 6] = [
    ("pass", "the server keeps the clause"),
    (
        "FAIL",
        "fails the run (a MUST clause, or any with --strict)",
    ),
    (
        "fail*",
        "a SHOULD or MAY failure, tolerated without --strict",
    ),
    (
        "known",
        "a failure the server's known-failures file expects",
    ),
    ("skip", "not applicable, with the reason in the report"),
    ("?", "inconclusive: no verdict could be had"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn a_written_matrix_reads_back_unchanged() {
        let report = sample::report();
        let document = Document::of(&report, None);
        let back = Document::parse(&document.render()).unwrap();
        assert_eq!(back, document);
        assert_eq!(back.rows().len(), report.servers[0].results.len());
    }

    #[test]
    fn the_matrix_and_each_servers_report_match_their_schemas() {
        const MATRIX: &str = include_str!("../../../specs/schemas/matrix.schema.json");
        let document = Document::of(&sample::report(), Some("by a test".into()));
        let value = serde_json::to_value(&document).unwrap();
        let problems = crate::schemas::full::problems(MATRIX, &value);
        assert!(problems.is_empty(), "{problems:#?}");
        for server in &document.servers {
            let problems = crate::schemas::full::problems(
                crate::schemas::Schemas::report_schema_text(),
                &server.report,
            );
            assert!(problems.is_empty(), "{problems:#?}");
        }
    }

    fn quality(ndcg: f64, interval: (f64, f64)) -> Option<LabelledQuality> {
        Some(LabelledQuality {
            queries: 120,
            metrics: crate::migration::replay::rankings::Metrics {
                ndcg_10: ndcg,
                recall_10: 0.5,
                recall_100: 1.0,
                mrr_10: 0.4,
            },
            ndcg_interval: interval,
        })
    }

    /// Servers' corpus results are part of the document, match the schema, read back
    /// unchanged; the servers whose interval overlaps the best one's form its group.
    #[test]
    fn corpus_results_read_back_and_group_by_overlapping_intervals() {
        const MATRIX: &str = include_str!("../../../specs/schemas/matrix.schema.json");
        let mut report = sample::report();
        let second = report.servers[0].clone();
        report.servers.push(second.clone());
        report.servers.push(second);
        let results = vec![
            Some(CorpusResult {
                quality: quality(0.62, (0.55, 0.69)),
                replay: Some(ReplaySummary {
                    verdict: ReplayVerdict::Identical,
                    cosine_min: Some(1.0),
                    reason: "all identical".into(),
                }),
                ..CorpusResult::default()
            }),
            Some(CorpusResult {
                quality: quality(0.58, (0.50, 0.66)),
                ..CorpusResult::default()
            }),
            Some(CorpusResult {
                quality: quality(0.30, (0.22, 0.38)),
                latency: Some(LatencySummary {
                    documents_per_request: 8,
                    sequential_p50_ms: 12.34,
                    sequential_p99_ms: 20.0,
                    concurrency: 4,
                    concurrent_p50_ms: 40.12,
                    concurrent_p99_ms: 60.0,
                    concurrent_docs_per_second: 250.4,
                    errors: 0,
                }),
                ..CorpusResult::default()
            }),
        ];
        let document = Document::of(&report, None).with_corpus(results);
        let value = serde_json::to_value(&document).unwrap();
        let problems = crate::schemas::full::problems(MATRIX, &value);
        assert!(problems.is_empty(), "{problems:#?}");
        let back = Document::parse(&document.render()).unwrap();
        assert_eq!(back, document);
        assert_eq!(back.best_quality_group(), vec![true, true, false]);
        let md = markdown::render(&back);
        assert!(
            md.contains("0.620 (0.550–0.690) over 120 queries, best group |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| — | — | p50 12.3 ms sequential, 40.1 ms at 4 concurrent (250 documents/s) |"
            ),
            "{md}"
        );
        let page = html::render(&back);
        assert!(
            page.contains("0.300 (0.220–0.380) over 120 queries</td>"),
            "{page}"
        );
        assert!(
            md.contains(
                "| against the recorded baseline | identical, lowest cosine 1.0000 | — | — |"
            ),
            "{md}"
        );
    }

    /// A profile whose requests got no answer (`works: null`) is "unknown" in both
    /// views, and the server's other profiles still show.
    #[test]
    fn an_unknown_client_profile_keeps_the_servers_others() {
        let mut report = sample::report();
        report.servers[0].clients[1].works = None;
        let document = Document::parse(&Document::of(&report, None).render()).unwrap();
        let clients = document.clients();
        assert_eq!(clients.len(), 3, "every profile read back");
        assert!(clients.iter().all(|(_, cells)| cells[0].is_some()));
        let (md, page) = (markdown::render(&document), html::render(&document));
        assert!(md.contains("| unknown |"), "{md}");
        assert!(page.contains("<summary>unknown</summary>"));
    }

    #[test]
    fn both_views_show_every_server_and_clause() {
        let report = sample::report();
        let document = Document::of(&report, None);
        let (md, page) = (markdown::render(&document), html::render(&document));
        for result in &report.servers[0].results {
            assert!(
                md.contains(&result.id) && page.contains(&result.id),
                "{}",
                result.id
            );
        }
        assert!(page.contains(&report.servers[0].label));
        for loads in ["src=", "<link", "url(", "@import", "href="] {
            assert!(!page.contains(loads), "the page must load nothing: {loads}");
        }
    }

    /// The published tables of real servers (the embeddings servers' of each lab model,
    /// the tiny Qwen3-Embedding's under `qwen3-embedding-tiny/`, the rerank servers'
    /// under `rerank/` and the speech servers' under `speech/`) cannot drift from their data: each one's Markdown and
    /// HTML are exactly what its JSON renders to. After a change to the views, run this
    /// test with `EMBEDCHECK_RENDER_PUBLISHED=1` to render them again from the JSON
    /// (the data stays as the lab measured it).
    #[test]
    fn the_published_compatibility_tables_are_what_their_json_renders_to() {
        const TABLES: [(&str, &str, &str, &str); 4] = [
            (
                "",
                include_str!("../../../../../docs/compatibility/matrix.json"),
                include_str!("../../../../../docs/compatibility/matrix.md"),
                include_str!("../../../../../docs/compatibility/matrix.html"),
            ),
            (
                "qwen3-embedding-tiny",
                include_str!("../../../../../docs/compatibility/qwen3-embedding-tiny/matrix.json"),
                include_str!("../../../../../docs/compatibility/qwen3-embedding-tiny/matrix.md"),
                include_str!("../../../../../docs/compatibility/qwen3-embedding-tiny/matrix.html"),
            ),
            (
                "rerank",
                include_str!("../../../../../docs/compatibility/rerank/matrix.json"),
                include_str!("../../../../../docs/compatibility/rerank/matrix.md"),
                include_str!("../../../../../docs/compatibility/rerank/matrix.html"),
            ),
            (
                "speech",
                include_str!("../../../../../docs/compatibility/speech/matrix.json"),
                include_str!("../../../../../docs/compatibility/speech/matrix.md"),
                include_str!("../../../../../docs/compatibility/speech/matrix.html"),
            ),
        ];
        for (sub, json, md, page) in TABLES {
            let document = Document::parse(json).expect("the published matrix.json parses");
            assert_eq!(
                document.render(),
                json,
                "{sub}/matrix.json is not in this build's form"
            );
            if std::env::var_os("EMBEDCHECK_RENDER_PUBLISHED").is_some() {
                let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../docs/compatibility")
                    .join(sub);
                std::fs::write(dir.join("matrix.md"), markdown::render(&document)).unwrap();
                std::fs::write(dir.join("matrix.html"), html::render(&document)).unwrap();
                continue;
            }
            assert!(
                markdown::render(&document) == md,
                "{sub}/matrix.md differs from its JSON: run lab/matrix.sh (lab/rerank/matrix.sh), or this test with EMBEDCHECK_RENDER_PUBLISHED=1"
            );
            assert!(
                html::render(&document) == page,
                "{sub}/matrix.html differs from its JSON: run this test with EMBEDCHECK_RENDER_PUBLISHED=1"
            );
        }
    }
}
