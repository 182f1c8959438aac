//! `matrix.html`: the matrix as one self-contained page.
//!
//! No network access at all (no CDN, no web font): the styles and the script are in
//! the page. With JavaScript off it is a plain table whose cells open with
//! `<details>` (statement, reason, evidence, curl reproducer); with it, filters by
//! family, level and "only where servers differ". Headers stick while scrolling, and
//! the table scrolls sideways inside its own box on a narrow screen.

use super::{Cell, Document, LEGEND, LEVELS, Row, Server, cell_word, class_of};
use crate::report::page::chart::{Stack, stacked_bar};
use crate::report::page::{self, escape};
use crate::report::text::works_label;
use std::fmt::Write;

pub fn render(doc: &Document) -> String {
    let labels = doc.labels();
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>embedcheck matrix</h1>\n<p>{} servers, one seed ({}), {} {}{}.</p>",
        labels.len(),
        doc.seed,
        escape(&doc.tool.name),
        escape(&doc.tool.version),
        escape(&doc.contract_words())
    );
    if let Some(how) = &doc.provenance {
        let _ = writeln!(body, "<pre class=\"provenance\">{}</pre>", escape(how));
    }
    body.push_str(&sections(doc));
    page::document(&format!("embedcheck matrix: {}", labels.join(", ")), &body)
}

/// The matrix itself, for any page that shows servers' clauses: the client
/// profiles, the legend, the filters and the clauses × servers table.
pub(crate) fn sections(doc: &Document) -> String {
    let rows = doc.rows();
    let mut page = String::new();
    clients(&mut page, doc);
    corpus(&mut page, doc);
    agreement(&mut page, doc);
    legend(&mut page);
    filters(&mut page, &rows);
    table(&mut page, doc, &rows);
    page
}

