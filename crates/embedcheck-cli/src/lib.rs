//! The command line: `cargo test -- [OPTIONS] [FILTER]` and the `embedcheck` binary.
//!
//! The top layer: it turns words into options ([`options`]), options into a plan
//! (`plan`), runs the audit through the engine in `embedcheck-core` (`run`) and
//! hands the verdicts to libtest (`harness`). Nothing below it knows of clap or
//! libtest.
//!
//! Both entry points are one call to [`main`]. A run: split the words between us and
//! libtest, resolve the endpoint (or start the reference server), audit the selected
//! clauses, write every report, then let libtest-mimic print one line per clause.

mod args;
mod diff;
mod error;
mod harness;
mod matrix;
mod migration_options;
mod options;
mod plan;
mod run;
mod site;

pub use error::{
    EXIT_CLAUSE_FAILED, EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_NOTHING_SELECTED, EXIT_RUNTIME,
    EXIT_USAGE, RunError,
};
pub use options::Options;

use clap::Parser;
use embedcheck_core::catalogue::Catalogue;
use std::process::ExitCode;

/// Runs embedcheck with the process's arguments.
pub fn main() -> ExitCode {
    main_with(std::env::args().skip(1))
}

/// Runs embedcheck with the given arguments (without the program name): `diff OLD
/// NEW` compares two runs' reports, any other words audit.
pub fn main_with(args: impl IntoIterator<Item = String>) -> ExitCode {
    finish(dispatch(args, Trials::Print))
}

/// [`main_with`] without libtest's lines: the same run, reports and exit status, for
/// tests that audit through the command line inside `cargo test`, where a `test
/// result: FAILED` line from an audited server reads as a failure of the tests.
pub fn main_without_trials(args: impl IntoIterator<Item = String>) -> ExitCode {
    finish(dispatch(args, Trials::Silent))
}

/// `diff OLD NEW` compares two runs' reports, `site OUT TABLES` builds the
/// compatibility index; any other words audit.
fn dispatch(args: impl IntoIterator<Item = String>, trials: Trials) -> Result<ExitCode, RunError> {
    let mut args = args.into_iter().peekable();
    match args.peek().map(String::as_str) {
        Some("diff") => {
            args.next();
            diff::run(args)
        }
        Some("site") => {
            args.next();
            site::run(args)
        }
        _ => execute(args::split(args), trials),
    }
}

fn finish(outcome: Result<ExitCode, RunError>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("embedcheck: {error}");
            error.exit_code()
        }
    }
}

/// Whether libtest prints a line per clause after the run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trials {
    Print,
    Silent,
}

fn execute(split: args::Split, trials: Trials) -> Result<ExitCode, RunError> {
    let program = || std::iter::once("embedcheck".to_owned());
    let options = Options::try_parse_from(program().chain(split.ours))
        .map_err(|e| RunError::Usage(first_line(&e.to_string())))?;
    if options.help {
        print!("{}", Options::help_text());
        return Ok(ExitCode::SUCCESS);
    }
    let libtest = libtest_mimic::Arguments::from_iter(program().chain(split.libtest));
    let selected = harness::select(Catalogue::shipped(), &libtest);
    if selected.is_empty() {
        return Err(RunError::NothingSelected(harness::filter_words(&libtest)));
    }
    if libtest.list {
        let listing = harness::listing(&selected);
        return Ok(libtest_mimic::run(&harness::without_filters(libtest), listing).exit_code());
    }
    if options.dry_run {
        run::dry_run(&options, &selected)?;
        return Ok(ExitCode::SUCCESS);
    }
    let baseline = plan::baseline(&options)?;
    if let Some(specs) = matrix::specs(&options)? {
        let report = run::matrix(&options, &specs, &selected, baseline)?;
        if trials == Trials::Print {
            let _ = libtest_mimic::run(
                &harness::without_filters(libtest),
                harness::matrix_trials(&report.servers),
            );
        }
        return Ok(ExitCode::from(run::exit_status(&report)));
    }
    let report = run::audit(&options, &selected, baseline)?;
    // libtest's conclusion agrees with the run summary by construction: a trial fails
    // exactly when its result's gate fails the run, and the summary counts those gates.
    if trials == Trials::Print {
        let _ = libtest_mimic::run(
            &harness::without_filters(libtest),
            harness::trials(&report.subject().results),
        );
    }
    Ok(ExitCode::from(run::exit_status(&report)))
}

/// A subcommand's options (`embedcheck NAME …`) from the words after its name;
/// `None` where they asked for its help, which is printed.
fn subcommand<T: clap::Parser>(
    name: &str,
    words: impl IntoIterator<Item = String>,
) -> Result<Option<T>, RunError> {
    let program = std::iter::once(format!("embedcheck {name}"));
    match T::try_parse_from(program.chain(words)) {
        Ok(options) => Ok(Some(options)),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            print!("{e}");
            Ok(None)
        }
        Err(e) => Err(RunError::Usage(first_line(&e.to_string()))),
    }
}

/// clap's errors end with usage hints; the first line says what is wrong.
fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or(text)
        .trim_start_matches("error: ")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filter that selects nothing used to read as a green run (0 clauses, 0
    /// failures); it ends at once with its own status and says what a filter is.
    #[test]
    fn a_filter_selecting_no_clause_has_its_own_exit_status() {
        let code = main_without_trials(["NO-SUCH-CLAUSE".to_owned()]);
        assert_eq!(code, ExitCode::from(EXIT_NOTHING_SELECTED));
        let error = RunError::NothingSelected("NO-SUCH-CLAUSE".into()).to_string();
        assert!(error.contains("--list"), "{error}");
    }
}
