//! Two runs side by side: which clause verdicts changed between an old `report.json`
//! and a new one (a server before and after an upgrade, or one server on two builds of
//! the suite), each with what changed behind it: the clause (added, re-levelled or
//! re-worded between the two contract versions) or the server (the same clause, another
//! answer). A server's CI fails on the second kind only, so a run stays green when the
//! suite learns a clause and red when the server gets worse.
//!
//! ```text
//! | clause | level | old | new | behind |
//! |---|---|---|---|---|
//! | DIM-001 `dimensions` at the native size … | MUST | pass | FAIL | the server: "…" → "500 …" |
//! ```
//!
//! Read from the reports alone (their statements and levels), so two runs of a newer
//! build than this one still compare; this build's catalogue only adds the change
//! note of a clause it knows.

use super::ContractScore;
use crate::catalogue::{Catalogue, ContractVersion};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use thiserror::Error;

/// Why two reports cannot be compared.
#[derive(Debug, Error)]
pub enum DiffError {
    #[error("{path}: {why}")]
    Unreadable { path: String, why: String },
}

/// One run as the diff names it.
#[derive(Clone, Debug, Serialize)]
pub struct RunSide {
    pub label: String,
    pub endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `embedcheck 0.1.0, contract 1.8 (rerank 1.3, speech 1.7)`.
    pub measured_with: String,
}

/// A clause's verdict in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    pub level: String,
    pub outcome: String,
    pub reason: String,
    /// What it meant for that run (`fails_run`, `tolerated`, `clear`, …).
    pub gate: String,
}

/// What changed behind a cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Behind {
    /// The clause is in the new run only: the suite learned it.
    ClauseAdded,
    /// The clause is in the old run only (another filter, or a build that dropped it).
    ClauseGone,
    /// The clause's level changed between the two contract versions.
    LevelChanged { from: String, to: String },
    /// The clause's statement changed between the two contract versions, with the
    /// catalogue's note where this build knows it.
    ClauseChanged {
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The same clause, another verdict: the server answered otherwise.
    Server,
}

/// One clause whose verdict changed.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    pub id: String,
    pub title: String,
    pub old: Option<Cell>,
    pub new: Option<Cell>,
    pub behind: Behind,
}

impl Change {
    /// A failure that fails the new run where the same clause did not fail the old
    /// one: the server got worse, not the suite stricter.
    pub fn is_regression(&self) -> bool {
        let fails = |cell: &Option<Cell>| cell.as_ref().is_some_and(|c| c.gate == "fails_run");
        self.behind == Behind::Server && fails(&self.new) && !fails(&self.old)
    }

    /// The old and the new verdict in the tables' words (`pass`, `FAIL`, `fail*`, `?`,
    /// `—` where the run has none).
    pub fn words(&self) -> (String, String) {
        (outcome(self.old.as_ref()), outcome(self.new.as_ref()))
    }

    /// What is behind the change, in words a server author can act on.
    pub fn behind_words(&self) -> String {
        behind_words(self)
    }

    /// A run-failing failure of the old run that no longer fails the new one.
    pub fn is_fix(&self) -> bool {
        let fails = |cell: &Option<Cell>| cell.as_ref().is_some_and(|c| c.gate == "fails_run");
        self.behind == Behind::Server && fails(&self.old) && !fails(&self.new)
    }
}

/// Every clause verdict that changed between two runs.
#[derive(Clone, Debug, Serialize)]
pub struct RunDiff {
    pub old: RunSide,
    pub new: RunSide,
    pub changes: Vec<Change>,
    /// Clauses in both runs with the same verdict.
    pub unchanged: usize,
    /// Of those, the failures whose reason changed: the same verdict on another answer
    /// (a pooler that fails 26 texts where 3 failed before), or in the words of a clause
    /// that changed, each with what is behind it; shown, never failing the diff. Passes
    /// are left out: their reasons carry timings and noise.
    pub still_failing: Vec<Change>,
}

