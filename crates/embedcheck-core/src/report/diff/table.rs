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

/// The head of a table of cells, with the server's column.
const HEADER: &str =
    "| clause | server | level | old | new | behind |\n|---|---|---|---|---|---|\n";

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
        if !rows.is_empty() {
            out.push_str(HEADER);
            for (label, c) in rows {
                out.push_str(&row(c, Some(label)));
            }
        }
        let still: Vec<(&str, &Change)> = self.still_failing().collect();
        if !regressions_only && !still.is_empty() {
            out.push_str("\n## Still failing, on another answer\n\n");
            out.push_str(HEADER);
            for (label, c) in still {
                out.push_str(&row(c, Some(label)));
            }
        }
        out
    }

    /// The failures that stayed failures on another answer, each with its server's
    /// label: shown, never failing the diff.
    pub fn still_failing(&self) -> impl Iterator<Item = (&str, &Change)> {
        self.servers
            .iter()
            .flat_map(|(label, run)| run.still_failing.iter().map(move |c| (label.as_str(), c)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Behind, outcome};
    use super::*;
    use std::collections::BTreeSet;

    /// The published rerank table at rerank 1.0, 1.1 (cut to what the diff reads:
    /// `fixtures/tables/`) and 1.3 (the published one): each section of
    /// `docs/compatibility/rerank/CHANGES.md` lists exactly what the diff of its two
    /// tables finds: the verdicts that moved, each with the clause's change behind it and
    /// none with the server's, the cells of the clauses added, and the failures that
    /// stayed failures on another answer.
    #[test]
    fn the_rerank_tables_diff_is_what_their_change_list_says() {
        let tables = [
            include_str!("../../../fixtures/tables/rerank-1.0.json"),
            include_str!("../../../fixtures/tables/rerank-1.1.json"),
            include_str!("../../../../../docs/compatibility/rerank/matrix.json"),
        ];
        let listed = include_str!("../../../../../docs/compatibility/rerank/CHANGES.md");
        let sections: Vec<&str> = listed.split("\n# ").collect();
        assert_eq!(sections.len(), tables.len() - 1);
        for (pair, section) in tables.windows(2).zip(&sections) {
            let diff = diff_tables((pair[0], "old"), (pair[1], "new")).unwrap();
            let found = found(&diff);
            assert_eq!(found, change_list(section), "{section}");
            assert_eq!(diff.regressions().count(), 0);
        }
    }

    /// What a diff of two tables finds, as a change list says it.
    fn found(diff: &TableDiff) -> ChangeList {
        let mut list = ChangeList::default();
        for (label, run) in &diff.servers {
            for c in &run.changes {
                match c.behind {
                    Behind::ClauseAdded => {
                        list.added.insert(c.id.clone());
                    }
                    Behind::ClauseChanged { note: Some(_) } => {
                        let cells = (outcome(c.old.as_ref()), outcome(c.new.as_ref()));
                        list.moved
                            .insert((c.id.clone(), label.clone(), cells.0, cells.1));
                    }
                    ref other => panic!("{} on {label}: {other:?}", c.id),
                }
            }
        }
        for (label, c) in diff.still_failing() {
            let word = outcome(c.new.as_ref());
            list.still.insert((c.id.clone(), label.to_owned(), word));
        }
        list
    }

    /// What a section of a hand-written change list says: its "Verdicts that moved"
    /// rows, its "Cells that are new" clauses, and its "Still failing, on another
    /// answer" items (`- ID, server, WORD: why`).
    #[derive(Debug, Default, PartialEq)]
    struct ChangeList {
        moved: BTreeSet<MovedCell>,
        added: BTreeSet<String>,
        still: BTreeSet<(String, String, String)>,
    }

    /// A moved cell: clause, server, old and new outcome as the tables write them.
    type MovedCell = (String, String, String, String);

    /// `RRS-010`: capitals, a dash, digits.
    fn is_clause_id(word: &str) -> bool {
        word.split_once('-').is_some_and(|(family, number)| {
            !family.is_empty()
                && family.chars().all(|c| c.is_ascii_uppercase())
                && !number.is_empty()
                && number.chars().all(|c| c.is_ascii_digit())
        })
    }

    /// One section of a hand-written change list.
    fn change_list(section: &str) -> ChangeList {
        let part = |title: &str| {
            let Some(start) = section.find(title) else {
                return "";
            };
            let rows = &section[start..];
            let end = rows[title.len()..]
                .find("\n## ")
                .map_or(rows.len(), |e| e + title.len());
            &rows[..end]
        };
        let table = |title: &str| {
            part(title)
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| clause"))
                .map(|l| {
                    l.split(" | ")
                        .map(|c| c.trim_matches(['|', ' ']).to_owned())
                        .collect()
                })
                .collect::<Vec<Vec<String>>>()
        };
        let mut list = ChangeList::default();
        for row in table("## Verdicts that moved") {
            for id in row[0].split(", ") {
                for server in row[1].split(", ") {
                    list.moved
                        .insert((id.into(), server.into(), row[2].clone(), row[3].clone()));
                }
            }
        }
        for row in table("## Cells that are new") {
            let ids = row[0]
                .split([',', ' '])
                .take_while(|word| word.is_empty() || is_clause_id(word));
            list.added
                .extend(ids.filter(|w| !w.is_empty()).map(str::to_owned));
        }
        for item in part("## Still failing, on another answer").lines() {
            let Some(item) = item.strip_prefix("- ") else {
                continue;
            };
            let head = item.split(':').next().unwrap();
            let words: Vec<&str> = head.split(", ").collect();
            if let [id, server, word] = words[..] {
                list.still.insert((id.into(), server.into(), word.into()));
            }
        }
        list
    }
}
