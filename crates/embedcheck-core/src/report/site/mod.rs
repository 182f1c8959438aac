//! The compatibility index: static pages built from the published tables
//! (`matrix.json`), readable from `file://` with nothing loaded from the network. A
//! page per clause says what the clause asks and why at its level (its evidence), its
//! sources and versions, and how every measured server did on it, with the reason and
//! the evidence excerpt; a page per measured server (its table's provenance, its
//! verdicts, its clients' verdicts and what the audit learned of it); an index lists
//! the clauses by contract and family and the servers by table.

use super::page::{document, escape, inline};
use crate::catalogue::{Catalogue, Clause, LevelEvidence};
use serde_json::Value;
use std::fmt::Write as _;

/// One published table: its name (`rerank`) and its `matrix.json`.
pub struct Table {
    pub name: String,
    pub json: Value,
}

impl Table {
    /// The table named `name` from its `matrix.json` text, or why it is none.
    pub fn parse(name: &str, text: &str) -> Result<Table, String> {
        let json: Value =
            serde_json::from_str(text).map_err(|e| format!("not a matrix.json ({e})"))?;
        if !json["servers"].is_array() {
            return Err("not a matrix.json (no servers)".to_owned());
        }
        Ok(Table {
            name: name.to_owned(),
            json,
        })
    }
}

/// Every page of the site, each its path under the site's folder and its HTML.
pub fn pages(tables: &[Table]) -> Vec<(String, String)> {
    let catalogue = Catalogue::shipped();
    let mut pages = vec![
        ("index.html".to_owned(), home(tables)),
        ("clauses/index.html".to_owned(), index(catalogue, tables)),
    ];
    for clause in &catalogue.clauses {
        let path = format!("clauses/{}.html", clause.id);
        pages.push((path, clause_page(catalogue, clause, tables)));
    }
    for table in tables {
        for server in servers(table) {
            let path = format!("servers/{}", server_page_name(table, server));
            pages.push((path, server_page(catalogue, table, server)));
        }
    }
    pages
}

/// The home: each published table, its servers one row each with their counts by
/// level and their first failure, linked to their pages; and the clauses' index.
fn home(tables: &[Table]) -> String {
    let mut body = String::from(
        "<h1>embedcheck: how OpenAI-compatible servers really behave</h1>\n\
         <p>Every published table below, each server with its verdicts by level and its \
         first failure (one that fails the run before a tolerated one). <a href=\"clauses/index.html\">Every clause</a> has a page with \
         every server's outcome and evidence.</p>\n",
    );
    for table in tables {
        let _ = writeln!(body, "<h2>{}</h2>", escape(&table.name));
        if let Some(first) = table.json["provenance"]
            .as_str()
            .and_then(|p| p.lines().next())
        {
            let _ = writeln!(body, "<p>{}</p>", inline(first));
        }
        body.push_str(
            "<table>\n<tr><th>server</th><th>MUST</th><th>SHOULD</th><th>first failure</th></tr>\n",
        );
        for server in servers(table) {
            let counts = |level: &str| {
                server["levels"]
                    .as_array()
                    .and_then(|levels| levels.iter().find(|l| l["level"] == level))
                    .map_or(String::new(), |l| {
                        format!("{} pass, {} fail, {} skip", l["pass"], l["fail"], l["skip"])
                    })
            };
            let _ = writeln!(
                body,
                "<tr><td><a href=\"servers/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                server_page_name(table, server),
                escape(server["label"].as_str().unwrap_or_default()),
                counts("MUST"),
                counts("SHOULD"),
                first_failure(server)
            );
        }
        body.push_str("</table>\n");
    }
    document("embedcheck: the compatibility index", &body)
}

/// A server's first failure in catalogue order that fails the run, else its first
/// tolerated one, linked to the clause; nothing where it fails none.
fn first_failure(server: &Value) -> String {
    let results = server["report"]["results"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let failing = |gate: &str| {
        results
            .iter()
            .find(|r| r["outcome"] == "fail" && r["gate"] == gate)
    };
    let Some(result) = failing("fails_run").or_else(|| failing("tolerated")) else {
        return String::new();
    };
    let id = result["id"].as_str().unwrap_or_default();
    format!(
        "<a href=\"clauses/{id}.html\">{id}</a> {}: {}",
        outcome_word(result),
        inline(result["reason"].as_str().unwrap_or_default())
    )
}

/// A table's servers.
fn servers(table: &Table) -> &[Value] {
    table.json["servers"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
}

/// A server's page file name: its table's name and its label.
fn server_page_name(table: &Table, server: &Value) -> String {
    let label = server["label"].as_str().unwrap_or_default();
    format!("{}--{}.html", slug(&table.name), slug(label))
}

/// A name fit for a file: letters, digits, `-`, `.` and `_` kept, the rest `-`.
fn slug(name: &str) -> String {
    name.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                true => c,
                false => '-',
            },
        )
        .collect()
}

