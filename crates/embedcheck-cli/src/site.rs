//! `embedcheck site OUT NAME=MATRIX.json …`: the compatibility index, static pages
//! built from published tables, written under OUT (readable from `file://`).

use crate::error::RunError;
use clap::Parser;
use embedcheck_core::report::site::{self, Table};
use std::path::PathBuf;
use std::process::ExitCode;

/// Builds the compatibility index from published tables: a home, a page per clause
/// and per server, and a page of what changed for each table given earlier versions,
/// under OUT.
#[derive(Debug, Parser)]
#[command(name = "embedcheck site", disable_version_flag = true)]
struct SiteOptions {
    /// The folder the pages are written under (clauses/ …).
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// A published table, named: embeddings=docs/compatibility/matrix.json; or an
    /// earlier version of one, oldest first: rerank@1.0=OLD/matrix.json.
    #[arg(value_name = "NAME[@VERSION]=MATRIX.json", required = true)]
    tables: Vec<String>,
}

/// Runs `embedcheck site` with the words after `site`.
pub(crate) fn run(words: impl IntoIterator<Item = String>) -> Result<ExitCode, RunError> {
    let Some(options) = crate::subcommand::<SiteOptions>("site", words)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let (earlier, published): (Vec<&String>, Vec<&String>) =
        options.tables.iter().partition(|word| {
            word.split('=')
                .next()
                .is_some_and(|name| name.contains('@'))
        });
    let mut tables = published
        .iter()
        .map(|word| table(word))
        .collect::<Result<Vec<_>, _>>()?;
    tables = tables
        .into_iter()
        .map(|t| with_history(t, &earlier))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(orphan) = earlier.iter().find(|word| {
        let name = word.split('@').next().unwrap_or_default();
        !tables.iter().any(|t| t.name == name)
    }) {
        return Err(RunError::Usage(format!(
            "{orphan:?}: an earlier version of no table given"
        )));
    }
    let pages = site::pages(&tables);
    for (path, html) in &pages {
        let path = options.out.join(path);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, html));
        written.map_err(|e| RunError::Usage(format!("{}: {e}", path.display())))?;
    }
    println!(
        "site: {} pages under {}",
        pages.len(),
        options.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The table with the earlier versions named after it (`NAME@VERSION=PATH`), in the
/// order given.
fn with_history(table: Table, earlier: &[&String]) -> Result<Table, RunError> {
    let mut versions = Vec::new();
    for word in earlier {
        let (named, path) = word.split_once('=').unwrap_or_default();
        let Some((name, version)) = named.split_once('@') else {
            continue;
        };
        if name != table.name {
            continue;
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::Usage(format!("{path}: cannot read it: {e}")))?;
        versions.push((version.to_owned(), text));
    }
    let name = table.name.clone();
    table
        .with_earlier(&versions)
        .map_err(|why| RunError::Usage(format!("the {name} table's versions: {why}")))
}

/// `NAME=PATH`, read and parsed.
fn table(word: &str) -> Result<Table, RunError> {
    let (name, path) = word
        .split_once('=')
        .ok_or_else(|| RunError::Usage(format!("{word:?}: a table is NAME=MATRIX.json")))?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Usage(format!("{path}: cannot read it: {e}")))?;
    Table::parse(name, &text).map_err(|why| RunError::Usage(format!("{path}: {why}")))
}