/// Will each client work with its defaults: one row per client, one cell per server.
fn clients(page: &mut String, doc: &Document) {
    let clients = doc.clients();
    if clients.is_empty() {
        return;
    }
    page.push_str("<div class=\"scroll short\"><table id=\"clients\"><thead><tr><th>client</th>");
    for label in doc.labels() {
        let _ = write!(page, "<th>{}</th>", escape(label));
    }
    page.push_str("</tr></thead><tbody>\n");
    for (client, cells) in clients {
        let _ = write!(page, "<tr><th class=\"clause\">{}</th>", escape(&client));
        for profile in cells {
            match profile {
                Some(p) => {
                    let class = match p.works {
                        Some(true) => "pass",
                        Some(false) => "fail",
                        None => "inconclusive",
                    };
                    let word = works_label(p.works);
                    let _ = write!(
                        page,
                        "<td class=\"cell {class}\"><details><summary>{word}</summary><ul>"
                    );
                    for why in &p.because {
                        let _ = write!(page, "<li>{}</li>", escape(why));
                    }
                    page.push_str("</ul></details></td>");
                }
                None => page.push_str("<td class=\"cell none\">—</td>"),
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table></div>\n");
}

/// The contracts' rows of each server (rerank's dialect), and the servers on the
/// user's corpus (quality on its labels, the replay against the recording, latency),
/// one row each, one cell per server.
fn corpus(page: &mut String, doc: &Document) {
    let rows = doc.summary_rows();
    if rows.is_empty() {
        return;
    }
    let mut heading = crate::contracts::with_matrix_rows();
    heading.push("corpus");
    let _ = write!(
        page,
        "<div class=\"scroll short\"><table id=\"corpus\"><thead><tr><th>{}</th>",
        heading.join(" and ")
    );
    for label in doc.labels() {
        let _ = write!(page, "<th>{}</th>", escape(label));
    }
    page.push_str("</tr></thead><tbody>\n");
    for (name, cells) in rows {
        let _ = write!(page, "<tr><th class=\"clause\">{}</th>", escape(name));
        for cell in cells {
            let _ = write!(page, "<td class=\"cell\">{}</td>", escape(&cell));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table></div>\n");
}

/// Each group of servers serving one model, compared on the probe texts: a small
/// table, cells coloured where the lowest cosine falls below the threshold, and the
/// outliers named under it.
fn agreement(page: &mut String, doc: &Document) {
    for group in &doc.agreement {
        let _ = write!(
            page,
            "<section class=\"agreement\"><h2>Vectors across servers: {}</h2><p>{}</p><div class=\"scroll short\"><table class=\"agreement\"><thead><tr><th></th>",
            escape(&group.model),
            escape(&super::agreement_caption(group))
        );
        for label in &group.servers {
            let _ = write!(page, "<th>{}</th>", escape(label));
        }
        page.push_str("</tr></thead><tbody>\n");
        for (a, row) in group.servers.iter().zip(super::agreement_table(group)) {
            let _ = write!(page, "<tr><th>{}</th>", escape(a));
            for (b, text) in group.servers.iter().zip(row) {
                let lowest = super::pair_of(group, a, b).map(|p| p.lowest.cosine);
                let class = match lowest {
                    Some(c) if c < group.threshold => "fail",
                    Some(_) => "pass",
                    None => "none",
                };
                let _ = write!(page, "<td class=\"cell {class}\">{}</td>", escape(&text));
            }
            page.push_str("</tr>\n");
        }
        page.push_str("</tbody></table></div>");
        for outlier in &group.outliers {
            let _ = write!(
                page,
                "<p class=\"outlier\"><strong>{}</strong></p>",
                escape(&outlier.sentence())
            );
        }
        page.push_str("</section>\n");
    }
}

fn legend(page: &mut String) {
    page.push_str("<ul class=\"legend\">");
    for (word, meaning) in LEGEND {
        let _ = write!(
            page,
            "<li><span class=\"cell {}\">{}</span> {}</li>",
            class_of(word),
            escape(word),
            escape(meaning)
        );
    }
    page.push_str("</ul>\n");
}

fn filters(page: &mut String, rows: &[Row]) {
    let mut families: Vec<&str> = rows.iter().map(|r| r.family.as_str()).collect();
    families.dedup();
    page.push_str("<form class=\"filters\" id=\"filters\" hidden>\n<label>family <select id=\"family\"><option value=\"\">all</option>");
    for f in families {
        let _ = write!(page, "<option>{}</option>", escape(f));
    }
    page.push_str(
        "</select></label>\n<label>level <select id=\"level\"><option value=\"\">all</option>",
    );
    for level in LEVELS {
        let _ = write!(page, "<option>{level}</option>");
    }
    page.push_str("</select></label>\n<label><input type=\"checkbox\" id=\"differ\"> only where servers differ</label>\n</form>\n");
}

fn table(page: &mut String, doc: &Document, rows: &[Row]) {
    page.push_str(
        "<div class=\"scroll\"><table id=\"matrix\">\n<thead><tr><th>clause</th><th>level</th>",
    );
    for server in &doc.servers {
        let _ = write!(
            page,
            "<th class=\"server\">{}{}</th>",
            escape(&server.label),
            bar(server)
        );
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let _ = write!(
            page,
            "<tr data-family=\"{}\" data-level=\"{}\" data-differs=\"{}\"><th class=\"clause\" title=\"{}\">{} <span>{}</span></th><td>{}</td>",
            escape(&row.family),
            escape(&row.level),
            row.differs(),
            escape(&row.statement),
            escape(&row.id),
            escape(&row.title),
            escape(&row.level)
        );
        for (cell, server) in row.cells.iter().zip(&doc.servers) {
            match (cell, &server.not_audited) {
                (_, Some(_)) => page.push_str("<td class=\"cell none\">not audited</td>"),
                (Some(c), None) => result_cell(page, row, c, &server.label),
                (None, None) => page.push_str("<td class=\"cell none\">—</td>"),
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table></div>\n");
}

fn result_cell(page: &mut String, row: &Row, c: &Cell, label: &str) {
    let word = cell_word(c);
    let _ = write!(
        page,
        "<td class=\"cell {}\" data-server=\"{}\"><details><summary>{}</summary><div class=\"detail\"><p class=\"statement\">{}: {}</p><p class=\"reason\">{}</p>",
        class_of(word),
        escape(label),
        escape(word),
        escape(&row.id),
        escape(&row.statement),
        escape(&c.reason)
    );
    if let Some(line) = c.level_line.as_ref().filter(|_| c.outcome == "fail") {
        let _ = write!(page, "<p class=\"level\">{}</p>", escape(line));
    }
    for exchange in &c.evidence {
        let _ = write!(
            page,
            "<pre class=\"evidence\">{}</pre>",
            escape(&exchange_text(exchange))
        );
    }
    if let Some(curl) = &c.curl {
        let _ = write!(page, "<pre class=\"curl\">{}</pre>", escape(curl));
    }
    page.push_str("</div></details></td>");
}

/// One exchange as evidence: the request line and body, then status and answer.
fn exchange_text(e: &serde_json::Value) -> String {
    let field = |name: &str| e.get(name).and_then(|v| v.as_str()).unwrap_or_default();
    let status = e
        .get("status")
        .and_then(serde_json::Value::as_u64)
        .map_or_else(|| field("transport_error").to_owned(), |s| s.to_string());
    format!(
        "{} {}\n{}\n→ {}\n{}",
        field("method"),
        field("path"),
        field("request_body"),
        status,
        field("response_body")
    )
}

/// The server's pass / fail / skip per level, or why it was not audited.
fn bar(server: &Server) -> String {
    if let Some(why) = &server.not_audited {
        return format!(
            "<div class=\"not-audited\">not audited: {}</div>",
            escape(why)
        );
    }
    let stacks: Vec<Stack<'_>> = server
        .levels
        .iter()
        .map(|c| Stack {
            name: &c.level,
            pass: c.pass,
            fail: c.fail,
            skip: c.skip + c.inconclusive,
        })
        .collect();
    stacked_bar(&stacks)
}
