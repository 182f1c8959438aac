//! The manual's reference of the contracts (`docs/manual/src/clauses.md`), written
//! from the catalogue itself: each contract's versions with what each changed and how
//! many clauses it scores, then every clause by family with its level, its title and
//! the version that added it. A test holds the committed page to it, so the manual
//! cannot name a version or a clause count the build does not have.

use super::{Catalogue, Clause, ContractVersion};
use std::fmt::Write as _;

/// The page, Markdown.
pub fn page(catalogue: &Catalogue) -> String {
    let mut page = String::from(
        "# The contracts, version by version\n\n\
         <!-- Written from the catalogue: `EMBEDCHECK_RENDER_PUBLISHED=1 cargo test -p \
         embedcheck-core manual_reference` writes it again. -->\n\n\
         Each contract is versioned on its own (`--contract 1.5,rerank=1.0` scores a run \
         as of those versions; the clauses added later run and are reported as not \
         scored). Every clause has a page of its own, with its level's evidence, its \
         sources and every published server's verdict, in the compatibility index \
         (`docs/site/clauses/`).\n",
    );
    for contract in &catalogue.contracts {
        let clauses: Vec<&Clause> = catalogue
            .clauses
            .iter()
            .filter(|c| c.contract() == contract.name)
            .collect();
        let _ = writeln!(
            page,
            "\n## {} {} ({} clauses)\n\n| version | clauses | what changed |\n|---|---|---|",
            contract.name,
            contract.version,
            clauses.len()
        );
        for note in &contract.versions {
            let _ = writeln!(
                page,
                "| {} | {} | {} |",
                note.version,
                scored_at(&clauses, note.version),
                cell(&note.summary)
            );
        }
        families(&mut page, &clauses);
    }
    page
}

/// How many of `clauses` a run scored as of `version` counts.
fn scored_at(clauses: &[&Clause], version: ContractVersion) -> usize {
    clauses.iter().filter(|c| c.since <= version).count()
}

/// The clauses family by family: ID, level, title, the version that added it.
fn families(page: &mut String, clauses: &[&Clause]) {
    let mut family = None;
    for clause in clauses {
        if family != Some(clause.family) {
            family = Some(clause.family);
            let _ = writeln!(
                page,
                "\n### {}\n\n| clause | level | title | since |\n|---|---|---|---|",
                clause.family
            );
        }
        let _ = writeln!(
            page,
            "| {} | {} | {} | {} |",
            clause.id,
            clause.level,
            cell(&clause.title),
            clause.since
        );
    }
}

/// Text fit for a table cell: one line, its bars and angle brackets escaped.
fn cell(text: &str) -> String {
    text.replace('\n', " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manual's contracts page is the one the catalogue writes: a version or a
    /// clause added fails this test until the page is written again (with
    /// EMBEDCHECK_RENDER_PUBLISHED=1).
    #[test]
    fn manual_reference_is_the_catalogues() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/manual/src/clauses.md");
        let built = page(Catalogue::shipped());
        if std::env::var_os("EMBEDCHECK_RENDER_PUBLISHED").is_some() {
            std::fs::write(&path, &built).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == built,
            "docs/manual/src/clauses.md differs from the catalogue: write it again \
             (EMBEDCHECK_RENDER_PUBLISHED=1 cargo test -p embedcheck-core manual_reference)"
        );
        for clause in &Catalogue::shipped().clauses {
            assert!(
                built.contains(&format!("| {} |", clause.id)),
                "{}",
                clause.id
            );
        }
    }
}
