//! A page per measured server: how its table was measured (versions, model, the
//! command), its verdicts clause by clause, its clients' verdicts and what the audit
//! learned of it.

use super::Table;
use crate::catalogue::Catalogue;
use crate::report::matrix::{Server, cell_word, class_of};
use crate::report::page::{document, escape, inline};
use crate::report::text::works_label;
use std::fmt::Write as _;

pub(super) fn page(catalogue: &Catalogue, table: &Table, server: &Server) -> String {
    let report = &server.report;
    let label = server.label.as_str();
    let mut body = String::from(
        "<nav><a href=\"../index.html\">home</a> · <a href=\"../clauses/index.html\">all clauses and servers</a></nav>\n",
    );
    let _ = writeln!(
        body,
        "<h1>{} on the {} table</h1>\n<p>{} · model {} · {} · {} requests</p>",
        escape(label),
        escape(&table.name),
        inline(table.engine_of(label).unwrap_or("engine not named")),
        escape(report["model"].as_str().unwrap_or("not named")),
        escape(&table.measured_line()),
        report["requests_sent"]
    );
    if let Some(provenance) = &table.doc.provenance {
        body.push_str("<h2>How the table was measured</h2>\n");
        for line in provenance.lines().filter(|l| !l.trim().is_empty()) {
            let _ = writeln!(body, "<p>{}</p>", inline(line));
        }
    }
    body.push_str("<h2>Verdicts</h2>\n<table>\n<tr><th>clause</th><th>level</th><th>outcome</th><th>reason</th></tr>\n");
    for cell in server.cells() {
        let title = catalogue.get(&cell.id).map_or("", |c| c.title.as_str());
        let word = cell_word(&cell);
        let _ = writeln!(
            body,
            "<tr><td><a href=\"../clauses/{0}.html\">{0}</a> {1}</td><td>{2}</td><td class=\"cell {3}\">{word}</td><td>{4}</td></tr>",
            cell.id,
            inline(title),
            escape(&cell.level),
            class_of(word),
            inline(&cell.reason)
        );
    }
    body.push_str("</table>\n<h2>Clients</h2>\n<ul>\n");
    for profile in server.profiles() {
        let _ = writeln!(
            body,
            "<li><b>{} {}</b>: {}: {}</li>",
            escape(&profile.client),
            escape(&profile.version),
            works_label(profile.works),
            inline(&profile.because.join("; "))
        );
    }
    body.push_str("</ul>\n<h2>What the audit learned of it</h2>\n<ul>\n");
    if let Some(observations) = report["observations"].as_object() {
        for (name, line) in observations {
            let _ = writeln!(
                body,
                "<li><b>{}</b>: {}</li>",
                escape(name),
                inline(line.as_str().unwrap_or_default())
            );
        }
    }
    body.push_str("</ul>\n");
    document(&format!("{label} on the {} table", table.name), &body)
}