/// The part of a `report.json` the diff reads.
#[derive(Deserialize)]
struct ReportFile {
    /// Absent from a table's reports, which carry it once for all.
    #[serde(default)]
    tool: Option<ToolFile>,
    contract: ContractScore,
    label: String,
    endpoint: String,
    model: Option<String>,
    results: Vec<ResultFile>,
}

#[derive(Deserialize)]
struct ToolFile {
    name: String,
    version: String,
}

#[derive(Deserialize)]
struct ResultFile {
    id: String,
    title: String,
    level: String,
    statement: String,
    outcome: String,
    reason: String,
    #[serde(default)]
    gate: Option<String>,
}

impl ResultFile {
    fn cell(&self) -> Cell {
        Cell {
            level: self.level.clone(),
            outcome: self.outcome.clone(),
            reason: self.reason.clone(),
            gate: self.gate.clone().unwrap_or_else(|| "clear".to_owned()),
        }
    }
}

impl ReportFile {
    fn of(value: &Value, path: &str) -> Result<ReportFile, DiffError> {
        ReportFile::deserialize(value).map_err(|e| DiffError::Unreadable {
            path: path.to_owned(),
            why: format!("not an embedcheck report.json ({e})"),
        })
    }

    fn side(&self) -> RunSide {
        RunSide {
            label: self.label.clone(),
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            measured_with: match &self.tool {
                Some(tool) => format!("{} {}, {}", tool.name, tool.version, self.contract.line()),
                None => self.contract.line(),
            },
        }
    }

    /// The version of the contract clause `id` belongs to in this run, where this
    /// build's catalogue knows the clause.
    fn version_of(&self, id: &str) -> Option<ContractVersion> {
        let contract = Catalogue::shipped().get(id)?.contract();
        Some(self.contract.version_of(contract))
    }
}

/// The diff of two reports' texts (`old_path` and `new_path` name them in errors).
pub fn diff(
    (old_text, old_path): (&str, &str),
    (new_text, new_path): (&str, &str),
) -> Result<RunDiff, DiffError> {
    let (old, new) = (json(old_text, old_path)?, json(new_text, new_path)?);
    diff_reports((&old, old_path), (&new, new_path))
}

/// A file's JSON, or why it is none.
fn json(text: &str, path: &str) -> Result<Value, DiffError> {
    serde_json::from_str(text).map_err(|e| DiffError::Unreadable {
        path: path.to_owned(),
        why: format!("not JSON ({e})"),
    })
}

/// The diff of two reports.
fn diff_reports(
    (old, old_path): (&Value, &str),
    (new, new_path): (&Value, &str),
) -> Result<RunDiff, DiffError> {
    let old = ReportFile::of(old, old_path)?;
    let new = ReportFile::of(new, new_path)?;
    let before: BTreeMap<&str, &ResultFile> =
        old.results.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut changes = Vec::new();
    let mut unchanged = 0;
    let mut still_failing = Vec::new();
    for now in &new.results {
        match before.get(now.id.as_str()) {
            None => changes.push(change(now, None, Some(now), Behind::ClauseAdded)),
            Some(then) if same_verdict(then, now) => {
                unchanged += 1;
                if now.outcome == "fail" && now.reason != then.reason {
                    let behind = behind(then, now, &old, &new);
                    still_failing.push(change(now, Some(then), Some(now), behind));
                }
            }
            Some(then) => {
                let behind = behind(then, now, &old, &new);
                changes.push(change(now, Some(then), Some(now), behind));
            }
        }
    }
    let now_ids: Vec<&str> = new.results.iter().map(|r| r.id.as_str()).collect();
    for then in old
        .results
        .iter()
        .filter(|r| !now_ids.contains(&r.id.as_str()))
    {
        changes.push(change(then, Some(then), None, Behind::ClauseGone));
    }
    Ok(RunDiff {
        old: old.side(),
        new: new.side(),
        changes,
        unchanged,
        still_failing,
    })
}

