//! `embedcheck site OUT NAME=MATRIX.json …`: the compatibility index, static pages
//! built from published tables, written under OUT (readable from `file://`).

use crate::error::RunError;
use clap::Parser;
use embedcheck_core::report::site::{self, Table};
use std::path::PathBuf;
use std::process::ExitCode;

/// Builds the compatibility index from published tables: a page per clause and an
/// index, under OUT.
#[derive(Debug, Parser)]
#[command(name = "embedcheck site", disable_version_flag = true)]
struct SiteOptions {
    /// The folder the pages are written under (clauses/ …).
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// A published table, named: embeddings=docs/compatibility/matrix.json.
    #[arg(value_name = "NAME=MATRIX.json", required = true)]
    tables: Vec<String>,
}

/// Runs `embedcheck site` with the words after `site`.
pub(crate) fn run(words: impl IntoIterator<Item = String>) -> Result<ExitCode, RunError> {
    let Some(options) = crate::subcommand::<SiteOptions>("site", words)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let tables = options
        .tables
        .iter()
        .map(|word| table(word))
        .collect::<Result<Vec<_>, _>>()?;
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

/// `NAME=PATH`, read and parsed.
fn table(word: &str) -> Result<Table, RunError> {
    let (name, path) = word
        .split_once('=')
        .ok_or_else(|| RunError::Usage(format!("{word:?}: a table is NAME=MATRIX.json")))?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Usage(format!("{path}: cannot read it: {e}")))?;
    Table::parse(name, &text).map_err(|why| RunError::Usage(format!("{path}: {why}")))
}
