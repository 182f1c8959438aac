//! `embedcheck diff OLD NEW`: which clause verdicts changed between two runs' reports,
//! each with what changed behind it, as Markdown (a terminal and a CI job's summary
//! read it alike). The run fails only on the server's new failures, so a server's CI
//! can hold its last accepted report and stay green when the suite learns a clause.

use crate::error::{EXIT_CLAUSE_FAILED, EXIT_CONFORMANT, RunError};
use clap::Parser;
use embedcheck_core::report::diff;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Compares two runs' report.json, or two tables' matrix.json: the verdicts that
/// changed and what is behind each (the clause, or the server). Exit status 101 where
/// a server fails a clause it did not fail before, else 0.
#[derive(Debug, Parser)]
#[command(name = "embedcheck diff", disable_version_flag = true)]
struct DiffOptions {
    /// The old run's report.json (or a table's matrix.json), or the folder holding it.
    #[arg(value_name = "OLD")]
    old: PathBuf,
    /// The new run's report.json (or a table's matrix.json), or the folder holding it.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Show only the server's new failures (what fails the diff).
    #[arg(long)]
    regressions_only: bool,
}

/// Runs `embedcheck diff` with the words after `diff`.
pub(crate) fn run(words: impl IntoIterator<Item = String>) -> Result<ExitCode, RunError> {
    let Some(options) = crate::subcommand::<DiffOptions>("diff", words)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let (old, new) = (read(&options.old)?, read(&options.new)?);
    let usage = |e: diff::DiffError| RunError::Usage(e.to_string());
    let (page, regressed) = match (diff::is_table(&old.1), diff::is_table(&new.1)) {
        (false, false) => {
            let compared = diff::diff((&old.1, &old.0), (&new.1, &new.0)).map_err(usage)?;
            let regressed = compared.regressions().next().is_some();
            (compared.markdown(options.regressions_only), regressed)
        }
        (true, true) => {
            let compared = diff::diff_tables((&old.1, &old.0), (&new.1, &new.0)).map_err(usage)?;
            let regressed = compared.regressions().next().is_some();
            (compared.markdown(options.regressions_only), regressed)
        }
        _ => {
            return Err(RunError::Usage(format!(
                "{} and {} are not alike: diff two runs' report.json, or two tables' matrix.json",
                old.0, new.0
            )));
        }
    };
    print!("{page}");
    Ok(ExitCode::from(match regressed {
        true => EXIT_CLAUSE_FAILED,
        false => EXIT_CONFORMANT,
    }))
}

/// A report's path as given and its text; a folder stands for its report.json, or a
/// table's folder for its matrix.json.
fn read(given: &Path) -> Result<(String, String), RunError> {
    let path = match given.is_dir() {
        true if !given.join("report.json").exists() => given.join("matrix.json"),
        true => given.join("report.json"),
        false => given.to_owned(),
    };
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| RunError::Usage(format!("{shown}: cannot read it: {e}")))?;
    Ok((shown, text))
}