fn change(
    named: &ResultFile,
    old: Option<&ResultFile>,
    new: Option<&ResultFile>,
    behind: Behind,
) -> Change {
    Change {
        id: named.id.clone(),
        title: named.title.clone(),
        old: old.map(ResultFile::cell),
        new: new.map(ResultFile::cell),
        behind,
    }
}

/// The same verdict: outcome, level and what it meant for the run. Reasons carry
/// measured numbers that move from run to run, so they alone change nothing.
fn same_verdict(then: &ResultFile, now: &ResultFile) -> bool {
    (&then.outcome, &then.level, &then.gate) == (&now.outcome, &now.level, &now.gate)
}

/// What changed behind a verdict: the clause where its level or statement differs
/// between the runs, or its catalogue records a change between their contract
/// versions; else the server.
/// What is behind a cell that changed, or a failure whose reason did: the clause's
/// level, its statement or a catalogued change between the two versions, else the
/// server.
fn behind(then: &ResultFile, now: &ResultFile, old: &ReportFile, new: &ReportFile) -> Behind {
    if then.level != now.level {
        return Behind::LevelChanged {
            from: then.level.clone(),
            to: now.level.clone(),
        };
    }
    let note = catalogue_note(&now.id, old.version_of(&now.id), new.version_of(&now.id));
    if then.statement != now.statement || note.is_some() {
        return Behind::ClauseChanged { note };
    }
    Behind::Server
}

/// The catalogue's note of a verdict-changing change to clause `id` after `from` and
/// up to `to`, where this build knows the clause.
fn catalogue_note(
    id: &str,
    from: Option<ContractVersion>,
    to: Option<ContractVersion>,
) -> Option<String> {
    let (from, to) = (from?, to?);
    let clause = Catalogue::shipped().get(id)?;
    clause
        .changed
        .iter()
        .rfind(|c| c.version > from && c.version <= to)
        .map(|c| format!("contract {}: {}", c.version, c.change))
}

impl RunDiff {
    /// The changes that fail a server's CI: the server's new run-failing failures.
    pub fn regressions(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.is_regression())
    }

    /// The diff as Markdown: who was compared, the counts, and a table of the changed
    /// cells (only the regressions with `regressions_only`), each with what is behind
    /// it. It reads as well in a terminal as in a CI job's summary.
    pub fn markdown(&self, regressions_only: bool) -> String {
        let mut out = String::from("# embedcheck diff\n\n");
        for (name, side) in [("old", &self.old), ("new", &self.new)] {
            let model = side
                .model
                .as_deref()
                .map_or(String::new(), |m| format!(", model {m}"));
            let _ = writeln!(
                out,
                "- {name}: {} at {}{model} ({})",
                side.label, side.endpoint, side.measured_with
            );
        }
        let regressions = self.regressions().count();
        let fixes = self.changes.iter().filter(|c| c.is_fix()).count();
        let by_clause = self
            .changes
            .iter()
            .filter(|c| c.behind != Behind::Server)
            .count();
        let _ = writeln!(
            out,
            "\n{} verdicts changed, {} unchanged: {regressions} new failures of the server, {fixes} fixed, {by_clause} from the clauses' own changes.\n",
            self.changes.len(),
            self.unchanged
        );
        let shown: Vec<&Change> = self
            .changes
            .iter()
            .filter(|c| !regressions_only || c.is_regression())
            .collect();
        if !shown.is_empty() {
            out.push_str("| clause | level | old | new | behind |\n|---|---|---|---|---|\n");
            for c in shown {
                out.push_str(&row(c, None));
            }
        }
        if !regressions_only && !self.still_failing.is_empty() {
            out.push_str("\n## Still failing, on another answer\n\n| clause | level | old | new | behind |\n|---|---|---|---|---|\n");
            for c in &self.still_failing {
                out.push_str(&row(c, None));
            }
        }
        out
    }
}

