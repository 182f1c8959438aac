//! The home: every measured server × contract, each cell the server's counts by level
//! and its worst finding on that contract, with its engine and the date and contract
//! version it was measured on; then each table clause by clause. Filters by contract,
//! level, family and "only where servers differ" (the pages' one script) hide rows and
//! columns; with JavaScript off everything shows.

use super::{Table, contract_of, server_page_name, worst};
use crate::catalogue::{Catalogue, ContractId};
use crate::report::matrix::{Cell, LEVELS, Server, cell_word, class_of};
use crate::report::page::{document, escape, inline};
use std::fmt::Write as _;

pub(super) fn page(catalogue: &Catalogue, tables: &[Table]) -> String {
    let mut body = String::from(
        "<h1>embedcheck: how OpenAI-compatible servers really behave</h1>\n\
         <p>Every server of the published tables, on each contract: its verdicts by level \
         and its worst finding (one that fails the run before a tolerated one), then every \
         table clause by clause. <a href=\"clauses/index.html\">Every clause</a> has a page \
         with every server's outcome and evidence, and every server a page of its own.</p>\n",
    );
    filters(&mut body, catalogue);
    servers(&mut body, tables);
    for table in tables {
        grid(&mut body, table);
    }
    document("embedcheck: the compatibility index", &body)
}

/// The filters, shown only where the script runs.
fn filters(body: &mut String, catalogue: &Catalogue) {
    body.push_str("<form class=\"filters\" id=\"filters\" hidden>\n<label>contract <select id=\"contract\"><option value=\"\">all</option>");
    for contract in ContractId::all() {
        let _ = write!(body, "<option>{contract}</option>");
    }
    body.push_str(
        "</select></label>\n<label>level <select id=\"level\"><option value=\"\">all</option>",
    );
    for level in LEVELS {
        let _ = write!(body, "<option>{level}</option>");
    }
    body.push_str(
        "</select></label>\n<label>family <select id=\"family\"><option value=\"\">all</option>",
    );
    let mut families: Vec<(ContractId, &str)> = catalogue
        .clauses
        .iter()
        .map(|c| (c.contract(), c.family.as_str()))
        .collect();
    families.dedup();
    for (contract, family) in families {
        let _ = write!(
            body,
            "<option value=\"{family}\">{contract} · {family}</option>"
        );
    }
    body.push_str("</select></label>\n<label><input type=\"checkbox\" id=\"differ\"> only where servers differ</label>\n</form>\n");
}

/// One row per measured server, one column per contract.
fn servers(body: &mut String, tables: &[Table]) {
    body.push_str("<h2>The servers</h2>\n<div class=\"scroll short\"><table id=\"servers\"><thead><tr><th>server</th><th>table</th><th>engine</th><th>measured on</th>");
    for contract in ContractId::all() {
        let _ = write!(body, "<th data-contract=\"{contract}\">{contract}</th>");
    }
    body.push_str("</tr></thead><tbody>\n");
    for table in tables {
        for server in &table.doc.servers {
            let _ = write!(
                body,
                "<tr><th class=\"clause\"><a href=\"servers/{}\">{}</a></th><td>{}</td><td>{}</td><td>{}</td>",
                server_page_name(table, server),
                escape(&server.label),
                escape(&table.name),
                inline(table.engine_of(&server.label).unwrap_or("not named")),
                table.measured_on().unwrap_or("not recorded")
            );
            let cells = server.cells();
            for contract in ContractId::all() {
                contract_cell(body, table, server, contract, &cells);
            }
            body.push_str("</tr>\n");
        }
    }
    body.push_str("</tbody></table></div>\n");
}

/// A server on one contract: the version it was measured on, its counts by level and
/// its worst finding; or why there is none.
fn contract_cell(
    body: &mut String,
    table: &Table,
    server: &Server,
    contract: ContractId,
    cells: &[Cell],
) {
    let _ = write!(body, "<td data-contract=\"{contract}\" ");
    if let Some(why) = &server.not_audited {
        let _ = write!(
            body,
            "class=\"cell none\">not audited: {}</td>",
            inline(why)
        );
        return;
    }
    let mine: Vec<Cell> = cells
        .iter()
        .filter(|c| contract_of(&c.id) == Some(contract))
        .cloned()
        .collect();
    if mine.iter().all(|c| c.outcome == "skip") {
        let _ = write!(
            body,
            "class=\"cell skip\">{contract}: not measured ({} clauses skipped)</td>",
            mine.len()
        );
        return;
    }
    let found = worst(&mine);
    let class = found.map_or("pass", |c| class_of(cell_word(c)));
    let version = table
        .version_of(contract)
        .map_or(String::new(), |v| v.to_string());
    let _ = write!(body, "class=\"cell {class}\"><b>{contract} {version}</b>");
    for level in LEVELS {
        let at: Vec<&Cell> = mine.iter().filter(|c| c.level == level).collect();
        if at.is_empty() {
            continue;
        }
        let count = |outcome: &str| at.iter().filter(|c| c.outcome == outcome).count();
        let _ = write!(
            body,
            "<br>{level}: {} pass, {} fail, {} skip",
            count("pass"),
            count("fail"),
            count("skip")
        );
    }
    if let Some(cell) = found {
        let _ = write!(
            body,
            "<br>worst: <a href=\"clauses/{0}.html\" title=\"{1}\">{0}</a> {2}: {3}",
            cell.id,
            escape(&cell.reason),
            cell_word(cell),
            inline(&cell.title)
        );
    }
    body.push_str("</td>");
}

/// One table clause by clause: a row per clause any of its servers ran, a column per
/// server; each row carries what the filters read.
fn grid(body: &mut String, table: &Table) {
    let _ = writeln!(
        body,
        "<h2>The {} table, clause by clause</h2>\n<p>{}</p>",
        escape(&table.name),
        escape(&table.measured_line())
    );
    if !table.steps.is_empty() {
        let _ = writeln!(
            body,
            "<p><a href=\"changes/{}.html\">What changed between its versions</a>, cell by cell.</p>",
            super::slug(&table.name)
        );
    }
    body.push_str(
        "<div class=\"scroll\"><table class=\"grid\"><thead><tr><th>clause</th><th>level</th>",
    );
    for server in &table.doc.servers {
        let _ = write!(
            body,
            "<th><a href=\"servers/{}\">{}</a></th>",
            server_page_name(table, server),
            escape(&server.label)
        );
    }
    body.push_str("</tr></thead><tbody>\n");
    for row in table.doc.rows() {
        let contract = contract_of(&row.id).map_or("", ContractId::as_str);
        let _ = write!(
            body,
            "<tr data-contract=\"{contract}\" data-family=\"{family}\" data-level=\"{level}\" data-differs=\"{differs}\"><th class=\"clause\"><a href=\"clauses/{id}.html\">{id}</a> <span>{title}</span></th><td>{level}</td>",
            family = escape(&row.family),
            level = escape(&row.level),
            differs = row.differs(),
            id = escape(&row.id),
            title = inline(&row.title)
        );
        for cell in &row.cells {
            match cell {
                Some(c) if c.outcome == "fail" => {
                    let word = cell_word(c);
                    let _ = write!(
                        body,
                        "<td class=\"cell {}\" title=\"{}\">{word}</td>",
                        class_of(word),
                        escape(&c.reason)
                    );
                }
                Some(c) => {
                    let word = cell_word(c);
                    let _ = write!(body, "<td class=\"cell {}\">{word}</td>", class_of(word));
                }
                None => body.push_str("<td class=\"cell none\">—</td>"),
            }
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div>\n");
}
