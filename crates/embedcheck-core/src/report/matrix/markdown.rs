//! `matrix.md`: clauses × servers, pasteable into a vendor-evaluation document.
//!
//! ```markdown
//! | clause | level | vllm | dynamo |
//! | **dimensions** | | | |
//! | DIM-001 native dimensions answered or refused, never a 5xx | MUST | pass | fail |
//! ```

use super::{Cell, Document, LEGEND, LEVELS, Row, cell_word};
use crate::report::markdown::table::{cell, table_row};
use crate::report::text::works_label;
use std::fmt::Write;

pub fn render(doc: &Document) -> String {
    let labels = doc.labels();
    let mut out = format!(
        "# embedcheck matrix: {}\n\n{} servers, one seed ({}), {} {}{}.\n",
        labels.join(", "),
        labels.len(),
        doc.seed,
        doc.tool.name,
        doc.tool.version,
        doc.contract_words()
    );
    if let Some(how) = &doc.provenance {
        let _ = writeln!(out, "\n{}", how.trim_end());
    }
    let rows = doc.rows();
    summary(&mut out, doc);
    agreement(&mut out, doc);
    legend(&mut out);
    table(&mut out, doc, &rows);
    failures(&mut out, doc, &rows);
    out
}

/// The summary's rows under the levels: each server's rerank dialect, and its results
/// on the user's corpus, where any server has one.
fn dialect_and_corpus_rows(out: &mut String, doc: &Document) {
    for (name, cells) in doc.summary_rows() {
        let mut row = vec![name];
        row.extend(cells.iter().map(String::as_str));
        table_row(out, &row);
    }
}

fn header(out: &mut String, first: &[&str], labels: &[&str]) {
    let cells: Vec<&str> = first.iter().chain(labels).copied().collect();
    table_row(out, &cells);
    let _ = writeln!(out, "|{}", "---|".repeat(cells.len()));
}

fn summary(out: &mut String, doc: &Document) {
    out.push_str("\n## Summary\n\n");
    header(out, &["level"], &doc.labels());
    for (i, level) in LEVELS.iter().enumerate() {
        let cells: Vec<String> = doc
            .servers
            .iter()
            .map(|s| match (&s.not_audited, s.levels.get(i)) {
                (Some(_), _) => "not audited".to_owned(),
                (None, Some(c)) => format!(
                    "{} pass, {} fail, {} skip",
                    c.pass,
                    c.fail,
                    c.skip + c.inconclusive
                ),
                (None, None) => String::new(),
            })
            .collect();
        let mut row = vec![*level];
        row.extend(cells.iter().map(String::as_str));
        table_row(out, &row);
    }
    dialect_and_corpus_rows(out, doc);
    for (client, cells) in doc.clients() {
        let words: Vec<String> = cells
            .iter()
            .map(|p| match p {
                Some(p) if p.works == Some(false) => format!("**breaks**: {}", headline(p)),
                Some(p) => works_label(p.works).to_owned(),
                None => "—".to_owned(),
            })
            .collect();
        let mut row = vec![client.as_str()];
        row.extend(words.iter().map(String::as_str));
        table_row(out, &row);
    }
    for s in doc.servers.iter().filter(|s| s.not_audited.is_some()) {
        let _ = writeln!(
            out,
            "\n{} was not audited: {}",
            s.label,
            s.not_audited.as_deref().unwrap_or_default()
        );
    }
}

/// The servers of one model compared on the probe texts, and the outliers named.
fn agreement(out: &mut String, doc: &Document) {
    for group in &doc.agreement {
        let _ = writeln!(
            out,
            "\n## Vectors across servers: {}\n\n{}\n",
            group.model,
            super::agreement_caption(group)
        );
        let labels: Vec<&str> = group.servers.iter().map(String::as_str).collect();
        header(out, &[""], &labels);
        for (label, row) in labels.iter().zip(super::agreement_table(group)) {
            let mut cells = vec![*label];
            cells.extend(row.iter().map(String::as_str));
            table_row(out, &cells);
        }
        if group.outliers.is_empty() {
            out.push_str("\nNo server is apart from others that agree.\n");
        }
        for outlier in &group.outliers {
            let _ = writeln!(out, "\n**{}**", outlier.sentence());
        }
    }
}

/// The first reason up to its first colon: what breaks, without the evidence (the
/// HTML page and each server's report.md carry it whole).
fn headline(p: &super::Profile) -> &str {
    let first = p.because.first().map_or("", String::as_str);
    first.split(": ").next().unwrap_or(first)
}

fn legend(out: &mut String) {
    out.push_str("\nLegend: ");
    let words: Vec<String> = LEGEND
        .iter()
        .map(|(word, meaning)| format!("`{word}` {meaning}"))
        .collect();
    out.push_str(&words.join(" · "));
    out.push('\n');
}

fn table(out: &mut String, doc: &Document, rows: &[Row]) {
    out.push_str("\n## Clauses\n\n");
    let labels = doc.labels();
    header(out, &["clause", "level"], &labels);
    let mut family = String::new();
    for row in rows {
        if row.family != family {
            family.clone_from(&row.family);
            let mut cells = vec![format!("**{family}**"), String::new()];
            cells.extend(labels.iter().map(|_| String::new()));
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            table_row(out, &cells);
        }
        clause_row(out, row, doc);
    }
}

fn clause_row(out: &mut String, row: &Row, doc: &Document) {
    let name = format!("{} {}", row.id, row.title);
    let mut cells = vec![name, row.level.clone()];
    cells.extend(row.cells.iter().zip(&doc.servers).map(|(c, server)| {
        match (c, &server.not_audited) {
            (_, Some(_)) => "not audited".to_owned(),
            (Some(c), None) => cell_word(c).to_owned(),
            (None, None) => "—".to_owned(),
        }
    }));
    let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
    table_row(out, &cells);
}

fn failures(out: &mut String, doc: &Document, rows: &[Row]) {
    out.push_str("\n## Failures\n");
    for (i, server) in doc.servers.iter().enumerate() {
        if server.not_audited.is_some() {
            continue;
        }
        let failed: Vec<&Cell> = rows
            .iter()
            .filter_map(|r| r.cells[i].as_ref())
            .filter(|c| c.outcome == "fail")
            .collect();
        let _ = writeln!(out, "\n### {} ({} failing)\n", server.label, failed.len());
        if failed.is_empty() {
            out.push_str("No clause failed.\n");
        }
        for c in failed {
            let _ = writeln!(
                out,
                "- **{}** ({}) {}: {}",
                c.id,
                c.level,
                cell(&c.title),
                cell(&c.reason)
            );
            if let Some(curl) = &c.curl {
                let _ = writeln!(out, "  `{}`", curl.replace('`', "'").replace('\n', " "));
            }
        }
    }
}
