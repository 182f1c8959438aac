//! What changed in a table between its published versions: each step is the diff of
//! two consecutive versions (the table's own `embedcheck diff`), shown on a page per
//! table, and each clause's part of it on the clause's page, its history across the
//! table's versions.

use super::{Table, server_page_name};
use crate::report::diff::{Change, TableDiff, diff_tables};
use crate::report::page::{document, escape, inline};
use std::fmt::Write as _;

/// One step of a table's history: the diff from one version to the next.
pub struct Step {
    /// The versions' names, as the user gave them (`1.0`), the last `published`.
    pub from: String,
    pub to: String,
    pub diff: TableDiff,
}

/// The steps from each earlier version of `table` to the next, ending at the published
/// table, or why two versions cannot be compared. `earlier` are the versions' names
/// and `matrix.json` texts, oldest first.
pub fn steps(table: &Table, earlier: &[(String, String)]) -> Result<Vec<Step>, String> {
    let mut versions: Vec<(String, String)> = earlier.to_vec();
    if versions.is_empty() {
        return Ok(Vec::new());
    }
    versions.push(("published".to_owned(), table.doc.render()));
    versions
        .windows(2)
        .map(|pair| {
            let ((from, old), (to, new)) = (&pair[0], &pair[1]);
            let diff = diff_tables((old, from), (new, to)).map_err(|e| e.to_string())?;
            Ok(Step {
                from: from.clone(),
                to: to.clone(),
                diff,
            })
        })
        .collect()
}

/// The page of a table's history: each step's changed cells and the failures that
/// stayed failures on another answer.
pub(super) fn page(table: &Table) -> String {
    let mut body = String::from(
        "<nav><a href=\"../index.html\">home</a> · <a href=\"../clauses/index.html\">all clauses and servers</a></nav>\n",
    );
    let _ = writeln!(
        body,
        "<h1>What changed in the {} table</h1>\n<p>Each step is <code>embedcheck diff</code> \
         of two versions of the table: every cell whose verdict moved, each with what is \
         behind it (the clause's change between the two contract versions, or the server), \
         and the failures that stayed failures on another answer.</p>",
        escape(&table.name)
    );
    for step in &table.steps {
        let _ = writeln!(
            body,
            "<h2>{} → {}</h2>",
            escape(&step.from),
            escape(&step.to)
        );
        if let Some((_, first)) = step.diff.servers.first() {
            let _ = writeln!(
                body,
                "<p>{}: {}<br>{}: {}</p>",
                escape(&step.from),
                escape(&first.old.measured_with),
                escape(&step.to),
                escape(&first.new.measured_with)
            );
        }
        let changed: Vec<(&str, &Change)> = step
            .diff
            .servers
            .iter()
            .flat_map(|(label, run)| run.changes.iter().map(move |c| (label.as_str(), c)))
            .collect();
        let _ = writeln!(body, "<h3>{} cells changed</h3>", changed.len());
        cells(&mut body, table, &changed);
        let still: Vec<(&str, &Change)> = step.diff.still_failing().collect();
        if !still.is_empty() {
            body.push_str("<h3>Still failing, on another answer</h3>\n");
            cells(&mut body, table, &still);
        }
    }
    document(&format!("What changed in the {} table", table.name), &body)
}

/// The clause's history on `table`: every step's change of it, server by server.
pub(super) fn of_clause(body: &mut String, table: &Table, id: &str) {
    let mut rows: Vec<(&Step, &str, &Change)> = Vec::new();
    for step in &table.steps {
        for (label, run) in &step.diff.servers {
            let mine = run.changes.iter().chain(&run.still_failing);
            rows.extend(
                mine.filter(|c| c.id == id)
                    .map(|c| (step, label.as_str(), c)),
            );
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        body,
        "<h3>{} table, version by version (<a href=\"../changes/{}.html\">every change</a>)</h3>\n\
         <table>\n<tr><th>versions</th><th>server</th><th>old</th><th>new</th><th>behind</th></tr>",
        escape(&table.name),
        super::slug(&table.name)
    );
    for (step, label, change) in rows {
        let (old, new) = change.words();
        let _ = writeln!(
            body,
            "<tr><td>{} → {}</td><td>{}</td><td>{old}</td><td>{new}</td><td>{}</td></tr>",
            escape(&step.from),
            escape(&step.to),
            server_link(table, label),
            inline(&change.behind_words())
        );
    }
    body.push_str("</table>\n");
}

/// A table of changed cells: clause, server, level, old, new, what is behind it.
fn cells(body: &mut String, table: &Table, rows: &[(&str, &Change)]) {
    if rows.is_empty() {
        return;
    }
    body.push_str(
        "<table>\n<tr><th>clause</th><th>server</th><th>old</th><th>new</th><th>behind</th></tr>\n",
    );
    for (label, change) in rows {
        let (old, new) = change.words();
        let _ = writeln!(
            body,
            "<tr><td><a href=\"../clauses/{0}.html\">{0}</a> {1}</td><td>{2}</td><td>{old}</td><td>{new}</td><td>{3}</td></tr>",
            escape(&change.id),
            inline(&change.title),
            server_link(table, label),
            inline(&change.behind_words())
        );
    }
    body.push_str("</table>\n");
}

/// The server's label, linked to its page where the published table has it (from a
/// page one folder down, as the changes' and the clauses' pages are).
fn server_link(table: &Table, label: &str) -> String {
    match table.doc.servers.iter().find(|s| s.label == label) {
        Some(server) => format!(
            "<a href=\"../servers/{}\">{}</a>",
            server_page_name(table, server),
            escape(label)
        ),
        None => escape(label),
    }
}