/// One measured server: how its table was measured (versions, model, the command),
/// its verdicts clause by clause, its clients' verdicts and what the audit learned.
fn server_page(catalogue: &Catalogue, table: &Table, server: &Value) -> String {
    let report = &server["report"];
    let label = server["label"].as_str().unwrap_or_default();
    let mut body =
        String::from("<nav><a href=\"../clauses/index.html\">all clauses and servers</a></nav>\n");
    let _ = writeln!(
        body,
        "<h1>{} on the {} table</h1>\n<p>model {} · {}</p>",
        escape(label),
        escape(&table.name),
        escape(report["model"].as_str().unwrap_or("not named")),
        escape(&format!("{} requests", report["requests_sent"]))
    );
    if let Some(provenance) = table.json["provenance"].as_str() {
        body.push_str("<h2>How the table was measured</h2>\n");
        for line in provenance.lines().filter(|l| !l.trim().is_empty()) {
            let _ = writeln!(body, "<p>{}</p>", inline(line));
        }
    }
    body.push_str("<h2>Verdicts</h2>\n<table>\n<tr><th>clause</th><th>level</th><th>outcome</th><th>reason</th></tr>\n");
    for result in report["results"].as_array().map_or(&[][..], Vec::as_slice) {
        let id = result["id"].as_str().unwrap_or_default();
        let title = catalogue.get(id).map_or("", |c| c.title.as_str());
        let _ = writeln!(
            body,
            "<tr><td><a href=\"../clauses/{id}.html\">{id}</a> {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            inline(title),
            escape(result["level"].as_str().unwrap_or_default()),
            outcome_word(result),
            inline(result["reason"].as_str().unwrap_or_default())
        );
    }
    body.push_str("</table>\n<h2>Clients</h2>\n<ul>\n");
    for client in report["clients"].as_array().map_or(&[][..], Vec::as_slice) {
        let works = match client["works"].as_bool() {
            Some(true) => "works",
            Some(false) => "breaks",
            None => "not probed",
        };
        let because: Vec<&str> = client["because"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let _ = writeln!(
            body,
            "<li><b>{} {}</b>: {works}: {}</li>",
            escape(client["client"].as_str().unwrap_or_default()),
            escape(client["version"].as_str().unwrap_or_default()),
            inline(&because.join("; "))
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

/// Every clause by contract and family, each with its level and title.
fn index(catalogue: &Catalogue, tables: &[Table]) -> String {
    let mut body = String::from("<h1>embedcheck: the clauses</h1>\n");
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
        let links: Vec<String> = servers(table)
            .iter()
            .map(|server| {
                format!(
                    "<a href=\"../servers/{}\">{}</a>",
                    server_page_name(table, server),
                    escape(server["label"].as_str().unwrap_or_default())
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
fn clause_page(catalogue: &Catalogue, clause: &Clause, tables: &[Table]) -> String {
    let mut body = String::from("<nav><a href=\"index.html\">all clauses</a></nav>\n");
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

/// The clause on each server of one table: outcome, reason, the first exchange.
fn measured(body: &mut String, clause: &Clause, table: &Table) {
    let rows: Vec<(&Value, &str, &Value)> = servers(table)
        .iter()
        .filter_map(|s| {
            let result = s["report"]["results"]
                .as_array()?
                .iter()
                .find(|r| r["id"] == clause.id.as_str())?;
            Some((s, s["label"].as_str()?, result))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        body,
        "<h3>{}</h3>\n<table>\n<tr><th>server</th><th>outcome</th><th>reason</th><th>evidence</th></tr>",
        escape(&table.name)
    );
    for (server, label, result) in rows {
        let _ = writeln!(
            body,
            "<tr><td><a href=\"../servers/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            server_page_name(table, server),
            escape(label),
            outcome_word(result),
            inline(result["reason"].as_str().unwrap_or_default()),
            exchange(result)
        );
    }
    body.push_str("</table>\n");
}

/// `pass`, `FAIL` (fails the run), `fail*` (tolerated), `known`, `skip`, `?`: the
/// tables' words.
fn outcome_word(result: &Value) -> &'static str {
    match (
        result["outcome"].as_str().unwrap_or_default(),
        result["gate"].as_str().unwrap_or_default(),
    ) {
        (_, "known_failure") => "known",
        ("fail", "fails_run") => "FAIL",
        ("fail", _) => "fail*",
        ("pass", _) => "pass",
        ("skip", _) => "skip",
        _ => "?",
    }
}

/// The first exchange of a verdict's evidence, as a request line, its status and
/// the start of the answer (vectors already elided in reports).
fn exchange(result: &Value) -> String {
    let Some(first) = result["evidence"].as_array().and_then(|e| e.first()) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The four published tables, as the README's command names them.
    fn published() -> Vec<Table> {
        let table = |name: &str, text: &str| Table::parse(name, text).unwrap();
        vec![
            table(
                "embeddings",
                include_str!("../../../../../docs/compatibility/matrix.json"),
            ),
            table(
                "qwen3-embedding-tiny",
                include_str!("../../../../../docs/compatibility/qwen3-embedding-tiny/matrix.json"),
            ),
            table(
                "rerank",
                include_str!("../../../../../docs/compatibility/rerank/matrix.json"),
            ),
            table(
                "speech",
                include_str!("../../../../../docs/compatibility/speech/matrix.json"),
            ),
        ]
    }

    /// The committed site (`docs/site/`) is the one the published tables build, page for
    /// page, and holds no page of a clause the catalogue no longer has: a table
    /// republished or a clause added fails this test until the site is built again
    /// (the README's command, or this test with EMBEDCHECK_RENDER_PUBLISHED=1).
    #[test]
    fn the_committed_site_is_the_published_tables() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/site");
        let render = std::env::var_os("EMBEDCHECK_RENDER_PUBLISHED").is_some();
        let pages = pages(&published());
        for (path, html) in &pages {
            let file = root.join(path);
            if render {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, html).unwrap();
                continue;
            }
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            assert!(
                committed == *html,
                "docs/site/{path} differs from the published tables: build the site again (README, 'The compatibility index')"
            );
        }
        let committed: usize = 1 + ["clauses", "servers"]
            .iter()
            .map(|dir| std::fs::read_dir(root.join(dir)).map_or(0, |d| d.count()))
            .sum::<usize>();
        assert_eq!(
            committed,
            pages.len(),
            "docs/site/ holds pages of no clause or server"
        );
    }

    /// Every link of every page names a page of the site.
    #[test]
    fn every_link_resolves() {
        let pages = pages(&published());
        let paths: std::collections::BTreeSet<&str> =
            pages.iter().map(|(p, _)| p.as_str()).collect();
        for (path, html) in &pages {
            let dir = std::path::Path::new(path)
                .parent()
                .unwrap_or(std::path::Path::new(""));
            for link in html.split("href=\"").skip(1) {
                let target = link.split('"').next().unwrap();
                let joined = dir.join(target);
                let mut parts: Vec<&str> = Vec::new();
                for part in joined.iter().map(|p| p.to_str().unwrap()) {
                    match part {
                        ".." => {
                            parts.pop();
                        }
                        other => parts.push(other),
                    }
                }
                assert!(paths.contains(parts.join("/").as_str()), "{path}: {target}");
            }
        }
    }

    /// A page for every clause of the three catalogues and an index linking each.
    #[test]
    fn every_clause_has_a_page_the_index_links() {
        let tables = published();
        let pages = pages(&tables);
        let catalogue = Catalogue::shipped();
        let servers: usize = tables.iter().map(|t| servers(t).len()).sum();
        assert_eq!(pages.len(), catalogue.clauses.len() + 2 + servers);
        let index = &pages[1].1;
        for clause in &catalogue.clauses {
            assert!(
                index.contains(&format!("href=\"{}.html\"", clause.id)),
                "{}",
                clause.id
            );
        }
    }

    /// A clause's page shows each measured server's outcome, reason and exchange, and
    /// its level's evidence.
    #[test]
    fn a_clause_page_shows_every_measured_server() {
        let tables = published();
        let pages = pages(&tables);
        let (_, page) = pages
            .iter()
            .find(|(path, _)| path == "clauses/DIM-001.html")
            .unwrap();
        for server in tables[0].json["servers"].as_array().unwrap() {
            let label = server["label"].as_str().unwrap();
            assert!(page.contains(&format!(">{label}</a></td>")), "{label}");
        }
        assert!(page.contains("<h2>Why MUST</h2>"));
        assert!(page.contains("→ 500") || page.contains("→ 200"), "{page}");
    }
}
