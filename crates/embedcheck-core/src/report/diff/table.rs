//! Two published tables (`matrix.json`) side by side: each server of both, by label,
//! diffed as two runs, in one table of the cells that changed.

use super::{Change, DiffError, RunDiff, diff_reports, json, row};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// Two published tables (`matrix.json`) side by side: each server of both, by label,
/// diffed as two runs.
#[derive(Clone, Debug, Serialize)]
pub struct TableDiff {
    pub servers: Vec<(String, RunDiff)>,
    /// Servers of one table only.
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
}

/// Whether a file's JSON is a table (`matrix.json`) rather than one run's report.
pub fn is_table(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|v| v.get("servers").is_some_and(Value::is_array))
}

/// The diff of two tables' texts, server by server.
pub fn diff_tables(
    (old_text, old_path): (&str, &str),
    (new_text, new_path): (&str, &str),
) -> Result<TableDiff, DiffError> {
    let (old, new) = (json(old_text, old_path)?, json(new_text, new_path)?);
    let (old_servers, new_servers) = (servers(&old, old_path)?, servers(&new, new_path)?);
    let mut diffed = Vec::new();
    for (label, report) in &new_servers {
        if let Some((_, before)) = old_servers.iter().find(|(l, _)| l == label) {
            let shown = |path: &str| format!("{path}, server {label}");
            let run = diff_reports((before, &shown(old_path)), (report, &shown(new_path)))?;
            diffed.push((label.clone(), run));
        }
    }
    let missing = |from: &[(String, Value)], other: &[(String, Value)]| {
        from.iter()
            .filter(|(l, _)| !other.iter().any(|(o, _)| o == l))
            .map(|(l, _)| l.clone())
            .collect()
    };
    Ok(TableDiff {
        only_old: missing(&old_servers, &new_servers),
        only_new: missing(&new_servers, &old_servers),
        servers: diffed,
    })
}

/// A table's servers, each its label and report, the report naming the suite that
/// measured the table (a table carries it once for all).
fn servers(table: &Value, path: &str) -> Result<Vec<(String, Value)>, DiffError> {
    let unreadable = || DiffError::Unreadable {
        path: path.to_owned(),
        why: "not an embedcheck matrix.json (servers with label and report)".to_owned(),
    };
    let server = |s: &Value| {
        let mut report = s.get("report")?.clone();
        if let (Some(fields), Some(tool)) = (report.as_object_mut(), table.get("tool")) {
            fields.entry("tool").or_insert_with(|| tool.clone());
        }
        Some((s["label"].as_str()?.to_owned(), report))
    };
    table["servers"]
        .as_array()
        .ok_or_else(unreadable)?
        .iter()
        .map(server)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(unreadable)
}

impl TableDiff {
    /// The servers' new failures, each with its server's label.
    pub fn regressions(&self) -> impl Iterator<Item = (&str, &Change)> {
        self.servers
            .iter()
            .flat_map(|(label, run)| run.regressions().map(move |c| (label.as_str(), c)))
    }

    /// The diff as Markdown: the verdicts that moved, server by server, and the cells
    /// new to the table (clauses the suite learned), one row each.
    pub fn markdown(&self, regressions_only: bool) -> String {
        let mut out = String::from("# embedcheck diff of two tables\n\n");
        if let Some((_, first)) = self.servers.first() {
            let _ = writeln!(
                out,
                "- old: {}\n- new: {}",
                first.old.measured_with, first.new.measured_with
            );
        }
        for (which, labels) in [("old", &self.only_old), ("new", &self.only_new)] {
            if !labels.is_empty() {
                let _ = writeln!(out, "- only in the {which} table: {}", labels.join(", "));
            }
        }
        let rows: Vec<(&str, &Change)> = self
            .servers
            .iter()
            .flat_map(|(label, run)| run.changes.iter().map(move |c| (label.as_str(), c)))
            .filter(|(_, c)| !regressions_only || c.is_regression())
            .collect();
        let _ = writeln!(
            out,
            "\n{} cells changed: {} new failures of the servers.\n",
            rows.len(),
            self.regressions().count()
        );
        if rows.is_empty() {
            return out;
        }
        out.push_str(
            "| clause | server | level | old | new | behind |\n|---|---|---|---|---|---|\n",
        );
        for (label, c) in rows {
            out.push_str(&row(c, Some(label)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Behind, outcome};
    use super::*;
    use std::collections::BTreeSet;

    /// The published rerank table before and after rerank 1.1 (cut to what the diff
    /// reads: `fixtures/tables/`): the diff finds exactly the verdicts that moved which
    /// `docs/compatibility/rerank/CHANGES.md` lists, each with the clause's change
    /// behind it and none with the server's, and the cells of the clauses 1.1 added.
    #[test]
    fn the_rerank_tables_diff_is_what_their_change_list_says() {
        let old = include_str!("../../../fixtures/tables/rerank-1.0.json");
        let new = include_str!("../../../fixtures/tables/rerank-1.1.json");
        let tables = diff_tables((old, "1.0"), (new, "1.1")).unwrap();
        let mut moved = BTreeSet::new();
        let mut added = BTreeSet::new();
        for (label, run) in &tables.servers {
            for c in &run.changes {
                match c.behind {
                    Behind::ClauseAdded => {
                        added.insert(c.id.clone());
                    }
                    Behind::ClauseChanged { note: Some(_) } => {
                        let cells = (outcome(c.old.as_ref()), outcome(c.new.as_ref()));
                        moved.insert((c.id.clone(), label.clone(), cells.0, cells.1));
                    }
                    ref other => panic!("{} on {label}: {other:?}", c.id),
                }
            }
        }
        let listed = include_str!("../../../../../docs/compatibility/rerank/CHANGES.md");
        let (listed_moved, listed_added) = change_list(listed);
        assert_eq!((moved.len(), added.len()), (9, 8));
        assert_eq!(moved, listed_moved);
        assert_eq!(added, listed_added);
        assert_eq!(tables.regressions().count(), 0);
    }

    /// A moved cell: clause, server, old and new outcome as the tables write them.
    type MovedCell = (String, String, String, String);

    /// The first part of a hand-written change list: the rows of its "Verdicts that
    /// moved" table, one per clause and server, and the clauses of its "Cells that are
    /// new" table.
    fn change_list(text: &str) -> (BTreeSet<MovedCell>, BTreeSet<String>) {
        let first = text.split("\n# ").next().unwrap();
        let section = |title: &str| {
            let start = first.find(title).unwrap();
            let rows = &first[start..];
            let end = rows[title.len()..]
                .find("\n## ")
                .map_or(rows.len(), |e| e + title.len());
            rows[..end]
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| clause"))
                .map(|l| {
                    l.split(" | ")
                        .map(|c| c.trim_matches(['|', ' ']).to_owned())
                        .collect()
                })
                .collect::<Vec<Vec<String>>>()
        };
        let mut moved = BTreeSet::new();
        for row in section("## Verdicts that moved") {
            for id in row[0].split(", ") {
                for server in row[1].split(", ") {
                    moved.insert((id.into(), server.into(), row[2].clone(), row[3].clone()));
                }
            }
        }
        let added = section("## Cells that are new")
            .iter()
            .map(|row| row[0].split(' ').next().unwrap().to_owned())
            .collect();
        (moved, added)
    }
}