/// One changed cell as a table row, with its server's column where the table has one.
fn row(c: &Change, server: Option<&str>) -> String {
    let level = c.new.as_ref().or(c.old.as_ref()).map_or("", |v| &v.level);
    let server = server.map_or(String::new(), |label| format!(" {label} |"));
    format!(
        "| {} {} |{server} {level} | {} | {} | {} |\n",
        c.id,
        cell_text(&c.title),
        outcome(c.old.as_ref()),
        outcome(c.new.as_ref()),
        cell_text(&behind_words(c))
    )
}

/// `pass`, `FAIL` where it fails its run, `fail*` where tolerated, `?` where
/// inconclusive, `—` where absent: the tables' own words.
fn outcome(cell: Option<&Cell>) -> String {
    match cell {
        None => "—".to_owned(),
        Some(c) if c.outcome == "inconclusive" => "?".to_owned(),
        Some(c) if c.gate == "fails_run" => c.outcome.to_uppercase(),
        Some(c) if c.outcome == "fail" => format!("{}*", c.outcome),
        Some(c) => c.outcome.clone(),
    }
}

/// What is behind a change, in words a server author can act on.
fn behind_words(c: &Change) -> String {
    let reason = |cell: &Option<Cell>| cell.as_ref().map_or("", |c| c.reason.as_str()).to_owned();
    match &c.behind {
        Behind::ClauseAdded => format!("a clause new to the suite: {}", reason(&c.new)),
        Behind::ClauseGone => "not in the new run".to_owned(),
        Behind::LevelChanged { from, to } => format!("the clause's level: {from} → {to}"),
        Behind::ClauseChanged { note: Some(note) } => format!("the clause changed ({note})"),
        Behind::ClauseChanged { note: None } => "the clause's statement changed".to_owned(),
        Behind::Server => format!(
            "the server: \"{}\" → \"{}\"",
            reason(&c.old),
            reason(&c.new)
        ),
    }
}

