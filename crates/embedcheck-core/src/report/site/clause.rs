//! A page per clause, and the index of every clause and server.

use super::{Table, server_page_name};
use crate::catalogue::{Catalogue, Clause, LevelEvidence};
use crate::report::matrix::{Cell, cell_word, class_of};
use crate::report::page::{document, escape, inline};
use std::fmt::Write as _;

/// Every clause by contract and family, each with its level and title, and every
/// measured server by table.
pub(super) fn index(catalogue: &Catalogue, tables: &[Table]) -> String {
    let mut body = String::from(
        "<nav><a href=\"../index.html\">home</a></nav>\n<h1>embedcheck: the clauses</h1>\n",
    );
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(
        body,
        "<p>{} clauses over {} contracts, each measured on the published tables ({}).</p>",
        catalogue.clauses.len(),
        catalogue.contracts.len(),
        escape(&names.join(", "))
    );
    let mut family = None;
    for clause in &catalogue.clauses {
        if family != Some(clause.family) {
            if family.is_some() {
                body.push_str("</ul>\n");
            }
            family = Some(clause.family);
            let _ = writeln!(
                body,
                "<h2>{} · {}</h2>\n<ul>",
                clause.contract(),
                clause.family
            );
        }
        let _ = writeln!(
            body,
            "<li><a href=\"{0}.html\">{0}</a> {1} <span class=\"level\">{2}</span></li>",
            clause.id,
            inline(&clause.title),
            clause.level
        );
    }
    body.push_str("</ul>\n<h2>The measured servers</h2>\n<ul>\n");
    for table in tables {
        let links: Vec<String> = table
            .doc
            .servers
            .iter()
            .map(|server| {
                format!(
                    "<a href=\"../servers/{}\">{}</a>",
                    server_page_name(table, server),
                    escape(&server.label)
                )
            })
            .collect();
        let _ = writeln!(
            body,
            "<li>{}: {}</li>",
            escape(&table.name),
            links.join(", ")
        );
    }
    body.push_str("</ul>\n");
    document("embedcheck: the clauses", &body)
}

/// One clause: what it asks, why at its level, its sources and versions, and every
/// measured server's outcome.
pub(super) fn page(catalogue: &Catalogue, clause: &Clause, tables: &[Table]) -> String {
    let mut body = String::from(
        "<nav><a href=\"../index.html\">home</a> · <a href=\"index.html\">all clauses</a></nav>\n",
    );
    let _ = writeln!(
        body,
        "<h1>{} {}</h1>\n<p><b>{}</b> · {} · the {} contract, since {}</p>\n<p>{}</p>",
        clause.id,
        inline(&clause.title),
        clause.level,
        clause.family,
        clause.contract(),
        clause.since,
        inline(&clause.statement)
    );
    let _ = writeln!(body, "<h2>Why {}</h2>\n<ul>", clause.level);
    for evidence in &clause.level_evidence.0 {
        let _ = writeln!(body, "<li>{}</li>", evidence_words(evidence));
    }
    let _ = writeln!(
        body,
        "</ul>\n<h2>Rationale</h2>\n<p>{}</p>\n<h2>Sources</h2>\n<ul>",
        inline(&clause.rationale)
    );
    for key in &clause.sources {
        let described = catalogue.sources.get(key).map_or("", String::as_str);
        let _ = writeln!(
            body,
            "<li><b>{}</b>: {}</li>",
            escape(key),
            inline(described)
        );
    }
    let _ = writeln!(
        body,
        "</ul>\n<h2>Versions</h2>\n<ul>\n<li>{}: added</li>",
        clause.since
    );
    for change in &clause.changed {
        let _ = writeln!(
            body,
            "<li>{}: {}</li>",
            change.version,
            inline(&change.change)
        );
    }
    body.push_str("</ul>\n<h2>On the published servers</h2>\n");
    for table in tables {
        measured(&mut body, clause, table);
    }
    let mut history = String::new();
    for table in tables {
        super::changes::of_clause(&mut history, table, &clause.id);
    }
    if !history.is_empty() {
        body.push_str("<h2>Across the tables' versions</h2>\n");
        body.push_str(&history);
    }
    document(&format!("{} {}", clause.id, clause.title), &body)
}

/// A level's evidence in words: what kind it is, what it says, and whose.
fn evidence_words(evidence: &LevelEvidence) -> String {
    let (kind, whose) = match evidence {
        LevelEvidence::Requirement { source, .. } => ("a documented requirement", source),
        LevelEvidence::ClientBreaks { client, .. } => ("a client that breaks", client),
        LevelEvidence::Documented { source, .. } => ("a documented behaviour", source),
        LevelEvidence::ClientWarns { client, .. } => ("a client that warns", client),
    };
    format!("{kind} ({}): {}", escape(whose), inline(evidence.says()))
}

/// The clause on each server of one table, under the date and contract version the
/// table was measured on: outcome, reason, the first exchange.
fn measured(body: &mut String, clause: &Clause, table: &Table) {
    let rows: Vec<(&crate::report::matrix::Server, Cell)> = table
        .doc
        .servers
        .iter()
        .filter_map(|s| Some((s, s.cells().into_iter().find(|c| c.id == clause.id)?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        body,
        "<h3>{}</h3>\n<p>{}</p>\n<table>\n<tr><th>server</th><th>outcome</th><th>reason</th><th>evidence</th></tr>",
        escape(&table.name),
        escape(&table.measured_words(clause.contract()))
    );
    for (server, cell) in rows {
        let word = cell_word(&cell);
        let _ = writeln!(
            body,
            "<tr><td><a href=\"../servers/{}\">{}</a></td><td class=\"cell {}\">{word}</td><td>{}</td><td>{}</td></tr>",
            server_page_name(table, server),
            escape(&server.label),
            class_of(word),
            inline(&cell.reason),
            exchange(&cell)
        );
    }
    body.push_str("</table>\n");
}

/// The first exchange of a verdict's evidence, as a request line, its status and
/// the start of the answer (vectors already elided in reports).
fn exchange(cell: &Cell) -> String {
    let Some(first) = cell.evidence.first() else {
        return String::new();
    };
    let status = first["status"]
        .as_u64()
        .map_or("no answer".to_owned(), |s| s.to_string());
    let answer = first["response_body"].as_str().unwrap_or_default();
    let cut: String = answer.chars().take(160).collect();
    format!(
        "<code>{} {}</code> → {status} <code>{}</code>",
        escape(first["method"].as_str().unwrap_or_default()),
        escape(first["path"].as_str().unwrap_or_default()),
        escape(&cut)
    )
}