/// A table cell's text: one line, no column breaks.
fn cell_text(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

mod table;

pub use table::{TableDiff, diff_tables, is_table};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(id: &str, outcome: &str, gate: &str, reason: &str) -> Value {
        json!({
            "id": id, "title": format!("{id} title"), "family": "dimensions", "level": "MUST",
            "statement": format!("{id} statement"), "outcome": outcome, "reason": reason,
            "gate": gate, "evidence": []
        })
    }

    fn report(version: &str, results: Vec<Value>) -> String {
        json!({
            "schema_version": "1.13", "tool": {"name": "embedcheck", "version": "0.1.0"},
            "strict": false, "seed": 7,
            "contract": {"version": version, "rerank": {"version": "1.3"}},
            "label": "vllm", "endpoint": "http://127.0.0.1:8000/v1/embeddings",
            "model": "m", "results": results
        })
        .to_string()
    }

    fn run(old: &str, new: &str) -> RunDiff {
        diff((old, "old.json"), (new, "new.json")).unwrap()
    }

    /// A server that now fails a clause it passed is a regression; one it fixed is a
    /// fix; a reason that only moved its numbers is no change.
    #[test]
    fn the_server_getting_worse_is_a_regression_and_numbers_alone_are_no_change() {
        let old = report(
            "1.8",
            vec![
                result("DIM-001", "pass", "clear", "honoured 128"),
                result("RESP-001", "fail", "fails_run", "no usage"),
                result("IN-001", "pass", "clear", "200 in 12 ms"),
            ],
        );
        let new = report(
            "1.8",
            vec![
                result("DIM-001", "fail", "fails_run", "500 Internal Server Error"),
                result("RESP-001", "pass", "clear", "matches"),
                result("IN-001", "pass", "clear", "200 in 31 ms"),
            ],
        );
        let d = run(&old, &new);
        assert_eq!((d.changes.len(), d.unchanged), (2, 1));
        let regressions: Vec<&str> = d.regressions().map(|c| c.id.as_str()).collect();
        assert_eq!(regressions, ["DIM-001"]);
        assert!(d.changes.iter().any(|c| c.id == "RESP-001" && c.is_fix()));
        let page = d.markdown(true);
        assert!(page.contains("| DIM-001 DIM-001 title | MUST | pass | FAIL | the server: \"honoured 128\" → \"500 Internal Server Error\" |"), "{page}");
        assert!(!page.contains("RESP-001 title"), "{page}");
        assert!(page.contains("2 verdicts changed, 1 unchanged: 1 new failures of the server, 1 fixed, 0 from the clauses' own changes."), "{page}");
    }

    /// A failure that stays a failure on another answer (llama-server with the CLS
    /// pooler: REF-002 fails 26 of 26 texts where the mean pooler failed 3) is shown,
    /// and fails nothing; a pass whose reason moved is not.
    #[test]
    fn a_failure_on_another_answer_is_shown_and_fails_nothing() {
        let old = report(
            "1.8",
            vec![
                result(
                    "REF-002",
                    "fail",
                    "fails_run",
                    "3 of 26 texts below cosine 0.99",
                ),
                result("IN-001", "pass", "clear", "200 in 12 ms"),
            ],
        );
        let new = report(
            "1.8",
            vec![
                result(
                    "REF-002",
                    "fail",
                    "fails_run",
                    "26 of 26 texts below cosine 0.99",
                ),
                result("IN-001", "pass", "clear", "200 in 31 ms"),
            ],
        );
        let d = run(&old, &new);
        assert!(d.changes.is_empty());
        let ids: Vec<&str> = d.still_failing.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["REF-002"]);
        assert_eq!(d.regressions().count(), 0);
        let page = d.markdown(false);
        assert!(
            page.contains("## Still failing, on another answer"),
            "{page}"
        );
        assert!(
            page.contains("\"3 of 26 texts below cosine 0.99\" → \"26 of 26"),
            "{page}"
        );
        assert!(!d.markdown(true).contains("Still failing"));
    }

    /// A clause the suite learned, re-levelled or re-worded between the runs is the
    /// suite's change: listed with what changed, never a regression of the server.
    #[test]
    fn the_suite_learning_a_clause_is_no_regression() {
        let old = report(
            "1.7",
            vec![
                result("RESP-006", "pass", "clear", "ok"),
                result("ERR-007", "fail", "fails_run", "flat error"),
            ],
        );
        let mut relevelled = result("ERR-007", "fail", "tolerated", "flat error");
        relevelled["level"] = json!("SHOULD");
        let mut reworded = result("RESP-006", "fail", "fails_run", "not JSON");
        reworded["statement"] = json!("another statement");
        let new = report(
            "1.8",
            vec![
                reworded,
                relevelled,
                result("UNK-002", "fail", "fails_run", "500"),
            ],
        );
        let d = run(&old, &new);
        let behind: BTreeMap<&str, &Behind> = d
            .changes
            .iter()
            .map(|c| (c.id.as_str(), &c.behind))
            .collect();
        assert_eq!(behind["UNK-002"], &Behind::ClauseAdded);
        assert_eq!(
            behind["ERR-007"],
            &Behind::LevelChanged {
                from: "MUST".into(),
                to: "SHOULD".into()
            }
        );
        assert!(matches!(behind["RESP-006"], Behind::ClauseChanged { .. }));
        assert_eq!(d.regressions().count(), 0);
    }

    /// A clause whose catalogue records a verdict-changing change between the two
    /// contract versions is the clause's change even where its statement reads alike.
    #[test]
    fn a_catalogued_change_between_the_versions_is_named() {
        let old = report("1.1", vec![result("ERR-011", "pass", "clear", "ok")]);
        let new = report("1.2", vec![result("ERR-011", "fail", "fails_run", "429")]);
        let d = run(&old, &new);
        match &d.changes[0].behind {
            Behind::ClauseChanged { note: Some(note) } => {
                assert!(note.starts_with("contract 1.2: "), "{note}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(d.regressions().count(), 0);
    }

    #[test]
    fn a_file_that_is_no_report_says_which() {
        let error = diff(("{}", "a.json"), ("{}", "b.json")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("a.json: not an embedcheck report.json")
        );
    }
}
